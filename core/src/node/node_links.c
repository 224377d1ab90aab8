/* topoplace — GPU fabric link counts: NVLink lanes or xGMI links, from
 * gres.conf Links= lines, the text of `nvidia-smi topo -m`, or the text of
 * `rocm-smi --showtopo` / `rocm-smi --shownodesbw`.
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
 *
 * rocm-smi (python_smi_tools/rocm_smi.py, showHwTopology and showNodesBw):
 * "=== Weight between two GPUs ===", "=== Hops between two GPUs ===",
 * "=== Link Type between two GPUs ===" and "=== Bandwidth ===" spacer
 * lines, each followed by a header "GPU0 GPU1 ..." and one row "GPUi ..."
 * per GPU: weights and hops are integers (0 on the diagonal, N/A when
 * unknown), link types PCIE, XGMI or XXXX, bandwidths "min-max" in MB/s
 * (N/A for non-xGMI pairs, "0-0" for GPUs not directly connected).  Other
 * sections ("Numa Nodes", the banner, "End of ROCm SMI Log") and their
 * lines are skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "internal.h"
#include "node/node_internal.h"

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

/* ---- rocm-smi --showtopo / --shownodesbw ---- */

enum smi_sec { SEC_NONE = -1, SEC_WEIGHT, SEC_HOPS, SEC_TYPE, SEC_BW, NSEC };
static const char *const SEC_NAME[NSEC] = {
	"Weight between two GPUs", "Hops between two GPUs",
	"Link Type between two GPUs", "Bandwidth"
};

/* Entries: weights and hops (>= 0, -1 for N/A), types (0 unknown, 1 PCIE,
 * 2 XGMI), bandwidths as min and max MB/s (-1 for N/A). */
struct rocm {
	int n;                  /* GPUs, 0 until the first header */
	int hdr_line[NSEC];     /* line of each matrix's header, 0: none */
	int *row_line[NSEC];    /* n each: line of GPU i's row, 0: missing */
	long long *val[NSEC];   /* n x n; SEC_BW: min; */
	long long *bwmax;       /* n x n */
};

static void rocm_free(struct rocm *r)
{
	for (int k = 0; k < NSEC; k++) {
		free(r->row_line[k]);
		free(r->val[k]);
	}
	free(r->bwmax);
}

static int rocm_init(struct rocm *r, int n, const char *what, tp_error *err)
{
	r->n = n;
	size_t n2 = (size_t)n * (size_t)n;
	for (int k = 0; k < NSEC; k++) {
		r->row_line[k] = tp__calloc((size_t)n, sizeof(int));
		r->val[k] = tp__calloc(n2, sizeof(long long));
		if (!r->row_line[k] || !r->val[k])
			return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	r->bwmax = tp__calloc(n2, sizeof(long long));
	if (!r->bwmax)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	return 0;
}

/* A spacer line "=== Title ===": the section it opens (SEC_NONE for
 * sections that are skipped); -2 for any other line. */
static int rocm_section(const char *line)
{
	const char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '=')
		return -2;
	for (int k = 0; k < NSEC; k++) {
		const char *t = strstr(p, SEC_NAME[k]);
		if (!t)
			continue;
		/* the title alone between the fills ("Bandwidth", not a longer
		 * title holding the word) */
		const char *e = t + strlen(SEC_NAME[k]);
		while (*e == ' ')
			e++;
		const char *b = t;
		while (b > p && b[-1] == ' ')
			b--;
		if ((*e == '=' || !*e || *e == '\r') && (b == p || b[-1] == '='))
			return k;
	}
	return SEC_NONE;
}

/* Where an entry of a rocm-smi matrix stands: matrix sec, row GPU i,
 * column GPU j, on the text's line. */
struct rocm_cell {
	int sec, i, j, line;
};

static int rocm_entry(struct rocm *r, const struct rocm_cell *at, const char *t,
		      const char *what, tp_error *err)
{
	int sec = at->sec, i = at->i, j = at->j, line = at->line;
	size_t p = (size_t)i * r->n + j;
	long long *v = r->val[sec];
	char *end;
	if (sec == SEC_TYPE) {
		v[p] = !strcmp(t, "PCIE") ? 1 : !strcmp(t, "XGMI") ? 2 : 0;
		if (i != j && !v[p] && strcmp(t, "XXXX") && strcmp(t, "N/A"))
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: GPU%d to GPU%d: link type '%.20s' "
					    "(PCIE, XGMI or XXXX)", what, line, i, j, t);
		return 0;
	}
	if (!strcmp(t, "N/A")) {
		v[p] = -1;
		if (sec == SEC_BW)
			r->bwmax[p] = -1;
		return 0;
	}
	errno = 0;
	long long a = strtoll(t, &end, 10);
	if (sec == SEC_BW) {
		long long b = -1;
		if (*end == '-' && end > t)
			b = strtoll(end + 1, &end, 10);
		if (errno || *end || a < 0 || b < 0 || b > 1000000000LL ||
		    (a == 0) != (b == 0) || (a > b))
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: GPU%d to GPU%d: bandwidth '%.20s' is not "
					    "min-max in MB/s (0-0 for none, N/A)",
					    what, line, i, j, t);
		v[p] = a;
		r->bwmax[p] = b;
		return 0;
	}
	if (errno || *end || end == t || a < 0 || a > 1000000000LL)
		return tp_error_set(err, TP_EINVAL,
				    "%s:%d: GPU%d to GPU%d: %s '%.20s' is not a number "
				    "(or N/A)", what, line, i, j,
				    sec == SEC_WEIGHT ? "weight" : "hops", t);
	v[p] = a;
	return 0;
}

static int rocm_line(struct rocm *r, int sec, char *line, int lineno,
		     const char *what, tp_error *err)
{
	char *tok[TP_NODE_MAX_GPUS + 8];
	int nt = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r\n", &save);
	     t && nt < (int)(sizeof tok / sizeof tok[0]);
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[nt++] = t;
	int idx;
	if (nt == 0 || !gpu_token(tok[0], &idx))
		return 0;    /* notes ("Format: min-max ..."), errors, blanks */
	if (!r->hdr_line[sec]) {
		/* header: GPU0 GPU1 ... */
		int k = 0;
		while (k < nt && gpu_token(tok[k], &idx) && idx == k)
			k++;
		if (k != nt)
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: %s: expected the header GPU0 GPU1 ...",
					    what, lineno, SEC_NAME[sec]);
		if (r->n == 0) {
			int rc = rocm_init(r, k, what, err);
			if (rc)
				return rc;
		} else if (k != r->n) {
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: %s: %d GPUs, but an earlier matrix has %d",
					    what, lineno, SEC_NAME[sec], k, r->n);
		}
		r->hdr_line[sec] = lineno;
		return 0;
	}
	if (idx >= r->n)
		return tp_error_set(err, TP_EINVAL, "%s:%d: row GPU%d, but the header "
				    "has %d GPUs", what, lineno, idx, r->n);
	if (nt != r->n + 1)
		return tp_error_set(err, TP_EINVAL, "%s:%d: row GPU%d has %d entries, "
				    "expected %d", what, lineno, idx, nt - 1, r->n);
	if (r->row_line[sec][idx])
		return tp_error_set(err, TP_EINVAL, "%s:%d: %s: row GPU%d again "
				    "(first on line %d)", what, lineno, SEC_NAME[sec],
				    idx, r->row_line[sec][idx]);
	for (int j = 0; j < r->n; j++) {
		struct rocm_cell at = { sec, idx, j, lineno };
		int rc = rocm_entry(r, &at, tok[1 + j], what, err);
		if (rc)
			return rc;
	}
	r->row_line[sec][idx] = lineno;
	return 0;
}

/* Every row of every matrix given, the matrices used symmetric. */
static int rocm_check(const struct rocm *r, const char *what, tp_error *err)
{
	for (int k = 0; k < NSEC; k++) {
		if (!r->hdr_line[k])
			continue;
		for (int i = 0; i < r->n; i++)
			if (!r->row_line[k][i])
				return tp_error_set(err, TP_EINVAL,
						    "%s: %s: no row for GPU%d of %d",
						    what, SEC_NAME[k], i, r->n);
		if (k == SEC_HOPS)
			continue;
		for (int i = 0; i < r->n; i++)
			for (int j = i + 1; j < r->n; j++) {
				size_t a = (size_t)i * r->n + j, b = (size_t)j * r->n + i;
				if (r->val[k][a] != r->val[k][b] ||
				    (k == SEC_BW && r->bwmax[a] != r->bwmax[b]))
					return tp_error_set(
						err, TP_EINVAL,
						"%s: %s not symmetric: GPU%d to GPU%d "
						"(line %d) differs from GPU%d to GPU%d "
						"(line %d)", what, SEC_NAME[k], i, j,
						r->row_line[k][i], j, i, r->row_line[k][j]);
			}
	}
	return 0;
}

/* xGMI link counts: from the bandwidth matrix (max / min links, min being
 * one link's bandwidth), else the XGMI pairs of the smallest XGMI weight
 * (one hop) have one link each. */
static int rocm_counts(const struct rocm *r, int *c, const char *what,
		       tp_error *err)
{
	int n = r->n;
	bool bw = r->hdr_line[SEC_BW], ty = r->hdr_line[SEC_TYPE],
	     we = r->hdr_line[SEC_WEIGHT];
	long long wmin = -1;
	for (size_t p = 0; ty && p < (size_t)n * n; p++)
		if (p % (size_t)(n + 1) && r->val[SEC_TYPE][p] == 2 && we &&
		    r->val[SEC_WEIGHT][p] > 0 &&
		    (wmin < 0 || r->val[SEC_WEIGHT][p] < wmin))
			wmin = r->val[SEC_WEIGHT][p];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			size_t p = (size_t)i * n + j;
			bool xgmi = ty && r->val[SEC_TYPE][p] == 2;
			c[p] = 0;
			if (i == j)
				continue;
			if (bw) {
				long long lo = r->val[SEC_BW][p], hi = r->bwmax[p];
				if (lo <= 0)
					continue;
				if (ty && !xgmi)
					return tp_error_set(err, TP_EINVAL,
							    "%s:%d: GPU%d to GPU%d has xGMI bandwidth "
							    "%lld-%lld but link type %s (line %d)",
							    what, r->row_line[SEC_BW][i], i, j, lo, hi,
							    r->val[SEC_TYPE][p] == 1 ? "PCIE" : "XXXX",
							    r->row_line[SEC_TYPE][i]);
				long long k = (hi + lo / 2) / lo;
				c[p] = k < 1 ? 1 : k > TP_NODE_MAX_NVLINKS
				       ? TP_NODE_MAX_NVLINKS : (int)k;
			} else if (xgmi) {
				if (!we)
					return tp_error_set(err, TP_EINVAL,
							    "%s: XGMI pairs but neither the weight "
							    "matrix (rocm-smi --showtopo) nor the "
							    "bandwidth matrix (rocm-smi --shownodesbw) "
							    "to tell direct links", what);
				c[p] = r->val[SEC_WEIGHT][p] == wmin;
			}
		}
	return 0;
}

/* gres.conf or nvidia-smi text being read into rows. */
struct rows_reader {
	struct rows *r;
	const char *what;
	tp_error *err;
};

static int gres_text_line(void *arg, char *line, long number)
{
	struct rows_reader *rd = arg;
	return gres_line(rd->r, line, (int)number, rd->what, rd->err);
}

/* nvidia-smi topo -m: the matrix ends where its legend begins. */
static int smi_text_line(void *arg, char *line, long number)
{
	struct rows_reader *rd = arg;
	strip_escapes(line);
	if (!strncmp(line, "Legend", 6))
		return TP__LINES_STOP;
	return smi_line(rd->r, line, (int)number, rd->what, rd->err);
}

/* gres.conf: the comment from '#' on; a '\' is a character. */
static const struct tp__line_format gres_format = { .comment = '#' };
/* nvidia-smi and rocm-smi text: no comments. */
static const struct tp__line_format smi_format = { .comment = '\0' };

/* rocm-smi text being read: the matrix section the lines are in. */
struct rocm_reader {
	struct rocm *r;
	int sec;
	const char *what;
	tp_error *err;
};

/* One line of rocm-smi: a section's spacer line, or one of its matrix. */
static int rocm_text_line(void *arg, char *line, long number)
{
	struct rocm_reader *rd = arg;
	int lineno = (int)number;    /* the file is at most 1 MiB */
	strip_escapes(line);
	int k = rocm_section(line);
	if (k != -2) {
		rd->sec = k;
		if (k >= 0 && rd->r->hdr_line[k])
			return tp_error_set(rd->err, TP_EINVAL,
					    "%s:%d: a second '%s' matrix (the first "
					    "on line %d)", rd->what, lineno, SEC_NAME[k],
					    rd->r->hdr_line[k]);
		return 0;
	}
	if (rd->sec >= 0)
		return rocm_line(rd->r, rd->sec, line, lineno, rd->what, rd->err);
	return 0;
}

static int rocm_parse(char *buf, const char *what, int **counts, int *ngpus,
		      tp_error *err)
{
	struct rocm r;
	memset(&r, 0, sizeof r);
	struct rocm_reader rd = { &r, SEC_NONE, what, err };
	int rc = tp__each_line(buf, &smi_format, what, err, rocm_text_line, &rd);
	if (!rc && r.n == 0)
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: no rocm-smi matrix (Weight, Link Type or "
				  "Bandwidth between two GPUs)", what);
	if (!rc && !r.hdr_line[SEC_TYPE] && !r.hdr_line[SEC_BW])
		rc = tp_error_set(err, TP_EINVAL,
				  "%s: neither a 'Link Type between two GPUs' "
				  "(rocm-smi --showtopo) nor a 'Bandwidth' matrix "
				  "(rocm-smi --shownodesbw)", what);
	if (!rc)
		rc = rocm_check(&r, what, err);
	int *c = NULL;
	if (!rc && !(c = tp__calloc((size_t)r.n * (size_t)r.n, sizeof(int))))
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (!rc)
		rc = rocm_counts(&r, c, what, err);
	if (rc) {
		free(c);
	} else {
		*counts = c;
		*ngpus = r.n;
	}
	rocm_free(&r);
	return rc;
}

/* rocm-smi text: its banner, or a spacer line with a matrix's title. */
static bool is_rocm_smi(const char *buf)
{
	if (strstr(buf, "ROCm System Management Interface"))
		return true;
	const char *at = buf, *p;
	size_t n;
	while ((p = tp__line_next(&at, &n))) {
		char line[256];
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = '\0';
			if (rocm_section(line) >= 0)
				return true;
		}
	}
	return false;
}

int tp_links_parse(const char *text, size_t len, const char *what,
		   int **counts_out, int *ngpus_out, tp_error *err)
{
	return tp_links_parse_kind(text, len, what, counts_out, ngpus_out, NULL,
				   err);
}

int tp_links_parse_kind(const char *text, size_t len, const char *what,
			int **counts_out, int *ngpus_out,
			enum tp_links_kind *kind, tp_error *err)
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
	if (is_rocm_smi(buf)) {
		if (kind)
			*kind = TP_LINKS_ROCM_SMI;
		int rc = rocm_parse(buf, what, counts_out, ngpus_out, err);
		free(buf);
		return rc;
	}
	/* gres.conf when any line has Links=, else nvidia-smi text */
	bool gres = false;
	for (const char *p = buf; (p = strcasestr(p, "links=")); p++)
		gres = true;
	struct rows r = { 0, NULL, NULL };
	struct rows_reader rd = { &r, what, err };
	int rc = tp__each_line(buf, gres ? &gres_format : &smi_format, what, err,
			       gres ? gres_text_line : smi_text_line, &rd);
	if (rc == TP__LINES_STOP)
		rc = 0;
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
	if (kind)
		*kind = gres ? TP_LINKS_GRES : TP_LINKS_NVIDIA_SMI;
	return 0;
}

/* Counts for every GPU pair of the node's fabric (vendor: the GPUs' PCI
 * vendor it needs). */
static int set_fabric(tp_node *n, const int *counts, int ngpus,
		      const char *what, enum tp_gpu_fabric fabric, bool switched,
		      tp_error *err)
{
	const char *kind = fabric == TP_FABRIC_XGMI ? "xGMI links" : "NVLinks";
	unsigned vendor = fabric == TP_FABRIC_XGMI ? 0x1002 : 0x10de;
	if (ngpus != n->ngpus)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %s counts for %d GPUs, but %s has %d",
				    what, fabric == TP_FABRIC_XGMI ? "xGMI" : "NVLink",
				    ngpus, n->source, n->ngpus);
	for (int g = 0; g < ngpus; g++)
		if (n->gpu[g].vendor != vendor)
			return tp_error_set(err, TP_EINVAL,
					    "%s: %s, but GPU %d of %s is %s GPU (%s)",
					    what, kind, g, n->source,
					    vendor == 0x1002 ? "an NVIDIA" : "an AMD",
					    vendor == 0x1002
					    ? "give NVLink lanes: gres.conf Links= or nvidia-smi topo -m"
					    : "give xGMI links: gres.conf Links= or rocm-smi --showtopo");
	bool any = false;
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++) {
			int v = counts[i * ngpus + j];
			if (i == j ? (v != 0 && v != -1)
				   : (v < 0 || v > TP_NODE_MAX_NVLINKS))
				return tp_error_set(err, TP_EINVAL,
						    "%s: GPU %d to GPU %d: %d %s", what,
						    i, j, v, kind);
			if (counts[j * ngpus + i] != v && i != j)
				return tp_error_set(err, TP_EINVAL,
						    "%s: not symmetric: GPU %d to GPU %d is %d, "
						    "GPU %d to GPU %d is %d",
						    what, i, j, v, j, i, counts[j * ngpus + i]);
			any |= i != j && v > 0;
		}
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++)
			n->nvl[i * ngpus + j] = i == j ? 0 : counts[i * ngpus + j];
	n->fabric = any ? (int)fabric : TP_FABRIC_NONE;
	n->nvswitch_known = any && switched;
	return tp__node_finish(n, err);
}

int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err)
{
	return set_fabric(n, counts, ngpus, what ? what : "NVLink counts",
			  TP_FABRIC_NVLINK, false, err);
}

int tp_node_set_nvlinks_switched(tp_node *n, const int *counts, int ngpus,
				 const char *what, tp_error *err)
{
	return set_fabric(n, counts, ngpus, what ? what : "NVLink counts",
			  TP_FABRIC_NVLINK, true, err);
}

int tp_node_set_xgmi(tp_node *n, const int *counts, int ngpus,
		     const char *what, tp_error *err)
{
	return set_fabric(n, counts, ngpus, what ? what : "xGMI counts",
			  TP_FABRIC_XGMI, false, err);
}

int tp_node_load_links_buffer(tp_node *n, const char *text, size_t len,
			      const char *what, tp_error *err)
{
	int *c = NULL, ng = 0;
	enum tp_links_kind kind;
	int rc = tp_links_parse_kind(text, len, what, &c, &ng, &kind, err);
	if (rc)
		return rc;
	/* gres.conf Links= count what the node's GPUs have: xGMI on AMD */
	bool amd = n->ngpus > 0 && n->gpu[0].vendor == 0x1002;
	if (kind == TP_LINKS_ROCM_SMI || (kind == TP_LINKS_GRES && amd))
		rc = tp_node_set_xgmi(n, c, ng, what, err);
	else
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
