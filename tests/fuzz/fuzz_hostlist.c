/* Slurm hostlists: the parser, the allocation built from one, and the
 * hostlist file reader. */
#include "fuzz.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	struct tp__hostlist *hl;
	int64_t n;
	tp_error err;
	if (tp__hostlist_parse(s, "fuzz", 100000, "the fuzz bound", &hl, &n, &err) == 0) {
		char name[TP__HOSTNAME_MAX];
		int64_t k = 0;
		while (tp__hostlist_next(hl, name)) {
			if (strlen(name) >= TP__HOSTNAME_MAX)
				abort();
			k++;
		}
		if (k != n)
			abort();
		tp__hostlist_free(hl);
	}
	tp_alloc *a = NULL;
	if (tp_alloc_from_hostlist(tp_conf_machine(fuzz_machine()), s, 1, "--nodes", &a,
				   &err) == 0)
		tp_alloc_destroy(a);
	char path[64], *text;
	fuzz_file(data, size, path);
	if (tp_hostlist_read_file(path, &text, &err) == 0)
		free(text);
	free(s);
	return 0;
}
