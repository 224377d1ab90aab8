/* topoplace — topoplace.conf's reader (see conf.h; the format:
 * doc/topoplace.conf.5): the text cut into logical lines, each line handed
 * to the settings or to the node lines, the machine built at the first line
 * that needs it, and the loading entry points.
 *
 * The text is read whole and cut into physical lines by the core's one line
 * loop (tp__each_line), comments removed; '\'-continued lines are joined
 * here into logical lines of Key=Value tokens, each token remembering its
 * own physical line for messages.  A logical line holding NodeName= places
 * nodes (conf_nodes.c); any other line sets machine-wide or site settings
 * (conf_settings.c).
 * The machine is created when the first NodeName= or CoordFile= is met, so the
 * shape settings must come before that.
 *
 * No kind of network is named here: Network= picks one of tp__conf_kinds
 * (conf/conf_kind.h), whose own keys, machine and check-config account live
 * in its file (net/torus.c, tree.c, dragonfly.c, block.c).  What stays in
 * conf/ is what every network shares, and Slurm's topology as the source of
 * the machine (Network=slurm, or no Network=: conf_slurm.c), described with
 * Slurm's own kinds of topology (slurm_topo.h).
 *
 * conf/, one concern a file, sharing the loader (conf_loader.h):
 *   conf.c           the reader: tokens, logical lines, the machine, loading
 *   conf_settings.c  the keys every network shares, and the value parsers
 *                    the kinds use too (tp__conf_int, _bandwidth, ...)
 *   conf_nodes.c     NodeName= lines: nodes placed, and where from
 *   conf_coords.c    CoordFile= and SwitchFile=
 *   conf_slurm.c     Slurm's topology as the machine
 *   conf_models.c    the node models of NodeName= lines, and what a loaded
 *                    config answers (the tp_conf_* accessors)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topoplace/conf.h>
#include "conf/conf_kind.h"
#include "slurm/slurm_topo.h"
#include "util/util_internal.h"
#include "conf/conf_loader.h"
#include "net/machine_internal.h"

/* ---- the machine ---- */

static int nkinds(void)
{
	int n = 0;
	while (tp__conf_kinds[n])
		n++;
	return n;
}

/* The state of kind k (NULL: it keeps none). */
void *tp__ld_state_of(const struct loader *ld, const struct tp__conf_kind *k)
{
	for (int i = 0; tp__conf_kinds[i]; i++)
		if (tp__conf_kinds[i] == k)
			return ld->state[i];
	return NULL;
}

/* Where the line of key j of kind i is kept (0: not given). */
int *tp__ld_key_line(const struct loader *ld, int i, int j)
{
	return (int *)((char *)ld->state[i] + tp__conf_kinds[i]->keys[j].line_at);
}

/* Given without Network=, a key of a network of the config's own (Dims=,
 * or a kind's key that says so): not Slurm's topology. */
static bool own_network(const struct loader *ld)
{
	if (ld->r.dims_line)
		return true;
	for (int i = 0; tp__conf_kinds[i]; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++)
			if ((tp__conf_kinds[i]->keys[j].flags & TP__CONF_KEY_OWN_NETWORK) &&
			    *tp__ld_key_line(ld, i, j))
				return true;
	return false;
}

/* Keys of one kind of network given to another: "X= needs Network=K". */
static int foreign_keys(struct loader *ld)
{
	/* the first of them in the file; of one line, the key of the kind
	 * listed last (the order these messages have always had) */
	int fi = -1, fj = -1, first = 0;
	for (int i = nkinds() - 1; i >= 0; i--) {
		if (tp__conf_kinds[i] == ld->c->kind)
			continue;
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++) {
			int l = *tp__ld_key_line(ld, i, j);
			if (l && (fi < 0 || l < first)) {
				fi = i;
				fj = j;
				first = l;
			}
		}
	}
	if (fi >= 0)
		return lerr(ld, NULL, first, TP_EINVAL, "%s= needs Network=%s",
			    tp__conf_kinds[fi]->keys[fj].name, tp__conf_kinds[fi]->name);
	return TP_OK;
}

/* Create the machine from the settings, at the first line that needs it. */
int tp__ld_ensure_machine(struct loader *ld, int line, const char *key)
{
	if (ld->c->b.m)
		return TP_OK;
	/* no Network= and no shape of its own: Slurm's topology, unless the
	 * line places nodes itself (then Network= was forgotten) */
	bool places = strcmp(key, "NodeName=") && strcmp(key, "end of file");
	if (!ld->r.net_line && !own_network(ld) && !places)
		ld->slurm_net = true;
	if (!ld->r.net_line && !ld->slurm_net)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "%s before Network= (Network= and Dims= must come first)", key);
	if (ld->slurm_net)
		return tp__ld_ensure_slurm(ld, line, key);
	const struct tp__conf_kind *k = ld->c->kind;
	int rc = foreign_keys(ld);
	if (!rc)
		rc = k->build(&ld->r, tp__ld_state_of(ld, k), line, key);
	if (!rc)
		ld->first_node_line = line;
	return rc;
}

/* ---- logical lines ---- */

static int logical_line(struct loader *ld)
{
	const struct tp__conf_tok *name = NULL;
	for (int i = 0; i < ld->ntoks; i++) {
		if (!strcasecmp(ld->toks[i].key, "NodeName")) {
			if (name)
				return lerr(ld, NULL, ld->toks[i].line, TP_EINVAL,
					    "NodeName= given twice on one line");
			name = &ld->toks[i];
		}
	}
	int rc = name ? tp__ld_node_line(ld, ld->toks, ld->ntoks)
		      : tp__ld_settings_line(ld, ld->toks, ld->ntoks);
	ld->ntoks = 0;
	return rc;
}

static int push_tok(struct loader *ld, char *key, char *val, int line)
{
	if (ld->ntoks == ld->tokcap) {
		int ncap = ld->tokcap ? ld->tokcap * 2 : 16;
		struct tp__conf_tok *nt = realloc(ld->toks, (size_t)ncap * sizeof *nt);
		if (!nt)
			return oom(ld);
		ld->toks = nt;
		ld->tokcap = ncap;
	}
	ld->toks[ld->ntoks].key = key;
	ld->toks[ld->ntoks].val = val;
	ld->toks[ld->ntoks].line = line;
	ld->ntoks++;
	return TP_OK;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Split one physical line (comment already cut) into tokens, in place.
 * Double quotes group a value that holds blanks: CoordFile="a b.coords". */
static int tokenize(struct loader *ld, char *s, int line)
{
	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			return TP_OK;
		char *start = s, *w = s, *eq = NULL;
		bool q = false;
		for (; *s && (q || !is_blank(*s)); s++) {
			if (*s == '"') {
				q = !q;
				continue;
			}
			if (*s == '=' && !eq && !q)
				eq = w;
			*w++ = *s;
		}
		if (q) {
			*w = '\0';   /* the token as read, not its unshifted tail */
			return lerr(ld, NULL, line, TP_EINVAL,
				    "unterminated '\"' in '%s'", start);
		}
		bool more = *s != '\0';
		*w = '\0';
		if (more)
			s++;
		if (!eq)
			return lerr(ld, NULL, line, TP_EINVAL,
				    "'%s': expected Key=Value", start);
		*eq = '\0';
		if (eq == start)
			return lerr(ld, NULL, line, TP_EINVAL,
				    "'=%s': missing key before '='", eq + 1);
		if (!eq[1])
			return lerr(ld, NULL, line, TP_EINVAL, "%s=: empty value",
				    start);
		int rc = push_tok(ld, start, eq + 1, line);
		if (rc)
			return rc;
		if (!more)
			return TP_OK;
	}
}

static int at_end(struct loader *ld);

/* topoplace.conf's lines: a '#' between double quotes is no comment
 * (CoordFile="a#b.coords") and a '\' escapes nothing.  Its '\'
 * continuation is conf_line's, not the loop's: each token of a continued
 * line keeps its own physical line for messages. */
static const struct tp__line_format conf_format = {
	.comment = '#', .quotes = true,
};

/* One physical line, comment cut: its tokens join those that a '\' at
 * the end of the lines before carried over; a line without one ends the
 * logical line, which then takes effect. */
static int conf_line(void *arg, char *p, long number)
{
	struct loader *ld = arg;
	size_t len = strlen(p);
	while (len && is_blank(p[len - 1]))
		p[--len] = '\0';
	bool cont = len && p[len - 1] == '\\';
	if (cont)
		p[--len] = '\0';
	int rc = tokenize(ld, p, (int)number);
	if (rc == TP_OK && !cont && ld->ntoks)
		rc = logical_line(ld);
	return rc;
}

static int parse_text(struct loader *ld, char *text)
{
	int rc = tp__each_line(text, &conf_format, ld->r.what, ld->r.err,
			       conf_line, ld);
	/* a '\' on the last line: the tokens it carried still take effect */
	if (rc == TP_OK && ld->ntoks)
		rc = logical_line(ld);
	if (rc)
		return rc;
	return at_end(ld);
}

/* After the last line: the machine built, checked and finished. */
static int at_end(struct loader *ld)
{
	int rc;
	if (!ld->r.net_line && !own_network(ld))
		ld->slurm_net = true;   /* zero configuration: Slurm's topology */
	if (!ld->r.net_line && !ld->slurm_net)
		return lerr(ld, NULL, 0, TP_EINVAL, "no Network= line");
	if (ld->slurm_net && (rc = tp__ld_ensure_machine(ld, 0, "end of file")))
		return rc;
	const struct tp__conf_kind *kind = ld->c->kind;
	if (!kind->dims_shape && (rc = tp__ld_ensure_machine(ld, 0, "end of file")))
		return rc;
	if (ld->c->b.m) {
		struct tp__fabric *f = &ld->c->b.m->fab;
		if (ld->lat_line)
			f->hop_lat = ld->lat_s;
		if (ld->nodebw_line) {
			f->node_bw = ld->nodebw * 1e9;
			f->node_bw_set = true;
		}
		if (ld->intrabw_line)
			f->intra_bw = ld->intrabw * 1e9;
		if (ld->sharing_line) {
			f->sharing = ld->sharing;
			f->sharing_set = true;
		}
		if (ld->eager_line) {
			f->eager_bytes = ld->eager_bytes;
			f->eager_set = true;
		}
	}
	if (kind->finish && (rc = kind->finish(&ld->r, tp__ld_state_of(ld, kind))))
		return rc;
	if (kind->dims_shape && !ld->r.dims_line && !ld->c->from_slurm)
		return lerr(ld, NULL, 0, TP_EINVAL, "no Dims= line");
	if (!ld->c->b.m || ld->c->b.m->nnodes == 0)
		return lerr(ld, NULL, 0, TP_EINVAL,
			    "no nodes (no NodeName= or CoordFile= line)");
	return TP_OK;
}

/* Each kind's state, zeroed. */
static int states_new(struct loader *ld)
{
	int n = nkinds();
	if (!(ld->state = calloc((size_t)n, sizeof *ld->state)))
		return -1;
	for (int i = 0; i < n; i++)
		if (tp__conf_kinds[i]->state_size &&
		    !(ld->state[i] = calloc(1, tp__conf_kinds[i]->state_size)))
			return -1;
	return 0;
}

static void loader_free(struct loader *ld)
{
	free(ld->dir);
	free(ld->r.dims_text);
	free(ld->r.wrap_text);
	free(ld->r.bw_text);
	free(ld->r.topo_text);
	for (int i = 0; ld->state && tp__conf_kinds[i]; i++) {
		if (ld->state[i] && tp__conf_kinds[i]->free_state)
			tp__conf_kinds[i]->free_state(ld->state[i]);
		free(ld->state[i]);
	}
	free(ld->state);
	free(ld->origin);
	for (int i = 0; i < ld->nsrcs; i++)
		free(ld->srcs[i]);
	free(ld->srcs);
	free(ld->toks);
}

static int load(char *text, const char *what, const char *dir,
		const tp_conf_slurm *slurm, const struct tp__slurm_live *live,
		tp_conf **out, tp_error *err)
{
	struct loader ld;
	memset(&ld, 0, sizeof ld);
	ld.cur_topo = -1;
	ld.slurm = slurm;
	ld.r.what = what;
	ld.r.err = err;
	ld.c = calloc(1, sizeof *ld.c);
	int rc = TP_OK;
	if (!ld.c || !(ld.c->path = strdup(what)) || (dir && !(ld.dir = strdup(dir))) ||
	    tp__ld_add_src(&ld, what) != 0 || states_new(&ld) || tp__ld_keep_live(ld.c, live)) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	} else {
		ld.r.dir = ld.dir;
		ld.r.out = &ld.c->b;
		ld.c->policy = TP_POLICY_NONE;
		ld.c->metric = TP_METRIC_HOP_BYTES;
		rc = parse_text(&ld, text);
	}
	if (rc) {
		tp_conf_destroy(ld.c);
		ld.c = NULL;
	}
	*out = ld.c;
	loader_free(&ld);
	return rc;
}

int tp_conf_load(const char *path, tp_conf **out, tp_error *err)
{
	return tp_conf_load_slurm(path, NULL, out, err);
}

int tp_conf_load_slurm(const char *path, const tp_conf_slurm *slurm,
		       tp_conf **out, tp_error *err)
{
	return tp_conf_load_slurm_live(path, slurm, NULL, 0, NULL, NULL, out, err);
}

int tp_conf_load_slurm_live(const char *path, const tp_conf_slurm *slurm,
			    const char *live_text, size_t live_len,
			    const char *live_topology, const char *live_what,
			    tp_conf **out, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "tp_conf_load: out is NULL");
	*out = NULL;
	if (!path || !*path)
		return tp_error_set(err, TP_EINVAL, "tp_conf_load: no path");
	char *text;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_CONF_BYTES, "topoplace.conf", &text,
			       &len, err);
	if (rc)
		return rc;
	char *dir = NULL;
	const char *slash = strrchr(path, '/');
	if (slash) {
		size_t n = (size_t)(slash - path);
		dir = strndup(path, n ? n : 1); /* "/x.conf" -> "/" */
		if (!dir) {
			free(text);
			return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
		}
	}
	struct tp__slurm_live live = { live_text, live_len, live_topology, live_what };
	rc = load(text, path, dir, slurm, live_text ? &live : NULL, out, err);
	free(dir);
	free(text);
	return rc;
}

int tp_conf_load_string(const char *text, const char *what, tp_conf **out,
			tp_error *err)
{
	if (!what)
		what = "config";
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: out is NULL", what);
	*out = NULL;
	if (!text)
		return tp_error_set(err, TP_EINVAL, "%s: text is NULL", what);
	char *copy = strdup(text);
	if (!copy)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = load(copy, what, NULL, NULL, NULL, out, err);
	free(copy);
	return rc;
}

void tp_conf_destroy(tp_conf *c)
{
	if (!c)
		return;
	tp_machine_destroy(c->b.m);
	free(c->source);
	free(c->used);
	free((char *)c->live.text);
	free((char *)c->live.topology);
	free((char *)c->live.what);
	for (int i = 0; i < c->nslurm_topo; i++)
		free(c->slurm_topo[i]);
	free(c->slurm_topo);
	free(c->b.topo_path);
	free(c->b.tree_path);
	for (int i = 0; i < c->ntopo; i++) {
		free(c->topo_xml[i]);
		free(c->topo_links[i]);
	}
	free(c->topo_xml);
	free(c->topo_links);
	free(c->topo_linkbw);
	free(c->topo_line);
	free(c->node_topo);
	free(c->path);
	free(c);
}

/* A path relative to the config file's directory; NULL when out of memory. */
char *tp__ld_conf_path(const struct loader *ld, const char *val)
{
	if (val[0] == '/' || !ld->dir)
		return strdup(val);
	size_t n = strlen(ld->dir) + strlen(val) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", ld->dir, val);
	return p;
}
