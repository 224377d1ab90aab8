/* topoplace command — node-info: a node's sockets, PCIe tree, NVLinks,
 * network cards and GPU paths, from its hwloc XML or the machine it runs
 * on (detected as the plugin detects it), as text, as an SVG picture
 * (svg_node.c), or as the one hwloc XML that NodeTopology= may pin. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "svg.h"

static const struct option node_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "cache", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int write_out(const char *buf, size_t len, const char *output)
{
	if (output)
		return cli_write_text(buf, len, output);
	if (fwrite(buf, 1, len, stdout) != len)
		return cli_fail("standard output: write error");
	return cli_finish_stdout();
}

/* The model as hwloc XML with its GPU fabric, for NodeTopology=. */
static int write_xml(const tp_node *n, const char *output)
{
	char *buf = NULL;
	size_t len = 0;
	tp_error err;
	tp_error_clear(&err);
	if (tp_node_write_xml(n, &buf, &len, &err) < 0)
		return cli_report("node-info", &err);
	int rc = write_out(buf, len, output);
	free(buf);
	return rc;
}

/* The picture into a buffer, then to output (atomically) or stdout. */
static int write_svg(const tp_node *n, const char *output)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return cli_fail("out of memory");
	char title[512];
	snprintf(title, sizeof title, "topoplace node-info: %s", tp_node_source(n));
	svg_node_picture(f, n, NULL, title);
	int rc = fclose(f) != 0 ? cli_fail("out of memory") : 0;
	if (!rc)
		rc = write_out(buf, len, output);
	free(buf);
	return rc;
}

int cli_cmd_node_info(int argc, char **argv)
{
	const char *output = NULL, *cache = NULL, *format = "text";
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:c:h", node_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			cli_help("node-info", stdout);
			return cli_finish_stdout();
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "svg") &&
			    strcmp(optarg, "xml"))
				return cli_usage_error("--format: '%s': unknown format "
						       "(text, svg or xml)", optarg);
			format = optarg;
			break;
		case 'c':
			if (!*optarg)
				return cli_usage_error("--cache: empty directory name");
			cache = optarg;
			break;
		case 'o':
			if (!*optarg)
				return cli_usage_error("--output: empty file name");
			output = optarg;
			break;
		default:
			return cli_getopt_error("node-info", c, optopt, argv, optind);
		}
	}
	int nargs = argc - optind;
	if (nargs > 2)
		return cli_usage_error("node-info: unexpected argument '%s'",
				       argv[optind + 2]);
	if (output && !strcmp(format, "text"))
		return cli_usage_error("--output: only with --format svg or xml");
	const char *xml = nargs > 0 ? argv[optind] : NULL;
	const char *links = nargs > 1 ? argv[optind + 1] : NULL;
	tp_error err;
	tp_error_clear(&err);
	tp_node *n = NULL;
	if (xml && cache)
		return cli_usage_error("--cache: only for this machine's model "
				       "(no XML argument)");
	if (xml ? tp_node_load_xml(xml, &n, &err) < 0
		: tp_node_detect(cache, TP_NODE_DETECT_STORE, &n, &err) < 0)
		return cli_report(xml ? xml : "node-info", &err);
	if (links && tp_node_load_links(n, links, &err) < 0) {
		tp_node_destroy(n);
		return cli_report(links, &err);
	}
	int rc;
	if (!strcmp(format, "svg")) {
		rc = write_svg(n, output);
	} else if (!strcmp(format, "xml")) {
		rc = write_xml(n, output);
	} else {
		tp_node_describe(n, stdout);
		rc = cli_finish_stdout();
	}
	tp_node_destroy(n);
	return rc;
}
