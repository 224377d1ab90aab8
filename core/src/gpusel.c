/* topoplace — inside one node: GPU selection (MAGC phase 3) and socket/core
 * placement (MAGC phase 2 with the MIMS objective of Wu et al.).
 *
 * Phase 2: the node's tasks go to its sockets in balanced blocks of
 * consecutive local ranks; pairs are then swapped while that lowers the
 * largest message between two sockets (MIMS), judged after the swap with the
 * total inter-socket bytes as tie-break.  Each task takes (cores / tasks)
 * consecutive cores of its socket.  The callers pass the CPU + GPU traffic,
 * so that tasks with heavy GPU traffic share a socket and phase 3 can put
 * their GPUs there (MAGC uses the CPU pattern alone here).
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
 *  - the result is compared with local-rank order and with the closest-GPU
 *    baseline (--gpu-bind=closest), and the best of the three is kept
 *    (cost_lt: congestion, weighted cost, GPUs off their task's socket, the
 *    way to the cards).
 * Only the allowed GPUs are ever chosen.  Everything is deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static const char *const ALGOS[] = { "magc", "local-rank", "closest" };

int tp_gpusel_algo_parse(const char *s, enum tp_gpusel_algo *out,
			 tp_error *err)
{
	for (int i = 0; s && i < 3; i++)
		if (!strcasecmp(s, ALGOS[i])) {
			*out = (enum tp_gpusel_algo)i;
			return 0;
		}
	return tp_error_set(err, TP_EINVAL,
			    "unknown GPU selection '%s' (magc, local-rank or closest)",
			    s ? s : "");
}

const char *tp_gpusel_algo_name(enum tp_gpusel_algo a)
{
	return (int)a >= 0 && (int)a < 3 ? ALGOS[a] : "unknown";
}

/* Greedy restarts from every first GPU up to this many allowed GPUs. */
#define MULTISTART_MAX 32

static bool lt(double a, double b)
{
	return a < b - 1e-9 * fmax(fabs(a), fabs(b));
}

static int cmp_i32_idx(const void *x, const void *y)
{
	const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* Dense local traffic matrix (ntasks is small: at most the node's GPUs or
 * cores).  The diagonal holds each task's traffic to tasks that are not in
 * the list (on other nodes).  Keys are (global id << 32 | local index),
 * sorted for lookup. */
static int local_matrix(const tp_graph *g, const int32_t *tasks, int32_t nt,
			double **out, tp_error *err)
{
	*out = tp__calloc((size_t)nt * (size_t)nt + 1, sizeof(double));
	int64_t *key = tp__malloc_array((size_t)nt + 1, sizeof(int64_t));
	if (!*out || !key) {
		free(*out);
		*out = NULL;
		free(key);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < nt; i++) {
		int32_t t = tasks ? tasks[i] : i;
		if (t < 0 || (g && t >= g->ntasks)) {
			free(key);
			free(*out);
			*out = NULL;
			return tp_error_set(err, TP_EINVAL,
					    "task %ld outside the pattern's 0..%ld",
					    (long)t, g ? (long)g->ntasks - 1 : 0L);
		}
		key[i] = ((int64_t)t << 32) | i;
	}
	qsort(key, (size_t)nt, sizeof *key, cmp_i32_idx);
	for (int32_t i = 1; i < nt; i++)
		if ((key[i] >> 32) == (key[i - 1] >> 32)) {
			long t = (long)(key[i] >> 32);
			free(key);
			free(*out);
			*out = NULL;
			return tp_error_set(err, TP_EINVAL, "task %ld listed twice", t);
		}
	if (g) {
		double *c = *out;
		for (int32_t i = 0; i < nt; i++) {
			int32_t t = tasks ? tasks[i] : i;
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
				int64_t want = (int64_t)g->adjncy[e] << 32;
				int32_t lo = 0, hi = nt;
				while (lo < hi) {
					int32_t mid = lo + (hi - lo) / 2;
					if ((key[mid] & ~(int64_t)0xffffffff) < want)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo < nt && (key[lo] >> 32) == g->adjncy[e]) {
					int32_t j = (int32_t)(key[lo] & 0xffffffff);
					c[(size_t)i * nt + j] = g->weights[e];
				} else {
					c[(size_t)i * nt + i] += g->weights[e];
				}
			}
		}
	}
	free(key);
	return 0;
}

/* Task p's traffic to other nodes (the diagonal of c), a share per GPU, on
 * the route from its GPU a to a's network card; returns the weighted cost
 * added.  Nothing on nodes without a card. */
static double add_remote_traffic(const tp_node *n, const double *c, int32_t nt,
				 int gpt, int32_t p, int a, double *load,
				 double scale)
{
	double bytes = c[(size_t)p * nt + p];
	if (n->nnics == 0 || bytes <= 0)
		return 0;
	double x = bytes * scale / gpt, bw = 0;
	for (int r = n->nic_route_off[a]; r < n->nic_route_off[a + 1]; r++) {
		load[n->nic_route[r]] += x;
		double b = n->link[n->nic_route[r]].bw;
		if (bw == 0 || b < bw)
			bw = b;
	}
	return bw > 0 ? x / bw : 0;
}

/* Adds the traffic between task p's GPU a and its neighbours' GPUs (and to
 * other nodes, through a's network card) to load; returns the
 * bandwidth-weighted cost of the traffic inside the node (ns) and writes
 * that of the traffic to the card to *remote_w. */
static double add_gpu_traffic(const tp_node *n, const double *c, int32_t nt,
			      int gpt, const int *gpus, const bool *mapped,
			      int32_t p, int a, double *load, double scale,
			      double *remote_w)
{
	double wcost = 0;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t q = 0; q < nt; q++) {
		double w = c[(size_t)p * nt + q];
		if (q == p || w <= 0 || !mapped[q])
			continue;
		for (int k = 0; k < gpt; k++) {
			int b = gpus[(size_t)q * gpt + k];
			if (b < 0)
				continue;
			double x = w * share * scale;
			int pp = a * n->ngpus + b;
			for (int r = n->route_off[pp]; r < n->route_off[pp + 1]; r++)
				load[n->route[r]] += x;
			if (n->pbw[pp] > 0)
				wcost += x / n->pbw[pp];
		}
	}
	*remote_w = add_remote_traffic(n, c, nt, gpt, p, a, load, scale);
	return wcost;
}

static double max_cong(const tp_node *n, const double *load, int *arg)
{
	double m = 0;
	if (arg)
		*arg = -1;
	for (int l = 0; l < n->nlinks; l++) {
		double x = load[l] / n->link[l].bw;
		if (x > m) {
			m = x;
			if (arg)
				*arg = l;
		}
	}
	return m;
}

static void evaluate(const tp_node *n, const double *c, int32_t nt, int gpt,
		     const int *pkg, const int *gpus, double *load,
		     tp_gpusel_cost *cost)
{
	memset(load, 0, sizeof(double) * (size_t)n->nlinks);
	double w = 0, total = 0;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t p = 0; p < nt; p++)
		for (int32_t q = p + 1; q < nt; q++) {
			double b = c[(size_t)p * nt + q];
			if (b <= 0)
				continue;
			total += b;
			for (int i = 0; i < gpt; i++)
				for (int k = 0; k < gpt; k++) {
					int x = gpus[(size_t)p * gpt + i];
					int y = gpus[(size_t)q * gpt + k];
					int pp = x * n->ngpus + y;
					for (int r = n->route_off[pp]; r < n->route_off[pp + 1]; r++)
						load[n->route[r]] += b * share;
					if (n->pbw[pp] > 0)
						w += b * share / n->pbw[pp];
				}
		}
	double rw = 0;
	for (int32_t p = 0; p < nt; p++)
		for (int i = 0; i < gpt; i++)
			rw += add_remote_traffic(n, c, nt, gpt, p,
						 gpus[(size_t)p * gpt + i], load, 1.0);
	cost->nic_weighted_ms = rw / 1e6;
	cost->socket_misses = 0;
	for (int32_t p = 0; pkg && p < nt; p++)
		for (int i = 0; i < gpt; i++)
			cost->socket_misses += pkg[p] >= 0 &&
				n->gpu[gpus[(size_t)p * gpt + i]].package >= 0 &&
				n->gpu[gpus[(size_t)p * gpt + i]].package != pkg[p];
	int arg;
	cost->max_congestion_ms = max_cong(n, load, &arg) / 1e6;
	cost->max_link = arg;
	cost->weighted_ms = w / 1e6;
	cost->total_bytes = total;
}

/* a better than b: congestion, then the weighted cost inside the node, then
 * GPUs away from their task's socket, then the weighted cost of the way to
 * the network cards. */
static bool cost_lt(const tp_gpusel_cost *a, const tp_gpusel_cost *b)
{
	if (lt(a->max_congestion_ms, b->max_congestion_ms))
		return true;
	if (lt(b->max_congestion_ms, a->max_congestion_ms))
		return false;
	if (lt(a->weighted_ms, b->weighted_ms))
		return true;
	if (lt(b->weighted_ms, a->weighted_ms))
		return false;
	if (a->socket_misses != b->socket_misses)
		return a->socket_misses < b->socket_misses;
	return lt(a->nic_weighted_ms, b->nic_weighted_ms);
}

static void local_rank(int32_t nt, int gpt, const int *allowed, int *gpus)
{
	for (int32_t i = 0; i < nt; i++)
		for (int k = 0; k < gpt; k++)
			gpus[(size_t)i * gpt + k] = allowed[(size_t)i * gpt + k];
}

static void closest(const tp_node *n, int32_t nt, int gpt, const int *pkg,
		    const int *allowed, int nallowed, bool *used, int *gpus)
{
	memset(used, 0, sizeof(bool) * (size_t)n->ngpus);
	for (int32_t i = 0; i < nt; i++)
		for (int k = 0; k < gpt; k++) {
			int pick = -1;
			for (int a = 0; a < nallowed && pick < 0; a++)
				if (!used[allowed[a]] && pkg && pkg[i] >= 0 &&
				    n->gpu[allowed[a]].package == pkg[i])
					pick = allowed[a];
			for (int a = 0; a < nallowed && pick < 0; a++)
				if (!used[allowed[a]])
					pick = allowed[a];
			used[pick] = true;
			gpus[(size_t)i * gpt + k] = pick;
		}
}

/* Best bandwidth from GPU a to a free allowed GPU: what a partner placed
 * next to it could get. */
static double potential(const tp_node *n, int a, const int *allowed,
			int nallowed, const bool *used)
{
	double best = 0;
	for (int i = 0; i < nallowed; i++) {
		int b = allowed[i];
		if (b != a && !used[b] && n->pbw[a * n->ngpus + b] > best)
			best = n->pbw[a * n->ngpus + b];
	}
	return best;
}

/* One greedy run; first >= 0 forces the first task's first GPU. */
static void magc(const tp_node *n, const double *c, int32_t nt, int gpt,
		 const int *pkg, const int *allowed, int nallowed, bool *used,
		 bool *mapped, double *load, double *tmp, double *vol, int first,
		 int *gpus)
{
	memset(used, 0, sizeof(bool) * (size_t)n->ngpus);
	memset(mapped, 0, sizeof(bool) * (size_t)nt);
	memset(load, 0, sizeof(double) * (size_t)n->nlinks);
	for (size_t i = 0; i < (size_t)nt * gpt; i++)
		gpus[i] = -1;
	for (int32_t i = 0; i < nt; i++) {
		vol[i] = 0;
		for (int32_t j = 0; j < nt; j++)
			if (j != i || n->nnics > 0)   /* traffic off the node */
				vol[i] += c[(size_t)i * nt + j];
	}
	for (int32_t step = 0; step < nt; step++) {
		/* which task next */
		int32_t p = -1;
		double best = 0;
		if (step == 0) {
			for (int32_t i = 0; i < nt; i++)
				if (vol[i] > 0 && (p < 0 || vol[i] > best)) {
					p = i;
					best = vol[i];
				}
		} else {
			for (int32_t q = 0; q < nt; q++) {
				if (mapped[q] || vol[q] <= 0)
					continue;
				double sm = 0, su = 0;
				int nm = 0, nu = 0;
				for (int32_t r = 0; r < nt; r++) {
					double w = c[(size_t)q * nt + r];
					if (r == q || w <= 0)
						continue;
					if (mapped[r]) {
						sm += w;
						nm++;
					} else {
						su += w;
						nu++;
					}
				}
				double d = (nm ? sm / nm : 0) - (nu ? su / nu : 0);
				if (p < 0 || lt(best, d)) {
					p = q;
					best = d;
				}
			}
		}
		if (p < 0)                 /* only tasks without GPU traffic left */
			for (int32_t q = 0; q < nt && p < 0; q++)
				if (!mapped[q])
					p = q;
		/* its GPUs, one at a time */
		for (int k = 0; k < gpt; k++) {
			int pick = -1;
			double bc = 0, bw = 0, bnear = 0, bpot = 0, brw = 0;
			int bsock = 0;
			for (int ai = 0; ai < nallowed; ai++) {
				int a = allowed[ai];
				if (used[a] || (first >= 0 && step == 0 && k == 0 &&
						a != first))
					continue;
				memcpy(tmp, load, sizeof(double) * (size_t)n->nlinks);
				double rw;
				double w = add_gpu_traffic(n, c, nt, gpt, gpus, mapped, p,
							   a, tmp, 1.0, &rw);
				double mc = max_cong(n, tmp, NULL);
				double near = 0;
				for (int j = 0; j < k; j++)
					near += n->path[a * n->ngpus + gpus[(size_t)p * gpt + j]];
				double pot = potential(n, a, allowed, nallowed, used);
				int sock = pkg && pkg[p] >= 0 && n->gpu[a].package != pkg[p];
				/* lexicographic: congestion, weighted cost, closeness
				 * to the task's other GPUs, potential, socket, the
				 * way to the network card */
				int order = pick < 0 ? -1 : lt(mc, bc) ? -1 : lt(bc, mc) ? 1
					  : lt(w, bw) ? -1 : lt(bw, w) ? 1
					  : near < bnear ? -1 : near > bnear ? 1
					  : lt(bpot, pot) ? -1 : lt(pot, bpot) ? 1
					  : sock < bsock ? -1 : sock > bsock ? 1
					  : lt(rw, brw) ? -1 : 1;
				bool better = order < 0;
				if (better) {
					pick = a;
					bc = mc;
					bw = w;
					bnear = near;
					bpot = pot;
					bsock = sock;
					brw = rw;
				}
			}
			/* traffic to already mapped neighbours loads the links now */
			double prw;
			add_gpu_traffic(n, c, nt, gpt, gpus, mapped, p, pick, load, 1.0,
					&prw);
			used[pick] = true;
			gpus[(size_t)p * gpt + k] = pick;
		}
		mapped[p] = true;
	}
}

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

int tp_gpusel_eval(const tp_node *n, const tp_graph *gm, const int32_t *tasks,
		   int32_t ntasks, int gpus_per_task, const int *gpus,
		   tp_gpusel_cost *cost, tp_error *err)
{
	int rc = check_args(n, ntasks, gpus_per_task, err);
	if (rc)
		return rc;
	for (int64_t i = 0; i < (int64_t)ntasks * gpus_per_task; i++)
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL,
					    "GPU %d outside %s's 0..%d", gpus[i],
					    n->source, n->ngpus - 1);
	double *c = NULL;
	if ((rc = local_matrix(gm, tasks, ntasks, &c, err)))
		return rc;
	double *load = tp__calloc((size_t)n->nlinks + 1, sizeof(double));
	if (!load) {
		free(c);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	tp_gpusel_cost tmp;
	memset(&tmp, 0, sizeof tmp);
	evaluate(n, c, ntasks, gpus_per_task, NULL, gpus, load, &tmp);
	tmp.used = TP_GPUSEL_MAGC;
	if (cost)
		*cost = tmp;
	free(c);
	free(load);
	return 0;
}

int tp_gpusel(const tp_node *n, const tp_graph *gm, const int32_t *tasks,
	      int32_t ntasks, const int *task_package, const int *allowed,
	      int nallowed, int gpus_per_task, enum tp_gpusel_algo algo,
	      int *gpus, tp_gpusel_cost *cost, tp_error *err)
{
	int rc = check_args(n, ntasks, gpus_per_task, err);
	if (rc)
		return rc;
	int gpt = gpus_per_task;
	int na = allowed ? nallowed : n->ngpus;
	int *al = tp__malloc_array((size_t)n->ngpus + 1, sizeof(int));
	if (!al)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	if (allowed) {
		if (nallowed < 0 || nallowed > n->ngpus) {
			free(al);
			return tp_error_set(err, TP_EINVAL,
					    "%d allowed GPUs, but %s has %d", nallowed,
					    n->source, n->ngpus);
		}
		memcpy(al, allowed, sizeof(int) * (size_t)nallowed);
	} else {
		for (int g = 0; g < na; g++)
			al[g] = g;
	}
	qsort(al, (size_t)na, sizeof(int), cmp_int);
	for (int i = 0; i < na; i++) {
		if (al[i] < 0 || al[i] >= n->ngpus) {
			int bad = al[i];
			free(al);
			return tp_error_set(err, TP_EINVAL,
					    "allowed GPU %d outside %s's 0..%d", bad,
					    n->source, n->ngpus - 1);
		}
		if (i > 0 && al[i] == al[i - 1]) {
			int bad = al[i];
			free(al);
			return tp_error_set(err, TP_EINVAL, "allowed GPU %d listed twice",
					    bad);
		}
	}
	if ((int64_t)ntasks * gpt > na) {
		free(al);
		return tp_error_set(err, TP_EINVAL,
				    "%ld tasks x %d GPUs per task need %lld GPUs, but "
				    "the step may use only %d", (long)ntasks, gpt,
				    (long long)ntasks * gpt, na);
	}
	double *c = NULL;
	if ((rc = local_matrix(gm, tasks, ntasks, &c, err))) {
		free(al);
		return rc;
	}
	size_t ng = (size_t)n->ngpus, nl = (size_t)n->nlinks + 1;
	size_t tg = (size_t)ntasks * (size_t)gpt + 1;
	bool *used = tp__calloc(ng, sizeof(bool));
	bool *mapped = tp__calloc((size_t)ntasks + 1, sizeof(bool));
	double *load = tp__calloc(nl, sizeof(double));
	double *tmp = tp__calloc(nl, sizeof(double));
	double *vol = tp__calloc((size_t)ntasks + 1, sizeof(double));
	int *cand = tp__malloc_array(4 * tg, sizeof(int));
	if (!used || !mapped || !load || !tmp || !vol || !cand) {
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	int *lr = cand, *cl = cand + tg, *mg = cand + 2 * tg, *mt = cand + 3 * tg;
	local_rank(ntasks, gpt, al, lr);
	closest(n, ntasks, gpt, task_package, al, na, used, cl);
	tp_gpusel_cost best;
	memset(&best, 0, sizeof best);
	const int *chosen = mg;
	if (algo == TP_GPUSEL_LOCAL_RANK) {
		chosen = lr;
		evaluate(n, c, ntasks, gpt, task_package, lr, load, &best);
		best.used = algo;
	} else if (algo == TP_GPUSEL_CLOSEST) {
		chosen = cl;
		evaluate(n, c, ntasks, gpt, task_package, cl, load, &best);
		best.used = algo;
	} else {
		/* the greedy, then again from every first GPU (multi-start;
		 * the first move is a blind tie otherwise), then the baselines */
		int starts = na <= MULTISTART_MAX ? na : 0;
		const int *cands[3] = { mg, lr, cl };
		for (int i = -1 - starts; i < 3; i++) {
			tp_gpusel_cost x;
			if (i < 0) {
				int first = i == -1 - starts ? -1 : al[i + starts];
				magc(n, c, ntasks, gpt, task_package, al, na, used,
				     mapped, load, tmp, vol, first, mt);
				evaluate(n, c, ntasks, gpt, task_package, mt, load, &x);
				x.used = TP_GPUSEL_MAGC;
				if (i == -1 - starts || cost_lt(&x, &best)) {
					best = x;
					memcpy(mg, mt, sizeof(int) * (size_t)ntasks * (size_t)gpt);
				}
				continue;
			}
			if (i == 0)
				continue;
			evaluate(n, c, ntasks, gpt, task_package, cands[i], load, &x);
			x.used = i == 1 ? TP_GPUSEL_LOCAL_RANK : TP_GPUSEL_CLOSEST;
			if (cost_lt(&x, &best)) {
				best = x;
				chosen = cands[i];
			}
		}
	}
	memcpy(gpus, chosen, sizeof(int) * (size_t)ntasks * (size_t)gpt);
	if (cost)
		*cost = best;
out:
	free(al);
	free(c);
	free(used);
	free(mapped);
	free(load);
	free(tmp);
	free(vol);
	free(cand);
	return rc;
}

/* ---- phase 2: sockets and cores ---- */

/* The local edges (i < j, w > 0), so that MIMS costs O(edges), not
 * O(tasks^2). */
struct ledges {
	int64_t m;
	int32_t *u, *v;
	double *w;
};

static void ledges_free(struct ledges *e)
{
	free(e->u);
	free(e->v);
	free(e->w);
	memset(e, 0, sizeof *e);
}

static int ledges_build(const double *c, int32_t nt, struct ledges *e,
			tp_error *err)
{
	memset(e, 0, sizeof *e);
	int64_t m = 0;
	for (int32_t i = 0; i < nt; i++)
		for (int32_t j = i + 1; j < nt; j++)
			m += c[(size_t)i * nt + j] > 0;
	e->u = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	e->v = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	e->w = tp__malloc_array((size_t)m + 1, sizeof(double));
	if (!e->u || !e->v || !e->w) {
		ledges_free(e);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < nt; i++)
		for (int32_t j = i + 1; j < nt; j++)
			if (c[(size_t)i * nt + j] > 0) {
				e->u[e->m] = i;
				e->v[e->m] = j;
				e->w[e->m] = c[(size_t)i * nt + j];
				e->m++;
			}
	return 0;
}

/* MIMS and total inter-socket bytes of an assignment. */
static void mims_of(const struct ledges *e, const int *sock, double *mims,
		    double *cut)
{
	*mims = 0;
	*cut = 0;
	for (int64_t k = 0; k < e->m; k++)
		if (sock[e->u[k]] != sock[e->v[k]]) {
			*cut += e->w[k];
			if (e->w[k] > *mims)
				*mims = e->w[k];
		}
}

/* The allowed cores as a sorted list without repeats (all of the node's
 * when cores is NULL). */
static int core_list(const tp_node *n, const int *cores, int ncores,
		     int **out, int *nout, tp_error *err)
{
	int cnt = cores ? ncores : n->ncores;
	if (cnt < 0)
		return tp_error_set(err, TP_EINVAL, "negative core count");
	char *seen = tp__calloc((size_t)n->ncores + 1, 1);
	int *l = tp__malloc_array((size_t)cnt + 1, sizeof(int));
	if (!seen || !l) {
		free(seen);
		free(l);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int i = 0; i < cnt; i++) {
		int c = cores ? cores[i] : i;
		if (c < 0 || c >= n->ncores) {
			free(seen);
			free(l);
			return tp_error_set(err, TP_EINVAL, "core %d outside %s's 0..%d",
					    c, n->source, n->ncores - 1);
		}
		seen[c] = 1;
	}
	int k = 0;
	for (int c = 0; c < n->ncores; c++)
		if (seen[c])
			l[k++] = c;
	free(seen);
	*out = l;
	*nout = k;
	return 0;
}

int tp_node_place_cpus(const tp_node *n, const tp_graph *g,
		       const int32_t *tasks, int32_t ntasks, int cores_per_task,
		       int *task_package, int *task_core, double *mims,
		       tp_error *err)
{
	return tp_node_place_cpus_within(n, g, tasks, ntasks, NULL, 0,
					 cores_per_task, task_package, task_core,
					 mims, err);
}

int tp_node_place_cpus_within(const tp_node *n, const tp_graph *g,
			      const int32_t *tasks, int32_t ntasks,
			      const int *cores, int ncores, int cores_per_task,
			      int *task_package, int *task_core, double *mims,
			      tp_error *err)
{
	if (cores_per_task < 1)
		return tp_error_set(err, TP_EINVAL, "cores per task must be at least 1");
	int *list = NULL, nl = 0;
	int rc = core_list(n, cores, ncores, &list, &nl, err);
	if (rc)
		return rc;
	int S = n->npackages;
	int *cap = tp__calloc((size_t)S + 1, sizeof(int));
	int *next = tp__calloc((size_t)S + 1, sizeof(int));
	if (!cap || !next) {
		free(cap);
		free(next);
		free(list);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	for (int k = 0; k < nl; k++)
		cap[n->core_pkg[list[k]]]++;
	int64_t slots = 0;
	for (int s = 0; s < S; s++) {
		cap[s] /= cores_per_task;
		slots += cap[s];
	}
	struct ledges e;
	memset(&e, 0, sizeof e);
	if (ntasks >= 0 && ntasks > slots &&
	    (int64_t)ntasks * cores_per_task <= nl) {
		/* tasks wider than a socket: consecutive allowed cores */
		for (int32_t i = 0; i < ntasks; i++) {
			task_core[i] = i * cores_per_task;
			task_package[i] = n->core_pkg[list[task_core[i]]];
		}
		if (mims)
			*mims = 0;
		if (g && ntasks > 1) {
			double *c = NULL;
			rc = local_matrix(g, tasks, ntasks, &c, err);
			if (!rc)
				rc = ledges_build(c, ntasks, &e, err);
			free(c);
			double cut;
			if (!rc && mims)
				mims_of(&e, task_package, mims, &cut);
		}
		goto out;
	}
	if (ntasks < 0 || ntasks > slots) {
		if (cores)
			rc = tp_error_set(err, TP_EINVAL,
					  "%ld tasks x %d cores per task do not fit in "
					  "the %d allowed cores of %s", (long)ntasks,
					  cores_per_task, nl, n->source);
		else
			rc = tp_error_set(err, TP_EINVAL,
					  "%ld tasks x %d cores per task do not fit in "
					  "%s's %d cores (%d sockets)", (long)ntasks,
					  cores_per_task, n->source, n->ncores, S);
		goto out;
	}
	double *c = NULL;
	rc = local_matrix(g, tasks, ntasks, &c, err);
	if (!rc)
		rc = ledges_build(c, ntasks, &e, err);
	free(c);
	if (rc)
		goto out;
	/* balanced block start: socket s gets a share proportional to its
	 * capacity, consecutive local ranks together */
	int32_t t = 0;
	int64_t left = ntasks;
	int64_t room = slots;
	for (int s = 0; s < S; s++) {
		int64_t take = room > 0 ? (left * cap[s] + room - 1) / room : 0;
		if (take > cap[s])
			take = cap[s];
		if (take > left)
			take = left;
		for (int64_t k = 0; k < take; k++)
			task_package[t++] = s;
		left -= take;
		room -= cap[s];
	}
	/* pair swaps on the MIMS edge, judged by the true MIMS afterwards */
	double cur, cut;
	mims_of(&e, task_package, &cur, &cut);
	for (int64_t it = 0; g && it < (int64_t)ntasks * ntasks; it++) {
		/* the MIMS edge (the first in (u, v) order) */
		int32_t u = -1, v = -1;
		for (int64_t k = 0; k < e.m && u < 0 && cur > 0; k++)
			if (task_package[e.u[k]] != task_package[e.v[k]] &&
			    e.w[k] == cur) {
				u = e.u[k];
				v = e.v[k];
			}
		if (u < 0)
			break;
		int32_t ba = -1, bb = -1;
		double bm = cur, bcut = cut;
		for (int side = 0; side < 2; side++) {
			int32_t x = side ? v : u;          /* moves */
			int32_t y = side ? u : v;          /* to y's socket */
			for (int32_t w = 0; w < ntasks; w++) {
				if (w == y || task_package[w] != task_package[y])
					continue;
				int sx = task_package[x];
				task_package[x] = task_package[w];
				task_package[w] = sx;
				double m2, c2;
				mims_of(&e, task_package, &m2, &c2);
				task_package[w] = task_package[x];
				task_package[x] = sx;
				if (lt(m2, bm) || (!lt(bm, m2) && lt(c2, bcut))) {
					ba = x;
					bb = w;
					bm = m2;
					bcut = c2;
				}
			}
		}
		if (ba < 0)
			break;
		int sx = task_package[ba];
		task_package[ba] = task_package[bb];
		task_package[bb] = sx;
		cur = bm;
		cut = bcut;
	}
	/* cores: each socket's tasks in local-rank order take consecutive
	 * allowed cores of the socket (positions in the list) */
	for (int32_t i = 0; i < ntasks; i++) {
		int s = task_package[i];
		int seen = 0, first = -1;
		for (int k = 0; k < nl && first < 0; k++)
			if (n->core_pkg[list[k]] == s &&
			    seen++ == next[s] * cores_per_task)
				first = k;
		next[s]++;
		task_core[i] = first;
	}
	if (mims)
		*mims = cur;
out:
	ledges_free(&e);
	free(cap);
	free(next);
	free(list);
	return rc;
}

int tp_node_align_cpus(const tp_node *n, const tp_graph *g,
		       const int32_t *tasks, int32_t ntasks, const int *gpus,
		       int gpus_per_task, int *task_package, int *task_core,
		       double *mims, tp_error *err)
{
	if (gpus_per_task < 1)
		return tp_error_set(err, TP_EINVAL, "GPUs per task must be at least 1");
	for (int64_t i = 0; i < (int64_t)ntasks * gpus_per_task; i++)
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL, "GPU %d outside %s's 0..%d",
					    gpus[i], n->source, n->ngpus - 1);
	double *c = NULL;
	struct ledges e;
	int rc = local_matrix(g, tasks, ntasks, &c, err);
	if (!rc)
		rc = ledges_build(c, ntasks, &e, err);
	free(c);
	if (rc)
		return rc;
	double cur, cut;
	mims_of(&e, task_package, &cur, &cut);
	/* whole sockets first: swapping one pair of tasks may split a heavy
	 * pair, trading the two sockets' names never does */
	for (int a = 0; a < n->npackages; a++)
		for (int b = a + 1; b < n->npackages; b++) {
			int na = 0, nb = 0, now = 0, then = 0;
			for (int32_t i = 0; i < ntasks; i++) {
				int gs = n->gpu[gpus[(size_t)i * gpus_per_task]].package;
				if (task_package[i] == a) {
					na++;
					now += gs == a;
					then += gs == b;
				} else if (task_package[i] == b) {
					nb++;
					now += gs == b;
					then += gs == a;
				}
			}
			if (na != nb || then <= now)
				continue;
			/* the k-th task of a and the k-th task of b trade slots */
			int32_t i = 0, j = 0;
			for (int k = 0; k < na; k++, i++, j++) {
				while (task_package[i] != a)
					i++;
				while (task_package[j] != b)
					j++;
				int x = task_core[i];
				task_core[i] = task_core[j];
				task_core[j] = x;
			}
			for (int32_t q = 0; q < ntasks; q++)
				if (task_package[q] == a || task_package[q] == b)
					task_package[q] = a + b - task_package[q];
		}
	bool moved = true;
	while (moved) {
		moved = false;
		for (int32_t i = 0; i < ntasks && !moved; i++) {
			int gi = n->gpu[gpus[(size_t)i * gpus_per_task]].package;
			if (gi < 0 || gi == task_package[i])
				continue;
			for (int32_t j = 0; j < ntasks && !moved; j++) {
				int gj = n->gpu[gpus[(size_t)j * gpus_per_task]].package;
				if (j == i || task_package[j] != gi ||
				    gj != task_package[i])
					continue;
				int s = task_package[i];
				task_package[i] = task_package[j];
				task_package[j] = s;
				double m2, c2;
				mims_of(&e, task_package, &m2, &c2);
				if (lt(cur, m2)) {         /* would raise MIMS: undo */
					task_package[j] = task_package[i];
					task_package[i] = s;
					continue;
				}
				int k = task_core[i];
				task_core[i] = task_core[j];
				task_core[j] = k;
				cur = m2;
				moved = true;
			}
		}
	}
	if (mims)
		*mims = cur;
	ledges_free(&e);
	return 0;
}

/* ---- all nodes of a mapping ---- */

int tp_nodes_gpu_congestion(const tp_alloc *a, const int32_t *map,
			    int32_t ntasks, const tp_node *const *models,
			    const tp_graph *cpu, const tp_graph *gm,
			    int gpus_per_task, double *max_ms, tp_error *err)
{
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
		const tp_node *n = models[i];
		int32_t cnt = (int32_t)(start[i + 1] - start[i]);
		const int32_t *tk = tasks + start[i];
		int gpt = gpus_per_task ? gpus_per_task
			  : n && cnt ? n->ngpus / cnt : 0;
		if (!n || cnt == 0 || gpt < 1 || (int64_t)cnt * gpt > n->ngpus)
			continue;       /* no model, or no choice of GPUs to make */
		const int *tp = NULL;
		if (n->ncores >= cnt &&
		    tp_node_place_cpus(n, cpu, tk, cnt, n->ncores / cnt, pkg, core,
				       NULL, err) == 0)
			tp = pkg;
		tp_gpusel_cost c;
		rc = tp_gpusel(n, gm, tk, cnt, tp, NULL, 0, gpt, TP_GPUSEL_MAGC,
			       gpus, &c, err);
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
	if (tp_nodes_gpu_congestion(r->alloc, map, r->ntasks, r->models, r->cpu,
				    r->gm, r->gpus_per_task, &ms, &err) < 0)
		return HUGE_VAL;
	return ms;
}
