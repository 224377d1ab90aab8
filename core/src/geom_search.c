/* topoplace — geometric mapping, the search: the rotation/reflection
 * variants, their scoring and tp_geom_map.  See <topoplace/geom.h> for the
 * overview and geom.c for the partitions.
 *
 * Structure of the search.  A variant is (task dimension order, task
 * reflections, machine dimension order), plus one "longest extent" variant.
 * When all nodes have equal slots, every machine order gives the same split
 * tree, so one task partition serves all of them: the search computes
 * (#task orders x #reflections) task partitions plus #machine orders node
 * partitions, not their product, and only scores the product.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geom_part.h"

#define MAX_PERMS 720

typedef struct node_part {
	tree tr;              /* empty when shared: the tree of np[1] */
	bool shared;
	int32_t *leaf_node;   /* allocation index of each leaf, in order */
	int32_t nleaves;
	int tree_id;          /* equal trees share an id */
	side_order so;
} node_part;

/* ------------------------------------------------------------------------ */
/* The search                                                                */

/* Keep only the dimensions along which the points differ: a flat dimension
 * carries no information and would put the paired cut orders of the two
 * sides out of step.  Writes the projected n x *kept array (malloc'ed) and
 * the original index of every kept dimension. */
static double *project_varying(const double *pos, int32_t n, int dims,
			       int *kept, int *orig)
{
	int k = 0;
	for (int d = 0; d < dims; d++) {
		double lo = INFINITY, hi = -INFINITY;
		for (int32_t i = 0; i < n; i++) {
			double v = pos[(int64_t)i * dims + d];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (hi > lo)
			orig[k++] = d;
	}
	if (k == 0)
		orig[k++] = 0;   /* all points equal: one (flat) dimension */
	double *out = tp__malloc_array((size_t)n * (size_t)k, sizeof(double));
	if (!out)
		return NULL;
	for (int32_t i = 0; i < n; i++)
		for (int j = 0; j < k; j++)
			out[(int64_t)i * k + j] = pos[(int64_t)i * dims + orig[j]];
	*kept = k;
	return out;
}

static int next_perm(int *p, int n)
{
	int i = n - 2;
	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return 0;
	int j = n - 1;
	while (p[j] <= p[i])
		j--;
	int t = p[i];
	p[i] = p[j];
	p[j] = t;
	for (int a = i + 1, b = n - 1; a < b; a++, b--)
		t = p[a], p[a] = p[b], p[b] = t;
	return 1;
}

static int all_perms(int n, int (*out)[TP_MAX_DIMS], int max)
{
	int p[TP_MAX_DIMS], cnt = 0;
	for (int i = 0; i < n; i++)
		p[i] = i;
	do {
		memcpy(out[cnt++], p, sizeof p);
	} while (cnt < max && next_perm(p, n));
	return cnt;
}

/* A variant's screening result. */
struct cand {
	double sample;
	int variant, item, np;
	bool done;
};

/* The search state shared by the worker threads. */
typedef struct search {
	const tp_graph *g;
	const tp_alloc *a;
	const tp_geom_opts *o;
	pointset tasks, nodes;
	const int32_t *ids;   /* node pointset id -> allocation index */
	const int *used;      /* slots in use per allocation index */
	int32_t nn;
	node_part *np;        /* [0] longest; then (machine perm, reflection) */
	int nnp;
	side_order *tso;      /* [0] longest; then one per task permutation */
	int *item_tree;       /* work item -> tree id (phase 2) */
	int *item_tperm;      /* work item -> index into tso */
	int nitems;
	int phase;            /* 1: node partitions, 2: task orders + scoring */
	/* Screening (hop-bytes on large graphs): every variant is first scored
	 * on the edges of every stride-th task only; the best few are then
	 * scored exactly.  stride 1 = exact scoring throughout. */
	int32_t stride;
	int slots_each;       /* equal slots of every used node (screening) */
	int32_t **item_pos;   /* per item: task -> position in its task order */
	struct cand *cand;    /* per variant: screening score */
	int ncand;
	atomic_int next;
	double t0;
	int porig[TP_MAX_DIMS], torig[TP_MAX_DIMS];  /* kept dim -> axis */
	pthread_mutex_t mu;   /* guards everything below */
	double best_score;
	int best_variant;
	int32_t *best_map;
	int scored;
	bool budget_hit;
	int err;
} search;

static bool out_of_time(search *s)
{
	return s->o->time_budget_ms > 0 &&
	       tp__now_ms() - s->t0 > s->o->time_budget_ms;
}

static int build_node_part(search *s, node_part *np, tp__pt *nbuf)
{
	np->leaf_node = tp__malloc_array((size_t)s->nn, sizeof(int32_t));
	if (!np->leaf_node)
		return TP_ENOMEM;
	for (int32_t j = 0; j < s->nn; j++) {
		nbuf[j].id = (uint32_t)j;
		nbuf[j].w = (uint32_t)s->used[s->ids[j]];
	}
	uint64_t *hist = tp__malloc_array(tp__pointset_hist_len(&s->nodes), sizeof(uint64_t));
	tp__pt *tmp = tp__malloc_array((size_t)s->nn, sizeof(tp__pt));
	int rc = hist && tmp ? tp__part_nodes(&s->nodes, &np->so, s->ids,
					      s->o->parts_per_level, nbuf, s->nn,
					      &np->tr, np->leaf_node, &np->nleaves,
					      hist, tmp, INFINITY) : TP_ENOMEM;
	free(hist);
	free(tmp);
	/* With equal slots every machine variant yields the same split tree:
	 * keep one copy (np[1]'s, built first) instead of one per variant. */
	const tree *canon = &s->np[1].tr;
	if (!rc && np != &s->np[1] && s->nnp > 1 && canon->len == np->tr.len &&
	    !memcmp(canon->v, np->tr.v, sizeof *np->tr.v * (size_t)np->tr.len)) {
		free(np->tr.v);
		memset(&np->tr, 0, sizeof np->tr);
		np->shared = true;
	}
	return rc;
}

static const tree *tree_of(const search *s, const node_part *np)
{
	return np->shared ? &s->np[1].tr : &np->tr;
}

/* Screening score: bytes x hops over the edges of every stride-th task,
 * nodes found through the task order positions (equal slots per node). */
static double sample_score(const search *s, const int32_t *pos,
			   const node_part *np)
{
	const tp_graph *g = s->g;
	const tp_machine *m = s->a->m;
	const int32_t *node = s->a->node;
	int k = s->slots_each, nd = m->ndims;
	double sum = 0;
	for (int32_t u = 0; u < g->ntasks; u += s->stride) {
		const int *cu = &m->coords[(int64_t)node[np->leaf_node[pos[u] / k]] * nd];
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			int32_t v = g->adjncy[e];
			if (v < u)
				continue;   /* each undirected edge once */
			const int *cv = &m->coords[(int64_t)node[np->leaf_node[pos[v] / k]] * nd];
			sum += g->weights[e] * tp__coord_dist(m, cu, cv);
		}
	}
	return sum;
}

/* map[t] for every task, from a task order and a node partition's leaves. */
static void fill_map(const search *s, const node_part *np, const tp__pt *buf,
		     int32_t *map)
{
	int64_t pos = 0;
	for (int32_t l = 0; l < np->nleaves; l++) {
		int32_t node = np->leaf_node[l];
		for (int k = 0; k < s->used[node]; k++)
			map[buf[pos++].id] = node;
	}
}

/* Phase 2 item: partition the tasks for one task permutation into the counts
 * of one split tree, then score it against every node partition with that
 * tree.  Item 0 is the longest-extent variant on both sides. */
static void run_item(search *s, int item, tp__pt *buf, int32_t *map,
		     int *tc, uint64_t *hist, tp_congestion_ws *ws)
{
	int32_t n = s->g->ntasks;
	int tree_id = s->item_tree[item], tpi = s->item_tperm[item];
	const node_part *ref = NULL;
	for (int i = 0; i < s->nnp && !ref; i++)
		if (s->np[i].tree_id == tree_id)
			ref = &s->np[i];
	for (int32_t t = 0; t < n; t++) {
		buf[t].id = (uint32_t)t;
		buf[t].w = 1;
	}
	tp__part_tasks(&s->tasks, &s->tso[tpi], tree_of(s, ref), buf, n, hist,
		       buf + n, INFINITY);
	int32_t *pos = NULL;
	if (s->stride > 1) {
		pos = s->item_pos[item];
		for (int32_t p = 0; p < n; p++)
			pos[buf[p].id] = p;
	}

	for (int i = 0; i < s->nnp; i++) {
		const node_part *np = &s->np[i];
		if (item == 0 ? i != 0 : (i == 0 || np->tree_id != tree_id))
			continue;
		if (item != 0 && out_of_time(s)) {
			pthread_mutex_lock(&s->mu);
			s->budget_hit = true;
			pthread_mutex_unlock(&s->mu);
			return;
		}
		int variant = item == 0 ? 0 : 1 + (tpi - 1) * (s->nnp - 1) + (i - 1);
		if (pos) {
			/* each variant owns its slot: no lock needed */
			struct cand *c = &s->cand[variant];
			c->sample = sample_score(s, pos, np);
			c->variant = variant;
			c->item = item;
			c->np = i;
			c->done = true;
			continue;
		}
		double score;
		if (s->o->metric == TP_METRIC_HOP_BYTES) {
			/* per-task router coordinates, then the bounded sum: a
			 * candidate cut off above the best so far could never
			 * win, ties included, so the result stays deterministic */
			const tp_machine *m = s->a->m;
			int nd = m->ndims;
			int64_t at = 0;
			for (int32_t l = 0; l < np->nleaves; l++) {
				int32_t node = np->leaf_node[l];
				const int *c = &m->coords[(int64_t)s->a->node[node] * nd];
				for (int k = 0; k < s->used[node]; k++) {
					int *dst = &tc[(int64_t)buf[at++].id * nd];
					for (int d = 0; d < nd; d++)
						dst[d] = c[d];
				}
			}
			pthread_mutex_lock(&s->mu);
			double bound = s->best_score;
			pthread_mutex_unlock(&s->mu);
			score = tp__hop_bytes_task_coords(s->g, m, tc, bound);
		} else {
			fill_map(s, np, buf, map);
			score = tp_metrics_score(s->g, s->a, map, s->o->metric, ws);
		}
		pthread_mutex_lock(&s->mu);
		s->scored++;
		if (score < s->best_score ||
		    (score == s->best_score && variant < s->best_variant)) {
			s->best_score = score;
			s->best_variant = variant;
			fill_map(s, np, buf, s->best_map);
		}
		pthread_mutex_unlock(&s->mu);
	}
}

static void fail(search *s, int rc)
{
	pthread_mutex_lock(&s->mu);
	s->err = rc;
	pthread_mutex_unlock(&s->mu);
}

static void *worker(void *arg)
{
	search *s = arg;
	int32_t n = s->g->ntasks;
	size_t len = s->phase == 1 ? (size_t)s->nn : (size_t)n;
	/* phase 2: the second half of buf is the partition's scratch */
	tp__pt *buf = tp__malloc_array(s->phase == 2 ? 2 * len : len, sizeof(tp__pt));
	int32_t *map = s->phase == 2 ? tp__malloc_array((size_t)n, sizeof(int32_t)) : NULL;
	int *tc = s->phase == 2 ? tp__malloc_array((size_t)n * (size_t)s->a->m->ndims,
						    sizeof(int)) : NULL;
	uint64_t *hist = s->phase == 2 ? tp__malloc_array(tp__pointset_hist_len(&s->tasks),
							  sizeof(uint64_t)) : NULL;
	tp_congestion_ws *ws = NULL;
	bool ok = buf && (s->phase == 1 || (map && tc && hist));
	if (ok && s->phase == 2 && s->o->metric == TP_METRIC_CONGESTION)
		ok = tp_congestion_ws_create(&ws, s->a->m, NULL) == 0;
	if (!ok)
		fail(s, TP_ENOMEM);
	while (ok) {
		int i = atomic_fetch_add(&s->next, 1);
		if (s->phase == 1) {
			if (i >= s->nnp)
				break;
			if (i == 1)
				continue;   /* built before the phase */
			if (build_node_part(s, &s->np[i], buf)) {
				fail(s, TP_ENOMEM);
				break;
			}
		} else {
			if (i >= s->nitems)
				break;
			/* item 0 (longest variant) always runs: a result must exist */
			if (i > 0 && out_of_time(s)) {
				pthread_mutex_lock(&s->mu);
				s->budget_hit = true;
				pthread_mutex_unlock(&s->mu);
				break;
			}
			run_item(s, i, buf, map, tc, hist, ws);
		}
	}
	tp_congestion_ws_destroy(ws);
	free(buf);
	free(map);
	free(tc);
	free(hist);
	return NULL;
}

static void run_phase(search *s, int phase, int nthreads)
{
	pthread_t th[8];
	int started;
	s->phase = phase;
	atomic_store(&s->next, 0);
	for (started = 0; started < nthreads - 1; started++)
		if (pthread_create(&th[started], NULL, worker, s))
			break;
	worker(s);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->done != b->done)
		return a->done ? -1 : 1;
	if (a->sample != b->sample)
		return a->sample < b->sample ? -1 : 1;
	return a->variant - b->variant;
}

/* After screening: the FINALISTS variants with the lowest sample scores
 * (plus every variant tied with the last of them) are scored exactly; the
 * best exact score wins, ties to the lowest variant. */
#define FINALISTS 8
static int score_finalists(search *s)
{
	int32_t n = s->g->ntasks;
	int32_t *map = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!map)
		return TP_ENOMEM;
	qsort(s->cand, (size_t)s->ncand, sizeof *s->cand, cmp_cand);
	int k = 0;
	while (k < s->ncand && s->cand[k].done &&
	       (k < FINALISTS || s->cand[k].sample == s->cand[FINALISTS - 1].sample))
		k++;
	for (int c = 0; c < k; c++) {
		const struct cand *cd = &s->cand[c];
		const int32_t *pos = s->item_pos[cd->item];
		const node_part *np = &s->np[cd->np];
		for (int32_t t = 0; t < n; t++)
			map[t] = np->leaf_node[pos[t] / s->slots_each];
		double score = tp__hop_bytes_bounded(s->g, s->a, map, s->best_score);
		if (score < s->best_score ||
		    (score == s->best_score && cd->variant < s->best_variant)) {
			s->best_score = score;
			s->best_variant = cd->variant;
			memcpy(s->best_map, map, sizeof(int32_t) * (size_t)n);
		}
	}
	/* every screened variant counts as scored */
	for (int c = 0; c < s->ncand; c++)
		s->scored += s->cand[c].done;
	free(map);
	return 0;
}

static const char AXES[] = "xyzuvw";

static void describe_variant(const search *s, int variant, char *buf, size_t len)
{
	if (variant == 0) {
		snprintf(buf, len, "longest extent first");
		return;
	}
	int v = variant - 1, per = s->nnp - 1;
	const side_order *t = &s->tso[1 + v / per];
	const side_order *m = &s->np[1 + v % per].so;
	char tp[8] = "", mp[8] = "", rf[8] = "";
	int k = 0;
	for (int d = 0; d < s->tasks.dims; d++)
		tp[d] = AXES[s->torig[t->perm[d]]];
	for (int d = 0; d < s->nodes.dims; d++) {
		mp[d] = AXES[s->porig[m->perm[d]]];
		if (m->reflect[d])
			rf[k++] = AXES[s->porig[d]];
	}
	snprintf(buf, len, "tasks %s -> machine %s%s%s%s", tp, mp,
		 k ? " (reflected " : "", rf, k ? ")" : "");
}

/* Everything tp_geom_map allocates besides the search state proper. */
typedef struct prep {
	int *shc;             /* seam-shifted router coordinates per node */
	int *used;            /* slots in use per allocation index */
	double *npos, *pvpos, *tvpos;
	int32_t *ids;
	int (*tperms)[TP_MAX_DIMS], (*pperms)[TP_MAX_DIMS];
	int ntp;              /* task permutations searched */
	int shifted;          /* dimensions moved by the seam shift */
	bool subset;          /* closest-subset selection dropped slots */
} prep;

static int check_inputs(const tp_graph *g, const tp_alloc *a,
			const tp_geom_opts *opt, tp_error *err)
{
	if (g->coord_dims <= 0)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: the pattern has no task coordinates");
	if (a->total_slots < g->ntasks)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: %d tasks but the allocation has only %lld slots",
				    g->ntasks, (long long)a->total_slots);
	if (opt->parts_per_level < 2 || opt->parts_per_level > 64)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: parts per level must be 2..64, not %d",
				    opt->parts_per_level);
	return 0;
}

/* Node coordinates: seam-shifted on wrapped dimensions when asked. */
static int node_coords(search *s, prep *pr)
{
	const tp_alloc *a = s->a;
	const tp_machine *m = a->m;
	int pdim = m->ndims;
	if (s->o->seam_shift) {
		pr->shifted = tp_geom_seam_shift(a, pr->shc);
		return pr->shifted < 0 ? TP_ENOMEM : 0;
	}
	for (int32_t i = 0; i < a->nnodes; i++)
		memcpy(&pr->shc[(int64_t)i * pdim], &m->coords[(int64_t)a->node[i] * pdim],
		       sizeof(int) * (size_t)pdim);
	return 0;
}

/* Slots in use: all of them, or the closest subset. */
static int choose_slots(search *s, prep *pr)
{
	const tp_alloc *a = s->a;
	int pdim = a->m->ndims;
	pr->subset = a->total_slots > s->g->ntasks;
	if (!pr->subset) {
		memcpy(pr->used, a->slots, sizeof(int) * (size_t)a->nnodes);
		return 0;
	}
	double *allpos = tp__malloc_array((size_t)a->nnodes * (size_t)pdim, sizeof(double));
	if (!allpos)
		return TP_ENOMEM;
	for (int64_t i = 0; i < (int64_t)a->nnodes * pdim; i++)
		allpos[i] = pr->shc[i];
	int rc = tp__closest_subset(a, allpos, pdim, s->g->ntasks, pr->used, INFINITY);
	free(allpos);
	return rc;
}

/* The used nodes and the tasks as point sets over the dimensions along
 * which they vary. */
static int build_pointsets(search *s, prep *pr)
{
	const tp_alloc *a = s->a;
	int pdim = a->m->ndims, tdim = s->g->coord_dims;
	int32_t nn = 0;
	for (int32_t i = 0; i < a->nnodes; i++)
		nn += pr->used[i] > 0;
	pr->npos = tp__malloc_array((size_t)nn * (size_t)pdim, sizeof(double));
	pr->ids = tp__malloc_array((size_t)nn, sizeof(int32_t));
	if (!pr->npos || !pr->ids)
		return TP_ENOMEM;
	for (int32_t i = 0, j = 0; i < a->nnodes; i++) {
		if (!pr->used[i])
			continue;
		pr->ids[j] = i;
		for (int d = 0; d < pdim; d++)
			pr->npos[(int64_t)j * pdim + d] = pr->shc[(int64_t)i * pdim + d];
		j++;
	}
	s->ids = pr->ids;
	s->used = pr->used;
	s->nn = nn;
	pr->pvpos = project_varying(pr->npos, nn, pdim, &pdim, s->porig);
	pr->tvpos = project_varying(s->g->coords, s->g->ntasks, tdim, &tdim, s->torig);
	if (!pr->pvpos || !pr->tvpos)
		return TP_ENOMEM;
	if (tp__pointset_init(&s->nodes, nn, pdim, pr->pvpos) ||
	    tp__pointset_init(&s->tasks, s->g->ntasks, tdim, pr->tvpos))
		return TP_ENOMEM;
	return 0;
}

/* Variants: task permutations x machine permutations x reflections of the
 * machine axes.  Reflecting the node side instead of the task side gives
 * the same set of mappings and partitions fewer points.  np[0] and tso[0]
 * are the longest-extent variant. */
static int make_variants(search *s, prep *pr)
{
	int tdim = s->tasks.dims, pdim = s->nodes.dims;
	pr->tperms = calloc(MAX_PERMS, sizeof *pr->tperms);
	pr->pperms = calloc(MAX_PERMS, sizeof *pr->pperms);
	if (!pr->tperms || !pr->pperms)
		return TP_ENOMEM;
	enum tp_geom_search mode = s->o->search;
	if (mode == TP_SEARCH_AUTO)
		mode = s->nn <= TP_SEARCH_AUTO_MAX_NODES ? TP_SEARCH_FULL
							 : TP_SEARCH_ROTATIONS;
	bool searching = mode != TP_SEARCH_NONE;
	int ntp = searching ? all_perms(tdim, pr->tperms, 64) : 0;
	int npp = searching ? all_perms(pdim, pr->pperms, MAX_PERMS) : 0;
	int nrefl = mode == TP_SEARCH_FULL ? 1 << pdim : 1;
	while ((int64_t)npp * nrefl > 512 && nrefl > 1)
		nrefl >>= 1;   /* bounded work for many dimensions */
	if (npp * nrefl > 512)
		npp = 512 / nrefl;

	pr->ntp = ntp;
	s->nnp = 1 + npp * nrefl;
	s->np = calloc((size_t)s->nnp, sizeof *s->np);
	s->tso = calloc((size_t)(1 + ntp), sizeof *s->tso);
	if (!s->np || !s->tso)
		return TP_ENOMEM;
	s->np[0].so.longest = true;
	s->tso[0].longest = true;
	for (int d = 0; d < TP_MAX_DIMS; d++)
		s->np[0].so.perm[d] = s->tso[0].perm[d] = d;
	for (int pp = 0; pp < npp; pp++)
		for (int r = 0; r < nrefl; r++) {
			side_order *so = &s->np[1 + pp * nrefl + r].so;
			memcpy(so->perm, pr->pperms[pp], sizeof so->perm);
			for (int d = 0; d < pdim; d++)
				so->reflect[d] = (r >> d) & 1;
		}
	for (int t = 0; t < ntp; t++)
		memcpy(s->tso[1 + t].perm, pr->tperms[t], sizeof s->tso[1 + t].perm);
	return 0;
}

static int thread_count(const tp_geom_opts *opt)
{
	int nthreads = opt->nthreads;
	if (nthreads <= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = cpus > 0 ? (int)cpus : 1;
	}
	return nthreads > 8 ? 8 : nthreads;
}

/* Equal split trees get equal ids, so that one task partition serves every
 * node partition with that tree. */
static void number_trees(search *s)
{
	for (int i = 0; i < s->nnp; i++) {
		node_part *np = &s->np[i];
		const tree *ti = tree_of(s, np);
		np->tree_id = np->shared ? 1 : i;
		for (int j = 0; j < i && !np->shared; j++) {
			const tree *tj = tree_of(s, &s->np[j]);
			if (tj->len == ti->len &&
			    !memcmp(tj->v, ti->v, sizeof *ti->v * (size_t)ti->len)) {
				np->tree_id = s->np[j].tree_id;
				break;
			}
		}
	}
}

/* Phase 1: node partitions, in parallel (np[1] first: the others share its
 * split tree when theirs is the same). */
static int partition_nodes(search *s, int nthreads)
{
	if (s->nnp > 1) {
		tp__pt *nbuf = tp__malloc_array((size_t)s->nn, sizeof(tp__pt));
		int rc = nbuf ? build_node_part(s, &s->np[1], nbuf) : TP_ENOMEM;
		free(nbuf);
		if (rc)
			return rc;
	}
	run_phase(s, 1, nthreads < s->nnp ? nthreads : s->nnp);
	if (s->err)
		return s->err;
	number_trees(s);
	return 0;
}

/* Phase 2 work items: item 0 = longest; then (task permutation, distinct
 * tree). */
static int make_items(search *s, int ntp)
{
	s->item_tree = tp__malloc_array((size_t)(1 + ntp * s->nnp), sizeof(int));
	s->item_tperm = tp__malloc_array((size_t)(1 + ntp * s->nnp), sizeof(int));
	if (!s->item_tree || !s->item_tperm)
		return TP_ENOMEM;
	s->item_tree[0] = s->np[0].tree_id;
	s->item_tperm[0] = 0;
	s->nitems = 1;
	for (int t = 0; t < ntp; t++)
		for (int i = 1; i < s->nnp; i++) {
			bool first = true;   /* first machine variant with this tree */
			for (int j = 1; j < i && first; j++)
				first = s->np[j].tree_id != s->np[i].tree_id;
			if (!first)
				continue;
			s->item_tree[s->nitems] = s->np[i].tree_id;
			s->item_tperm[s->nitems++] = 1 + t;
		}
	return 0;
}

/* Screening pays off on large graphs scored by hop-bytes when every used
 * node has the same slots (positions map to leaves by division). */
static int setup_screening(search *s, int ntp)
{
	const tp_graph *g = s->g;
	int32_t n = g->ntasks;
	int64_t sample_edges = 16384;
	s->stride = 1;
	s->slots_each = 0;
	for (int32_t i = 0; i < s->a->nnodes; i++)
		if (s->used[i] > 0) {
			if (!s->slots_each)
				s->slots_each = s->used[i];
			else if (s->used[i] != s->slots_each)
				s->slots_each = -1;
		}
	if (s->o->metric != TP_METRIC_HOP_BYTES || s->slots_each <= 0 ||
	    g->nedges <= 4 * sample_edges ||
	    (int64_t)s->nitems * n > ((int64_t)1 << 27))
		return 0;
	s->stride = (int32_t)((g->nedges + sample_edges - 1) / sample_edges);
	s->ncand = 1 + ntp * (s->nnp - 1);
	s->cand = calloc((size_t)s->ncand, sizeof *s->cand);
	s->item_pos = calloc((size_t)s->nitems, sizeof *s->item_pos);
	if (!s->cand || !s->item_pos)
		return TP_ENOMEM;
	for (int i = 0; i < s->nitems; i++)
		if (!(s->item_pos[i] = tp__malloc_array((size_t)n, sizeof(int32_t))))
			return TP_ENOMEM;
	return 0;
}

/* Phase 2: task partitions and scoring, then the finalists when screening. */
static int search_variants(search *s, int nthreads)
{
	run_phase(s, 2, nthreads < s->nitems ? nthreads : s->nitems);
	if (s->err)
		return s->err;
	if (s->stride > 1 && score_finalists(s) != 0)
		return TP_ENOMEM;
	return s->scored == 0 ? TP_ENOMEM : 0;
}

static void fill_report(const search *s, const prep *pr, tp_geom_report *report)
{
	memset(report, 0, sizeof *report);
	report->variants_total = 1 + pr->ntp * (s->nnp - 1);
	report->variants_scored = s->scored;
	report->best_variant = s->best_variant;
	describe_variant(s, s->best_variant, report->best_desc,
			 sizeof report->best_desc);
	report->best_score = s->best_score;
	report->budget_hit = s->budget_hit;
	report->subset_selected = pr->subset;
	report->shifted_dims = pr->shifted;
	report->elapsed_ms = tp__now_ms() - s->t0;
}

static void search_free(search *s, prep *pr)
{
	if (s->np)
		for (int i = 0; i < s->nnp; i++) {
			free(s->np[i].tr.v);
			free(s->np[i].leaf_node);
		}
	free(s->np);
	free(s->tso);
	free(s->item_tree);
	free(s->item_tperm);
	if (s->item_pos)
		for (int i = 0; i < s->nitems; i++)
			free(s->item_pos[i]);
	free(s->item_pos);
	free(s->cand);
	free(pr->tperms);
	free(pr->pperms);
	tp__pointset_free(&s->nodes);
	tp__pointset_free(&s->tasks);
	free(pr->npos);
	free(pr->pvpos);
	free(pr->tvpos);
	free(pr->ids);
	free(pr->shc);
	free(pr->used);
	free(s->best_map);
	pthread_mutex_destroy(&s->mu);
}

int tp_geom_map(const tp_graph *g, const tp_alloc *a, const tp_geom_opts *opt,
		int32_t *map, tp_geom_report *report, tp_error *err)
{
	tp_geom_opts defaults;
	if (!opt) {
		tp_geom_opts_default(&defaults);
		opt = &defaults;
	}
	double t0 = tp__now_ms();
	int rc = check_inputs(g, a, opt, err);
	if (rc)
		return rc;

	search s;
	prep pr;
	memset(&s, 0, sizeof s);
	memset(&pr, 0, sizeof pr);
	s.g = g;
	s.a = a;
	s.o = opt;
	s.t0 = t0;
	s.best_score = INFINITY;
	s.best_variant = INT32_MAX;
	pthread_mutex_init(&s.mu, NULL);
	pr.shc = tp__malloc_array((size_t)a->nnodes * (size_t)a->m->ndims, sizeof(int));
	pr.used = tp__malloc_array((size_t)a->nnodes, sizeof(int));
	s.best_map = tp__malloc_array((size_t)g->ntasks, sizeof(int32_t));
	int nthreads = thread_count(opt);
	if (!pr.shc || !pr.used || !s.best_map ||
	    node_coords(&s, &pr) || choose_slots(&s, &pr) ||
	    build_pointsets(&s, &pr) || make_variants(&s, &pr) ||
	    partition_nodes(&s, nthreads) || make_items(&s, pr.ntp) ||
	    setup_screening(&s, pr.ntp) || search_variants(&s, nthreads)) {
		rc = tp_error_set(err, TP_ENOMEM, "geometric mapping: out of memory");
	} else {
		memcpy(map, s.best_map, sizeof(int32_t) * (size_t)g->ntasks);
		if (report)
			fill_report(&s, &pr, report);
	}
	search_free(&s, &pr);
	return rc;
}
