/* topoplace command — node-info: a node's sockets, PCIe tree, NVLinks,
 * network cards and GPU paths, from its hwloc XML or the live machine. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_cmd_node_info(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_help("node-info", stdout);
			return cli_finish_stdout();
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("node-info: unknown option '%s' (see "
					       "'topoplace help node-info')", argv[i]);
	}
	if (argc > 3)
		return cli_usage_error("node-info: unexpected argument '%s'", argv[3]);
	tp_error err;
	tp_error_clear(&err);
	tp_node *n = NULL;
	if (argc > 1 ? tp_node_load_xml(argv[1], &n, &err) < 0
		     : tp_node_load_live(&n, &err) < 0)
		return cli_report(argc > 1 ? argv[1] : "node-info", &err);
	if (argc > 2 && tp_node_load_links(n, argv[2], &err) < 0) {
		tp_node_destroy(n);
		return cli_report(argv[2], &err);
	}
	tp_node_describe(n, stdout);
	tp_node_destroy(n);
	return cli_finish_stdout();
}
