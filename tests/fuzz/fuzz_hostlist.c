/* Slurm hostlists: the parser, the allocation built from one, and the
 * hostlist file reader. */
#include "fuzz.h"
#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include "net/name_runs.h"
#include "util/hostlist.h"

/* Read as names and numbered runs (tp__hostlist_next_run), s gives the
 * same names in the same order as read name by name. */
static void same_with_runs(const char *s, uint64_t min_len)
{
	struct tp__hostlist *a, *b;
	int64_t n;
	tp_error err;
	if (tp__hostlist_parse(s, "fuzz", 100000, "b", &a, &n, &err) ||
	    tp__hostlist_parse(s, "fuzz", 100000, "b", &b, &n, &err))
		abort();
	char want[TP__HOSTNAME_MAX], got[TP__HOSTNAME_MAX];
	struct tp__hostlist_run r;
	int k;
	while ((k = tp__hostlist_next_run(b, got, min_len, &r))) {
		uint64_t v = 0, last = k == 2 ? r.hi - r.lo : 0;
		do {
			if (!tp__hostlist_next(a, want))
				abort();
			if (k == 2) {
				snprintf(got, sizeof got, "%.*s%0*llu%.*s", (int)r.plen,
					 r.prefix, (int)r.width,
					 (unsigned long long)(r.lo + v), (int)r.slen, r.suffix);
				if (!tp__hostlist_run_has(&r, want) || r.hi - r.lo + 1 < min_len)
					abort();
			}
			if (strcmp(want, got))
				abort();
		} while (v++ < last);
	}
	if (tp__hostlist_next(a, want))
		abort();
	tp__hostlist_free(a);
	tp__hostlist_free(b);
}

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
		same_with_runs(s, size ? data[0] % 4 + 1 : 1);
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
