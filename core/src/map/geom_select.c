/* topoplace — deterministic quickselect and weighted quickselect. */
#include <stdlib.h>

#include "map/geom_select.h"

static inline int pt_less(const tp__pt *a, const tp__pt *b)
{
	return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static inline void pt_swap(tp__pt *a, tp__pt *b)
{
	tp__pt t = *a;
	*a = *b;
	*b = t;
}

/* Hoare partition of p[lo..hi) around the median of three; returns the
 * pivot's final index: p[lo..q) < p[q] < p(q..hi). */
static int64_t partition(tp__pt *p, int64_t lo, int64_t hi)
{
	int64_t mid = lo + (hi - lo) / 2, last = hi - 1;
	if (pt_less(&p[mid], &p[lo]))
		pt_swap(&p[mid], &p[lo]);
	if (pt_less(&p[last], &p[lo]))
		pt_swap(&p[last], &p[lo]);
	if (pt_less(&p[last], &p[mid]))
		pt_swap(&p[mid], &p[last]);
	/* p[lo] <= p[mid] <= p[last]: park the pivot at last - 1 */
	pt_swap(&p[mid], &p[last - 1]);
	tp__pt pivot = p[last - 1];
	int64_t i = lo, j = last - 1;
	for (;;) {
		while (pt_less(&p[++i], &pivot))
			;
		while (pt_less(&pivot, &p[--j]))
			;
		if (i >= j)
			break;
		pt_swap(&p[i], &p[j]);
	}
	pt_swap(&p[i], &p[last - 1]);
	return i;
}

static void insertion_sort(tp__pt *p, int64_t lo, int64_t hi)
{
	for (int64_t i = lo + 1; i < hi; i++) {
		tp__pt v = p[i];
		int64_t j = i - 1;
		while (j >= lo && pt_less(&v, &p[j])) {
			p[j + 1] = p[j];
			j--;
		}
		p[j + 1] = v;
	}
}

void tp__select(tp__pt *p, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n;
	if (k < 0 || k >= n)
		return;
	while (hi - lo > 16) {
		int64_t q = partition(p, lo, hi);
		if (q == k)
			return;
		if (k < q)
			hi = q;
		else
			lo = q + 1;
	}
	insertion_sort(p, lo, hi);
}

static int cmp_pt(const void *x, const void *y)
{
	const tp__pt *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->id < b->id ? -1 : (a->id > b->id);
}

void tp__sort(tp__pt *p, int64_t n)
{
	if (n == 2) {   /* half of all cuts end in pairs: no qsort call */
		if (pt_less(&p[1], &p[0]))
			pt_swap(&p[0], &p[1]);
		return;
	}
	if (n > 1)
		qsort(p, (size_t)n, sizeof *p, cmp_pt);
}

int64_t tp__wselect(tp__pt *p, int64_t n, uint64_t target, uint64_t *wleft)
{
	int64_t lo = 0, hi = n;
	uint64_t before = 0; /* total weight of p[0..lo) */
	int64_t pos;

	if (n < 2) {
		*wleft = n ? p[0].w : 0;
		return n;
	}
	/* Find pos such that weight(p[0..pos)) <= target < weight(p[0..pos]). */
	for (;;) {
		if (hi - lo <= 16) {
			insertion_sort(p, lo, hi);
			pos = lo;
			while (pos < hi - 1 && before + p[pos].w <= target) {
				before += p[pos].w;
				pos++;
			}
			break;
		}
		int64_t q = partition(p, lo, hi);
		uint64_t wl = 0;
		for (int64_t i = lo; i < q; i++)
			wl += p[i].w;
		if (target < before + wl) {
			hi = q;
		} else if (target < before + wl + p[q].w) {
			before += wl;
			pos = q;
			break;
		} else {
			before += wl + p[q].w;
			lo = q + 1;
		}
	}
	/* Cut before pos or after it, whichever lands nearer the target. */
	uint64_t after = before + p[pos].w;
	int64_t cut = pos;
	uint64_t w = before;
	if (after - target < target - before || pos == 0) {
		cut = pos + 1;
		w = after;
	}
	if (cut >= n) {           /* keep both sides non-empty: p[pos] is in */
		cut = pos;        /* its sorted place, so p[0..pos) are smallest */
		w = before;
	}
	*wleft = w;
	return cut;
}
