/* topoplace — the GPU peer matrix: task-to-task traffic between the tasks'
 * GPU buffers (MAGC's C_gpu), sparse, read into an undirected task graph.
 *
 * JSON:  { "tasks": N, "traffic": [ [i, j, bytes], ... ] }
 * CSV:   one "i,j,bytes" per line; '#' comments, blank lines and one header
 *        line ("src,dst,bytes") allowed; the task count is the job's (or the
 *        largest index + 1 when not known).
 * The format is recognised from the first non-blank character ('{' = JSON).
 * Entries are volume from task i to task j; both directions (and repeats)
 * add up.  A task's traffic to itself, negative or non-finite bytes and task
 * numbers outside the job are errors.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "util/util_internal.h"
#include "pattern/pattern_internal.h"

struct triples {
	int64_t n, cap;
	int32_t *u, *v;
	double *b;
};

static void tr_free(struct triples *t)
{
	free(t->u);
	free(t->v);
	free(t->b);
}

static int tr_add(struct triples *t, int32_t u, int32_t v, double b)
{
	if (t->n == t->cap) {
		int64_t nc = t->cap ? t->cap * 2 : 256;
		int32_t *nu = realloc(t->u, sizeof(int32_t) * (size_t)nc);
		if (!nu)
			return -1;
		t->u = nu;
		int32_t *nv = realloc(t->v, sizeof(int32_t) * (size_t)nc);
		if (!nv)
			return -1;
		t->v = nv;
		double *nb = realloc(t->b, sizeof(double) * (size_t)nc);
		if (!nb)
			return -1;
		t->b = nb;
		t->cap = nc;
	}
	t->u[t->n] = u;
	t->v[t->n] = v;
	t->b[t->n] = b;
	t->n++;
	return 0;
}

static int check_entry(const char *what, const char *where, int64_t i,
		       int64_t j, double b, int64_t ntasks, tp_error *err)
{
	if (i < 0 || (ntasks > 0 && i >= ntasks) || i > INT32_MAX - 1)
		return tp_error_set(err, TP_EINVAL, "%s: %s: task %lld outside 0..%lld",
				    what, where, (long long)i, (long long)ntasks - 1);
	if (j < 0 || (ntasks > 0 && j >= ntasks) || j > INT32_MAX - 1)
		return tp_error_set(err, TP_EINVAL, "%s: %s: task %lld outside 0..%lld",
				    what, where, (long long)j, (long long)ntasks - 1);
	if (i == j)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %s: traffic from task %lld to itself", what,
				    where, (long long)i);
	if (!isfinite(b))
		return tp_error_set(err, TP_EINVAL, "%s: %s: bytes are not finite",
				    what, where);
	if (b < 0)
		return tp_error_set(err, TP_EINVAL, "%s: %s: negative traffic %g",
				    what, where, b);
	return 0;
}

static int from_json(const char *text, size_t len, const char *what,
		     int64_t expect, int64_t *ntasks, struct triples *t,
		     tp_error *err)
{
	json_tokener *tok = json_tokener_new_ex(16);
	if (!tok)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!root) {
		return tp_error_set(err, TP_EINVAL, "%s: JSON parse error: %s", what,
				    je == json_tokener_continue
					    ? "unexpected end of input"
					    : json_tokener_error_desc(je));
	}
	int rc = 0;
	json_object *jt = NULL, *jtr = NULL;
	int64_t n = 0;
	if (!json_object_is_type(root, json_type_object)) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: expected an object {\"tasks\": N, \"traffic\": [...]}",
				  what);
	} else if (!json_object_object_get_ex(root, "tasks", &jt) ||
		   !tp__json_int(jt, &n) || n < 1 || n > INT32_MAX) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: \"tasks\" must be a positive integer", what);
	} else if (expect > 0 && n != expect) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: GPU matrix for %lld tasks, but the job has %lld",
				  what, (long long)n, (long long)expect);
	} else if (!json_object_object_get_ex(root, "traffic", &jtr) ||
		   !json_object_is_type(jtr, json_type_array)) {
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: \"traffic\" must be an array of [i, j, bytes]", what);
	}
	size_t m = rc ? 0 : json_object_array_length(jtr);
	for (size_t k = 0; k < m && !rc; k++) {
		json_object *e = json_object_array_get_idx(jtr, k);
		char where[40];
		snprintf(where, sizeof where, "traffic[%zu]", k);
		int64_t i, j;
		json_object *jb = e && json_object_is_type(e, json_type_array) &&
					  json_object_array_length(e) == 3
				  ? json_object_array_get_idx(e, 2) : NULL;
		if (!jb || !tp__json_int(json_object_array_get_idx(e, 0), &i) ||
		    !tp__json_int(json_object_array_get_idx(e, 1), &j) ||
		    !(json_object_is_type(jb, json_type_int) ||
		      json_object_is_type(jb, json_type_double))) {
			rc = tp_error_set(err, TP_EINVAL,
					  "%s: %s: expected [i, j, bytes] with integer tasks "
					  "and a number of bytes", what, where);
			break;
		}
		double b = json_object_get_double(jb);
		rc = check_entry(what, where, i, j, b, n, err);
		if (!rc && tr_add(t, (int32_t)i, (int32_t)j, b) < 0)
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	json_object_put(root);
	*ntasks = n;
	return rc;
}

/* A CSV matrix being read. */
struct csv {
	const char *what;
	tp_error *err;
	int64_t expect, maxid;
	bool data;           /* a data line (or the header) met */
	struct triples *t;
};

/* One "i,j,bytes" line (leading blanks skipped; the first line that does
 * not start with a number, before any data, is the header). */
static int csv_line(void *arg, char *line, long number)
{
	struct csv *c = arg;
	char *p = line;
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	char where[32];
	snprintf(where, sizeof where, "line %ld", number);
	char *e1 = NULL, *e2 = NULL, *e3 = NULL;
	errno = 0;
	long long i = strtoll(p, &e1, 10);
	bool ok = e1 != p && *e1 == ',';
	long long j = ok ? strtoll(e1 + 1, &e2, 10) : 0;
	ok = ok && e2 != e1 + 1 && *e2 == ',';
	double b = ok ? strtod(e2 + 1, &e3) : 0;
	ok = ok && e3 != e2 + 1 && !errno;
	if (ok)
		while (*e3 == ' ' || *e3 == '\t' || *e3 == '\r')
			e3++;
	if (!ok || *e3) {
		if (!c->data && (*p < '0' || *p > '9') && *p != '-') {
			c->data = true;     /* one header line */
			return 0;
		}
		return tp_error_set(c->err, TP_EINVAL,
				    "%s:%ld: expected \"i,j,bytes\"", c->what, number);
	}
	c->data = true;
	int rc = check_entry(c->what, where, i, j, b, c->expect, c->err);
	if (rc)
		return rc;
	if (tr_add(c->t, (int32_t)i, (int32_t)j, b) < 0)
		return tp_error_set(c->err, TP_ENOMEM, "%s: out of memory", c->what);
	if (i > c->maxid)
		c->maxid = i;
	if (j > c->maxid)
		c->maxid = j;
	return 0;
}

/* '#' comments and blank lines; a '\' is a character. */
static const struct tp__line_format csv_format = {
	.comment = '#', .skip_blank = true,
};

static int from_csv(char *text, const char *what, int64_t expect,
		    int64_t *ntasks, struct triples *t, tp_error *err)
{
	struct csv c = { what, err, expect, -1, false, t };
	int rc = tp__each_line(text, &csv_format, what, err, csv_line, &c);
	if (rc)
		return rc;
	*ntasks = expect > 0 ? expect : c.maxid + 1;
	if (*ntasks < 1)
		return tp_error_set(err, TP_EINVAL, "%s: no traffic lines", what);
	return 0;
}

int tp_graph_from_gpu_matrix_string(tp_graph **out, const char *text,
				    size_t len, const char *what,
				    int64_t expect_ntasks, tp_error *err)
{
	*out = NULL;
	if (!what)
		what = "GPU matrix";
	if (len > TP__MAX_MATRIX_BYTES)
		return tp_error_set(err, TP_EINVAL, "%s: larger than 256 MiB", what);
	char *buf = NULL;
	int rc = tp__text_copy(text, len, what, &buf, err);
	if (rc)
		return rc;
	const char *p = buf;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	struct triples t = { 0, 0, NULL, NULL, NULL };
	int64_t ntasks = 0;
	if (!*p)
		rc = tp_error_set(err, TP_EINVAL, "%s: empty GPU matrix", what);
	else if (*p == '{')
		rc = from_json(buf, len, what, expect_ntasks, &ntasks, &t, err);
	else
		rc = from_csv(buf, what, expect_ntasks, &ntasks, &t, err);
	free(buf);
	if (!rc)
		rc = tp_graph_from_edges(out, (int32_t)ntasks, t.n, t.u, t.v, t.b,
					 what, err);
	tr_free(&t);
	return rc;
}

int tp_graph_from_gpu_matrix_file(tp_graph **out, const char *path,
				  int64_t expect_ntasks, tp_error *err)
{
	*out = NULL;
	char *buf;
	size_t len;
	int rd = tp__read_file(path, TP__MAX_MATRIX_BYTES, "a GPU matrix", &buf,
			       &len, err);
	if (rd)
		return rd;
	int rc = tp_graph_from_gpu_matrix_string(out, buf, len, path,
						 expect_ntasks, err);
	free(buf);
	return rc;
}

int tp_graph_add(const tp_graph *a, const tp_graph *b, const char *what,
		 tp_graph **out, tp_error *err)
{
	*out = NULL;
	if (a->ntasks != b->ntasks)
		return tp_error_set(err, TP_EINVAL, "%s: %ld tasks, but the graph has %ld",
				    what ? what : "graph", (long)b->ntasks,
				    (long)a->ntasks);
	int64_t m = a->nedges + b->nedges;
	int32_t *u = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	int32_t *v = tp__malloc_array((size_t)m + 1, sizeof(int32_t));
	double *w = tp__malloc_array((size_t)m + 1, sizeof(double));
	if (!u || !v || !w) {
		free(u);
		free(v);
		free(w);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	int64_t k = 0;
	const tp_graph *gs[2] = { a, b };
	for (int s = 0; s < 2; s++) {
		const tp_graph *g = gs[s];
		for (int32_t x = 0; x < g->ntasks; x++)
			for (int64_t e = g->xadj[x]; e < g->xadj[x + 1]; e++)
				if (g->adjncy[e] > x) {
					u[k] = x;
					v[k] = g->adjncy[e];
					w[k] = tp__graph_w(g, e);
					k++;
				}
	}
	int rc = tp_graph_from_edges(out, a->ntasks, k, u, v, w, what, err);
	free(u);
	free(v);
	free(w);
	if (!rc && a->coord_dims > 0) {
		const double *ac = tp_graph_coords(a);   /* a stencil's: made here */
		rc = ac ? tp_graph_set_coords(*out, a->coord_dims, ac, err)
			: tp_error_set(err, TP_ENOMEM, "%s: out of memory for coordinates",
				       what ? what : "graph");
		if (rc) {
			tp_graph_destroy(*out);
			*out = NULL;
		}
	}
	return rc;
}
