/* topoplace — the job pipeline's context: a request's inputs read and
 * checked into a tp_job (tp__job_open, for tp_job_create in job.c), its
 * notes, budget and threads, its destruction, and the accessors that hand
 * its results out.  Calls nothing else of job/: the node models
 * (job_models.c), the mapping (job_map.c), the insides of the nodes
 * (job_node.c) and the report (job_report.c) build on it.
 *
 * Order of the defaults, for the policy and the time budget alike: the
 * job's value, the site's override (the plugstack line), topoplace.conf,
 * then the built-in default (auto; no budget, or inside a launch,
 * TP_JOB_LAUNCH_BUDGET, TP_JOB_LAUNCH_BUDGET_MS).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job_internal.h"
#include "input/alloc_internal.h"
#include "conf/conf_internal.h"
#include "map/metrics_internal.h"
#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

void tp_job_request_init(tp_job_request *r)
{
	memset(r, 0, sizeof *r);
	r->time_budget_ms = -1;
	r->default_time_budget_ms = -1;
	r->min_gain = -1;
	r->search = TP_SEARCH_AUTO;
}

void tp__job_note(tp_job *job, const char *fmt, ...)
{
	if (job->nnotes >= TP_JOB_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(job->notes[job->nnotes], sizeof job->notes[0], fmt, ap);
	va_end(ap);
	job->nnotes++;
}

/* What writing the result takes after tp_job_run (a hostfile line per
 * task; set above its measured cost); the mapping leaves it to the caller so
 * that the whole launch stays inside the budget. */
#define OUTPUT_NS_PER_TASK 50.0

double tp__job_remaining_ms(const tp_job *job)
{
	if (job->budget_ms <= 0)
		return 0;
	double reserve = (double)job->ntasks * OUTPUT_NS_PER_TASK / 1e6;
	double left = job->budget_ms - (tp__now_ms() - job->t0) - reserve;
	return left > 1e-3 ? left : 1e-3;
}

int tp__job_threads(const tp_job *job)
{
	int n = tp__cpus();
	if (job->req.threads > 0 && job->req.threads < n)
		n = job->req.threads;
	int cap = job->conf ? tp_conf_max_threads(job->conf) : 0;
	return cap > 0 && n > cap ? cap : n;
}

/* ---------------------------------------------------------- resolution */

#define WHAT(job, field, plain) ((job)->req.what.field ? (job)->req.what.field : (plain))

/* Prefix err's message with the input's name, unless it names it. */
static int label(int rc, const char *what, tp_error *err)
{
	if (rc && err && what && !strstr(err->msg, what)) {
		char msg[TP_ERROR_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", err->msg);
		tp_error_set(err, rc, "%s: %s", what, msg);
	}
	return rc;
}

static int resolve_choices(tp_job *job, tp_error *err)
{
	const tp_job_request *r = &job->req;
	const char *name = r->policy ? r->policy : r->default_policy;
	job->explicit_policy = r->policy != NULL;
	if (name) {
		int rc = tp_policy_parse(name, &job->requested, err);
		if (rc)
			return label(rc, r->policy ? WHAT(job, policy, "policy")
				     : "the site's default policy", err);
	} else {
		job->requested = tp_conf_has_default_policy(job->conf)
				 ? tp_conf_default_policy(job->conf)
				 : TP_POLICY_AUTO;
	}
	job->policy = job->requested;
	if (r->metric) {
		int rc = tp_metric_parse(r->metric, &job->metric, err);
		if (rc)
			return label(rc, WHAT(job, metric, "metric"), err);
	} else {
		job->metric = tp_conf_default_metric(job->conf);
	}
	double b = tp_conf_time_budget_ms(job->conf);
	job->budget_from = tp_conf_has_time_budget(job->conf) ? TP_BUDGET_CONF
			   : TP_BUDGET_NONE;
	if (r->time_budget_ms >= 0) {
		b = r->time_budget_ms;
		job->budget_from = TP_BUDGET_REQUEST;
	} else if (r->default_time_budget_ms >= 0) {
		b = r->default_time_budget_ms;
		job->budget_from = TP_BUDGET_DEFAULT;
	} else if (job->budget_from == TP_BUDGET_NONE &&
		   (r->flags & TP_JOB_LAUNCH_BUDGET)) {
		b = TP_JOB_LAUNCH_BUDGET_MS;
		job->budget_from = TP_BUDGET_LAUNCH;
	}
	if (!isfinite(b) || b < 0)
		return tp_error_set(err, TP_EINVAL, "%s: %g ms: a number of "
				    "milliseconds >= 0 is needed",
				    WHAT(job, time_budget, "time budget"), b);
	job->budget_ms = b;
	job->min_gain = r->min_gain >= 0 && isfinite(r->min_gain)
			? r->min_gain : TP_JOB_DEFAULT_MIN_GAIN;
	if (r->gpu_select) {
		enum tp_gpusel_algo a;
		int rc = tp_gpusel_algo_parse(r->gpu_select, &a, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------- allocation */

static int64_t max_tasks(const tp_job *job)
{
	return job->req.max_tasks > 0 ? job->req.max_tasks
	       : TP_JOB_DEFAULT_MAX_TASKS;
}

/* A count "4" or a spec "2(x3),1" as per-node numbers into a (scratch use of
 * the allocation's slots). */
static int set_slots_text(tp_alloc *a, const char *text, tp_error *err)
{
	const char *p = text;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*text && !*p && p - text <= 9) {
		long v = strtol(text, NULL, 10);
		if (v < 1)
			return tp_error_set(err, TP_EINVAL, "'%s': must be positive",
					    text);
		for (int32_t i = 0; i < tp_alloc_nnodes(a); i++) {
			int rc = tp_alloc_set_slots(a, i, (int)v, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	return tp_alloc_set_slots_spec(a, text, err);
}

/* ntasks over the nodes as Slurm lays out -n without -N: floor or ceil of
 * the share each, the first nodes the larger share; with capacities, no
 * node above its own and the rest given to the next nodes that have room
 * (an allocation with 1, 2 and 2 CPUs and 4 tasks gets 1, 2, 1). */
static int spread(tp_job *job, int64_t n, const int32_t *order,
		  tp_error *err)
{
	tp_alloc *a = job->alloc;
	int32_t nn = tp_alloc_nnodes(a);
	int *cap = NULL;
	int rc = 0;
	if (job->req.capacity) {
		rc = set_slots_text(a, job->req.capacity, err);
		if (rc)
			return label(rc, WHAT(job, capacity, "capacity"), err);
		if (tp_alloc_total_slots(a) < n)
			return tp_error_set(err, TP_EINVAL, "%s: %lld tasks do not "
					    "fit in the %lld the nodes hold (%s)",
					    WHAT(job, ntasks, "tasks"), (long long)n,
					    (long long)tp_alloc_total_slots(a),
					    WHAT(job, capacity, "capacity"));
		cap = tp__malloc_array((size_t)nn, sizeof(int));
		if (!cap)
			return tp_error_set(err, TP_ENOMEM, "out of memory");
		for (int32_t i = 0; i < nn; i++)
			cap[i] = tp_alloc_slots(a, i);
	}
	int64_t base = n / nn, extra = n % nn, left = 0;
	/* the larger shares, and the room left, go to the first nodes in
	 * Slurm's order */
	for (int32_t k = 0; k < nn && !rc; k++) {
		int32_t i = order[k];
		int64_t want = base + (k < extra);
		if (cap && want > cap[i]) {
			left += want - cap[i];
			want = cap[i];
		}
		if (want > INT_MAX)
			rc = tp_error_set(err, TP_EINVAL, "%lld tasks on %ld nodes "
					  "is too many per node", (long long)n,
					  (long)nn);
		else
			rc = tp_alloc_set_slots(a, i, (int)want, err);
	}
	for (int32_t k = 0; k < nn && left > 0 && !rc; k++) {
		int32_t i = order[k];
		int have = tp_alloc_slots(a, i);
		int64_t room = cap[i] - have, add = room < left ? room : left;
		if (add > 0) {
			rc = tp_alloc_set_slots(a, i, have + (int)add, err);
			left -= add;
		}
	}
	free(cap);
	return rc;
}

static int alloc_slots(tp_job *job, int64_t *np, tp_error *err);

/* Slurm's distribution for n tasks (tp__slurm_layout_pick): the order the
 * nodes go in, kept for take_order, and the report's words. */
static int choose_layout(tp_job *job, int64_t n)
{
	const int32_t *o;
	int32_t nn = tp_alloc_nnodes(job->alloc);
	job->dist = tp__slurm_layout_pick(&job->layout, n, nn, &o,
					  job->slurm_order);
	job->plane = job->layout.plane;
	free(job->order);
	job->order = tp__malloc_array((size_t)(nn ? nn : 1), sizeof *job->order);
	if (!job->order)
		return TP_ENOMEM;
	memcpy(job->order, o, sizeof *o * (size_t)nn);
	/* said when the files or the distribution could change it */
	if (job->req.slurm_conf || job->distribution)
		tp__job_note(job, "Slurm's order: %s", job->slurm_order);
	return 0;
}

/* The tasks a node for n tasks in Slurm's distribution: plane=N's own
 * counts (hostlist order), else spread in the distribution's order. */
static int lay_tasks(tp_job *job, int64_t n, tp_error *err)
{
	if (choose_layout(job, n))
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	if (job->dist != TP__DIST_PLANE || job->req.capacity)
		return spread(job, n, job->order, err);
	int32_t nn = tp_alloc_nnodes(job->alloc);
	int64_t *count = tp__malloc_array((size_t)nn, sizeof *count);
	if (!count)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	tp__slurm_plane_counts(nn, n, job->plane, count);
	int rc = 0;
	for (int32_t i = 0; i < nn && !rc; i++)
		rc = count[i] > INT_MAX ? tp_error_set(err, TP_EINVAL, "%lld tasks "
						       "on %ld nodes is too many per node",
						       (long long)n, (long)nn)
		     : tp_alloc_set_slots(job->alloc, job->order[i], (int)count[i], err);
	free(count);
	return rc;
}

static int make_alloc(tp_job *job, tp_error *err)
{
	const tp_job_request *r = &job->req;
	if (!r->nodes) {
		/* node stage only: the task count checks the pattern */
		if (r->ntasks < 0 || r->ntasks > max_tasks(job))
			return tp_error_set(err, TP_EINVAL, "%s: %lld tasks",
					    WHAT(job, ntasks, "tasks"),
					    (long long)r->ntasks);
		job->ntasks = (int32_t)r->ntasks;
		return 0;
	}
	int rc = tp_alloc_from_hostlist(tp_conf_machine(job->conf), r->nodes, 1,
					WHAT(job, nodes, "nodes"), &job->alloc, err);
	if (rc)
		return rc;
	int64_t n = r->ntasks;
	if (n < 0)
		return tp_error_set(err, TP_EINVAL, "%s: %lld tasks",
				    WHAT(job, ntasks, "tasks"), (long long)n);
	/* slots and capacities are given in the hostlist's order; the
	 * allocation then takes the order Slurm's distribution goes in, once
	 * the task count picks it (choose_layout) */
	if ((rc = tp__slurm_layout_load(r->slurm_conf, r->partition, r->slurm_version,
					tp__conf_live(job->conf), job->distribution, "distribution", job->alloc,
					&job->layout, err)))
		return rc;
	job->have_layout = true;
	if ((rc = alloc_slots(job, &n, err)))
		return rc;
	if (n > max_tasks(job))
		return tp_error_set(err, TP_EINVAL, "%s: %lld tasks: more than the "
				    "limit of %lld", WHAT(job, ntasks, "tasks"),
				    (long long)n, (long long)max_tasks(job));
	job->ntasks = (int32_t)n;
	return 0;
}

/* The allocation's task slots from the request, *n the task count. */
static int alloc_slots(tp_job *job, int64_t *np, tp_error *err)
{
	const tp_job_request *r = &job->req;
	int64_t n = *np;
	int rc = 0;
	if (r->slots) {
		if ((rc = set_slots_text(job->alloc, r->slots, err)))
			return label(rc, WHAT(job, slots, "task slots"), err);
		int64_t total = tp_alloc_total_slots(job->alloc);
		if (n > total)
			return tp_error_set(err, TP_EINVAL, "%s: %lld tasks, but %s "
					    "gives the nodes %lld task slots",
					    WHAT(job, ntasks, "tasks"), (long long)n,
					    WHAT(job, slots, "the task slots"),
					    (long long)total);
		if (n == 0)
			n = total;
		if (choose_layout(job, n))
			return tp_error_set(err, TP_ENOMEM, "out of memory");
	} else if (n > 0 && (rc = lay_tasks(job, n, err))) {
		return rc;
	}
	*np = n;
	return 0;
}

/* ------------------------------------------------------------- pattern */

static int read_input(const tp_job_input *in, const char *kind, size_t max,
		      char **buf, size_t *len, tp_error *err)
{
	if (in->text) {
		*buf = NULL;
		*len = in->len;
		return 0;
	}
	return tp__read_file(in->name, max, kind, buf, len, err);
}

/* A graph without coordinates that is a regular stencil (a traced halo
 * exchange) gets its grid positions, and is mapped as --stencil would be;
 * any other graph is mapped as it is. */
static void recognise_stencil(tp_job *job, const char *name, tp_error *err)
{
	tp_stencil_shape s;
	double near = 0;
	if (tp_graph_coord_dims(job->cpu) > 0)
		return;
	if (tp_graph_detect_stencil(job->cpu, &s, err) == 1) {
		tp__graph_adopt_grid(job->cpu, &s);
		tp__job_note(job, "%s: a regular %d-point stencil, mapped as "
			     "--stencil %s", name, s.points, s.spec);
	} else if (tp__graph_infer_grid(job->cpu, &s, &near) == 1) {
		/* the graph's own bytes stay; the grid only gives the
		 * tasks their positions (a captured halo exchange) */
		tp__graph_adopt_grid(job->cpu, &s);
		tp__job_note(job, "%s: tasks on a %s grid (%.1f %% of the "
			     "bytes between grid neighbours), mapped with "
			     "their grid positions", name, s.spec, 100 * near);
	}
}

static int load_graph(tp_job *job, int64_t expect, tp_error *err)
{
	const tp_job_input *in = &job->req.graph;
	char *buf = NULL;
	size_t len = 0;
	int rc = read_input(in, "a JSON graph", TP__MAX_GRAPH_BYTES, &buf, &len,
			    err);
	if (!rc)
		rc = tp_graph_from_json_string(&job->cpu, buf ? buf : in->text, len,
					       in->name ? in->name : "graph",
					       expect, err);
	free(buf);
	if (rc)
		return rc;
	int64_t dups = tp_graph_merged_duplicates(job->cpu);
	if (dups > 0)
		tp__job_note(job, "%s: %lld duplicate edge%s summed",
			     in->name ? in->name : "graph", (long long)dups,
			     dups == 1 ? "" : "s");
	recognise_stencil(job, in->name ? in->name : "graph", err);
	return 0;
}

static int load_gpu_matrix(tp_job *job, int64_t expect, tp_error *err)
{
	const tp_job_input *in = &job->req.gpu_matrix;
	char *buf = NULL;
	size_t len = 0;
	int rc = read_input(in, "a GPU matrix", TP__MAX_MATRIX_BYTES, &buf, &len,
			    err);
	if (!rc)
		rc = tp_graph_from_gpu_matrix_string(&job->gm, buf ? buf : in->text,
						     len, in->name ? in->name
						     : "GPU matrix", expect, err);
	free(buf);
	return rc;
}

static bool has_input(const tp_job_input *in)
{
	return in->text || (in->name && in->name[0]);
}

/* ------------------------------------------------------- early stencil */

/* A stencil graph depends on neither the machine nor the allocation.  At
 * machine scale it is built on a second core while they load: a million
 * tasks mean first touches of about 100 MB.  Only when the job
 * states its task count and the stencil has exactly that many (the graph
 * the job builds anyway: a user's oversized stencil is still refused
 * before anything is allocated), and not below EARLY_MIN_TASKS, where a
 * thread costs more than it hides. */
#define EARLY_MIN_TASKS 65536

struct tp_job_early {
	pthread_t th;
	const char *spec;
	tp_graph *g;
	int rc;
};

static void *early_stencil(void *arg)
{
	struct tp_job_early *e = arg;
	e->rc = tp_graph_from_stencil(&e->g, e->spec, 0, NULL);
	return NULL;
}

static void early_start(tp_job *job)
{
	const tp_job_request *r = &job->req;
	/* a config given by path is not read yet: its MaxThreads= not seen */
	if (!r->stencil || has_input(&r->graph) || tp__job_threads(job) < 2 ||
	    r->ntasks < EARLY_MIN_TASKS || r->ntasks > max_tasks(job) ||
	    tp__stencil_ntasks(r->stencil) != r->ntasks)
		return;
	struct tp_job_early *e = calloc(1, sizeof *e);
	if (!e)
		return;   /* built in its turn instead */
	e->spec = r->stencil;
	if (pthread_create(&e->th, NULL, early_stencil, e)) {
		free(e);
		return;
	}
	job->early = e;
}

/* The early graph, once built; NULL when there was none or it failed (the
 * pattern is then built in its turn, and says why). */
static tp_graph *early_finish(tp_job *job)
{
	struct tp_job_early *e = job->early;
	if (!e)
		return NULL;
	pthread_join(e->th, NULL);
	tp_graph *g = e->rc ? NULL : e->g;
	free(e);
	job->early = NULL;
	return g;
}

/* A training job's step graph from its parallel layout (parallel.c), for
 * expect tasks (0: the layout's dp= says). */
static int make_parallel(tp_job *job, int64_t expect, tp_error *err)
{
	const char *what = job->par_what ? job->par_what : "parallel";
	if (job->req.stencil || has_input(&job->req.graph))
		return tp_error_set(err, TP_EINVAL, "%s: give one pattern: the "
				    "parallel layout, a stencil or a graph", what);
	int rc = label(tp__parallel_parse(job->par_spec, expect, &job->par, err),
		       what, err);
	if (!rc)
		rc = label(tp__parallel_graph(&job->par, NULL, &job->cpu, err),
			   what, err);
	if (rc)
		return rc;
	job->have_par = true;
	char d[200];
	tp__parallel_describe(&job->par, d, sizeof d);
	tp__job_note(job, "%s: %s (one unit of bytes= is %.0f KiB in the "
		     "predicted step time)", what, d, TP__PAR_UNIT_BYTES / 1024);
	return 0;
}

static int make_pattern(tp_job *job, tp_error *err)
{
	const tp_job_request *r = &job->req;
	if (r->stencil && has_input(&r->graph))
		return tp_error_set(err, TP_EINVAL, "give a stencil or a graph, "
				    "not both");
	/* Without a task count yet (no slots, no ntasks), the pattern says
	 * how many (late_task_count). */
	int64_t expect = job->ntasks;
	int rc = 0;
	tp_graph *early = early_finish(job);
	if (job->par_spec) {
		tp_graph_destroy(early);
		rc = make_parallel(job, expect, err);
	} else if (early && (expect == 0 || tp_graph_ntasks(early) == expect))
		job->cpu = early;
	else if (r->stencil) {
		/* built here, or built early for another task count: the
		 * same call as without the early build, and its message */
		tp_graph_destroy(early);
		rc = label(tp_graph_from_stencil(&job->cpu, r->stencil, expect, err),
			   WHAT(job, stencil, "stencil"), err);
	} else if (has_input(&r->graph))
		rc = load_graph(job, expect, err);
	if (!rc && job->cpu && r->stencil && job->cpu->size_scale > 0)
		tp__job_note(job, "stencil %.60s gives no sizes (bytes=): the "
			     "predicted time assumes %.0f KiB a face message",
			     r->stencil, job->cpu->size_scale / 1024);
	if (!rc && job->cpu && expect == 0)
		expect = tp_graph_ntasks(job->cpu);
	if (!rc && has_input(&r->gpu_matrix))
		rc = load_gpu_matrix(job, expect, err);
	if (rc)
		return rc;
	if (job->cpu && job->gm) {
		rc = tp_graph_add(job->cpu, job->gm, r->gpu_matrix.name
				  ? r->gpu_matrix.name : "GPU matrix", &job->sum, err);
		if (rc)
			return rc;
	}
	job->g = job->sum ? job->sum : job->cpu ? job->cpu : job->gm;
	if (job->g && !job->alloc && job->ntasks == 0)
		job->ntasks = tp_graph_ntasks(job->g);
	if (job->g && job->ntasks && tp_graph_ntasks(job->g) != job->ntasks)
		return tp_error_set(err, TP_EINVAL, "%s: %ld tasks, but the job "
				    "has %ld", job->have_par ? job->par_what
				    : r->stencil ? WHAT(job, stencil, "stencil")
				    : job->cpu ? r->graph.name : r->gpu_matrix.name,
				    (long)tp_graph_ntasks(job->g), (long)job->ntasks);
	return 0;
}

/* A job with no task count of its own takes the pattern's, spread over the
 * nodes as -n would be. */
static int late_task_count(tp_job *job, tp_error *err)
{
	if (!job->alloc || job->ntasks > 0)
		return 0;
	if (!job->g)
		return tp_error_set(err, TP_EINVAL, "no task count: give the "
				    "number of tasks, the slots per node or a "
				    "pattern");
	int64_t n = tp_graph_ntasks(job->g);
	if (n > max_tasks(job))
		return tp_error_set(err, TP_EINVAL, "%lld tasks: more than the "
				    "limit of %lld", (long long)n,
				    (long long)max_tasks(job));
	int rc = lay_tasks(job, n, err);
	if (!rc)
		job->ntasks = (int32_t)n;
	return rc;
}

/* The allocation in Slurm's order, now that slots and capacities given in
 * the hostlist's order are set. */
static int take_order(tp_job *job, tp_error *err)
{
	int rc = job->alloc && job->order ? tp__alloc_reorder(job->alloc, job->order) : 0;
	if (rc)
		rc = tp_error_set(err, rc, rc == TP_ENOMEM ? "out of memory"
				  : "Slurm's order of the nodes is not a permutation");
	free(job->order);
	job->order = NULL;
	if (job->have_layout)
		tp__slurm_layout_free(&job->layout);
	job->have_layout = false;
	return rc;
}


int tp__job_open(const tp_job_request *r, const char *distribution,
		 const char *parallel, const char *what, tp_job **out,
		 tp_error *err)
{
	if (!out || !r)
		return tp_error_set(err, TP_EINVAL, "job: %s is NULL",
				    out ? "request" : "out");
	*out = NULL;
	tp_job *job = calloc(1, sizeof *job);
	if (!job)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	job->req = *r;
	job->par_spec = parallel;
	job->par_what = what;
	if (distribution && *distribution &&
	    !(job->distribution = strdup(distribution))) {
		free(job);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	job->t0 = tp__now_ms();
	job->local_nid = -1;
	job->conf = r->conf;
	early_start(job);
	int rc = 0;
	if (!job->conf) {
		if (!r->conf_path)
			rc = tp_error_set(err, TP_EINVAL, "job: no configuration");
		else if (!(rc = tp_conf_load_slurm(r->conf_path, &(tp_conf_slurm){
				.slurm_conf = r->slurm_conf, .partition = r->partition,
				.slurm_version = r->slurm_version }, &job->own_conf, err)))
			job->conf = job->own_conf;
	}
	/* what the config was accepted with (a forest...) travels with every
	 * job, so that a user sees why placement across trees is costly */
	if (!rc && tp_conf_network_used(job->conf))
		tp__job_note(job, "network: %s", tp_conf_network_used(job->conf));
	for (int i = 0; !rc && i < tp_conf_nwarnings(job->conf); i++)
		tp__job_note(job, "warning: %s", tp_conf_warning(job->conf, i));
	if (!rc)
		rc = resolve_choices(job, err);
	if (!rc)
		rc = make_alloc(job, err);
	if (!rc)
		rc = make_pattern(job, err);
	if (!rc)
		rc = late_task_count(job, err);
	if (!rc)
		rc = take_order(job, err);
	if (rc) {
		tp_job_destroy(job);
		return rc;
	}
	*out = job;
	return 0;
}

/* A placement's lists (tp_job_place_node's, and each node's of the whole
 * job, freed with it). */
void tp_node_placement_free(tp_node_placement *p)
{
	if (!p)
		return;
	if (p->cpus)
		for (int32_t t = 0; t < p->ntasks; t++)
			free(p->cpus[t]);
	free(p->cpus);
	free(p->gpu_start);
	free(p->gpus);
	memset(p, 0, sizeof *p);
}

void tp_job_destroy(tp_job *job)
{
	if (!job)
		return;
	tp_graph_destroy(early_finish(job));   /* a job that failed first */
	if (job->np && job->alloc)
		for (int32_t i = 0; i < tp_alloc_nnodes(job->alloc); i++)
			tp_node_placement_free(&job->np[i]);
	free(job->np);
	free(job->task_pos);
	for (int i = 0; i < job->nmodels; i++)
		tp_node_destroy(job->models[i].node);
	free(job->models);
	free(job->model_of);
	tp_node_destroy(job->local_model);
	free(job->map);
	free(job->block);
	free(job->order);
	if (job->have_layout)
		tp__slurm_layout_free(&job->layout);
	free(job->distribution);
	tp_graph_destroy(job->g_block);
	tp_graph_destroy(job->sum);
	tp_graph_destroy(job->gm);
	tp_graph_destroy(job->cpu);
	tp_alloc_destroy(job->alloc);
	tp_conf_destroy(job->own_conf);
	free(job);
}

enum tp_job_status tp_job_status(const tp_job *job)
{
	return job ? job->status : TP_JOB_PENDING;
}

const char *tp_job_reason(const tp_job *job)
{
	return job ? job->reason : "";
}

enum tp_policy tp_job_requested_policy(const tp_job *job)
{
	return job->requested;
}

enum tp_policy tp_job_policy(const tp_job *job)
{
	return job->policy;
}

enum tp_metric_kind tp_job_metric(const tp_job *job)
{
	return job->metric;
}

double tp_job_time_budget_ms(const tp_job *job)
{
	return job->budget_ms;
}

enum tp_budget_source tp_job_time_budget_source(const tp_job *job)
{
	return job ? job->budget_from : TP_BUDGET_NONE;
}

const tp_conf *tp_job_conf(const tp_job *job)
{
	return job->conf;
}

const tp_alloc *tp_job_alloc(const tp_job *job)
{
	return job->alloc;
}

int32_t tp_job_ntasks(const tp_job *job)
{
	return job->ntasks;
}

const tp_graph *tp_job_graph(const tp_job *job)
{
	return job->g;
}

const int32_t *tp_job_map(const tp_job *job)
{
	return job->map;
}

const int32_t *tp_job_block_map(const tp_job *job)
{
	return job->block;
}

const char *tp_job_task_node(const tp_job *job, int32_t task)
{
	if (!job->map || task < 0 || task >= job->ntasks)
		return NULL;
	return tp_machine_node_name(tp_conf_machine(job->conf),
				    tp_alloc_node(job->alloc, job->map[task]));
}

const char *tp_job_slurm_order(const tp_job *job)
{
	return job->slurm_order[0] ? job->slurm_order : "the hostlist's order";
}

int tp_job_ncandidates(const tp_job *job)
{
	return job->ncand;
}

int tp_job_candidate_get(const tp_job *job, int i, tp_job_candidate *out)
{
	if (i < 0 || i >= job->ncand)
		return TP_EINVAL;
	const struct tp_job_cand *c = &job->cand[i];
	out->name = c->name;
	out->ran = c->ran;
	out->scored = c->scored;
	out->chosen = c->chosen;
	out->score = c->score;
	out->ranked = c->ranked;
	out->rank = c->rank;
	out->ms = c->ms;
	out->note = c->note;
	out->has_congestion = c->congested;
	out->congestion = c->congestion;
	return 0;
}

const tp_geom_report *tp_job_geom_report(const tp_job *job)
{
	return job->have_geom ? &job->geom : NULL;
}

int tp_job_nnotes(const tp_job *job)
{
	return job->nnotes;
}

const char *tp_job_note(const tp_job *job, int i)
{
	return i >= 0 && i < job->nnotes ? job->notes[i] : NULL;
}

double tp_job_elapsed_ms(const tp_job *job)
{
	return job->elapsed_ms;
}

const tp_metrics *tp_job_metrics(const tp_job *job)
{
	return job->have_metrics ? &job->m : NULL;
}

const tp_prediction *tp_job_prediction(const tp_job *job, bool block)
{
	if (!job || !job->have_pred)
		return NULL;
	return block ? &job->pred_block : &job->pred;
}

const double *tp_job_step_phases(const tp_job *job, bool block)
{
	if (!job || !job->have_pred || !job->have_par)
		return NULL;
	return job->step_us[block ? 1 : 0];
}

const tp_metrics *tp_job_block_metrics(const tp_job *job)
{
	return job->have_metrics ? &job->mblock : NULL;
}

const tp_node_placement *tp_job_node_placement(const tp_job *job, int32_t i)
{
	if (!job->np || i < 0 || i >= tp_alloc_nnodes(job->alloc))
		return NULL;
	return &job->np[i];
}

const char *tp_job_task_cpus(const tp_job *job, int32_t task)
{
	if (!job->np || task < 0 || task >= job->ntasks)
		return NULL;
	const tp_node_placement *p = &job->np[job->map[task]];
	return p->cpus_set ? p->cpus[job->task_pos[task]] : NULL;
}

const int *tp_job_task_gpus(const tp_job *job, int32_t task, int *count)
{
	*count = 0;
	if (!job->np || task < 0 || task >= job->ntasks)
		return NULL;
	const tp_node_placement *p = &job->np[job->map[task]];
	if (!p->gpus_set)
		return NULL;
	int k = job->task_pos[task];
	*count = p->gpu_start[k + 1] - p->gpu_start[k];
	return p->gpus + p->gpu_start[k];
}
