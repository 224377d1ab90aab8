/* topoplace — numbered runs of node names: "nid[000000-158975]" placed by
 * CoordOrder= is one record, not 158,976 entries of the name index.
 *
 * A run is the names prefix<v>suffix for v in lo..hi, v written with at
 * least `width` digits (Slurm's zero padding).  Runs with the same prefix
 * and suffix form a family; a name finds its family by splitting off its
 * last number, which is unambiguous because a run's prefix never ends with
 * a digit and its suffix holds none (the hostlist only offers such runs).
 * Families are kept sorted for binary search; within a family the runs are
 * sorted by lo, and marked disjoint while no two overlap (overlaps happen
 * only between widths: n[0-9] and n[00-99] name different nodes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/name_runs.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "util/digits_internal.h"

/* 10^(w-1): the smallest number written in w digits without padding
 * (10^19 for any wider w). */
static uint64_t unpadded_from(uint32_t w)
{
	return w <= 1 ? 1 : tp__pow10[(w < 20 ? w : 20) - 1];
}

/* Families up to this many are inserted anywhere without a second thought
 * (a memmove of the table each). */
#define RUNS_FAMILIES_CHEAP 64

static int fam_cmp(const struct tp__run_family *f, const char *pre,
		   size_t plen, const char *suf, size_t slen)
{
	if (f->plen != plen)
		return f->plen < plen ? -1 : 1;
	if (f->slen != slen)
		return f->slen < slen ? -1 : 1;
	int c = memcmp(f->text, pre, plen);
	return c ? c : memcmp(f->text + plen, suf, slen);
}

/* Index of the family, or -(insertion point) - 1. */
static long fam_search(const struct tp__name_runs *t, const char *pre,
		       size_t plen, const char *suf, size_t slen)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = fam_cmp(&t->f[mid], pre, plen, suf, slen);
		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

int tp__runs_family(const struct tp__name_runs *t, const char *pre,
		    size_t plen, const char *suf, size_t slen)
{
	long k = t->n ? fam_search(t, pre, plen, suf, slen) : -1;
	return k >= 0 ? (int)k : -1;
}

/* The last run of f with lo <= v, or -1. */
static long last_at_or_below(const struct tp__run_family *f, uint64_t v)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->r[mid].lo <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static bool run_names(const struct tp__run *r, uint64_t v, unsigned len)
{
	unsigned d = tp__digits_of(v);
	return v >= r->lo && v <= r->hi && len == (d > r->width ? d : r->width);
}

int32_t tp__runs_span(const struct tp__name_runs *t, int fam, uint64_t v,
		      unsigned len, uint64_t upto, uint64_t *count)
{
	*count = 0;
	if (fam < 0 || (size_t)fam >= t->n)
		return -1;
	const struct tp__run_family *f = &t->f[fam];
	long k = last_at_or_below(f, v);
	/* disjoint runs: only the last one starting at or below v can hold
	 * it; otherwise every earlier one may */
	for (long j = k; j >= 0; j--) {
		const struct tp__run *r = &f->r[j];
		if (run_names(r, v, len)) {
			/* the same digit count up to upto: the run names
			 * every number of it up to its end */
			*count = (upto < r->hi ? upto : r->hi) - v + 1;
			return r->first + (int32_t)(v - r->lo);
		}
		if (f->disjoint)
			break;
	}
	return -1;
}

bool tp__name_split(const char *name, size_t *ds, size_t *de, uint64_t *v)
{
	size_t n = strlen(name), e = n;
	while (e > 0 && (name[e - 1] < '0' || name[e - 1] > '9'))
		e--;
	if (e == 0)
		return false;
	size_t s = e;
	while (s > 0 && name[s - 1] >= '0' && name[s - 1] <= '9')
		s--;
	if (e - s > 18)
		return false;
	uint64_t x = 0;
	for (size_t i = s; i < e; i++)
		x = x * 10 + (uint64_t)(name[i] - '0');
	*ds = s;
	*de = e;
	*v = x;
	return true;
}

bool tp__hostlist_run_has(const struct tp__hostlist_run *hr, const char *name)
{
	size_t ds, de;
	uint64_t v;
	if (!tp__name_split(name, &ds, &de, &v) || ds != hr->plen ||
	    strlen(name + de) != hr->slen || memcmp(name, hr->prefix, ds) ||
	    memcmp(name + de, hr->suffix, hr->slen))
		return false;
	struct tp__run r = { hr->lo, hr->hi, hr->width, 0 };
	return run_names(&r, v, (unsigned)(de - ds));
}

void tp__hostlist_run_name(const struct tp__hostlist_run *hr, uint64_t v,
			   char *buf)
{
	snprintf(buf, TP__HOSTNAME_MAX, "%.*s%0*llu%.*s", (int)hr->plen,
		 hr->prefix, (int)hr->width, (unsigned long long)v,
		 (int)hr->slen, hr->suffix);
}

int32_t tp__runs_find(const struct tp__name_runs *t, const char *name)
{
	size_t ds, de;
	uint64_t v;
	if (!t->n || !tp__name_split(name, &ds, &de, &v))
		return -1;
	int f = tp__runs_family(t, name, ds, name + de, strlen(name + de));
	uint64_t n;
	return tp__runs_span(t, f, v, (unsigned)(de - ds), v, &n);
}

/* The first number both runs name alike, or false.  Equal widths name
 * every shared number alike; different widths only those written in at
 * least the larger width without padding. */
static bool runs_clash(const struct tp__run *a, const struct tp__run *b,
		       uint64_t *at)
{
	uint64_t lo = a->lo > b->lo ? a->lo : b->lo;
	uint64_t hi = a->hi < b->hi ? a->hi : b->hi;
	if (lo > hi)
		return false;
	if (a->width != b->width) {
		uint64_t from = unpadded_from(a->width > b->width ? a->width : b->width);
		if (from > hi)
			return false;
		if (from > lo)
			lo = from;
	}
	*at = lo;
	return true;
}

static int fam_insert(struct tp__name_runs *t, size_t at, const char *pre,
		      size_t plen, const char *suf, size_t slen)
{
	if (tp__grow((void **)&t->f, t->n, &t->cap, sizeof *t->f))
		return -1;
	char *text = malloc(plen + slen + 1);
	if (!text)
		return -1;
	memcpy(text, pre, plen);
	memcpy(text + plen, suf, slen);
	text[plen + slen] = '\0';
	memmove(&t->f[at + 1], &t->f[at], (t->n - at) * sizeof *t->f);
	t->f[at] = (struct tp__run_family){ .text = text, .plen = plen,
					    .slen = slen, .disjoint = true };
	t->n++;
	return 0;
}

bool tp__runs_appends(const struct tp__name_runs *t,
		      const struct tp__hostlist_run *hr)
{
	long k = t->n ? fam_search(t, hr->prefix, hr->plen, hr->suffix, hr->slen) : -1;
	if (k < 0)
		return t->n < RUNS_FAMILIES_CHEAP;
	const struct tp__run_family *f = &t->f[k];
	/* disjoint runs sorted by lo have their his sorted too */
	return f->disjoint && (f->n == 0 || f->r[f->n - 1].hi < hr->lo);
}

int tp__runs_add(struct tp__name_runs *t, const struct tp__hostlist_run *hr,
		 int32_t first, const char **text, int32_t *clash,
		 uint64_t *clash_v)
{
	*clash = -1;
	long k = t->n ? fam_search(t, hr->prefix, hr->plen, hr->suffix, hr->slen) : -1;
	if (k < 0) {
		k = -k - 1;
		if (fam_insert(t, (size_t)k, hr->prefix, hr->plen, hr->suffix,
			       hr->slen))
			return TP_ENOMEM;
	}
	struct tp__run_family *f = &t->f[k];
	struct tp__run nr = { hr->lo, hr->hi, hr->width, first };
	long below = last_at_or_below(f, nr.lo);
	size_t at = (size_t)(below + 1);
	/* a clash can only be with a run that overlaps: with the neighbours
	 * while the family is disjoint, else with any */
	bool overlap = false;
	size_t from = f->disjoint && at > 0 ? at - 1 : 0;
	size_t to = f->disjoint && at + 1 < f->n ? at + 1 : f->n;
	for (size_t j = from; j < to; j++) {
		uint64_t v;
		if (f->r[j].lo <= nr.hi && nr.lo <= f->r[j].hi) {
			overlap = true;
			if (runs_clash(&f->r[j], &nr, &v)) {
				*clash = f->r[j].first + (int32_t)(v - f->r[j].lo);
				*clash_v = v;
				return TP_EINVAL;
			}
		}
	}
	if (tp__grow((void **)&f->r, f->n, &f->cap, sizeof *f->r))
		return TP_ENOMEM;
	memmove(&f->r[at + 1], &f->r[at], (f->n - at) * sizeof *f->r);
	f->r[at] = nr;
	f->n++;
	if (overlap)
		f->disjoint = false;
	*text = f->text;
	return TP_OK;
}

void tp__runs_free(struct tp__name_runs *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->f[i].text);
		free(t->f[i].r);
	}
	free(t->f);
	memset(t, 0, sizeof *t);
}
