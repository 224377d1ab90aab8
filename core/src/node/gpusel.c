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

#include "internal.h"
#include "node/node_internal.h"

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

/* ---- exact-size partitions of a node's few tasks ----
 *
 * Phase 2 (sockets) and the GPU bisection (sockets, then host bridges and
 * PCIe switches) split a node's tasks into parts of exact sizes with few
 * bytes between them.  A node holds few tasks (at most its cores or GPUs),
 * so this works on the dense local matrix: the better of two starts (the
 * tasks in local-rank order, and greedy growth along the heaviest edges,
 * which keeps heavy chains such as stencil rows together), each improved by
 * Kernighan-Lin passes between every two parts (the best sequence of swaps,
 * losing ones included, so that a split pairwise swaps cannot leave is left
 * all the same); for the GPU bisection then an exact branch-and-bound
 * search that starts from it (bounded: exact on the few tasks of a socket
 * or a switch).  Phase 2 keeps the heuristic (MIMS, not the cut, decides
 * there, and its tasks may be as many as the cores).
 * Deterministic: ties to the lower index. */

/* The tasks being split: T[0..n), rows of the dense local matrix c
 * (nt x nt). */
struct subset {
	const double *c;
	int32_t nt;
	const int32_t *T;
	int n;
};

/* Bytes between the subset's i-th and j-th tasks. */
static double sw(const struct subset *s, int i, int j)
{
	return s->c[(size_t)s->T[i] * s->nt + s->T[j]];
}

/* Bytes between parts of the assignment part[0..n) of the subset. */
static double cut_of(const struct subset *s, const int *part)
{
	double cut = 0;
	for (int i = 0; i < s->n; i++)
		for (int j = i + 1; j < s->n; j++)
			if (part[i] != part[j])
				cut += sw(s, i, j);
	return cut;
}

/* Greedy growth: part p in turn takes the free task most tied to it (the
 * heaviest-traffic free task to start). */
static void grow_parts(const struct subset *s, int k, const int *cnt,
		       int *part)
{
	int n = s->n;
	for (int i = 0; i < n; i++)
		part[i] = -1;
	for (int p = 0; p < k; p++)
		for (int got = 0; got < cnt[p]; got++) {
			int best = -1;
			double bw = -1;
			for (int i = 0; i < n; i++) {
				if (part[i] >= 0)
					continue;
				double w = 0;
				for (int j = 0; j < n; j++)
					if (got ? part[j] == p : part[j] < 0)
						w += sw(s, i, j);
				if (w > bw) {
					bw = w;
					best = i;
				}
			}
			part[best] = p;
		}
}

/* Scratch of the Kernighan-Lin passes, n entries each: the tasks a pass
 * has moved, and its swaps in order. */
struct kl_work {
	char *locked;
	int *su, *sv;
};

/* One Kernighan-Lin pass between parts p and q: swap the best unlocked
 * pair again and again, then keep the best prefix.  Returns the gain. */
static double kl_pass(const struct subset *s, int *part, int p, int q,
		      struct kl_work *kw)
{
	int n = s->n;
	char *locked = kw->locked;
	int *su = kw->su, *sv = kw->sv;
	memset(locked, 0, (size_t)n);
	double gain = 0, best = 0;
	int nbest = 0, ns = 0;
	for (;;) {
		int bu = -1, bv = -1;
		double bg = -HUGE_VAL;
		for (int u = 0; u < n; u++) {
			if (locked[u] || part[u] != p)
				continue;
			for (int v = 0; v < n; v++) {
				if (locked[v] || part[v] != q)
					continue;
				/* gain of swapping u and v: their ties to the
				 * other side minus those to their own */
				double g = 0;
				for (int x = 0; x < n; x++) {
					if (x == u || x == v)
						continue;
					double cu = sw(s, u, x);
					double cv = sw(s, v, x);
					if (part[x] == q)
						g += cu - cv;
					else if (part[x] == p)
						g += cv - cu;
				}
				if (g > bg + 1e-12 * fabs(bg)) {
					bg = g;
					bu = u;
					bv = v;
				}
			}
		}
		if (bu < 0)
			break;
		part[bu] = q;
		part[bv] = p;
		locked[bu] = locked[bv] = 1;
		su[ns] = bu;
		sv[ns++] = bv;
		gain += bg;
		if (gain > best + 1e-9 * (fabs(best) + 1)) {
			best = gain;
			nbest = ns;
		}
	}
	/* undo the swaps after the best prefix */
	for (int i = ns - 1; i >= nbest; i--) {
		part[su[i]] = p;
		part[sv[i]] = q;
	}
	return best;
}

/* Kernighan-Lin between every two parts until no pass gains. */
static void kl_refine(const struct subset *s, int k, int *part,
		      struct kl_work *kw)
{
	for (int round = 0; round < 4 * s->n; round++) {
		double g = 0;
		for (int p = 0; p < k; p++)
			for (int q = p + 1; q < k; q++)
				g += kl_pass(s, part, p, q, kw);
		if (g <= 0)
			break;
	}
}

/* Exact search of the split (branch and bound), for the few tasks where it
 * is cheap: the heuristic's split is the first bound; a task goes to each
 * part with room in turn, the heaviest tasks first, and a branch whose cut,
 * plus what the tasks left must add to it (xbound), reaches the best is
 * dropped.  Of parts of equal size only the first empty one is tried (their
 * names do not change the cut).  The work is bounded (EXACT_WORK task x
 * part steps, a fraction of a millisecond: exact for the few tasks of a
 * switch or a small socket); the best split found is kept, never worse
 * than the heuristic's.  Kernighan-Lin passes miss splits of three or more
 * unequal parts (a 3 | 4 | 2 node: 13 MB where 11 MB was possible). */
#define EXACT_WORK 400000

struct xsplit {
	const struct subset *s;
	int n, k;
	const int *size;     /* the parts' sizes */
	int *room;           /* tasks each part can still take */
	const int *order;    /* the tasks, heaviest first */
	int *cur, *best;
	double *conn;        /* n x k: bytes from each task to each part */
	double *placed;      /* n: bytes from each task to placed tasks */
	double bestcut;
	int64_t work;        /* task x part steps so far */
};

static double xw(const struct xsplit *x, int u, int v)
{
	return sw(x->s, u, v);
}

/* Task u into (sign 1) or out of (-1) part p: the other tasks' bytes to
 * p and to the placed tasks follow. */
static void xplace(struct xsplit *x, int u, int p, double sign)
{
	for (int v = 0; v < x->n; v++)
		if (v != u) {
			x->conn[(size_t)v * x->k + p] += sign * xw(x, u, v);
			x->placed[v] += sign * xw(x, u, v);
		}
}

/* A lower bound of the cut still to come from order[i..]: each task pays
 * at least its bytes to the placed tasks outside the part with room it is
 * most tied to. */
static double xbound(const struct xsplit *x, int i)
{
	double lb = 0;
	for (int j = i; j < x->n; j++) {
		int v = x->order[j];
		double most = 0;
		for (int p = 0; p < x->k; p++)
			if (x->room[p] && x->conn[(size_t)v * x->k + p] > most)
				most = x->conn[(size_t)v * x->k + p];
		lb += x->placed[v] - most;
	}
	return lb;
}

static void xsplit_rec(struct xsplit *x, int i, double cut)
{
	if (!(cut < x->bestcut * (1 - 1e-12)) || x->work >= EXACT_WORK)
		return;
	if (i == x->n) {
		x->bestcut = cut;
		memcpy(x->best, x->cur, sizeof(int) * (size_t)x->n);
		return;
	}
	x->work += (int64_t)x->n * (x->k + 1);
	int u = x->order[i];
	for (int p = 0; p < x->k; p++) {
		if (!x->room[p])
			continue;
		bool twin = false;   /* an earlier empty part of the same size */
		for (int q = 0; q < p && x->room[p] == x->size[p]; q++)
			twin |= x->size[q] == x->size[p] && x->room[q] == x->size[q];
		if (twin)
			continue;
		double now = cut + x->placed[u] - x->conn[(size_t)u * x->k + p];
		x->room[p]--;
		x->cur[u] = p;
		xplace(x, u, p, 1);
		if (now + xbound(x, i + 1) < x->bestcut * (1 - 1e-12))
			xsplit_rec(x, i + 1, now);
		xplace(x, u, p, -1);
		x->room[p]++;
	}
	x->cur[u] = -1;
}

/* Improves part (a split of T into parts of cnt[p] tasks) by the exact
 * search; ENOMEM or 0. */
static int exact_split(const struct subset *s, int k, const int *cnt,
		       int *part)
{
	int n = s->n;
	int *room = tp__malloc_array((size_t)k + 1, sizeof(int));
	int *order = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *cur = tp__malloc_array((size_t)n + 1, sizeof(int));
	double *vol = tp__calloc((size_t)n + 1, sizeof(double));
	double *conn = tp__calloc((size_t)n * k + 1, sizeof(double));
	double *placed = tp__calloc((size_t)n + 1, sizeof(double));
	int rc = !room || !order || !cur || !vol || !conn || !placed ? TP_ENOMEM : 0;
	if (!rc) {
		memcpy(room, cnt, sizeof(int) * (size_t)k);
		for (int i = 0; i < n; i++) {
			order[i] = i;
			cur[i] = -1;
			for (int j = 0; j < n; j++)
				vol[i] += j != i ? sw(s, i, j) : 0;
		}
		/* heaviest first (insertion sort: n is small), ties by index */
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && vol[order[j]] > vol[order[j - 1]]; j--) {
				int t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		struct xsplit x = { s, n, k, cnt, room, order, cur, part,
				    conn, placed, cut_of(s, part), 0 };
		xsplit_rec(&x, 0, 0);
	}
	free(room);
	free(order);
	free(cur);
	free(vol);
	free(conn);
	free(placed);
	return rc;
}

/* Split the subset into k parts of exactly cnt[p] tasks, few bytes between
 * them; part[i] for its i-th task.  exact: then the bounded exact search. */
static int split_small(const struct subset *s, int k, const int *cnt,
		       bool exact, int *part)
{
	int n = s->n;
	int *alt = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *su = tp__malloc_array((size_t)n + 1, sizeof(int));
	int *sv = tp__malloc_array((size_t)n + 1, sizeof(int));
	char *locked = tp__malloc_array((size_t)n + 1, 1);
	if (!alt || !su || !sv || !locked) {
		free(alt);
		free(su);
		free(sv);
		free(locked);
		return TP_ENOMEM;
	}
	int at = 0;
	for (int p = 0; p < k; p++)
		for (int x = 0; x < cnt[p]; x++)
			part[at++] = p;
	struct kl_work kw = { locked, su, sv };
	kl_refine(s, k, part, &kw);
	grow_parts(s, k, cnt, alt);
	kl_refine(s, k, alt, &kw);
	if (cut_of(s, alt) < cut_of(s, part) - 1e-9 * (cut_of(s, part) + 1))
		memcpy(part, alt, sizeof(int) * (size_t)n);
	free(alt);
	free(su);
	free(sv);
	free(locked);
	return exact ? exact_split(s, k, cnt, part) : 0;
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
					c[(size_t)i * nt + j] = tp__graph_w(g, e);
				} else {
					c[(size_t)i * nt + i] += tp__graph_w(g, e);
				}
			}
		}
	}
	free(key);
	return 0;
}

/* One node's GPU selection problem: the node, the dense local matrix c
 * (nt x nt, each task's traffic to other nodes on the diagonal), gpt GPUs
 * per task, the tasks' sockets pkg (NULL when unknown) and the allowed
 * GPUs al[0..na), sorted. */
struct gsel {
	const tp_node *n;
	const double *c;
	int32_t nt;
	int gpt;
	const int *pkg;
	const int *al;
	int na;
};

/* Scratch of the greedy and the refinement. */
struct gsel_work {
	bool *used;          /* n->ngpus: GPUs taken */
	bool *mapped;        /* nt: tasks placed */
	double *load, *tmp;  /* n->nlinks: link loads */
	double *vol;         /* nt: each task's traffic */
};

/* Task p's traffic to other nodes (the diagonal of c), a share per GPU, on
 * the route from its GPU a to a's network card; returns the weighted cost
 * added.  Nothing on nodes without a card. */
static double add_remote_traffic(const struct gsel *sel, int32_t p, int a,
				 double *load)
{
	const tp_node *n = sel->n;
	double bytes = sel->c[(size_t)p * sel->nt + p];
	if (n->nnics == 0 || bytes <= 0)
		return 0;
	double x = bytes / sel->gpt, bw = 0;
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
static double add_gpu_traffic(const struct gsel *sel, const int *gpus,
			      const bool *mapped, int32_t p, int a, double *load,
			      double *remote_w)
{
	const tp_node *n = sel->n;
	int32_t nt = sel->nt;
	int gpt = sel->gpt;
	double wcost = 0;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t q = 0; q < nt; q++) {
		double w = sel->c[(size_t)p * nt + q];
		if (q == p || w <= 0 || !mapped[q])
			continue;
		for (int k = 0; k < gpt; k++) {
			int b = gpus[(size_t)q * gpt + k];
			if (b < 0)
				continue;
			double x = w * share;
			int pp = a * n->ngpus + b;
			for (int r = n->route_off[pp]; r < n->route_off[pp + 1]; r++)
				load[n->route[r]] += x;
			if (n->pbw[pp] > 0)
				wcost += x / n->pbw[pp];
		}
	}
	*remote_w = add_remote_traffic(sel, p, a, load);
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

/* The cost of the assignment gpus (task-major); load: nlinks scratch. */
static void evaluate(const struct gsel *sel, const int *gpus, double *load,
		     tp_gpusel_cost *cost)
{
	const tp_node *n = sel->n;
	const double *c = sel->c;
	const int *pkg = sel->pkg;
	int32_t nt = sel->nt;
	int gpt = sel->gpt;
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
			rw += add_remote_traffic(sel, p, gpus[(size_t)p * gpt + i],
						 load);
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

static void local_rank(const struct gsel *sel, int *gpus)
{
	for (int32_t i = 0; i < sel->nt; i++)
		for (int k = 0; k < sel->gpt; k++)
			gpus[(size_t)i * sel->gpt + k] = sel->al[(size_t)i * sel->gpt + k];
}

static void closest(const struct gsel *sel, bool *used, int *gpus)
{
	const tp_node *n = sel->n;
	const int *pkg = sel->pkg, *allowed = sel->al;
	int gpt = sel->gpt;
	memset(used, 0, sizeof(bool) * (size_t)n->ngpus);
	for (int32_t i = 0; i < sel->nt; i++)
		for (int k = 0; k < gpt; k++) {
			int pick = -1;
			for (int a = 0; a < sel->na && pick < 0; a++)
				if (!used[allowed[a]] && pkg && pkg[i] >= 0 &&
				    n->gpu[allowed[a]].package == pkg[i])
					pick = allowed[a];
			for (int a = 0; a < sel->na && pick < 0; a++)
				if (!used[allowed[a]])
					pick = allowed[a];
			used[pick] = true;
			gpus[(size_t)i * gpt + k] = pick;
		}
}

/* Best bandwidth from GPU a to a free allowed GPU: what a partner placed
 * next to it could get. */
static double potential(const struct gsel *sel, int a, const bool *used)
{
	const tp_node *n = sel->n;
	double best = 0;
	for (int i = 0; i < sel->na; i++) {
		int b = sel->al[i];
		if (b != a && !used[b] && n->pbw[a * n->ngpus + b] > best)
			best = n->pbw[a * n->ngpus + b];
	}
	return best;
}

/* magc's first move left to the greedy. */
#define FREE_START (-1)

/* One greedy run; first (a GPU, or FREE_START) forces the first task's
 * first GPU. */
static void magc(const struct gsel *sel, struct gsel_work *wk, int first,
		 int *gpus)
{
	const tp_node *n = sel->n;
	const double *c = sel->c;
	const int *pkg = sel->pkg, *allowed = sel->al;
	int32_t nt = sel->nt;
	int gpt = sel->gpt, nallowed = sel->na;
	bool *used = wk->used, *mapped = wk->mapped;
	double *load = wk->load, *tmp = wk->tmp, *vol = wk->vol;
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
				double w = add_gpu_traffic(sel, gpus, mapped, p, a, tmp,
							   &rw);
				double mc = max_cong(n, tmp, NULL);
				double near = 0;
				for (int j = 0; j < k; j++)
					near += n->path[a * n->ngpus + gpus[(size_t)p * gpt + j]];
				double pot = potential(sel, a, used);
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
			add_gpu_traffic(sel, gpus, mapped, p, pick, load, &prw);
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

/* ---- GPU bisection: the tasks split over the node's PCIe tree ----
 *
 * The allowed GPUs are sorted by their path in the node (socket, host
 * bridge, bridges and switches, the GPU), so that every subtree is a run;
 * from the top down the tasks are split over the children of each subtree
 * with split_small, every child taking as many tasks as it holds GPUs
 * (divided by the GPUs per task; the largest first when there are fewer
 * tasks).  Each split keeps heavy traffic inside a subtree, off the links
 * above it: the sockets' link first, then each bridge's uplink (TreeMatch's
 * and Scotch's recursive bisection of a node).  A candidate of tp_gpusel,
 * kept when its congestion is lower. */

#define GPU_LEVELS 32

struct gtree {
	const tp_node *n;
	const double *c;
	int32_t nt;
	int gpt;
	const int *al;       /* allowed GPUs */
	int *path;           /* per allowed GPU: GPU_LEVELS vertices, top first */
	int *plen;
	int *order;          /* positions into al, sorted by path */
	int *gpus;           /* the result, task-major */
	bool exact;          /* the exact search after each heuristic split */
};

static int gkey(const struct gtree *t, int i, int d)
{
	return d < t->plen[i] ? t->path[i * GPU_LEVELS + d] : -1 - t->al[i];
}

static int cmp_gpath(const void *x, const void *y, void *arg)
{
	const struct gtree *t = arg;
	int i = *(const int *)x, j = *(const int *)y;
	for (int d = 0; d < GPU_LEVELS; d++) {
		int a = gkey(t, i, d), b = gkey(t, j, d);
		if (a != b)
			return a < b ? -1 : 1;
	}
	return 0;
}

static int grec(struct gtree *t, int32_t *T, int nT, int lo, int hi, int d);

/* Split T over the k children (runs start[0..k]) of a subtree. */
static int gsplit(struct gtree *t, int32_t *T, int nT, const int *start, int k,
		  int d)
{
	int *cap = tp__malloc_array((size_t)k, sizeof(int));
	int *cnt = tp__calloc((size_t)k, sizeof(int));
	int *used = tp__malloc_array((size_t)k, sizeof(int));
	int *part = tp__malloc_array((size_t)nT + 1, sizeof(int));
	int32_t *sorted = tp__malloc_array((size_t)nT + 1, sizeof(int32_t));
	int rc = !cap || !cnt || !used || !part || !sorted ? TP_ENOMEM : 0;
	int left = nT, ku = 0;
	for (int x = 0; !rc && x < k; x++)
		cap[x] = (start[x + 1] - start[x]) / t->gpt;
	/* fill the largest children first */
	while (!rc && left > 0) {
		int best = -1;
		for (int x = 0; x < k; x++)
			if (!cnt[x] && cap[x] > 0 && (best < 0 || cap[x] > cap[best]))
				best = x;
		if (best < 0) {
			rc = TP_EINVAL;   /* the GPUs are too fragmented */
			break;
		}
		cnt[best] = cap[best] < left ? cap[best] : left;
		left -= cnt[best];
	}
	for (int x = 0; !rc && x < k; x++)
		if (cnt[x])
			used[ku++] = x;
	if (!rc) {
		int *ucnt = cap;   /* the counts of the used children, in order */
		for (int u = 0; u < ku; u++)
			ucnt[u] = cnt[used[u]];
		struct subset sub = { t->c, t->nt, T, nT };
		rc = split_small(&sub, ku, ucnt, t->exact, part);
		int pos = 0;
		for (int u = 0; !rc && u < ku; u++)
			for (int i = 0; i < nT; i++)
				if (part[i] == u)
					sorted[pos++] = T[i];
		for (int u = 0, at = 0; !rc && u < ku; u++) {
			int x = used[u];
			rc = grec(t, sorted + at, ucnt[u], start[x], start[x + 1], d + 1);
			at += ucnt[u];
		}
	}
	free(cap);
	free(cnt);
	free(used);
	free(part);
	free(sorted);
	return rc;
}

static int grec(struct gtree *t, int32_t *T, int nT, int lo, int hi, int d)
{
	if (nT == 0)
		return 0;
	if (nT == 1 && (hi - lo == t->gpt || d >= GPU_LEVELS)) {
		for (int k = 0; k < t->gpt; k++)
			t->gpus[(size_t)T[0] * t->gpt + k] = t->al[t->order[lo + k]];
		return 0;
	}
	if (d >= GPU_LEVELS)
		return TP_EINVAL;
	int k = 1;
	for (int i = lo + 1; i < hi; i++)
		k += gkey(t, t->order[i], d) != gkey(t, t->order[i - 1], d);
	if (k == 1)
		return grec(t, T, nT, lo, hi, d + 1);
	int *start = tp__malloc_array((size_t)k + 1, sizeof(int));
	if (!start)
		return TP_ENOMEM;
	int x = 0;
	start[x++] = lo;
	for (int i = lo + 1; i < hi; i++)
		if (gkey(t, t->order[i], d) != gkey(t, t->order[i - 1], d))
			start[x++] = i;
	start[k] = hi;
	int rc = gsplit(t, T, nT, start, k, d);
	free(start);
	return rc;
}

/* The bisection candidate into gpus (exact: each split by the exact search
 * too); TP_EINVAL when the allowed GPUs are too fragmented for the GPUs per
 * task (then it is not a candidate). */
static int bisect_gpus(const struct gsel *sel, bool exact, int *gpus)
{
	const tp_node *n = sel->n;
	const int *al = sel->al;
	int32_t nt = sel->nt;
	int na = sel->na;
	struct gtree t = { n, sel->c, nt, sel->gpt, al, NULL, NULL, NULL, gpus,
			   exact };
	t.path = tp__malloc_array((size_t)na * GPU_LEVELS + 1, sizeof(int));
	t.plen = tp__malloc_array((size_t)na + 1, sizeof(int));
	t.order = tp__malloc_array((size_t)na + 1, sizeof(int));
	int32_t *T = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	int rc = !t.path || !t.plen || !t.order || !T ? TP_ENOMEM : 0;
	for (int i = 0; !rc && i < na; i++) {
		/* the vertices from the GPU up to its socket, then reversed */
		int len = 0, v = n->gpu[al[i]].vertex, *p = &t.path[i * GPU_LEVELS];
		while (v >= 0 && len < GPU_LEVELS) {
			p[len++] = v;
			v = n->vert[v].parent;
		}
		for (int a = 0, b = len - 1; a < b; a++, b--) {
			int x = p[a];
			p[a] = p[b];
			p[b] = x;
		}
		t.plen[i] = len;
		t.order[i] = i;
	}
	if (!rc) {
		qsort_r(t.order, (size_t)na, sizeof(int), cmp_gpath, &t);
		for (int32_t i = 0; i < nt; i++)
			T[i] = i;
		rc = grec(&t, T, (int)nt, 0, na, 0);
	}
	free(t.path);
	free(t.plen);
	free(t.order);
	free(T);
	return rc;
}

/* ---- refinement of the kept assignment by the exact cost ----
 *
 * The candidates above are built by proxies (the greedy's one-step cost, the
 * bisection's cut); the best of them is then improved by single moves judged
 * by the cost itself: two tasks trade their GPUs, or a one-GPU task moves to
 * a free allowed GPU, when that lowers the maximum congestion, or keeps it
 * and lowers the weighted cost, then the GPUs off their task's socket, then
 * the way to the cards, then the sum of the squared link congestions (so
 * that a move taking load off one of several equally loaded links counts,
 * and the next can lower the maximum).  A task's GPUs stay together (the
 * cost does not see the traffic between them).  A move updates the loads
 * of the moved tasks' traffic only; the work is bounded (REFINE_WORK route
 * steps, about a millisecond).  The result is evaluated afresh and kept
 * only when cost_lt prefers it. */

#define REFINE_WORK 1000000

struct refine {
	const tp_node *n;
	const double *c;
	int32_t nt;
	int gpt;
	const int *pkg;
	int *g;              /* slots, task-major: the assignment */
	double *load;        /* link loads of g */
	double w, rw;        /* weighted cost inside the node, to the cards */
	int misses;
	int64_t work;
};

/* Adds sign x the traffic of slot s (to every slot of the other tasks but
 * task skip, and to the card) to the loads and costs. */
static void slot_traffic(struct refine *r, int s, int32_t skip, double sign)
{
	const tp_node *n = r->n;
	int gpt = r->gpt, a = r->g[s];
	int32_t p = s / gpt;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t q = 0; q < r->nt; q++) {
		/* the upper triangle, as evaluate reads it */
		double b = p < q ? r->c[(size_t)p * r->nt + q]
				 : r->c[(size_t)q * r->nt + p];
		if (q == p || q == skip || b <= 0)
			continue;
		for (int k = 0; k < gpt; k++) {
			int t = q * gpt + k;
			int pp = a * n->ngpus + r->g[t];
			double x = sign * b * share;
			for (int e = n->route_off[pp]; e < n->route_off[pp + 1]; e++)
				r->load[n->route[e]] += x;
			r->work += n->route_off[pp + 1] - n->route_off[pp] + 1;
			if (n->pbw[pp] > 0)
				r->w += x / n->pbw[pp];
		}
	}
	double bytes = r->c[(size_t)p * r->nt + p];
	if (n->nnics > 0 && bytes > 0) {
		double x = sign * bytes / gpt, bw = 0;
		for (int e = n->nic_route_off[a]; e < n->nic_route_off[a + 1]; e++) {
			r->load[n->nic_route[e]] += x;
			double lb = n->link[n->nic_route[e]].bw;
			if (bw == 0 || lb < bw)
				bw = lb;
		}
		if (bw > 0)
			r->rw += x / bw;
	}
	if (r->pkg && r->pkg[p] >= 0 && n->gpu[a].package >= 0 &&
	    n->gpu[a].package != r->pkg[p])
		r->misses += sign > 0 ? 1 : -1;
}

/* The refinement's order: max congestion, weighted cost, socket misses,
 * the way to the cards, the sum of squares. */
struct rkey {
	double mc, w;
	int misses;
	double rw, sq;
};

static struct rkey rkey_of(const struct refine *r)
{
	struct rkey k = { 0, r->w, r->misses, r->rw, 0 };
	for (int l = 0; l < r->n->nlinks; l++) {
		double x = r->load[l] / r->n->link[l].bw;
		k.sq += x * x;
		if (x > k.mc)
			k.mc = x;
	}
	return k;
}

static bool rkey_lt(const struct rkey *a, const struct rkey *b)
{
	if (lt(a->mc, b->mc) || lt(b->mc, a->mc))
		return lt(a->mc, b->mc);
	if (lt(a->w, b->w) || lt(b->w, a->w))
		return lt(a->w, b->w);
	if (a->misses != b->misses)
		return a->misses < b->misses;
	if (lt(a->rw, b->rw) || lt(b->rw, a->rw))
		return lt(a->rw, b->rw);
	return lt(a->sq, b->sq);
}

/* Tasks p and q trade their GPUs (the k-th for the k-th); q < 0: task p
 * (one GPU) moves to the free GPU b. */
static void move_task(struct refine *r, int32_t p, int32_t q, int b)
{
	int gpt = r->gpt;
	for (int k = 0; k < gpt; k++)
		slot_traffic(r, p * gpt + k, -1, -1);
	for (int k = 0; q >= 0 && k < gpt; k++)
		slot_traffic(r, q * gpt + k, p, -1);
	for (int k = 0; k < gpt; k++) {
		int a = r->g[p * gpt + k];
		r->g[p * gpt + k] = q >= 0 ? r->g[q * gpt + k] : b;
		if (q >= 0)
			r->g[q * gpt + k] = a;
	}
	for (int k = 0; k < gpt; k++)
		slot_traffic(r, p * gpt + k, -1, 1);
	for (int k = 0; q >= 0 && k < gpt; k++)
		slot_traffic(r, q * gpt + k, p, 1);
}

/* Improves g in place (see above); the scratch's load, tmp and used. */
static void refine_gpus(const struct gsel *sel, struct gsel_work *wk, int *g)
{
	const tp_node *n = sel->n;
	const int *al = sel->al;
	int32_t nt = sel->nt;
	int gpt = sel->gpt, na = sel->na;
	double *load = wk->load, *saved = wk->tmp;
	bool *used = wk->used;
	tp_gpusel_cost start;
	evaluate(sel, g, load, &start);
	struct refine r = { n, sel->c, nt, gpt, sel->pkg, g, load,
			    start.weighted_ms * 1e6, start.nic_weighted_ms * 1e6,
			    start.socket_misses, 0 };
	int tot = (int)nt * gpt;
	memset(used, 0, sizeof(bool) * (size_t)n->ngpus);
	for (int s = 0; s < tot; s++)
		used[g[s]] = true;
	struct rkey cur = rkey_of(&r);
	bool improved = true;
	/* a task with several GPUs keeps them together: only whole tasks
	 * trade places, and only one-GPU tasks move to free GPUs */
	int nfree = gpt == 1 ? na : 0;
	while (improved && r.work < REFINE_WORK) {
		improved = false;
		for (int32_t p = 0; p < nt && r.work < REFINE_WORK; p++)
			for (int j = 0; j < nt + nfree && r.work < REFINE_WORK; j++) {
				int32_t q = j < nt ? j : -1;
				int b = j < nt ? -1 : al[j - nt], a = g[(size_t)p * gpt];
				if (q >= 0 ? q <= p : used[b])
					continue;
				memcpy(saved, load, sizeof(double) * (size_t)n->nlinks);
				double w = r.w, rw = r.rw;
				int misses = r.misses;
				move_task(&r, p, q, b);
				struct rkey k = rkey_of(&r);
				r.work += n->nlinks;
				if (rkey_lt(&k, &cur)) {
					cur = k;
					improved = true;
					if (q < 0) {
						used[a] = false;
						used[b] = true;
					}
					continue;
				}
				/* undo: the loads as they were, the GPUs back */
				memcpy(load, saved, sizeof(double) * (size_t)n->nlinks);
				r.w = w;
				r.rw = rw;
				r.misses = misses;
				if (q >= 0)
					for (int x = 0; x < gpt; x++) {
						int t = g[(size_t)p * gpt + x];
						g[(size_t)p * gpt + x] = g[(size_t)q * gpt + x];
						g[(size_t)q * gpt + x] = t;
					}
				else
					g[p] = a;
			}
	}
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
	if ((rc = local_matrix(on->g, on->tasks, ntasks, &c, err)))
		return rc;
	double *load = tp__calloc((size_t)n->nlinks + 1, sizeof(double));
	if (!load) {
		free(c);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	tp_gpusel_cost tmp;
	memset(&tmp, 0, sizeof tmp);
	struct gsel sel = { n, c, ntasks, gpus_per_task, NULL, NULL, 0 };
	evaluate(&sel, gpus, load, &tmp);
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
		magc(sel, wk, greedy_first_gpu(sel, start), cd->run);
		evaluate(sel, cd->run, wk->load, &x);
		x.used = TP_GPUSEL_MAGC;
		if (start == 0 || cost_lt(&x, best)) {
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
	int brc = bisect_gpus(sel, true, cd->bisect_exact);
	/* the heuristic splits too: the least cut is not always the least
	 * congestion, and the exact one must not lose what the heuristic
	 * had */
	int hrc = brc ? brc : bisect_gpus(sel, false, cd->bisect_heur);
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
		evaluate(sel, cand[k], wk->load, &x);
		x.used = CANDIDATE_ALGO[k];
		if (cost_lt(&x, best)) {
			*best = x;
			chosen = cand[k];
		}
	}
	memcpy(gpus, chosen, len);
	if (!refine)
		return 0;
	tp_gpusel_cost r;
	memcpy(cd->run, chosen, len);
	refine_gpus(sel, wk, cd->run);
	evaluate(sel, cd->run, wk->load, &r);
	if (cost_lt(&r, best)) {
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
		int brc = bisect_gpus(sel, true, cd->bisect_exact);
		if (brc == TP_ENOMEM)
			return brc;
		if (brc)
			used = TP_GPUSEL_LOCAL_RANK;
		else
			chosen = cd->bisect_exact;
	}
	evaluate(sel, chosen, wk->load, best);
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
	    (rc = local_matrix(rq->on.g, rq->on.tasks, ntasks, &c, err))) {
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
	local_rank(&sel, cd.local_rank);
	closest(&sel, wk.used, cd.closest);
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

/* Pair swaps on the MIMS edge, judged by the true MIMS afterwards (Wu et
 * al.'s fine tuning); *cur and *cut receive the result's MIMS and total
 * inter-socket bytes.  swap: false leaves the assignment as it is. */
static void mims_swaps(const struct ledges *ep, int32_t ntasks, bool swap,
		       int *task_package, double *cur_out, double *cut_out)
{
	const struct ledges e = *ep;
	double cur, cut;
	mims_of(&e, task_package, &cur, &cut);
	for (int64_t it = 0; swap && it < (int64_t)ntasks * ntasks; it++) {
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
	*cur_out = cur;
	*cut_out = cut;
}

/* A second start for phase 2: the same number of tasks on every
 * socket, split by the fewest bytes between sockets (split_small: what
 * TreeMatch's bisection of a node does), then the same swaps.  Pair swaps
 * from consecutive ranks cannot leave a split that cuts every heavy row of
 * a stencil; this one does not make it.  The better of the two, by MIMS
 * then inter-socket bytes, is kept in task_package (ties keep the block
 * start). */
static int bisection_start(const double *c, const struct ledges *e,
			   int32_t ntasks, int S, int *task_package,
			   double *cur, double *cut)
{
	if (S < 2 || ntasks < 3)
		return 0;
	int *cnt = tp__calloc((size_t)S, sizeof(int));
	int *sock = tp__malloc_array((size_t)S, sizeof(int));
	int *part = tp__malloc_array((size_t)ntasks, sizeof(int));
	int32_t *T = tp__malloc_array((size_t)ntasks, sizeof(int32_t));
	int rc = !cnt || !sock || !part || !T ? TP_ENOMEM : 0;
	int k = 0;
	for (int32_t i = 0; !rc && i < ntasks; i++) {
		cnt[task_package[i]]++;
		T[i] = i;
	}
	for (int s = 0; !rc && s < S; s++)
		if (cnt[s])
			sock[k++] = s;
	for (int p = 0; !rc && p < k; p++)
		cnt[p] = cnt[sock[p]];   /* the used sockets' counts, in order */
	if (!rc && k > 1)
		rc = split_small(&(struct subset){ c, ntasks, T, ntasks }, k, cnt,
				 false, part);
	if (!rc && k > 1) {
		for (int32_t i = 0; i < ntasks; i++)
			part[i] = sock[part[i]];
		double m2, c2;
		mims_swaps(e, ntasks, true, part, &m2, &c2);
		if (lt(m2, *cur) || (!lt(*cur, m2) && lt(c2, *cut))) {
			memcpy(task_package, part, sizeof(int) * (size_t)ntasks);
			*cur = m2;
			*cut = c2;
		}
	}
	free(cnt);
	free(sock);
	free(part);
	free(T);
	return rc;
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

int tp_node_place_cpus(const tp_node_tasks *on, int cores_per_task,
		       tp_cpu_slots *slots, tp_error *err)
{
	return tp_node_place_cpus_within(on, NULL, 0, cores_per_task, slots, err);
}

int tp_node_place_cpus_within(const tp_node_tasks *on, const int *cores,
			      int ncores, int cores_per_task,
			      tp_cpu_slots *slots, tp_error *err)
{
	const tp_node *n = on->node;
	const tp_graph *g = on->g;
	const int32_t *tasks = on->tasks;
	int32_t ntasks = on->ntasks;
	int *task_package = slots->task_package, *task_core = slots->task_core;
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
	int64_t nslots = 0;
	for (int s = 0; s < S; s++) {
		cap[s] /= cores_per_task;
		nslots += cap[s];
	}
	struct ledges e;
	memset(&e, 0, sizeof e);
	if (ntasks >= 0 && ntasks > nslots &&
	    (int64_t)ntasks * cores_per_task <= nl) {
		/* tasks wider than a socket: consecutive allowed cores */
		for (int32_t i = 0; i < ntasks; i++) {
			task_core[i] = i * cores_per_task;
			task_package[i] = n->core_pkg[list[task_core[i]]];
		}
		slots->mims = 0;
		if (g && ntasks > 1) {
			double *c = NULL;
			rc = local_matrix(g, tasks, ntasks, &c, err);
			if (!rc)
				rc = ledges_build(c, ntasks, &e, err);
			free(c);
			double cut;
			if (!rc)
				mims_of(&e, task_package, &slots->mims, &cut);
		}
		goto out;
	}
	if (ntasks < 0 || ntasks > nslots) {
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
	if (rc) {
		free(c);
		goto out;
	}
	/* balanced block start: socket s gets a share proportional to its
	 * capacity, consecutive local ranks together */
	int32_t t = 0;
	int64_t left = ntasks;
	int64_t room = nslots;
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
	double cur, cut;
	mims_swaps(&e, ntasks, g != NULL, task_package, &cur, &cut);
	if (g && (rc = bisection_start(c, &e, ntasks, S, task_package, &cur, &cut))) {
		rc = tp_error_set(err, rc, "out of memory");
		free(c);
		goto out;
	}
	free(c);
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
	slots->mims = cur;
out:
	ledges_free(&e);
	free(cap);
	free(next);
	free(list);
	return rc;
}

int tp_node_align_cpus(const tp_node_tasks *on, const int *gpus,
		       int gpus_per_task, tp_cpu_slots *slots, tp_error *err)
{
	const tp_node *n = on->node;
	int32_t ntasks = on->ntasks;
	int *task_package = slots->task_package, *task_core = slots->task_core;
	if (gpus_per_task < 1)
		return tp_error_set(err, TP_EINVAL, "GPUs per task must be at least 1");
	for (int64_t i = 0; i < (int64_t)ntasks * gpus_per_task; i++)
		if (gpus[i] < 0 || gpus[i] >= n->ngpus)
			return tp_error_set(err, TP_EINVAL, "GPU %d outside %s's 0..%d",
					    gpus[i], n->source, n->ngpus - 1);
	double *c = NULL;
	struct ledges e;
	int rc = local_matrix(on->g, on->tasks, ntasks, &c, err);
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
	slots->mims = cur;
	ledges_free(&e);
	return 0;
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
