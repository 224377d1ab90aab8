/* topoplace SPANK plugin — what srun's command line asks for, read from
 * /proc/self/cmdline in slurm_spank_init, before srun parses it itself.
 *
 * srun parses with getopt_long("+...") (options stop at the first word
 * that is not one) over its own options and every SPANK plugin's.  We know
 * srun's own (the table below, from each release's src/common/slurm_opt.c)
 * but not other plugins'.  An unknown long option written "--name=value"
 * is safe; written "--name value" the next word may be its value or the
 * command.  The scan then goes on as if it were a value and reports the
 * ambiguity: words before argv[known] are known to be options (our own
 * option callback sees how far srun's getopt got), which settles it;
 * otherwise the caller fails open with one line rather than guess.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm_version.h>

#include "tpk.h"

#define REQ required_argument
#define OPT optional_argument
#define FLAG no_argument
#define REL(a, b, c) SLURM_VERSION_NUM(a, b, c)

/* srun's options: the entries of src/common/slurm_opt.c's common_options[]
 * that srun takes (a set_func or set_func_srun), as getopt_long sees them.
 * A plugin loads only into the release it was built for, so the headers'
 * release picks the entries.  tests/slurm/options.sh checks the table
 * against each release's slurm_opt.c. */
static const struct srun_opt {
	const char *name;
	int has_arg;            /* FLAG, REQ or OPT, as in slurm_opt.c */
	char letter;            /* its short option, or 0 */
	unsigned since, until;  /* the first release with it, the first
				   without (0: from 22.05, still there) */
} srun_opts[] = {
	/* every release from 22.05 (x11 only where Slurm was built with
	 * X11 support; taken as srun's either way) */
	{ "accel-bind", REQ, 0, 0, 0 }, { "account", REQ, 'A', 0, 0 },
	{ "acctg-freq", REQ, 0, 0, 0 }, { "bb", REQ, 0, 0, 0 },
	{ "bbf", REQ, 0, 0, 0 }, { "bcast", OPT, 0, 0, 0 },
	{ "bcast-exclude", REQ, 0, 0, 0 }, { "begin", REQ, 'b', 0, 0 },
	{ "chdir", REQ, 'D', 0, 0 }, { "cluster", REQ, 0, 0, 0 },
	{ "cluster-constraint", REQ, 0, 0, 0 }, { "clusters", REQ, 'M', 0, 0 },
	{ "comment", REQ, 0, 0, 0 }, { "compress", OPT, 0, 0, 0 },
	{ "constraint", REQ, 'C', 0, 0 }, { "container", REQ, 0, 0, 0 },
	{ "context", REQ, 0, 0, 0 }, { "contiguous", FLAG, 0, 0, 0 },
	{ "core-spec", REQ, 'S', 0, 0 }, { "cores-per-socket", REQ, 0, 0, 0 },
	{ "cpu-bind", REQ, 0, 0, 0 }, { "cpu-freq", REQ, 0, 0, 0 },
	{ "cpu_bind", REQ, 0, 0, 0 }, { "cpus-per-gpu", REQ, 0, 0, 0 },
	{ "cpus-per-task", REQ, 'c', 0, 0 }, { "deadline", REQ, 0, 0, 0 },
	{ "debugger-test", FLAG, 0, 0, 0 }, { "delay-boot", REQ, 0, 0, 0 },
	{ "dependency", REQ, 'd', 0, 0 },
	{ "disable-status", FLAG, 'X', 0, 0 },
	{ "distribution", REQ, 'm', 0, 0 }, { "epilog", REQ, 0, 0, 0 },
	{ "error", REQ, 'e', 0, 0 }, { "exact", FLAG, 0, 0, 0 },
	{ "exclude", REQ, 'x', 0, 0 }, { "exclusive", OPT, 0, 0, 0 },
	{ "export", REQ, 0, 0, 0 }, { "extra-node-info", REQ, 'B', 0, 0 },
	{ "gpu-bind", REQ, 0, 0, 0 }, { "gpu-freq", REQ, 0, 0, 0 },
	{ "gpus", REQ, 'G', 0, 0 }, { "gpus-per-node", REQ, 0, 0, 0 },
	{ "gpus-per-socket", REQ, 0, 0, 0 }, { "gpus-per-task", REQ, 0, 0, 0 },
	{ "gres", REQ, 0, 0, 0 }, { "gres-flags", REQ, 0, 0, 0 },
	{ "help", FLAG, 'h', 0, 0 }, { "het-group", REQ, 0, 0, 0 },
	{ "hint", REQ, 0, 0, 0 }, { "hold", FLAG, 'H', 0, 0 },
	{ "immediate", OPT, 'I', 0, 0 }, { "input", REQ, 'i', 0, 0 },
	{ "interactive", FLAG, 0, 0, 0 }, { "job-name", REQ, 'J', 0, 0 },
	{ "jobid", REQ, 0, 0, 0 }, { "kill-on-bad-exit", OPT, 'K', 0, 0 },
	{ "label", FLAG, 'l', 0, 0 }, { "licenses", REQ, 'L', 0, 0 },
	{ "mail-type", REQ, 0, 0, 0 }, { "mail-user", REQ, 0, 0, 0 },
	{ "mcs-label", REQ, 0, 0, 0 }, { "mem", REQ, 0, 0, 0 },
	{ "mem-bind", REQ, 0, 0, 0 }, { "mem-per-cpu", REQ, 0, 0, 0 },
	{ "mem-per-gpu", REQ, 0, 0, 0 }, { "mincpus", REQ, 0, 0, 0 },
	{ "mpi", REQ, 0, 0, 0 }, { "msg-timeout", REQ, 0, 0, 0 },
	{ "multi-prog", FLAG, 0, 0, 0 }, { "network", REQ, 0, 0, 0 },
	{ "nice", OPT, 0, 0, 0 }, { "no-allocate", FLAG, 'Z', 0, 0 },
	{ "no-kill", OPT, 'k', 0, 0 }, { "nodefile", REQ, 'F', 0, 0 },
	{ "nodelist", REQ, 'w', 0, 0 }, { "nodes", REQ, 'N', 0, 0 },
	{ "ntasks", REQ, 'n', 0, 0 }, { "ntasks-per-core", REQ, 0, 0, 0 },
	{ "ntasks-per-gpu", REQ, 0, 0, 0 },
	{ "ntasks-per-node", REQ, 0, 0, 0 },
	{ "ntasks-per-socket", REQ, 0, 0, 0 },
	{ "ntasks-per-tres", REQ, 0, 0, 0 }, { "open-mode", REQ, 0, 0, 0 },
	{ "output", REQ, 'o', 0, 0 }, { "overcommit", FLAG, 'O', 0, 0 },
	{ "overlap", OPT, 0, 0, 0 }, { "oversubscribe", FLAG, 's', 0, 0 },
	{ "pack-group", REQ, 0, 0, 0 }, { "partition", REQ, 'p', 0, 0 },
	{ "prefer", REQ, 0, 0, 0 }, { "preserve-env", FLAG, 'E', 0, 0 },
	{ "priority", REQ, 0, 0, 0 }, { "profile", REQ, 0, 0, 0 },
	{ "prolog", REQ, 0, 0, 0 }, { "propagate", OPT, 0, 0, 0 },
	{ "qos", REQ, 'q', 0, 0 }, { "quiet", FLAG, 'Q', 0, 0 },
	{ "quit-on-interrupt", FLAG, 0, 0, 0 }, { "reboot", FLAG, 0, 0, 0 },
	{ "relative", REQ, 'r', 0, 0 }, { "reservation", REQ, 0, 0, 0 },
	{ "resv-ports", OPT, 0, 0, 0 }, { "send-libs", OPT, 0, 0, 0 },
	{ "signal", REQ, 0, 0, 0 }, { "slurmd-debug", REQ, 0, 0, 0 },
	{ "sockets-per-node", REQ, 0, 0, 0 }, { "spread-job", FLAG, 0, 0, 0 },
	{ "switches", REQ, 0, 0, 0 }, { "task-epilog", REQ, 0, 0, 0 },
	{ "task-prolog", REQ, 0, 0, 0 }, { "tasks-per-node", REQ, 0, 0, 0 },
	{ "test-only", FLAG, 0, 0, 0 }, { "thread-spec", REQ, 0, 0, 0 },
	{ "threads", REQ, 'T', 0, 0 }, { "threads-per-core", REQ, 0, 0, 0 },
	{ "time", REQ, 't', 0, 0 }, { "time-min", REQ, 0, 0, 0 },
	{ "tmp", REQ, 0, 0, 0 }, { "unbuffered", FLAG, 'u', 0, 0 },
	{ "usage", FLAG, 0, 0, 0 }, { "use-min-nodes", FLAG, 0, 0, 0 },
	{ "verbose", FLAG, 'v', 0, 0 }, { "version", FLAG, 'V', 0, 0 },
	{ "wait", REQ, 'W', 0, 0 }, { "wckey", REQ, 0, 0, 0 },
	{ "whole", FLAG, 0, 0, 0 }, { "x11", OPT, 0, 0, 0 },
	/* the plugin's own */
	{ "topo-stencil", REQ, 0, 0, 0 }, { "topo-graph", REQ, 0, 0, 0 },
	{ "topo-gpu-matrix", REQ, 0, 0, 0 }, { "topo-policy", REQ, 0, 0, 0 },
	{ "topo-report", OPT, 0, 0, 0 }, { "topo-cpu-bind", REQ, 0, 0, 0 },
	{ "topo-parallel", REQ, 0, 0, 0 },
	/* what came, changed or went after 22.05, by the release tags (a
	 * micro release dropped --uid and --gid) */
	{ "pty", FLAG, 0, 0, REL(23, 2, 0) },
	{ "pty", OPT, 0, REL(23, 2, 0), 0 },
	{ "autocomplete", REQ, 0, REL(23, 2, 0), 0 },
	{ "container-id", REQ, 0, REL(23, 2, 0), 0 },
	{ "extra", REQ, 0, REL(23, 2, 0), 0 },
	{ "tres-per-task", REQ, 0, REL(23, 2, 0), 0 },
	{ "gid", REQ, 0, 0, REL(23, 2, 5) },
	{ "uid", REQ, 0, 0, REL(23, 2, 5) },
	{ "external-launcher", FLAG, 0, REL(23, 11, 0), REL(24, 5, 0) },
	{ "treewidth", REQ, 0, REL(23, 11, 0), 0 },
	{ "tres-bind", REQ, 0, REL(23, 11, 0), 0 },
	{ "external-launcher", OPT, 0, REL(24, 5, 0), 0 },
	{ "power", REQ, 0, 0, REL(24, 5, 0) },
	{ "segment", REQ, 0, REL(24, 5, 0), 0 },
	{ "stepmgr", FLAG, 0, REL(24, 5, 0), 0 },
	{ "oom-kill-step", OPT, 0, REL(24, 11, 0), 0 },
	{ "wait-for-children", FLAG, 0, REL(25, 5, 0), 0 },
	{ "consolidate-segments", FLAG, 0, REL(25, 11, 0), 0 },
	{ "resources", REQ, 0, REL(25, 11, 0), 0 },
	{ "spread-segments", FLAG, 0, REL(25, 11, 0), 0 },
	{ "async", FLAG, 0, REL(26, 5, 0), 0 },
	{ "container-type", REQ, 0, REL(26, 5, 0), 0 },
	{ "ignore-signals", REQ, 0, REL(26, 5, 0), 0 },
	{ "mem-update", REQ, 0, REL(26, 5, 0), 0 },
	{ "parsable", FLAG, 0, REL(26, 5, 0), 0 },
};
#define N_SRUN_OPTS (sizeof srun_opts / sizeof srun_opts[0])

static bool in_release(const struct srun_opt *o)
{
	const unsigned rel = SLURM_VERSION_NUMBER;
	return rel >= o->since && (!o->until || rel < o->until);
}

/* Resolve a long option as getopt_long does: exact, else a unique prefix. */
static const struct srun_opt *resolve_long(const char *name, size_t len)
{
	const struct srun_opt *found = NULL;
	int hits = 0;
	for (size_t i = 0; i < N_SRUN_OPTS; i++) {
		const struct srun_opt *o = &srun_opts[i];
		if (!in_release(o) || strncmp(o->name, name, len))
			continue;
		if (!o->name[len])
			return o;
		found = o;
		hits++;
	}
	return hits == 1 ? found : NULL;
}

/* A short option; NULL for a letter srun does not know (which it rejects). */
static const struct srun_opt *find_short(char c)
{
	for (size_t i = 0; i < N_SRUN_OPTS; i++)
		if (srun_opts[i].letter == c && in_release(&srun_opts[i]))
			return &srun_opts[i];
	return NULL;
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
	{ "topo-parallel", TPK_OPT_PARALLEL },
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
	} else if (!strcmp(name, "mem") || !strcmp(name, "mem-per-cpu")) {
		a->mem_given = true;
		a->mem_zero = tpk_mem_is_zero(value);
	} else if (!strcmp(name, "mpi")) {
		snprintf(a->mpi, sizeof a->mpi, "%s", value ? value : "");
	} else if (!strcmp(name, "het-group") || !strcmp(name, "pack-group")) {
		a->het = true;
	} else if (!strcmp(name, "help") || !strcmp(name, "usage") ||
		   !strcmp(name, "version")) {
		a->info_only = true;
	}
}

/* A cluster of short options ("-ln4"); returns the index of the last argv
 * word it used. */
static int take_shorts(struct tpk_srun_args *a, int argc, char **argv, int i)
{
	for (const char *p = argv[i] + 1; *p; p++) {
		const struct srun_opt *o = find_short(*p);
		if (o && o->has_arg == REQ) {
			const char *value = p[1] ? p + 1
					    : (i + 1 < argc ? argv[++i] : NULL);
			take_option(a, o->name, value);
			break;
		}
		if (o && o->has_arg == OPT)
			break;              /* -I5, -K1: value attached */
		take_option(a, o ? o->name : "", NULL);
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
	const struct srun_opt *o = resolve_long(name, len);
	const char *value = eq ? eq + 1 : NULL;
	if (o) {
		if (!eq && o->has_arg == REQ && i + 1 < argc)
			value = argv[++i];
		take_option(a, o->name, value);
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

bool tpk_mem_is_zero(const char *value)
{
	/* str_to_mbytes (src/common/proc_args.c): strtoll's number, then
	 * nothing or one of K, M, G, T (and a B); "0K" rounds up to 0 too */
	if (!value)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (end == value || errno || v != 0)
		return false;
	if (!end[0])
		return true;
	if (!strchr("KkMmGgTt", end[0]))
		return false;
	return !end[1] || ((end[1] == 'B' || end[1] == 'b') && !end[2]);
}

const char *tpk_mem_zero_dist(bool mem_given, bool mem_zero,
			      const char *(*env)(const char *))
{
	if (mem_given)
		return mem_zero ? "block" : NULL;
	/* srun's environment options: SLURM_MEM_PER_CPU, SLURM_MEM_PER_NODE
	 * (src/srun/opt.c) */
	const char *c = env("SLURM_MEM_PER_CPU"), *n = env("SLURM_MEM_PER_NODE");
	return tpk_mem_is_zero(c) || tpk_mem_is_zero(n) ? "block" : NULL;
}
