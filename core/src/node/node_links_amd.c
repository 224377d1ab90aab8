/* topoplace — xGMI link counts from the output of `amd-smi topology`,
 * text or --json, and which of the AMD tools' outputs a links file is.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "util/util_internal.h"
#include "node/node_internal.h"
#include "node/node_links.h"

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
		int rc = tp__rocm_init(r, nt, rd->what, rd->err);
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
		int rc = tp__rocm_entry(r, &at, tok[1 + j], rd->what, rd->err);
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
	tp__links_strip_escapes(line);
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
	int nt = tp__links_split_words(line, tok, (int)(sizeof tok / sizeof tok[0]));
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
		rc = tp__rocm_check(r, what, err);
	int *c = NULL;
	if (!rc && !(c = tp__calloc((size_t)r->n * (size_t)r->n, sizeof(int))))
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (!rc)
		rc = tp__rocm_counts(r, c, what, err);
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
	tp__rocm_free(&r);
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
	int rc = tp__rocm_init(r, (int)n, what, err);
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
	return tp__rocm_entry(r, at, t, what, err);
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
	tp__rocm_free(&r);
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
	       any_title_line(buf, tp__rocm_section);
}

/* amd-smi or rocm-smi text when it is one: *done set, the result in rc. */
int tp__links_parse_smi(char *buf, const char *what, int **counts, int *ngpus,
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
		return tp__rocm_parse(buf, what, counts, ngpus, err);
	}
	*done = false;
	return 0;
}
