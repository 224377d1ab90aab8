/* topoplace — the nearest free node by shells of routers (free_shells.h). */
#include "map/free_shells.h"

#include <stdlib.h>

#include "net/machine_internal.h"
#include "util/util_internal.h"
#include "net/network.h"

struct tp__free_shells {
	const struct tp_machine *m;
	const int *free;
	int nd;
	int64_t stride[TP_MAX_DIMS];
	int32_t *start;          /* router -> its first node in `nodes` */
	int32_t *nodes;          /* the nodes by router, each router's in index order */
	int32_t *at;             /* router -> its lowest free node, -1 */
	int32_t *router;         /* node -> its router */
};

tp__free_shells *tp__free_shells_create(const struct tp_machine *m, const int *rc,
					const int *slots_free, int32_t nn)
{
	if (!m->plain_hops)
		return NULL;
	int64_t routers = 1;
	for (int d = 0; d < m->ndims; d++) {
		routers *= m->dims[d];
		if (routers > (int64_t)1 << 26)
			return NULL;
	}
	tp__free_shells *s = tp__calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->m = m;
	s->free = slots_free;
	s->nd = m->ndims;
	for (int d = 0, st = 1; d < s->nd; st *= m->dims[d], d++)
		s->stride[d] = st;
	s->start = tp__calloc((size_t)routers + 1, sizeof(int32_t));
	s->at = tp__malloc_array((size_t)routers, sizeof(int32_t));
	s->nodes = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	s->router = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	if (!s->start || !s->at || !s->nodes || !s->router) {
		tp__free_shells_destroy(s);
		return NULL;
	}
	for (int32_t i = 0; i < nn; i++) {
		int64_t r = 0;
		for (int d = 0; d < s->nd; d++)
			r += rc[(size_t)i * (size_t)s->nd + (size_t)d] * s->stride[d];
		s->router[i] = (int32_t)r;
		s->start[r + 1]++;
	}
	for (int64_t r = 0; r < routers; r++) {
		s->start[r + 1] += s->start[r];
		s->at[r] = -1;
	}
	for (int32_t i = 0; i < nn; i++) {   /* counting sort: index order kept */
		int32_t r = s->router[i];
		s->nodes[s->start[r]++] = i;
	}
	for (int64_t r = routers; r > 0; r--)
		s->start[r] = s->start[r - 1];
	s->start[0] = 0;
	for (int32_t i = nn - 1; i >= 0; i--)
		if (slots_free[i] > 0)
			s->at[s->router[i]] = i;
	return s;
}

void tp__free_shells_destroy(tp__free_shells *s)
{
	if (!s)
		return;
	free(s->start);
	free(s->nodes);
	free(s->at);
	free(s->router);
	free(s);
}

void tp__free_shells_taken(tp__free_shells *s, int32_t i)
{
	int32_t r = s->router[i];
	if (s->free[i] > 0 || s->at[r] != i)
		return;
	s->at[r] = -1;
	for (int32_t k = s->start[r]; k < s->start[r + 1]; k++)
		if (s->free[s->nodes[k]] > 0) {
			s->at[r] = s->nodes[k];
			break;
		}
}

/* One walk: the routers at exactly `left` more hops over dimensions d..,
 * router id so far `id`. */
struct walk {
	const tp__free_shells *s;
	const int *p;
	int64_t reach[TP_MAX_DIMS + 1];   /* most hops dimensions d.. can add */
	int32_t best;
	int64_t read, max_read;
};

static bool walk(struct walk *w, int d, int64_t left, int64_t id)
{
	const tp__free_shells *s = w->s;
	if (d == s->nd) {
		int32_t i = s->at[id];
		if (i >= 0 && (w->best < 0 || i < w->best))
			w->best = i;
		return ++w->read < w->max_read;
	}
	if (left > w->reach[d])
		return true;
	const struct tp_machine *m = s->m;
	int D = m->dims[d], x = w->p[d];
	for (int64_t h = 0; h <= left; h++) {
		if (left - h > w->reach[d + 1])
			continue;
		/* the coordinates h hops away on this dimension: one or two */
		int c[2], n = 0;
		if (m->wrap[d]) {
			if (2 * h > D)
				break;
			c[n++] = (int)((x + h) % D);
			if (h > 0 && 2 * h != D)
				c[n++] = (int)((x - h + D) % D);
		} else {
			if (x + h < D)
				c[n++] = (int)(x + h);
			if (h > 0 && x - h >= 0)
				c[n++] = (int)(x - h);
			if (n == 0)
				break;
		}
		for (int k = 0; k < n; k++)
			if (!walk(w, d + 1, left - h, id + c[k] * s->stride[d]))
				return false;
	}
	return true;
}

bool tp__free_shells_nearest(const tp__free_shells *s, const int *p, int32_t *best,
			     int64_t *best_d, int64_t max_routers)
{
	struct walk w = { .s = s, .p = p, .max_read = max_routers };
	w.reach[s->nd] = 0;
	for (int d = s->nd - 1; d >= 0; d--) {
		int D = s->m->dims[d];
		int64_t far = s->m->wrap[d] ? D / 2 : (p[d] > D - 1 - p[d] ? p[d] : D - 1 - p[d]);
		w.reach[d] = w.reach[d + 1] + far;
	}
	/* shells out to the best's distance: a nearer node wins, one as near
	 * only on a lower index */
	for (int64_t r = 0; r <= *best_d && r <= w.reach[0]; r++) {
		w.best = -1;
		bool done = walk(&w, 0, r, 0);
		if (w.best >= 0 && (r < *best_d || w.best < *best)) {
			*best = w.best;
			*best_d = r;
		}
		if (!done)
			return false;
	}
	return true;
}
