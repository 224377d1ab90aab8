/* Slurm's topology.conf for topology/block (Network=block), with and
 * without a tree between the blocks. */
#include "fuzz.h"
#include "net/machine_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_machine *m = NULL;
	tp_error err;
	tp_block_opts o = { .tree_text = size % 2 ? "SwitchName=s Nodes=n[0-99]\n" : NULL,
			    .tree_what = "tree.conf",
			    .block_bandwidth = size % 3 ? 900 : 0,
			    .network_bandwidth = size % 3 ? 50 : 0 };
	if (tp_machine_from_blocks(&m, s, "block.conf", &o, &err) == 0) {
		int64_t links[64];
		int32_t n = tp_machine_node_count(m);
		tp_machine_route(m, 0, n - 1, links, 64);
		tp_machine_distance(m, 0, n - 1);
		tp_machine_destroy(m);
	}
	free(s);
	return 0;
}
