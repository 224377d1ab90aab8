/* topoplace command — diagnostics (one line each, on stderr) and the strict
 * parsing of option values that every command shares. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- diagnostics ---- */

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	/* One line, always. */
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(stderr, "topoplace: %s%s\n", prefix, buf);
}

/* vmsg(prefix, fmt, the arguments after fmt) in a variadic function. */
#define VMSG(prefix, fmt) \
	do { \
		va_list ap; \
		va_start(ap, fmt); \
		vmsg(prefix, fmt, ap); \
		va_end(ap); \
	} while (0)

int cli_usage_error(const char *fmt, ...)
{
	VMSG("", fmt);
	return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...)
{
	VMSG("", fmt);
	return CLI_EXIT_FAIL;
}

void cli_note(const char *fmt, ...)
{
	VMSG("note: ", fmt);
}

static void print_core_error(const char *ctx, const tp_error *err)
{
	const char *msg = err && err->msg[0] ? err->msg
			  : tp_strerror(err ? err->code : TP_EINVAL);
	if (ctx && *ctx && !strstr(msg, ctx))
		cli_usage_error("%s: %s", ctx, msg);
	else
		cli_usage_error("%s", msg);
}

int cli_report(const char *ctx, const tp_error *err)
{
	print_core_error(ctx, err);
	return err && err->code == TP_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

int cli_report_runtime(const char *ctx, const tp_error *err)
{
	print_core_error(ctx, err);
	if (err && (err->code == TP_EINVAL || err->code == TP_ENOTSUP ||
		    err->code == TP_ENOMETIS))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_FAIL;
}

int cli_finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_fail("standard output: write error");
	return CLI_EXIT_OK;
}

/* ---- argument parsing ---- */

int cli_parse_count(const char *opt, const char *s, int64_t min, int64_t max,
		    int64_t *out)
{
	if (!s || !*s)
		return cli_usage_error("%s: empty value", opt);
	if (s[0] == '-')
		return cli_usage_error("%s: '%s': must not be negative", opt, s);
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return cli_usage_error("%s: '%s': not a number", opt, s);
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > (unsigned long long)max)
		return cli_usage_error("%s: '%s': too large (at most %lld)", opt,
				       s, (long long)max);
	if ((long long)v < min) {
		if (v == 0)
			return cli_usage_error("%s: '%s': must be positive", opt, s);
		return cli_usage_error("%s: '%s': must be at least %lld", opt, s,
				       (long long)min);
	}
	*out = (int64_t)v;
	return 0;
}

int cli_parse_u64(const char *opt, const char *s, uint64_t *out)
{
	if (!s || !*s)
		return cli_usage_error("%s: empty value", opt);
	if (s[0] == '-')
		return cli_usage_error("%s: '%s': must not be negative", opt, s);
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return cli_usage_error("%s: '%s': not a number", opt, s);
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return cli_usage_error("%s: '%s': too large", opt, s);
	*out = (uint64_t)v;
	return 0;
}

int cli_parse_ms(const char *opt, const char *s, double *out)
{
	if (!s || !*s)
		return cli_usage_error("%s: empty value", opt);
	if (s[0] == '-')
		return cli_usage_error("%s: '%s': must not be negative", opt, s);
	/* Digits with an optional fraction: no exponents, hex, inf or nan. */
	const char *p = s;
	int digits = 0;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	}
	if (*p || !digits)
		return cli_usage_error("%s: '%s': not a number of milliseconds",
				       opt, s);
	errno = 0;
	double v = strtod(s, NULL);
	if (errno == ERANGE || !isfinite(v))
		return cli_usage_error("%s: '%s': too large", opt, s);
	*out = v;
	return 0;
}

int cli_getopt_error(const char *cmd, int c, int optopt_val, char **argv,
		     int optind_val)
{
	/* With a leading ':' in optstring, ':' is a missing argument, '?' an
	 * unknown option.  For long options optopt is the option's val (0 for
	 * unknown ones); argv[optind - 1] is the word getopt looked at. */
	const char *word = optind_val > 0 ? argv[optind_val - 1] : "?";
	if (c == ':') {
		if (word[0] == '-' && word[1] == '-')
			return cli_usage_error("%s: option %s requires a value "
					       "(see 'topoplace help %s')",
					       cmd, word, cmd);
		return cli_usage_error("%s: option -%c requires a value "
				       "(see 'topoplace help %s')",
				       cmd, optopt_val, cmd);
	}
	if (optopt_val && optopt_val < 256 &&
	    !(word[0] == '-' && word[1] == '-'))
		return cli_usage_error("%s: unknown option -%c (see 'topoplace "
				       "help %s')", cmd, optopt_val, cmd);
	return cli_usage_error("%s: unknown option '%s' (see 'topoplace help "
			       "%s')", cmd, word, cmd);
}


/* ---- arguments map and eval share ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int cli_parse_slots(const char *opt, const char *s, const char **out)
{
	/* a count is checked here; a Slurm spec ("2(x3),1") by the core once
	 * the allocation exists */
	if (all_digits(s) || s[0] == '-' || s[0] == '+' || !s[0]) {
		int64_t v;
		int rc = cli_parse_count(opt, s, 1, 1 << 20, &v);
		if (rc)
			return rc;
	}
	*out = s;
	return 0;
}

int cli_parse_slurm_version(const char *opt, const char *s, unsigned *out)
{
	/* "26.05" or "26.05.3"; scontrol --version's "slurm 26.05.3" too */
	const char *p = strncmp(s, "slurm ", 6) ? s : s + 6;
	unsigned v[3] = { 0, 0, 0 };
	int parts = 0;
	while (parts < 3 && *p >= '0' && *p <= '9') {
		char *end;
		unsigned long x = strtoul(p, &end, 10);
		if (end - p > 3 || x > 255)
			break;
		v[parts++] = (unsigned)x;
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	if (parts < 2 || *p || p[-1] == '.')
		return cli_usage_error("%s: '%s': not a Slurm release (26.05 or "
				       "26.05.3)", opt, s);
	*out = TP_SLURM_VERSION(v[0], v[1], v[2]);
	return 0;
}

int cli_alloc_slots(tp_alloc *a, const char *slots, tp_error *err)
{
	if (!all_digits(slots))
		return tp_alloc_set_slots_spec(a, slots, err);
	int v = atoi(slots);
	for (int32_t i = 0; i < tp_alloc_nnodes(a); i++) {
		int rc = tp_alloc_set_slots(a, i, v, err);
		if (rc)
			return rc;
	}
	return 0;
}

int cli_set_pattern(const char **slot, const char **other, const char *val,
		    const char *name)
{
	if (*other)
		return cli_usage_error("--stencil and --graph are mutually "
				       "exclusive");
	if (!*val)
		return cli_usage_error("%s: empty value", name);
	*slot = val;
	return 0;
}

int cli_check_common(const char *cmd, const char *config, const char *nodes,
		     int argc, char **argv)
{
	if (optind < argc)
		return cli_usage_error("%s: unexpected argument '%s' (see "
				       "'topoplace help %s')", cmd, argv[optind],
				       cmd);
	if (!config)
		return cli_usage_error("%s: missing --config FILE", cmd);
	if (!nodes)
		return cli_usage_error("%s: missing --nodes HOSTLIST", cmd);
	if (!*nodes)
		return cli_usage_error("--nodes: empty hostlist");
	return 0;
}

/* --nodes @FILE: the hostlist is read from FILE (for allocations too large
 * for one command-line argument); newlines act as commas. */
int cli_nodes_arg(const char *nodes, char **buf_out)
{
	*buf_out = NULL;
	if (nodes[0] != '@')
		return 0;
	tp_error err;
	tp_error_clear(&err);
	if (tp_hostlist_read_file(nodes + 1, buf_out, &err) < 0)
		return cli_report("--nodes", &err);
	return 0;
}

const char *cli_slurm_conf_env(void)
{
	const char *s = getenv("SLURM_CONF");
	return s && *s ? s : NULL;
}
