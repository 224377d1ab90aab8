/* topoplace — task graphs from JSON (json-c).
 *
 *   { "tasks": N,
 *     "edges": [ [u, v, bytes(, rounds)], ... ]  or  [ {"src": u, "dst": v, "bytes": b, "rounds": r}, ... ],
 *     "directed": false,
 *     "coords": [ [x, y, z], ... ],
 *     "exchanges": R }
 *
 * The common shape is read without json-c (tp__graph_from_json_fast);
 * anything else is fed to json_tokener in chunks.  A file is read whole,
 * once, its size bounded.  Every listed pair is volume between its two
 * tasks: pairs listed more than once (in either direction) are summed,
 * which is also what "directed": true means (u->v and v->u add up).  "exchanges": the
 * bytes are the sum of R exchanges of the pattern (a trace's run), for the
 * predicted time of one.  Keys other than the five above are ignored at the top level (room for "name", "comment", ...);
 * inside an edge object they are an error, since a misspelt "bytes" would
 * silently become 1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <stdio.h>

#include "util/util_internal.h"
#include "pattern/pattern_internal.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* "directed": true: u->v and v->u add up by design; only a repeated ordered
 * pair is a duplicate.  Sets g->merged_dups. */
static int count_directed_dups(tp_graph *g, const int32_t *u, const int32_t *v,
			       size_t ne, const char *what, tp_error *err)
{
	if (ne < 2) {
		g->merged_dups = 0;
		return 0;
	}
	uint64_t *k = tp__malloc_array(ne, sizeof *k);
	if (!k) {
		tp_graph_destroy(g);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory for %zu edges",
				    what, ne);
	}
	for (size_t i = 0; i < ne; i++)
		k[i] = ((uint64_t)(uint32_t)u[i] << 32) | (uint32_t)v[i];
	qsort(k, ne, sizeof *k, cmp_u64);
	int64_t d = 0;
	for (size_t i = 1; i < ne; i++)
		d += k[i] == k[i - 1];
	free(k);
	g->merged_dups = d;
	return 0;
}

#define JSON_MAX_BYTES TP__MAX_GRAPH_BYTES
#define JSON_CHUNK ((size_t)1 << 20)
#define JSON_DEPTH 16
#define JSON_MAX_COORD_DIMS 6

/* ---- chunked parsing ---- */

struct jparse {
	json_tokener *tok;
	json_object *root;
	const char *what;
	uint64_t total;        /* bytes fed so far */
	uint64_t lines;        /* newlines in the bytes before the current chunk */
	bool any;              /* non-whitespace seen */
	char first;            /* first non-whitespace character */
	char last;             /* last character fed */
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static uint64_t count_nl(const char *s, size_t n)
{
	uint64_t k = 0;
	for (const char *p = s, *e = s + n; (p = memchr(p, '\n', (size_t)(e - p)));
	     p++)
		k++;
	return k;
}

static int jp_init(struct jparse *jp, const char *what, tp_error *err)
{
	memset(jp, 0, sizeof *jp);
	jp->what = what;
	jp->tok = json_tokener_new_ex(JSON_DEPTH);
	if (!jp->tok)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	json_tokener_set_flags(jp->tok, JSON_TOKENER_STRICT |
				       JSON_TOKENER_ALLOW_TRAILING_CHARS);
	return 0;
}

static void jp_free(struct jparse *jp)
{
	if (jp->tok)
		json_tokener_free(jp->tok);
	if (jp->root)
		json_object_put(jp->root);
	jp->tok = NULL;
	jp->root = NULL;
}

/* Feed one chunk. */
static int jp_feed(struct jparse *jp, const char *buf, size_t len,
		   tp_error *err)
{
	if (len == 0)
		return 0;
	if (jp->total + len > JSON_MAX_BYTES)
		return tp_error_set(err, TP_EINVAL,
				    "%s: more than the 1 GiB limit for a JSON graph",
				    jp->what);
	const char *nul = memchr(buf, '\0', len);
	if (nul)
		len = (size_t)(nul - buf);   /* reported below, after what precedes */
	if (!jp->any)
		for (size_t i = 0; i < len; i++)
			if (!is_ws(buf[i])) {
				jp->any = true;
				jp->first = buf[i];
				break;
			}
	size_t used = 0;
	if (!jp->root && len > 0) {
		json_object *o = json_tokener_parse_ex(jp->tok, buf, (int)len);
		enum json_tokener_error je = json_tokener_get_error(jp->tok);
		used = json_tokener_get_parse_end(jp->tok);
		if (used > len)
			used = len;
		if (o) {
			jp->root = o;
		} else if (je != json_tokener_continue) {
			return tp_error_set(err, TP_EINVAL,
					    "%s: line %llu: JSON parse error: %s",
					    jp->what,
					    (unsigned long long)(jp->lines + count_nl(buf, used) + 1),
					    json_tokener_error_desc(je));
		} else {
			used = len;
		}
	}
	if (jp->root) {
		for (size_t i = used; i < len; i++)
			if (!is_ws(buf[i]))
				return tp_error_set(err, TP_EINVAL,
						    "%s: line %llu: unexpected data after the JSON object",
						    jp->what,
						    (unsigned long long)(jp->lines + count_nl(buf, i) + 1));
	}
	if (nul)
		return tp_error_set(err, TP_EINVAL,
				    "%s: line %llu: NUL byte in the input (byte %llu)",
				    jp->what,
				    (unsigned long long)(jp->lines + count_nl(buf, len) + 1),
				    (unsigned long long)(jp->total + len));
	jp->lines += count_nl(buf, len);
	jp->total += len;
	jp->last = buf[len - 1];
	return 0;
}

/* End of input: the root object or a precise complaint. */
static int jp_finish(struct jparse *jp, const char *empty_what, tp_error *err)
{
	if (jp->root)
		return 0;
	if (!jp->any)
		return tp_error_set(err, TP_EINVAL, "%s: %s", jp->what, empty_what);
	if (jp->first != '{')
		return tp_error_set(err, TP_EINVAL,
				    "%s: the top level is not a JSON object (expected {\"tasks\": N, \"edges\": [...]})",
				    jp->what);
	return tp_error_set(err, TP_EINVAL,
			    "%s: line %llu: unexpected end of data (truncated JSON?)",
			    jp->what,
			    (unsigned long long)(jp->lines + (jp->last == '\n' ? 0 : 1)));
}

/* ---- validation and conversion ---- */

static const char *jtype(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_string: return "a string";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	}
	return "unknown";
}

static bool is_number(json_object *o)
{
	return json_object_is_type(o, json_type_int) ||
	       json_object_is_type(o, json_type_double);
}

/* An integer value: a JSON integer, or a number with no fractional part.
 * Also used by the GPU matrix reader. */
bool tp__json_int(json_object *o, int64_t *v)
{
	if (json_object_is_type(o, json_type_int)) {
		*v = json_object_get_int64(o);
		return true;
	}
	if (json_object_is_type(o, json_type_double)) {
		double d = json_object_get_double(o);
		if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e18) {
			*v = (int64_t)d;
			return true;
		}
	}
	return false;
}

/* The JSON text of a scalar, shortened, for messages. */
static const char *jshow(json_object *o, char *buf, size_t len)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	snprintf(buf, len, "%s", s ? s : "?");
	if (strlen(buf) == len - 1 && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

/* What a value is, for "X is <desc>, expected Y": numbers as written,
 * other scalars as type and text, containers by type only. */
static const char *jdesc(json_object *o, char *buf, size_t len)
{
	char sb[40];
	switch (json_object_get_type(o)) {
	case json_type_int:
	case json_type_double:
		return jshow(o, buf, len);
	case json_type_boolean:
	case json_type_string:
		snprintf(buf, len, "%s %s", jtype(o), jshow(o, sb, sizeof sb));
		return buf;
	default:
		return jtype(o);
	}
}

static int get_task_id(json_object *o, const char *what, size_t i,
		       const char *field, int32_t ntasks, int32_t *out,
		       tp_error *err)
{
	char sb[64];
	int64_t v;
	if (!tp__json_int(o, &v))
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu: %s is %s, expected an integer task number",
				    what, i, field, jdesc(o, sb, sizeof sb));
	if (v < 0 || v >= ntasks)
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu: task %s does not exist (tasks: %ld)",
				    what, i, jshow(o, sb, sizeof sb), (long)ntasks);
	*out = (int32_t)v;
	return 0;
}

/* An edge's non-negative number, name its field ("bytes", "rounds"). */
static int get_amount(json_object *o, const char *what, size_t i,
		      const char *name, double *out, tp_error *err)
{
	char sb[64];
	if (!is_number(o))
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu: %s is %s, expected a number",
				    what, i, name, jdesc(o, sb, sizeof sb));
	double b = json_object_get_double(o);
	if (!isfinite(b))
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu: %s %s is not finite", what, i,
				    name, jshow(o, sb, sizeof sb));
	if (b < 0)
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu: %s %s is negative", what, i,
				    name, jshow(o, sb, sizeof sb));
	*out = b;
	return 0;
}

/* One edge as read: its ends, bytes and collective rounds. */
struct edge {
	int32_t u, v;
	double bytes, rounds;
};

static int read_edge(json_object *e, const char *what, size_t i,
		     int32_t ntasks, struct edge *out, tp_error *err)
{
	json_object *src = NULL, *dst = NULL, *by = NULL, *ro = NULL;
	bool has_src = false, has_dst = false;
	if (json_object_is_type(e, json_type_array)) {
		size_t k = json_object_array_length(e);
		if (k < 2 || k > 4)
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %zu has %zu elements, expected [src, dst, bytes], [src, dst, bytes, rounds] or [src, dst]",
					    what, i, k);
		src = json_object_array_get_idx(e, 0);
		dst = json_object_array_get_idx(e, 1);
		by = k >= 3 ? json_object_array_get_idx(e, 2) : NULL;
		ro = k == 4 ? json_object_array_get_idx(e, 3) : NULL;
		has_src = has_dst = true;
		if ((k >= 3 && !by) || (k == 4 && !ro))
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %zu: %s is null, expected a number",
					    what, i, k >= 3 && !by ? "bytes" : "rounds");
	} else if (json_object_is_type(e, json_type_object)) {
		struct json_object_iterator it = json_object_iter_begin(e);
		struct json_object_iterator end = json_object_iter_end(e);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);
			json_object *val = json_object_iter_peek_value(&it);
			if (!strcmp(key, "src")) {
				src = val;
				has_src = true;
			} else if (!strcmp(key, "dst")) {
				dst = val;
				has_dst = true;
			} else if (!strcmp(key, "bytes")) {
				by = val;
				if (!by)
					return tp_error_set(err, TP_EINVAL,
							    "%s: edge %zu: bytes is null, expected a number",
							    what, i);
			} else if (!strcmp(key, "rounds")) {
				ro = val;
				if (!ro)
					return tp_error_set(err, TP_EINVAL,
							    "%s: edge %zu: rounds is null, expected a number",
							    what, i);
			} else {
				return tp_error_set(err, TP_EINVAL,
						    "%s: edge %zu: unknown key \"%.40s\" (src, dst, bytes, rounds)",
						    what, i, key);
			}
		}
		if (!has_src || !has_dst)
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %zu: missing \"%s\"", what, i,
					    has_src ? "dst" : "src");
	} else {
		return tp_error_set(err, TP_EINVAL,
				    "%s: edge %zu is %s, expected [src, dst, bytes] or {\"src\": u, \"dst\": v, \"bytes\": b}",
				    what, i, jtype(e));
	}
	int rc = get_task_id(src, what, i, "src", ntasks, &out->u, err);
	if (!rc)
		rc = get_task_id(dst, what, i, "dst", ntasks, &out->v, err);
	if (!rc) {
		out->bytes = 1.0;
		if (by)
			rc = get_amount(by, what, i, "bytes", &out->bytes, err);
	}
	out->rounds = 0;
	if (!rc && ro)
		rc = get_amount(ro, what, i, "rounds", &out->rounds, err);
	/* a message count: bounded as "exchanges" is, so that their latency
	 * stays finite however many duplicates add up */
	if (!rc && out->rounds > 1e12)
		rc = tp_error_set(err, TP_EINVAL, "%s: edge %zu: rounds %g is over "
				  "1e12", what, i, out->rounds);
	return rc;
}

static int read_coords(json_object *c, const char *what, int32_t ntasks,
		       double **out, int *dims_out, tp_error *err)
{
	char sb[64];
	if (!json_object_is_type(c, json_type_array))
		return tp_error_set(err, TP_EINVAL,
				    "%s: \"coords\" is %s, expected an array with one row per task",
				    what, jtype(c));
	size_t nr = json_object_array_length(c);
	if (nr != (size_t)ntasks)
		return tp_error_set(err, TP_EINVAL,
				    "%s: \"coords\" has %zu rows, expected %ld (one per task)",
				    what, nr, (long)ntasks);
	int dims = 0;
	double *xs = NULL;
	for (size_t r = 0; r < nr; r++) {
		json_object *row = json_object_array_get_idx(c, r);
		if (!json_object_is_type(row, json_type_array)) {
			free(xs);
			return tp_error_set(err, TP_EINVAL,
					    "%s: coords row %zu is %s, expected an array of numbers",
					    what, r, jtype(row));
		}
		size_t k = json_object_array_length(row);
		if (r == 0) {
			if (k < 1 || k > JSON_MAX_COORD_DIMS)
				return tp_error_set(err, TP_EINVAL,
						    "%s: coords row 0 has %zu values, expected 1..%d",
						    what, k, JSON_MAX_COORD_DIMS);
			dims = (int)k;
			xs = tp__malloc_array(nr * k, sizeof *xs);
			if (!xs)
				return tp_error_set(err, TP_ENOMEM,
						    "%s: out of memory for coordinates",
						    what);
		} else if (k != (size_t)dims) {
			free(xs);
			return tp_error_set(err, TP_EINVAL,
					    "%s: coords row %zu has %zu values, row 0 has %d",
					    what, r, k, dims);
		}
		for (size_t d = 0; d < k; d++) {
			json_object *x = json_object_array_get_idx(row, d);
			double val = is_number(x) ? json_object_get_double(x) : NAN;
			if (!is_number(x) || !isfinite(val)) {
				free(xs);
				return tp_error_set(err, TP_EINVAL,
						    "%s: coords row %zu, value %zu is %s, expected a finite number",
						    what, r, d, jdesc(x, sb, sizeof sb));
			}
			xs[r * k + d] = val;
		}
	}
	*out = xs;
	*dims_out = dims;
	return 0;
}

/* Consumes *rootp (frees the JSON tree before the CSR is built). */
static int convert(json_object **rootp, const char *what, int64_t expect,
		   tp_graph **out, tp_error *err)
{
	json_object *root = *rootp;
	int32_t *u = NULL, *v = NULL;
	double *b = NULL, *r = NULL, *xs = NULL;
	bool any_rounds = false;
	int dims = 0, rc;
	size_t ne = 0;
	char sb[64];

	if (!json_object_is_type(root, json_type_object)) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: the top level is %s, expected an object {\"tasks\": N, \"edges\": [...]}",
				  what, jtype(root));
		goto out;
	}
	json_object *jt = NULL, *je = NULL, *jd = NULL, *jc = NULL;
	if (!json_object_object_get_ex(root, "tasks", &jt)) {
		rc = tp_error_set(err, TP_EINVAL, "%s: missing \"tasks\" (the task count)",
				  what);
		goto out;
	}
	int64_t nt;
	if (!tp__json_int(jt, &nt)) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: \"tasks\" is %s, expected a positive integer",
				  what, jdesc(jt, sb, sizeof sb));
		goto out;
	}
	if (nt < 1 || nt > INT32_MAX) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: \"tasks\" is %s, expected 1..%ld",
				  what, jshow(jt, sb, sizeof sb), (long)INT32_MAX);
		goto out;
	}
	int32_t ntasks = (int32_t)nt;
	if (expect > 0 && expect != nt) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: %ld tasks, but the job has %lld tasks", what,
				  (long)ntasks, (long long)expect);
		goto out;
	}
	if (json_object_object_get_ex(root, "directed", &jd) &&
	    !json_object_is_type(jd, json_type_boolean)) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: \"directed\" is %s, expected true or false",
				  what, jtype(jd));
		goto out;
	}
	if (json_object_object_get_ex(root, "edges", &je)) {
		if (!json_object_is_type(je, json_type_array)) {
			rc = tp_error_set(err, TP_EINVAL,
					  "%s: \"edges\" is %s, expected an array",
					  what, jtype(je));
			goto out;
		}
		ne = json_object_array_length(je);
		u = tp__malloc_array(ne, sizeof *u);
		v = tp__malloc_array(ne, sizeof *v);
		b = tp__malloc_array(ne, sizeof *b);
		r = tp__malloc_array(ne, sizeof *r);
		if (!u || !v || !b || !r) {
			rc = tp_error_set(err, TP_ENOMEM,
					  "%s: out of memory for %zu edges", what, ne);
			goto out;
		}
		for (size_t i = 0; i < ne; i++) {
			struct edge ed;
			rc = read_edge(json_object_array_get_idx(je, i), what, i,
				       ntasks, &ed, err);
			if (rc)
				goto out;
			u[i] = ed.u;
			v[i] = ed.v;
			b[i] = ed.bytes;
			r[i] = ed.rounds;
			any_rounds |= ed.rounds > 0;
		}
	}
	if (json_object_object_get_ex(root, "coords", &jc)) {
		rc = read_coords(jc, what, ntasks, &xs, &dims, err);
		if (rc)
			goto out;
	}
	double exchanges = 1;
	json_object *jx;
	if (json_object_object_get_ex(root, "exchanges", &jx)) {
		exchanges = json_object_is_type(jx, json_type_int) ||
			    json_object_is_type(jx, json_type_double)
			    ? json_object_get_double(jx) : NAN;
		if (!(exchanges >= 1 && exchanges <= 1e12)) {
			rc = tp_error_set(err, TP_EINVAL,
					  "%s: \"exchanges\" is %s, expected a number "
					  "from 1 to 1e12 (the exchanges the bytes add up)",
					  what, jshow(jx, sb, sizeof sb));
			goto out;
		}
	}
	bool directed = jd && json_object_get_boolean(jd);
	json_object_put(root);
	*rootp = root = NULL;

	tp_graph *g = NULL;
	rc = tp_graph_from_edges(&g, ntasks, (int64_t)ne, u, v, b, what, err);
	if (!rc && directed)
		rc = count_directed_dups(g, u, v, ne, what, err);
	if (!rc && any_rounds && tp__graph_add_rounds(g, ne, u, v, r)) {
		tp_graph_destroy(g);
		g = NULL;
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory for %zu edges",
				  what, ne);
	}
	if (!rc && xs) {
		rc = tp_graph_set_coords(g, dims, xs, err);
		if (rc) {
			tp_graph_destroy(g);
			g = NULL;
		}
	}
	if (!rc) {
		g->exchanges = exchanges;
		*out = g;
	}
out:
	free(u);
	free(v);
	free(b);
	free(r);
	free(xs);
	return rc;
}

/* ---- the common shape, without json-c ---- */

/* {"tasks": N, "edges": [[u, v, bytes] or [u, v], ...], "directed": B},
 * the keys in any order and each at most once, every number a plain
 * non-negative integer: what tools write for a large graph.  json-c makes
 * an object of every number: the mallocs and page faults of a few
 * megabytes of edges can take a launch's whole budget, where this reads
 * them in a small part of it.  Anything else (another key, coordinates, edge objects, fractions,
 * exponents, escapes, a value out of range, an error of any kind) is left
 * to json-c, whose messages say what is wrong: the result is the same
 * graph either way. */

struct fcur {
	const char *p, *e;
};

static void f_ws(struct fcur *c)
{
	while (c->p < c->e && is_ws(*c->p))
		c->p++;
}

static bool f_lit(struct fcur *c, char ch)
{
	f_ws(c);
	if (c->p < c->e && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A plain integer of at most maxd digits (no sign, fraction, exponent or
 * leading zero). */
static bool f_uint(struct fcur *c, int maxd, int64_t *out)
{
	f_ws(c);
	const char *q = c->p;
	int64_t v = 0;
	while (q < c->e && *q >= '0' && *q <= '9' && q - c->p <= maxd) {
		v = v * 10 + (*q - '0');
		q++;
	}
	size_t n = (size_t)(q - c->p);
	if (n == 0 || (int)n > maxd || (n > 1 && *c->p == '0') ||
	    (q < c->e && (*q == '.' || *q == 'e' || *q == 'E' || (*q >= '0' && *q <= '9'))))
		return false;
	c->p = q;
	*out = v;
	return true;
}

/* A key of plain letters, into k (cap bytes). */
static bool f_key(struct fcur *c, char *k, size_t cap)
{
	if (!f_lit(c, '"'))
		return false;
	size_t n = 0;
	while (c->p < c->e && *c->p >= 'a' && *c->p <= 'z' && n + 1 < cap)
		k[n++] = *c->p++;
	k[n] = '\0';
	if (c->p == c->e || *c->p != '"')   /* inside the string: no spaces */
		return false;
	c->p++;
	return f_lit(c, ':');
}

static bool f_word(struct fcur *c, const char *w)
{
	f_ws(c);
	size_t n = strlen(w);
	if ((size_t)(c->e - c->p) < n || memcmp(c->p, w, n))
		return false;
	c->p += n;
	return true;
}

struct fedges {
	int32_t *u, *v;
	double *b;
	size_t n, cap;
};

static bool f_edges(struct fcur *c, struct fedges *fe)
{
	if (!f_lit(c, '['))
		return false;
	if (f_lit(c, ']'))
		return true;
	do {
		int64_t x, y, w = 1;
		if (!f_lit(c, '[') || !f_uint(c, 10, &x) || !f_lit(c, ',') ||
		    !f_uint(c, 10, &y) || x > INT32_MAX || y > INT32_MAX)
			return false;
		/* bytes below 10^15: exact as doubles */
		if (f_lit(c, ',') && !f_uint(c, 15, &w))
			return false;
		if (!f_lit(c, ']'))
			return false;
		if (fe->n == fe->cap) {
			size_t cap = fe->cap;
			if (tp__grow((void **)&fe->u, fe->n, &cap, sizeof *fe->u))
				return false;
			cap = fe->cap;
			if (tp__grow((void **)&fe->v, fe->n, &cap, sizeof *fe->v))
				return false;
			cap = fe->cap;
			if (tp__grow((void **)&fe->b, fe->n, &cap, sizeof *fe->b))
				return false;
			fe->cap = cap;
		}
		fe->u[fe->n] = (int32_t)x;
		fe->v[fe->n] = (int32_t)y;
		fe->b[fe->n] = (double)w;
		fe->n++;
	} while (f_lit(c, ','));
	return f_lit(c, ']');
}

int tp__graph_from_json_fast(const char *text, size_t len, const char *what,
			     int64_t expect, tp_graph **out, tp_error *err)
{
	struct fcur c = { text, text + len };
	struct fedges fe = { 0 };
	int64_t nt = 0;
	bool has_tasks = false, has_edges = false, has_dir = false, directed = false;
	int rc = 1;
	if (!f_lit(&c, '{'))
		goto out;
	do {
		char k[16];
		if (!f_key(&c, k, sizeof k))
			goto out;
		if (!strcmp(k, "tasks") && !has_tasks) {
			has_tasks = f_uint(&c, 10, &nt);
			if (!has_tasks)
				goto out;
		} else if (!strcmp(k, "edges") && !has_edges) {
			has_edges = true;
			if (!f_edges(&c, &fe))
				goto out;
		} else if (!strcmp(k, "directed") && !has_dir) {
			has_dir = true;
			directed = f_word(&c, "true");
			if (!directed && !f_word(&c, "false"))
				goto out;
		} else {
			goto out;
		}
	} while (f_lit(&c, ','));
	if (!f_lit(&c, '}'))
		goto out;
	f_ws(&c);
	if (c.p != c.e || !has_tasks || nt < 1 || nt > INT32_MAX ||
	    (expect > 0 && expect != nt))
		goto out;
	for (size_t i = 0; i < fe.n; i++)
		if (fe.u[i] >= nt || fe.v[i] >= nt)
			goto out;
	tp_graph *g = NULL;
	rc = tp_graph_from_edges(&g, (int32_t)nt, (int64_t)fe.n, fe.u, fe.v, fe.b, what,
				 err);
	if (!rc && directed)
		rc = count_directed_dups(g, fe.u, fe.v, fe.n, what, err);
	if (!rc)
		*out = g;
out:
	free(fe.u);
	free(fe.v);
	free(fe.b);
	return rc;
}

/* The text of a JSON graph: the common shape without json-c, anything
 * else fed to json_tokener in chunks.  empty_what names empty input. */
static int parse_text(const char *text, size_t len, const char *what,
		      const char *empty_what, int64_t expect, tp_graph **out,
		      tp_error *err)
{
	int rc = len <= JSON_MAX_BYTES
			 ? tp__graph_from_json_fast(text, len, what, expect, out, err)
			 : 1;
	if (rc <= 0)
		return rc;
	struct jparse jp;
	rc = jp_init(&jp, what, err);
	for (size_t off = 0; !rc && off < len; off += JSON_CHUNK) {
		size_t n = len - off < JSON_CHUNK ? len - off : JSON_CHUNK;
		rc = jp_feed(&jp, text + off, n, err);
	}
	if (!rc)
		rc = jp_finish(&jp, empty_what, err);
	if (!rc)
		rc = convert(&jp.root, what, expect, out, err);
	jp_free(&jp);
	return rc;
}

int tp_graph_from_json_string(tp_graph **out, const char *json, size_t len,
			      const char *what, int64_t expect_ntasks,
			      tp_error *err)
{
	if (!what || !*what)
		what = "JSON graph";
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: no output graph given", what);
	*out = NULL;
	if (!json)
		len = 0;
	/* Callers may count a terminating NUL (json-c's own convention). */
	while (len > 0 && json[len - 1] == '\0')
		len--;
	return parse_text(json, len, what, "empty input", expect_ntasks, out, err);
}

int tp_graph_from_json_file(tp_graph **out, const char *path,
			    int64_t expect_ntasks, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: no output graph given",
				    path ? path : "(null)");
	*out = NULL;
	if (!path || !*path)
		return tp_error_set(err, TP_EINVAL, "JSON graph: no file name given");
	/* the whole file, once: the common shape reads it in place */
	char *buf;
	size_t len;
	int rc = tp__read_whole(path, JSON_MAX_BYTES, "a JSON graph", &buf, &len, err);
	if (rc)
		return rc;
	rc = parse_text(buf, len, path, "empty file", expect_ntasks, out, err);
	free(buf);
	return rc;
}
