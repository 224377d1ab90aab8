/* topoplace — node names back into a Slurm hostlist: "node[01-04,09],login1".
 *
 * Each name splits into a prefix and its trailing digits.  Numbers written
 * with a leading zero are padded: those of one prefix and one digit count,
 * with the unpadded numbers of that count ("n01" .. "n10"), share a bracket
 * printed at that width; the other unpadded numbers of a prefix share one
 * bracket printed as they are ("n9", "n10").  So every name comes back
 * exactly.  Consecutive numbers become ranges; names without trailing
 * digits (or with more than 18) stand alone.  The result is sorted by
 * prefix, width and number, deterministic whatever the input order, and
 * expands (tp__hostlist_parse) to exactly the names given. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "util/hostlist.h"

struct split {
	const char *name;
	size_t plen;       /* prefix length */
	int width;         /* trailing digits, 0: none */
	int pad;           /* printed width: width when padded, else 0 */
	bool lead0;        /* written with a leading zero */
	uint64_t num;
};

static void split_name(const char *name, struct split *s)
{
	size_t len = strlen(name), i = len;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	s->name = name;
	s->plen = i;
	s->width = (int)(len - i);
	s->lead0 = s->width > 1 && name[i] == '0';
	s->num = 0;
	if (s->width > 18) {   /* beyond uint64: the name stands alone */
		s->plen = len;
		s->width = 0;
	}
	for (size_t k = s->plen; k < len; k++)
		s->num = s->num * 10 + (uint64_t)(name[k] - '0');
}

static int cmp_prefix(const struct split *a, const struct split *b)
{
	size_t n = a->plen < b->plen ? a->plen : b->plen;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	return a->plen < b->plen ? -1 : a->plen > b->plen;
}

/* By prefix, digit count, number: the same name compares equal. */
static int cmp_split(const void *pa, const void *pb)
{
	const struct split *a = pa, *b = pb;
	int c = cmp_prefix(a, b);
	if (c)
		return c;
	if (a->width != b->width)
		return a->width < b->width ? -1 : 1;
	return a->num < b->num ? -1 : a->num > b->num;
}

/* By prefix, printed width, number: the order of the output. */
static int cmp_group(const void *pa, const void *pb)
{
	const struct split *a = pa, *b = pb;
	int c = cmp_prefix(a, b);
	if (c)
		return c;
	if (a->pad != b->pad)
		return a->pad < b->pad ? -1 : 1;
	if (!a->width != !b->width)
		return a->width ? 1 : -1;
	return a->num < b->num ? -1 : a->num > b->num;
}

static bool same_group(const struct split *a, const struct split *b)
{
	return a->width && b->width && a->pad == b->pad && !cmp_prefix(a, b);
}

/* s[0..n) sorted by cmp_split: a run of one prefix and digit count is
 * padded when any of it has a leading zero. */
static void set_pads(struct split *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool lead0 = false;
		while (j < n && s[j].width == s[i].width && !cmp_prefix(&s[i], &s[j]))
			lead0 |= s[j++].lead0;
		for (size_t k = i; k < j; k++)
			s[k].pad = lead0 ? s[k].width : 0;
		i = j;
	}
}

/* A growing string; NULL data after a failed append. */
struct sbuf {
	char *data;
	size_t len, cap;
	bool failed;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->len + n + 1)
			nc *= 2;
		char *d = realloc(b->data, nc);
		if (!d) {
			b->failed = true;
			return;
		}
		b->data = d;
		b->cap = nc;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void put_num(struct sbuf *b, uint64_t v, int width)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%0*llu", width, (unsigned long long)v);
	put(b, tmp, (size_t)n);
}

/* One group s[0..n): "prefix12" or "prefix[01-04,09]". */
static void put_group(struct sbuf *b, const struct split *s, size_t n)
{
	put(b, s[0].name, s[0].plen);
	if (n == 1) {
		put_num(b, s[0].num, s[0].pad);
		return;
	}
	put(b, "[", 1);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && s[j + 1].num == s[j].num + 1)
			j++;
		if (i)
			put(b, ",", 1);
		put_num(b, s[i].num, s[i].pad);
		if (j > i) {
			put(b, "-", 1);
			put_num(b, s[j].num, s[j].pad);
		}
		i = j + 1;
	}
	put(b, "]", 1);
}

int tp__hostlist_format(const char *const *names, size_t n, char **out)
{
	*out = NULL;
	struct split *s = tp__malloc_array(n + 1, sizeof *s);
	if (!s)
		return TP_ENOMEM;
	for (size_t i = 0; i < n; i++)
		split_name(names[i], &s[i]);
	qsort(s, n, sizeof *s, cmp_split);
	size_t m = 0;   /* the same name twice: once is enough */
	for (size_t i = 0; i < n; i++)
		if (!m || cmp_split(&s[i], &s[m - 1]))
			s[m++] = s[i];
	n = m;
	set_pads(s, n);
	qsort(s, n, sizeof *s, cmp_group);
	struct sbuf b = { NULL, 0, 0, false };
	put(&b, "", 0);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && same_group(&s[i], &s[j]))
			j++;
		if (b.len)
			put(&b, ",", 1);
		if (s[i].width)
			put_group(&b, &s[i], j - i);
		else
			put(&b, s[i].name, strlen(s[i].name));
		i = j;
	}
	free(s);
	if (b.failed) {
		free(b.data);
		return TP_ENOMEM;
	}
	*out = b.data;
	return TP_OK;
}
