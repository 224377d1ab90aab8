/* GPU peer matrices, JSON or CSV. */
#include "fuzz.h"
#include "pattern/pattern_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t ntasks = 1 + (size ? data[size - 1] % 32 : 0);
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_gpu_matrix_string(&g, (const char *)data, size, "fuzz.gm",
					    ntasks, &err) == 0)
		tp_graph_destroy(g);
	return 0;
}
