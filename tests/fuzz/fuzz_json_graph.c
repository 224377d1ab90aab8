/* JSON task graphs (from a buffer, and through the file reader). */
#include "fuzz.h"
#include "pattern/pattern_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the job's task count: the graph must match it, which also keeps
	 * "tasks": 2000000000 from allocating gigabytes */
	int64_t ntasks = 1 + (size ? data[0] % 64 : 0);
	tp_graph *g = NULL;
	tp_error err;
	if (tp_graph_from_json_string(&g, (const char *)data, size, "fuzz.json", ntasks,
				      &err) == 0)
		tp_graph_destroy(g);
	char path[64];
	fuzz_file(data, size, path);
	if (tp_graph_from_json_file(&g, path, ntasks, &err) == 0)
		tp_graph_destroy(g);
	return 0;
}
