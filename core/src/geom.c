/* topoplace — geometric mapping: paired multi-jagged partitioning of task and
 * node coordinates, torus seam shift, closest-subset selection, and the
 * rotation/reflection search.  See <topoplace/geom.h> for the overview.
 *
 * Structure of the search.  A variant is (task dimension order, task
 * reflections, machine dimension order), plus one "longest extent" variant.
 * The node side of a variant depends only on the machine order: partitioning
 * the nodes yields a split tree (the slot counts of every part, in depth-first
 * order) and the node of every slot position.  The task side is partitioned
 * into exactly the counts of that tree along the paired task dimensions, which
 * yields a task order; task order[i] runs on the node of slot position i.
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

#include "geom_select.h"
#include "internal.h"

#define MAX_VARIANT_ITEMS 4096   /* cap on task partitions for >3-D inputs */
#define MAX_PERMS 720

void tp_geom_opts_default(tp_geom_opts *o)
{
	memset(o, 0, sizeof *o);
	o->parts_per_level = 2;
	o->search = TP_SEARCH_FULL;
	o->seam_shift = true;
	o->metric = TP_METRIC_HOP_BYTES;
	o->time_budget_ms = 0;
	o->nthreads = 0;
}

/* ------------------------------------------------------------------------ */
/* Torus seam shift                                                          */

/* Shift one wrapped dimension: the largest run of unoccupied coordinates
 * becomes the seam.  Ties between equal gaps go to the gap with fewer nodes on
 * its two bordering coordinates, then to the lowest position.  Returns 1 when
 * coordinates moved. */
static int shift_dim(int32_t n, int *c, int ndims, int d, int extent,
		     int32_t *count)
{
	memset(count, 0, sizeof(int32_t) * (size_t)extent);
	for (int32_t i = 0; i < n; i++)
		count[c[(int64_t)i * ndims + d]]++;
	int first = -1, last = -1;
	for (int x = 0; x < extent; x++)
		if (count[x]) {
			if (first < 0)
				first = x;
			last = x;
		}
	if (first < 0)
		return 0;
	int wrap_gap = extent - 1 - last + first;
	int best_gap = 0, best_lo = -1;
	int64_t best_border = 0;
	for (int x = first, prev = first; x <= last; x++) {
		if (!count[x])
			continue;
		int gap = x - prev - 1;
		int64_t border = (int64_t)count[prev] + count[x];
		if (gap > best_gap || (gap == best_gap && gap > 0 && border < best_border)) {
			best_gap = gap;
			best_lo = prev;
			best_border = border;
		}
		prev = x;
	}
	if (best_lo < 0 || best_gap <= wrap_gap)
		return 0;
	for (int32_t i = 0; i < n; i++) {
		int *v = &c[(int64_t)i * ndims + d];
		if (*v <= best_lo)
			*v += extent;
	}
	return 1;
}

int tp_geom_seam_shift(const tp_alloc *a, int *out)
{
	const tp_machine *m = a->m;
	int nd = m->ndims, shifted = 0, maxext = 1;
	for (int32_t i = 0; i < a->nnodes; i++)
		memcpy(&out[(int64_t)i * nd], &m->coords[(int64_t)a->node[i] * nd],
		       sizeof(int) * (size_t)nd);
	for (int d = 0; d < nd; d++)
		if (m->dims[d] > maxext)
			maxext = m->dims[d];
	int32_t *count = tp__malloc_array((size_t)maxext, sizeof(int32_t));
	if (!count)
		return TP_ENOMEM;
	for (int d = 0; d < nd; d++)
		if (m->wrap[d] && m->dims[d] > 2)
			shifted += shift_dim(a->nnodes, out, nd, d, m->dims[d], count);
	free(count);
	return shifted;
}

/* ------------------------------------------------------------------------ */
/* Point sets: dense per-dimension ranks packed into sort keys               */

typedef struct pointset {
	int32_t n;
	int dims;
	uint32_t *rank;      /* n x dims, monotone in the coordinate */
	uint32_t maxrank[TP_MAX_DIMS];
	double *pos;         /* n x dims coordinates, for extents */
} pointset;

typedef struct rank_sort_ctx {
	const double *v;
	int dims, d;
} rank_sort_ctx;

static int cmp_by_coord(const void *x, const void *y, void *arg)
{
	const rank_sort_ctx *c = arg;
	double a = c->v[(int64_t)*(const int32_t *)x * c->dims + c->d];
	double b = c->v[(int64_t)*(const int32_t *)y * c->dims + c->d];
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	return *(const int32_t *)x - *(const int32_t *)y;
}

/* Ranks per dimension.  Integer coordinates in a modest range use the value
 * itself (minus the minimum); anything else is ranked by sorting. */
static int pointset_init(pointset *ps, int32_t n, int dims, const double *pos)
{
	memset(ps, 0, sizeof *ps);
	ps->n = n;
	ps->dims = dims;
	ps->pos = (double *)pos;
	ps->rank = tp__malloc_array((size_t)n * (size_t)dims, sizeof(uint32_t));
	if (!ps->rank)
		return TP_ENOMEM;
	for (int d = 0; d < dims; d++) {
		double lo = INFINITY, hi = -INFINITY;
		bool integral = true;
		for (int32_t i = 0; i < n; i++) {
			double v = pos[(int64_t)i * dims + d];
			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
			if (v != floor(v))
				integral = false;
		}
		if (n == 0)
			continue;
		if (integral && hi - lo < 4.0 * n + 1024.0 && hi - lo < 2147483647.0) {
			for (int32_t i = 0; i < n; i++)
				ps->rank[(int64_t)i * dims + d] =
					(uint32_t)(pos[(int64_t)i * dims + d] - lo);
			ps->maxrank[d] = (uint32_t)(hi - lo);
			continue;
		}
		int32_t *ord = tp__malloc_array((size_t)n, sizeof(int32_t));
		if (!ord)
			return TP_ENOMEM;
		for (int32_t i = 0; i < n; i++)
			ord[i] = i;
		rank_sort_ctx ctx = { pos, dims, d };
		qsort_r(ord, (size_t)n, sizeof(int32_t), cmp_by_coord, &ctx);
		uint32_t r = 0;
		for (int32_t i = 0; i < n; i++) {
			if (i > 0 && pos[(int64_t)ord[i] * dims + d] !=
					     pos[(int64_t)ord[i - 1] * dims + d])
				r++;
			ps->rank[(int64_t)ord[i] * dims + d] = r;
		}
		ps->maxrank[d] = r;
		free(ord);
	}
	return 0;
}

static void pointset_free(pointset *ps)
{
	free(ps->rank);
}

/* How one side orders its points at a given cut: the cut dimension first,
 * then the remaining dimensions in the variant's cyclic order, each possibly
 * reflected.  Primary rank in the high 32 bits, the others share 31 bits
 * (saturating; ties are then broken by id, which stays deterministic). */
typedef struct side_order {
	int perm[TP_MAX_DIMS];
	bool reflect[TP_MAX_DIMS];
	bool longest;            /* cut the longest extent instead of perm */
} side_order;

static inline uint32_t rank_of(const pointset *ps, const side_order *so,
			       uint32_t id, int d)
{
	uint32_t r = ps->rank[(int64_t)id * ps->dims + d];
	return so->reflect[d] ? ps->maxrank[d] - r : r;
}

static void fill_keys(const pointset *ps, const side_order *so, int level_pos,
		      int cutdim, tp__pt *p, int64_t n)
{
	int D = ps->dims;
	int others[TP_MAX_DIMS], no = 0;
	/* remaining dimensions, cyclically after the cut's place in perm */
	for (int k = 1; k < D; k++)
		others[no++] = so->perm[(level_pos + k) % D];
	int bits = no ? 31 / no : 0;
	uint32_t cap = bits >= 32 ? UINT32_MAX : ((1u << bits) - 1);
	for (int64_t i = 0; i < n; i++) {
		uint32_t id = p[i].id;
		uint64_t key = (uint64_t)rank_of(ps, so, id, cutdim) << 31;
		uint64_t low = 0;
		for (int k = 0; k < no; k++) {
			uint32_t r = rank_of(ps, so, id, others[k]);
			if (r > cap)
				r = cap;
			low = (low << bits) | r;
		}
		p[i].key = key | low;
	}
}

/* Dimension and its place in perm for a cut at this depth. */
static int cut_dim(const pointset *ps, const side_order *so, int depth,
		   const tp__pt *p, int64_t n, int *level_pos)
{
	int D = ps->dims;
	if (!so->longest) {
		*level_pos = depth % D;
		return so->perm[*level_pos];
	}
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	for (int64_t i = 0; i < n; i++) {
		const double *x = &ps->pos[(int64_t)p[i].id * D];
		for (int d = 0; d < D; d++) {
			if (x[d] < lo[d])
				lo[d] = x[d];
			if (x[d] > hi[d])
				hi[d] = x[d];
		}
	}
	int best = 0;
	for (int d = 1; d < D; d++)
		if (hi[d] - lo[d] > hi[best] - lo[best])
			best = d;
	*level_pos = best;   /* perm is the identity for the longest variant */
	return best;
}

/* ------------------------------------------------------------------------ */
/* Node side: split tree                                                     */

/* Tree encoding, depth-first: a leaf is 0; an internal node is k followed by
 * the k slot counts of its parts, then the k subtrees. */
typedef struct tree {
	int64_t *v;
	int64_t len, cap;
} tree;

static int tree_push(tree *t, int64_t x)
{
	if (t->len == t->cap) {
		int64_t nc = t->cap ? 2 * t->cap : 256;
		int64_t *nv = realloc(t->v, sizeof(int64_t) * (size_t)nc);
		if (!nv)
			return TP_ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->len++] = x;
	return 0;
}

typedef struct node_part {
	tree tr;
	int32_t *slot_node;   /* slot position -> allocation index */
	int tree_id;          /* equal trees share an id */
	side_order so;
} node_part;

typedef struct node_ctx {
	const pointset *ps;
	const side_order *so;
	const int32_t *alloc_index;  /* pointset id -> allocation index */
	int k;
	tree *tr;
	int32_t *slot_node;
	int64_t slot_pos;
} node_ctx;

static int node_rec(node_ctx *c, tp__pt *p, int64_t n, int depth)
{
	if (n == 1) {
		for (uint32_t s = 0; s < p[0].w; s++)
			c->slot_node[c->slot_pos++] = c->alloc_index[p[0].id];
		return tree_push(c->tr, 0);
	}
	int lp, d = cut_dim(c->ps, c->so, depth, p, n, &lp);
	fill_keys(c->ps, c->so, lp, d, p, n);
	uint64_t total = 0;
	for (int64_t i = 0; i < n; i++)
		total += p[i].w;
	int k = c->k < n ? c->k : (int)n;
	int64_t start[64 + 1], cnt[64];
	uint64_t done = 0;
	int64_t pos = 0;
	for (int j = 0; j < k - 1; j++) {
		/* target for the end of part j, relative to what is left */
		uint64_t target = total * (uint64_t)(j + 1) / (uint64_t)k - done;
		uint64_t wl;
		int64_t left = n - pos;
		int64_t cut = tp__wselect(p + pos, left, target, &wl);
		/* leave at least one node for each remaining part */
		int64_t maxcut = left - (k - 1 - j);
		if (cut > maxcut) {
			/* the smallest maxcut points instead */
			tp__select(p + pos, left, maxcut);
			cut = maxcut;
			wl = 0;
			for (int64_t i = 0; i < cut; i++)
				wl += p[pos + i].w;
		}
		start[j] = pos;
		cnt[j] = (int64_t)wl;
		pos += cut;
		done += wl;
	}
	start[k - 1] = pos;
	cnt[k - 1] = (int64_t)(total - done);
	start[k] = n;
	int rc = tree_push(c->tr, k);
	for (int j = 0; j < k && !rc; j++)
		rc = tree_push(c->tr, cnt[j]);
	for (int j = 0; j < k && !rc; j++)
		rc = node_rec(c, p + start[j], start[j + 1] - start[j], depth + 1);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Task side: partition into the counts of a split tree                     */

typedef struct task_ctx {
	const pointset *ps;
	const side_order *so;
	const tree *tr;
	int64_t cur;
} task_ctx;

static void task_rec(task_ctx *c, tp__pt *p, int64_t n, int depth)
{
	int64_t k = c->tr->v[c->cur++];
	if (k == 0)
		return;
	const int64_t *cnt = &c->tr->v[c->cur];
	c->cur += k;
	int lp, d = cut_dim(c->ps, c->so, depth, p, n, &lp);
	fill_keys(c->ps, c->so, lp, d, p, n);
	int64_t pos = 0;
	for (int64_t j = 0; j < k - 1; j++) {
		tp__select(p + pos, n - pos, cnt[j]);
		pos += cnt[j];
	}
	pos = 0;
	for (int64_t j = 0; j < k; j++) {
		task_rec(c, p + pos, cnt[j], depth + 1);
		pos += cnt[j];
	}
}

/* ------------------------------------------------------------------------ */
/* Closest subset (k-means), when there are more slots than tasks            */

typedef struct dist_idx {
	double d;
	int32_t i;
} dist_idx;

static int cmp_dist_idx(const void *x, const void *y)
{
	const dist_idx *a = x, *b = y;
	if (a->d < b->d)
		return -1;
	if (a->d > b->d)
		return 1;
	return a->i - b->i;
}

static double sqdist(const double *a, const double *b, int D)
{
	double s = 0;
	for (int d = 0; d < D; d++)
		s += (a[d] - b[d]) * (a[d] - b[d]);
	return s;
}

/* Choose slots so that exactly ntasks remain: k-means with a centre at every
 * bounding-box corner plus the middle (10 rounds), then for each centre the
 * nearest nodes until the tasks fit; keep the centre whose chosen nodes lie
 * closest to it in total.  slots_out[i] receives the used slots of node i. */
static int closest_subset(const tp_alloc *a, const double *pos, int D,
			  int64_t ntasks, int *slots_out)
{
	int32_t n = a->nnodes;
	int nc = (1 << D) + 1;
	double *ctr = tp__calloc((size_t)nc * (size_t)D, sizeof(double));
	double *sum = tp__calloc((size_t)nc * (size_t)D, sizeof(double));
	int64_t *cnt = tp__calloc((size_t)nc, sizeof(int64_t));
	dist_idx *di = tp__malloc_array((size_t)n, sizeof(dist_idx));
	int *best = tp__malloc_array((size_t)n, sizeof(int));
	int rc = 0;
	if (!ctr || !sum || !cnt || !di || !best) {
		rc = TP_ENOMEM;
		goto out;
	}
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	for (int32_t i = 0; i < n; i++)
		for (int d = 0; d < D; d++) {
			double v = pos[(int64_t)i * D + d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	for (int c = 0; c < nc - 1; c++)
		for (int d = 0; d < D; d++)
			ctr[c * D + d] = (c >> d) & 1 ? hi[d] : lo[d];
	for (int d = 0; d < D; d++)
		ctr[(nc - 1) * D + d] = (lo[d] + hi[d]) / 2;

	for (int it = 0; it < 10; it++) {
		memset(sum, 0, sizeof(double) * (size_t)nc * (size_t)D);
		memset(cnt, 0, sizeof(int64_t) * (size_t)nc);
		for (int32_t i = 0; i < n; i++) {
			const double *x = &pos[(int64_t)i * D];
			int bc = 0;
			double bd = sqdist(x, ctr, D);
			for (int c = 1; c < nc; c++) {
				double dd = sqdist(x, &ctr[c * D], D);
				if (dd < bd)
					bd = dd, bc = c;
			}
			cnt[bc] += a->slots[i];
			for (int d = 0; d < D; d++)
				sum[bc * D + d] += x[d] * a->slots[i];
		}
		for (int c = 0; c < nc; c++)
			if (cnt[c])
				for (int d = 0; d < D; d++)
					ctr[c * D + d] = sum[c * D + d] / (double)cnt[c];
	}

	double best_cost = INFINITY;
	for (int c = 0; c < nc; c++) {
		for (int32_t i = 0; i < n; i++) {
			di[i].d = sqrt(sqdist(&pos[(int64_t)i * D], &ctr[c * D], D));
			di[i].i = i;
		}
		qsort(di, (size_t)n, sizeof *di, cmp_dist_idx);
		double cost = 0;
		int64_t need = ntasks;
		for (int32_t j = 0; j < n && need > 0; j++) {
			int use = a->slots[di[j].i];
			if (use > need)
				use = (int)need;
			cost += di[j].d * use;
			need -= use;
		}
		if (cost < best_cost) {
			best_cost = cost;
			memset(best, 0, sizeof(int) * (size_t)n);
			need = ntasks;
			for (int32_t j = 0; j < n && need > 0; j++) {
				int use = a->slots[di[j].i];
				if (use > need)
					use = (int)need;
				best[di[j].i] = use;
				need -= use;
			}
		}
	}
	memcpy(slots_out, best, sizeof(int) * (size_t)n);
out:
	free(ctr);
	free(sum);
	free(cnt);
	free(di);
	free(best);
	return rc;
}

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

/* One unit of parallel work: a task order (or the longest variant) scored
 * against every node partition sharing its split tree. */
typedef struct work_item {
	side_order tso;
	int tree_id;
	int refl_mask;
	int tperm_idx;
} work_item;

typedef struct search {
	const tp_graph *g;
	const tp_alloc *a;
	const tp_geom_opts *o;
	pointset tasks;
	node_part *np;        /* [0] = longest; [1..] = machine permutations */
	int nnp;
	work_item *items;
	int nitems;
	int npp, nrefl;
	int nodes_dims;
	atomic_int next;
	double t0;
	/* results, guarded by mu */
	pthread_mutex_t mu;
	double best_score;
	int best_variant;
	int32_t *best_map;
	int scored;
	bool budget_hit;
	int err;
	int porig[TP_MAX_DIMS], torig[TP_MAX_DIMS];  /* kept dim -> axis */
} search;

static bool out_of_time(search *s)
{
	return s->o->time_budget_ms > 0 &&
	       tp__now_ms() - s->t0 > s->o->time_budget_ms;
}

static void run_item(search *s, const work_item *it, tp__pt *buf,
		     int32_t *map, tp_congestion_ws *ws)
{
	int32_t n = s->g->ntasks;
	/* any node partition with this tree gives the counts */
	const node_part *ref = NULL;
	for (int i = 0; i < s->nnp && !ref; i++)
		if (s->np[i].tree_id == it->tree_id)
			ref = &s->np[i];
	for (int32_t t = 0; t < n; t++) {
		buf[t].id = (uint32_t)t;
		buf[t].w = 1;
	}
	task_ctx tc = { &s->tasks, &it->tso, &ref->tr, 0 };
	task_rec(&tc, buf, n, 0);

	/* the longest task variant pairs with the longest node partition only;
	 * a permuted task variant with every machine permutation of its tree */
	for (int i = 0; i < s->nnp; i++) {
		const node_part *np = &s->np[i];
		if (it->tso.longest ? i != 0 : (i == 0 || np->tree_id != it->tree_id))
			continue;
		for (int32_t pos = 0; pos < n; pos++)
			map[buf[pos].id] = np->slot_node[pos];
		double score = tp_metrics_score(s->g, s->a, map, s->o->metric, ws);
		int variant = it->tso.longest ? 0 :
			1 + (it->tperm_idx * s->nrefl + it->refl_mask) * s->npp + (i - 1);
		pthread_mutex_lock(&s->mu);
		s->scored++;
		if (score < s->best_score ||
		    (score == s->best_score && variant < s->best_variant)) {
			s->best_score = score;
			s->best_variant = variant;
			memcpy(s->best_map, map, sizeof(int32_t) * (size_t)n);
		}
		pthread_mutex_unlock(&s->mu);
	}
}

static void *worker(void *arg)
{
	search *s = arg;
	int32_t n = s->g->ntasks;
	tp__pt *buf = tp__malloc_array((size_t)n, sizeof(tp__pt));
	int32_t *map = tp__malloc_array((size_t)n, sizeof(int32_t));
	tp_congestion_ws *ws = NULL;
	bool ok = buf && map;
	if (ok && s->o->metric == TP_METRIC_CONGESTION)
		ok = tp_congestion_ws_create(&ws, s->a->m, NULL) == 0;
	if (!ok) {
		pthread_mutex_lock(&s->mu);
		s->err = TP_ENOMEM;
		pthread_mutex_unlock(&s->mu);
	}
	while (ok) {
		int i = atomic_fetch_add(&s->next, 1);
		if (i >= s->nitems)
			break;
		/* the first item (longest variant) always runs: a result must exist */
		if (i > 0 && out_of_time(s)) {
			pthread_mutex_lock(&s->mu);
			s->budget_hit = true;
			pthread_mutex_unlock(&s->mu);
			break;
		}
		run_item(s, &s->items[i], buf, map, ws);
	}
	tp_congestion_ws_destroy(ws);
	free(buf);
	free(map);
	return NULL;
}

static const char AXES[] = "xyzuvw";

static void describe_variant(const search *s, int variant, int ntp, int nrefl,
			     int (*tperms)[TP_MAX_DIMS],
			     int (*pperms)[TP_MAX_DIMS], char *buf, size_t len)
{
	if (variant == 0) {
		snprintf(buf, len, "longest extent first");
		return;
	}
	int v = variant - 1;
	int npp = s->nnp - 1;
	int pp = v % npp;
	int rest = v / npp;
	int refl = rest % nrefl;
	int tpi = rest / nrefl;
	(void)ntp;
	char tp[8] = "", mp[8] = "", rf[16] = "";
	for (int d = 0; d < s->tasks.dims; d++)
		tp[d] = AXES[s->torig[tperms[tpi][d]]];
	for (int d = 0; d < s->nodes_dims; d++)
		mp[d] = AXES[s->porig[pperms[pp][d]]];
	int k = 0;
	for (int d = 0; d < s->tasks.dims; d++)
		if (refl >> d & 1)
			rf[k++] = AXES[s->torig[d]];
	snprintf(buf, len, "tasks %s%s%s%s -> machine %s", tp,
		 k ? " (reflect " : "", rf, k ? ")" : "", mp);
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
	const tp_machine *m = a->m;
	int32_t n = g->ntasks;
	int tdim = g->coord_dims, pdim = m->ndims;
	if (tdim <= 0)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: the pattern has no task coordinates");
	if (a->total_slots < n)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: %d tasks but the allocation has only %lld slots",
				    n, (long long)a->total_slots);
	if (opt->parts_per_level < 2 || opt->parts_per_level > 64)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: parts per level must be 2..64, not %d",
				    opt->parts_per_level);

	search s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.a = a;
	s.o = opt;
	s.t0 = t0;
	s.best_score = INFINITY;
	s.best_variant = INT32_MAX;
	pthread_mutex_init(&s.mu, NULL);

	int rc = 0, nthreads = 1, shifted = 0;
	int *shc = tp__malloc_array((size_t)a->nnodes * (size_t)pdim, sizeof(int));
	int *used = tp__malloc_array((size_t)a->nnodes, sizeof(int));
	double *npos = NULL, *pvpos = NULL, *tvpos = NULL;
	int32_t *ids = NULL;       /* pointset id -> allocation index */
	pointset nodes;
	memset(&nodes, 0, sizeof nodes);
	tp__pt *nbuf = NULL;
	int (*tperms)[TP_MAX_DIMS] = NULL, (*pperms)[TP_MAX_DIMS] = NULL;
	pthread_t th[8];
	int started = 0;
	s.best_map = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!shc || !used || !s.best_map)
		goto nomem;

	/* node coordinates: seam-shifted when asked, on wrapped dimensions */
	if (opt->seam_shift) {
		shifted = tp_geom_seam_shift(a, shc);
		if (shifted < 0)
			goto nomem;
	} else {
		for (int32_t i = 0; i < a->nnodes; i++)
			memcpy(&shc[(int64_t)i * pdim], &m->coords[(int64_t)a->node[i] * pdim],
			       sizeof(int) * (size_t)pdim);
	}

	/* slots in use: all of them, or the closest subset */
	bool subset = a->total_slots > n;
	if (subset) {
		double *allpos = tp__malloc_array((size_t)a->nnodes * (size_t)pdim, sizeof(double));
		if (!allpos)
			goto nomem;
		for (int64_t i = 0; i < (int64_t)a->nnodes * pdim; i++)
			allpos[i] = shc[i];
		rc = closest_subset(a, allpos, pdim, n, used);
		free(allpos);
		if (rc)
			goto nomem;
	} else {
		memcpy(used, a->slots, sizeof(int) * (size_t)a->nnodes);
	}
	int32_t nn = 0;
	for (int32_t i = 0; i < a->nnodes; i++)
		nn += used[i] > 0;
	npos = tp__malloc_array((size_t)nn * (size_t)pdim, sizeof(double));
	ids = tp__malloc_array((size_t)nn, sizeof(int32_t));
	nbuf = tp__malloc_array((size_t)nn, sizeof(tp__pt));
	if (!npos || !ids || !nbuf)
		goto nomem;
	for (int32_t i = 0, j = 0; i < a->nnodes; i++) {
		if (!used[i])
			continue;
		ids[j] = i;
		for (int d = 0; d < pdim; d++)
			npos[(int64_t)j * pdim + d] = shc[(int64_t)i * pdim + d];
		j++;
	}
	pvpos = project_varying(npos, nn, pdim, &pdim, s.porig);
	tvpos = project_varying(g->coords, n, tdim, &tdim, s.torig);
	if (!pvpos || !tvpos)
		goto nomem;
	if (pointset_init(&nodes, nn, pdim, pvpos) ||
	    pointset_init(&s.tasks, n, tdim, tvpos))
		goto nomem;

	s.nodes_dims = pdim;
	/* variants */
	int max_perm_t = opt->search == TP_SEARCH_NONE ? 0 : MAX_PERMS;
	tperms = calloc(MAX_PERMS, sizeof *tperms);
	pperms = calloc(MAX_PERMS, sizeof *pperms);
	if (!tperms || !pperms)
		goto nomem;
	int ntp = max_perm_t ? all_perms(tdim, tperms, MAX_PERMS) : 0;
	int npp = max_perm_t ? all_perms(pdim, pperms, MAX_PERMS) : 0;
	int nrefl = opt->search == TP_SEARCH_FULL ? 1 << tdim : 1;
	/* keep the number of task partitions bounded for many dimensions */
	while ((int64_t)ntp * nrefl > MAX_VARIANT_ITEMS && nrefl > 1)
		nrefl >>= 1;
	if ((int64_t)ntp * nrefl > MAX_VARIANT_ITEMS)
		ntp = MAX_VARIANT_ITEMS / nrefl;
	if (npp > 64)
		npp = 64;

	/* node partitions: [0] longest, then one per machine permutation */
	s.nnp = 1 + npp;
	s.np = calloc((size_t)s.nnp, sizeof *s.np);
	if (!s.np)
		goto nomem;
	for (int i = 0; i < s.nnp; i++) {
		node_part *np = &s.np[i];
		if (i == 0) {
			np->so.longest = true;
			for (int d = 0; d < pdim; d++)
				np->so.perm[d] = d;
		} else {
			memcpy(np->so.perm, pperms[i - 1], sizeof np->so.perm);
		}
		np->slot_node = tp__malloc_array((size_t)n, sizeof(int32_t));
		if (!np->slot_node)
			goto nomem;
		for (int32_t j = 0; j < nn; j++) {
			nbuf[j].id = (uint32_t)j;
			nbuf[j].w = (uint32_t)used[ids[j]];
		}
		node_ctx nc = { &nodes, &np->so, ids, opt->parts_per_level,
				&np->tr, np->slot_node, 0 };
		if (node_rec(&nc, nbuf, nn, 0))
			goto nomem;
		np->tree_id = i;
		for (int j = 0; j < i; j++)
			if (s.np[j].tr.len == np->tr.len &&
			    !memcmp(s.np[j].tr.v, np->tr.v, sizeof(int64_t) * (size_t)np->tr.len)) {
				np->tree_id = s.np[j].tree_id;
				break;
			}
	}

	/* work items: the longest variant, then one per (task permutation,
	 * reflection, distinct split tree of the machine permutations) */
	int *tree_ids = tp__malloc_array((size_t)s.nnp, sizeof(int));
	int ntrees = 0;
	if (!tree_ids)
		goto nomem;
	for (int i = 1; i < s.nnp; i++) {
		bool seen = false;
		for (int j = 0; j < ntrees; j++)
			seen |= tree_ids[j] == s.np[i].tree_id;
		if (!seen)
			tree_ids[ntrees++] = s.np[i].tree_id;
	}
	s.items = calloc((size_t)(1 + (int64_t)ntrees * ntp * nrefl), sizeof *s.items);
	if (!s.items) {
		free(tree_ids);
		goto nomem;
	}
	s.npp = npp;
	s.nrefl = nrefl;
	s.items[0].tso.longest = true;
	for (int d = 0; d < tdim; d++)
		s.items[0].tso.perm[d] = d;
	s.items[0].tree_id = s.np[0].tree_id;
	s.nitems = 1;
	for (int tpi = 0; tpi < ntp; tpi++)
		for (int r = 0; r < nrefl; r++)
			for (int t = 0; t < ntrees; t++) {
				work_item *it = &s.items[s.nitems++];
				memcpy(it->tso.perm, tperms[tpi], sizeof it->tso.perm);
				for (int d = 0; d < tdim; d++)
					it->tso.reflect[d] = (r >> d) & 1;
				it->tree_id = tree_ids[t];
				it->tperm_idx = tpi;
				it->refl_mask = r;
			}
	free(tree_ids);

	/* threads */
	if (opt->nthreads > 0) {
		nthreads = opt->nthreads;
	} else {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = cpus > 0 ? (int)cpus : 1;
	}
	if (nthreads > 8)
		nthreads = 8;
	if (nthreads > s.nitems)
		nthreads = s.nitems;
	atomic_init(&s.next, 0);
	for (started = 0; started < nthreads - 1; started++)
		if (pthread_create(&th[started], NULL, worker, &s))
			break;
	worker(&s);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (s.err || s.scored == 0)
		goto nomem;

	memcpy(map, s.best_map, sizeof(int32_t) * (size_t)n);
	if (report) {
		memset(report, 0, sizeof *report);
		report->variants_total = 1 + ntp * nrefl * npp;
		report->variants_scored = s.scored;
		report->best_variant = s.best_variant;
		describe_variant(&s, s.best_variant, ntp, nrefl, tperms, pperms,
				 report->best_desc, sizeof report->best_desc);
		report->best_score = s.best_score;
		report->budget_hit = s.budget_hit;
		report->subset_selected = subset;
		report->shifted_dims = shifted;
		report->elapsed_ms = tp__now_ms() - t0;
	}
	rc = 0;
	goto out;
nomem:
	rc = tp_error_set(err, TP_ENOMEM, "geometric mapping: out of memory");
out:
	if (s.np)
		for (int i = 0; i < s.nnp; i++) {
			free(s.np[i].tr.v);
			free(s.np[i].slot_node);
		}
	free(s.np);
	free(s.items);
	free(tperms);
	free(pperms);
	pointset_free(&nodes);
	pointset_free(&s.tasks);
	free(nbuf);
	free(npos);
	free(pvpos);
	free(tvpos);
	free(ids);
	free(shc);
	free(used);
	free(s.best_map);
	pthread_mutex_destroy(&s.mu);
	return rc;
}
