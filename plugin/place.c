/* topoplace SPANK plugin — one placement: the site's settings, the job's
 * options and what Slurm says about the step become one tp_job_request;
 * the core decides; its result becomes a private hostfile and the lines
 * for the job's stderr.  No SPANK calls here: the context files decide
 * when to call it and what to do with the result. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/topoplace.h>

#include "tpk.h"
#include "svg.h"

#define KEPT "Slurm's placement is kept"

static void add_line(struct tpk_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_line(struct tpk_result *r, const char *fmt, ...)
{
	if (r->nlines >= TPK_MAX_LINES)
		return;
	char raw[TPK_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	tpk_line(r->lines[r->nlines++], TPK_LINE_MAX, "%s", raw);
}

static void fail(struct tpk_result *r, const char *what)
{
	r->status = TPK_FAILED;
	r->nlines = 0;
	add_line(r, "topoplace: error: %s; " KEPT, what);
}

/* The user's files, read here with the user's privileges. */
struct inputs {
	char *graph, *gpu_matrix;
	size_t graph_len, gpu_len;
};

static int read_inputs(const struct tpk_site *site, const struct tpk_hints *h,
		       const struct tpk_step *s, struct inputs *in,
		       struct tpk_result *r)
{
	char why[TPK_LINE_MAX], line[TPK_LINE_MAX + 32];
	struct tpk_user_read ur = { &s->cred, s->basedir, site->max_file_bytes };
	if (h->graph && tpk_read_user_file(h->graph, &ur, &in->graph,
					   &in->graph_len, why, sizeof why) < 0) {
		snprintf(line, sizeof line, "--topo-graph: %s", why);
		fail(r, line);
		return -1;
	}
	if (h->gpu_matrix && tpk_read_user_file(h->gpu_matrix, &ur,
						&in->gpu_matrix, &in->gpu_len,
						why, sizeof why) < 0) {
		snprintf(line, sizeof line, "--topo-gpu-matrix: %s", why);
		fail(r, line);
		return -1;
	}
	return 0;
}

static void make_request(const struct tpk_site *site,
			 const struct tpk_hints *h, const struct tpk_step *s,
			 const struct inputs *in, tp_job_request *q,
			 char *slurm_conf, size_t len)
{
	tp_job_request_init(q);
	q->conf_path = site->conf_path;
	/* the baseline: the order this Slurm lays the tasks out in */
	tpk_slurm_conf_path(site, slurm_conf, len);
	q->slurm_conf = slurm_conf;
	q->slurm_version = tpk_slurm_version();
	q->nodes = s->nodelist;
	q->partition = s->partition;
	q->slots = s->slots;
	q->capacity = s->capacity;
	q->ntasks = s->ntasks;
	q->max_tasks = site->max_tasks;
	q->threads = site->max_threads;   /* at most; 0: every CPU srun has */
	q->stencil = h->stencil;
	if (h->graph) {
		q->graph.name = h->graph;
		q->graph.text = in->graph;
		q->graph.len = in->graph_len;
	}
	if (h->gpu_matrix) {
		q->gpu_matrix.name = h->gpu_matrix;
		q->gpu_matrix.text = in->gpu_matrix;
		q->gpu_matrix.len = in->gpu_len;
	}
	q->policy = h->policy;
	q->default_policy = site->policy[0] ? site->policy : NULL;
	q->flags = h->report ? TP_JOB_METRICS : 0;
	tpk_request_budget(site, q);
	q->what.nodes = "SLURM_JOB_NODELIST";
	q->what.slots = s->slots_what;
	q->what.ntasks = s->ntasks_what;
	q->what.capacity = "SLURM_JOB_CPUS_PER_NODE";
	q->what.stencil = "--topo-stencil";
	q->what.policy = "--topo-policy";
}

/* The config, with slurmctld's live view when a node of the job is in
 * none of Slurm's files (a dynamic node that joined with slurmd -Z --conf
 * "Topology=..."): loaded here so that slurmctld is asked only then.
 * NULL: tp_job_create loads it (and says what is wrong with it). */
static tp_conf *load_conf(const tp_job_request *q, const struct tpk_step *s,
			  char *why, size_t wlen)
{
	tp_conf_slurm sl = { q->slurm_conf, q->partition, NULL, q->slurm_version };
	tp_conf *c = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (tp_conf_load_slurm(q->conf_path, &sl, &c, &err) < 0)
		return NULL;
	if (!s->live || !tp_conf_network_source(c))
		return c;
	tp_alloc *a = NULL;
	if (tp_alloc_from_hostlist(tp_conf_machine(c), q->nodes, 1, "nodes", &a,
				   &err) == 0 || err.code != TP_ENOENT) {
		tp_alloc_destroy(a);
		return c;
	}
	int used = tp_conf_slurm_topology_used(c);
	const char *topo = used >= 0 ? tp_conf_slurm_topology(c, used) : NULL;
	size_t len = 0;
	char *text = tpk_slurm_topology_text(topo, &len, why, wlen);
	tp_conf *live = NULL;
	if (text && tp_conf_load_slurm_live(q->conf_path, &sl, text, len, topo,
					    "slurmctld's topology (slurm_load_topo)",
					    &live, &err) < 0) {
		snprintf(why, wlen, "%s", err.msg);
		live = NULL;
	}
	free(text);
	if (!live)
		return c;
	tp_conf_destroy(c);
	return live;
}

/* "auto (geometric+refine)", or the policy's name. */
static void label(const tp_job *job, char *out, size_t len)
{
	const char *pol = tp_policy_name(tp_job_policy(job));
	for (int i = 0; i < tp_job_ncandidates(job); i++) {
		tp_job_candidate c;
		tp_job_candidate_get(job, i, &c);
		if (c.chosen && strcmp(c.name, pol) &&
		    tp_job_status(job) == TP_JOB_PLACED) {
			snprintf(out, len, "%s (%s)", pol, c.name);
			return;
		}
	}
	snprintf(out, len, "%s", pol);
}

/* --topo-report: the summary, then the same candidate list --explain
 * prints, then the notes. */
static void report(const tp_job *job, struct tpk_result *r)
{
	char pol[48];
	label(job, pol, sizeof pol);
	const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
	long n = (long)tp_job_ntasks(job);
	long nn = (long)tp_alloc_nnodes(tp_job_alloc(job));
	if (tp_job_status(job) == TP_JOB_KEPT)
		add_line(r, "topoplace: policy %s: %s kept: %s (%ld tasks on %ld "
			 "nodes, %.1f ms)", pol, "Slurm's order",
			 tp_job_reason(job), n, nn, r->elapsed_ms);
	else if (m && mb) {
		char pl[160] = "";
		const tp_prediction *p = tp_job_prediction(job, false);
		if (p) {
			pl[0] = ';';
			pl[1] = ' ';
			tp_prediction_line(pl + 2, sizeof pl - 2,
					   tp_job_prediction(job, true), p);
		}
		add_line(r, "topoplace: policy %s: %ld tasks on %ld nodes in %.1f "
			 "ms; hop-bytes %.6g -> %.6g, max congestion %.6g -> %.6g"
			 "%s (Slurm's default order -> topoplace)", pol, n, nn,
			 r->elapsed_ms, mb->hop_bytes, m->hop_bytes,
			 mb->max_congestion_bytes, m->max_congestion_bytes, pl);
	}
	else
		add_line(r, "topoplace: policy %s: %ld tasks on %ld nodes in %.1f "
			 "ms (no communication pattern, no metrics)", pol, n, nn,
			 r->elapsed_ms);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		tp_job_explain(job, f, "topoplace:   ");
		fclose(f);
		for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save))
			add_line(r, "%s", l);
		free(buf);
	}
	for (int i = 0; i < tp_job_nnotes(job); i++)
		add_line(r, "topoplace: note: %s", tp_job_note(job, i));
}

/* The hostfile's size: a name and a newline per task. */
static uint64_t hostfile_bytes(const tp_job *job)
{
	uint64_t n = 0;
	for (int32_t t = 0; t < tp_job_ntasks(job); t++)
		n += strlen(tp_job_task_node(job, t)) + 1;
	return n;
}

/* Does every node hold one run of consecutive ranks?  Hydra starts one
 * proxy per run, and ranks of two proxies do not know they share a node
 * (MPI_COMM_TYPE_SHARED, local ranks): such a mapping is not given to it. */
static bool one_run_per_node(const tp_job *job)
{
	const int32_t *map = tp_job_map(job);
	int32_t n = tp_job_ntasks(job);
	char *seen = calloc((size_t)tp_alloc_nnodes(tp_job_alloc(job)) + 1, 1);
	bool ok = seen != NULL;
	for (int32_t t = 0; ok && t < n; t++) {
		if (t && map[t] == map[t - 1])
			continue;
		ok = !seen[map[t]];
		seen[map[t]] = 1;
	}
	free(seen);
	return ok;
}

/* MPICH/Hydra's host file: "node:count" for every node's run of ranks, in
 * rank order (mpiexec reads it through HYDRA_HOST_FILE). */
static int write_mpich(const char *path, const tp_job *job)
{
	FILE *f = fopen(path, "wex");
	if (!f)
		return -1;
	const int32_t *map = tp_job_map(job);
	int32_t n = tp_job_ntasks(job);
	int bad = 0;
	for (int32_t t = 0; t < n && !bad;) {
		int32_t e = t + 1;
		while (e < n && map[e] == map[t])
			e++;
		bad = fprintf(f, "%s:%ld\n", tp_job_task_node(job, t),
			      (long)(e - t)) < 0;
		t = e;
	}
	if (fclose(f) != 0 || bad) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* --topo-report=svg: the picture topoplace map --format svg draws for the
 * same inputs (the pattern named the same way), size-bounded, written as
 * the user where the step says; a failure is one line, never the job's. */
static void write_picture(const tp_job *job, const struct tpk_hints *h,
			  const struct tpk_step *s, struct tpk_result *r)
{
	if (!s->picture) {
		add_line(r, "topoplace: --topo-report=svg: no directory to write "
			 "the picture in");
		return;
	}
	char pat[TPK_PATH_MAX + 32], why[TPK_LINE_MAX];
	if (h->parallel)
		snprintf(pat, sizeof pat, "parallel %.200s", h->parallel);
	else if (h->stencil)
		snprintf(pat, sizeof pat, "stencil %s", h->stencil);
	else if (h->graph)
		snprintf(pat, sizeof pat, "graph %s", h->graph);
	else if (h->gpu_matrix)
		snprintf(pat, sizeof pat, "GPU traffic %s", h->gpu_matrix);
	else
		snprintf(pat, sizeof pat, "none");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = f ? svg_map_picture(f, job, pat) : -1;
	if (f && fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		add_line(r, "topoplace: --topo-report=svg: out of memory, no picture");
	else if (len > TPK_MAX_PICTURE_BYTES)
		add_line(r, "topoplace: --topo-report=svg: the picture would take "
			 "%zu bytes, more than %u: not written", len,
			 TPK_MAX_PICTURE_BYTES);
	else if (tpk_write_user_file(s->picture, buf, len, &s->cred, why,
				     sizeof why) < 0)
		add_line(r, "topoplace: --topo-report=svg: %s", why);
	else
		add_line(r, "topoplace: picture: %s", s->picture);
	free(buf);
}

static int write_hostfile(const tp_job *job, const struct tpk_step *s,
			  struct tpk_result *r)
{
	char why[TPK_LINE_MAX];
	/* slurmstepd writes it: bounded, whatever the task count allowed */
	uint64_t bytes = hostfile_bytes(job);
	if (bytes > TPK_MAX_HOSTFILE_BYTES) {
		snprintf(why, sizeof why, "the hostfile would take %llu bytes, more "
			 "than the plugin's limit of %u", (unsigned long long)bytes,
			 TPK_MAX_HOSTFILE_BYTES);
		fail(r, why);
		return -1;
	}
	if (tpk_make_private_dir(s->tmpdir, s->tag, &s->cred, r->dir,
				 sizeof r->dir, why, sizeof why) < 0) {
		fail(r, why);
		return -1;
	}
	if (snprintf(r->hostfile, sizeof r->hostfile, "%s/hostfile", r->dir) >=
	    (int)sizeof r->hostfile) {
		fail(r, "temporary directory name too long");
		return -1;
	}
	if (tpk_become_user(&s->cred, why, sizeof why) < 0) {
		fail(r, why);
		return -1;
	}
	/* a new file in our own new directory, read once by srun right after:
	 * no temporary, no rename, no fsync (they cost a launch milliseconds) */
	int e = 0;
	int fd = open(r->hostfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		      O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		e = errno;
	else if (tp_hostfile_write(f, tp_job_alloc(job), tp_job_map(job),
				   tp_job_ntasks(job)) < 0)
		e = errno ? errno : EIO;
	if (f && fclose(f) != 0 && !e)
		e = errno;
	else if (!f && fd >= 0)
		close(fd);
	if (!e && s->mpich && !(r->mpich_split = !one_run_per_node(job))) {
		if (snprintf(r->mpichfile, sizeof r->mpichfile, "%s.mpich",
			     r->hostfile) >= (int)sizeof r->mpichfile ||
		    write_mpich(r->mpichfile, job) < 0)
			r->mpichfile[0] = '\0';   /* mpiexec then gets Slurm's order */
	}
	tpk_become_root(&s->cred);
	if (e) {
		snprintf(why, sizeof why, "cannot write the hostfile %.900s: %s",
			 r->hostfile, strerror(e));
		fail(r, why);
		return -1;
	}
	return 0;
}

void tpk_place(const struct tpk_site *site, const struct tpk_hints *hints,
	       const struct tpk_step *step, struct tpk_result *res)
{
	memset(res, 0, sizeof *res);
	res->quiet = !hints->seen;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double t0 = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	struct inputs in;
	memset(&in, 0, sizeof in);
	tp_job *job = NULL;
	tp_conf *conf = NULL;
	if (tpk_hints_policy_none(hints)) {
		if (hints->report)
			add_line(res, "topoplace: policy none; " KEPT);
		return;
	}
	if (!step->nodelist || !step->nodelist[0]) {
		fail(res, "the job's node list is unknown");
		return;
	}
	if (read_inputs(site, hints, step, &in, res) < 0)
		goto out;
	tp_job_request q;
	char slurm_conf[TPK_PATH_MAX];
	make_request(site, hints, step, &in, &q, slurm_conf, sizeof slurm_conf);
	char live_why[TPK_LINE_MAX] = "";
	conf = load_conf(&q, step, live_why, sizeof live_why);
	q.conf = conf;
	tp_error err;
	tp_error_clear(&err);
	if ((hints->parallel
	     ? tp_job_create_parallel(&q, step->distribution, hints->parallel,
				      "--topo-parallel", &job, &err)
	     : tp_job_create_step(&q, step->distribution, &job, &err)) < 0 ||
	    tp_job_run(job, &err) < 0) {
		fail(res, err.msg[0] ? err.msg : tp_strerror(err.code));
		/* why slurmctld could not say where the node is */
		if (live_why[0])
			add_line(res, "topoplace: slurmctld's topology not read: %s",
				 live_why);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	res->elapsed_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 - t0;
	label(job, res->policy, sizeof res->policy);
	if (tp_job_status(job) == TP_JOB_PLACED) {
		if (write_hostfile(job, step, res) < 0)
			goto out;
		res->status = TPK_PLACED;
	}
	if (hints->report)
		report(job, res);
	if (tpk_hints_report_svg(hints))
		write_picture(job, hints, step, res);
	else if (hints->report_as)
		add_line(res, "topoplace: --topo-report=%s: unknown value (svg "
			 "draws the placement); the report is text only",
			 hints->report_as);
out:
	if (res->status != TPK_PLACED && res->dir[0]) {
		tpk_remove_private_dir(res->dir, &step->cred);
		res->dir[0] = '\0';
		res->hostfile[0] = '\0';
	}
	tp_job_destroy(job);
	tp_conf_destroy(conf);
	free(in.graph);
	free(in.gpu_matrix);
}

bool tpk_worth_placing(const struct tpk_site *site,
		       const struct tpk_hints *hints)
{
	if (hints->seen)
		return true;
	/* no options: only a site policy that needs no pattern does
	 * anything; with none on the plugstack line, topoplace.conf's
	 * DefaultPolicy= may be one */
	enum tp_policy p;
	if (!site->policy[0] || tp_policy_parse(site->policy, &p, NULL) < 0)
		return true;
	return !tp_policy_needs_pattern(p);
}

/* ------------------------------------------------------------------ key */

static void fnv(uint64_t *h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : "\x01");
	     *p; p++) {
		*h ^= *p;
		*h *= 1099511628211ull;
	}
	*h ^= 0x1f;
	*h *= 1099511628211ull;
}

void tpk_key(const struct tpk_site *site, const struct tpk_hints *hints,
	     const struct tpk_step *step, char out[17])
{
	uint64_t h = 14695981039346656037ull;
	char num[96];
	fnv(&h, site->conf_path);
	fnv(&h, site->policy);
	snprintf(num, sizeof num, "%.17g %zu %lld %d", site->time_budget_ms,
		 site->max_file_bytes, (long long)site->max_tasks,
		 site->max_threads);
	fnv(&h, num);
	fnv(&h, hints->stencil);
	fnv(&h, hints->graph);
	fnv(&h, hints->gpu_matrix);
	fnv(&h, hints->parallel);
	fnv(&h, hints->policy);
	fnv(&h, hints->report ? "r" : "-");
	fnv(&h, hints->report_as);
	fnv(&h, step->nodelist);
	fnv(&h, step->partition);
	fnv(&h, step->slots);
	fnv(&h, step->capacity);
	fnv(&h, step->distribution);
	snprintf(num, sizeof num, "%lld", (long long)step->ntasks);
	fnv(&h, num);
	/* relative file options mean files in basedir */
	bool rel = (hints->graph && hints->graph[0] != '/') ||
		   (hints->gpu_matrix && hints->gpu_matrix[0] != '/');
	fnv(&h, rel ? step->basedir : "");
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}
