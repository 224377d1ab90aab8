/* Slurm's slurm.conf as check-config --slurm-conf reads it (NodeName= lines,
 * Include), compared with a fixed topoplace.conf; the hostlists it gives
 * back must expand to exactly as many names as it counted. */
#include "fuzz.h"
#include <topoplace/conf.h>
#include "util/hostlist.h"

static int64_t expanded(const char *list)
{
	struct tp__hostlist *hl;
	int64_t count;
	if (!*list)
		return 0;
	if (tp__hostlist_parse(list, "fuzz", INT64_MAX / 2, "fuzz", &hl, &count, NULL))
		abort();   /* the formatter wrote a list the parser refuses */
	tp__hostlist_free(hl);
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static tp_conf *c;
	if (!c && tp_conf_load_string("Network=mesh Dims=4x4\n"
				      "NodeName=node[1-15],login CoordOrder=x-major\n",
				      "fuzz.conf", &c, NULL))
		abort();
	char path[64];
	fuzz_file(data, size, path);
	tp_conf_slurm_diff d;
	tp_error err;
	if (tp_conf_compare_slurm(c, path, &d, &err) == 0) {
		if (expanded(d.missing) != d.nmissing || expanded(d.extra) != d.nextra ||
		    d.nslurm - d.nmissing + d.nextra != 16)
			abort();
		tp_conf_slurm_diff_free(&d);
	} else if (strchr(err.msg, '\n')) {
		abort();   /* errors are one line */
	}
	return 0;
}
