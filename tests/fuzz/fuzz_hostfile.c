/* Hostfiles read back into a mapping. */
#include "fuzz.h"
#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include <topoplace/hostfile.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const tp_machine *m = tp_conf_machine(fuzz_machine());
	tp_alloc *a = NULL;
	tp_error err;
	if (tp_alloc_from_hostlist(m, "n[00-15]", 4, "fuzz", &a, &err) != 0)
		abort();
	char path[64];
	fuzz_file(data, size, path);
	int32_t *map = NULL, nt = 0;
	if (tp_hostfile_read(path, a, size % 2 == 0, &map, &nt, &err) == 0)
		free(map);
	tp_alloc_destroy(a);
	return 0;
}
