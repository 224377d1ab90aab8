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
 * order dp, ep, cp, tp (tp fastest) go to the group with the fewest free
 * slots that holds the whole stage (best fit, ties to the first); when no
 * group can, into the groups with the most free slots first, so that it
 * spans few.  Best fit can leave the last stage spread over many groups
 * where going in path order spans two at most: the second variant
 * (TP__PARMAP_PATH) fills the stages one after the other in path order,
 * and the job keeps the faster of the two.  Inside the chosen nodes a
 * tensor-parallel group goes to the first node with room for all of it,
 * else rank by rank.  Linear in tasks and nodes but for the sort and the
 * best-fit scan (groups x stages).  The job judges it against the others
 * by the predicted step time (job_map.c).
 *
 * The step time (tp__parallel_predict): the phases of a step run one after
 * the other (tensor-parallel all-reduces inside each layer, pipeline sends
 * between micro-batches, the gradient all-reduce at its end), so it is the
 * sum of each kind's exchange under the time model, not one exchange of
 * them all: at once, the longest phase (tensor parallel, inside the nodes)
 * would hide every other and make every placement look the same.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "map/parmap.h"
#include "map/predict_internal.h"
#include "net/network.h"

struct pm {
	const tp_alloc *a;
	int64_t *path;       /* nnodes x depth */
	int *plen;
	int depth;
	int32_t *order;      /* allocation indices by path */
	int *free;           /* free slots, by allocation index */
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

static bool same_group(const struct pm *h, int32_t i, int32_t j)
{
	if (h->plen[i] != h->plen[j])
		return false;
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
	int64_t tmp[TP__HIER_MAX_LEVELS];
	for (int32_t i = 0; i < nn; i++) {
		const int *r = &m->coords[(size_t)a->node[i] * (size_t)m->ndims];
		int n = m->net->hierarchy(m, r, tmp, TP__HIER_MAX_LEVELS);
		if (n < 0)
			return TP_EINVAL;
		h->plen[i] = n;
		if (n > h->depth)
			h->depth = n;
	}
	h->path = tp__malloc_array((size_t)nn * (size_t)h->depth + 1, sizeof(int64_t));
	if (!h->path)
		return TP_ENOMEM;
	memset(h->path, 0, sizeof(int64_t) * ((size_t)nn * (size_t)h->depth + 1));
	for (int32_t i = 0; i < nn; i++) {
		const int *r = &m->coords[(size_t)a->node[i] * (size_t)m->ndims];
		m->net->hierarchy(m, r, &h->path[(size_t)i * (size_t)h->depth], h->depth);
	}
	qsort_r(h->order, (size_t)nn, sizeof(int32_t), cmp_path, h);
	return 0;
}

/* ranks[0..n-1] (tensor-parallel groups of tp, consecutive) onto the nodes
 * order[lo..hi-1]. */
static void fill(struct pm *h, const int32_t *ranks, int64_t n, int64_t tp,
		 int32_t lo, int32_t hi, int32_t *map)
{
	int64_t at = 0;
	while (at < n) {
		int64_t chunk = n - at < tp ? n - at : tp;
		int32_t whole = -1;
		for (int32_t k = lo; k < hi && whole < 0; k++)
			if (h->free[h->order[k]] >= chunk)
				whole = h->order[k];
		if (whole >= 0) {
			for (int64_t i = 0; i < chunk; i++)
				map[ranks[at + i]] = whole;
			h->free[whole] -= (int)chunk;
			at += chunk;
			continue;
		}
		for (int32_t k = lo; k < hi && at < n && chunk > 0; k++) {
			int32_t nd = h->order[k];
			while (h->free[nd] > 0 && chunk > 0) {
				map[ranks[at++]] = nd;
				h->free[nd]--;
				chunk--;
			}
		}
		if (chunk > 0)
			return;   /* no room left: cannot happen (checked) */
	}
}

static int64_t group_free(const struct pm *h, const int32_t *gstart, int32_t g)
{
	int64_t f = 0;
	for (int32_t k = gstart[g]; k < gstart[g + 1]; k++)
		f += h->free[h->order[k]];
	return f;
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
	int64_t pp = p->size[TP__PAR_PP], S = p->ntasks / pp;
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
	int64_t tp = p->size[TP__PAR_TP];
	/* the kinds other than pp, slowest first: dp, ep, cp, tp */
	static const int INNER[4] = { TP__PAR_DP, TP__PAR_EP, TP__PAR_CP, TP__PAR_TP };
	for (int64_t s = 0; s < pp; s++) {
		int64_t at = 0;
		for (int64_t i = 0; i < S; i++) {
			int64_t rest = i, rank = s * p->stride[TP__PAR_PP];
			for (int k = 3; k >= 0; k--) {
				int kind = INNER[k];
				rank += rest % p->size[kind] * p->stride[kind];
				rest /= p->size[kind];
			}
			ranks[at++] = (int32_t)rank;
		}
		if (variant == TP__PARMAP_PATH) {
			fill(&h, ranks, S, tp, 0, nn, map);
			continue;
		}
		int32_t best = -1;
		int64_t best_free = 0;
		for (int32_t g = 0; g < ng; g++) {
			int64_t f = group_free(&h, gstart, g);
			if (f >= S && (best < 0 || f < best_free)) {
				best = g;
				best_free = f;
			}
		}
		if (best >= 0) {
			fill(&h, ranks, S, tp, gstart[best], gstart[best + 1], map);
			continue;
		}
		/* no group holds it: the fullest groups first, so that the
		 * stage spans as few as it can */
		int64_t at2 = 0;
		while (at2 < S) {
			int32_t big = -1;
			int64_t bf = 0;
			for (int32_t g = 0; g < ng; g++) {
				int64_t f = group_free(&h, gstart, g);
				if (f > bf) {
					big = g;
					bf = f;
				}
			}
			if (big < 0)
				break;   /* no room: cannot happen (checked) */
			int64_t take = S - at2 < bf ? S - at2 : bf;
			fill(&h, ranks + at2, take, tp, gstart[big], gstart[big + 1], map);
			at2 += take;
		}
	}
out:
	free(ranks);
	free(gstart);
	free(h.order);
	free(h.free);
	free(h.plen);
	free(h.path);
	return rc;
}

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

int tp__parallel_predict(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, tp_prediction *out,
			 tp_error *err)
{
	memset(out, 0, sizeof *out);
	for (int k = 0; k < TP__PAR_KINDS; k++) {
		tp_graph *g = NULL;
		int rc = tp__parallel_graph_kinds(p, map, 1u << k, &g, err);
		if (rc)
			return rc;
		if (g->nedges == 0) {
			tp_graph_destroy(g);
			continue;
		}
		tp_prediction pk;
		if (mode == TP__PAR_PREDICT_FULL)
			rc = tp_predict_exchange(g, a, map, &pk, err);
		else if (tp__predict_launch(g, a, map,
					    mode == TP__PAR_PREDICT_BUDGET, &pk))
			rc = tp_error_set(err, TP_ENOMEM, "parallel: the step's "
					  "time could not be predicted");
		tp_graph_destroy(g);
		if (rc)
			return rc;
		add_phase(out, &pk);
	}
	return 0;
}

int tp_predict_parallel(const char *spec, const tp_alloc *a,
			const int32_t *map, int32_t ntasks, tp_prediction *out,
			tp_error *err)
{
	if (!a || !map || !out)
		return tp_error_set(err, TP_EINVAL, "parallel: missing allocation, "
				    "map or output");
	tp__parallel p;
	int rc = tp__parallel_parse(spec, ntasks, &p, err);
	if (!rc)
		rc = tp__parallel_predict(&p, a, map, TP__PAR_PREDICT_FULL, out, err);
	return rc;
}
