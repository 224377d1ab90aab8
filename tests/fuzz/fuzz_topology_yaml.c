/* Slurm's topology.yaml (slurm_yaml.c), then every topology of it built as
 * a machine (tree, block, ring, torus3d builders from records): any input
 * is read or refused in one line, warnings are single lines, and a built
 * machine answers distances. */
#include "fuzz.h"
#include "conf/conf_records.h"
#include "slurm/slurm_topology.h"
#include "net/machine_internal.h"

static void one_line(const char *s)
{
	if (strchr(s, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp__stopo_set set;
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	tp_error err;
	tp_error_clear(&err);
	if (tp__topology_yaml_read((const char *)data, size, "topology.yaml", &set,
				   &w, &err)) {
		one_line(err.msg);
		if (!err.msg[0])
			abort();   /* refused without a word */
		return 0;
	}
	struct tp__slurm_topology st;
	memset(&st, 0, sizeof st);
	snprintf(st.file, sizeof st.file, "topology.yaml");
	st.yaml = true;
	st.set = set;
	for (int i = 0; i < set.n; i++) {
		tp_error_clear(&err);
		struct tp__stopo_built b = { NULL, NULL, &w };
		if (tp__slurm_topology_machine(&st, i, NULL, NULL, &b, &err)) {
			one_line(err.msg);
			continue;
		}
		tp_machine *m = b.m;
		int32_t n = tp_machine_node_count(m);
		if (n > 0 && tp_machine_distance(m, 0, n - 1) < 0)
			abort();
		tp_machine_destroy(m);
	}
	for (int i = 0; i < w.n; i++)
		one_line(w.line[i]);
	tp__stopo_set_free(&set);
	return 0;
}
