/* topoplace — the one loop over the lines of a text file.
 *
 * Every line-based reader of the core (hostfiles, GPU matrices in CSV,
 * gres.conf and nvidia-smi / rocm-smi text, slurm.conf, topology.conf)
 * cuts its text here; each states its format in a struct tp__line_format
 * (its comment character, whether double quotes shield it, Slurm's
 * continuation and escapes or none, whether blank lines reach it) instead of writing the loop again. */
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"

const char *tp__line_next(const char **at, size_t *len)
{
	const char *s = *at;
	if (!s || !*s)
		return NULL;
	const char *nl = strchr(s, '\n');
	*len = nl ? (size_t)(nl - s) : strlen(s);
	*at = nl ? nl + 1 : s + *len;
	return s;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Length of s without its trailing blanks and '\r'. */
static size_t trimmed_len(const char *s, size_t n)
{
	while (n && is_blank(s[n - 1]))
		n--;
	return n;
}

/* The comment cut from one physical line of n bytes; under Slurm's rules
 * "\#" stands for a '#' that starts none, and with quotes a comment
 * character between double quotes starts none either.  The new length. */
static size_t cut_comment(char *s, size_t n, const struct tp__line_format *f)
{
	if (!f->comment)
		return n;
	if (!f->slurm && !f->quotes) {
		char *c = memchr(s, f->comment, n);
		return c ? (size_t)(c - s) : n;
	}
	bool quoted = false;    /* each physical line starts outside quotes */
	char *w = s;
	for (char *r = s, *end = s + n; r < end; r++) {
		if (f->quotes && *r == '"')
			quoted = !quoted;
		if (f->slurm && *r == '\\' && r + 1 < end && r[1] == f->comment) {
			*w++ = f->comment;
			r++;
		} else if (*r == f->comment && !quoted) {
			break;
		} else {
			*w++ = *r;
		}
	}
	return (size_t)(w - s);
}

/* A logical line joined from '\'-continued pieces, each followed by a
 * blank as Slurm's parser joins them, and the number of its first
 * physical line (0: none begun). */
struct joined {
	char *buf;
	size_t len, cap;
	long first;
};

static bool joined_add(struct joined *j, const char *s, size_t n)
{
	size_t need = j->len + n + 2;
	if (need > j->cap) {
		size_t cap = j->cap ? j->cap : 128;
		while (cap < need)
			cap *= 2;
		char *b = realloc(j->buf, cap);
		if (!b)
			return false;
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len++] = ' ';
	j->buf[j->len] = '\0';
	return true;
}

static bool all_blank(const char *s)
{
	while (is_blank(*s))
		s++;
	return !*s;
}

/* Hands one logical line to fn, unless blank lines are skipped. */
static int hand(const struct tp__line_format *f, char *line, long number,
		tp__line_fn fn, void *arg)
{
	if (f->skip_blank && all_blank(line))
		return 0;
	return fn(arg, line, number);
}

/* The joined line handed (without its last blank unless the format
 * asks for it) and emptied. */
static int hand_joined(const struct tp__line_format *f, struct joined *j,
		       tp__line_fn fn, void *arg)
{
	if (!f->blank_after)
		j->buf[--j->len] = '\0';
	int rc = hand(f, j->buf, j->first, fn, arg);
	j->len = 0;
	j->first = 0;
	return rc;
}

int tp__each_line(char *text, const struct tp__line_format *f,
		  const char *what, tp_error *err, tp__line_fn fn, void *arg)
{
	struct joined j = { NULL, 0, 0, 0 };
	const char *at = text, *start;
	size_t n;
	long number = 0;
	int rc = 0;
	while (!rc && (start = tp__line_next(&at, &n))) {
		char *s = text + (start - text);    /* writable: the caller's */
		number++;
		n = cut_comment(s, n, f);
		if (!f->slurm) {
			s[n] = '\0';
			rc = hand(f, s, number, fn, arg);
			continue;
		}
		/* Slurm's parser joins a line ending in '\' (blanks after it
		 * ignored) with the next; the blanks before the '\' stay */
		n = trimmed_len(s, n);
		bool cont = n && s[n - 1] == '\\';
		if (cont)
			n--;
		if (!cont && !j.first && !f->blank_after) {
			s[n] = '\0';
			rc = hand(f, s, number, fn, arg);
			continue;
		}
		if (!j.first)
			j.first = number;
		if (!joined_add(&j, s, n))
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		else if (!cont || !*at)
			rc = hand_joined(f, &j, fn, arg);
	}
	free(j.buf);
	return rc;
}

/* topology.conf as slurmctld reads it. */
static const struct tp__line_format topology_conf = {
	.comment = '#', .slurm = true,
};

/* tp__each_conf_line's callbacks take the line number as an int. */
struct conf_line_call {
	int (*fn)(void *arg, char *line, int number);
	void *arg;
};

static int conf_line_call(void *arg, char *line, long number)
{
	const struct conf_line_call *c = arg;
	return c->fn(c->arg, line, (int)number);
}

int tp__each_conf_line(const char *text, const char *what, tp_error *err,
		       int (*fn)(void *arg, char *line, int number), void *arg)
{
	char *copy = strdup(text);
	if (!copy)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	struct conf_line_call c = { fn, arg };
	int rc = tp__each_line(copy, &topology_conf, what, err, conf_line_call,
			       &c);
	free(copy);
	return rc;
}
