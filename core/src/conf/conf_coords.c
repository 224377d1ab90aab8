/* topoplace — topoplace.conf's CoordFile= ("name x y z" a line) and
 * SwitchFile= ("name group switch", dragonflies): the files read, their
 * nodes placed, runs of numbered names gathered into one record.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_kind.h"
#include "net/name_runs.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "conf/conf_loader.h"
#include "net/machine_internal.h"
#include "util/digits_internal.h"

/* ---- CoordFile ---- */

/* Consecutive lines of a CoordFile naming consecutive numbers
 * ("nid000000 0 0 0", "nid000001 1 0 0", ...) are gathered into one
 * numbered run of the machine: a quarter million lines were 80 ms of name
 * hashing, storing and per-line records.  The gathered coordinates wait in
 * the machine's own array, after its nodes, where the run's nodes go. */
struct cf_run {
	struct loader *ld;
	int src, nd;
	struct tp__hostlist_run hr;   /* prefix and suffix in the file's text */
	int32_t n;                    /* names gathered (0: none) */
	int line;                     /* of the first */
};

/* Where the run's node i waits. */
static int *cf_run_at(const struct cf_run *r, int32_t i)
{
	const tp_machine *m = r->ld->c->b.m;
	return m->coords + ((size_t)m->nnodes + (size_t)i) * (size_t)r->nd;
}

/* Start a run at name (false: it has no number to count on); the machine
 * has room for one node more. */
static bool cf_run_start(struct cf_run *r, const char *name, const int *c, int line)
{
	size_t ds, de;
	uint64_t v;
	if (!tp__name_split(name, &ds, &de, &v))
		return false;
	r->hr = (struct tp__hostlist_run){ name, name + de, ds, strlen(name + de),
					   v, v, (uint32_t)(de - ds) };
	memcpy(cf_run_at(r, 0), c, sizeof(int) * (size_t)r->nd);
	r->n = 1;
	r->line = line;
	return true;
}

/* Add name at line to the run if it is its next name on the next line and
 * the machine has room. */
static bool cf_run_extend(struct cf_run *r, const char *name, const int *c, int line)
{
	size_t ds, de;
	uint64_t v;
	const struct tp__hostlist_run *hr = &r->hr;
	const tp_machine *m = r->ld->c->b.m;
	if (!r->n || line != r->line + r->n || m->nnodes + r->n >= m->cap ||
	    !tp__name_split(name, &ds, &de, &v) || v != hr->hi + 1 || ds != hr->plen ||
	    memcmp(name, hr->prefix, ds) || strcmp(name + de, hr->suffix))
		return false;
	/* the run writes v in max(width, its digits) digits: exactly these */
	unsigned dv = tp__digits_of(v);
	if (de - ds != (dv > hr->width ? dv : hr->width))
		return false;
	memcpy(cf_run_at(r, r->n), c, sizeof(int) * (size_t)r->nd);
	r->hr.hi = v;
	r->n++;
	return true;
}

static void cf_run_coords(void *arg, int64_t i, int *c)
{
	/* tp__machine_add_run asks for them where they already are */
	const int *at = cf_run_at(arg, (int32_t)i);
	if (c != at)
		memmove(c, at, sizeof(int) * (size_t)((const struct cf_run *)arg)->nd);
}

/* Place the gathered names: as one run when long enough and the machine
 * takes it (tp__runs_appends), else, or when anything is wrong with it (a
 * name placed before, a full router), name by name with their own lines,
 * for tp__ld_place_node's messages. */
static int cf_run_flush(struct cf_run *r)
{
	struct loader *ld = r->ld;
	tp_machine *m = ld->c->b.m;
	int32_t n = r->n, first = m->nnodes, prev;
	if (n == 0)
		return TP_OK;
	if (n >= TP__LIST_RUN_MIN && tp__runs_appends(&m->runs, &r->hr) &&
	    ld->cur_topo < 0) {
		tp_error e;
		tp_error_clear(&e);
		if (tp__machine_add_run(m, &r->hr, cf_run_coords, r, &prev, &e) == TP_OK) {
			r->n = 0;
			return tp__ld_origin_add(ld, first, n, r->line, r->src, 1);
		}
	}
	/* node i waits at slot first + i; nodes placed before it take slots
	 * up to first + i, so it is copied out first */
	char name[TP__HOSTNAME_MAX];
	int rc = TP_OK, c[TP_MAX_DIMS];
	for (int32_t i = 0; i < n && rc == TP_OK; i++) {
		tp__hostlist_run_name(&r->hr, r->hr.lo + (uint64_t)i, name);
		memcpy(c, m->coords + ((size_t)first + (size_t)i) * (size_t)r->nd,
		       sizeof(int) * (size_t)r->nd);
		rc = tp__ld_place_node(ld, name, c, r->src, r->line + i);
	}
	r->n = 0;
	return rc;
}

/* The kind SwitchFile= is for. */
static const char *switch_file_kind(void)
{
	for (int i = 0; tp__conf_kinds[i]; i++)
		if (tp__conf_kinds[i]->switch_file)
			return tp__conf_kinds[i]->name;
	return "?";
}

/* A CoordFile's or SwitchFile's lines: '#' comments, no continuation. */
static const struct tp__line_format coord_format = { .comment = '#' };

/* What reading one CoordFile or SwitchFile carries from line to line. */
struct coord_file {
	struct loader *ld;
	const char *file;         /* its path, for messages */
	bool sw;                  /* a SwitchFile: "name group switch" */
	struct cf_run run;
	int placed;               /* lines that named a node */
};

/* The blank-separated fields of p, in place: the first max into f; their
 * count (all of them). */
static int coord_fields(char *p, char **f, int max)
{
	int nf = 0;
	char *save = NULL;
	for (char *w = strtok_r(p, " \t\r\v\f", &save); w;
	     w = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (nf < max)
			f[nf] = w;
		nf++;
	}
	return nf;
}

/* The coordinates of the node f[0] from its fields into c. */
static int coord_values(const struct coord_file *cf, char **f, int line, int *c)
{
	const tp_machine *m = cf->ld->c->b.m;
	bool sw = cf->sw;
	for (int d = 0; d < m->ndims; d++) {
		long long v;
		/* SwitchFile: group (dimension 1) first, then the switch */
		const char *fv = f[sw ? 2 - d : d + 1];
		char what[32];
		int r = tp__conf_parse_ll(fv, INT_MIN, INT_MAX, &v);
		if (r == 0 && v >= 0 && v < m->dims[d]) {
			c[d] = (int)v;
			continue;
		}
		snprintf(what, sizeof what, sw ? (d ? "group" : "switch")
					       : "coordinate %d", d);
		if (r == -1)
			return lerr(cf->ld, cf->file, line, TP_EINVAL,
				    "node '%s': %s ('%s') is not a number",
				    f[0], what, fv);
		return lerr(cf->ld, cf->file, line, TP_EINVAL,
			    "node '%s': %s is outside 0..%d",
			    f[0], what, m->dims[d] - 1);
	}
	return TP_OK;
}

/* One line of the file: a node and its place, gathered into the run of
 * numbered names or placed on its own. */
static int coord_line(void *arg, char *p, long number)
{
	struct coord_file *cf = arg;
	struct loader *ld = cf->ld;
	int line = (int)number, nd = ld->c->b.m->ndims;
	char *f[TP_MAX_DIMS + 2];
	int nf = coord_fields(p, f, TP_MAX_DIMS + 2);
	if (nf == 0)
		return TP_OK;
	if (nf != nd + 1)
		return cf->sw ? lerr(ld, cf->file, line, TP_EINVAL,
				     "expected a node name, its group and its switch, found %d field%s",
				     nf, nf == 1 ? "" : "s")
			: lerr(ld, cf->file, line, TP_EINVAL,
			       "expected a node name and %d coordinates, found %d field%s",
			       nd, nf, nf == 1 ? "" : "s");
	int c[TP_MAX_DIMS];
	int rc = coord_values(cf, f, line, c);
	if (rc == TP_OK && !cf_run_extend(&cf->run, f[0], c, line)) {
		rc = cf_run_flush(&cf->run);
		if (rc == TP_OK)
			rc = tp__ld_nodes_reserve(ld, 1, false);
		if (rc == TP_OK && !cf_run_start(&cf->run, f[0], c, line))
			rc = tp__ld_place_node(ld, f[0], c, cf->run.src, line);
	}
	cf->placed++;
	return rc;
}

/* CoordFile=: lines "name x y z"; SwitchFile= (dragonflies): lines "name
 * group switch". */
int tp__ld_load_coord_file(struct loader *ld, const struct tp__conf_tok *t)
{
	bool sw = !strcasecmp(t->key, "SwitchFile");
	ld->cur_topo = -1;      /* models come from later NodeName= lines */
	const struct tp__conf_kind *kind = ld->c->kind;
	if (sw && !(kind && kind->switch_file))
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "SwitchFile= needs Network=%s", switch_file_kind());
	int rc = tp__ld_ensure_machine(ld, t->line, sw ? "SwitchFile=" : "CoordFile=");
	if (rc)
		return rc;
	if (ld->c->from_slurm)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "%s= does not apply to Slurm's topology (its file places the nodes)",
			    t->key);
	if (ld->c->kind->nodes_sit)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "CoordFile= does not apply to Network=%s", ld->c->kind->name);
	char *path;
	if (t->val[0] != '/' && ld->dir) {
		size_t n = strlen(ld->dir) + strlen(t->val) + 2;
		path = malloc(n);
		if (path)
			snprintf(path, n, "%s/%s", ld->dir, t->val);
	} else {
		path = strdup(t->val);
	}
	if (!path)
		return oom(ld);
	int src = tp__ld_add_src(ld, path);
	free(path);
	if (src < 0)
		return oom(ld);
	const char *file = ld->srcs[src];
	char *text;
	size_t len;
	tp_error e2;
	tp_error_clear(&e2);
	rc = tp__read_file(file, TP__MAX_COORDS_BYTES, sw ? "a SwitchFile" : "a CoordFile",
			   &text, &len, &e2);
	if (rc)
		return tp__ld_file_err(ld, t->line, rc, t->key, t->val, file, &e2);
	struct coord_file cf = {
		.ld = ld, .file = file, .sw = sw,
		.run = { .ld = ld, .src = src, .nd = ld->c->b.m->ndims },
	};
	/* a coordinate file usually fills the grid: room for it at once
	 * (address space until nodes are placed) */
	rc = tp__ld_nodes_reserve(ld, 1, true);
	if (rc == TP_OK)
		rc = tp__each_line(text, &coord_format, file, ld->r.err, coord_line, &cf);
	if (rc == TP_OK)
		rc = cf_run_flush(&cf.run);
	free(text);
	if (rc == TP_OK && cf.placed == 0)
		rc = lerr(ld, file, 0, TP_EINVAL, "no nodes in %s", t->key);
	return rc;
}
