/* topoplace — xGMI link counts from the text of `rocm-smi --showtopo` /
 * `rocm-smi --shownodesbw`, and the matrices (weight, hops, link type,
 * bandwidth) that both it and amd-smi fill, checked and turned into
 * counts.
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

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_links.h"

/* ---- rocm-smi --showtopo / --shownodesbw ---- */

static const char *const SEC_NAME[NSEC] = {
	"Weight between two GPUs", "Hops between two GPUs",
	"Link Type between two GPUs", "Bandwidth"
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

void tp__rocm_free(struct rocm *r)
{
	for (int k = 0; k < NSEC; k++) {
		free(r->row_line[k]);
		free(r->val[k]);
	}
	free(r->bwmax);
	free(r->bdf);
}

int tp__rocm_init(struct rocm *r, int n, const char *what, tp_error *err)
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
int tp__rocm_section(const char *line)
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

int tp__rocm_entry(struct rocm *r, const struct rocm_cell *at, const char *t,
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
	int nt = tp__links_split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
	int idx;
	if (nt == 0 || !tp__links_gpu_token(tok[0], &idx))
		return 0;    /* notes ("Format: min-max ..."), errors, blanks */
	if (!r->hdr_line[sec]) {
		/* header: GPU0 GPU1 ... */
		int k = 0;
		while (k < nt && tp__links_gpu_token(tok[k], &idx) && idx == k)
			k++;
		if (k != nt)
			return tp_error_set(err, TP_EINVAL,
					    "%s:%d: %s: expected the header GPU0 GPU1 ...",
					    what, lineno, SEC_NAME[sec]);
		if (r->n == 0) {
			int rc = tp__rocm_init(r, k, what, err);
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
		int rc = tp__rocm_entry(r, &at, tok[1 + j], what, err);
		if (rc)
			return rc;
	}
	r->row_line[sec][idx] = lineno;
	return 0;
}

/* Every row of every matrix given, the matrices used symmetric. */
int tp__rocm_check(const struct rocm *r, const char *what, tp_error *err)
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
int tp__rocm_counts(const struct rocm *r, int *c, const char *what,
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
	tp__links_strip_escapes(line);
	int k = tp__rocm_section(line);
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

int tp__rocm_parse(char *buf, const char *what, int **counts, int *ngpus,
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
		rc = tp__rocm_check(&r, what, err);
	int *c = NULL;
	if (!rc && !(c = tp__calloc((size_t)r.n * (size_t)r.n, sizeof(int))))
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (!rc)
		rc = tp__rocm_counts(&r, c, what, err);
	if (rc) {
		free(c);
	} else {
		*counts = c;
		*ngpus = r.n;
	}
	tp__rocm_free(&r);
	return rc;
}
