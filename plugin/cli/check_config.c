/* topoplace command — check-config: load a topoplace.conf and summarise it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* ---- check-config ---- */

int cli_cmd_check_config(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_help("check-config", stdout);
			return cli_finish_stdout();
		}
		if (!strcmp(a, "--")) {
			if (i + 1 < argc) {
				if (path || i + 2 < argc)
					return cli_usage_error(
						"check-config: expects one FILE");
				path = argv[i + 1];
			}
			break;
		}
		if (a[0] == '-' && a[1])
			return cli_usage_error("check-config: unknown option '%s' "
					       "(see 'topoplace help "
					       "check-config')", a);
		if (path)
			return cli_usage_error("check-config: expects one FILE, "
					       "got '%s' and '%s'", path, a);
		path = a;
	}
	if (!path)
		return cli_usage_error("check-config: missing FILE (see "
				       "'topoplace help check-config')");

	tp_conf *conf = NULL;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp_conf_load(path, &conf, &err);
	if (rc < 0)
		return cli_report(path, &err);
	tp_conf_describe(conf, stdout);
	tp_conf_destroy(conf);
	return cli_finish_stdout();
}

