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
 * by the predicted step time (job_map.c; the step's time: parstep.c).
 */
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "map/hpaths.h"
#include "map/parmap.h"
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
