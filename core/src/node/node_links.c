/* topoplace — GPU fabric link counts (NVLink lanes or xGMI links) from a
 * links file: which format it is; gres.conf Links= lines and the text of
 * `nvidia-smi topo -m`, read here; the text of `rocm-smi --showtopo` /
 * `rocm-smi --shownodesbw` (node_links_rocm.c) and the output of `amd-smi
 * topology`, text or --json (node_links_amd.c); the counts loaded onto a
 * node model.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_links.h"

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
		if (tp__links_parse_int(p, e, &v) < 0)
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

static int smi_line(struct rows *r, char *line, int lineno, const char *what,
		    tp_error *err)
{
	char *tok[TP_NODE_MAX_GPUS + 8];
	int nt = tp__links_split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
	if (nt == 0)
		return 0;
	int idx;
	if (r->n == 0) {
		/* header: GPU0 GPU1 ... */
		int k = 0;
		while (k < nt && tp__links_gpu_token(tok[k], &idx) && idx == k)
			k++;
		if (k == 0)
			return 0;
		return rows_init(r, k, what, err);
	}
	if (!tp__links_gpu_token(tok[0], &idx))
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
			if (tp__links_parse_int(t + 2, t + strlen(t), &lv) < 0 || lv < 1 ||
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
	tp__links_strip_escapes(line);
	if (!strncmp(line, "Legend", 6))
		return TP__LINES_STOP;
	return smi_line(rd->r, line, (int)number, rd->what, rd->err);
}

/* gres.conf: the comment from '#' on; a '\' is a character. */
static const struct tp__line_format gres_format = { .comment = '#' };

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
	int smi = tp__links_parse_smi(buf, what, counts_out, ngpus_out, kind, bdfs_out,
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
