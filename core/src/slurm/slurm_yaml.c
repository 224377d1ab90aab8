/* topoplace — Slurm's topology.yaml (Slurm 25.05 and later) into records.
 *
 * libyaml reads the text; this file only walks what it read, with the rules
 * of Slurm's own reader (data_parser's TOPOLOGY_CONF_ARRAY, v0.0.45):
 *   - the top is a list of topologies, or one topology as a mapping;
 *   - a topology has topology: NAME, cluster_default: BOOL, and exactly one
 *     of tree:, block:, flat:, ring:, torus3d: ("mutually exclusive");
 *   - tree: {switches: [{switch, children, nodes}]}, block: {block_sizes,
 *     blocks: [{block, nodes}]}, ring: {rings: [{ring, nodes}]}, torus3d:
 *     {toruses: [{name, dims, nodes | regions, placements}]}, flat: BOOL or
 *     {alpha_step_rank}; a list of one entry may be written as the entry;
 *   - block_sizes: a list of integers, or one;
 *   - a key Slurm does not know is ignored with a warning, as Slurm's
 *     parser does ("Ignoring unknown field");
 *   - aliases are refused (Slurm's YAML serializer refuses them), so are
 *     further documents in the stream (Slurm reads one).
 * What each kind then checks (names, sizes, nodes) is the kind's builder's
 * job, the same for topology.conf.  Every message names the file and line.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "slurm/slurm_topo.h"

/* Deeper than any topology.yaml (torus3d regions are 6 levels down); a
 * bound on the recursion of a hostile file. */
#define MAX_DEPTH 32

enum ytype { Y_SCALAR, Y_LIST, Y_MAP };

/* The read document: a tree of nodes, children in order (maps alternate
 * key, value). */
struct ynode {
	enum ytype type;
	int line;               /* 1-based */
	char *text;             /* scalars */
	struct ynode **kid;
	int32_t nkid, cap;
	bool plain;             /* a plain (unquoted) scalar */
};

struct yreader {
	const char *what;
	tp_error *err;
	struct tp__warnings *warn;
};

#define yerr(r, line, ...) \
	tp__line_error((r)->err, (r)->what, (line), TP_EINVAL, __VA_ARGS__)

static void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (int32_t i = 0; i < n->nkid; i++)
		ynode_free(n->kid[i]);
	free(n->kid);
	free(n->text);
	free(n);
}

static int add_kid(struct ynode *p, struct ynode *k)
{
	if (p->nkid == p->cap) {
		int32_t nc = p->cap ? 2 * p->cap : 4;
		if (nc < 0 || nc > INT32_MAX / 2)
			return TP_ENOMEM;
		struct ynode **nk = realloc(p->kid, sizeof *nk * (size_t)nc);
		if (!nk)
			return TP_ENOMEM;
		p->kid = nk;
		p->cap = nc;
	}
	p->kid[p->nkid++] = k;
	return TP_OK;
}

static const char *event_name(yaml_event_type_t t)
{
	switch (t) {
	case YAML_ALIAS_EVENT: return "an alias";
	case YAML_DOCUMENT_START_EVENT: return "a second document";
	default: return "an unexpected YAML event";
	}
}

/* The next node of the event stream (ev: its first event, consumed). */
static int read_node(struct yreader *r, yaml_parser_t *ps, yaml_event_t *ev,
		     int depth, struct ynode **out)
{
	*out = NULL;
	int line = (int)ev->start_mark.line + 1;
	if (ev->type == YAML_ALIAS_EVENT)
		return yerr(r, line, "YAML alias *%s: aliases are not supported "
			    "(Slurm refuses them too)", ev->data.alias.anchor);
	if (ev->type != YAML_SCALAR_EVENT &&
	    ev->type != YAML_SEQUENCE_START_EVENT &&
	    ev->type != YAML_MAPPING_START_EVENT)
		return yerr(r, line, "%s", event_name(ev->type));
	if (depth > MAX_DEPTH)
		return yerr(r, line, "nested more than %d levels deep", MAX_DEPTH);
	struct ynode *n = calloc(1, sizeof *n);
	if (!n)
		return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
	n->line = line;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->type = Y_SCALAR;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->text = strndup((const char *)ev->data.scalar.value,
				  ev->data.scalar.length);
		if (!n->text || strlen(n->text) != ev->data.scalar.length) {
			bool nul = n->text != NULL;
			ynode_free(n);
			return nul ? yerr(r, line, "a NUL character in a value")
				   : tp_error_set(r->err, TP_ENOMEM, "%s: out of memory",
						  r->what);
		}
		*out = n;
		return TP_OK;
	}
	n->type = ev->type == YAML_SEQUENCE_START_EVENT ? Y_LIST : Y_MAP;
	yaml_event_type_t end = n->type == Y_LIST ? YAML_SEQUENCE_END_EVENT
						  : YAML_MAPPING_END_EVENT;
	int rc = TP_OK;
	for (;;) {
		yaml_event_t e;
		if (!yaml_parser_parse(ps, &e)) {
			rc = yerr(r, (int)ps->problem_mark.line + 1, "YAML: %s%s%s",
				  ps->problem ? ps->problem : "syntax error",
				  ps->context ? " " : "", ps->context ? ps->context : "");
			break;
		}
		if (e.type == end) {
			yaml_event_delete(&e);
			break;
		}
		struct ynode *k;
		rc = read_node(r, ps, &e, depth + 1, &k);
		yaml_event_delete(&e);
		if (!rc && add_kid(n, k)) {
			ynode_free(k);
			rc = tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
		}
		if (rc)
			break;
	}
	if (rc) {
		ynode_free(n);
		return rc;
	}
	*out = n;
	return TP_OK;
}

/* The whole text: one document (an empty file is no topology). */
static int read_document(struct yreader *r, const char *text, size_t len,
			 struct ynode **root)
{
	*root = NULL;
	yaml_parser_t ps;
	if (!yaml_parser_initialize(&ps))
		return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	int rc = TP_OK;
	bool in_doc = false, done = false;
	while (!rc && !done) {
		yaml_event_t e;
		if (!yaml_parser_parse(&ps, &e)) {
			rc = yerr(r, (int)ps.problem_mark.line + 1, "YAML: %s%s%s",
				  ps.problem ? ps.problem : "syntax error",
				  ps.context ? " " : "", ps.context ? ps.context : "");
			break;
		}
		int line = (int)e.start_mark.line + 1;
		switch (e.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (in_doc)
				rc = yerr(r, line, "a second YAML document: "
					  "topology.yaml holds one (Slurm reads one)");
			in_doc = true;
			break;
		default:
			if (*root)
				rc = yerr(r, line, "%s", event_name(e.type));
			else
				rc = read_node(r, &ps, &e, 0, root);
		}
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&ps);
	if (rc) {
		ynode_free(*root);
		*root = NULL;
	}
	return rc;
}

/* ---- the topologies ---- */

static const char *type_name(const struct ynode *n)
{
	return n->type == Y_LIST ? "a list" : n->type == Y_MAP ? "a mapping"
	       : "a value";
}

/* A scalar's text, or an error "KEY: expected WANT, not a list". */
static int scalar(struct yreader *r, const struct ynode *v, const char *key,
		  const char *want, const char **out)
{
	if (v->type != Y_SCALAR)
		return yerr(r, v->line, "%s: expected %s, not %s", key, want,
			    type_name(v));
	*out = v->text;
	return TP_OK;
}

/* A name or hostlist: a non-empty scalar ("null" or "~" is none). */
static int string_value(struct yreader *r, const struct ynode *v,
			const char *key, const char **out)
{
	const char *s = NULL;
	int rc = scalar(r, v, key, "a string", &s);
	if (rc)
		return rc;
	if (v->plain && (!*s || !strcmp(s, "~") || !strcasecmp(s, "null")))
		s = NULL;
	*out = s && *s ? s : NULL;
	return TP_OK;
}

static int bool_value(struct yreader *r, const struct ynode *v, const char *key,
		      bool *out)
{
	const char *s = NULL;
	int rc = scalar(r, v, key, "true or false", &s);
	if (rc)
		return rc;
	static const char *const yes[] = { "true", "yes", "on", "1", "y" };
	static const char *const no[] = { "false", "no", "off", "0", "n" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return TP_OK;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return TP_OK;
		}
	}
	return yerr(r, v->line, "%s: %s: expected true or false", key, s);
}

static int int_value(struct yreader *r, const struct ynode *v, const char *key,
		     long lo, long hi, int *out)
{
	const char *s = NULL;
	int rc = scalar(r, v, key, "an integer", &s);
	if (rc)
		return rc;
	char *end;
	long x = strtol(s, &end, 10);
	if (end == s || *end || x < lo || x > hi)
		return yerr(r, v->line, "%s: %s: expected an integer in %ld..%ld",
			    key, s, lo, hi);
	*out = (int)x;
	return TP_OK;
}

static void unknown_key(struct yreader *r, const struct ynode *k,
			const char *in)
{
	tp__warn(r->warn, "%s:%d: unknown key '%s' in %s, ignored (as Slurm "
		 "ignores it)", r->what, k->line, k->text, in);
}

/* A mapping's keys as scalars; "KEY: expected a mapping" otherwise. */
static int mapping(struct yreader *r, const struct ynode *v, const char *key)
{
	if (v->type != Y_MAP)
		return yerr(r, v->line, "%s: expected a mapping, not %s", key,
			    type_name(v));
	for (int32_t i = 0; i < v->nkid; i += 2) {
		if (v->kid[i]->type != Y_SCALAR)
			return yerr(r, v->kid[i]->line, "a key that is %s",
				    type_name(v->kid[i]));
		/* as a dictionary keeps it: the last value of a key counts */
		for (int32_t j = 0; j < i; j += 2)
			if (!strcmp(v->kid[j]->text, v->kid[i]->text)) {
				tp__warn(r->warn, "%s:%d: %s: given twice (also on "
					 "line %d), the last one counts", r->what,
					 v->kid[i]->line, v->kid[i]->text,
					 v->kid[j]->line);
				break;
			}
	}
	return TP_OK;
}

/* The entries of a list key; a mapping alone is a list of one, as Slurm's
 * parser takes it. */
static int entries(struct yreader *r, const struct ynode *v, const char *key,
		   struct ynode *const **items, int32_t *n, struct ynode **one)
{
	if (v->type == Y_MAP) {
		*one = (struct ynode *)v;   /* the caller's slot: a list of v */
		*items = one;
		*n = 1;
		return TP_OK;
	}
	if (v->type != Y_LIST)
		return yerr(r, v->line, "%s: expected a list, not %s", key,
			    type_name(v));
	*items = v->kid;
	*n = v->nkid;
	return TP_OK;
}

/* One topology as it is read: its records point into the document. */
struct reading {
	struct yreader *r;
	struct tp__stopo *t;
	size_t rec_cap;
};

static int add_rec(struct reading *g, const struct tp__topo_rec *rec)
{
	struct tp__stopo *t = g->t;
	if (tp__grow((void **)&t->rec, (size_t)t->nrec, &g->rec_cap, sizeof *t->rec))
		return tp_error_set(g->r->err, TP_ENOMEM, "%s: out of memory",
				    g->r->what);
	t->rec[t->nrec++] = *rec;
	return TP_OK;
}

/* switches:, blocks:, rings: — each entry {NAME_KEY: name, nodes:,
 * children: (trees)}. */
static int read_records(struct reading *g, const struct ynode *v,
			const char *list_key, const char *name_key, bool tree)
{
	struct yreader *r = g->r;
	struct ynode *const *items = NULL, *one;
	int32_t n = 0;
	g->t->nrec = 0;   /* a second list key: the last one counts */
	int rc = entries(r, v, list_key, &items, &n, &one);
	for (int32_t i = 0; !rc && i < n; i++) {
		const struct ynode *e = items[i];
		if ((rc = mapping(r, e, list_key)))
			break;
		struct tp__topo_rec rec = { .line = e->line };
		for (int32_t j = 0; !rc && j < e->nkid; j += 2) {
			const struct ynode *k = e->kid[j], *val = e->kid[j + 1];
			if (!strcmp(k->text, name_key))
				rc = string_value(r, val, name_key, &rec.name);
			else if (!strcmp(k->text, "nodes"))
				rc = string_value(r, val, "nodes", &rec.nodes);
			else if (tree && !strcmp(k->text, "children"))
				rc = string_value(r, val, "children", &rec.switches);
			else if (tree && !strcmp(k->text, "link_speed"))
				continue;
			else
				unknown_key(r, k, list_key);
		}
		if (!rc && !rec.name)
			rc = yerr(r, e->line, "%s: an entry without %s:", list_key,
				  name_key);
		if (!rc)
			rc = add_rec(g, &rec);
	}
	return rc;
}

/* block_sizes: a list of integers, or one (INT32_LIST); the rules on the
 * values are the block builder's. */
static int read_sizes(struct reading *g, const struct ynode *v)
{
	struct yreader *r = g->r;
	struct tp__block_sizes *s = &g->t->sizes;
	s->n = 0;   /* a second block_sizes: the last one counts */
	s->line = v->line;
	if (v->type == Y_SCALAR)
		return int_value(r, v, "block_sizes", 1, INT_MAX / 2, &s->size[s->n++]);
	if (v->type != Y_LIST)
		return yerr(r, v->line, "block_sizes: expected a list of integers, "
			    "not %s", type_name(v));
	int max = (int)(sizeof s->size / sizeof *s->size);
	if (v->nkid > max)
		return yerr(r, v->line, "block_sizes: more than %d sizes", max);
	if (!v->nkid)
		return yerr(r, v->line, "block_sizes: an empty list");
	for (int32_t i = 0; i < v->nkid; i++) {
		int rc = int_value(r, v->kid[i], "block_sizes", 1, INT_MAX / 2,
				   &s->size[s->n++]);
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* {x: , y: , z: } (TORUS3D_DIMS; each 0..65535 as Slurm's uint16). */
static int read_xyz(struct yreader *r, const struct ynode *v, const char *key,
		    int *xyz, bool *given)
{
	int rc = mapping(r, v, key);
	for (int32_t j = 0; !rc && j < v->nkid; j += 2) {
		const struct ynode *k = v->kid[j];
		int d = !strcmp(k->text, "x") ? 0 : !strcmp(k->text, "y") ? 1
			: !strcmp(k->text, "z") ? 2 : -1;
		if (d < 0) {
			unknown_key(r, k, key);
			continue;
		}
		char name[64];
		snprintf(name, sizeof name, "%s: %s", key, k->text);
		rc = int_value(r, v->kid[j + 1], name, 0, 65535, &xyz[d]);
		if (!rc && given)
			given[d] = true;
	}
	return rc;
}

static int read_regions(struct reading *g, struct tp__torus3d *t,
			const struct ynode *v)
{
	struct yreader *r = g->r;
	struct ynode *const *items = NULL, *one;
	int32_t n = 0;
	int rc = entries(r, v, "regions", &items, &n, &one);
	if (rc)
		return rc;
	struct tp__torus_region *reg = calloc((size_t)n + 1, sizeof *reg);
	if (!reg)
		return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
	free((void *)t->region);   /* a second regions: key: the last wins */
	t->region = reg;
	t->nregions = 0;
	for (int32_t i = 0; !rc && i < n; i++) {
		const struct ynode *e = items[i];
		if ((rc = mapping(r, e, "regions")))
			break;
		reg[i].line = e->line;
		for (int32_t j = 0; !rc && j < e->nkid; j += 2) {
			const struct ynode *k = e->kid[j], *val = e->kid[j + 1];
			if (!strcmp(k->text, "anchor"))
				rc = read_xyz(r, val, "anchor", reg[i].anchor, NULL);
			else if (!strcmp(k->text, "dims"))
				rc = read_xyz(r, val, "dims", reg[i].dims, NULL);
			else if (!strcmp(k->text, "nodes"))
				rc = string_value(r, val, "nodes", &reg[i].nodes);
			else
				unknown_key(r, k, "regions");
		}
		t->nregions = i + 1;
	}
	return rc;
}

/* placements: Slurm's allocation shapes; they say nothing of the links,
 * the torus builder only checks them as Slurm does. */
static int read_placements(struct reading *g, struct tp__torus3d *t,
			   const struct ynode *v)
{
	struct yreader *r = g->r;
	struct ynode *const *items = NULL, *one;
	int32_t n = 0;
	int rc = entries(r, v, "placements", &items, &n, &one);
	if (rc)
		return rc;
	struct tp__torus_placement *pl = calloc((size_t)n + 1, sizeof *pl);
	if (!pl)
		return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
	free((void *)t->placement);
	t->placement = pl;
	for (int32_t i = 0; !rc && i < n; i++) {
		const struct ynode *e = items[i];
		if ((rc = mapping(r, e, "placements")))
			break;
		pl[i].line = e->line;
		t->nplacements = i + 1;
		for (int32_t j = 0; !rc && j < e->nkid; j += 2) {
			const struct ynode *k = e->kid[j], *val = e->kid[j + 1];
			if (!strcmp(k->text, "dims"))
				rc = read_xyz(r, val, "dims", pl[i].dims, NULL);
			else if (!strcmp(k->text, "anchor_seed"))
				rc = read_xyz(r, val, "anchor_seed", pl[i].seed, NULL);
			else if (!strcmp(k->text, "anchor_spacing"))
				rc = read_xyz(r, val, "anchor_spacing", pl[i].spacing, NULL);
			else
				unknown_key(r, k, "placements");
		}
	}
	return rc;
}

static int read_toruses(struct reading *g, const struct ynode *v)
{
	struct yreader *r = g->r;
	struct ynode *const *items = NULL, *one;
	int32_t n = 0;
	int rc = entries(r, v, "toruses", &items, &n, &one);
	if (rc)
		return rc;
	struct tp__stopo *t = g->t;
	for (int j = 0; j < t->ntorus; j++) {   /* a second toruses: key */
		free((void *)t->torus[j].region);
		free((void *)t->torus[j].placement);
	}
	free(t->torus);
	t->ntorus = 0;
	t->torus = calloc((size_t)n + 1, sizeof *t->torus);
	if (!t->torus)
		return tp_error_set(r->err, TP_ENOMEM, "%s: out of memory", r->what);
	for (int32_t i = 0; !rc && i < n; i++) {
		const struct ynode *e = items[i];
		if ((rc = mapping(r, e, "toruses")))
			break;
		struct tp__torus3d *u = &t->torus[i];
		u->line = e->line;
		t->ntorus = i + 1;
		for (int32_t j = 0; !rc && j < e->nkid; j += 2) {
			const struct ynode *k = e->kid[j], *val = e->kid[j + 1];
			if (!strcmp(k->text, "name"))
				rc = string_value(r, val, "name", &u->name);
			else if (!strcmp(k->text, "dims"))
				rc = read_xyz(r, val, "dims", u->dims, NULL);
			else if (!strcmp(k->text, "nodes"))
				rc = string_value(r, val, "nodes", &u->nodes);
			else if (!strcmp(k->text, "regions"))
				rc = read_regions(g, u, val);
			else if (!strcmp(k->text, "placements"))
				rc = read_placements(g, u, val);
			else
				unknown_key(r, k, "toruses");
		}
		if (!rc && !u->name)
			rc = yerr(r, e->line, "toruses: an entry without name:");
	}
	return rc;
}

/* The kind's own mapping: tree: {switches}, block: {block_sizes, blocks},
 * ring: {rings}, torus3d: {toruses}. */
static int read_kind(struct reading *g, const char *kind, const struct ynode *v)
{
	struct yreader *r = g->r;
	struct tp__stopo *t = g->t;
	if (!strcmp(kind, "flat")) {
		bool on = true;
		int rc = v->type == Y_MAP ? TP_OK : bool_value(r, v, "flat", &on);
		if (rc)
			return rc;
		if (on)
			t->kind = TP__STOPO_FLAT;
		for (int32_t j = 0; v->type == Y_MAP && j < v->nkid; j += 2) {
			if (v->kid[j]->type != Y_SCALAR ||
			    strcmp(v->kid[j]->text, "alpha_step_rank")) {
				unknown_key(r, v->kid[j], "flat");
				continue;
			}
			/* steps lay tasks out by node name (slurm_order.c) */
			bool alpha = false;
			if ((rc = bool_value(r, v->kid[j + 1], "alpha_step_rank",
					     &alpha)))
				return rc;
			t->alpha_step_rank = alpha;
		}
		return TP_OK;
	}
	int rc = mapping(r, v, kind);
	if (rc)
		return rc;
	t->kind = !strcmp(kind, "tree") ? TP__STOPO_TREE : !strcmp(kind, "block")
		  ? TP__STOPO_BLOCK : !strcmp(kind, "ring") ? TP__STOPO_RING
		  : TP__STOPO_TORUS3D;
	for (int32_t j = 0; !rc && j < v->nkid; j += 2) {
		const struct ynode *k = v->kid[j], *val = v->kid[j + 1];
		if (t->kind == TP__STOPO_TREE && !strcmp(k->text, "switches"))
			rc = read_records(g, val, "switches", "switch", true);
		else if (t->kind == TP__STOPO_BLOCK && !strcmp(k->text, "blocks"))
			rc = read_records(g, val, "blocks", "block", false);
		else if (t->kind == TP__STOPO_BLOCK && !strcmp(k->text, "block_sizes"))
			rc = read_sizes(g, val);
		else if (t->kind == TP__STOPO_RING && !strcmp(k->text, "rings"))
			rc = read_records(g, val, "rings", "ring", false);
		else if (t->kind == TP__STOPO_TORUS3D && !strcmp(k->text, "toruses"))
			rc = read_toruses(g, val);
		else
			unknown_key(r, k, kind);
	}
	return rc;
}

static bool kind_key(const char *k)
{
	return !strcmp(k, "tree") || !strcmp(k, "block") || !strcmp(k, "flat") ||
	       !strcmp(k, "ring") || !strcmp(k, "torus3d");
}

static int read_topology(struct yreader *r, const struct ynode *v,
			 struct tp__stopo *t)
{
	t->line = v->line;
	int rc = mapping(r, v, "topology");
	const char *kind_seen = NULL;
	int kind_line = 0;
	struct reading g = { .r = r, .t = t };
	for (int32_t j = 0; !rc && j < v->nkid; j += 2) {
		const struct ynode *k = v->kid[j], *val = v->kid[j + 1];
		if (!strcmp(k->text, "topology")) {
			const char *name;
			if (!(rc = string_value(r, val, "topology", &name)))
				t->name = name;
		} else if (!strcmp(k->text, "cluster_default")) {
			rc = bool_value(r, val, "cluster_default", &t->cluster_default);
		} else if (kind_key(k->text)) {
			/* Slurm: "Field X is mutually exclusive with ..." */
			if (kind_seen && t->kind != TP__STOPO_NONE)
				rc = yerr(r, k->line, "%s: a topology has one kind, and "
					  "this one is %s (line %d)", k->text,
					  kind_seen, kind_line);
			else if (!(rc = read_kind(&g, k->text, val)) &&
				 t->kind != TP__STOPO_NONE) {
				kind_seen = k->text;
				kind_line = k->line;
			}
		} else {
			unknown_key(r, k, "a topology");
		}
	}
	if (rc)
		return rc;
	if (!t->name) {
		/* slurmctld loads it, named "(null)": no partition can name it */
		tp__warn(r->warn, "%s:%d: a topology without topology: (its name); "
			 "Slurm calls it (null)", r->what, v->line);
		t->name = "(null)";
	}
	if (t->kind == TP__STOPO_NONE)
		return yerr(r, v->line, "topology %s: no tree:, block:, flat:, ring: "
			    "or torus3d:", t->name);
	return TP_OK;
}

/* ---- public ---- */

void tp__stopo_set_free(struct tp__stopo_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		struct tp__stopo *t = &s->t[i];
		free(t->rec);
		for (int j = 0; j < t->ntorus; j++) {
			free((void *)t->torus[j].region);
			free((void *)t->torus[j].placement);
		}
		free(t->torus);
	}
	free(s->t);
	for (int i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	ynode_free(s->doc);
	memset(s, 0, sizeof *s);
}

int tp__topology_yaml_read(const char *text, size_t len, const char *what,
			   struct tp__stopo_set *out, struct tp__warnings *warn,
			   tp_error *err)
{
	memset(out, 0, sizeof *out);
	struct yreader r = { .what = what, .err = err, .warn = warn };
	int rc = tp__nul_check(text, len, what, err);
	if (!rc)
		rc = read_document(&r, text, len, &out->doc);
	if (rc)
		return rc;
	const struct ynode *root = out->doc;
	if (!root)
		return TP_OK;   /* an empty file: no topology */
	struct ynode *const *items = NULL, *one;
	int32_t n = 0;
	/* Slurm: a mapping is one topology, a list several */
	if (root->type == Y_SCALAR && root->plain &&
	    (!*root->text || !strcmp(root->text, "~") || !strcasecmp(root->text, "null")))
		return TP_OK;
	if ((rc = entries(&r, root, "topology.yaml", &items, &n, &one)))
		goto fail;
	out->t = calloc((size_t)n + 1, sizeof *out->t);
	if (!out->t) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		goto fail;
	}
	for (int32_t i = 0; i < n; i++) {
		out->n = i + 1;
		if ((rc = read_topology(&r, items[i], &out->t[i])))
			goto fail;
		/* slurmctld loads both; a partition's Topology= finds the first */
		for (int32_t j = 0; j < i; j++)
			if (!strcmp(out->t[j].name, out->t[i].name)) {
				tp__warn(warn, "%s:%d: topology %s: a second topology of "
					 "that name (first on line %d): Topology=%s finds the "
					 "first", what, out->t[i].line, out->t[i].name,
					 out->t[j].line, out->t[i].name);
				break;
			}
	}
	return TP_OK;
fail:
	tp__stopo_set_free(out);
	return rc;
}
