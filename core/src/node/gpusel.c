/* topoplace — GPU selection inside one node (MAGC phase 3): the request
 * checked, the candidates compared (gpusel_search.c builds them,
 * gpusel_cost.c scores them), the GPUs by rail, and the GPU congestion of
 * every node of a mapping.  Sockets and cores (phase 2) are node_cpus.c.
 *
 * Phase 3, Mirsadeghi et al., "MAGC", Algorithm 1 (the max-congestion
 * greedy), with the resolutions of its open points:
 *  - the first task is the one with the most GPU traffic (the literal delta
 *    would start from the lightest); then the unmapped task with the largest
 *    delta = (mean traffic to mapped neighbours) - (mean traffic to unmapped
 *    neighbours), empty means being 0; tasks without GPU traffic come last,
 *    in local-rank order; ties go to the lower local rank;
 *  - a task's traffic to tasks on other nodes loads the route from its GPU to
 *    the GPU's nearest network card and the card's port (MAGC's phase 3 sees
 *    only the node's own traffic);
 *  - a task with g GPUs takes them one at a time; traffic between two tasks
 *    is spread evenly over their g x g GPU pairs;
 *  - a GPU's cost is the maximum load/bandwidth over all links of the node
 *    after the tentative placement; ties are broken by the added
 *    bandwidth-weighted cost, closeness to the task's other GPUs, the best
 *    bandwidth to a still-free GPU (an NVLink partner is not taken by an
 *    unrelated task), being on the task's socket, the weighted cost of the
 *    way to the network card, then the lower GPU index;
 *  - the first move is a blind tie, so the greedy is rerun from every allowed
 *    first GPU (up to MULTISTART_MAX) and the best run kept;
 *  - the result is compared with local-rank order, the closest-GPU
 *    baseline (--gpu-bind=closest) and the bisection over the PCIe tree,
 *    and the best is kept (cost_lt: congestion, weighted cost, GPUs off
 *    their task's socket, the way to the cards);
 *  - that one is then improved by single moves (two tasks trade their GPUs,
 *    or a one-GPU task moves to a free one) judged by the same cost, and
 *    kept only when cost_lt prefers the result.
 * Only the allowed GPUs are ever chosen.  Everything is deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_place.h"
#include "input/alloc_internal.h"

static const char *const ALGOS[] = { "magc", "local-rank", "closest",
				     "bisect" };
#define NALGOS ((int)(sizeof ALGOS / sizeof ALGOS[0]))

int tp_gpusel_algo_parse(const char *s, enum tp_gpusel_algo *out,
			 tp_error *err)
{
	for (int i = 0; s && i < NALGOS; i++)
		if (!strcasecmp(s, ALGOS[i])) {
			*out = (enum tp_gpusel_algo)i;
			return 0;
		}
	return tp_error_set(err, TP_EINVAL,
			    "unknown GPU selection '%s' (magc, local-rank, closest or bisect)",
			    s ? s : "");
}

const char *tp_gpusel_algo_name(enum tp_gpusel_algo a)
{
	if (a == TP_GPUSEL_RAIL)
		return "rail";
	return (int)a >= 0 && (int)a < NALGOS ? ALGOS[a] : "unknown";
}

/* Greedy restarts from every first GPU up to this many allowed GPUs. */
#define MULTISTART_MAX 32

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return a < b ? -1 : a > b;
}

/* Checks and normalises the arguments shared by tp_gpusel and _eval. */
static int check_args(const tp_node *n, int32_t ntasks, int gpt,
		      tp_error *err)
{
	if (n->ngpus == 0)
		return tp_error_set(err, TP_EINVAL, "%s: the node has no GPUs",
				    n->source);
	if (gpt < 1)
		return tp_error_set(err, TP_EINVAL, "GPUs per task must be at least 1");
	if (gpt > n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%d GPUs per task, but %s has only %d",
				    gpt, n->source, n->ngpus);
	if (ntasks < 0 || (int64_t)ntasks * gpt > n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%ld tasks x %d GPUs per task need %lld GPUs, "
				    "but %s has only %d", (long)ntasks, gpt,
				    (long long)ntasks * gpt, n->source, n->ngpus);
	return 0;
}

int tp_gpusel_eval(const tp_node_tasks *on, int gpus_per_task, const int *gpus,
		   tp_gpusel_cost *cost, tp_error *err)
{
	const tp_node *n = on->node;
	int32_t ntasks = on->ntasks;
	int rc = check_args(n, ntasks, gpus_per_task, err);
	if (rc)
		return rc;
	for (int64_t i = 0; i < (int64_t)ntasks * gpus_per_task; i++)
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL,
					    "GPU %d outside %s's 0..%d", gpus[i],
					    n->source, n->ngpus - 1);
	double *c = NULL;
	if ((rc = tp__node_local_matrix(on->g, on->tasks, ntasks, &c, err)))
		return rc;
	double *load = tp__calloc((size_t)n->nlinks + 1, sizeof(double));
	if (!load) {
		free(c);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	tp_gpusel_cost tmp;
	memset(&tmp, 0, sizeof tmp);
	struct gsel sel = { n, c, ntasks, gpus_per_task, NULL, NULL, 0 };
	tp__gpusel_evaluate(&sel, gpus, load, &tmp);
	tmp.used = TP_GPUSEL_MAGC;
	if (cost)
		*cost = tmp;
	free(c);
	free(load);
	return 0;
}

/* The allowed GPUs, sorted, into al[0..*na) (all of the node's when allowed
 * is NULL), checked against the node and the GPUs the tasks need. */
static int allowed_list(const tp_gpusel_request *rq, int *al, int *na,
			tp_error *err)
{
	const tp_node *n = rq->on.node;
	int64_t need = (int64_t)rq->on.ntasks * rq->gpus_per_task;
	*na = rq->allowed ? rq->nallowed : n->ngpus;
	if (rq->allowed) {
		if (rq->nallowed < 0 || rq->nallowed > n->ngpus)
			return tp_error_set(err, TP_EINVAL,
					    "%d allowed GPUs, but %s has %d",
					    rq->nallowed, n->source, n->ngpus);
		memcpy(al, rq->allowed, sizeof(int) * (size_t)rq->nallowed);
	} else {
		for (int g = 0; g < *na; g++)
			al[g] = g;
	}
	qsort(al, (size_t)*na, sizeof(int), cmp_int);
	for (int i = 0; i < *na; i++) {
		if (al[i] < 0 || al[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL,
					    "allowed GPU %d outside %s's 0..%d", al[i],
					    n->source, n->ngpus - 1);
		if (i > 0 && al[i] == al[i - 1])
			return tp_error_set(err, TP_EINVAL, "allowed GPU %d listed twice",
					    al[i]);
	}
	if (need > *na)
		return tp_error_set(err, TP_EINVAL,
				    "%ld tasks x %d GPUs per task need %lld GPUs, but "
				    "the step may use only %d", (long)rq->on.ntasks,
				    rq->gpus_per_task, (long long)need, *na);
	return 0;
}

/* The assignments tp_gpusel compares, each ntasks x gpt GPUs. */
struct gsel_cands {
	int *local_rank, *closest;
	int *greedy;          /* the best greedy run */
	int *run;             /* a greedy run, then the refinement's */
	int *bisect_exact;    /* the bisection, each split by the exact search */
	int *bisect_heur;     /* the same with the heuristic splits only */
};

/* The candidates TP_GPUSEL_MAGC compares, in this order: a later one is
 * kept only when cost_lt prefers it. */
enum magc_candidate {
	CAND_GREEDY,
	CAND_LOCAL_RANK,
	CAND_CLOSEST,
	CAND_BISECT_EXACT,
	CAND_BISECT_HEURISTIC,
	NCANDIDATES
};

/* What each candidate reports as tp_gpusel_cost.used. */
static const enum tp_gpusel_algo CANDIDATE_ALGO[NCANDIDATES] = {
	[CAND_GREEDY] = TP_GPUSEL_MAGC,
	[CAND_LOCAL_RANK] = TP_GPUSEL_LOCAL_RANK,
	[CAND_CLOSEST] = TP_GPUSEL_CLOSEST,
	[CAND_BISECT_EXACT] = TP_GPUSEL_BISECT,
	[CAND_BISECT_HEURISTIC] = TP_GPUSEL_BISECT,
};

/* The greedy's starts, in order: its own first move, then each allowed GPU
 * as the first task's first GPU (the first move is a blind tie otherwise),
 * while there are at most MULTISTART_MAX allowed GPUs. */
static int greedy_starts(const struct gsel *sel)
{
	return 1 + (sel->na <= MULTISTART_MAX ? sel->na : 0);
}

static int greedy_first_gpu(const struct gsel *sel, int start)
{
	return start == 0 ? FREE_START : sel->al[start - 1];
}

/* The best of the greedy's starts (the earliest of equals) into
 * cd->greedy and *best. */
static void greedy_best(const struct gsel *sel, struct gsel_work *wk,
			const struct gsel_cands *cd, tp_gpusel_cost *best)
{
	size_t len = sizeof(int) * (size_t)sel->nt * (size_t)sel->gpt;
	for (int start = 0; start < greedy_starts(sel); start++) {
		tp_gpusel_cost x;
		tp__gpusel_magc(sel, wk, greedy_first_gpu(sel, start), cd->run);
		tp__gpusel_evaluate(sel, cd->run, wk->load, &x);
		x.used = TP_GPUSEL_MAGC;
		if (start == 0 || tp__gpusel_cost_lt(&x, best)) {
			*best = x;
			memcpy(cd->greedy, cd->run, len);
		}
	}
}

/* TP_GPUSEL_MAGC: the best of its candidates, then (refine) improved by
 * single moves on the exact cost, kept only when better, into gpus and
 * *best. */
static int magc_select(const struct gsel *sel, struct gsel_work *wk,
		       const struct gsel_cands *cd, bool refine, int *gpus,
		       tp_gpusel_cost *best)
{
	size_t len = sizeof(int) * (size_t)sel->nt * (size_t)sel->gpt;
	int brc = tp__gpusel_bisect_gpus(sel, true, cd->bisect_exact);
	/* the heuristic splits too: the least cut is not always the least
	 * congestion, and the exact one must not lose what the heuristic
	 * had */
	int hrc = brc ? brc : tp__gpusel_bisect_gpus(sel, false, cd->bisect_heur);
	if (brc == TP_ENOMEM || hrc == TP_ENOMEM)
		return TP_ENOMEM;
	const int *cand[NCANDIDATES] = {
		[CAND_GREEDY] = cd->greedy,
		[CAND_LOCAL_RANK] = cd->local_rank,
		[CAND_CLOSEST] = cd->closest,
		[CAND_BISECT_EXACT] = brc ? NULL : cd->bisect_exact,
		[CAND_BISECT_HEURISTIC] = hrc ? NULL : cd->bisect_heur,
	};
	greedy_best(sel, wk, cd, best);
	const int *chosen = cand[CAND_GREEDY];
	for (int k = CAND_GREEDY + 1; k < NCANDIDATES; k++) {
		tp_gpusel_cost x;
		if (!cand[k])
			continue;
		tp__gpusel_evaluate(sel, cand[k], wk->load, &x);
		x.used = CANDIDATE_ALGO[k];
		if (tp__gpusel_cost_lt(&x, best)) {
			*best = x;
			chosen = cand[k];
		}
	}
	memcpy(gpus, chosen, len);
	if (!refine)
		return 0;
	tp_gpusel_cost r;
	memcpy(cd->run, chosen, len);
	tp__gpusel_refine_gpus(sel, wk, cd->run);
	tp__gpusel_evaluate(sel, cd->run, wk->load, &r);
	if (tp__gpusel_cost_lt(&r, best)) {
		r.used = best->used;
		*best = r;
		memcpy(gpus, cd->run, len);
	}
	return 0;
}

/* One of the other algorithms into gpus and *best; the bisection falls back
 * on local-rank order when the GPUs are too fragmented for it. */
static int single_select(const struct gsel *sel, struct gsel_work *wk,
			 const struct gsel_cands *cd, enum tp_gpusel_algo algo,
			 int *gpus, tp_gpusel_cost *best)
{
	const int *chosen = algo == TP_GPUSEL_CLOSEST ? cd->closest
			    : cd->local_rank;
	enum tp_gpusel_algo used = algo;
	if (algo == TP_GPUSEL_BISECT) {
		int brc = tp__gpusel_bisect_gpus(sel, true, cd->bisect_exact);
		if (brc == TP_ENOMEM)
			return brc;
		if (brc)
			used = TP_GPUSEL_LOCAL_RANK;
		else
			chosen = cd->bisect_exact;
	}
	tp__gpusel_evaluate(sel, chosen, wk->load, best);
	best->used = used;
	memcpy(gpus, chosen, sizeof(int) * (size_t)sel->nt * (size_t)sel->gpt);
	return 0;
}

int tp_gpusel(const tp_gpusel_request *rq, int *gpus, tp_gpusel_cost *cost,
	      tp_error *err)
{
	const tp_node *n = rq->on.node;
	int32_t ntasks = rq->on.ntasks;
	int gpt = rq->gpus_per_task;
	int rc = check_args(n, ntasks, gpt, err);
	if (rc)
		return rc;
	int na = 0;
	int *al = tp__malloc_array((size_t)n->ngpus + 1, sizeof(int));
	if (!al)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	double *c = NULL;
	if ((rc = allowed_list(rq, al, &na, err)) ||
	    (rc = tp__node_local_matrix(rq->on.g, rq->on.tasks, ntasks, &c, err))) {
		free(al);
		return rc;
	}
	struct gsel sel = { n, c, ntasks, gpt, rq->task_package, al, na };
	size_t ng = (size_t)n->ngpus, nl = (size_t)n->nlinks + 1;
	size_t tg = (size_t)ntasks * (size_t)gpt + 1;
	struct gsel_work wk = {
		.used = tp__calloc(ng, sizeof(bool)),
		.mapped = tp__calloc((size_t)ntasks + 1, sizeof(bool)),
		.load = tp__calloc(nl, sizeof(double)),
		.tmp = tp__calloc(nl, sizeof(double)),
		.vol = tp__calloc((size_t)ntasks + 1, sizeof(double)),
	};
	int *buf = tp__malloc_array(6 * tg, sizeof(int));
	if (!wk.used || !wk.mapped || !wk.load || !wk.tmp || !wk.vol || !buf) {
		rc = TP_ENOMEM;
		goto out;
	}
	struct gsel_cands cd = { buf, buf + tg, buf + 2 * tg, buf + 3 * tg,
				 buf + 4 * tg, buf + 5 * tg };
	tp__gpusel_local_rank(&sel, cd.local_rank);
	tp__gpusel_closest(&sel, wk.used, cd.closest);
	tp_gpusel_cost best;
	memset(&best, 0, sizeof best);
	bool single = rq->algo == TP_GPUSEL_LOCAL_RANK ||
		      rq->algo == TP_GPUSEL_CLOSEST || rq->algo == TP_GPUSEL_BISECT;
	rc = single ? single_select(&sel, &wk, &cd, rq->algo, gpus, &best)
		    : magc_select(&sel, &wk, &cd, rq->algo == TP_GPUSEL_MAGC,
				  gpus, &best);
	if (!rc && cost)
		*cost = best;
out:
	if (rc == TP_ENOMEM)
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
	free(al);
	free(c);
	free(wk.used);
	free(wk.mapped);
	free(wk.load);
	free(wk.tmp);
	free(wk.vol);
	free(buf);
	return rc;
}

/* ---- rails ----
 *
 * On a rail-optimised network a node's card r sits on rail r, and NCCL
 * sends a GPU's traffic through the card nearest it.  Peers at the same
 * local rank on different nodes (where a training job's data-parallel and
 * pipeline peers are) then meet on one rail when every node gives local
 * rank k the GPU of rail k: the time model (predict.c) routes them so. */
int tp__gpus_by_rail(const tp_node *n, const int *allowed, int nallowed,
		     int rails, int32_t ntasks, int *gpus, tp_error *err)
{
	if (rails < 1 || ntasks < 0 || nallowed < ntasks || nallowed > n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%ld tasks, %d allowed GPUs and %d rails: cannot "
				    "choose one GPU a task", (long)ntasks, nallowed, rails);
	if (n->nnics == 0)
		return tp_error_set(err, TP_ENOENT, "%s has no network card in its "
				    "model to tell the rails by", n->source);
	/* rail of each card: its rank among the cards nearest some GPU */
	int rail_of[TP_NODE_MAX_NICS], nr = 0;
	for (int c = 0; c < n->nnics; c++)
		rail_of[c] = -1;
	for (int g = 0; g < n->ngpus; g++)
		if (n->gpu_nic[g] >= 0)
			rail_of[n->gpu_nic[g]] = 0;
	for (int c = 0; c < n->nnics; c++)
		if (rail_of[c] >= 0)
			rail_of[c] = nr++;
	if (nr != rails)
		return tp_error_set(err, TP_ENOENT, "%s: its GPUs are nearest to %d "
				    "network card%s, the network has Rails=%d",
				    n->source, nr, nr == 1 ? "" : "s", rails);
	bool used[TP_NODE_MAX_GPUS] = { false };
	int off = 0;
	for (int32_t k = 0; k < ntasks; k++) {
		gpus[k] = -1;
		for (int i = 0; i < nallowed; i++) {
			int g = allowed[i];
			if (g < 0 || g >= n->ngpus)
				return tp_error_set(err, TP_EINVAL, "allowed GPU %d "
						    "outside %s's 0..%d", g, n->source,
						    n->ngpus - 1);
			if (!used[g] && n->gpu_nic[g] >= 0 &&
			    rail_of[n->gpu_nic[g]] == (int)(k % rails) &&
			    (gpus[k] < 0 || g < gpus[k]))
				gpus[k] = g;   /* the lowest of the rail's */
		}
		if (gpus[k] >= 0)
			used[gpus[k]] = true;
	}
	/* the tasks left without their rail: the lowest free GPUs */
	for (int32_t k = 0; k < ntasks; k++) {
		if (gpus[k] >= 0)
			continue;
		int best = -1;
		for (int i = 0; i < nallowed; i++)
			if (!used[allowed[i]] && (best < 0 || allowed[i] < best))
				best = allowed[i];
		gpus[k] = best;
		used[best] = true;
		off++;
	}
	return off;
}

/* ---- all nodes of a mapping ---- */

int tp_nodes_gpu_congestion(const tp_nodes_gpu_rank_arg *on,
			    const int32_t *map, double *max_ms, tp_error *err)
{
	const tp_alloc *a = on->alloc;
	int32_t ntasks = on->ntasks;
	int gpus_per_task = on->gpus_per_task;
	*max_ms = 0;
	if (gpus_per_task < 0)
		return tp_error_set(err, TP_EINVAL, "GPUs per task must not be negative");
	int32_t nn = a->nnodes;
	int64_t *start = tp__calloc((size_t)nn + 2, sizeof(int64_t));
	int32_t *tasks = tp__malloc_array((size_t)ntasks + 1, sizeof(int32_t));
	int *pkg = tp__malloc_array((size_t)ntasks + 1, sizeof(int));
	int *core = tp__malloc_array((size_t)ntasks + 1, sizeof(int));
	/* a node's tasks never hold more than its GPUs */
	int *gpus = tp__malloc_array(TP_NODE_MAX_GPUS + 1, sizeof(int));
	int rc = 0;
	if (!start || !tasks || !pkg || !core || !gpus) {
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	/* the tasks of every node, in rank order */
	for (int32_t t = 0; t < ntasks; t++) {
		if (map[t] < 0 || map[t] >= nn) {
			rc = tp_error_set(err, TP_EINVAL, "task %ld on node %ld of %ld",
					  (long)t, (long)map[t], (long)nn);
			goto out;
		}
		start[map[t] + 2]++;
	}
	for (int32_t i = 0; i < nn; i++)
		start[i + 2] += start[i + 1];
	for (int32_t t = 0; t < ntasks; t++)
		tasks[start[map[t] + 1]++] = t;
	for (int32_t i = 0; i < nn && !rc; i++) {
		const tp_node *n = on->models[i];
		int32_t cnt = (int32_t)(start[i + 1] - start[i]);
		const int32_t *tk = tasks + start[i];
		int gpt = gpus_per_task ? gpus_per_task
			  : n && cnt ? n->ngpus / cnt : 0;
		if (!n || cnt == 0 || gpt < 1 || (int64_t)cnt * gpt > n->ngpus)
			continue;       /* no model, or no choice of GPUs to make */
		tp_gpusel_request rq = {
			.on = { n, on->gm, tk, cnt },
			.gpus_per_task = gpt,
			.algo = TP_GPUSEL_MAGC,
		};
		tp_node_tasks cpu = { n, on->cpu, tk, cnt };
		tp_cpu_slots slots = { pkg, core, 0 };
		if (n->ncores >= cnt &&
		    tp_node_place_cpus(&cpu, n->ncores / cnt, &slots, err) == 0)
			rq.task_package = pkg;
		tp_gpusel_cost c;
		rc = tp_gpusel(&rq, gpus, &c, err);
		if (!rc && c.max_congestion_ms > *max_ms)
			*max_ms = c.max_congestion_ms;
	}
out:
	free(start);
	free(tasks);
	free(pkg);
	free(core);
	free(gpus);
	return rc;
}

double tp_nodes_gpu_rank(const int32_t *map, void *arg)
{
	const tp_nodes_gpu_rank_arg *r = arg;
	double ms = 0;
	tp_error err;
	tp_error_clear(&err);
	if (tp_nodes_gpu_congestion(r, map, &ms, &err) < 0)
		return HUGE_VAL;
	return ms;
}
