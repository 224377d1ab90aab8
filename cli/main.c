/* topoplace command — main: dispatch to the commands (help texts: help.c).
 * Each command lives in a file of its own (map.c, eval.c, check_config.c,
 * node_info.c); they all turn argv into calls of libtopoplace and its
 * results into output, and decide nothing themselves.  See
 * doc/topoplace.1. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("missing command (see 'topoplace --help')");

	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		if (argc > 2)
			return cli_usage_error("%s: unexpected argument '%s'", cmd,
					       argv[2]);
		cli_help(NULL, stdout);
		return cli_finish_stdout();
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		if (argc > 2)
			return cli_usage_error("%s: unexpected argument '%s'", cmd,
					       argv[2]);
		printf("topoplace %s\n", TOPOPLACE_VERSION);
		return cli_finish_stdout();
	}
	if (!strcmp(cmd, "help")) {
		if (argc > 3)
			return cli_usage_error("help: expects at most one "
					       "COMMAND");
		if (argc == 3 && !cli_help(argv[2], stdout))
			return cli_usage_error("help: '%s': unknown command "
					       "(commands: map, eval, "
					       "check-config, node-info, bind)", argv[2]);
		if (argc == 2)
			cli_help(NULL, stdout);
		return cli_finish_stdout();
	}

	/* Subcommands see argv[0] = the command name. */
	int sub_argc = argc - 1;
	char **sub_argv = argv + 1;
	if (!strcmp(cmd, "map"))
		return cli_cmd_map(sub_argc, sub_argv);
	if (!strcmp(cmd, "eval"))
		return cli_cmd_eval(sub_argc, sub_argv);
	if (!strcmp(cmd, "check-config"))
		return cli_cmd_check_config(sub_argc, sub_argv);
	if (!strcmp(cmd, "node-info"))
		return cli_cmd_node_info(sub_argc, sub_argv);
	if (!strcmp(cmd, "bind"))
		return cli_cmd_bind(sub_argc, sub_argv);
	if (cmd[0] == '-')
		return cli_usage_error("unknown option '%s' (see 'topoplace "
				       "--help')", cmd);
	return cli_usage_error("'%s': unknown command (see 'topoplace --help')",
			       cmd);
}
