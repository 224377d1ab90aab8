/* topoplace SPANK plugin — what srun's command line asks for, read from
 * /proc/self/cmdline in slurm_spank_init, before srun parses it itself.
 *
 * srun 22.05 parses with getopt_long("+...") (options stop at the first
 * word that is not one) over its own options and every SPANK plugin's.  We
 * know srun's own (the tables below, from src/common/slurm_opt.c) but not
 * other plugins'.  An unknown long option written "--name=value" is safe;
 * written "--name value" the next word may be its value or the command.
 * The scan then goes on as if it were a value and reports the ambiguity:
 * words before argv[known] are known to be options (our own option
 * callback sees how far srun's getopt got), which settles it; otherwise
 * the caller fails open with one line rather than guess.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpk.h"

/* srun 22.05's short options with a required argument, and those whose
 * argument is optional (only attached: -I5). */
static const char short_req[] = "ABCDFGJLMNSTWbcdeimnopqrtwx";
static const char short_opt[] = "IKk";

/* srun 22.05's long options with a required argument. */
static const char *const long_req[] = {
	"accel-bind", "account", "acctg-freq", "bb", "bbf", "bcast-exclude",
	"begin", "chdir", "cluster", "cluster-constraint", "clusters", "comment",
	"constraint", "container", "context", "core-spec", "cores-per-socket",
	"cpu-bind", "cpu-freq", "cpu_bind", "cpus-per-gpu", "cpus-per-task",
	"deadline", "delay-boot", "dependency", "distribution", "epilog",
	"error", "exclude", "export", "extra-node-info", "gid", "gpu-bind",
	"gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task",
	"gres", "gres-flags", "het-group", "hint", "input", "job-name", "jobid",
	"licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
	"mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "msg-timeout",
	"network", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
	"ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
	"ntasks-per-tres", "open-mode", "output", "pack-group", "partition",
	"power", "prefer", "priority", "profile", "prolog", "qos", "relative",
	"reservation", "signal", "slurmd-debug", "sockets-per-node", "switches",
	"task-epilog", "task-prolog", "tasks-per-node", "thread-spec", "threads",
	"threads-per-core", "time", "time-min", "tmp", "uid", "wait", "wckey",
	"topo-stencil", "topo-graph", "topo-gpu-matrix", "topo-policy",
	"topo-cpu-bind",
	NULL
};
/* Its flags and optional-argument options. */
static const char *const long_other[] = {
	"bcast", "compress", "contiguous", "debugger-test", "disable-status",
	"exact", "exclusive", "help", "hold", "immediate", "interactive",
	"kill-on-bad-exit", "label", "multi-prog", "nice", "no-allocate",
	"no-kill", "overcommit", "overlap", "oversubscribe", "preserve-env",
	"propagate", "pty", "quiet", "quit-on-interrupt", "reboot", "resv-ports",
	"send-libs", "spread-job", "test-only", "unbuffered", "usage",
	"use-min-nodes", "verbose", "version", "whole", "x11", "topo-report",
	NULL
};

/* Resolve a long option as getopt_long does: exact, else a unique prefix.
 * *req: it takes a required argument. */
static const char *resolve_long(const char *name, size_t len, bool *req)
{
	const char *found = NULL;
	bool freq = false;
	int hits = 0;
	for (int pass = 0; pass < 2; pass++) {
		const char *const *tab = pass ? long_other : long_req;
		for (int i = 0; tab[i]; i++) {
			if (strlen(tab[i]) == len && !strncmp(tab[i], name, len)) {
				*req = !pass;
				return tab[i];
			}
			if (strlen(tab[i]) > len && !strncmp(tab[i], name, len)) {
				found = tab[i];
				freq = !pass;
				hits++;
			}
		}
	}
	*req = hits == 1 && freq;
	return hits == 1 ? found : NULL;
}

static bool parse_count(const char *s, int64_t *out)
{
	int64_t v = tpk_parse_pos(s);
	if (v <= 0)
		return false;
	*out = v;
	return true;
}

static void note_layout(struct tpk_srun_args *a, const char *opt)
{
	if (!a->layout[0])
		snprintf(a->layout, sizeof a->layout, "%s", opt);
}

static void take_nodes(struct tpk_srun_args *a, const char *value)
{
	/* "4" or "2-4"; anything else is for Slurm to judge */
	char buf[64];
	snprintf(buf, sizeof buf, "%s", value ? value : "");
	char *dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	int64_t lo = 0, hi = 0;
	if (parse_count(buf, &lo) && (!dash || parse_count(dash, &hi))) {
		a->nodes_min = lo;
		a->nodes_max = dash ? hi : lo;
	} else {
		note_layout(a, "-N");
	}
}

static const struct {
	const char *name;
	int opt;
} topo_opts[] = {
	{ "topo-stencil", TPK_OPT_STENCIL }, { "topo-graph", TPK_OPT_GRAPH },
	{ "topo-gpu-matrix", TPK_OPT_GPU_MATRIX },
	{ "topo-policy", TPK_OPT_POLICY }, { "topo-report", TPK_OPT_REPORT },
	{ "topo-cpu-bind", TPK_OPT_CPU_BIND },
};

/* One option with its value (NULL for flags). */
static void take_option(struct tpk_srun_args *a, const char *name,
			const char *value)
{
	int64_t v;
	static const struct { const char *name, *shown; } layouts[] = {
		{ "nodelist", "-w" }, { "distribution", "-m" },
		{ "nodefile", "--nodefile" }, { "exclude", "-x" },
		{ "relative", "-r" },
	};
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (!strcmp(name, layouts[i].name)) {
			note_layout(a, layouts[i].shown);
			return;
		}
	for (size_t i = 0; i < sizeof topo_opts / sizeof topo_opts[0]; i++)
		if (!strcmp(name, topo_opts[i].name)) {
			tpk_hints_set(&a->hints, topo_opts[i].opt, value);
			return;
		}
	if (!strcmp(name, "ntasks")) {
		if (parse_count(value, &v))
			a->ntasks = v;
	} else if (!strcmp(name, "nodes")) {
		take_nodes(a, value);
	} else if (!strcmp(name, "ntasks-per-node") ||
		   !strcmp(name, "tasks-per-node")) {
		if (parse_count(value, &v) && v <= INT_MAX)
			a->ntasks_per_node = (int)v;
	} else if (!strcmp(name, "cpus-per-task")) {
		if (parse_count(value, &v))
			a->cpus_per_task = v;
	} else if (!strcmp(name, "het-group") || !strcmp(name, "pack-group")) {
		a->het = true;
	} else if (!strcmp(name, "help") || !strcmp(name, "usage") ||
		   !strcmp(name, "version")) {
		a->info_only = true;
	}
}

static const char *short_long_name(char c)
{
	switch (c) {
	case 'n': return "ntasks";
	case 'N': return "nodes";
	case 'c': return "cpus-per-task";
	case 'w': return "nodelist";
	case 'm': return "distribution";
	case 'x': return "exclude";
	case 'r': return "relative";
	case 'F': return "nodefile";
	case 'h': return "help";
	case 'V': return "version";
	default: return "";
	}
}

/* A cluster of short options ("-ln4"); returns the index of the last argv
 * word it used. */
static int take_shorts(struct tpk_srun_args *a, int argc, char **argv, int i)
{
	for (const char *p = argv[i] + 1; *p; p++) {
		if (strchr(short_req, *p)) {
			const char *value = p[1] ? p + 1
					    : (i + 1 < argc ? argv[++i] : NULL);
			take_option(a, short_long_name(*p), value);
			break;
		}
		if (strchr(short_opt, *p))
			break;              /* -I5, -K1: value attached */
		take_option(a, short_long_name(*p), NULL);
	}
	return i;
}

static bool is_topo_word(const char *s)
{
	return !strncmp(s, "--topo-", 7);
}

/* A long option; returns the index of the last argv word it used. */
static int take_long(struct tpk_srun_args *a, int argc, char **argv, int i,
		     int known)
{
	const char *name = argv[i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	bool req;
	const char *full = resolve_long(name, len, &req);
	const char *value = eq ? eq + 1 : NULL;
	if (full) {
		if (!eq && req && i + 1 < argc)
			value = argv[++i];
		take_option(a, full, value);
		return i;
	}
	/* another plugin's option: "--name=value" and "--name --next" are
	 * clear; "--name word" is not, unless srun is known to have got
	 * beyond word */
	if (eq || i + 1 >= argc || argv[i + 1][0] == '-')
		return i;
	if (i + 1 >= known && !a->ambiguous[0]) {
		snprintf(a->ambiguous, sizeof a->ambiguous, "--%.*s",
			 (int)(len < 60 ? len : 60), name);
		a->ambiguous_at = i;
	}
	return i + 1;   /* as a value: the likelier reading, to be confirmed */
}

void tpk_scan_srun_args(int argc, char **argv, int known,
			struct tpk_srun_args *a)
{
	memset(a, 0, sizeof *a);
	int i;
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--")) {
			i++;
			break;
		}
		if (s[0] != '-' || s[1] == '\0')
			break;                      /* the command */
		if (a->ambiguous[0] && !a->topo_after && is_topo_word(s))
			a->topo_after = i;
		if (s[1] == '-')
			i = take_long(a, argc, argv, i, known);
		else
			i = take_shorts(a, argc, argv, i);
	}
	/* a heterogeneous step separates its components with ":"; a later
	 * component's --topo-* options would go unheard */
	bool later = false;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], ":")) {
			a->het = later = true;
			continue;
		}
		if (later && is_topo_word(argv[i]))
			a->het_topo = true;
	}
}

void tpk_srun_args_free(struct tpk_srun_args *a)
{
	tpk_hints_free(&a->hints);
}

int tpk_read_cmdline(char ***argv_out)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf)
		return -1;
	int argc = 0;
	for (size_t k = 0; k < len; k++)
		if (buf[k] == '\0')
			argc++;
	if (len && buf[len - 1] != '\0')
		argc++;
	/* argv pointers first, then the strings, in one block */
	size_t head = ((size_t)argc + 1) * sizeof(char *);
	char **argv = malloc(head + len + 1);
	if (!argv) {
		free(buf);
		return -1;
	}
	char *str = (char *)argv + head;
	memcpy(str, buf, len);
	str[len] = '\0';
	free(buf);
	int k = 0;
	for (size_t off = 0; off < len && k < argc; k++) {
		argv[k] = str + off;
		off += strlen(str + off) + 1;
	}
	argv[k] = NULL;
	*argv_out = argv;
	return k;
}
