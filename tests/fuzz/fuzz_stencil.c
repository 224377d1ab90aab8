/* Stencil specs ("64x32x32:7pt:periodic=x:bytes=4096:weights=2,1,1"). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_graph *g = NULL;
	tp_error err;
	/* the whole spec is parsed before the task count is compared, so a
	 * fixed count bounds the graph without hiding any of the parser */
	if (tp_graph_from_stencil(&g, s, 64, &err) == 0)
		tp_graph_destroy(g);
	if (tp_graph_from_stencil(&g, s, 8, &err) == 0)
		tp_graph_destroy(g);
	free(s);
	return 0;
}
