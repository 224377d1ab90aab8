/* GPU link counts: gres.conf "Links=" lines, "nvidia-smi topo -m",
 * rocm-smi and amd-smi topology text, amd-smi topology --json. */
#include "fuzz.h"
#include "node/node_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int *counts = NULL, n = 0;
	tp_error err;
	if (tp_links_parse((const char *)data, size, "fuzz.links", &counts, &n, &err) == 0)
		free(counts);
	return 0;
}
