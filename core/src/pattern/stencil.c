/* topoplace — stencil task graphs from a spec string such as
 * "64x32x32:7pt:periodic=x:bytes=4096:weights=2,1,1".
 *
 * The CSR is built directly, row by row, without an intermediate edge list:
 * for every task the stencil offsets are applied to its grid position (with
 * wrap-around on periodic axes), targets equal to the task itself are dropped
 * (periodic axis of extent 1) and offsets that land on the same task are
 * summed (periodic axis of extent 2: +1 and -1 are the same neighbour).  That
 * is exactly the graph tp_graph_from_edges() would build from the list "every
 * task, every offset", with duplicates summed.
 *
 * A 2-D grid is handled as a 3-D grid of depth 1 without wrap, so the same
 * code serves 5pt/9pt and 7pt/27pt.  Tasks are numbered x fastest;
 * order=mpi takes the dimensions as MPI_Cart_create's, the last fastest.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "pattern/pattern_internal.h"

#define SPEC_SHOW "%.120s"     /* how much of a spec to echo in messages */

enum { MAX_OFFS = 26 };

struct stencil {
	int ndims;               /* 2 or 3 */
	int ext[3];              /* extents, ext[2] = 1 for 2-D */
	bool wrap[3];
	int points;              /* 5, 7, 9, 27 */
	double bytes;
	bool bytes_given;        /* bytes= in the spec */
	double weight[3];
	bool mpi_order;          /* order=mpi: the dimensions as written are
				    MPI_Cart_create's, the last fastest */
	/* offsets in lexicographic (dz, dy, dx) order; off[k] = -off[nk-1-k] */
	int noffs;
	int off[MAX_OFFS][3];
	double offw[MAX_OFFS];
};

static const char axis_name[3] = { 'x', 'y', 'z' };

/* ---- spec parsing ---- */

/* Parse a positive decimal integer <= INT32_MAX from [s, s+len). */
static bool parse_extent(const char *s, size_t len, long long *out)
{
	if (len == 0)
		return false;
	long long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v <= INT32_MAX)   /* saturate: the caller reports overflow */
			v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Parse a finite number > 0 that is exactly [s, s+len): no fixed buffer,
 * so a long value is read whole and anything after the number is junk. */
static bool parse_positive(const char *s, size_t len, double *out)
{
	if (!len || (*s != '.' && (*s < '0' || *s > '9')))
		return false;   /* no sign, no leading space, no "inf"/"nan" */
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end != s + len || errno == ERANGE || !isfinite(v) || !(v > 0))
		return false;
	*out = v;
	return true;
}

static int parse_dims(struct stencil *st, const char *spec, const char *f,
		      size_t flen, tp_error *err)
{
	long long ext[4];
	int nd = 0;
	const char *p = f, *end = f + flen;
	for (;;) {
		const char *q = p;
		while (q < end && *q != 'x' && *q != 'X')
			q++;
		if (nd == 3)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": more than 3 dimensions (use NxM or NxMxK)",
					    spec);
		if (!parse_extent(p, (size_t)(q - p), &ext[nd]))
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": dimension %d (%c) '%.*s' is not a positive integer",
					    spec, nd + 1, axis_name[nd],
					    (int)(q - p > 40 ? 40 : q - p), p);
		if (ext[nd] == 0)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": dimension %d (%c) is zero",
					    spec, nd + 1, axis_name[nd]);
		nd++;
		if (q == end)
			break;
		p = q + 1;
	}
	if (nd < 2)
		return tp_error_set(err, TP_EINVAL,
				    "stencil '" SPEC_SHOW "'" ": %d dimension, expected 2 or 3 (NxM or NxMxK)",
				    spec, nd);
	long long prod = 1;
	for (int d = 0; d < nd; d++) {
		if (ext[d] > INT32_MAX || prod > INT32_MAX / ext[d]) {
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": too many tasks (more than %ld)",
					    spec, (long)INT32_MAX);
		}
		prod *= ext[d];
	}
	st->ndims = nd;
	for (int d = 0; d < 3; d++)
		st->ext[d] = d < nd ? (int)ext[d] : 1;
	return 0;
}

static int parse_periodic(struct stencil *st, const char *spec,
			  const char *val, tp_error *err)
{
	if (!strcmp(val, "all")) {
		for (int d = 0; d < st->ndims; d++)
			st->wrap[d] = true;
		return 0;
	}
	if (!strcmp(val, "none"))
		return 0;
	if (!*val)
		return tp_error_set(err, TP_EINVAL,
				    "stencil '" SPEC_SHOW "'" ": periodic= needs axes (x, y, z, all or none)",
				    spec);
	for (const char *c = val; *c; c++) {
		if (*c == ',')
			continue;
		int d = *c == 'x' ? 0 : *c == 'y' ? 1 : *c == 'z' ? 2 : -1;
		if (d < 0)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": periodic=%.40s: unknown axis '%c' (use x, y, z, all or none)",
					    spec, val, *c);
		if (d >= st->ndims)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": periodic=%.40s: axis %c, but the grid has only %d dimensions",
					    spec, val, *c, st->ndims);
		if (st->wrap[d])
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": periodic=%.40s: axis %c given twice",
					    spec, val, *c);
		st->wrap[d] = true;
	}
	return 0;
}

static int parse_weights(struct stencil *st, const char *spec,
			 const char *val, tp_error *err)
{
	int n = 0;
	const char *p = val;
	for (;;) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (n == st->ndims)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": weights=%.60s: more values than the grid's %d dimensions",
					    spec, val, st->ndims);
		if (!parse_positive(p, len, &st->weight[n]))
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": weights=%.60s: value %d '%.*s%s' is not a positive number",
					    spec, val, n + 1, len > 40 ? 40 : (int)len, p,
					    len > 40 ? "..." : "");
		n++;
		if (!q)
			break;
		p = q + 1;
	}
	if (n != st->ndims)
		return tp_error_set(err, TP_EINVAL,
				    "stencil '" SPEC_SHOW "'" ": weights=%.60s: %d values, but the grid has %d dimensions",
				    spec, val, n, st->ndims);
	return 0;
}

/* The ":field:field" part of the spec, split in place (a copy of any
 * length: no field is cut). */
static int parse_fields(struct stencil *st, const char *spec, char *p,
			tp_error *err)
{
	bool seen_periodic = false, seen_bytes = false, seen_weights = false,
	     seen_order = false;
	char *cur = *p == ':' ? p + 1 : NULL;
	while (cur) {
		int rc = 0;
		size_t len = strcspn(cur, ":");
		if (len == 0)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": empty field", spec);
		char *field = cur;
		cur = field[len] == ':' ? field + len + 1 : NULL;
		field[len] = '\0';

		char *eq = strchr(field, '=');
		if (!eq) {
			int pts = !strcmp(field, "5pt") ? 5 :
				  !strcmp(field, "7pt") ? 7 :
				  !strcmp(field, "9pt") ? 9 :
				  !strcmp(field, "27pt") ? 27 : 0;
			if (!pts)
				return tp_error_set(err, TP_EINVAL,
						    "stencil '" SPEC_SHOW "'" ": unknown field '%s' (points: 5pt, 9pt, 7pt, 27pt; options: periodic=, bytes=, weights=, order=)",
						    spec, field);
			if (st->points)
				return tp_error_set(err, TP_EINVAL,
						    "stencil '" SPEC_SHOW "'" ": stencil points given twice",
						    spec);
			int want = (pts == 5 || pts == 9) ? 2 : 3;
			if (want != st->ndims)
				return tp_error_set(err, TP_EINVAL,
						    "stencil '" SPEC_SHOW "'" ": %s needs a %d-D grid, this one is %d-D (use %s)",
						    spec, field, want, st->ndims,
						    st->ndims == 2 ? "5pt or 9pt" : "7pt or 27pt");
			st->points = pts;
			continue;
		}
		*eq = '\0';
		const char *key = field, *val = eq + 1;
		bool *seen;
		if (!strcmp(key, "periodic"))
			seen = &seen_periodic;
		else if (!strcmp(key, "bytes"))
			seen = &seen_bytes;
		else if (!strcmp(key, "weights"))
			seen = &seen_weights;
		else if (!strcmp(key, "order"))
			seen = &seen_order;
		else
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": unknown option '%s' (periodic=, bytes=, weights=, order=)",
					    spec, key);
		if (*seen)
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": option %s= given twice",
					    spec, key);
		*seen = true;
		if (seen == &seen_periodic) {
			rc = parse_periodic(st, spec, val, err);
		} else if (seen == &seen_bytes) {
			st->bytes_given = true;
			if (!parse_positive(val, strlen(val), &st->bytes))
				rc = tp_error_set(err, TP_EINVAL,
						  "stencil '" SPEC_SHOW "'" ": bytes=%s is not a positive number",
						  spec, val);
		} else if (seen == &seen_order) {
			st->mpi_order = !strcmp(val, "mpi");
			if (!st->mpi_order && strcmp(val, "x"))
				rc = tp_error_set(err, TP_EINVAL,
						  "stencil '" SPEC_SHOW "'" ": order=%.40s: unknown order (x: the first dimension fastest, the default; mpi: the last, as MPI_Cart_create numbers ranks)",
						  spec, val);
		} else {
			rc = parse_weights(st, spec, val, err);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_spec(struct stencil *st, const char *spec, tp_error *err)
{
	memset(st, 0, sizeof *st);
	st->bytes = 1;
	st->weight[0] = st->weight[1] = st->weight[2] = 1;
	if (!spec || !*spec)
		return tp_error_set(err, TP_EINVAL,
				    "stencil: empty spec (expected e.g. 64x32x32:7pt)");

	size_t flen = strcspn(spec, ":");
	int rc = parse_dims(st, spec, spec, flen, err);
	if (rc)
		return rc;
	char *rest = strdup(spec + flen);
	if (!rest)
		return tp_error_set(err, TP_ENOMEM, "stencil: out of memory");
	rc = parse_fields(st, spec, rest, err);
	free(rest);
	if (rc)
		return rc;
	if (!st->points)
		st->points = st->ndims == 2 ? 5 : 7;
	/* MPI_Cart_create numbers row-major: its last dimension is the
	 * grid's x.  periodic= and weights= follow the dimensions as
	 * written, so they turn with them. */
	for (int d = 0; st->mpi_order && d < st->ndims / 2; d++) {
		int e = st->ndims - 1 - d, x = st->ext[d];
		bool w = st->wrap[d];
		double v = st->weight[d];
		st->ext[d] = st->ext[e];
		st->ext[e] = x;
		st->wrap[d] = st->wrap[e];
		st->wrap[e] = w;
		st->weight[d] = st->weight[e];
		st->weight[e] = v;
	}
	return 0;
}

/* Offsets of the stencil in lexicographic (dz, dy, dx) order, so that
 * off[k] and off[noffs-1-k] are opposite, and their weights. */
static void make_offsets(struct stencil *st)
{
	bool full = st->points == 9 || st->points == 27;
	int zr = st->ndims == 3 ? 1 : 0;
	st->noffs = 0;
	for (int dz = -zr; dz <= zr; dz++)
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				int moved = (dx != 0) + (dy != 0) + (dz != 0);
				if (moved == 0 || (!full && moved > 1))
					continue;
				int k = st->noffs++;
				st->off[k][0] = dx;
				st->off[k][1] = dy;
				st->off[k][2] = dz;
				double w = INFINITY;
				for (int d = 0; d < 3; d++)
					if (st->off[k][d] && st->weight[d] < w)
						w = st->weight[d];
				st->offw[k] = st->bytes * w;
			}
}

struct contrib {
	int32_t target;
	int key;        /* canonical offset index: same on both sides of a pair */
	double w;
};

/* Neighbours of task t at (x, y, z): sorted by target, equal targets merged
 * (weights summed in canonical offset order, so that the pair's weight is
 * bit-identical in both rows; *merged tells whether any were).  Returns the
 * count written to nb/nw. */
static int task_neighbors(const struct stencil *st, int32_t t, const int *c,
			  int32_t *nb, double *nw, bool *merged)
{
	struct contrib buf[MAX_OFFS];
	int n = 0;
	for (int k = 0; k < st->noffs; k++) {
		int64_t idx = 0, stride = 1;
		bool ok = true;
		for (int d = 0; d < 3; d++) {
			int p = c[d] + st->off[k][d];
			if (p < 0 || p >= st->ext[d]) {
				if (!st->wrap[d]) {
					ok = false;
					break;
				}
				p += p < 0 ? st->ext[d] : -st->ext[d];
			}
			idx += (int64_t)p * stride;
			stride *= st->ext[d];
		}
		if (!ok || idx == t)
			continue;
		struct contrib e = {
			(int32_t)idx, t < idx ? k : st->noffs - 1 - k, st->offw[k]
		};
		/* insertion sort by (target, key) */
		int i = n++;
		while (i > 0 && (buf[i - 1].target > e.target ||
				 (buf[i - 1].target == e.target &&
				  buf[i - 1].key > e.key))) {
			buf[i] = buf[i - 1];
			i--;
		}
		buf[i] = e;
	}
	int m = 0;
	for (int i = 0; i < n;) {
		int32_t tg = buf[i].target;
		double w = buf[i++].w;
		while (i < n && buf[i].target == tg) {
			w += buf[i++].w;
			*merged = true;
		}
		if (nb) {
			nb[m] = tg;
			nw[m] = w;
		}
		m++;
	}
	return m;
}

int64_t tp__stencil_ntasks(const char *spec)
{
	struct stencil st;
	if (!spec || parse_spec(&st, spec, NULL))
		return -1;
	return (int64_t)st.ext[0] * st.ext[1] * st.ext[2];
}

int tp_graph_from_stencil(tp_graph **out, const char *spec,
			  int64_t expect_ntasks, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "stencil: no output graph given");
	*out = NULL;
	struct stencil st;
	int rc = parse_spec(&st, spec, err);
	if (rc)
		return rc;
	int32_t n = st.ext[0] * st.ext[1] * st.ext[2];
	if (expect_ntasks > 0 && expect_ntasks != n) {
		size_t dl = strcspn(spec, ":");
		return tp_error_set(err, TP_EINVAL,
				    "stencil %.*s: %ld tasks, but the job has %lld tasks",
				    (int)(dl > 120 ? 120 : dl), spec, (long)n,
				    (long long)expect_ntasks);
	}
	make_offsets(&st);
	for (int k = 0; k < st.noffs; k++)
		if (!isfinite(st.offw[k]))
			return tp_error_set(err, TP_EINVAL,
					    "stencil '" SPEC_SHOW "'" ": bytes times weights is not a finite number",
					    spec);

	tp_graph *g = calloc(1, sizeof *g);
	if (!g)
		goto nomem;
	g->ntasks = n;
	g->xadj = tp__malloc_array((size_t)n + 1, sizeof *g->xadj);
	/* one pass: every task's neighbours written once at their upper
	 * bound (noffs each; interior tasks have exactly that many), then the
	 * rows moved together and the arrays shrunk */
	size_t cap = (size_t)n * (size_t)st.noffs + 1;
	g->adjncy = tp__malloc_array(cap, sizeof *g->adjncy);
	if (!g->xadj || !g->adjncy)
		goto nomem;
	/* Without per-entry weights while every pair carries the one weight
	 * (tp__graph_w); they are written out at the first pair that does
	 * not: per-axis weights, or two offsets summed onto one neighbour in a
	 * periodic axis of extent 1 or 2. */
	g->unit_w = st.offw[0];
	bool uniform = true;
	for (int k = 1; k < st.noffs; k++)
		uniform &= !memcmp(&st.offw[k], &g->unit_w, sizeof(double));
	if (!uniform && !(g->weights = tp__malloc_array(cap, sizeof *g->weights)))
		goto nomem;
	int c[3] = { 0, 0, 0 };
	double total = 0, row_w[MAX_OFFS];
	int64_t at = 0;
	g->xadj[0] = 0;
	for (int32_t t = 0; t < n; t++) {
		double *w = g->weights ? g->weights + at : row_w;
		bool merged = false;
		int k = task_neighbors(&st, t, c, g->adjncy + at, w, &merged);
		if (!g->weights && merged)
			for (int i = 0; i < k; i++)
				if (memcmp(&w[i], &g->unit_w, sizeof(double))) {
					if (!(g->weights = tp__malloc_array(cap, sizeof *g->weights)))
						goto nomem;
					for (int64_t e = 0; e < at; e++)
						g->weights[e] = g->unit_w;
					memcpy(g->weights + at, row_w, (size_t)k * sizeof *row_w);
					w = g->weights + at;
					break;
				}
		for (int i = 0; i < k; i++)
			if (g->adjncy[at + i] > t)
				total += w[i];
		at += k;
		g->xadj[t + 1] = at;
		tp__grid_next(c, st.ext);
	}
	g->nedges = at / 2;
	if ((size_t)at + 1 < cap) {
		int32_t *a2 = realloc(g->adjncy, ((size_t)at + 1) * sizeof *a2);
		if (a2)
			g->adjncy = a2;
		if (g->weights) {
			double *w2 = realloc(g->weights, ((size_t)at + 1) * sizeof *w2);
			if (w2)
				g->weights = w2;
		}
	}
	if (!isfinite(total)) {
		tp_graph_destroy(g);
		return tp_error_set(err, TP_EINVAL,
				    "stencil '" SPEC_SHOW "'" ": the bytes of all edges add up to more than %g",
				    spec, DBL_MAX);
	}
	g->total_bytes = total;
	/* no bytes=: what users write.  The time model then assumes a real
	 * code's message (TP__ASSUMED_MESSAGE_BYTES): at 1 byte every
	 * exchange is latency alone and bandwidth never counts */
	g->size_scale = st.bytes_given ? 0 : TP__ASSUMED_MESSAGE_BYTES;
	/* the coordinates are the grid positions, left implicit (coords NULL) */
	g->coord_dims = st.ndims;
	g->grid_ndims = st.ndims;
	for (int d = 0; d < 3; d++)
		g->grid[d] = st.ext[d];
	*out = g;
	return 0;

nomem:
	tp_graph_destroy(g);
	return tp_error_set(err, TP_ENOMEM,
			    "stencil '" SPEC_SHOW "'" ": out of memory for %ld tasks",
			    spec, (long)n);
}
