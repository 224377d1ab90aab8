/* topoplace — the training job's own candidate (--parallel): whole tensor
 * parallel groups on a node, whole pipeline stages in one NVLink domain (a
 * block network's block, a tree's leaf switch: the network's innermost
 * group), the same layout in every stage so that DP and PP peers sit at the
 * same local slot of their nodes (the same rail once each node's GPUs are
 * chosen rail by rail).
 *
 * The nodes are sorted by their path in the hierarchy (network.h), so that
 * each innermost group is a run; without a hierarchy all are one group in
 * Slurm's order.  Stage by stage (pp ascending), the stage's ranks in the
 * order dp, ep, cp, tp (tp fastest) go to the fewest groups that hold
 * the whole stage, consecutive in path order (one where one can: best fit,
 * the least room left over; then the nearest to the previous stage).  The
 * second variant (TP__PARMAP_PATH) fills the stages one after the other in
 * path order, and the job keeps the faster.  A stage larger than any group spans several
 * whatever the order, and then every pipeline send crosses between them,
 * where a data-parallel ring crosses only where it leaves a group: the
 * third variant (TP__PARMAP_REPLICA) packs data-parallel replicas (every
 * stage of one) instead of stages, the same way.  The fourth
 * (TP__PARMAP_FULLEST) fills the stages one after the other over the
 * groups with the most free slots first, as Kueue's topology-aware
 * scheduling ranks by domain: the fewest groups split, and consecutive
 * stages share the group between them, so that a pipeline send crosses
 * the network only there (a rail-optimised tree's scalable units: best fit
 * gives each stage a unit of its own and every send crosses the spine).
 * Inside the chosen nodes a
 * tensor-parallel group goes to the first node with room for all of it,
 * else rank by rank.  Linear in tasks and nodes but for the sort and the
 * best-fit scan (groups x stages).  The job judges it against the others
 * by the predicted step time (job_map.c).
 *
 * The step time (tp__parallel_predict): the phases of a step run one after
 * the other (tensor-parallel all-reduces inside each layer, pipeline sends
 * between micro-batches, the gradient all-reduce at its end), so it is the
 * sum of each kind's exchange under the time model (an MoE step's two
 * gradient all-reduces, dense and experts', two phases), not one exchange of
 * them all: at once, the longest phase (tensor parallel, inside the nodes)
 * would hide every other and make every placement look the same.  The
 * per-layer kinds and the stage sends are timed stage by stage, as a
 * pipeline runs them (tp__parallel_predict).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <topoplace/metrics.h>

#include "pattern/pattern_internal.h"
#include "util/util_internal.h"
#include "map/hpaths.h"
#include "map/parmap.h"
#include "map/predict_internal.h"
#include "net/network.h"
#include "input/alloc_internal.h"

struct pm {
	const tp_alloc *a;
	int64_t *path;       /* nnodes x depth */
	int *plen;
	int depth;
	int32_t *order;      /* allocation indices by path */
	int *free;           /* free slots, by allocation index */
	int32_t *grp;        /* path position -> innermost group */
	int64_t *gfree;      /* free slots of each group */
};

static int cmp_path(const void *x, const void *y, void *arg)
{
	const struct pm *h = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	for (int d = 0; d < h->depth; d++) {
		int64_t a = d < h->plen[i] ? h->path[(size_t)i * (size_t)h->depth + (size_t)d] : -1;
		int64_t b = d < h->plen[j] ? h->path[(size_t)j * (size_t)h->depth + (size_t)d] : -1;
		if (a != b)
			return a < b ? -1 : 1;
	}
	return (i > j) - (i < j);
}

struct grp_room {
	int32_t g;
	int64_t free;
};

static int cmp_fullest(const void *x, const void *y)
{
	const struct grp_room *a = x, *b = y;
	if (a->free != b->free)
		return a->free > b->free ? -1 : 1;
	return (a->g > b->g) - (a->g < b->g);
}

/* The path positions regrouped: the groups with the most free slots first
 * (ties in path order), each group's nodes in path order (h->order and
 * h->grp permuted alike; a group keeps its index).  TP_ENOMEM or TP_OK. */
static int fullest_first(struct pm *h, int32_t ng, const int32_t *gstart)
{
	int32_t nn = h->a->nnodes;
	struct grp_room *gr = tp__malloc_array((size_t)ng + 1, sizeof *gr);
	int32_t *order = tp__malloc_array((size_t)nn + 1, sizeof *order);
	int32_t *grp = tp__malloc_array((size_t)nn + 1, sizeof *grp);
	if (!gr || !order || !grp) {
		free(gr);
		free(order);
		free(grp);
		return TP_ENOMEM;
	}
	for (int32_t g = 0; g < ng; g++)
		gr[g] = (struct grp_room){ g, h->gfree[g] };
	qsort(gr, (size_t)ng, sizeof *gr, cmp_fullest);
	int32_t at = 0;
	for (int32_t i = 0; i < ng; i++)
		for (int32_t k = gstart[gr[i].g]; k < gstart[gr[i].g + 1]; k++) {
			order[at] = h->order[k];
			grp[at++] = gr[i].g;
		}
	free(gr);
	free(h->order);
	free(h->grp);
	h->order = order;
	h->grp = grp;
	return TP_OK;
}

static bool same_group(const struct pm *h, int32_t i, int32_t j)
{
	if (h->plen[i] != h->plen[j])
		return false;
	if (!h->path)   /* no hierarchy: one group */
		return true;
	return !memcmp(&h->path[(size_t)i * (size_t)h->depth],
		       &h->path[(size_t)j * (size_t)h->depth],
		       sizeof(int64_t) * (size_t)h->plen[i]);
}

static int paths(struct pm *h)
{
	const tp_alloc *a = h->a;
	const tp_machine *m = a->m;
	int32_t nn = a->nnodes;
	h->order = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	h->free = tp__malloc_array((size_t)nn + 1, sizeof(int));
	h->plen = tp__malloc_array((size_t)nn + 1, sizeof(int));
	if (!h->order || !h->free || !h->plen)
		return TP_ENOMEM;
	for (int32_t i = 0; i < nn; i++) {
		h->order[i] = i;
		h->free[i] = a->slots[i];
		h->plen[i] = 0;
	}
	h->depth = 1;
	if (!tp_machine_has(m, TP_CAP_HIERARCHY) || !m->net->hierarchy)
		return 0;   /* one group, Slurm's order */
	free(h->plen);
	h->plen = NULL;
	struct tp__hpaths hp;
	int rc = tp__hpaths_collect(a, &hp);
	if (rc)
		return rc;
	h->path = hp.path;
	h->plen = hp.plen;
	h->depth = hp.depth;
	qsort_r(h->order, (size_t)nn, sizeof(int32_t), cmp_path, h);
	return 0;
}

/* Take one slot of the node at path position k. */
static void take(struct pm *h, int32_t k, int32_t rank, int32_t *map)
{
	int32_t nd = h->order[k];
	map[rank] = nd;
	h->free[nd]--;
	h->gfree[h->grp[k]]--;
}

/* ranks[0..n-1] (tensor-parallel groups of tp, consecutive) onto the nodes
 * at path positions lo..hi-1: a group whole on the first node with room for
 * it, else (a group larger than a node's free slots) rank by rank on the
 * nodes of the first network group with room for all of it, else rank by
 * rank in path order.  Returns how many it placed: fewer than n only when
 * lo..hi has no room left for them. */
static int64_t fill(struct pm *h, const int32_t *ranks, int64_t n, int64_t tp,
		    int32_t lo, int32_t hi, const bool *gok, int32_t *map)
{
	int64_t at = 0;
	while (at < n) {
		int64_t chunk = n - at < tp ? n - at : tp;
		int32_t whole = -1;
		for (int32_t k = lo; k < hi && whole < 0; k++)
			if (h->free[h->order[k]] >= chunk && (!gok || gok[h->grp[k]]))
				whole = k;
		if (whole >= 0) {
			for (int64_t i = 0; i < chunk; i++)
				take(h, whole, ranks[at++], map);
			continue;
		}
		int32_t from = lo;
		for (int32_t k = lo; k < hi; k++)
			if (h->gfree[h->grp[k]] >= chunk && (!gok || gok[h->grp[k]])) {
				from = k;
				break;
			}
		for (int32_t k = from; k < hi && chunk > 0; k++)
			while (h->free[h->order[k]] > 0 && chunk > 0 &&
			       (!gok || gok[h->grp[k]])) {
				take(h, k, ranks[at++], map);
				chunk--;
			}
		for (int32_t k = lo; k < from && chunk > 0; k++)
			while (h->free[h->order[k]] > 0 && chunk > 0 &&
			       (!gok || gok[h->grp[k]])) {
				take(h, k, ranks[at++], map);
				chunk--;
			}
		if (chunk > 0)
			return at;   /* no room left in lo..hi */
	}
	return at;
}

/* The groups [*lo, *hi) a unit of S ranks goes to: the fewest groups with
 * free slots, consecutive in path order (neighbours share the switches
 * above them), that hold it; among those the least room left over (best
 * fit: one group when one holds it), then the nearest to the previous
 * unit's (prev), then the first.  Groups without free slots inside the run
 * are passed over and not counted. */
static void window(const struct pm *h, int32_t ng, int64_t S, int32_t prev,
		   int32_t *lo, int32_t *hi)
{
	int32_t best_n = 0, best_lo = 0, best_hi = ng;
	int64_t best_waste = 0, best_far = 0;
	for (int32_t g = 0; g < ng; g++) {
		if (h->gfree[g] == 0)
			continue;
		int64_t sum = 0;
		int32_t n = 0, e = g;
		while (e < ng && sum < S) {
			if (h->gfree[e] > 0)
				n++;
			sum += h->gfree[e++];
		}
		if (sum < S)
			break;   /* nor from any later start */
		int64_t waste = sum - S, far = g > prev ? g - prev : prev - g;
		if (best_n == 0 || n < best_n ||
		    (n == best_n && (waste < best_waste ||
				     (waste == best_waste && far < best_far)))) {
			best_n = n;
			best_lo = g;
			best_hi = e;
			best_waste = waste;
			best_far = far;
		}
	}
	*lo = best_lo;
	*hi = best_hi;
}

/* The ranks of unit u (of kind unit: its index u), the kinds inner[0..3]
 * inside it, the last fastest. */
static void unit_ranks(const tp__parallel *p, int unit, const int *inner,
		       int64_t u, int64_t S, int32_t *ranks)
{
	for (int64_t i = 0; i < S; i++) {
		int64_t rest = i, rank = u * p->stride[unit];
		for (int k = 3; k >= 0; k--) {
			int kind = inner[k];
			rank += rest % p->size[kind] * p->stride[kind];
			rest /= p->size[kind];
		}
		ranks[i] = (int32_t)rank;
	}
}

int tp__parallel_map(const tp__parallel *p, const tp_alloc *a, int variant,
		     int32_t *map, tp_error *err)
{
	if (p->ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL, "parallel: %lld tasks, %lld "
				    "slots", (long long)p->ntasks,
				    (long long)a->total_slots);
	struct pm h = { .a = a };
	int32_t nn = a->nnodes;
	/* the unit packed into a group: a pipeline stage, or with
	 * TP__PARMAP_REPLICA a data-parallel replica (all its stages); inside
	 * it the other kinds, slowest first, tp last */
	static const int STAGE_INNER[4] = { TP__PAR_DP, TP__PAR_EP, TP__PAR_CP, TP__PAR_TP };
	static const int REPLICA_INNER[4] = { TP__PAR_PP, TP__PAR_EP, TP__PAR_CP, TP__PAR_TP };
	int unit = variant == TP__PARMAP_REPLICA ? TP__PAR_DP : TP__PAR_PP;
	const int *INNER = variant == TP__PARMAP_REPLICA ? REPLICA_INNER : STAGE_INNER;
	int64_t pp = p->size[unit], S = p->ntasks / pp;
	int32_t *wlo = NULL, *whi = NULL, *ugrp = NULL;
	int64_t *uoff = NULL, *wun = NULL;
	bool *gok = NULL;
	int32_t *ranks = tp__malloc_array((size_t)S + 1, sizeof(int32_t));
	int32_t *gstart = tp__malloc_array((size_t)nn + 2, sizeof(int32_t));
	int rc = ranks && gstart ? paths(&h) : TP_ENOMEM;
	if (rc) {
		rc = tp_error_set(err, rc, rc == TP_ENOMEM ? "out of memory"
				  : "parallel: the network's hierarchy failed");
		goto out;
	}
	/* the innermost groups: runs of one path */
	int32_t ng = 0;
	for (int32_t k = 0; k < nn; k++)
		if (k == 0 || !same_group(&h, h.order[k - 1], h.order[k]))
			gstart[ng++] = k;
	gstart[ng] = nn;
	h.grp = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	h.gfree = tp__malloc_array((size_t)ng + 1, sizeof(int64_t));
	if (!h.grp || !h.gfree) {
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t g = 0; g < ng; g++) {
		h.gfree[g] = 0;
		for (int32_t k = gstart[g]; k < gstart[g + 1]; k++) {
			h.grp[k] = g;
			h.gfree[g] += h.free[h.order[k]];
		}
	}
	int64_t tp = p->size[TP__PAR_TP];
	if (variant == TP__PARMAP_FULLEST && fullest_first(&h, ng, gstart)) {
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	if (variant == TP__PARMAP_PATH || variant == TP__PARMAP_FULLEST) {
		for (int64_t u = 0; u < pp; u++) {
			unit_ranks(p, unit, INNER, u, S, ranks);
			fill(&h, ranks, S, tp, 0, nn, NULL, map);
		}
		goto out;
	}
	/* the windows first, on a copy of the free slots, unit by unit; then
	 * the units in the windows' path order, so that consecutive stages
	 * sit in neighbouring groups; what a window cannot hold then (the
	 * order changed who takes a shared group first) goes in path order */
	wlo = tp__malloc_array((size_t)pp + 1, sizeof(int32_t));
	whi = tp__malloc_array((size_t)pp + 1, sizeof(int32_t));
	int *free0 = tp__malloc_array((size_t)nn + 1, sizeof(int));
	int64_t *gfree0 = tp__malloc_array((size_t)ng + 1, sizeof(int64_t));
	if (!wlo || !whi || !free0 || !gfree0) {
		free(free0);
		free(gfree0);
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(free0, h.free, sizeof(int) * (size_t)nn);
	memcpy(gfree0, h.gfree, sizeof(int64_t) * (size_t)ng);
	/* the groups of each window that had room when it was chosen: a
	 * window may run over a group another unit had filled, and in the
	 * second pass, in another order, that group is still free: the unit
	 * must not take it (the other unit's window holds it) */
	uoff = tp__malloc_array((size_t)pp + 2, sizeof(int64_t));
	gok = tp__calloc((size_t)ng + 1, sizeof(bool));
	if (!uoff || !gok) {
		free(free0);
		free(gfree0);
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	int64_t nug = 0, cap = 0;
	int32_t prev = 0;   /* the previous unit's first group */
	for (int64_t u = 0; u < pp; u++) {
		unit_ranks(p, unit, INNER, u, S, ranks);
		window(&h, ng, S, prev, &wlo[u], &whi[u]);
		uoff[u] = nug;
		for (int32_t g = wlo[u]; g < whi[u]; g++) {
			if (h.gfree[g] == 0)
				continue;
			if (nug == cap) {
				cap = cap ? 2 * cap : 64;
				int32_t *t = realloc(ugrp, (size_t)cap * sizeof *t);
				if (!t) {
					free(free0);
					free(gfree0);
					rc = tp_error_set(err, TP_ENOMEM, "out of memory");
					goto out;
				}
				ugrp = t;
			}
			ugrp[nug++] = g;
		}
		fill(&h, ranks, S, tp, gstart[wlo[u]], gstart[whi[u]], NULL, map);
		prev = wlo[u];
	}
	uoff[pp] = nug;
	memcpy(h.free, free0, sizeof(int) * (size_t)nn);
	memcpy(h.gfree, gfree0, sizeof(int64_t) * (size_t)ng);
	free(free0);
	free(gfree0);
	/* windows by their first group (insertion sort: stable, and the
	 * windows come nearly in order); wun[] the unit whose window it was */
	wun = tp__malloc_array((size_t)pp + 1, sizeof(int64_t));
	if (!wun) {
		rc = tp_error_set(err, TP_ENOMEM, "out of memory");
		goto out;
	}
	for (int64_t u = 0; u < pp; u++)
		wun[u] = u;
	for (int64_t u = 1; u < pp; u++) {
		int32_t l = wlo[u], e = whi[u];
		int64_t w = wun[u], v = u;
		for (; v > 0 && wlo[v - 1] > l; v--) {
			wlo[v] = wlo[v - 1];
			whi[v] = whi[v - 1];
			wun[v] = wun[v - 1];
		}
		wlo[v] = l;
		whi[v] = e;
		wun[v] = w;
	}
	for (int64_t u = 0; u < pp; u++) {
		unit_ranks(p, unit, INNER, u, S, ranks);
		for (int64_t i = uoff[wun[u]]; i < uoff[wun[u] + 1]; i++)
			gok[ugrp[i]] = true;
		int64_t done = fill(&h, ranks, S, tp, gstart[wlo[u]], gstart[whi[u]],
				    gok, map);
		for (int64_t i = uoff[wun[u]]; i < uoff[wun[u] + 1]; i++)
			gok[ugrp[i]] = false;
		if (done < S)
			fill(&h, ranks + done, S - done, tp, 0, nn, NULL, map);
	}
out:
	free(wlo);
	free(whi);
	free(ugrp);
	free(uoff);
	free(wun);
	free(gok);
	free(ranks);
	free(gstart);
	free(h.order);
	free(h.free);
	free(h.plen);
	free(h.path);
	free(h.grp);
	free(h.gfree);
	return rc;
}

/* Has the TP group whose first member is r a member on another node than
 * r's (h NULL), or in another innermost group of the network (h)? */
static bool tp_group_apart(const tp__parallel *p, const int32_t *map, int64_t r,
			   const struct pm *h)
{
	int64_t ts = p->stride[TP__PAR_TP];
	for (int64_t j = 1; j < p->size[TP__PAR_TP]; j++) {
		int32_t n = map[r + j * ts];
		if (h ? !same_group(h, map[r], n) : n != map[r])
			return true;
	}
	return false;
}

/* The innermost groups of a's nodes into h (paths held by hp, to free
 * with tp__hpaths_free); false, hp empty, without a hierarchy. */
static bool groups_of(const tp_alloc *a, struct pm *h, struct tp__hpaths *hp,
		      int *rc)
{
	*rc = TP_OK;
	memset(hp, 0, sizeof *hp);
	if (!tp_machine_has(a->m, TP_CAP_HIERARCHY) || !a->m->net->hierarchy ||
	    (*rc = tp__hpaths_collect(a, hp)))
		return false;
	*h = (struct pm){ .a = a, .path = hp->path, .plen = hp->plen, .depth = hp->depth };
	return true;
}

int tp__parallel_splits(const tp__parallel *p, const tp_alloc *a,
			const int32_t *map, int64_t *tp_split,
			int64_t *pp_split)
{
	*tp_split = *pp_split = 0;
	int64_t ps = p->stride[TP__PAR_PP];
	for (int64_t r = 0; r < p->ntasks; r++)
		if (!tp__parallel_coord(p, r, TP__PAR_TP))   /* a group's first */
			*tp_split += tp_group_apart(p, map, r, NULL);
	/* stages split over NVLink domains: a rail-optimised tree's leaf is a
	 * scalable unit of rail switches, not one (its ties went to fewer
	 * units split and simulated up to 5 % slower: simgrid-train.sh's rail
	 * seeds 227734, 686805) */
	if (tp__machine_rail_planes(a->m))
		return TP_OK;
	struct pm h;
	struct tp__hpaths hp;
	int rc;
	if (!groups_of(a, &h, &hp, &rc))
		return rc;
	/* a stage's ranks: those of one pp coordinate, the stride's runs */
	int64_t pp = p->size[TP__PAR_PP], inner = ps;
	int64_t outer = p->ntasks / (ps * pp);
	for (int64_t st = 0; st < pp; st++) {
		int32_t first = map[st * ps];
		bool split = false;
		for (int64_t o = 0; o < outer && !split; o++)
			for (int64_t i = 0; i < inner && !split; i++)
				split = !same_group(&h, first,
						    map[o * ps * pp + st * ps + i]);
		*pp_split += split;
	}
	tp__hpaths_free(&hp);
	return TP_OK;
}

int tp__parallel_tp_spread(const tp__parallel *p, const tp_alloc *a,
			   const int32_t *map, int64_t *groups,
			   int64_t *over_nodes, int64_t *over_groups)
{
	*groups = *over_nodes = *over_groups = 0;
	struct pm h;
	struct tp__hpaths hp;
	int rc;
	bool hier = groups_of(a, &h, &hp, &rc);
	for (int64_t r = 0; !rc && r < p->ntasks; r++) {
		if (tp__parallel_coord(p, r, TP__PAR_TP))
			continue;
		++*groups;
		if (tp_group_apart(p, map, r, NULL)) {
			++*over_nodes;
			*over_groups += hier && tp_group_apart(p, map, r, &h);
		}
	}
	if (hier)
		tp__hpaths_free(&hp);
	return rc;
}

/* Lanes crossed by a phase filled in full under a budget: a 4,096-rank
 * step's ring phase crosses about 50,000 and takes milliseconds. */
#define TP__PAR_FULL_WORK ((int64_t)1 << 18)

static void add_phase(tp_prediction *sum, const tp_prediction *k)
{
	sum->exchange_us += k->exchange_us;
	sum->bound_us += k->bound_us;
	sum->messages += k->messages;
	sum->flows += k->flows;
	if (k->links > sum->links)
		sum->links = k->links;
	sum->rounds += k->rounds;
	sum->bound_only |= k->bound_only;
}

/* One graph's exchange under the time model (mode as tp__parallel_predict);
 * an empty graph takes no time. */
static int one_graph(const tp__parallel *p, const tp_alloc *a,
		     const int32_t *map, unsigned kinds, uint64_t stages,
		     int64_t ep_step, int mode, tp_prediction *pk,
		     double *task_end, tp_error *err)
{
	if (task_end)
		for (int64_t t = 0; t < p->ntasks; t++)
			task_end[t] = 0;
	memset(pk, 0, sizeof *pk);
	tp_graph *g = NULL;
	int rc = tp__parallel_graph_stages(p, map, kinds, stages, ep_step, &g, err);
	if (rc)
		return rc;
	if (g->nedges == 0) {
		tp_graph_destroy(g);
		return 0;
	}
	/* a phase small enough is filled in full even under a budget (the
	 * rounds' limit would leave only its bound, and bounds alike hide
	 * the difference between placements) */
	if (mode == TP__PAR_PREDICT_BUDGET &&
	    tp__predict_work(g, a) <= TP__PAR_FULL_WORK)
		mode = TP__PAR_PREDICT_LAUNCH;
	if (task_end) {
		if (tp__predict_launch_tasks(g, a, map, mode == TP__PAR_PREDICT_BUDGET,
					     pk, task_end))
			rc = tp_error_set(err, TP_ENOMEM, "parallel: the step's "
					  "time could not be predicted");
	} else if (mode == TP__PAR_PREDICT_FULL)
		rc = tp_predict_exchange(g, a, map, pk, err);
	else if (tp__predict_launch(g, a, map, mode == TP__PAR_PREDICT_BUDGET, pk))
		rc = tp_error_set(err, TP_ENOMEM, "parallel: the step's time "
				  "could not be predicted");
	tp_graph_destroy(g);
	return rc;
}

/* Each replica's end (rep[r], r the dp coordinate) from its tasks' ends;
 * returns the slowest replica's. */
static double replica_ends(const tp__parallel *p, const double *end, double *rep)
{
	double most = 0;
	for (int64_t r = 0; r < p->size[TP__PAR_DP]; r++)
		rep[r] = 0;
	for (int64_t t = 0; t < p->ntasks; t++) {
		int64_t r = tp__parallel_coord(p, t, TP__PAR_DP);
		rep[r] = fmax(rep[r], end[t]);
		most = fmax(most, end[t]);
	}
	return most;
}

/* One phase's exchange.  The experts' all-to-all alone is the pairwise
 * exchange, its ep - 1 steps one after another, as MPI libraries run a
 * large all-to-all (and train_step.c does): a step's bottleneck does not
 * wait for another's.  Timed as every pair at once, two EP groups
 * split over the same two leaves looked no slower than one, since a lone
 * node's card, sending to its three peers at once, was as slow as the
 * cable both groups share; in SMPI the groups met on that cable in two of
 * the three steps (NVL72 with a card a GPU, seed 554138 of
 * simgrid-train.sh --draw runs: the fourth stage of the Kueue-like order
 * alone, 1,007 us predicted, 1,688 simulated; the steps summed give
 * 1,679, and the other stages of it and of Slurm's order are within 1 %
 * but one inside its racks, 57 us against 61).  rep (NULL: not wanted;
 * else 2 dp doubles, end ntasks doubles): each replica's
 * share into rep[r] (r: the dp coordinate), when the last message between
 * nodes of its ranks ends, all replicas exchanging at once; a step of the
 * all-to-all ends with its slowest message.  A phase without messages
 * between nodes gives every replica the phase's time. */
static int one_phase_set(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, unsigned kinds, uint64_t stages,
			 int mode, tp_prediction *pk, double *end, double *rep,
			 tp_error *err)
{
	int64_t ep = p->size[TP__PAR_EP], dp = p->size[TP__PAR_DP];
	int64_t steps = kinds == 1u << TP__PAR_EP && ep >= 3 ? ep - 1 : 1;
	memset(pk, 0, sizeof *pk);
	for (int64_t r = 0; rep && r < dp; r++)
		rep[r] = 0;
	double step_rep_max = 0;
	for (int64_t d = 1; d <= steps; d++) {
		tp_prediction ps;
		int rc = one_graph(p, a, map, kinds, stages, steps > 1 ? d : 0, mode,
				   &ps, rep ? end : NULL, err);
		if (rc)
			return rc;
		add_phase(pk, &ps);
		if (!rep)
			continue;
		/* this step's end for each replica, added to the replica's */
		double *cur = rep + dp;
		step_rep_max = fmax(step_rep_max, replica_ends(p, end, cur));
		for (int64_t r = 0; r < dp; r++)
			rep[r] += cur[r];
	}
	if (rep && !(step_rep_max > 0))
		for (int64_t r = 0; r < dp; r++)
			rep[r] = pk->exchange_us;
	return 0;
}

/* Per-layer kind k over pp (<= TP__PAR_STAGES_TIMED) stages: M
 * micro-batches through each replica's pipeline, the first passing every
 * stage once, the other M - 1 following at the pace of its slowest stage:
 * (sum of T_s + (M - 1) max T_s) / M, T_s the replica's share of stage
 * s's exchange of the whole step's volume (one_phase_set); the step's
 * is the slowest replica's.  Replicas meet only in the gradients'
 * all-reduce, so each runs its pipeline at its own pace: the slowest
 * group of each stage taken over all replicas was high wherever those
 * groups were in different replicas (NVL72
 * seeds 188334 and 437346 of simgrid-train.sh: Slurm's order's EP 2,045
 * us, SMPI 1,586 and 1,581).  Each replica timed alone matched there
 * (1,569) but missed where two replicas' groups share a cable (554138
 * with a card a GPU, --draw runs): one_phase_set times them at once.
 * *pk: the stages' sums; its bound the old formula's, never above the
 * time. */
static int replica_pipelines(const tp__parallel *p, const tp_alloc *a,
			     const int32_t *map, int k, int mode, double M,
			     tp_prediction *pk, tp_error *err)
{
	int64_t pp = p->size[TP__PAR_PP], dp = p->size[TP__PAR_DP];
	double *end = tp__malloc_array((size_t)p->ntasks + 1, sizeof *end);
	/* rep: per stage, per replica; then one replica's step ends */
	double *rep = tp__malloc_array((size_t)((pp + 1) * dp) + 1, sizeof *rep);
	memset(pk, 0, sizeof *pk);
	if (!end || !rep) {
		free(end);
		free(rep);
		return tp_error_set(err, TP_ENOMEM, "parallel: out of memory");
	}
	int rc = 0;
	double bsum = 0, bmost = 0;
	for (int64_t st = 0; st < pp && !rc; st++) {
		tp_prediction ps;
		rc = one_phase_set(p, a, map, 1u << k, (uint64_t)1 << st, mode, &ps,
				   end, rep + st * dp, err);
		if (rc)
			break;
		bsum += ps.bound_us;
		bmost = fmax(bmost, ps.bound_us);
		double ex = pk->exchange_us, bd = pk->bound_us;
		add_phase(pk, &ps);
		pk->exchange_us = ex;
		pk->bound_us = bd;
	}
	if (!rc) {
		double slowest = 0;
		for (int64_t r = 0; r < dp; r++) {
			double sum = 0, most = 0;
			for (int64_t st = 0; st < pp; st++) {
				sum += rep[st * dp + r];
				most = fmax(most, rep[st * dp + r]);
			}
			slowest = fmax(slowest, (sum + (M - 1) * most) / M);
		}
		pk->exchange_us = slowest;
		pk->bound_us = fmin((bsum + (M - 1) * bmost) / M, slowest);
	}
	free(end);
	free(rep);
	return rc;
}

/* Every stage's exchange of kinds at once. */
static int one_phase(const tp__parallel *p, const tp_alloc *a,
		     const int32_t *map, unsigned kinds, int mode,
		     tp_prediction *pk, tp_error *err)
{
	return one_phase_set(p, a, map, kinds, 0, mode, pk, NULL, NULL, err);
}

/* Stages timed one by one up to this many; beyond, the pipeline's factor
 * on the phase of all stages at once (the launch budget). */
#define TP__PAR_STAGES_TIMED 32

/* The pipeline's sends one way (k: TP__PAR_PP_FWD or _PP_BWD), as GPipe
 * runs them with blocking sends: a stage receives a micro-batch, sends it
 * on, and only then receives the next, so neighbouring boundaries never
 * send at once and boundaries two apart do.  Micro-batch m crosses the
 * boundary at position q (counted in the sends' direction) in wave
 * 2m + q; a wave takes the exchange of the boundaries in it at once, each
 * with one micro-batch's share of the step's volume.  On five rail
 * allocations of simgrid-train.sh (seeds 435394-401, the pipeline alone,
 * M = 2 as the bench runs it) the waves in step were SMPI's time to 0.1 %
 * for 8 of 9 orders.  Each boundary timed alone, (sum + (M - 1) max) / M,
 * was 670 to 1,000 us short and saw no two boundaries meet.
 *
 * Each replica runs its own pipeline (its ranks of a stage meet in every
 * layer's TP, CP and EP exchanges, the replicas only in the gradients'
 * all-reduce), so a replica waits for its own sends, not for the slowest
 * send of every wave: its message (m, q) lasts as long as its slowest
 * send in that wave, and the replica's end is its longest chain of
 * messages (replicas_end).  With every wave as long as its slowest send,
 * NVL72 seed 60739 of simgrid-train.sh --draw runs had Slurm's order's
 * forward sends at 1,511 us (two replicas slowed on a cable at boundary 1,
 * two others at boundary 2: four slow waves of five), SMPI 1,176, and an
 * order predicted 4 % faster by them ran 1.14x as long; replica by
 * replica, 1,175.  The waves in step are kept beside (in_step): an order
 * must be faster that way too (par_faster in job_map.c), and node trades
 * go by them on a tie (parmap_swaps.c).  Still above SMPI where replicas
 * fall out of step and so out of each other's way (busy seed 601654: an
 * order's sends 3,400 us, SMPI 1,977).  A simulation send by send, each rank's
 * blocking sends sharing the lanes max-min fairly, matched SMPI on busy
 * seed 294374 (2,355 us, waves 2,687) but chose no better (busy
 * 294368-87 0.856 -> 0.848, runs 38729-48 0.839 -> 0.857 with one order
 * 2 % slower) at ten times the time.  Sets: the first S waves' and the
 * last S's differ, the middle ones alternate two; at most 2 S + 2. */
#define WAVE_SETS (4 * TP__PAR_STAGES_TIMED)
/* Micro-batches followed one by one up to this many; beyond, each
 * replica's chain grows by its last PACE_ROWS micro-batches' average pace
 * (the middle micro-batches all see the same waves: the chains settle
 * into a steady pace within a few; at micro=65 to 1000 the same times to
 * the microsecond as followed one by one). */
#define PACE_CAP 64
#define PACE_ROWS 8

struct waves {
	const tp__parallel *p;
	const tp_alloc *a;
	const int32_t *map;
	int k, mode;
	int64_t S, M, reps;
	uint64_t set[WAVE_SETS];   /* the sets timed */
	double us[WAVE_SETS], bound[WAVE_SETS];
	double *rep_us;            /* per set, each replica's sends' time */
	double *end;               /* ntasks: one set's task ends */
	int n;
	int slot[WAVE_SETS];       /* wave_slot -> its set's index */
	tp_prediction *out;        /* sums every set's counts (add_phase) */
};

/* The boundaries (bit b: stage b to b + 1) sending in wave w; forward,
 * counted from stage 0, backward from the last. */
static uint64_t wave_set(const struct waves *v, int64_t w)
{
	uint64_t set = 0;
	for (int64_t q = w & 1; q < v->S && q <= w; q += 2)
		if ((w - q) / 2 < v->M)
			set |= (uint64_t)1 << (v->k == TP__PAR_PP_FWD ? q : v->S - 1 - q);
	return set;
}

/* Waves 0 .. 2 (M - 1) + S - 1; those from S - 1 to 2 (M - 1) have every
 * boundary of the wave's parity sending, two sets: wave w's slot, one of
 * at most 2 S, the same for waves of the same set. */
static int64_t wave_slot(const struct waves *v, int64_t w)
{
	int64_t mid0 = v->S - 1, mid1 = 2 * (v->M - 1);
	if (mid1 < mid0 + 2 || w <= mid0 + 1)
		return w;
	if (w <= mid1)
		return mid0 + ((w - mid0) & 1);
	return mid0 + 2 + (w - mid1 - 1);
}

/* The slot's set timed, if new: each replica's sends in it take as long
 * as its slowest (the last message between nodes of its ranks), the set's
 * boundaries sending at once. */
static int time_slot(struct waves *v, int64_t w, tp_error *err)
{
	uint64_t set = wave_set(v, w);
	int i = 0;
	while (i < v->n && v->set[i] != set)
		i++;
	v->slot[wave_slot(v, w)] = i;
	if (i < v->n)
		return 0;
	tp_prediction pk;
	int rc = one_graph(v->p, v->a, v->map, 1u << v->k, set, 0, v->mode, &pk,
			   v->end, err);
	if (rc)
		return rc;
	add_phase(v->out, &pk);
	v->n++;
	double *rep = v->rep_us + (size_t)i * (size_t)v->reps;
	/* no message between nodes: every replica at the set's time */
	if (!(replica_ends(v->p, v->end, rep) > 0))
		for (int64_t r = 0; r < v->reps; r++)
			rep[r] = pk.exchange_us;
	v->set[i] = set;
	v->us[i] = pk.exchange_us;
	v->bound[i] = pk.bound_us;
	return 0;
}

/* Replica r's sends of micro-batch m, row[q] (q: boundary positions):
 * (m, q) starts once the sender has received m (m, q - 1) and sent m - 1
 * (m - 1, q), and the receiver has sent m - 1 on (m - 1, q + 1); it lasts
 * the replica's time in its wave (2m + q).  prev: m - 1's ends. */
static void chain_row(const struct waves *v, int64_t r, int64_t m,
		      const double *prev, double *row)
{
	for (int64_t q = 0; q < v->S; q++) {
		double at = q ? row[q - 1] : 0;
		if (m) {
			at = fmax(at, prev[q]);
			if (q + 1 < v->S)
				at = fmax(at, prev[q + 1]);
		}
		int i = v->slot[wave_slot(v, 2 * m + q)];
		row[q] = at + v->rep_us[(size_t)i * (size_t)v->reps + (size_t)r];
	}
}

/* The slowest replica's end: its longest chain of sends (chain_row).
 * rows: (PACE_ROWS + 2) S doubles. */
static double replicas_end(const struct waves *v, double *rows)
{
	int64_t S = v->S, M = v->M, H = PACE_ROWS + 1;
	/* the micro-batches from tail on see the last waves, fewer sends */
	int64_t tail = M - 2 - S / 2 > 0 ? M - 2 - S / 2 : 0;
	double slowest = 0;
	for (int64_t r = 0; r < v->reps; r++) {
		double *prev = NULL;
		for (int64_t m = 0; m < M; m++) {
			if (m == PACE_CAP && m < tail) {
				/* the middle's rest at its last pace */
				const double *old = rows + (m - 1 - PACE_ROWS) % H * S;
				double *at = rows + H * S, ahead = (double)(tail - m) / PACE_ROWS;
				for (int64_t q = 0; q < S; q++)
					at[q] = prev[q] + ahead * (prev[q] - old[q]);
				prev = at;
				m = tail;
			}
			double *row = rows + m % H * S;
			chain_row(v, r, m, prev, row);
			prev = row;
		}
		slowest = fmax(slowest, prev[S - 1]);
	}
	return slowest;
}

static int pipeline_waves(const tp__parallel *p, const tp_alloc *a,
			  const int32_t *map, int k, int mode, double micro,
			  tp_prediction *out, double *in_step, tp_error *err)
{
	memset(out, 0, sizeof *out);
	struct waves v = { .p = p, .a = a, .map = map, .k = k, .mode = mode,
			   .S = p->size[TP__PAR_PP] - 1, .out = out };
	v.M = micro >= 1 ? (int64_t)(micro + 0.5) : 1;
	v.reps = p->size[TP__PAR_DP];
	double *rows = tp__malloc_array((size_t)((PACE_ROWS + 2) * v.S), sizeof *rows);
	v.end = tp__malloc_array((size_t)p->ntasks, sizeof *v.end);
	v.rep_us = tp__malloc_array((size_t)v.reps * WAVE_SETS, sizeof *v.rep_us);
	int rc = 0;
	if (!rows || !v.end || !v.rep_us)
		rc = tp_error_set(err, TP_ENOMEM, "parallel: out of memory");
	/* in step: every wave as long as its slowest send; the middle
	 * waves (M may be in the hundreds) counted, not walked */
	int64_t last = 2 * (v.M - 1) + v.S - 1, mid0 = v.S - 1, mid1 = 2 * (v.M - 1);
	double sum = 0, bsum = 0;
	for (int64_t w = 0; w <= last && !rc; w++) {
		int64_t times = 1;
		if (mid1 >= mid0 + 2 && w >= mid0 && w <= mid1) {
			if (w > mid0 + 1) {
				w = mid1;   /* counted with the first two */
				continue;
			}
			times = (mid1 - w) / 2 + 1;
		}
		if (!(rc = time_slot(&v, w, err))) {
			int i = v.slot[wave_slot(&v, w)];
			sum += (double)times * v.us[i];
			bsum += (double)times * v.bound[i];
		}
	}
	if (!rc) {
		out->exchange_us = replicas_end(&v, rows) / (double)v.M;
		out->bound_us = fmin(bsum / (double)v.M, out->exchange_us);
		*in_step = sum / (double)v.M;
	}
	free(rows);
	free(v.end);
	free(v.rep_us);
	return rc;
}

int tp__parallel_predict(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, tp_prediction *out,
			 double *phase_us, double *in_step_us, tp_error *err)
{
	memset(out, 0, sizeof *out);
	double in_step = 0;
	int64_t pp = p->size[TP__PAR_PP];
	double M = p->micro >= 1 ? p->micro : (double)pp;
	/* The pipeline's sends are two phases, forward then back, as GPipe
	 * runs them (every activation forward before any gradient comes
	 * back; 1F1B sends one way in its warm-up and cool-down, both ways
	 * in between).  Timed both ways at once, a forward and a backward
	 * send that share a cable (a stage over two units, d-mod-k putting
	 * both on one cable up) looked as slow as two forward sends that
	 * do: on the bench's development allocations (simgrid-train.sh)
	 * placements predicted 1 % faster than Slurm's order ran 3 to 6 %
	 * slower.  The experts' DP last. */
	static const int PHASES[TP__PAR_PHASES] = {
		TP__PAR_TP, TP__PAR_CP, TP__PAR_EP, TP__PAR_DP, TP__PAR_PP_FWD,
		TP__PAR_PP_BWD, TP__PAR_EDP
	};
	int rc = 0;
	for (size_t ph = 0; ph < sizeof PHASES / sizeof PHASES[0]; ph++) {
		int k = PHASES[ph];
		tp_prediction pk;
		/* The gradients' all-reduces run once, every stage at once.
		 * The stage sends (pp) run in waves (pipeline_waves).  The
		 * per-layer kinds (tp, cp, ep) run a micro-batch at a time
		 * along each replica's pipeline (replica_pipelines).  Beyond
		 * TP__PAR_STAGES_TIMED stages, for the launch's budget, a
		 * phase of all stages at once times (M + pp - 1) / M.
		 * Adding up every phase replica by replica (the slowest
		 * replica's sum of phases) chose worse on the rail bench
		 * (simgrid-train.sh --net rail --draw runs, seeds 847989-8008:
		 * 0.888 -> 0.910 of Slurm's order), though it timed Slurm's
		 * order closer to SMPI. */
		bool sends = k == TP__PAR_PP_FWD || k == TP__PAR_PP_BWD;
		if (k == TP__PAR_DP || k == TP__PAR_EDP || (sends && pp == 1)) {
			rc = one_phase(p, a, map, 1u << k, mode, &pk, err);
		} else if (pp > TP__PAR_STAGES_TIMED) {
			rc = one_phase(p, a, map, 1u << k, mode, &pk, err);
			double f = (M + (double)(pp - 1)) / M;
			pk.exchange_us *= f;
			pk.bound_us *= f;
		} else if (sends) {
			double waves = 0;
			rc = pipeline_waves(p, a, map, k, mode, M, &pk, &waves, err);
			in_step += waves - pk.exchange_us;
		} else {
			rc = replica_pipelines(p, a, map, k, mode, M, &pk, err);
		}
		if (rc)
			break;
		add_phase(out, &pk);
		if (phase_us)
			phase_us[ph] = pk.exchange_us;
	}
	if (in_step_us)
		*in_step_us = out->exchange_us + in_step;
	return rc;
}

int tp__parallel_time(const tp__parallel *p, const tp_alloc *a,
		      const int32_t *map, int mode, struct tp__par_time *t,
		      tp_error *err)
{
	int rc = tp__parallel_predict(p, a, map, mode, &t->p, t->phase_us,
				      &t->in_step_us, err);
	if (!rc && (rc = tp__parallel_splits(p, a, map, &t->tp_split, &t->pp_split)))
		tp_error_set(err, rc, "parallel: out of memory");
	return rc;
}

static int phases_at_once(const tp__parallel *p, const tp_alloc *a,
			  const int32_t *map, unsigned kinds, int mode,
			  double *us, tp_error *err)
{
	tp_prediction pk;
	int rc = one_phase(p, a, map, kinds, mode, &pk, err);
	*us = rc ? 0 : pk.exchange_us;
	return rc;
}

int tp__parallel_overlap(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, double *us, tp_error *err)
{
	unsigned kinds = 1u << TP__PAR_DP | 1u << TP__PAR_EDP | 1u << TP__PAR_PP_BWD;
	return phases_at_once(p, a, map, kinds, mode, us, err);
}

int tp__parallel_drain(const tp__parallel *p, const tp_alloc *a,
		       const int32_t *map, int mode, double *us, tp_error *err)
{
	unsigned kinds = 1u << TP__PAR_TP | 1u << TP__PAR_CP | 1u << TP__PAR_EP |
			 1u << TP__PAR_DP | 1u << TP__PAR_EDP | 1u << TP__PAR_PP_BWD;
	return phases_at_once(p, a, map, kinds, mode, us, err);
}

const char *tp_step_phase_name(int phase)
{
	/* tp__parallel_predict's PHASES, in its order */
	static const char *const NAMES[TP_STEP_PHASES] = {
		"tp", "cp", "ep", "dp", "pp-fwd", "pp-bwd", "dp-experts"
	};
	return phase >= 0 && phase < TP_STEP_PHASES ? NAMES[phase] : NULL;
}

int tp_predict_parallel_phases(const char *spec, const tp_alloc *a,
			       const int32_t *map, int32_t ntasks,
			       tp_prediction *out, double *phase_us,
			       tp_error *err)
{
	if (!a || !map || !out)
		return tp_error_set(err, TP_EINVAL, "parallel: missing allocation, "
				    "map or output");
	tp__parallel p;
	tp_graph *none = NULL;
	int rc = tp__parallel_parse(spec, ntasks, &p, err);
	/* the map checked against the slots once, before any phase (the
	 * per-replica timings read each task's node unchecked): the
	 * step's tasks without their messages */
	if (!rc && !(rc = tp__parallel_graph_kinds(&p, NULL, 0, &none, err)))
		rc = tp_mapping_validate(none, a, map, err);
	tp_graph_destroy(none);
	if (!rc)
		rc = tp__parallel_predict(&p, a, map, TP__PAR_PREDICT_FULL, out,
					  phase_us, NULL, err);
	return rc;
}

int tp_predict_parallel(const char *spec, const tp_alloc *a,
			const int32_t *map, int32_t ntasks, tp_prediction *out,
			tp_error *err)
{
	return tp_predict_parallel_phases(spec, a, map, ntasks, out, NULL, err);
}
