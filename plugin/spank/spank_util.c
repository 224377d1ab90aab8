/* topoplace SPANK plugin — helpers without SPANK calls: srun command-line
 * scan, user files read with the user's privileges, private directories, the
 * per-task GPU split. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spank_tp.h"

/* ---------------------------------------------------------------- hints */

const char *tpk_opt_name(int val)
{
	switch (val) {
	case TPK_OPT_STENCIL: return "topo-stencil";
	case TPK_OPT_GRAPH: return "topo-graph";
	case TPK_OPT_GPU_MATRIX: return "topo-gpu-matrix";
	case TPK_OPT_POLICY: return "topo-policy";
	case TPK_OPT_REPORT: return "topo-report";
	case TPK_OPT_CPU_BIND: return "topo-cpu-bind";
	default: return NULL;
	}
}

static void set_str(char **dst, const char *arg)
{
	free(*dst);
	*dst = strdup(arg ? arg : "");
}

void tpk_hints_set(struct tpk_hints *h, int val, const char *arg)
{
	switch (val) {
	case TPK_OPT_STENCIL: set_str(&h->stencil, arg); break;
	case TPK_OPT_GRAPH: set_str(&h->graph, arg); break;
	case TPK_OPT_GPU_MATRIX: set_str(&h->gpu_matrix, arg); break;
	case TPK_OPT_POLICY: set_str(&h->policy, arg); break;
	case TPK_OPT_REPORT: h->report = true; break;
	case TPK_OPT_CPU_BIND: set_str(&h->cpu_bind, arg); break;
	default: return;
	}
	h->seen = true;
}

void tpk_hints_free(struct tpk_hints *h)
{
	free(h->stencil);
	free(h->graph);
	free(h->gpu_matrix);
	free(h->policy);
	free(h->cpu_bind);
	memset(h, 0, sizeof *h);
}

bool tpk_policy_pattern_free(const char *name)
{
	return name && (!strcmp(name, "cyclic") || !strcmp(name, "zorder") ||
			!strcmp(name, "random"));
}

/* ------------------------------------------------------- srun arguments */

/* srun 22.05 short options that take an argument (from `srun --help`), and
 * those whose argument is optional (only attached: -I5). */
static const char short_req[] = "AbBcCdDeGiJLmMnNopqrStTwWx";
static const char short_opt[] = "IK";

/* srun 22.05 long options with a required argument.  Any other long option
 * is taken as a flag unless written --name=value. */
static const char *const long_req[] = {
	"accel-bind", "account", "acctg-freq", "bb", "bbf", "bcast-exclude",
	"begin", "chdir", "cluster-constraint", "clusters", "comment",
	"constraint", "container", "core-spec", "cores-per-socket", "cpu-bind",
	"cpu-freq", "cpu_bind", "cpus-per-gpu", "cpus-per-task", "ctrl-comm-ifhn",
	"deadline", "delay-boot", "dependency", "distribution", "epilog", "error",
	"exclude", "export", "extra-node-info", "gid", "gpu-bind", "gpu-freq",
	"gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres",
	"gres-flags", "het-group", "hint", "input", "job-name", "jobid",
	"licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
	"mem-per-cpu", "mem-per-gpu", "mem_bind", "mincpus", "mpi", "mpi-combine",
	"network", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
	"ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "output",
	"pack-group", "partition", "power", "priority", "profile", "prolog", "qos",
	"relative", "reservation", "signal", "slurmd-debug", "slurmd_debug",
	"sockets-per-node", "switches", "task-epilog", "task-prolog",
	"tasks-per-node", "thread-spec", "threads", "threads-per-core", "time",
	"time-min", "tmp", "uid", "wait", "wckey",
	"topo-stencil", "topo-graph", "topo-gpu-matrix", "topo-policy",
	"topo-cpu-bind",
	NULL
};
/* Flags and optional-argument options, for prefix resolution only. */
static const char *const long_other[] = {
	"bcast", "compress", "contiguous", "debugger-test", "disable-status",
	"exact", "exclusive", "help", "hold", "immediate", "kill-on-bad-exit",
	"label", "launch-cmd", "multi-prog", "nice", "no-allocate", "no-kill",
	"overcommit", "overlap", "oversubscribe", "preserve-env", "propagate",
	"pty", "quiet", "quit-on-interrupt", "reboot", "resv-ports", "send-libs",
	"spread-job", "test-only", "unbuffered", "usage", "use-min-nodes",
	"verbose", "version", "x11", "topo-report",
	NULL
};

/* Resolve a long option name as getopt_long does: exact, else a unique
 * prefix.  *req tells whether it takes a required argument. */
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
	if (hits == 1) {
		*req = freq;
		return found;
	}
	*req = false;
	return NULL;
}

static bool parse_count(const char *s, int64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return false;
	*out = v;
	return true;
}

static void note_layout(struct tpk_srun_args *a, const char *opt)
{
	if (!a->layout[0])
		snprintf(a->layout, sizeof a->layout, "%s", opt);
}

/* One option with its value (value may be NULL for flags). */
static void take_option(struct tpk_srun_args *a, const char *name,
			const char *value)
{
	int64_t v;
	if (!strcmp(name, "ntasks")) {
		if (parse_count(value, &v))
			a->ntasks = v;
	} else if (!strcmp(name, "nodes")) {
		/* "4" or "2-4" */
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
			note_layout(a, "-N");  /* unusual form: let Slurm decide */
		}
	} else if (!strcmp(name, "ntasks-per-node") ||
		   !strcmp(name, "tasks-per-node")) {
		if (parse_count(value, &v) && v <= INT_MAX)
			a->ntasks_per_node = (int)v;
	} else if (!strcmp(name, "nodelist")) {
		note_layout(a, "-w");
	} else if (!strcmp(name, "distribution")) {
		note_layout(a, "-m");
	} else if (!strcmp(name, "nodefile")) {
		note_layout(a, "--nodefile");
	} else if (!strcmp(name, "exclude")) {
		note_layout(a, "-x");
	} else if (!strcmp(name, "relative")) {
		note_layout(a, "-r");
	} else if (!strcmp(name, "het-group") || !strcmp(name, "pack-group")) {
		a->het = true;
	} else if (!strcmp(name, "help") || !strcmp(name, "usage") ||
		   !strcmp(name, "version")) {
		a->info_only = true;
	} else if (!strcmp(name, "topo-stencil")) {
		tpk_hints_set(&a->hints, TPK_OPT_STENCIL, value);
	} else if (!strcmp(name, "topo-graph")) {
		tpk_hints_set(&a->hints, TPK_OPT_GRAPH, value);
	} else if (!strcmp(name, "topo-gpu-matrix")) {
		tpk_hints_set(&a->hints, TPK_OPT_GPU_MATRIX, value);
	} else if (!strcmp(name, "topo-policy")) {
		tpk_hints_set(&a->hints, TPK_OPT_POLICY, value);
	} else if (!strcmp(name, "topo-report")) {
		tpk_hints_set(&a->hints, TPK_OPT_REPORT, NULL);
	} else if (!strcmp(name, "topo-cpu-bind")) {
		tpk_hints_set(&a->hints, TPK_OPT_CPU_BIND, value);
	}
}

static const char *short_long_name(char c)
{
	switch (c) {
	case 'n': return "ntasks";
	case 'N': return "nodes";
	case 'w': return "nodelist";
	case 'm': return "distribution";
	case 'x': return "exclude";
	case 'r': return "relative";
	case 'h': return "help";
	case 'V': return "version";
	default: return "";
	}
}

void tpk_scan_srun_args(int argc, char **argv, struct tpk_srun_args *a)
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
		if (s[1] == '-') {
			const char *name = s + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			bool req;
			const char *full = resolve_long(name, len, &req);
			const char *value = eq ? eq + 1 : NULL;
			if (!eq && req && i + 1 < argc)
				value = argv[++i];
			if (full)
				take_option(a, full, value);
			continue;
		}
		for (const char *p = s + 1; *p; p++) {
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
	}
	/* A heterogeneous step separates its components with ":". */
	for (; i < argc; i++)
		if (!strcmp(argv[i], ":"))
			a->het = true;
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
			if (cap >= (64u << 20)) {
				free(buf);
				buf = NULL;
				break;
			}
			char *nb = realloc(buf, cap * 2);
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

/* ------------------------------------------------------ user privileges */

/* Saved identity while switched to the user (one level, not nested). */
static gid_t saved_egid;
static gid_t *saved_groups;
static int saved_ngroups;

int tpk_become_user(const struct tpk_cred *cred, char *err, size_t errlen)
{
	if (!cred->drop)
		return 0;
	saved_egid = getegid();
	saved_ngroups = getgroups(0, NULL);
	free(saved_groups);
	saved_groups = NULL;
	if (saved_ngroups > 0) {
		saved_groups = malloc((size_t)saved_ngroups * sizeof(gid_t));
		if (!saved_groups ||
		    (saved_ngroups = getgroups(saved_ngroups, saved_groups)) < 0) {
			snprintf(err, errlen, "getgroups: %s", strerror(errno));
			return -1;
		}
	}
	if (setgroups((size_t)(cred->ngroups > 0 ? cred->ngroups : 0),
		      cred->ngroups > 0 ? cred->groups : NULL) < 0 ||
	    setegid(cred->gid) < 0 || seteuid(cred->uid) < 0) {
		int e = errno;
		tpk_become_root(cred);
		snprintf(err, errlen, "cannot take the user's identity (uid %u): %s",
			 (unsigned)cred->uid, strerror(e));
		return -1;
	}
	return 0;
}

void tpk_become_root(const struct tpk_cred *cred)
{
	if (!cred->drop)
		return;
	/* Order matters: the effective uid first, then groups need root. */
	if (seteuid(0) < 0)
		return;
	if (setegid(saved_egid) < 0) {
		/* nothing sensible left to do; keep going as root */
	}
	if (setgroups((size_t)(saved_ngroups > 0 ? saved_ngroups : 0),
		      saved_ngroups > 0 ? saved_groups : NULL) < 0) {
		/* same */
	}
	free(saved_groups);
	saved_groups = NULL;
	saved_ngroups = 0;
}

static int open_user_file(const char *path, const char *basedir, int *fd_out,
			  char *err, size_t errlen)
{
	int dfd = AT_FDCWD, fd;
	if (path[0] != '/' && basedir && basedir[0]) {
		dfd = open(basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0) {
			snprintf(err, errlen, "%s: cannot open the directory %s: %s",
				 path, basedir, strerror(errno));
			return -1;
		}
	}
	/* O_NONBLOCK: a FIFO must not hang the step; checked below. */
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int e = errno;
	if (dfd != AT_FDCWD)
		close(dfd);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -1;
	}
	*fd_out = fd;
	return 0;
}

int tpk_read_user_file(const char *path, const char *basedir, size_t max,
		       const struct tpk_cred *cred, char **buf, size_t *len,
		       char *err, size_t errlen)
{
	int fd = -1, rc = -1;
	char *data = NULL;
	size_t got = 0;
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (!path || !path[0]) {
		snprintf(err, errlen, "empty file name");
		return -1;
	}
	if (tpk_become_user(cred, err, errlen) < 0)
		return -1;
	if (open_user_file(path, basedir, &fd, err, errlen) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%s: %lld bytes, more than the site limit "
			 "of %zu (max_file_bytes)", path, (long long)st.st_size,
			 max);
		goto out;
	}
	/* Read at most max bytes plus one, whatever stat said (files grow). */
	size_t cap = (size_t)st.st_size + 1;
	if (cap > max + 1)
		cap = max + 1;
	data = malloc(cap + 1);
	if (!data) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		if (got == cap) {
			if (cap > max) {
				snprintf(err, errlen, "%s: more than the site limit "
					 "of %zu bytes (max_file_bytes)", path, max);
				goto out;
			}
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nd = realloc(data, ncap + 1);
			if (!nd) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			data = nd;
			cap = ncap;
		}
		ssize_t n = read(fd, data + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > max) {
		snprintf(err, errlen, "%s: more than the site limit of %zu bytes "
			 "(max_file_bytes)", path, max);
		goto out;
	}
	data[got] = '\0';
	*buf = data;
	*len = got;
	data = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(data);
	tpk_become_root(cred);
	return rc;
}

/* ------------------------------------------------- private directories */

int tpk_make_private_dir(const char *parent, const char *tag,
			 const struct tpk_cred *cred, char *out, size_t outlen,
			 char *err, size_t errlen)
{
	char tmpl[TPK_PATH_MAX];
	int n = snprintf(tmpl, sizeof tmpl, "%s/topoplace.%s.XXXXXX", parent, tag);
	if (n < 0 || (size_t)n >= sizeof tmpl || (size_t)n >= outlen) {
		snprintf(err, errlen, "temporary directory name too long");
		return -1;
	}
	if (tpk_become_user(cred, err, errlen) < 0)
		return -1;
	char *d = mkdtemp(tmpl);   /* mode 0700, owned by the user */
	int e = errno;
	tpk_become_root(cred);
	if (!d) {
		snprintf(err, errlen, "cannot create a private directory in %s: %s",
			 parent, strerror(e));
		return -1;
	}
	snprintf(out, outlen, "%s", tmpl);
	return 0;
}

void tpk_remove_private_dir(const char *dir, const struct tpk_cred *cred)
{
	char err[256];
	if (!dir || !dir[0])
		return;
	if (tpk_become_user(cred, err, sizeof err) < 0)
		return;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		/* The directory is ours (mkdtemp): the hostfile and the core's
		 * temporary of the atomic write.  unlinkat() removes links, never
		 * what they point to, and fails on directories. */
		int dfd2 = dup(dfd);
		DIR *dp = dfd2 >= 0 ? fdopendir(dfd2) : NULL;
		if (dp) {
			struct dirent *de;
			while ((de = readdir(dp)))
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					unlinkat(dfd, de->d_name, 0);
			closedir(dp);
		} else if (dfd2 >= 0) {
			close(dfd2);
		}
		close(dfd);
		rmdir(dir);
	}
	tpk_become_root(cred);
}

/* ------------------------------------------------------------ GPU split */

int tpk_gpu_split(const char *list, int local_id, int ntasks, char *out,
		  size_t outlen)
{
	char copy[1024];
	char *tok[256], *save = NULL;
	int ng = 0;

	if (!list || !list[0] || ntasks <= 0 || local_id < 0 ||
	    local_id >= ntasks || strlen(list) >= sizeof copy)
		return -1;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (ng == 256)
			return -1;
		for (const char *c = t; *c; c++)
			if (!isdigit((unsigned char)*c))
				return -1;  /* "NoDevFiles", UUIDs: leave Slurm's */
		if (!*t)
			return -1;
		tok[ng++] = t;
	}
	if (ng == 0)
		return -1;
	int lo, hi;   /* [lo, hi) of tok */
	if (ng >= ntasks) {
		lo = (int)((int64_t)local_id * ng / ntasks);
		hi = (int)((int64_t)(local_id + 1) * ng / ntasks);
	} else {
		lo = (int)((int64_t)local_id * ng / ntasks);
		hi = lo + 1;
	}
	size_t used = 0;
	char res[1024];
	res[0] = '\0';
	for (int k = lo; k < hi; k++) {
		int n = snprintf(res + used, sizeof res - used, "%s%s",
				 k > lo ? "," : "", tok[k]);
		if (n < 0 || (size_t)n >= sizeof res - used)
			return -1;
		used += (size_t)n;
	}
	if (used + 1 > outlen)
		return -1;
	memcpy(out, res, used + 1);
	return 0;
}

int64_t tpk_tasks_per_node_sum(const char *spec, int64_t *nnodes)
{
	int64_t sum = 0, nodes = 0;
	const char *p = spec;
	if (!p || !*p)
		return -1;
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -1;
		long long v = strtoll(p, &end, 10);
		long long rep = 1;
		p = end;
		if (*p == '(') {
			if (p[1] != 'x' || !isdigit((unsigned char)p[2]))
				return -1;
			rep = strtoll(p + 2, &end, 10);
			if (*end != ')' || rep <= 0)
				return -1;
			p = end + 1;
		}
		if (v < 0 || v > INT32_MAX || rep > INT32_MAX)
			return -1;
		sum += v * rep;
		nodes += rep;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	if (nnodes)
		*nnodes = nodes;
	return sum;
}

int tpk_parse_gpu_list(const char *list, int *out, int cap)
{
	/* numbers and commas only: CUDA_VISIBLE_DEVICES has no ranges */
	if (!list || strchr(list, '-'))
		return -1;
	return tpk_parse_index_list(list, out, cap);
}

int tpk_parse_index_list(const char *list, int *out, int cap)
{
	int n = 0;
	const char *p = list;
	if (!p || !*p)
		return -1;
	while (*p) {
		long v[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			while (isdigit((unsigned char)*p)) {
				v[k] = v[k] * 10 + (*p - '0');
				if (v[k] > 1000000)
					return -1;
				p++;
			}
			if (k == 0 && *p == '-')
				p++;
			else if (k == 0) {
				v[1] = v[0];
				break;
			}
		}
		if (v[1] < v[0] || v[1] - v[0] >= (long)cap - n)
			return -1;
		for (long x = v[0]; x <= v[1]; x++)
			out[n++] = (int)x;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	return n;
}
