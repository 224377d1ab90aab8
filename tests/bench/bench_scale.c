/* bench_scale — machine scale: the geometric mapping of large stencils on
 * large tori under the plugin's usual time budget, against the full search
 * and Slurm's block order.
 *
 *   bench_scale [--quick] [--case NAME[,NAME...]] [--list] [--runs N]
 *               [--budget-ms MS] [--threads N] [--seed N] [--explain]
 *               [--fresh] [--pause-ms MS]
 *
 * Each case runs in forked children, so that every figure of memory is the
 * case's own:
 *   child B (budget): loads the machine with tp_conf_load_string (one
 *     NodeName= line of CoordOrder=x-major per 65,536 nodes), builds the
 *     allocation with tp_alloc_from_nodes (random nodes drawn by a seeded
 *     splitmix64, listed in node order as Slurm lists them, or the whole
 *     machine, or a box) and the stencil with tp_graph_from_stencil, then
 *     runs tp_place (geometric, default options, the budget) `runs` times;
 *     records the wall time of each step, the peak resident memory (VmHWM)
 *     after building the inputs and after mapping, and scores the mapping
 *     and block order.
 *   child F (full): the same with no budget (skipped by --quick), for the
 *     reference hop-bytes.
 *   child L (launch): what the plugin does for one launch, `runs` times:
 *     topoplace.conf read from a file, the allocation as a Slurm hostlist
 *     (ranges, as SLURM_JOB_NODELIST), tp_job with the site default (auto)
 *     and the budget, the hostfile written; the wall time of all of it.
 *     With --fresh each launch is a process of its own (forked from child
 *     L), as srun is: all its memory is the first it touches; --pause-ms
 *     waits before each launch, as launches a while apart do.
 *   then every launch's time in order (the first takes fresh memory), and
 *     the CPU time each spent in the kernel (clearing fresh pages, most of
 *     it: where the time goes when the memory a launch takes is slow);
 *   last, after a pause, what 256 MB of fresh memory costs to touch in a
 *     fresh process, and the same again once freed (a VM's idle memory may
 *     be slow to take back: that is a case's max).
 * Columns: load/alloc/graph/map are wall times in ms (map: median of the
 * runs), total = their sum, the end-to-end path of a launch without the
 * output.  avg hop-bytes: average hops per byte of the budget run (the
 * median run's; "worst" the worst run), of the full search and of block.
 * Benchmarks print figures; nothing here fails on time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/topoplace.h>
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"
#include "bench_time.h"

enum alloc_kind { ALLOC_RANDOM, ALLOC_ALL, ALLOC_BOX };

struct scase {
	const char *name;
	const char *dims, *wrap;
	enum alloc_kind kind;
	int64_t nodes;            /* random: how many */
	int box0[6], boxn[6];     /* box: first coordinate, extents */
	int tpn;                  /* tasks per node */
	const char *stencil;
	bool quick;               /* part of --quick */
	const char *what;
};

static const struct scase cases[] = {
	{ "fugaku-half", "24x23x24x2x3x2", "yes,yes,yes,no,yes,no", ALLOC_RANDOM,
	  79488, {0}, {0}, 4, "96x92x36:7pt", true,
	  "6-D torus of Fugaku's shape, a random half, 4/node" },
	{ "fugaku-whole", "24x23x24x2x3x2", "yes,yes,yes,no,yes,no", ALLOC_ALL,
	  0, {0}, {0}, 4, "96x92x72:7pt", true,
	  "the whole 6-D machine, 4/node (folds: 96=24*2*2, 92=23*2*2, 72=24*3)" },
	{ "bgq-subbox", "8x8x8x8x2", "yes", ALLOC_BOX,
	  0, {6, 0, 0, 2, 0}, {4, 8, 8, 4, 2}, 16, "64x32x16:7pt", true,
	  "5-D torus (Blue Gene/Q), a 4x8x8x4x2 box across the x seam, 16/node" },
	{ "t64-65k-8", "64x64x64", "yes", ALLOC_RANDOM,
	  65536, {0}, {0}, 8, "128x64x64:7pt", true,
	  "65,536 random nodes of 64^3, 8/node" },
	{ "rand-65k-1", "64x64x64", "yes", ALLOC_RANDOM,
	  65536, {0}, {0}, 1, "64x32x32:7pt", true,
	  "README's rand-65k-1: 65,536 random nodes of 64^3, 1/node" },
	{ "rand-65k-8", "48x48x48", "yes", ALLOC_RANDOM,
	  8192, {0}, {0}, 8, "64x32x32:7pt", true,
	  "README's rand-65k-8: 8,192 random nodes of 48^3, 8/node" },
	{ "rand-1m-1", "128x128x128", "yes", ALLOC_RANDOM,
	  1048576, {0}, {0}, 1, "128x128x64:7pt", false,
	  "README's rand-1m-1: 1,048,576 random nodes of 128^3, 1/node" },
	{ "rand-1m-8", "64x64x64", "yes", ALLOC_RANDOM,
	  131072, {0}, {0}, 8, "128x128x64:7pt", false,
	  "README's rand-1m-8: 131,072 random nodes of 64^3, 8/node" },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define MAX_RUNS 15

struct result {
	int done;
	char err[300];
	int64_t nodes, tasks;
	double load_ms, alloc_ms, graph_ms;
	double map_ms[MAX_RUNS], geom_ms[MAX_RUNS], cpu_ms[MAX_RUNS], hb[MAX_RUNS];
	int runs;
	double block_hb;
	double base_mb, peak_mb;
	int scored, total, folded;
	bool budget_hit;
	char desc[96];
	double load0, load1;       /* 1-minute load average around the case */
	/* the launch path */
	double launch_ms[MAX_RUNS], launch_cpu[MAX_RUNS], launch_hbs[MAX_RUNS];
	double launch_sys[MAX_RUNS]; /* of launch_cpu, in the kernel */
	double launch_hb;          /* the median run's */
	char kept[48];
	/* the same launch without a budget (not with --quick): auto's full
	 * search, every candidate and the refinement to its end */
	double auto_hb, auto_ms;
	char auto_kept[48];
};

static uint64_t g_seed = 20261123;
static double opt_budget = 300;
static int opt_threads = 0, opt_runs = 5;
static bool opt_explain, opt_fresh;
static double opt_pause_ms;

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* CPU ms of the process in the kernel: in a launch, mostly clearing the
 * pages it is the first to touch. */
static double sys_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static double vm_hwm_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kb = atof(line + 6);
			break;
		}
	fclose(f);
	return kb / 1024.0;
}

static int parse_dims(const char *s, int *d)
{
	int n = 0;
	while (*s && n < 6) {
		d[n++] = (int)strtol(s, (char **)&s, 10);
		if (*s == 'x')
			s++;
	}
	return n;
}

/* topoplace.conf text: node i (name n<i>) at position i, x fastest. */
static char *conf_text(const struct scase *c, int64_t total)
{
	size_t cap = 256 + (size_t)(total / 65536 + 1) * 96;
	char *t = malloc(cap);
	if (!t)
		return NULL;
	size_t at = (size_t)snprintf(t, cap, "Network=torus Dims=%s Wrap=%s\n", c->dims, c->wrap);
	for (int64_t s = 0; s < total; s += 65536) {
		int64_t e = s + 65536 < total ? s + 65536 : total;
		at += (size_t)snprintf(t + at, cap - at,
				       "NodeName=n[%lld-%lld] CoordOrder=x-major Offset=%lld\n",
				       (long long)s, (long long)e - 1, (long long)s);
	}
	return t;
}

/* Node indices flagged in `in`, in node order, into ids. */
static int64_t collect(const char *in, int64_t total, int32_t *ids)
{
	int64_t k = 0;
	for (int64_t i = 0; i < total; i++)
		if (in[i])
			ids[k++] = (int32_t)i;
	return k;
}

/* The box of the case: coordinates box0 + (0..boxn-1), modulo the machine. */
static int32_t *alloc_box(const struct scase *c, const int *dims, int nd,
			  int64_t total, int64_t *count)
{
	int64_t n = 1;
	for (int d = 0; d < nd; d++)
		n *= c->boxn[d];
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	char *in = calloc((size_t)total, 1);
	if (!ids || !in) {
		free(ids);
		free(in);
		return NULL;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t r = k, id = 0, st = 1;
		for (int d = 0; d < nd; d++) {
			int x = (int)(c->box0[d] + r % c->boxn[d]) % dims[d];
			r /= c->boxn[d];
			id += x * st;
			st *= dims[d];
		}
		in[id] = 1;
	}
	*count = collect(in, total, ids);
	free(in);
	return ids;
}

/* c->nodes random nodes: a partial Fisher-Yates seeded by the case name. */
static int32_t *alloc_random(const struct scase *c, int64_t total, int64_t *count)
{
	uint64_t s = g_seed;
	for (const char *p = c->name; *p; p++)
		s = (s ^ (unsigned char)*p) * 0x100000001b3ULL;
	int32_t *perm = malloc(sizeof(int32_t) * (size_t)total);
	char *in = calloc((size_t)total, 1);
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)c->nodes);
	if (perm && in && ids) {
		for (int64_t i = 0; i < total; i++)
			perm[i] = (int32_t)i;
		for (int64_t i = 0; i < c->nodes; i++) {
			int64_t j = i + (int64_t)(splitmix64(&s) % (uint64_t)(total - i));
			int32_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
			in[perm[i]] = 1;
		}
		*count = collect(in, total, ids);
	} else {
		free(ids);
		ids = NULL;
	}
	free(perm);
	free(in);
	return ids;
}

/* Allocated node indices, in node order. */
static int32_t *make_alloc(const struct scase *c, const int *dims, int nd,
			   int64_t total, int64_t *count)
{
	if (c->kind == ALLOC_BOX)
		return alloc_box(c, dims, nd, total, count);
	if (c->kind == ALLOC_RANDOM)
		return alloc_random(c, total, count);
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)total);
	for (int64_t i = 0; ids && i < total; i++)
		ids[i] = (int32_t)i;
	*count = total;
	return ids;
}

static double avg_hb(const tp_graph *g, const tp_alloc *a, const int32_t *map)
{
	return tp_metrics_hop_bytes(g, a, map) / tp_graph_total_bytes(g);
}

struct inputs {
	tp_conf *conf;
	tp_alloc *a;
	tp_graph *g;
};

/* Machine, allocation and stencil, each step timed. */
static int build_inputs(const struct scase *c, struct inputs *in, struct result *r)
{
	int dims[6];
	int nd = parse_dims(c->dims, dims);
	int64_t total = 1, nalloc = 0;
	for (int d = 0; d < nd; d++)
		total *= dims[d];
	char *text = conf_text(c, total);
	int32_t *ids = make_alloc(c, dims, nd, total, &nalloc);
	tp_error err;
	int rc = -1;
	memset(in, 0, sizeof *in);
	if (!text || !ids) {
		snprintf(r->err, sizeof r->err, "out of memory");
		goto out;
	}
	double t = now_ms();
	if (tp_conf_load_string(text, "bench.conf", &in->conf, &err)) {
		snprintf(r->err, sizeof r->err, "config: %.250s", err.msg);
		goto out;
	}
	r->load_ms = now_ms() - t;
	t = now_ms();
	if (tp_alloc_from_nodes(tp_conf_machine(in->conf), ids, (int32_t)nalloc, c->tpn,
				&in->a, &err)) {
		snprintf(r->err, sizeof r->err, "allocation: %.250s", err.msg);
		goto out;
	}
	r->alloc_ms = now_ms() - t;
	t = now_ms();
	if (tp_graph_from_stencil(&in->g, c->stencil, 0, &err)) {
		snprintf(r->err, sizeof r->err, "stencil: %.250s", err.msg);
		goto out;
	}
	r->graph_ms = now_ms() - t;
	r->nodes = nalloc;
	r->tasks = tp_graph_ntasks(in->g);
	rc = 0;
out:
	free(text);
	free(ids);
	return rc;
}

/* tp_place `runs` times with the budget; scores, times, first peak. */
static int run_mappings(const struct inputs *in, double budget, int runs,
			int32_t *map, struct result *r)
{
	tp_place_opts po;
	tp_place_opts_default(&po);
	po.policy = TP_POLICY_GEOMETRIC;
	po.geom.time_budget_ms = budget;
	po.geom.nthreads = opt_threads;
	for (int i = 0; i < runs; i++) {
		tp_geom_report rep;
		tp_error err;
		double c0 = cpu_ms(), t = now_ms();
		if (tp_place(in->g, in->a, &po, map, &rep, &err)) {
			snprintf(r->err, sizeof r->err, "tp_place: %.250s", err.msg);
			return -1;
		}
		r->map_ms[i] = now_ms() - t;
		r->cpu_ms[i] = cpu_ms() - c0;
		r->geom_ms[i] = rep.elapsed_ms;
		r->hb[i] = avg_hb(in->g, in->a, map);
		r->scored = rep.variants_scored;
		r->total = rep.variants_total;
		r->folded = rep.variants_folded;
		r->budget_hit = rep.budget_hit;
		snprintf(r->desc, sizeof r->desc, "%s", rep.best_desc);
		if (i == 0)
			r->peak_mb = vm_hwm_mb();
		r->runs = i + 1;
	}
	return 0;
}

/* The allocation as Slurm writes a hostlist: n[1,3,5-7,...]. */
static char *hostlist_of(const int32_t *ids, int64_t n)
{
	size_t cap = (size_t)n * 16 + 16, at = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	at += (size_t)snprintf(s, cap, "n[");
	for (int64_t i = 0; i < n;) {
		int64_t j = i;
		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		if (j > i)
			at += (size_t)snprintf(s + at, cap - at, "%s%d-%d", i ? "," : "",
					       ids[i], ids[j]);
		else
			at += (size_t)snprintf(s + at, cap - at, "%s%d", i ? "," : "",
					       ids[i]);
		i = j + 1;
	}
	snprintf(s + at, cap - at, "]");
	return s;
}

/* One launch as the plugin makes it; its wall time, or < 0. */
static double one_launch(const char *conf, const char *nodes, const char *slots,
			 int64_t ntasks, const char *stencil, double budget,
			 const char *out, tp_job **jobp, struct result *r)
{
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf_path = conf;
	q.nodes = nodes;
	q.slots = slots;
	q.ntasks = ntasks;   /* as the plugin has it: SLURM_STEP_NUM_TASKS */
	q.stencil = stencil;
	q.default_time_budget_ms = budget;
	tp_error err;
	double t = now_ms();
	if (tp_job_create(&q, jobp, &err) || tp_job_run(*jobp, &err)) {
		snprintf(r->err, sizeof r->err, "launch: %.250s", err.msg);
		return -1;
	}
	FILE *f = fopen(out, "w");
	if (!f || tp_hostfile_write(f, tp_job_alloc(*jobp), tp_job_map(*jobp),
				    tp_job_ntasks(*jobp)) < 0 || fclose(f)) {
		snprintf(r->err, sizeof r->err, "launch: cannot write %s", out);
		return -1;
	}
	return now_ms() - t;
}

/* The hop-bytes of a launch's mapping per byte, and its kept candidate. */
static double launch_result(tp_job *job, char *kept, size_t len)
{
	for (int k = 0; k < tp_job_ncandidates(job); k++) {
		tp_job_candidate cd;
		tp_job_candidate_get(job, k, &cd);
		if (cd.chosen)
			snprintf(kept, len, "%s", cd.name);
	}
	return tp_metrics_hop_bytes(tp_job_graph(job), tp_job_alloc(job),
				    tp_job_map(job)) /
	       tp_graph_total_bytes(tp_job_graph(job));
}

/* What one launch of a case is given. */
struct launch_in {
	const struct scase *c;
	const char *conf, *nodes, *slots, *out;
	int64_t nalloc;
	double budget;
};

/* Launch i into r: its time, CPU and kernel time, hop-bytes; -1 when it
 * failed (r->err says why). */
static int launch_run(const struct launch_in *in, int i, struct result *r)
{
	const struct scase *c = in->c;
	tp_job *job = NULL;
	double c0 = cpu_ms(), k0 = sys_ms();
	double ms = one_launch(in->conf, in->nodes, in->slots, in->nalloc * c->tpn,
			       c->stencil, in->budget, in->out, &job, r);
	r->launch_cpu[i] = cpu_ms() - c0;
	r->launch_sys[i] = sys_ms() - k0;
	if (ms < 0) {
		tp_job_destroy(job);
		return -1;
	}
	r->launch_ms[i] = ms;
	r->runs = i + 1;
	r->launch_hbs[i] = launch_result(job, r->kept, sizeof r->kept);
	if (opt_explain) {   /* the child's stderr: every launch's */
		fprintf(stderr, "%s, launch %d, %.0f ms:\n", c->name, i + 1, ms);
		tp_job_explain(job, stderr, "  ");
	}
	if (i == 0) {
		r->nodes = in->nalloc;
		r->tasks = tp_job_ntasks(job);
		r->peak_mb = vm_hwm_mb();
	}
	tp_job_destroy(job);
	return 0;
}

/* Child L: the launch path, `runs` times, then once without a budget
 * (full). */
static void launch_child(const struct scase *c, double budget, int runs,
			 bool full, struct result *r)
{
	int dims[6];
	int nd = parse_dims(c->dims, dims);
	int64_t total = 1, nalloc = 0;
	for (int d = 0; d < nd; d++)
		total *= dims[d];
	char *text = conf_text(c, total);
	int32_t *ids = make_alloc(c, dims, nd, total, &nalloc);
	char *nodes = ids ? hostlist_of(ids, nalloc) : NULL;
	char conf[64] = "/tmp/bench_scale.XXXXXX", out[80], slots[16];
	int fd = mkstemp(conf);
	snprintf(out, sizeof out, "%s.hosts", conf);
	snprintf(slots, sizeof slots, "%d", c->tpn);
	if (!text || !nodes || fd < 0 || write(fd, text, strlen(text)) !=
	    (ssize_t)strlen(text)) {
		snprintf(r->err, sizeof r->err, "launch: cannot set up");
		goto out;
	}
	close(fd);
	fd = -1;
	struct launch_in in = { c, conf, nodes, slots, out, nalloc, budget };
	for (int i = 0; i < runs; i++) {
		if (opt_pause_ms > 0)
			usleep((useconds_t)(opt_pause_ms * 1000));
		if (!opt_fresh) {
			if (launch_run(&in, i, r))
				goto out;
			continue;
		}
		/* a process of its own, as srun is (r is shared memory) */
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			_exit(launch_run(&in, i, r) ? 1 : 0);
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			if (!r->err[0])
				snprintf(r->err, sizeof r->err, "launch %d: its process failed", i + 1);
			goto out;
		}
	}
	r->launch_hb = median(r->launch_hbs, runs);
	r->auto_hb = NAN;
	if (full) {
		tp_job *job = NULL;
		r->auto_ms = one_launch(conf, nodes, slots, nalloc * c->tpn,
					c->stencil, 0, out, &job, r);
		if (r->auto_ms >= 0)
			r->auto_hb = launch_result(job, r->auto_kept,
						   sizeof r->auto_kept);
		tp_job_destroy(job);
		if (r->auto_ms < 0)
			goto out;
	}
	r->done = 1;
out:
	if (fd >= 0)
		close(fd);
	unlink(conf);
	unlink(out);
	free(text);
	free(ids);
	free(nodes);
}

/* One child: build everything, map `runs` times with the budget. */
static void child(const struct scase *c, double budget, int runs, struct result *r)
{
	struct inputs in;
	if (build_inputs(c, &in, r))
		return;
	r->base_mb = vm_hwm_mb();
	int32_t *map = malloc(sizeof(int32_t) * (size_t)r->tasks);
	if (map && run_mappings(&in, budget, runs, map, r) == 0 &&
	    tp_map_block(in.a, (int32_t)r->tasks, map, NULL) == 0) {
		r->block_hb = avg_hb(in.g, in.a, map);
		r->done = 1;
	}
	free(map);
	tp_graph_destroy(in.g);
	tp_alloc_destroy(in.a);
	tp_conf_destroy(in.conf);
}

static void run_child(const struct scase *c, double budget, int runs,
		      struct result *r, bool launch, bool full)
{
	memset(r, 0, sizeof *r);
	r->load0 = loadavg();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (launch)
			launch_child(c, budget, runs, full, r);
		else
			child(c, budget, runs, r);
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		snprintf(r->err, sizeof r->err, "fork failed");
	else if (!r->done && !r->err[0])
		snprintf(r->err, sizeof r->err, "child died (status %d)", st);
	r->load1 = loadavg();
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Index of the median map time. */
static int median_run(const struct result *r)
{
	double s[MAX_RUNS];
	memcpy(s, r->map_ms, sizeof(double) * (size_t)r->runs);
	qsort(s, (size_t)r->runs, sizeof *s, cmp_dbl);
	double med = s[r->runs / 2];
	for (int i = 0; i < r->runs; i++)
		if (r->map_ms[i] == med)
			return i;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_scale [--quick] [--case NAME[,NAME...]] [--list] [--runs N]\n"
		   "                   [--budget-ms MS] [--threads N] [--seed N] [--explain]\n"
		   "                   [--fresh] [--pause-ms MS]\n"
		   "  --quick    no full-search reference, and only the cases below 1M tasks\n"
		   "  --explain  every launch's candidates on stderr (topoplace --explain)\n"
		   "  --fresh    every launch in a process of its own, as srun makes them\n"
		   "  --pause-ms a pause before every launch (a VM may take back the\n"
		   "             memory the last one freed meanwhile)\n");
}

/* Options; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, bool *quick, const char **only)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--quick")) {
			*quick = true;
		} else if (!strcmp(a, "--list")) {
			for (int c = 0; c < NCASES; c++)
				printf("%-13s %s: %s on %s\n", cases[c].name, cases[c].what,
				       cases[c].stencil, cases[c].dims);
			return 0;
		} else if (!strcmp(a, "--case") && i + 1 < argc) {
			*only = argv[++i];
		} else if (!strcmp(a, "--runs") && i + 1 < argc) {
			opt_runs = atoi(argv[++i]);
		} else if (!strcmp(a, "--budget-ms") && i + 1 < argc) {
			opt_budget = atof(argv[++i]);
		} else if (!strcmp(a, "--threads") && i + 1 < argc) {
			opt_threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--explain")) {
			opt_explain = true;
		} else if (!strcmp(a, "--fresh")) {
			opt_fresh = true;
		} else if (!strcmp(a, "--pause-ms") && i + 1 < argc) {
			opt_pause_ms = atof(argv[++i]);
		} else if (!strcmp(a, "--seed") && i + 1 < argc) {
			g_seed = strtoull(argv[++i], NULL, 10);
		} else {
			bool help = !strcmp(a, "-h") || !strcmp(a, "--help");
			usage(help ? stdout : stderr);
			return help ? 0 : 2;
		}
	}
	if (opt_runs < 1)
		opt_runs = 1;
	if (opt_runs > MAX_RUNS)
		opt_runs = MAX_RUNS;
	return -1;
}

static bool selected(const struct scase *c, bool quick, const char *only)
{
	if (!only)
		return !quick || c->quick;
	size_t nl = strlen(c->name), ol = strlen(only);
	for (const char *p = only; (p = strstr(p, c->name)) != NULL; p++)
		if ((p == only || p[-1] == ',') && (p + nl == only + ol || p[nl] == ','))
			return true;
	return false;
}

static void print_header(bool quick)
{
	printf("bench_scale: topoplace %s; tp_place geometric, default options, budget %.0f ms,\n"
	       "threads %d (0 = one per CPU it may use), %d run(s) per case (median quoted);\n"
	       "full = the same without a budget%s.\n"
	       "Times in ms: load = tp_conf_load_string, alloc = tp_alloc_from_nodes, graph =\n"
	       "tp_graph_from_stencil, map = tp_place (geom = tp_geom_map inside it; cpu = CPU\n"
	       "time of tp_place, all threads), total = load + alloc + graph + map.  Average\n"
	       "hop-bytes: the budget run's (worst: the worst run), the full search's, block's;\n"
	       "vs full / vs blk use the worst run.  Memory: peak MB (VmHWM) after mapping.\n\n",
	       tp_version(), opt_budget, opt_threads, opt_runs,
	       quick ? " (skipped: --quick)" : "");
	printf("%-13s %7s %8s %3s %6s | %6s %5s %5s %6s %6s %6s %7s | %6s %6s %6s %6s | %7s %7s | %5s %5s | %s\n",
	       "case", "nodes", "tasks", "t/n", "budget", "load", "alloc", "graph", "map",
	       "geom", "cpu", "total", "run", "worst", "full", "block", "vs full", "vs blk",
	       "peak", "full", "variants (run; full: variants, map ms)");
}

static void print_row(const struct scase *c, const struct result *rb,
		      const struct result *rf, bool quick)
{
	int m = median_run(rb);
	double worst = 0;
	for (int i = 0; i < rb->runs; i++)
		worst = rb->hb[i] > worst ? rb->hb[i] : worst;
	double full = quick ? NAN : rf->hb[0];
	char vs_full[16] = "-", fullmb[16] = "-", fullms[48] = "";
	if (!quick) {
		snprintf(vs_full, sizeof vs_full, "%+.1f%%", 100.0 * (worst / full - 1));
		snprintf(fullmb, sizeof fullmb, "%.0f", rf->peak_mb);
		snprintf(fullms, sizeof fullms, "; %d/%d in %.0f", rf->scored,
			 rf->total, rf->map_ms[0]);
	}
	printf("%-13s %7lld %8lld %3d %6.0f | %6.0f %5.0f %5.0f %6.0f %6.0f %6.0f %7.0f | %6.3f %6.3f %6.3f %6.3f | %7s %+6.0f%% | %5.0f %5s | %d/%d%s\n",
	       c->name, (long long)rb->nodes, (long long)rb->tasks, c->tpn,
	       opt_budget, rb->load_ms, rb->alloc_ms, rb->graph_ms, rb->map_ms[m],
	       rb->geom_ms[m], rb->cpu_ms[m],
	       rb->load_ms + rb->alloc_ms + rb->graph_ms + rb->map_ms[m],
	       rb->hb[m], worst, full, rb->block_hb, vs_full,
	       100.0 * (worst / rb->block_hb - 1), rb->peak_mb, fullmb,
	       rb->scored, rb->total, fullms);
	fflush(stdout);
}

static void print_launch_header(void)
{
	printf("\nLaunch path (what the plugin does: topoplace.conf from a file, the\n"
	       "allocation as a Slurm hostlist, tp_job with the site default auto and\n"
	       "the budget, the hostfile written), %d run(s) per case.  launch = wall ms\n"
	       "end to end (median, max), over = max - budget, cpu = CPU ms of the\n"
	       "median run (all threads); average hop-bytes of the kept mapping (the\n"
	       "median run's; kept: the last run's) against the full geometric search\n"
	       "(vsfull), auto's full search (the same launch without a budget: vsauto,\n"
	       "not with --quick) and block; peak MB.\n\n", opt_runs);
	printf("%-13s %7s %8s %6s | %6s %6s %6s %6s | %-20s | %6s %6s %6s %6s | %5s\n",
	       "case", "nodes", "tasks", "budget", "launch", "max", "over", "cpu",
	       "kept", "avg hb", "vsfull", "vsauto", "vsblk", "peak");
}

static void print_launch_row(const struct scase *c, const struct result *rl,
			     const struct result *rb, const struct result *rf,
			     bool quick)
{
	double s[MAX_RUNS], cpu = 0;
	memcpy(s, rl->launch_ms, sizeof(double) * (size_t)rl->runs);
	qsort(s, (size_t)rl->runs, sizeof *s, cmp_dbl);
	for (int i = 0; i < rl->runs; i++)
		if (rl->launch_ms[i] == s[rl->runs / 2])
			cpu = rl->launch_cpu[i];
	char vs_full[16] = "-", vs_auto[16] = "-";
	if (!quick && !rf->err[0])
		snprintf(vs_full, sizeof vs_full, "%+.1f%%",
			 100.0 * (rl->launch_hb / rf->hb[0] - 1));
	if (!quick && isfinite(rl->auto_hb))
		snprintf(vs_auto, sizeof vs_auto, "%+.1f%%",
			 100.0 * (rl->launch_hb / rl->auto_hb - 1));
	printf("%-13s %7lld %8lld %6.0f | %6.0f %6.0f %+6.0f %6.0f | %-20s | %6.3f %6s %6s %+5.0f%% | %5.0f\n",
	       c->name, (long long)rl->nodes, (long long)rl->tasks, opt_budget,
	       s[rl->runs / 2], s[rl->runs - 1], s[rl->runs - 1] - opt_budget, cpu,
	       rl->kept, rl->launch_hb, vs_full, vs_auto,
	       100.0 * (rl->launch_hb / rb->block_hb - 1), rl->peak_mb);
	fflush(stdout);
}

static void print_notes(const struct scase *c, const struct result *rb,
			const struct result *rf, bool quick)
{
	printf("  %-13s %s\n    map ms:", c->name, c->what);
	for (int i = 0; i < rb->runs; i++)
		printf(" %.0f", rb->map_ms[i]);
	printf("; geom ms:");
	for (int i = 0; i < rb->runs; i++)
		printf(" %.0f", rb->geom_ms[i]);
	printf("%s; best: %s%s\n    inputs %.0f MB, after mapping %.0f MB",
	       rb->budget_hit ? " (budget hit)" : "", rb->desc,
	       rb->folded ? " (folds offered)" : "", rb->base_mb, rb->peak_mb);
	if (!quick && !rf->err[0])
		printf("; full search: %s, %.0f MB after mapping", rf->desc, rf->peak_mb);
	printf("\n    load average %.2f before, %.2f after\n", rb->load0,
	       quick ? rb->load1 : rf->load1);
}

/* Milliseconds to write one byte per 4 KiB page of mb MB of fresh memory,
 * in huge pages where the kernel gives them (as the library asks). */
static double touch_ms(size_t mb)
{
	size_t n = mb << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, n, MADV_HUGEPAGE);
#endif
	double t = now_ms();
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	t = now_ms() - t;
	munmap(p, n);
	return t;
}

/* What fresh memory costs on this machine, in a fresh process after a
 * pause: the first touch, then the same amount again once freed.  A launch
 * at a million tasks touches about 160 MB; on a VM whose idle memory goes
 * back to the host the first figure is far above the second, and so is a
 * case's first launch when the memory it gets was idle (its max).  Run
 * last, so that its freed pages do not serve the launches. */
static void print_memory_cost(void)
{
	const size_t mb = 256;
	double *t = mmap(NULL, 2 * sizeof *t, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return;
	t[0] = t[1] = -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		t[0] = touch_ms(mb);
		t[1] = touch_ms(mb);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (t[0] >= 0 && t[1] >= 0)
		printf("\nFresh memory here: %zu MB first touched in %.0f ms (%.2f ms/MB), "
		       "again in %.0f ms\n", mb, t[0], t[0] / (double)mb, t[1]);
	munmap(t, 2 * sizeof *t);
}

int main(int argc, char **argv)
{
	bool quick = false;
	const char *only = NULL;
	int rc = parse_args(argc, argv, &quick, &only);
	if (rc >= 0)
		return rc;
	struct result *res = mmap(NULL, sizeof(struct result) * 3 * NCASES,
				  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	print_header(quick);
	for (int c = 0; c < NCASES; c++) {
		if (!selected(&cases[c], quick, only))
			continue;
		struct result *rb = &res[3 * c], *rf = &res[3 * c + 1];
		run_child(&cases[c], opt_budget, opt_runs, rb, false, false);
		if (!quick)
			run_child(&cases[c], 0, 1, rf, false, false);
		if (rb->err[0] || (!quick && rf->err[0])) {
			printf("%-13s error: %s%s\n", cases[c].name, rb->err, rf->err);
			rc = 1;
			continue;
		}
		print_row(&cases[c], rb, rf, quick);
	}
	printf("\nPer case: map times of every run, the best variant, memory before mapping:\n");
	for (int c = 0; c < NCASES; c++)
		if (selected(&cases[c], quick, only) && !res[3 * c].err[0])
			print_notes(&cases[c], &res[3 * c], &res[3 * c + 1], quick);
	print_launch_header();
	for (int c = 0; c < NCASES; c++) {
		if (!selected(&cases[c], quick, only))
			continue;
		struct result *rl = &res[3 * c + 2];
		run_child(&cases[c], opt_budget, opt_runs, rl, true, !quick);
		if (rl->err[0]) {
			printf("%-13s error: %s\n", cases[c].name, rl->err);
			rc = 1;
			continue;
		}
		print_launch_row(&cases[c], rl, &res[3 * c], &res[3 * c + 1], quick);
	}
	printf("\nEvery launch, in order (the first pays for the memory it is the first to take):\n");
	for (int c = 0; c < NCASES; c++) {
		const struct result *rl = &res[3 * c + 2];
		if (!selected(&cases[c], quick, only) || rl->err[0])
			continue;
		printf("  %-13s", cases[c].name);
		for (int i = 0; i < rl->runs; i++)
			printf(" %4.0f", rl->launch_ms[i]);
		printf(" ms; in the kernel");
		for (int i = 0; i < rl->runs; i++)
			printf(" %.0f", rl->launch_sys[i]);
		printf(" ms");
		if (isfinite(rl->auto_hb))
			printf("; without a budget: %s, %.3f in %.0f ms",
			       rl->auto_kept, rl->auto_hb, rl->auto_ms);
		printf("\n");
	}
	sleep(5);   /* as long a pause as before a launch that pays for it */
	print_memory_cost();
	return rc < 0 ? 0 : rc;
}
