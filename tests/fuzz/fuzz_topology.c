/* Slurm's topology.conf (Network=tree). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_machine *m = NULL;
	tp_error err;
	static const int cost[2] = { 1, 4 };
	if (tp_machine_from_topology(&m, s, "topology.conf", size % 3 ? cost : NULL,
				     (int)(size % 3), &err) == 0) {
		tp_machine_find_node(m, "n1");
		tp_machine_destroy(m);
	}
	free(s);
	return 0;
}
