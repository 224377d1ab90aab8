/* slurmctld's live view (slurm_live.c), the text srun's plugin and `map
 * --slurm-live` read as untrusted input, applied to a tree and to blocks
 * (a skeleton with one placed node each): any input is taken or refused
 * with single-line warnings, and the topology it leaves still builds, or
 * is refused in one line. */
#include "fuzz.h"
#include "conf/conf_records.h"
#include "slurm/slurm_topology.h"
#include "net/machine_internal.h"

static const char yaml[] =
	"- topology: t\n  tree:\n    switches:\n"
	"      - switch: root\n        children: l[1-2]\n"
	"      - switch: l1\n        nodes: n1\n      - switch: l2\n"
	"- topology: b\n  block:\n    block_sizes: [2]\n    blocks:\n"
	"      - block: b1\n        nodes: n1\n      - block: b2\n";

static void one_line(const char *s)
{
	if (strchr(s, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int which = 0; which < 2; which++) {
		struct tp__slurm_topology st;
		memset(&st, 0, sizeof st);
		snprintf(st.file, sizeof st.file, "topology.yaml");
		st.yaml = true;
		struct tp__warnings w;
		memset(&w, 0, sizeof w);
		tp_error err;
		tp_error_clear(&err);
		if (tp__topology_yaml_read(yaml, sizeof yaml - 1, st.file, &st.set, &w,
					   &err))
			abort();
		struct tp__slurm_live live = { (const char *)data, size, NULL,
					       "scontrol show topology" };
		if (tp__stopo_live(&st.set, which, st.file, &live, &w, &err)) {
			one_line(err.msg);
		} else {
			struct tp__stopo_built b = { NULL, NULL, &w };
			if (tp__slurm_topology_machine(&st, which, NULL, NULL, &b, &err))
				one_line(err.msg);
			else if (tp_machine_node_count(b.m) < 1)
				abort();   /* n1 is placed by the file */
			tp_machine_destroy(b.m);
		}
		for (int i = 0; i < w.n; i++)
			one_line(w.line[i]);
		tp__stopo_set_free(&st.set);
	}
	return 0;
}
