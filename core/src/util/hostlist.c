/* topoplace — Slurm hostlist expressions, parsed in linear time and expanded
 * one name at a time (our own code; libslurm is not needed).
 *
 * Syntax (Slurm's, src/common/hostlist.c):
 *   - entries are separated by ',', ' ', '\t' or '\n' outside brackets;
 *     empty entries are skipped;
 *   - an entry is text with any number of bracket groups,
 *     "prefix[ranges]text[ranges]suffix"; a group holds a comma-separated
 *     list of N or N-M (decimal, N <= M); the names are the cartesian
 *     product of the groups;
 *   - zero padding is kept: a number is printed with at least as many
 *     digits as the N of its range was written with ("nid[008-011]" gives
 *     nid008 .. nid011, "n[8-010]" gives n8, n9, n10);
 *   - order, as Slurm's hostlist_shift() gives it: the last group varies
 *     fastest, then the first, the second, ..., the one before the last
 *     slowest (a[1-2]b[3-4]c[5-6]: a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...).
 * Stricter than Slurm, as nothing valid is lost: a '[' without ']' (Slurm
 * 22.05 adds a ']'), a ']' without '[', nested brackets, blanks, signs or
 * anything but digits, ',' and '-' inside brackets, numbers of more than 18
 * digits, control characters, bytes outside ASCII and names longer than 255
 * characters are errors.  Looser than Slurm: no limit of 65536 names per range or per
 * group (Slurm's MAX_RANGE): the caller's bound on the total applies
 * instead, so that "nid[000000-158975]" describes a whole machine.
 *
 * The count is the sum over entries of the product of the group sizes,
 * computed in 64 bits with saturation, so "a[0-65535]b[0-65535]c[0-1]"
 * (2^33 names) is refused from 27 bytes of text in microseconds.  Nothing
 * is recorded: the text is checked once, then the names are read from it
 * again one at a time, with one cursor per group of the current entry (a
 * million random nodes are half a million ranges: no 12 MB of records to
 * write first).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hostlist.h"
#include "util/util_internal.h"
#include "util/digits_internal.h"

#define MAX_DIGITS 18            /* a number below 10^18 */
#define SHOW 60                  /* characters of an entry shown in messages */

/* A group of the entry being expanded, at one of its names. */
struct hl_cursor {
	size_t lit_off, lit_len; /* text before the group */
	size_t open;             /* its first item, just after '[' */
	size_t next;             /* the item after the current one */
	bool last;               /* the current item is the group's last */
	uint64_t lo, hi, val;    /* the current item's range, and the name's
				    number in it */
	uint32_t width;          /* digits of lo as written */
};

struct tp__hostlist {
	const char *text;        /* the caller's, read in place (a hostlist of
				    a million names is 6 MB: no copy) */
	size_t maxg;             /* most groups in one entry */
	/* iteration: the current entry, and where the next one starts */
	size_t next;
	size_t ngroups;
	size_t tail_off, tail_len;   /* text after the last group */
	struct hl_cursor *c;     /* maxg of them */
	bool started, done;
};

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

struct parser {
	struct tp__hostlist *hl;
	const char *s;
	const char *what;
	tp_error *err;
};

/* The entry starting at off, up to its end (or SHOW characters). */
static int entry_len(const char *s, size_t off)
{
	size_t n = 0, depth = 0;
	while (s[off + n] && n < SHOW && (depth || !is_sep(s[off + n]))) {
		if (s[off + n] == '[')
			depth = 1;
		else if (s[off + n] == ']')
			depth = 0;
		n++;
	}
	return (int)n;
}

__attribute__((format(printf, 3, 4)))
static int bad(struct parser *p, size_t entry, const char *fmt, ...)
{
	char why[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	int n = entry_len(p->s, entry);
	return tp_error_set(p->err, TP_EINVAL,
			    "%s: malformed hostlist: %s in '%.*s%s'", p->what, why,
			    n, p->s + entry,
			    p->s[entry + (size_t)n] && !is_sep(p->s[entry + (size_t)n])
				    ? "..." : "");
}

static int oom(struct parser *p)
{
	return tp_error_set(p->err, TP_ENOMEM, "%s: out of memory", p->what);
}

/* A decimal number at *pos: its value and digit count (0: none). */
static unsigned number(const char *s, size_t *pos, uint64_t *v)
{
	unsigned nd = 0;
	uint64_t x = 0;
	while (is_digit(s[*pos])) {
		if (nd < MAX_DIGITS + 1)
			x = x * 10 + (uint64_t)(s[*pos] - '0');
		nd++;
		(*pos)++;
	}
	*v = x;
	return nd;
}

/* An item of a group at *pos, "N" or "N-M": its bounds and their digit
 * counts (0: no number there); *pos ends just after it. */
static void item_at(const char *s, size_t *pos, uint64_t *lo, uint64_t *hi,
		    unsigned *nd, unsigned *nd2)
{
	*nd = *nd2 = number(s, pos, lo);
	*hi = *lo;
	if (s[*pos] == '-') {
		(*pos)++;
		*nd2 = number(s, pos, hi);
	}
}

/* One bracket group; *pos is just after '['.  Adds its ranges, returns its
 * name count in *count and the widest number it prints in *width. */
static int group(struct parser *p, size_t entry, size_t *pos, uint64_t *count,
		 size_t *width)
{
	const char *s = p->s;
	*count = 0;
	*width = 0;
	for (;;) {
		size_t item = *pos;
		uint64_t lo, hi;
		unsigned nd, nd2;
		item_at(s, pos, &lo, &hi, &nd, &nd2);
		char c = s[*pos];
		if (c != ',' && c != ']') {
			if (!c)
				return bad(p, entry, "unbalanced brackets");
			if (c == '[')
				return bad(p, entry, "nested brackets");
			size_t e = *pos;
			while (s[e] && s[e] != ',' && s[e] != ']' && e - item < SHOW)
				e++;
			return bad(p, entry, "bad range '%.*s'", (int)(e - item), s + item);
		}
		if (!nd || !nd2)
			return bad(p, entry, "bad range '%.*s'", (int)(*pos - item),
				   s + item);
		if (nd > MAX_DIGITS || nd2 > MAX_DIGITS)
			return bad(p, entry, "bad range '%.*s' (more than %d digits)",
				   (int)(*pos - item > SHOW ? SHOW : *pos - item),
				   s + item, MAX_DIGITS);
		if (lo > hi)
			return bad(p, entry, "bad range '%.*s' (decreasing)",
				   (int)(*pos - item), s + item);
		*count = sat_add(*count, hi - lo + 1);
		size_t w = tp__digits_of(hi);
		if (w < nd)
			w = nd;
		if (w > *width)
			*width = w;
		(*pos)++;
		if (c == ']')
			return TP_OK;
	}
}

/* One entry starting at *pos (not a separator); adds its count to *total. */
static int entry(struct parser *p, size_t *pos, uint64_t *total)
{
	struct tp__hostlist *hl = p->hl;
	const char *s = p->s;
	size_t start = *pos, lit = *pos, len = 0, ng = 0;
	uint64_t count = 1;
	for (;;) {
		char c = s[*pos];
		if (!c || is_sep(c))
			break;
		if (c == '[') {
			ng++;
			len += *pos - lit;
			(*pos)++;
			uint64_t n;
			size_t w;
			int rc = group(p, start, pos, &n, &w);
			if (rc)
				return rc;
			count = sat_mul(count, n);
			len += w;
			lit = *pos;
			continue;
		}
		if (c == ']')
			return bad(p, start, "unbalanced brackets");
		if ((unsigned char)c < 0x20 || c == 0x7f)
			return bad(p, start, "control character 0x%02x", (unsigned)c);
		if ((unsigned char)c >= 0x80)
			return bad(p, start, "non-ASCII byte 0x%02x",
				   (unsigned)(unsigned char)c);
		(*pos)++;
	}
	len += *pos - lit;
	if (len >= TP__HOSTNAME_MAX)
		return bad(p, start, "names longer than %d characters",
			   TP__HOSTNAME_MAX - 1);
	if (ng > hl->maxg)
		hl->maxg = ng;
	*total = sat_add(*total, count);
	return TP_OK;
}

void tp__hostlist_free(struct tp__hostlist *hl)
{
	if (!hl)
		return;
	free(hl->c);
	free(hl);
}

int tp__hostlist_parse(const char *text, const char *what, int64_t max_names,
		       const char *bound_what, struct tp__hostlist **out,
		       int64_t *count, tp_error *err)
{
	if (!what)
		what = "hostlist";
	*out = NULL;
	*count = 0;
	if (!text)
		return tp_error_set(err, TP_EINVAL, "%s: no hostlist", what);
	struct tp__hostlist *hl = calloc(1, sizeof *hl);
	if (!hl)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	hl->text = text;
	struct parser p = { hl, hl->text, what, err };
	uint64_t total = 0;
	size_t pos = 0;
	int rc = TP_OK;
	while (rc == TP_OK) {
		while (is_sep(p.s[pos]))
			pos++;
		if (!p.s[pos])
			break;
		rc = entry(&p, &pos, &total);
	}
	if (rc == TP_OK && total > (uint64_t)(max_names < 0 ? 0 : max_names)) {
		char n[32];
		if (total == UINT64_MAX)
			snprintf(n, sizeof n, "more than %llu",
				 (unsigned long long)(UINT64_MAX - 1));
		else
			snprintf(n, sizeof n, "%llu", (unsigned long long)total);
		rc = tp_error_set(err, TP_EINVAL, "%s: %s names, more than %lld (%s)",
				  what, n, (long long)max_names,
				  bound_what ? bound_what : "the limit");
	}
	if (rc == TP_OK && hl->maxg &&
	    !(hl->c = tp__malloc_array(hl->maxg, sizeof *hl->c)))
		rc = oom(&p);
	if (rc) {
		tp__hostlist_free(hl);
		return rc;
	}
	*out = hl;
	*count = (int64_t)total;
	return TP_OK;
}

/* The item of a group at text offset at (checked by the parse): its
 * range, the number at its start. */
static void item_read(const char *s, size_t at, struct hl_cursor *c)
{
	unsigned nd, nd2;
	item_at(s, &at, &c->lo, &c->hi, &nd, &nd2);
	c->val = c->lo;
	c->width = nd;
	c->last = s[at] == ']';
	c->next = at + 1;
}

/* The next entry, its groups at their first names; false at the end. */
static bool entry_load(struct tp__hostlist *hl)
{
	const char *s = hl->text;
	size_t pos = hl->next;
	while (is_sep(s[pos]))
		pos++;
	if (!s[pos])
		return false;
	size_t lit = pos, ng = 0;
	while (s[pos] && !is_sep(s[pos])) {
		if (s[pos] != '[') {
			pos++;
			continue;
		}
		struct hl_cursor *c = &hl->c[ng++];
		c->lit_off = lit;
		c->lit_len = pos - lit;
		c->open = pos + 1;
		item_read(s, c->open, c);
		pos = (size_t)(strchr(s + pos, ']') - s) + 1;
		lit = pos;
	}
	hl->ngroups = ng;
	hl->tail_off = lit;
	hl->tail_len = pos - lit;
	hl->next = pos;
	return true;
}

/* Step group i of the current entry; true when it wrapped around. */
static bool group_step(struct tp__hostlist *hl, size_t i)
{
	struct hl_cursor *c = &hl->c[i];
	if (c->val < c->hi) {
		c->val++;
		return false;
	}
	bool wrap = c->last;
	item_read(hl->text, wrap ? c->open : c->next, c);
	return wrap;
}

/* Advance to the next name: the last group fastest, then the first, the
 * second, ... (Slurm's order).  False past the end of the entry. */
static bool entry_step(struct tp__hostlist *hl)
{
	size_t ng = hl->ngroups;
	if (ng == 0)
		return false;
	if (!group_step(hl, ng - 1))
		return true;
	for (size_t i = 0; i + 1 < ng; i++)
		if (!group_step(hl, i))
			return true;
	return false;
}

/* Move to the next name; false at the end. */
static bool advance(struct tp__hostlist *hl)
{
	if (hl->done)
		return false;
	if (hl->started && entry_step(hl))
		return true;
	hl->started = true;
	if (entry_load(hl))
		return true;
	hl->done = true;
	return false;
}

static void emit(const struct tp__hostlist *hl, char *buf)
{
	char *b = buf;
	for (size_t i = 0; i < hl->ngroups; i++) {
		const struct hl_cursor *c = &hl->c[i];
		memcpy(b, hl->text + c->lit_off, c->lit_len);
		b = tp__put_num(b + c->lit_len, c->val, c->width);
	}
	memcpy(b, hl->text + hl->tail_off, hl->tail_len);
	b[hl->tail_len] = '\0';
}

int tp__hostlist_next(struct tp__hostlist *hl, char *buf)
{
	if (!hl || !advance(hl))
		return 0;
	emit(hl, buf);
	return 1;
}

static bool has_digit(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_digit(s[i]))
			return true;
	return false;
}

int tp__hostlist_next_run(struct tp__hostlist *hl, char *buf,
			  uint64_t min_len, struct tp__hostlist_run *run)
{
	if (!hl || !advance(hl))
		return 0;
	if (hl->ngroups == 1) {
		struct hl_cursor *c = &hl->c[0];
		const char *pre = hl->text + c->lit_off, *suf = hl->text + hl->tail_off;
		if (c->val == c->lo && (min_len <= 1 || c->hi - c->lo >= min_len - 1) &&
		    !(c->lit_len && is_digit(pre[c->lit_len - 1])) &&
		    !has_digit(suf, hl->tail_len)) {
			*run = (struct tp__hostlist_run){ pre, suf, c->lit_len,
							  hl->tail_len, c->lo,
							  c->hi, c->width };
			/* the range's last name counts as given */
			c->val = c->hi;
			return 2;
		}
	}
	emit(hl, buf);
	return 1;
}
