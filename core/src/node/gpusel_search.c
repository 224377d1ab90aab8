/* topoplace — the candidate assignments tp_gpusel compares for one node:
 * local-rank order, the closest GPUs, the MAGC greedy, the bisection over
 * the node's PCIe tree, and the refinement of the kept one by single moves
 * judged by the exact cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_place.h"

void tp__gpusel_local_rank(const struct gsel *sel, int *gpus)
{
	for (int32_t i = 0; i < sel->nt; i++)
		for (int k = 0; k < sel->gpt; k++)
			gpus[(size_t)i * sel->gpt + k] = sel->al[(size_t)i * sel->gpt + k];
}

void tp__gpusel_closest(const struct gsel *sel, bool *used, int *gpus)
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

/* One greedy run; first (a GPU, or FREE_START) forces the first task's
 * first GPU. */
void tp__gpusel_magc(const struct gsel *sel, struct gsel_work *wk, int first,
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
				if (p < 0 || tp__node_lt(best, d)) {
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
				double w = tp__gpusel_add_gpu_traffic(sel, gpus, mapped, p, a, tmp,
								      &rw);
				double mc = tp__gpusel_max_cong(n, tmp, NULL);
				double near = 0;
				for (int j = 0; j < k; j++)
					near += n->path[a * n->ngpus + gpus[(size_t)p * gpt + j]];
				double pot = potential(sel, a, used);
				int sock = pkg && pkg[p] >= 0 && n->gpu[a].package != pkg[p];
				/* lexicographic: congestion, weighted cost, closeness
				 * to the task's other GPUs, potential, socket, the
				 * way to the network card */
				int order = pick < 0 ? -1 : tp__node_lt(mc, bc) ? -1 : tp__node_lt(bc, mc) ? 1
					  : tp__node_lt(w, bw) ? -1 : tp__node_lt(bw, w) ? 1
					  : near < bnear ? -1 : near > bnear ? 1
					  : tp__node_lt(bpot, pot) ? -1 : tp__node_lt(pot, bpot) ? 1
					  : sock < bsock ? -1 : sock > bsock ? 1
					  : tp__node_lt(rw, brw) ? -1 : 1;
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
			tp__gpusel_add_gpu_traffic(sel, gpus, mapped, p, pick, load, &prw);
			used[pick] = true;
			gpus[(size_t)p * gpt + k] = pick;
		}
		mapped[p] = true;
	}
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
		rc = tp__node_split_small(&sub, ku, ucnt, t->exact, part);
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
int tp__gpusel_bisect_gpus(const struct gsel *sel, bool exact, int *gpus)
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
	if (tp__node_lt(a->mc, b->mc) || tp__node_lt(b->mc, a->mc))
		return tp__node_lt(a->mc, b->mc);
	if (tp__node_lt(a->w, b->w) || tp__node_lt(b->w, a->w))
		return tp__node_lt(a->w, b->w);
	if (a->misses != b->misses)
		return a->misses < b->misses;
	if (tp__node_lt(a->rw, b->rw) || tp__node_lt(b->rw, a->rw))
		return tp__node_lt(a->rw, b->rw);
	return tp__node_lt(a->sq, b->sq);
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
void tp__gpusel_refine_gpus(const struct gsel *sel, struct gsel_work *wk, int *g)
{
	const tp_node *n = sel->n;
	const int *al = sel->al;
	int32_t nt = sel->nt;
	int gpt = sel->gpt, na = sel->na;
	double *load = wk->load, *saved = wk->tmp;
	bool *used = wk->used;
	tp_gpusel_cost start;
	tp__gpusel_evaluate(sel, g, load, &start);
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
