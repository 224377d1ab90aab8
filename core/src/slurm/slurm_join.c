/* topoplace — nodes that join a topology at run time: slurm.conf's
 * NodeName=... Topology=TOPO:UNIT applied to topology.yaml's records.
 *
 * Sites with dynamic nodes (Slurm on Kubernetes, cloud bursting) write
 * topology.yaml as a skeleton, leaf switches or blocks without nodes, and
 * give each node its unit in slurm.conf (or slurmd --conf "Topology=...").
 * slurmctld (src/interfaces/topology.c, topology_g_add_rm_node, 25.11 and
 * later) takes the value as comma-separated TOPO:UNIT pairs; for each pair
 * the topology's plugin moves the node:
 *   - tree (topology_tree.c): UNIT is SWITCH[:SWITCH...]: the first switch
 *     must exist ("Don't know where to add switch"), each next one is taken
 *     or created under the one before, and the last must be a leaf ("isn't
 *     a leaf switch"); the node leaves every other leaf;
 *   - block (topology_block.c): UNIT is a block that exists; the node
 *     leaves every other block;
 * and the node leaves every topology its value does not name.  The value
 * overrides topology.yaml ("overwrites the node topology affiliation" in
 * slurm.conf(5)).  Where slurmctld refuses a pair, the nodes are left out
 * with one warning that names them: their jobs keep Slurm's placement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm_topology.h"

/* Keep str (malloc'ed) until the set is freed; NULL on failure (str freed). */
char *tp__stopo_own(struct tp__stopo_set *s, char *str)
{
	if (!str)
		return NULL;
	if (s->nowned == s->owned_cap) {
		int nc = s->owned_cap ? 2 * s->owned_cap : 16;
		char **n = realloc(s->owned, sizeof *n * (size_t)nc);
		if (!n) {
			free(str);
			return NULL;
		}
		s->owned = n;
		s->owned_cap = nc;
	}
	s->owned[s->nowned++] = str;
	return str;
}

/* One pair of a Topology= value that names topology t. */
struct join {
	const struct tp__slurm_node_topo *q;
	const char *unit;      /* NULL: the nodes leave t */
	bool live;             /* from slurmctld's live view (slurm_live.c) */
};

/* Every name of a hostlist into fn; the count into *count (may be NULL). */
int tp__stopo_each_name(const char *hl_text, const char *what, tp_error *err,
		     int (*fn)(void *arg, const char *name), void *arg,
		     int64_t *count)
{
	return tp__stopo_each_name_within(hl_text, what, TP__MAX_CONF_NAMES,
					  "the most names of one value", err, fn, arg,
					  count);
}

int tp__stopo_each_name_within(const char *hl_text, const char *what,
			       int64_t max_names, const char *bound_what,
			       tp_error *err, int (*fn)(void *arg, const char *name),
			       void *arg, int64_t *count)
{
	struct tp__hostlist *hl;
	int64_t c;
	int rc = tp__hostlist_parse(hl_text, what, max_names, bound_what, &hl, &c, err);
	if (rc)
		return rc;
	char h[TP__HOSTNAME_MAX];
	while (rc == TP_OK && tp__hostlist_next(hl, h))
		rc = fn(arg, h);
	tp__hostlist_free(hl);
	if (count)
		*count = c;
	return rc == TP_ENOMEM ? tp_error_set(err, rc, "%s: out of memory", what) : rc;
}

static int add_to_set(void *arg, const char *name)
{
	return tp__name_set_add(arg, name);
}

/* A record's nodes without the joined ones. */
struct keep {
	const struct tp__name_set *gone;
	const char **names;
	char **copies;
	size_t n, cap, removed;
};

static int keep_name(void *arg, const char *name)
{
	struct keep *k = arg;
	if (tp__name_set_has(k->gone, name)) {
		k->removed++;
		return TP_OK;
	}
	if (k->n == k->cap) {
		size_t nc = k->cap ? 2 * k->cap : 64;
		const char **nn = realloc(k->names, nc * sizeof *nn);
		char **nc2 = realloc(k->copies, nc * sizeof *nc2);
		if (nn)
			k->names = nn;
		if (nc2)
			k->copies = nc2;
		if (!nn || !nc2)
			return TP_ENOMEM;
		k->cap = nc;
	}
	if (!(k->copies[k->n] = strdup(name)))
		return TP_ENOMEM;
	k->names[k->n] = k->copies[k->n];
	k->n++;
	return TP_OK;
}

static int32_t find_rec(const struct tp__stopo *t, const char *name)
{
	for (int32_t i = 0; i < t->nrec; i++)
		if (t->rec[i].name && !strcmp(t->rec[i].name, name))
			return i;
	return -1;
}

/* A new switch under parent (tree): one more record, and its name added to
 * the parent's children. */
static int32_t new_switch(struct tp__stopo_set *s, struct tp__stopo *t,
			  int32_t parent, const char *name)
{
	struct tp__topo_rec *n = realloc(t->rec, sizeof *n * (size_t)(t->nrec + 1));
	if (!n)
		return -1;
	t->rec = n;
	struct tp__topo_rec *p = &t->rec[parent];
	char *children;
	if (p->switches && *p->switches) {
		if (asprintf(&children, "%s,%s", p->switches, name) < 0)
			children = NULL;
	} else {
		children = strdup(name);
	}
	/* own() frees what it cannot keep */
	if (!(p->switches = tp__stopo_own(s, children)))
		return -1;
	char *copy = tp__stopo_own(s, strdup(name));
	if (!copy)
		return -1;
	t->rec[t->nrec] = (struct tp__topo_rec){ .name = copy };
	return t->nrec++;
}

/* How a pair is named in messages: slurm.conf's line, or the line of
 * slurmctld's live view that placed the nodes. */
static void pair_name(const struct join *j, char *out, size_t len)
{
	const struct tp__slurm_node_topo *q = j->q;
	if (j->live)
		snprintf(out, len, "%s:%d: nodes %s (slurmctld: %s)", q->file,
			 q->line, q->nodes, q->topology);
	else
		snprintf(out, len, "%s:%d: NodeName=%s Topology=%s", q->file, q->line,
			 q->nodes, q->topology);
}

/* The record a pair puts its nodes in (-1 after a warning: none). */
static int32_t target(struct tp__stopo_set *s, struct tp__stopo *t,
		      const struct join *j, const char *what,
		      struct tp__warnings *warn, tp_error *err)
{
	const struct tp__slurm_node_topo *q = j->q;
	char who[TP_ERROR_MSG_MAX / 2];
	pair_name(j, who, sizeof who);
	/* what slurmctld itself says is not refused by it: only unknown here */
	const char *refused = j->live ? "" : " (slurmctld refuses it)";
	if (t->kind == TP__STOPO_BLOCK) {
		int32_t b = find_rec(t, j->unit);
		if (b < 0)
			tp__warn(warn, "%s: no block %s in topology %s of %s%s; those "
				 "nodes keep Slurm's placement", who, j->unit, t->name,
				 what, refused);
		return b;
	}
	char *path = strdup(j->unit), *save = NULL;
	if (!path) {
		tp_error_set(err, TP_ENOMEM, "%s: out of memory", q->file);
		return -2;
	}
	int32_t at = -1;
	for (char *tok = strtok_r(path, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		int32_t i = find_rec(t, tok);
		if (i < 0 && at < 0) {
			tp__warn(warn, "%s: no switch %s in topology %s of %s to start "
				 "from%s; those nodes keep Slurm's placement", who, tok,
				 t->name, what, j->live ? "" : " (slurmctld: \"Don't "
				 "know where to add switch\")");
			free(path);
			return -1;
		}
		if (i < 0 && (i = new_switch(s, t, at, tok)) < 0) {
			free(path);
			tp_error_set(err, TP_ENOMEM, "%s: out of memory", q->file);
			return -2;
		}
		at = i;
	}
	free(path);
	if (at >= 0 && t->rec[at].switches && *t->rec[at].switches) {
		tp__warn(warn, "%s: switch %s of topology %s is not a leaf%s; those "
			 "nodes keep Slurm's placement", who, t->rec[at].name, t->name,
			 refused);
		return -1;
	}
	return at;
}

/* Topology t's joins: every joined node leaves its record, then each pair
 * adds its nodes to its unit. */
static int join_topology(struct tp__stopo_set *s, struct tp__stopo *t,
			 const struct join *j, int nj, const char *what,
			 struct tp__warnings *warn, tp_error *err)
{
	/* the nodes of every join of t: they leave wherever the file put
	 * them */
	struct tp__name_set gone;
	memset(&gone, 0, sizeof gone);
	int rc = TP_OK;
	char hwhat[TP_ERROR_MSG_MAX / 2];
	for (int i = 0; !rc && i < nj; i++) {
		snprintf(hwhat, sizeof hwhat, "%s:%d: NodeName=%s", j[i].q->file,
			 j[i].q->line, j[i].q->nodes);
		rc = tp__stopo_each_name(j[i].q->nodes, hwhat, err, add_to_set, &gone, NULL);
	}
	for (int32_t r = 0; !rc && r < t->nrec; r++) {
		if (!t->rec[r].nodes || !*t->rec[r].nodes)
			continue;
		struct keep k = { .gone = &gone };
		snprintf(hwhat, sizeof hwhat, "%s:%d: nodes", what, t->rec[r].line);
		rc = tp__stopo_each_name(t->rec[r].nodes, hwhat, err, keep_name, &k, NULL);
		if (!rc && k.removed) {
			char *left = NULL;
			if (k.n && tp__hostlist_format(k.names, k.n, &left))
				rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
			else
				t->rec[r].nodes = k.n ? tp__stopo_own(s, left) : NULL;
			if (!rc && k.n && !t->rec[r].nodes)
				rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		}
		for (size_t i = 0; i < k.n; i++)
			free(k.copies[i]);
		free(k.copies);
		free(k.names);
	}
	bool kinds_warned = false;
	for (int i = 0; !rc && i < nj; i++) {
		if (!j[i].unit || !*j[i].unit)
			continue;
		if (t->kind != TP__STOPO_TREE && t->kind != TP__STOPO_BLOCK) {
			char who[TP_ERROR_MSG_MAX / 2];
			pair_name(&j[i], who, sizeof who);
			if (!kinds_warned)
				tp__warn(warn, "%s: topoplace places nodes that join a "
					 "%s topology only as its file lists them; those "
					 "nodes keep Slurm's placement", who,
					 tp__stopo_kind_name(t->kind));
			kinds_warned = true;
			continue;
		}
		int32_t at = target(s, t, &j[i], what, warn, err);
		if (at == -2) {
			rc = TP_ENOMEM;
			break;
		}
		if (at < 0)
			continue;
		struct tp__topo_rec *r = &t->rec[at];
		char *nodes;
		if (r->nodes && *r->nodes) {
			if (asprintf(&nodes, "%s,%s", r->nodes, j[i].q->nodes) < 0)
				nodes = NULL;
		} else {
			nodes = strdup(j[i].q->nodes);
		}
		if (!(r->nodes = tp__stopo_own(s, nodes))) {
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
			break;
		}
		/* the count of names (parsed above already: no error here) */
		int64_t c = 0;
		struct tp__hostlist *hl;
		if (!tp__hostlist_parse(j[i].q->nodes, "NodeName=", TP__MAX_CONF_NAMES,
					"the most names of one value", &hl, &c, err))
			tp__hostlist_free(hl);
		if (j[i].live)
			t->nlive += c;
		else
			t->njoined += c;
	}
	tp__name_set_free(&gone);
	return rc;
}

int tp__stopo_join(struct tp__stopo_set *s, const char *what,
		   const struct tp__slurm_keys *k, struct tp__warnings *warn,
		   tp_error *err)
{
	if (!k->nnode_topo || !s->n)
		return TP_OK;
	struct join *j = tp__malloc_array((size_t)k->nnode_topo * 2 + 1, sizeof *j);
	if (!j)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = TP_OK;
	for (int ti = 0; !rc && ti < s->n; ti++) {
		struct tp__stopo *t = &s->t[ti];
		int nj = 0;
		for (int qi = 0; !rc && qi < k->nnode_topo; qi++) {
			const struct tp__slurm_node_topo *q = &k->node_topo[qi];
			/* TOPO:UNIT pairs, comma-separated; the pair naming t (the
			 * last one, should two), else the nodes leave t */
			const char *unit = NULL, *p = q->topology;
			size_t tl = strlen(t->name);
			while (*p) {
				size_t n = strcspn(p, ",");
				if (n > tl && !strncmp(p, t->name, tl) && p[tl] == ':')
					unit = p + tl + 1;
				else if (n == tl && !strncmp(p, t->name, tl))
					unit = p + tl;   /* "TOPO" alone: no unit */
				p += n;
				if (*p == ',')
					p++;
			}
			j[nj] = (struct join){ q, NULL, false };
			if (unit) {
				size_t n = strcspn(unit, ",");
				char *u = tp__stopo_own(s, strndup(unit, n));
				if (!u)
					rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory",
							  what);
				j[nj].unit = u;
			}
			nj++;
		}
		if (!rc)
			rc = join_topology(s, t, j, nj, what, warn, err);
	}
	/* a pair naming no topology of the file: slurmctld refuses the node */
	for (int qi = 0; !rc && qi < k->nnode_topo; qi++) {
		const struct tp__slurm_node_topo *q = &k->node_topo[qi];
		const char *p = q->topology;
		while (*p) {
			size_t n = strcspn(p, ","), tl = strcspn(p, ":,");
			bool known = false;
			for (int ti = 0; ti < s->n && !known; ti++)
				known = strlen(s->t[ti].name) == tl &&
					!strncmp(s->t[ti].name, p, tl);
			if (!known && tl)
				tp__warn(warn, "%s:%d: NodeName=%s Topology=%s: no topology "
					 "%.*s in %s (slurmctld refuses the node); those nodes "
					 "keep Slurm's placement", q->file, q->line, q->nodes,
					 q->topology, (int)tl, p, what);
			p += n;
			if (*p == ',')
				p++;
		}
	}
	free(j);
	return rc;
}

int tp__stopo_join_units(struct tp__stopo_set *s, int which,
			 const struct tp__slurm_node_topo *q, const char *const *unit,
			 int nq, const char *what, struct tp__warnings *warn,
			 tp_error *err)
{
	if (which < 0 || which >= s->n || nq <= 0)
		return TP_OK;
	struct join *j = tp__malloc_array((size_t)nq, sizeof *j);
	if (!j)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	for (int i = 0; i < nq; i++)
		j[i] = (struct join){ &q[i], unit[i], true };
	int rc = join_topology(s, &s->t[which], j, nq, what, warn, err);
	free(j);
	return rc;
}
