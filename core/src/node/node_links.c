/* topoplace — GPU fabric link counts: NVLink lanes or xGMI links, from
 * gres.conf Links= lines, the text of `nvidia-smi topo -m`, the text of
 * `rocm-smi --showtopo` / `rocm-smi --shownodesbw`, or the output of
 * `amd-smi topology` (text or --json).
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
 *
 * amd-smi topology (amdsmi_cli/amdsmi_commands.py, topology): tables
 * "WEIGHT TABLE:", "HOPS TABLE:", "LINK TYPE TABLE:", "NUMA BW TABLE:" and
 * others (ACCESS, CACHE COHERANCY, ATOMICS, DMA, BI-DIRECTIONAL: skipped),
 * each a header of PCI bus ids (0000:0c:00.0) and one row per bus id with
 * the same entries as rocm-smi's (SELF on the diagonal, UNKNOWN for an
 * unknown type); a legend follows.  With --json: an array of { "gpu",
 * "bdf", "links": [ { "gpu", "bdf", "weight", "link_status", "link_type",
 * "num_hops", "bandwidth", ... } ] }, the fields those of the tables asked
 * for.  GPUs are keyed by bus id, not index: the counts come in sorted
 * bus-id order (the node model's) with the bus ids.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <json-c/json.h>

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

/* The words of line (split in place on blanks), at most cap of them. */
static int split_words(char *line, char **tok, int cap)
{
	int nt = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < cap;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[nt++] = t;
	return nt;
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
	int nt = split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
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
	char (*bdf)[16];        /* amd-smi: the GPUs' bus ids (n), else NULL */
	const char *const *title;   /* each matrix's name in messages */
};

/* How messages name GPU i: its bus id where the file keys GPUs by bus id
 * (amd-smi), else GPUi as the file does. */
static const char *rocm_name(const struct rocm *r, int i, char buf[16])
{
	if (r->bdf)
		return r->bdf[i];
	snprintf(buf, 16, "GPU%d", i);
	return buf;
}

static void rocm_free(struct rocm *r)
{
	for (int k = 0; k < NSEC; k++) {
		free(r->row_line[k]);
		free(r->val[k]);
	}
	free(r->bwmax);
	free(r->bdf);
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
	char *end, b1[16], b2[16];
	const char *gi = rocm_name(r, i, b1), *gj = rocm_name(r, j, b2);
	if (sec == SEC_TYPE) {
		/* XXXX: rocm-smi's unknown type; UNKNOWN, SELF: amd-smi's */
		v[p] = !strcmp(t, "PCIE") ? 1 : !strcmp(t, "XGMI") ? 2 : 0;
		if (i != j && !v[p] && strcmp(t, "XXXX") && strcmp(t, "N/A") &&
		    strcmp(t, "UNKNOWN"))
			return tp__line_error(err, what, line, TP_EINVAL,
					      "%s to %s: link type '%.20s' "
					      "(PCIE, XGMI or XXXX)", gi, gj, t);
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
			return tp__line_error(err, what, line, TP_EINVAL,
					      "%s to %s: bandwidth '%.20s' is not "
					      "min-max in MB/s (0-0 for none, N/A)",
					      gi, gj, t);
		v[p] = a;
		r->bwmax[p] = b;
		return 0;
	}
	if (errno || *end || end == t || a < 0 || a > 1000000000LL)
		return tp__line_error(err, what, line, TP_EINVAL,
				      "%s to %s: %s '%.20s' is not a number "
				      "(or N/A)", gi, gj,
				      sec == SEC_WEIGHT ? "weight" : "hops", t);
	v[p] = a;
	return 0;
}

static int rocm_line(struct rocm *r, int sec, char *line, int lineno,
		     const char *what, tp_error *err)
{
	char *tok[TP_NODE_MAX_GPUS + 8];
	int nt = split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
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
	char b1[16], b2[16];
	for (int k = 0; k < NSEC; k++) {
		if (!r->hdr_line[k])
			continue;
		for (int i = 0; i < r->n; i++)
			if (!r->row_line[k][i])
				return tp_error_set(err, TP_EINVAL,
						    "%s: %s: no row for %s of %d",
						    what, r->title[k],
						    rocm_name(r, i, b1), r->n);
		if (k == SEC_HOPS)
			continue;
		for (int i = 0; i < r->n; i++)
			for (int j = i + 1; j < r->n; j++) {
				size_t a = (size_t)i * r->n + j, b = (size_t)j * r->n + i;
				if (r->val[k][a] != r->val[k][b] ||
				    (k == SEC_BW && r->bwmax[a] != r->bwmax[b]))
					return tp_error_set(
						err, TP_EINVAL,
						"%s: %s not symmetric: %s to %s "
						"(line %d) differs from %s to %s "
						"(line %d)", what, r->title[k],
						rocm_name(r, i, b1), rocm_name(r, j, b2),
						r->row_line[k][i], rocm_name(r, j, b2),
						rocm_name(r, i, b1), r->row_line[k][j]);
			}
	}
	return 0;
}

/* The bandwidth matrix tells links when some pair has a bandwidth: amd-smi
 * on MI355X prints 0-0 for every pair (the driver does not report it), and
 * that says nothing. */
static bool rocm_bw_known(const struct rocm *r)
{
	if (!r->hdr_line[SEC_BW])
		return false;
	for (size_t p = 0; p < (size_t)r->n * r->n; p++)
		if (r->val[SEC_BW][p] > 0)
			return true;
	return false;
}

/* The smallest weight of an XGMI pair (one hop), -1 when no XGMI pair has
 * a weight (amd-smi on MI355X prints 0 everywhere). */
static long long rocm_wmin(const struct rocm *r)
{
	long long wmin = -1;
	if (!r->hdr_line[SEC_TYPE] || !r->hdr_line[SEC_WEIGHT])
		return -1;
	for (size_t p = 0; p < (size_t)r->n * r->n; p++)
		if (p % (size_t)(r->n + 1) && r->val[SEC_TYPE][p] == 2 &&
		    r->val[SEC_WEIGHT][p] > 0 &&
		    (wmin < 0 || r->val[SEC_WEIGHT][p] < wmin))
			wmin = r->val[SEC_WEIGHT][p];
	return wmin;
}

/* Links of pair p from its bandwidth: max / min, min being one link's
 * bandwidth; an error when the link type says it is not xGMI. */
static int rocm_bw_links(const struct rocm *r, int i, int j, int *c,
			 const char *what, tp_error *err)
{
	size_t p = (size_t)i * r->n + j;
	long long lo = r->val[SEC_BW][p], hi = r->bwmax[p];
	*c = 0;
	if (lo <= 0)
		return 0;
	if (r->hdr_line[SEC_TYPE] && r->val[SEC_TYPE][p] != 2) {
		char b1[16], b2[16];
		return tp__line_error(err, what, r->row_line[SEC_BW][i], TP_EINVAL,
				      "%s to %s has xGMI bandwidth %lld-%lld but "
				      "link type %s (line %d)", rocm_name(r, i, b1),
				      rocm_name(r, j, b2), lo, hi,
				      r->val[SEC_TYPE][p] == 1 ? "PCIE" : "XXXX",
				      r->row_line[SEC_TYPE][i]);
	}
	long long k = (hi + lo / 2) / lo;
	*c = k < 1 ? 1 : k > TP_NODE_MAX_NVLINKS ? TP_NODE_MAX_NVLINKS : (int)k;
	return 0;
}

/* xGMI link counts: from the bandwidth matrix when it tells, else the
 * XGMI pairs of the smallest XGMI weight (one hop), else (no weights) the
 * XGMI pairs of one hop have one link each. */
static int rocm_counts(const struct rocm *r, int *c, const char *what,
		       tp_error *err)
{
	int n = r->n;
	bool bw = rocm_bw_known(r), ty = r->hdr_line[SEC_TYPE],
	     ho = r->hdr_line[SEC_HOPS];
	long long wmin = rocm_wmin(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			size_t p = (size_t)i * n + j;
			bool xgmi = ty && r->val[SEC_TYPE][p] == 2;
			c[p] = 0;
			if (i == j)
				continue;
			if (bw) {
				int rc = rocm_bw_links(r, i, j, &c[p], what, err);
				if (rc)
					return rc;
			} else if (xgmi && wmin > 0) {
				c[p] = r->val[SEC_WEIGHT][p] == wmin;
			} else if (xgmi && ho) {
				c[p] = r->val[SEC_HOPS][p] == 1;
			} else if (xgmi) {
				return tp_error_set(err, TP_EINVAL,
						    "%s: XGMI pairs but neither the weight "
						    "matrix (rocm-smi --showtopo) nor the "
						    "bandwidth matrix (rocm-smi --shownodesbw) "
						    "to tell direct links", what);
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
	r.title = SEC_NAME;
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

/* ---- amd-smi topology ---- */

/* The tables used, in the order of enum smi_sec; others ("ACCESS TABLE",
 * "CACHE COHERANCY TABLE", "DMA TABLE", ...) are skipped. */
static const char *const AMD_TITLE[NSEC] = {
	"WEIGHT TABLE", "HOPS TABLE", "LINK TYPE TABLE", "NUMA BW TABLE"
};

/* A PCI bus id as amd-smi prints it: dddd:bb:dd.f, hexadecimal. */
static bool bdf_token(const char *t)
{
	static const char pat[] = "hhhh:hh:hh.h";
	if (strlen(t) != sizeof pat - 1)
		return false;
	for (size_t i = 0; pat[i]; i++)
		if (pat[i] == 'h' ? !isxdigit((unsigned char)t[i]) : t[i] != pat[i])
			return false;
	return true;
}

/* A table's title line "NAME TABLE:": the table it opens (SEC_NONE for a
 * table that is skipped); -2 for any other line. */
static int amd_title(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t n = strlen(line);
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\r'))
		n--;
	if (n < 7 || strncmp(line + n - 7, " TABLE:", 7) != 0)
		return -2;
	for (size_t i = 0; i < n - 7; i++)
		if (!isupper((unsigned char)line[i]) && !strchr(" -_", line[i]))
			return -2;
	for (int k = 0; k < NSEC; k++)
		if (strlen(AMD_TITLE[k]) == n - 1 &&
		    !strncmp(line, AMD_TITLE[k], n - 1))
			return k;
	return SEC_NONE;
}

/* amd-smi text being read: the table the lines are in and the line of its
 * title. */
struct amd_reader {
	struct rocm *r;
	int sec, title_line;
	const char *what;
	tp_error *err;
};

/* GPU index of a bus id in the first table's header, -1 when not there. */
static int amd_index(const struct rocm *r, const char *bdf)
{
	for (int i = 0; i < r->n; i++)
		if (!strcasecmp(r->bdf[i], bdf))
			return i;
	return -1;
}

/* The first table's header sets the GPUs and their order; the later ones
 * must list the same bus ids in the same order. */
static int amd_header(struct amd_reader *rd, char **tok, int nt, int lineno)
{
	struct rocm *r = rd->r;
	const char *title = AMD_TITLE[rd->sec];
	if (nt > TP_NODE_MAX_GPUS)
		return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
				      "%s: %d GPUs, at most %d supported", title,
				      nt, TP_NODE_MAX_GPUS);
	if (r->n == 0) {
		int rc = rocm_init(r, nt, rd->what, rd->err);
		if (!rc && !(r->bdf = tp__calloc((size_t)nt, sizeof *r->bdf)))
			rc = tp_error_set(rd->err, TP_ENOMEM, "%s: out of memory",
					  rd->what);
		for (int i = 0; !rc && i < nt; i++) {
			if (amd_index(r, tok[i]) >= 0)
				return tp__line_error(rd->err, rd->what, lineno,
						      TP_EINVAL, "%s: %s twice in the "
						      "header", title, tok[i]);
			for (int c = 0; c < 12; c++)
				r->bdf[i][c] = (char)tolower((unsigned char)tok[i][c]);
		}
		r->hdr_line[rd->sec] = lineno;
		return rc;
	}
	bool same = nt == r->n;
	for (int i = 0; same && i < nt; i++)
		same = !strcasecmp(tok[i], r->bdf[i]);
	if (!same)
		return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
				      "%s: the header's %d bus ids differ from the "
				      "%d of an earlier table", title, nt, r->n);
	r->hdr_line[rd->sec] = lineno;
	return 0;
}

/* One row "BDF entry ...": one entry per GPU of the header. */
static int amd_row(struct amd_reader *rd, char **tok, int nt, int lineno)
{
	struct rocm *r = rd->r;
	int sec = rd->sec, i = amd_index(r, tok[0]);
	const char *title = AMD_TITLE[sec];
	if (i < 0)
		return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
				      "%s: row %s, not in the header", title, tok[0]);
	if (nt != r->n + 1)
		return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
				      "%s: row %s has %d entries, expected %d",
				      title, tok[0], nt - 1, r->n);
	if (r->row_line[sec][i])
		return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
				      "%s: row %s again (first on line %d)", title,
				      tok[0], r->row_line[sec][i]);
	for (int j = 0; j < r->n; j++) {
		struct rocm_cell at = { sec, i, j, lineno };
		int rc = rocm_entry(r, &at, tok[1 + j], rd->what, rd->err);
		if (rc)
			return rc;
	}
	r->row_line[sec][i] = lineno;
	return 0;
}

/* The table being read ends: it had its header and every row. */
static int amd_close(struct amd_reader *rd)
{
	int k = rd->sec;
	rd->sec = SEC_NONE;
	if (k < 0)
		return 0;
	struct rocm *r = rd->r;
	if (!r->hdr_line[k])
		return tp__line_error(rd->err, rd->what, rd->title_line, TP_EINVAL,
				      "%s: no header of bus ids under it",
				      AMD_TITLE[k]);
	for (int i = 0; i < r->n; i++)
		if (!r->row_line[k][i])
			return tp__line_error(rd->err, rd->what, rd->title_line,
					      TP_EINVAL, "%s: no row for %s",
					      AMD_TITLE[k], r->bdf[i]);
	return 0;
}

/* One line of amd-smi text: a title, a header or row of a table used, or
 * anything else (other tables, the legend, blanks). */
static int amd_text_line(void *arg, char *line, long number)
{
	struct amd_reader *rd = arg;
	int lineno = (int)number;    /* the file is at most 1 MiB */
	strip_escapes(line);
	int k = amd_title(line);
	if (k != -2) {
		int rc = amd_close(rd);
		if (rc)
			return rc;
		if (k >= 0 && rd->r->hdr_line[k])
			return tp__line_error(rd->err, rd->what, lineno, TP_EINVAL,
					      "a second %s (the first's header on "
					      "line %d)", AMD_TITLE[k],
					      rd->r->hdr_line[k]);
		rd->sec = k;
		rd->title_line = lineno;
		return 0;
	}
	if (rd->sec < 0)
		return 0;
	char *tok[TP_NODE_MAX_GPUS + 2];
	int nt = split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
	if (nt == 0)
		return 0;
	if (!bdf_token(tok[0]))
		return amd_close(rd);     /* "Legend:" and the like */
	if (!rd->r->hdr_line[rd->sec]) {
		for (int i = 0; i < nt; i++)
			if (!bdf_token(tok[i]))
				return tp__line_error(rd->err, rd->what, lineno,
						      TP_EINVAL, "%s: header entry %d "
						      "'%.20s' is not a bus id "
						      "(0000:0c:00.0)",
						      AMD_TITLE[rd->sec], i, tok[i]);
		return amd_header(rd, tok, nt, lineno);
	}
	return amd_row(rd, tok, nt, lineno);
}

/* The bus ids in sorted order (the PCI bus order the node model numbers
 * its GPUs in) and the counts permuted to match. */
static int amd_sort(const struct rocm *r, int *c, struct tp_links_bdf **out,
		    const char *what, tp_error *err)
{
	int n = r->n;
	struct tp_links_bdf *b = tp__calloc((size_t)n, sizeof *b);
	int *tmp = tp__calloc((size_t)n * (size_t)n, sizeof(int));
	int *from = tp__calloc((size_t)n, sizeof(int));
	if (!b || !tmp || !from) {
		free(b);
		free(tmp);
		free(from);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	/* insertion sort: at most TP_NODE_MAX_GPUS entries */
	for (int i = 0; i < n; i++) {
		int k = i;
		while (k > 0 && strcmp(r->bdf[from[k - 1]], r->bdf[i]) > 0) {
			from[k] = from[k - 1];
			k--;
		}
		from[k] = i;
	}
	int first = 0;    /* the line of the first header: the GPUs' list */
	for (int k = 0; k < NSEC; k++)
		if (r->hdr_line[k] && (!first || r->hdr_line[k] < first))
			first = r->hdr_line[k];
	for (int a = 0; a < n; a++) {
		memcpy(b[a].busid, r->bdf[from[a]], sizeof b[a].busid);
		b[a].line = first;
		for (int d = 0; d < n; d++)
			tmp[a * n + d] = c[from[a] * n + from[d]];
	}
	memcpy(c, tmp, (size_t)n * (size_t)n * sizeof(int));
	free(tmp);
	free(from);
	*out = b;
	return 0;
}

/* Counts (and bus ids) from a filled matrix set: rocm-smi's checks and
 * rules; what the error for no usable matrix names. */
static int amd_finish(struct rocm *r, const char *what, int **counts,
		      int *ngpus, struct tp_links_bdf **bdfs, tp_error *err)
{
	int rc = 0;
	if (r->n == 0)
		rc = tp_error_set(err, TP_EINVAL, "%s: no amd-smi topology table "
				  "(LINK TYPE, WEIGHT, HOPS or NUMA BW)", what);
	if (!rc && !r->hdr_line[SEC_TYPE] && !r->hdr_line[SEC_BW])
		rc = tp_error_set(err, TP_EINVAL, "%s: neither a LINK TYPE TABLE "
				  "nor a NUMA BW TABLE (amd-smi topology -t -b)",
				  what);
	if (!rc)
		rc = rocm_check(r, what, err);
	int *c = NULL;
	if (!rc && !(c = tp__calloc((size_t)r->n * (size_t)r->n, sizeof(int))))
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (!rc)
		rc = rocm_counts(r, c, what, err);
	if (!rc)
		rc = amd_sort(r, c, bdfs, what, err);
	if (rc) {
		free(c);
		return rc;
	}
	*counts = c;
	*ngpus = r->n;
	return 0;
}

static int amd_parse(char *buf, const char *what, int **counts, int *ngpus,
		     struct tp_links_bdf **bdfs, tp_error *err)
{
	struct rocm r;
	memset(&r, 0, sizeof r);
	r.title = AMD_TITLE;
	struct amd_reader rd = { &r, SEC_NONE, 0, what, err };
	int rc = tp__each_line(buf, &smi_format, what, err, amd_text_line, &rd);
	if (!rc)
		rc = amd_close(&rd);
	if (!rc)
		rc = amd_finish(&r, what, counts, ngpus, bdfs, err);
	rocm_free(&r);
	return rc;
}

/* Does some line of buf (shorter than 256 bytes) make title() say >= 0? */
static bool any_title_line(const char *buf, int (*title)(const char *))
{
	const char *at = buf, *p;
	size_t n;
	while ((p = tp__line_next(&at, &n))) {
		char line[256];
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = '\0';
			if (title(line) >= 0)
				return true;
		}
	}
	return false;
}

/* amd-smi text: a line that is the title of a table used. */
static bool is_amd_smi(const char *buf)
{
	return any_title_line(buf, amd_title);
}

/* ---- amd-smi topology --json ---- */

/* The fields of a link used, in the order of enum smi_sec. */
static const char *const AMD_FIELD[NSEC] = {
	"weight", "num_hops", "link_type", "bandwidth"
};

/* The bus id of GPU entry k (an object with "bdf"), NULL when it has
 * none. */
static const char *amd_json_bdf(json_object *o)
{
	json_object *b = NULL;
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "bdf", &b) ||
	    !json_object_is_type(b, json_type_string) ||
	    !bdf_token(json_object_get_string(b)))
		return NULL;
	return json_object_get_string(b);
}

/* The GPUs: every entry's "bdf", once each. */
static int amd_json_gpus(struct rocm *r, json_object *root, const char *what,
			 tp_error *err)
{
	size_t n = json_object_array_length(root);
	if (n == 0 || n > TP_NODE_MAX_GPUS)
		return tp_error_set(err, TP_EINVAL, "%s: %zu GPU entries (1 to %d)",
				    what, n, TP_NODE_MAX_GPUS);
	int rc = rocm_init(r, (int)n, what, err);
	if (!rc && !(r->bdf = tp__calloc(n, sizeof *r->bdf)))
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	for (size_t i = 0; !rc && i < n; i++) {
		const char *b = amd_json_bdf(json_object_array_get_idx(root, i));
		if (!b)
			return tp_error_set(err, TP_EINVAL, "%s: GPU entry %zu: no "
					    "\"bdf\" bus id (0000:0c:00.0)", what, i);
		if (amd_index(r, b) >= 0)
			return tp_error_set(err, TP_EINVAL, "%s: GPU entry %zu: bus "
					    "id %s twice", what, i, b);
		for (int c = 0; c < 12; c++)
			r->bdf[i][c] = (char)tolower((unsigned char)b[c]);
	}
	return rc;
}

/* One field of a link as the text table would print it. */
static int amd_json_cell(struct rocm *r, const struct rocm_cell *at,
			 json_object *v, const char *what, tp_error *err)
{
	char buf[32];
	const char *t = buf;
	if (json_object_is_type(v, json_type_int))
		snprintf(buf, sizeof buf, "%lld",
			 (long long)json_object_get_int64(v));
	else if (json_object_is_type(v, json_type_string))
		t = json_object_get_string(v);
	else
		t = "(not a number or string)";
	return rocm_entry(r, at, t, what, err);
}

/* The links of GPU entry i: one per GPU, each with the same fields. */
static int amd_json_links(struct rocm *r, int i, json_object *e,
			  const char *what, tp_error *err)
{
	json_object *ls = NULL;
	int n = r->n, seen[NSEC] = { 0 };
	if (!json_object_object_get_ex(e, "links", &ls) ||
	    !json_object_is_type(ls, json_type_array) ||
	    json_object_array_length(ls) != (size_t)n)
		return tp_error_set(err, TP_EINVAL, "%s: %s: \"links\" must be an "
				    "array of %d links, one per GPU", what,
				    r->bdf[i], n);
	bool *done = tp__calloc((size_t)n, sizeof *done);
	if (!done)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = 0;
	for (int l = 0; !rc && l < n; l++) {
		json_object *o = json_object_array_get_idx(ls, (size_t)l), *v;
		const char *b = amd_json_bdf(o);
		int j = b ? amd_index(r, b) : -1;
		if (j < 0 || done[j]) {
			rc = tp_error_set(err, TP_EINVAL, "%s: %s: link %d: %s", what,
					  r->bdf[i], l, !b ? "no \"bdf\" bus id"
					  : j < 0 ? "bus id not among the GPUs"
						  : "a second link to that GPU");
			break;
		}
		done[j] = true;
		for (int k = 0; !rc && k < NSEC; k++)
			if (json_object_object_get_ex(o, AMD_FIELD[k], &v)) {
				struct rocm_cell at = { k, i, j, 0 };
				seen[k]++;
				rc = amd_json_cell(r, &at, v, what, err);
			}
	}
	free(done);
	for (int k = 0; !rc && k < NSEC; k++) {
		if (seen[k] && seen[k] != n)
			rc = tp_error_set(err, TP_EINVAL, "%s: %s: \"%s\" in %d of "
					  "its %d links", what, r->bdf[i],
					  AMD_FIELD[k], seen[k], n);
		/* a field given: the "table" is there and this its row (the
		 * entry's number stands for the line JSON does not have) */
		if (seen[k])
			r->hdr_line[k] = r->row_line[k][i] = i + 1;
	}
	return rc;
}

static int amd_json_parse(const char *buf, const char *what, int **counts,
			  int *ngpus, struct tp_links_bdf **bdfs, tp_error *err)
{
	json_tokener *tok = json_tokener_new_ex(16);
	if (!tok)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, buf, (int)strlen(buf));
	enum json_tokener_error je = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!root)
		return tp_error_set(err, TP_EINVAL, "%s: JSON parse error: %s", what,
				    je == json_tokener_continue
				    ? "unexpected end of input"
				    : json_tokener_error_desc(je));
	struct rocm r;
	memset(&r, 0, sizeof r);
	r.title = AMD_FIELD;
	int rc = json_object_is_type(root, json_type_array) ? 0
		 : tp_error_set(err, TP_EINVAL, "%s: expected the array of "
				"amd-smi topology --json", what);
	if (!rc)
		rc = amd_json_gpus(&r, root, what, err);
	for (int i = 0; !rc && i < r.n; i++)
		rc = amd_json_links(&r, i, json_object_array_get_idx(root,
								     (size_t)i),
				    what, err);
	if (!rc)
		rc = amd_finish(&r, what, counts, ngpus, bdfs, err);
	/* JSON has no lines: the bus ids carry none */
	for (int i = 0; !rc && i < *ngpus; i++)
		(*bdfs)[i].line = 0;
	rocm_free(&r);
	json_object_put(root);
	return rc;
}

/* amd-smi topology --json: an array whose first entry has "links". */
static bool is_amd_json(const char *buf)
{
	while (*buf == ' ' || *buf == '\t' || *buf == '\r' || *buf == '\n')
		buf++;
	return *buf == '[' && strstr(buf, "\"links\"");
}

/* rocm-smi text: its banner, or a spacer line with a matrix's title. */
static bool is_rocm_smi(const char *buf)
{
	return strstr(buf, "ROCm System Management Interface") ||
	       any_title_line(buf, rocm_section);
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
	struct tp_links_bdf *bdfs = NULL;
	int rc = tp_links_parse_bdf(text, len, what, counts_out, ngpus_out, kind,
				    &bdfs, err);
	free(bdfs);
	return rc;
}

/* amd-smi or rocm-smi text when it is one: *done set, the result in rc. */
static int parse_smi(char *buf, const char *what, int **counts, int *ngpus,
		     enum tp_links_kind *kind, struct tp_links_bdf **bdfs,
		     bool *done, tp_error *err)
{
	*done = true;
	if (is_amd_json(buf)) {
		*kind = TP_LINKS_AMD_SMI;
		return amd_json_parse(buf, what, counts, ngpus, bdfs, err);
	}
	if (is_amd_smi(buf)) {
		*kind = TP_LINKS_AMD_SMI;
		return amd_parse(buf, what, counts, ngpus, bdfs, err);
	}
	if (is_rocm_smi(buf)) {
		*kind = TP_LINKS_ROCM_SMI;
		return rocm_parse(buf, what, counts, ngpus, err);
	}
	*done = false;
	return 0;
}

int tp_links_parse_bdf(const char *text, size_t len, const char *what,
		       int **counts_out, int *ngpus_out,
		       enum tp_links_kind *kind_out,
		       struct tp_links_bdf **bdfs_out, tp_error *err)
{
	*counts_out = NULL;
	*ngpus_out = 0;
	*bdfs_out = NULL;
	enum tp_links_kind kind_buf, *kind = kind_out ? kind_out : &kind_buf;
	if (!what)
		what = "links";
	if (len > TP__MAX_LINKS_BYTES)
		return tp__too_large(what, len, TP__MAX_LINKS_BYTES,
				     "an NVLink file", err);
	char *buf = NULL;
	int copied = tp__text_copy(text, len, what, &buf, err);
	if (copied)
		return copied;
	bool done;
	int smi = parse_smi(buf, what, counts_out, ngpus_out, kind, bdfs_out,
			    &done, err);
	if (done) {
		free(buf);
		return smi;
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
	*kind = gres ? TP_LINKS_GRES : TP_LINKS_NVIDIA_SMI;
	return 0;
}

double tp__node_link_rate(const tp_node *n, enum tp_gpu_fabric fabric)
{
	if (n && n->link_rate > 0)
		return n->link_rate;
	return fabric == TP_FABRIC_XGMI ? TP_XGMI_BW : TP_NVLINK_BW;
}

void tp__node_set_link_rate(tp_node *n, double gbs)
{
	if (n)
		n->link_rate = gbs > 0 ? gbs : 0;
}

int tp__node_set_fabric(tp_node *n, const int *counts, const double *gbs,
			double rate, int ngpus, const char *what,
			enum tp_gpu_fabric fabric, bool switched, tp_error *err)
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
					    ? "give NVLink lanes: gres.conf Links= or "
					      "nvidia-smi topo -m"
					    : "give xGMI links: gres.conf Links=, amd-smi "
					      "topology or rocm-smi --showtopo");
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
	if (!(rate > 0))
		rate = tp__node_link_rate(n, fabric);
	for (int i = 0; i < ngpus; i++)
		for (int j = 0; j < ngpus; j++) {
			int p = i * ngpus + j;
			n->nvl[p] = i == j ? 0 : counts[p];
			n->fbw[p] = n->nvl[p] <= 0 ? 0
				    : gbs && gbs[p] > 0 ? gbs[p] : n->nvl[p] * rate;
		}
	n->fabric = any ? (int)fabric : TP_FABRIC_NONE;
	n->nvswitch_seen = switched;
	return tp__node_finish(n, err);
}

int tp_node_set_nvlinks(tp_node *n, const int *counts, int ngpus,
			const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "NVLink counts", TP_FABRIC_NVLINK,
				   false, err);
}

int tp_node_set_nvswitch(tp_node *n, const int *counts, int ngpus,
			 const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "NVSwitch lanes", TP_FABRIC_NVLINK,
				   true, err);
}

int tp_node_set_xgmi(tp_node *n, const int *counts, int ngpus,
		     const char *what, tp_error *err)
{
	return tp__node_set_fabric(n, counts, NULL, 0, ngpus,
				   what ? what : "xGMI counts", TP_FABRIC_XGMI,
				   false, err);
}

/* Counts of an amd-smi file (keyed by bus id, in sorted bus-id order) in
 * the order of the node's GPUs; a bus id that is not one of its GPUs is
 * refused.  Counts for fewer or more GPUs are left for set_fabric to
 * refuse. */
static int map_bdfs(const tp_node *n, const struct tp_links_bdf *b, int ng,
		    int *c, const char *what, tp_error *err)
{
	/* partitions share their device's bus id: nothing to match by */
	for (int g = 0; g < n->ngpus; g++)
		if (n->gpu[g].nparts > 1)
			return tp_error_set(err, TP_EINVAL,
					    "%s: GPUs named by PCI bus id, but the %d GPUs "
					    "of %s at %s are partitions of one device (give "
					    "gres.conf Links= lines, or the hwloc XML's "
					    "XGMIBandwidth)", what ? what : "links",
					    n->gpu[g].nparts, n->source, n->gpu[g].busid);
	int idx[TP_NODE_MAX_GPUS];
	for (int k = 0; k < ng && k < TP_NODE_MAX_GPUS; k++) {
		idx[k] = -1;
		for (int g = 0; g < n->ngpus && idx[k] < 0; g++)
			if (!strcasecmp(n->gpu[g].busid, b[k].busid))
				idx[k] = g;
		if (idx[k] < 0)
			return tp__line_error(err, what, b[k].line, TP_EINVAL,
					      "%s is not a GPU of %s (%d GPUs, "
					      "%s to %s)", b[k].busid, n->source,
					      n->ngpus,
					      n->ngpus ? n->gpu[0].busid : "-",
					      n->ngpus ? n->gpu[n->ngpus - 1].busid
						       : "-");
	}
	if (ng != n->ngpus)
		return 0;
	int *m = tp__calloc((size_t)ng * (size_t)ng, sizeof(int));
	if (!m)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	for (int a = 0; a < ng; a++)
		for (int d = 0; d < ng; d++)
			m[idx[a] * ng + idx[d]] = c[a * ng + d];
	memcpy(c, m, (size_t)ng * (size_t)ng * sizeof(int));
	free(m);
	return 0;
}

int tp_node_load_links_buffer(tp_node *n, const char *text, size_t len,
			      const char *what, tp_error *err)
{
	int *c = NULL, ng = 0;
	enum tp_links_kind kind;
	struct tp_links_bdf *bdfs = NULL;
	int rc = tp_links_parse_bdf(text, len, what, &c, &ng, &kind, &bdfs, err);
	if (!rc && bdfs)
		rc = map_bdfs(n, bdfs, ng, c, what ? what : "links", err);
	free(bdfs);
	if (rc) {
		free(c);
		return rc;
	}
	/* gres.conf Links= count what the node's GPUs have: xGMI on AMD */
	bool amd = n->ngpus > 0 && n->gpu[0].vendor == 0x1002;
	if (kind == TP_LINKS_ROCM_SMI || kind == TP_LINKS_AMD_SMI ||
	    (kind == TP_LINKS_GRES && amd))
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
