/* topoplace — NVLink lane counts from gres.conf Links= lines or from the text
 * of `nvidia-smi topo -m`.
 *
 * gres.conf: one device per line, "Name=gpu ... Links=-1,4,0,0"; the entries
 * are the NVLink counts to GPU 0, 1, ... in Slurm's index order, -1 marks the
 * device itself (so the -1 tells which GPU the line is), 0 means none.  Lines
 * of other GRES, lines without Links= and NodeName= restrictions are ignored
 * (one file describes one kind of node).
 *
 * nvidia-smi topo -m: a header row "GPU0 GPU1 ... CPU Affinity ...", then one
 * row per GPU with X on the diagonal and NV#, PIX, PXB, PHB, NODE, SYS (or the
 * older SOC) elsewhere; NIC rows and the legend are ignored.  Colour escape
 * sequences are skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "internal.h"

struct rows {
	int n;          /* GPUs (row length), 0 until the first row */
	int *c;         /* n x n */
	int *line;      /* line of each GPU's row, 0 when missing */
};

static void rows_free(struct rows *r)
{
	free(r->c);
	free(r->line);
}

static int rows_init(struct rows *r, int n, const char *what, tp_error *err)
{
	r->n = n;
	r->c = tp__calloc((size_t)n * (size_t)n, sizeof(int));
	r->line = tp__calloc((size_t)n, sizeof(int));
	if (!r->c || !r->line)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	return 0;
}

/* Every GPU has a row and the matrix is symmetric. */
static int rows_check(struct rows *r, const char *what, const char *kind,
		      tp_error *err)
{
	for (int i = 0; i < r->n; i++)
		if (!r->line[i])
			return tp_error_set(err, TP_EINVAL,
					    "%s: %s: no row for GPU %d of %d", what,
					    kind, i, r->n);
	for (int i = 0; i < r->n; i++)
		for (int j = i + 1; j < r->n; j++)
			if (r->c[i * r->n + j] != r->c[j * r->n + i])
				return tp_error_set(
					err, TP_EINVAL,
					"%s: %s not symmetric: GPU %d to GPU %d is %d "
					"(line %d) but GPU %d to GPU %d is %d (line %d)",
					what, kind, i, j, r->c[i * r->n + j], r->line[i],
					j, i, r->c[j * r->n + i], r->line[j]);
	for (int i = 0; i < r->n; i++)
		r->c[i * r->n + i] = 0;
	return 0;
}

/* ---- gres.conf ---- */

static int parse_int(const char *s, const char *e, long *v)
{
	if (s == e)
		return -1;
	char buf[24];
	if ((size_t)(e - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	char *end;
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

static int gres_line(struct rows *r, char *line, int lineno, const char *what,
		     tp_error *err)
{
	const char *links = NULL;
	bool gpu = false;
	char *save = NULL;
	for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (!strcasecmp(tok, "Name"))
			gpu = !strcasecmp(eq + 1, "gpu");
		else if (!strcasecmp(tok, "Links"))
			links = eq + 1;
	}
	if (!gpu || !links)
		return 0;
	/* count the entries */
	int cnt = 1;
	for (const char *p = links; *p; p++)
		cnt += *p == ',';
	if (cnt > TP_NODE_MAX_GPUS)
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: Links= has %d entries, at most %d GPUs supported",
				    what, lineno, cnt, TP_NODE_MAX_GPUS);
	if (r->n == 0) {
		int rc = rows_init(r, cnt, what, err);
		if (rc)
			return rc;
	} else if (cnt != r->n) {
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: Links= has %d entries, but earlier lines have %d",
				    what, lineno, cnt, r->n);
	}
	int vals[TP_NODE_MAX_GPUS];
	int self = -1;
	const char *p = links;
	for (int i = 0; i < cnt; i++) {
		const char *e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		long v;
		if (parse_int(p, e, &v) < 0)
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: Links= entry %d '%.*s' is not an integer",
					    what, lineno, i, (int)(e - p > 20 ? 20 : e - p), p);
		if (v == -1) {
			if (self >= 0)
				return tp_error_set(err, TP_EINVAL,
						    "%s:%d: Links= has -1 (self) twice, at %d and %d",
						    what, lineno, self, i);
			self = i;
		} else if (v < 0 || v > TP_NODE_MAX_NVLINKS) {
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: Links= entry %d is %ld (NVLink count "
					    "0..%d, or -1 for the GPU itself)",
					    what, lineno, i, v, TP_NODE_MAX_NVLINKS);
		}
		vals[i] = (int)v;
		p = *e ? e + 1 : e;
	}
	if (self < 0)
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: Links= has no -1 marking the GPU itself",
				    what, lineno);
	if (r->line[self])
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: Links= for GPU %d again (first on line %d)",
				    what, lineno, self, r->line[self]);
	r->line[self] = lineno;
	for (int i = 0; i < cnt; i++)
		r->c[self * cnt + i] = vals[i];
	return 0;
}

/* ---- nvidia-smi topo -m ---- */

/* Remove ANSI escape sequences in place. */
static void strip_escapes(char *s)
{
	char *w = s;
	for (char *p = s; *p;) {
		if (*p == '\x1b') {
			p++;
			if (*p == '[') {
				p++;
				while (*p && !((*p >= '@' && *p <= '~')))
					p++;
				if (*p)
					p++;
			}
			continue;
		}
		*w++ = *p++;
	}
	*w = '\0';
}

static bool gpu_token(const char *t, int *idx)
{
	if (strncmp(t, "GPU", 3) != 0 || t[3] < '0' || t[3] > '9')
		return false;
	long v;
	if (parse_int(t + 3, t + strlen(t), &v) < 0 || v < 0 ||
	    v >= TP_NODE_MAX_GPUS)
		return false;
	*idx = (int)v;
	return true;
}

static int smi_line(struct rows *r, char *line, int lineno, const char *what,
		    tp_error *err)
{
	char *tok[TP_NODE_MAX_GPUS + 8];
	int nt = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r\n", &save);
	     t && nt < (int)(sizeof tok / sizeof tok[0]);
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[nt++] = t;
	if (nt == 0)
		return 0;
	int idx;
	if (r->n == 0) {
		/* header: GPU0 GPU1 ... */
		int k = 0;
		while (k < nt && gpu_token(tok[k], &idx) && idx == k)
			k++;
		if (k == 0)
			return 0;
		return rows_init(r, k, what, err);
	}
	if (!gpu_token(tok[0], &idx))
		return 0;          /* NIC rows, legend */
	if (idx >= r->n)
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: row GPU%d, but the header has %d GPUs",
				    what, lineno, idx, r->n);
	if (nt < r->n + 1)
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: row GPU%d has %d entries, expected %d",
				    what, lineno, idx, nt - 1, r->n);
	if (r->line[idx])
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: row GPU%d again (first on line %d)",
				    what, lineno, idx, r->line[idx]);
	for (int j = 0; j < r->n; j++) {
		const char *t = tok[1 + j];
		int v = 0;
		if (j == idx) {
			if (strcmp(t, "X") != 0)
				return tp_error_set(err, TP_EINVAL,
						    "%s:%d: GPU%d to itself is '%s', expected X",
						    what, lineno, idx, t);
		} else if (!strncmp(t, "NV", 2) && t[2]) {
			long lv;
			if (parse_int(t + 2, t + strlen(t), &lv) < 0 || lv < 1 ||
			    lv > TP_NODE_MAX_NVLINKS)
				return tp_error_set(err, TP_EINVAL,
						    "%s:%d: GPU%d to GPU%d: '%s' is not NV1..NV%d",
						    what, lineno, idx, j, t,
						    TP_NODE_MAX_NVLINKS);
			v = (int)lv;
		} else if (strcmp(t, "PIX") && strcmp(t, "PXB") && strcmp(t, "PHB") &&
			   strcmp(t, "NODE") && strcmp(t, "SYS") && strcmp(t, "SOC")) {
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: GPU%d to GPU%d: unknown entry '%s' "
					    "(X, NV#, PIX, PXB, PHB, NODE or SYS)",
					    what, lineno, idx, j, t);
		}
		r->c[idx * r->n + j] = v;
	}
	r->line[idx] = lineno;
	return 0;
}

int tp_links_parse(const char *text, size_t len, const char *what,
		   int **counts_out, int *ngpus_out, tp_error *err)
{
	*counts_out = NULL;
	*ngpus_out = 0;
	if (!what)
		what = "links";
	if (len > TP__MAX_LINKS_BYTES)
		return tp__too_large(what, len, TP__MAX_LINKS_BYTES,
				     "an NVLink file", err);
	char *buf = NULL;
	int copied = tp__text_copy(text, len, what, &buf, err);
	if (copied)
		return copied;
	/* gres.conf when any line has Links=, else nvidia-smi text */
	bool gres = false;
	for (const char *p = buf; (p = strcasestr(p, "links=")); p++)
		gres = true;
	struct rows r = { 0, NULL, NULL };
	int rc = 0, lineno = 0;
	char *save = NULL;
	for (char *line = buf; line && !rc; line = save) {
		char *nl = strchr(line, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		if (gres) {
			char *hash = strchr(line, '#');
			if (hash)
				*hash = '\0';
			rc = gres_line(&r, line, lineno, what, err);
		} else {
			strip_escapes(line);
			if (!strncmp(line, "Legend", 6))
				break;
			rc = smi_line(&r, line, lineno, what, err);
		}
	}
	free(buf);
	if (!rc && r.n == 0)
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: no gres.conf 'Name=gpu ... Links=' lines and no "
				  "'nvidia-smi topo -m' matrix", what);
	if (!rc)
		rc = rows_check(&r, what, gres ? "Links=" : "topology matrix", err);
	if (rc) {
		rows_free(&r);
		return rc;
	}
	free(r.line);
	*counts_out = r.c;
	*ngpus_out = r.n;
	return 0;
}

int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err)
{
	if (!what)
		what = "NVLink counts";
	if (ngpus != n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%s: NVLink counts for %d GPUs, but %s has %d",
				    what, ngpus, n->source, n->ngpus);
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++) {
			int v = counts[i * ngpus + j];
			if (i == j ? (v != 0 && v != -1)
				   : (v < 0 || v > TP_NODE_MAX_NVLINKS))
				return tp_error_set(err, TP_EINVAL,
						    "%s: GPU %d to GPU %d: %d NVLinks", what,
						    i, j, v);
			if (counts[j * ngpus + i] != v && i != j)
				return tp_error_set(err, TP_EINVAL,
						    "%s: not symmetric: GPU %d to GPU %d is %d, "
						    "GPU %d to GPU %d is %d",
						    what, i, j, v, j, i, counts[j * ngpus + i]);
		}
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++)
			n->nvl[i * ngpus + j] = i == j ? 0 : counts[i * ngpus + j];
	return tp__node_finish(n, err);
}

int tp_node_load_links_buffer(tp_node *n, const char *text, size_t len,
			      const char *what, tp_error *err)
{
	int *c = NULL, ng = 0;
	int rc = tp_links_parse(text, len, what, &c, &ng, err);
	if (rc)
		return rc;
	rc = tp_node_set_nvlinks(n, c, ng, what, err);
	free(c);
	return rc;
}

int tp_node_load_links(tp_node *n, const char *path, tp_error *err)
{
	char *buf;
	size_t len;
	int rd = tp__read_file(path, TP__MAX_LINKS_BYTES, "an NVLink file", &buf,
			       &len, err);
	if (rd)
		return rd;
	int rc = tp_node_load_links_buffer(n, buf, len, path, err);
	free(buf);
	return rc;
}
