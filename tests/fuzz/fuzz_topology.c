/* Slurm's topology.conf (Network=tree), with topoplace.conf's ForestCost=
 * and the warnings kept (forests, nodes and switches under two switches). */
#include "fuzz.h"
#include "net/records.h"
#include "util/util_internal.h"
#include "net/machine_internal.h"
#include "conf/conf_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_machine *m = NULL;
	tp_error err;
	static const int cost[2] = { 1, 4 };
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	struct tp__topo_opts o = { size % 3 ? cost : NULL, (int)(size % 3),
				   (int)(size % 5), &w, NULL };
	if (tp__machine_from_topology(&m, s, "topology.conf", &o, &err) == 0) {
		int32_t a = tp_machine_find_node(m, "n1"), b = tp_machine_find_node(m, "n2");
		if (a >= 0 && b >= 0 && tp_machine_distance(m, a, b) < 0)
			abort();
		tp_machine_destroy(m);
	}
	for (int i = 0; i < w.n; i++)
		if (strchr(w.line[i], '\n'))
			abort();
	free(s);
	return 0;
}
