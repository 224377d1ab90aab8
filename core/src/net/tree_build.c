/* topoplace — switch trees built from Slurm's records (topology/tree):
 * topology.conf's SwitchName= lines or topology.yaml's switches, as
 * records (records.h), into the tree of tree.c.
 *
 * The records come from topology.conf's lines (read
 * by slurm/topology_conf.c) or topology.yaml's entries (slurm_yaml.c);
 * messages use the keys of their file.
 * Slurm's rules are switch_record_validate()'s (src/plugins/topology/tree/
 * switch_record.c, 26.05; topology_tree.c before 24.11), checked against
 * slurmctld 26.05.3.  Refused, as slurmctld refuses the file:
 *   - a duplicate switch, an unknown child, a switch listing itself;
 *   - any loop (A lists B and B lists A, or longer), whatever the other
 *     parents: "Switch configuration is not a tree".  An InfiniBand
 *     discovery that lists uplinks with downlinks (Azure's SHARP topology,
 *     slurmibtopology.sh unedited) makes 2-cycles, which slurmctld refuses;
 *   - levels that take more than 21 passes (see check_graph);
 *   - topology.conf only: Nodes= with Switches= on one line, a SwitchName=
 *     longer than 64 (24.11 and later), a line not starting with
 *     SwitchName=, a LinkSpeed= that is not a number.
 * Accepted, with a warning where topoplace's tree differs or Slurm warns
 * (the warnings reach check-config and the job's notes):
 *   - a forest (no switch above every node): the tops of the trees go under
 *     a virtual top switch "(forest)" whose links cost ForestCost (default:
 *     the top level's LevelCost, else 1), so that jobs across trees are
 *     placed too, with crossing the costliest hop;
 *   - a node under two leaf switches: it stays under the first switch of
 *     the file that lists it, as Slurm's switch table (file order) decides
 *     which leaf forwards to it and which leaf its selection counts it on;
 *   - a switch under two switches: it stays under the first in file order
 *     (see link_switches); levels are Slurm's, over every child;
 *   - a switch without nodes or switches (25.05 and later; 23.11 and 24.11
 *     refuse it: the warning says so);
 *   - topology.yaml: a switch with nodes and children is a leaf, its
 *     children ignored ("Ignoring children switches");
 *   - topology.conf: a key twice on a line (the last counts); a SwitchName=
 *     with brackets or commas (one switch of that name: Slurm does not
 *     expand it).
 * A tree without any node is refused: nothing to place tasks on.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/records.h"
#include "net/tree_internal.h"
#include "net/machine_internal.h"

/* ---- the switches: records (topology.conf's lines, topology.yaml's
 * entries) into a tree ---- */

/* slurmctld (24.11 and later) refuses a SwitchName= longer than
 * HOST_NAME_MAX, 64 on Linux, in topology.conf; topology.yaml's switch:
 * is not checked (26.05.3 runs with a 65-character one). */
#define SLURM_SWITCH_NAME_MAX 64
/* switch_record_validate() finds the switches' levels in passes over the
 * file, at most 21 (23.11 to 26.05): see check_graph. */
#define SLURM_LEVEL_PASSES 21

struct sw {
	char *name;              /* owned until it moves to the tree */
	const char *nodes;       /* the record's hostlist; NULL: no nodes */
	const char *switches;    /* the record's children; NULL: a leaf */
	int line;
};

struct tparse {
	const char *what;
	bool yaml;                   /* messages in topology.yaml's keys */
	tp_error *err;
	struct tp__warnings *warn;   /* NULL: warnings dropped */
	int forest_cost;             /* 0: default */
	const char *cost_where;      /* LevelCost='s FILE:LINE, or NULL */
	struct sw *sw;
	int32_t nsw, cap;
	int32_t nfile;               /* switches of the file; a forest's
					virtual top is p->sw[nfile] */
	struct tp__names by_name;    /* the switches by names[] */
	char **names;                /* each switch's name (sw[].name) */
	size_t names_cap;
	/* Slurm's graph: every switch's children as listed, duplicates
	 * and second parents included (CSR over the file's switches) */
	int32_t *child_off, *child;
	size_t nchild, child_cap;
	int *slevel;                 /* Slurm's levels: 0 for a switch
					without children, else 1 + its
					highest child's */
	/* the tree: each switch under the first that lists it */
	int32_t *first_child, *next_sib;
	/* a switch listed under a second parent: how many, the first seen */
	int32_t multi_parent, mp_child, mp_first, mp_second;
};

/* An error naming the topology file (and the line, when not 0). */
#define terr(p, line, code, ...) \
	tp__line_error((p)->err, (p)->what, (line), (code), __VA_ARGS__)

/* A switch as the admin wrote it: "SwitchName=s1", or "switch s1". */
static const char *who(const struct tparse *p, const char *name, char *buf,
		       size_t len)
{
	snprintf(buf, len, p->yaml ? "switch %s" : "SwitchName=%s", name);
	return buf;
}

/* The key of a switch's children: Switches= or children. */
static const char *children_key(const struct tparse *p)
{
	return p->yaml ? "children" : "Switches=";
}

static int32_t find_sw(const struct tparse *p, const char *name)
{
	return tp__names_find(&p->by_name, p->names, name, tp__name_hash(name));
}

/* Parse and bound a hostlist of key= on the switch's line. */
static int parse_list(struct tparse *p, const char *list, const char *key,
		      int line, struct tp__hostlist **hl, int64_t *count)
{
	char what[TP_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof what, p->yaml ? "%s: %s" : "%s=%s",
		 p->yaml ? (strcmp(key, "Nodes") ? "children" : "nodes") : key,
		 list);
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__hostlist_parse(list, what, TP__MAX_TREE_NODES,
				    "the most nodes a tree may have", hl, count, &e);
	return rc ? terr(p, line, rc, "%s", e.msg) : 0;
}

/* Expand a hostlist; calls fn for every name.  Returns 0 or an error.  The
 * list is counted and bounded before its first name is expanded. */
static int each_name(struct tparse *p, const char *list, const char *key,
		     int line, int (*fn)(struct tparse *, const char *, void *),
		     void *arg)
{
	struct tp__hostlist *hl;
	int64_t count;
	int rc = parse_list(p, list, key, line, &hl, &count);
	char h[TP__HOSTNAME_MAX];
	while (rc == 0 && tp__hostlist_next(hl, h))
		rc = fn(p, h, arg);
	tp__hostlist_free(hl);
	return rc;
}

/* A first case and how many more, for one warning line per kind. */
struct seen {
	int32_t n, first;
};

static void seen_add(struct seen *s, int32_t i)
{
	if (s->n++ == 0)
		s->first = i;
}

static void seen_more(const struct seen *s, char *buf, size_t len)
{
	buf[0] = '\0';
	if (s->n > 1)
		snprintf(buf, len, " (and %ld more)", (long)s->n - 1);
}

/* One record into p->sw, with what Slurm checks of a single switch.
 * empty, literal: the switches warned about after the last record. */
static int add_record(struct tparse *p, const struct tp__topo_rec *r,
		      struct seen *empty, struct seen *literal)
{
	char wb[TP_ERROR_MSG_MAX / 2];
	if (!r->name || !*r->name)
		/* Slurm: "Can't create a switch without a name" */
		return terr(p, r->line, TP_EINVAL, p->yaml ?
			    "a switch without a name (switch: missing)" :
			    "SwitchName= without a name");
	int32_t prev = find_sw(p, r->name);
	if (prev >= 0)
		/* Slurm: "Switch (%s) has already been defined" */
		return terr(p, r->line, TP_EINVAL, "%s: duplicate switch (first at line %d)",
			    who(p, r->name, wb, sizeof wb), p->sw[prev].line);
	size_t len = strlen(r->name);
	if (!p->yaml && len > SLURM_SWITCH_NAME_MAX)
		return terr(p, r->line, TP_EINVAL,
			    "SwitchName=%s: %zu characters, more than the %d Slurm accepts (since 24.11)",
			    r->name, len, SLURM_SWITCH_NAME_MAX);
	const char *nodes = r->nodes, *switches = r->switches;
	if (nodes && switches) {
		/* topology.conf: "switch %s has both child switches and
		 * nodes", the line refused; topology.yaml: "Ignoring children
		 * switches for %s", a leaf */
		if (!p->yaml)
			return terr(p, r->line, TP_EINVAL,
				    "SwitchName=%s has both Nodes= and Switches= (Slurm refuses it too: put the nodes under a leaf switch of their own)",
				    r->name);
		tp__warn(p->warn, "%s:%d: switch %s: children and nodes both given; Slurm ignores the children, as topoplace does",
			 p->what, r->line, r->name);
		switches = NULL;
	}
	if (switches && !*switches)
		/* slurmctld 26.05.3 crashes on "children: ''" */
		return terr(p, r->line, TP_EINVAL, "%s: %s: empty list",
			    who(p, r->name, wb, sizeof wb), children_key(p));
	if (nodes && !*nodes)
		nodes = NULL;   /* "nodes: ''": a switch without nodes */
	/* neither: a switch without nodes (Slurm 25.05 and later; 23.11
	 * and 24.11 refuse it, and topology.yaml came with 25.05) */
	if (!nodes && !switches && !r->nodes && !p->yaml)
		seen_add(empty, p->nsw);
	/* Slurm takes SwitchName= as written, brackets and commas too */
	if (strpbrk(r->name, "[],"))
		seen_add(literal, p->nsw);
	if (p->nsw == p->cap) {
		int32_t nc = p->cap ? p->cap * 2 : 64;
		struct sw *n = realloc(p->sw, sizeof *n * (size_t)nc);
		if (!n)
			return terr(p, 0, TP_ENOMEM, "out of memory");
		p->sw = n;
		p->cap = nc;
	}
	struct sw *w = &p->sw[p->nsw];
	w->line = r->line;
	w->nodes = nodes;
	w->switches = switches;
	w->name = strdup(r->name);
	p->nsw++;
	if (!w->name || tp__grow((void **)&p->names, (size_t)p->nsw - 1, &p->names_cap,
				 sizeof *p->names))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	p->names[p->nsw - 1] = w->name;
	if (tp__names_add(&p->by_name, tp__name_hash(w->name), p->nsw - 1))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	return 0;
}

static int add_records(struct tparse *p, const struct tp__topo_recs *r)
{
	struct seen empty = { 0, -1 }, literal = { 0, -1 };
	int rc = 0;
	for (int32_t i = 0; i < r->n && !rc; i++)
		rc = add_record(p, &r->rec[i], &empty, &literal);
	if (rc)
		return rc;
	char more[64];
	if (empty.n) {
		const struct sw *w = &p->sw[empty.first];
		seen_more(&empty, more, sizeof more);
		tp__warn(p->warn, "%s:%d: SwitchName=%s has neither Nodes= nor Switches=%s: a switch without nodes, as Slurm 25.05 and later accept (23.11 and 24.11 refuse it)",
			 p->what, w->line, w->name, more);
	}
	if (literal.n) {
		const struct sw *w = &p->sw[literal.first];
		char wb[TP_ERROR_MSG_MAX / 2];
		seen_more(&literal, more, sizeof more);
		tp__warn(p->warn, "%s:%d: %s%s: one switch of that very name, as Slurm reads it (no %s list can name it)",
			 p->what, w->line, who(p, w->name, wb, sizeof wb), more,
			 children_key(p));
	}
	return 0;
}

static int add_child(struct tparse *p, const char *name, void *arg)
{
	int32_t s = *(const int32_t *)arg;
	const struct sw *w = &p->sw[s];
	char wb[TP_ERROR_MSG_MAX / 2];
	int32_t k = find_sw(p, name);
	/* Slurm: "Switch configuration %s has invalid child (%s)" */
	if (k < 0) {
		if (p->yaml)
			return terr(p, w->line, TP_EINVAL,
				    "switch %s: children: unknown switch '%s'",
				    w->name, name);
		return terr(p, w->line, TP_EINVAL,
			    "SwitchName=%s Switches=%s: unknown switch '%s'",
			    w->name, w->switches, name);
	}
	if (k == s)
		return terr(p, w->line, TP_EINVAL,
			    "%s: the switch lists itself in %s (a loop)",
			    who(p, w->name, wb, sizeof wb), children_key(p));
	if (tp__grow((void **)&p->child, p->nchild, &p->child_cap, sizeof *p->child))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	p->child[p->nchild++] = k;
	return 0;
}

/* Every switch's children as listed (Slurm's graph, p->child_off/child). */
static int list_children(struct tparse *p)
{
	int32_t n = p->nsw;
	if (!(p->child_off = tp__malloc_array((size_t)n + 1, sizeof *p->child_off)))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	int rc = 0;
	for (int32_t s = 0; s < n && !rc; s++) {
		if ((size_t)INT32_MAX - p->nchild < (size_t)TP__MAX_TREE_NODES)
			return terr(p, p->sw[s].line, TP_EINVAL, "too many children listed");
		p->child_off[s] = (int32_t)p->nchild;
		if (p->sw[s].switches)
			rc = each_name(p, p->sw[s].switches, "Switches", p->sw[s].line,
				       add_child, &s);
	}
	p->child_off[n] = (int32_t)p->nchild;
	return rc;
}

/* "Switch configuration is not a tree": a loop, path[0..len) each listing
 * the next and the last listing path[0]. */
static int report_loop(struct tparse *p, const int32_t *path, int32_t len)
{
	char chain[TP_ERROR_MSG_MAX / 2];
	size_t at = 0;
	chain[0] = '\0';
	/* a few hops say it; an InfiniBand discovery's is usually two (a
	 * switch lists its uplinks with its downlinks) */
	for (int32_t i = 1; i <= len && at < sizeof chain; i++) {
		const struct sw *w = &p->sw[path[i % len]];
		if (i == len)
			at += (size_t)snprintf(chain + at, sizeof chain - at,
					       "%s'%s'", i > 1 ? ", which lists " : "",
					       w->name);
		else if (i <= 3)
			at += (size_t)snprintf(chain + at, sizeof chain - at,
					       "%s'%s' (line %d)", i > 1 ? ", which lists " : "",
					       w->name, w->line);
		else if (i == 4)
			at += (size_t)snprintf(chain + at, sizeof chain - at, ", ...");
	}
	const struct sw *a = &p->sw[path[0]];
	return terr(p, a->line, TP_EINVAL,
		    "the switches form a loop: '%s' lists %s; Slurm refuses it too (\"Switch configuration is not a tree\"): %s lists only the switches below a switch",
		    a->name, chain, children_key(p));
}

/* Slurm's graph checked as switch_record_validate() checks it, and the
 * switches' levels (p->slevel):
 *   - a loop (A lists B, B lists A, or longer) is refused, whichever
 *     parents a tree would keep: Slurm's levels never resolve;
 *   - Slurm resolves levels in passes over the switches in file order, a
 *     switch once all its children are; a child listed after its parent
 *     waits for the next pass, and 21 passes are all it runs.  The pass of
 *     switch s is max(1, pass(c) + (c after s)) over its children c. */
static int check_graph(struct tparse *p)
{
	int32_t n = p->nsw;
	char *color = calloc((size_t)n, 1);          /* 1 open, 2 done */
	int32_t *stack = tp__malloc_array((size_t)n, sizeof *stack);
	int32_t *next = tp__malloc_array((size_t)n, sizeof *next);
	int *pass = tp__calloc((size_t)n, sizeof *pass);
	p->slevel = tp__calloc((size_t)n + 1, sizeof *p->slevel);
	int rc = 0;
	if (!color || !stack || !next || !pass || !p->slevel) {
		rc = terr(p, 0, TP_ENOMEM, "out of memory");
		goto out;
	}
	for (int32_t s0 = 0; s0 < n && !rc; s0++) {
		if (color[s0])
			continue;
		int32_t sp = 0;
		stack[sp] = s0;
		next[sp++] = p->child_off[s0];
		color[s0] = 1;
		while (sp > 0 && !rc) {
			int32_t s = stack[sp - 1];
			if (next[sp - 1] < p->child_off[s + 1]) {
				int32_t k = p->child[next[sp - 1]++];
				if (color[k] == 1) {
					int32_t j = sp - 1;
					while (stack[j] != k)
						j--;
					rc = report_loop(p, stack + j, sp - j);
				} else if (color[k] == 0) {
					color[k] = 1;
					stack[sp] = k;
					next[sp++] = p->child_off[k];
				}
				continue;
			}
			/* every child done: s's level and pass */
			sp--;
			color[s] = 2;
			for (int32_t e = p->child_off[s]; e < p->child_off[s + 1]; e++) {
				int32_t c = p->child[e];
				if (p->slevel[c] + 1 > p->slevel[s])
					p->slevel[s] = p->slevel[c] + 1;
				int q = pass[c] + (c > s);
				if (q > pass[s])
					pass[s] = q;
			}
			if (p->child_off[s] < p->child_off[s + 1] && pass[s] < 1)
				pass[s] = 1;
		}
	}
	for (int32_t s = 0; s < n && !rc; s++)
		if (pass[s] > SLURM_LEVEL_PASSES) {
			char wb[TP_ERROR_MSG_MAX / 2];
			rc = terr(p, p->sw[s].line, TP_EINVAL,
				  "%s: Slurm resolves switch levels in at most %d passes over the switches in file order, and this one takes %d (each switch listed before a switch it lists costs a pass); Slurm refuses it (\"Switch configuration is not a tree\"): list the lower switches first",
				  who(p, p->sw[s].name, wb, sizeof wb), SLURM_LEVEL_PASSES,
				  pass[s]);
		}
out:
	free(color);
	free(stack);
	free(next);
	free(pass);
	return rc;
}

/* The tree: each switch under the first switch of the file that lists it
 * (p->first_child, p->next_sib in listed order; last: scratch, n entries).
 * Slurm keeps every parent: its distances between switches are the
 * shortest over all of them, and its one parent per switch (for counting
 * nodes up the tree) is the last that lists it.  In a fat tree whose
 * spines list the same switches every choice gives the same distances;
 * keeping the first keeps the switches of one spine together. */
static void link_switches(struct tparse *p, struct tp_tree *t, int32_t *last)
{
	for (int32_t s = 0; s < p->nsw; s++)
		p->first_child[s] = p->next_sib[s] = last[s] = -1;
	for (int32_t s = 0; s < p->nsw; s++)
		for (int32_t e = p->child_off[s]; e < p->child_off[s + 1]; e++) {
			int32_t k = p->child[e];
			if (t->parent[k] == s)
				continue;   /* listed twice by s: as Slurm, once */
			if (t->parent[k] >= 0) {
				if (p->multi_parent++ == 0) {
					p->mp_child = k;
					p->mp_first = t->parent[k];
					p->mp_second = s;
				}
				continue;
			}
			t->parent[k] = s;
			if (last[s] < 0)
				p->first_child[s] = k;
			else
				p->next_sib[last[s]] = k;
			last[s] = k;
		}
}

struct node_ctx {
	tp_machine *m;
	int32_t s, router;
	int32_t **node_sw;            /* room for every node listed */
	/* pass 1: names listed again; of them those under a second leaf
	 * switch (Slurm's multi-homed nodes) */
	int64_t ndup, nmulti;
	int32_t dup_node, dup_other;   /* the first multi-homed: its node,
					  the other switch */
	/* pass 2: the machine of pass 1 and each of its nodes' owner switch;
	 * a listing under another switch is left out (and marked) */
	const tp_machine *first;
	const int32_t *owner;
	char *dup_mark;
};

static int add_tree_node(struct tparse *p, const char *name, void *arg)
{
	struct node_ctx *c = arg;
	const struct sw *w = &p->sw[c->s];
	if (c->owner) {
		int32_t i = tp_machine_find_node(c->first, name);
		if (i >= 0 && c->owner[i] != c->s) {
			c->dup_mark[i] = 1;
			return 0;
		}
	}
	int coord = c->router;
	tp_error e;
	tp_error_clear(&e);
	int32_t prev = -1;
	int idx = tp__machine_add(c->m, name, &coord, &prev, &e);
	if (idx < 0 && prev >= 0) {
		/* Slurm's "Multiple leaf switches contain nodes": the node
		 * belongs to the first switch of the file listing it (p->sw is
		 * in file order); pass 2 moves it there.  Listed twice by one
		 * switch, it is there once, as in Slurm's bitmap. */
		int32_t *own = &(*c->node_sw)[prev];
		c->ndup++;
		if (*own != c->s && c->nmulti++ == 0) {
			c->dup_node = prev;
			c->dup_other = c->s < *own ? *own : c->s;
		}
		if (c->s < *own)
			*own = c->s;
		return 0;
	}
	c->router++;
	if (idx < 0) {
		char wb[TP_ERROR_MSG_MAX / 2];
		return terr(p, w->line, idx, "%s %s%s: %s", who(p, w->name, wb, sizeof wb),
			    p->yaml ? "nodes: " : "Nodes=", w->nodes, e.msg);
	}
	(*c->node_sw)[idx] = c->s;
	return 0;
}

/* The callbacks of tp__machine_add_list for the first pass: the context
 * (node_ctx) and its parser. */
struct list_ctx {
	struct tparse *p;
	struct node_ctx *c;
};

static void run_router(void *arg, int64_t i, int *coord)
{
	const struct list_ctx *x = arg;
	*coord = x->c->router + (int)i;
}

static int list_one(void *arg, const char *name)
{
	struct list_ctx *x = arg;
	return add_tree_node(x->p, name, x->c);
}

static int list_ran(void *arg, int32_t first, int32_t count)
{
	struct list_ctx *x = arg;
	x->c->router += count;
	for (int32_t i = 0; i < count; i++)
		(*x->c->node_sw)[first + i] = x->c->s;
	return 0;
}

static int list_fail(void *arg, int rc, const tp_error *e)
{
	struct list_ctx *x = arg;
	const struct sw *w = &x->p->sw[x->c->s];
	char wb[TP_ERROR_MSG_MAX / 2];
	return terr(x->p, w->line, rc, "%s %s%s: %s", who(x->p, w->name, wb, sizeof wb),
		    x->p->yaml ? "nodes: " : "Nodes=", w->nodes, e->msg);
}

/* The switch's Nodes= into the machine: long numbered ranges as runs (a
 * quarter million nodes under 8,192 leaves took 60 ms of name hashing and
 * lookups), the rest, and any range holding a name already placed, name by
 * name, so that add_tree_node decides about the duplicates.  The second
 * pass (c->owner) goes name by name. */
static int add_switch_nodes(struct tparse *p, struct node_ctx *c)
{
	const struct sw *w = &p->sw[c->s];
	if (c->owner)
		return each_name(p, w->nodes, "Nodes", w->line, add_tree_node, c);
	struct tp__hostlist *hl;
	int64_t count;
	int rc = parse_list(p, w->nodes, "Nodes", w->line, &hl, &count);
	if (rc)
		return rc;
	static const struct tp__add_list ops = { TP__LIST_RUN_MIN, run_router, list_one,
						 list_ran, list_fail };
	struct list_ctx x = { p, c };
	rc = tp__machine_add_list(c->m, hl, &ops, &x);
	tp__hostlist_free(hl);
	return rc;
}

/* The nodes of a Nodes= list (*n), and of them those that go name by name
 * (*named: the name index's size); see add_switch_nodes. */
static int count_switch_nodes(struct tparse *p, const struct sw *w, int32_t *n,
			      int32_t *named)
{
	struct tp__hostlist *hl;
	int64_t count;
	int rc = parse_list(p, w->nodes, "Nodes", w->line, &hl, &count);
	if (rc)
		return rc;
	if (count > TP__MAX_TREE_NODES - *n) {
		tp__hostlist_free(hl);
		return terr(p, w->line, TP_EINVAL,
			    "%s%s: more than %lld nodes under the switches",
			    p->yaml ? "nodes: " : "Nodes=", w->nodes,
			    (long long)TP__MAX_TREE_NODES);
	}
	*n += (int32_t)count;
	*named += tp__add_list_named(hl, TP__LIST_RUN_MIN);
	tp__hostlist_free(hl);
	return 0;
}

/* Grow the tree by one link per node (machine node i, on switch
 * node_sw[i]): "switch" nsw + i, level 0, cost 1; the real switches move
 * one level up.  Router i is node i. */
static int add_node_links(struct tp_tree *t, const tp_machine *m,
			  const int32_t *node_sw)
{
	int32_t n = t->nsw, nn = m->nnodes, tot = n + nn;
	/* one block (huge pages from 2 MiB on): five arrays of a quarter
	 * million entries, each grown apart, were 10 ms of page faults */
	size_t each = (size_t)tot * sizeof(int32_t);
	char *b = tp__malloc_array(4 * each + (size_t)nn * sizeof(int32_t), 1);
	if (!b)
		return TP_ENOMEM;
	int32_t *parent = (int32_t *)b, *router_sw = (int32_t *)(b + 4 * each);
	int *depth = (int *)(b + each), *level = (int *)(b + 2 * each),
	    *upcost = (int *)(b + 3 * each);
	memcpy(parent, t->parent, (size_t)n * sizeof *parent);
	memcpy(depth, t->depth, (size_t)n * sizeof *depth);
	memcpy(upcost, t->upcost, (size_t)n * sizeof *upcost);
	for (int32_t s = 0; s < n; s++)
		level[s] = t->level[s] + 1;
	for (int32_t i = 0; i < nn; i++) {
		int32_t v = n + i;
		parent[v] = node_sw[i];
		depth[v] = depth[node_sw[i]] + 1;
		level[v] = 0;
		upcost[v] = 1;
		router_sw[i] = v;
	}
	free(t->parent);
	free(t->depth);
	free(t->level);
	free(t->upcost);
	free(t->router_sw);
	t->block = b;
	t->parent = parent;
	t->depth = depth;
	t->level = level;
	t->upcost = upcost;
	t->router_sw = router_sw;
	t->nreal = n;
	t->nsw = tot;
	if (t->mincost > 1)
		t->mincost = 1;
	return 0;
}

/* The tree's arrays for n switches and room for a forest's virtual top:
 * names NULL, parents -1, depths, levels and costs 0.  NULL when out of
 * memory. */
static struct tp_tree *tree_alloc(int32_t nfile)
{
	struct tp_tree *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	int32_t n = nfile + 1;
	t->nsw = nfile;
	t->forest_top = -1;
	t->name = calloc((size_t)n, sizeof(char *));
	t->nname = n;
	t->parent = tp__malloc_array((size_t)n, sizeof(int32_t));
	t->depth = tp__calloc((size_t)n, sizeof(int));
	t->level = tp__calloc((size_t)n, sizeof(int));
	t->upcost = tp__calloc((size_t)n, sizeof(int));
	t->router_sw = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!t->name || !t->parent || !t->depth || !t->level || !t->upcost ||
	    !t->router_sw) {
		tp__tree_free(t);
		return NULL;
	}
	for (int32_t s = 0; s < n; s++)
		t->parent[s] = -1;
	return t;
}

/* A forest's virtual top switch, p->sw[p->nfile]: every switch without a
 * parent goes under it (their order in the file is its children's order). */
static int add_forest_top(struct tparse *p, struct tp_tree *t)
{
	if (p->nsw == p->cap) {
		struct sw *n = realloc(p->sw, sizeof *n * (size_t)(p->cap + 1));
		if (!n)
			return terr(p, 0, TP_ENOMEM, "out of memory");
		p->sw = n;
		p->cap++;
	}
	int32_t v = p->nsw;
	memset(&p->sw[v], 0, sizeof p->sw[v]);
	if (!(p->sw[v].name = strdup("(forest)")))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	p->nsw++;
	t->nsw = p->nsw;
	t->forest_top = v;
	p->first_child[v] = p->next_sib[v] = -1;
	int32_t last = -1;
	for (int32_t s = 0; s < v; s++)
		if (t->parent[s] < 0) {
			t->parent[s] = v;
			if (p->slevel[s] + 1 > p->slevel[v])
				p->slevel[v] = p->slevel[s] + 1;
			if (last < 0)
				p->first_child[v] = s;
			else
				p->next_sib[last] = s;
			last = s;
		}
	return 0;
}

/* The top of the tree: the one switch without a parent, or with several a
 * virtual one above them (a forest, as Slurm accepts).  check_graph found
 * no loop, so some switch has no parent. */
static int find_top_switch(struct tparse *p, struct tp_tree *t, int32_t *top)
{
	int32_t root = -1, nroots = 0;
	for (int32_t s = 0; s < p->nsw; s++)
		if (t->parent[s] < 0 && nroots++ == 0)
			root = s;
	if (nroots > 1) {
		int rc = add_forest_top(p, t);
		if (rc)
			return rc;
		root = t->forest_top;
	}
	*top = root;
	return 0;
}

/* Trees with nodes under the virtual top (a top without nodes, e.g. a
 * second spine whose leaves stayed under the first, is no tree of its own);
 * the warning when there are several.  order: pre-order. */
static void count_trees(struct tparse *p, struct tp_tree *t, const int32_t *order)
{
	t->ntrees = 1;
	if (t->forest_top < 0)
		return;
	int32_t n = p->nsw, first = -1, second = -1;
	char *has = calloc((size_t)n, 1);
	if (!has)
		return;   /* only the warning's count is lost */
	for (int32_t i = n - 1; i >= 0; i--) {
		int32_t s = order[i];
		has[s] |= p->sw[s].nodes != NULL;
		if (t->parent[s] >= 0)
			has[t->parent[s]] |= has[s];
	}
	t->ntrees = 0;
	for (int32_t k = p->first_child[t->forest_top]; k >= 0; k = p->next_sib[k])
		if (has[k]) {
			if (t->ntrees == 0)
				first = k;
			else if (t->ntrees == 1)
				second = k;
			t->ntrees++;
		}
	free(has);
	/* Slurm: "TOPOLOGY: no switch can reach all nodes through its
	 * descendants" */
	if (t->ntrees > 1)
		tp__warn(p->warn, "%s:%d: no switch reaches every node: %d separate trees (tops '%s' line %d, '%s' line %d%s); between trees the distance goes through a virtual top switch, each link to it costing %d (ForestCost=)",
			 p->what, p->sw[second].line, (int)t->ntrees, p->sw[first].name,
			 p->sw[first].line, p->sw[second].name, p->sw[second].line,
			 t->ntrees > 2 ? ", ..." : "", p->forest_cost);
	if (t->ntrees == 0)
		t->ntrees = 1;
}

/* Depth-first pre-order of the switches from the top, children in listed
 * order, into order[0..n-1]; sets the depths.  stack: scratch, n entries.
 * Without loops every switch is below the top. */
static void order_depth_first(struct tparse *p, struct tp_tree *t, int32_t root,
			      int32_t *order, int32_t *stack)
{
	int32_t sp = 0, no = 0;
	stack[sp++] = root;
	while (sp > 0) {
		int32_t s = stack[--sp];
		order[no++] = s;
		/* push children reversed so the first listed comes out first */
		int32_t cnt = 0;
		for (int32_t k = p->first_child[s]; k >= 0; k = p->next_sib[k])
			cnt++;
		sp += cnt;
		int32_t i = sp - 1;
		for (int32_t k = p->first_child[s]; k >= 0; k = p->next_sib[k]) {
			t->depth[k] = t->depth[s] + 1;
			stack[i--] = k;
		}
	}
}

/* Slurm's levels (check_graph; a forest's virtual top one above its
 * trees), the height, and the cost of every switch's link to its parent
 * (LevelCost=). */
static int set_levels_and_costs(struct tparse *p, struct tp_tree *t,
				int32_t root, const int *level_cost, int nlevels)
{
	int32_t n = p->nsw;
	for (int32_t s = 0; s < n; s++)
		t->level[s] = p->slevel[s];
	/* a forest's levels of links are those of its trees: the links to
	 * the virtual top cost ForestCost, the top level's cost by default */
	t->height = t->level[root] - (root == t->forest_top);
	if (nlevels > 1 && nlevels != t->height)
		return tp_error_set(p->err, TP_EINVAL,
				    "%s: LevelCost= has %d values, the %s of %s %s %d level%s of links (give 1 or %d)",
				    p->cost_where ? p->cost_where : p->what, nlevels,
				    root == t->forest_top ? "trees" : "tree",
				    p->what, root == t->forest_top ? "have" : "has",
				    t->height, t->height == 1 ? "" : "s", t->height);
	if (!p->forest_cost)
		p->forest_cost = nlevels ? level_cost[nlevels - 1] : 1;
	t->mincost = INT_MAX;
	for (int32_t s = 0; s < n; s++) {
		int l = t->level[s];
		t->upcost[s] = nlevels == 0 ? 1 : level_cost[nlevels == 1 ? 0 : (l < nlevels ? l : nlevels - 1)];
		if (t->parent[s] >= 0 && t->parent[s] == t->forest_top)
			t->upcost[s] = p->forest_cost;
		if (t->parent[s] >= 0 && t->upcost[s] < t->mincost)
			t->mincost = t->upcost[s];
	}
	if (t->mincost == INT_MAX)
		t->mincost = 1;
	return 0;
}

/* One pass over the switches in pre-order adding their nodes to a new
 * machine of nnodes routers (see add_tree_node for c's two passes). */
static int add_nodes_pass(struct tparse *p, const int32_t *order, int32_t nnodes,
			  int32_t named, struct node_ctx *c, tp_machine **out)
{
	tp_error e;
	tp_error_clear(&e);
	bool wrap = false;
	int nr = (int)nnodes, rc;
	if ((rc = tp__machine_new(&c->m, 1, &nr, &wrap, tp__tree_machines[0], NULL, &e)))
		return terr(p, 0, rc, "%s", e.msg);
	/* room for every node at once: growing rehashed the names and
	 * copied the arrays at every doubling */
	if (tp__machine_reserve(c->m, nnodes) ||
	    tp__names_reserve(&c->m->by_name, (size_t)named)) {
		tp_machine_destroy(c->m);
		c->m = NULL;
		return terr(p, 0, TP_ENOMEM, "out of memory");
	}
	for (int32_t i = 0; i < p->nsw && !rc; i++)
		if (p->sw[order[i]].nodes) {
			c->s = order[i];
			rc = add_switch_nodes(p, c);
		}
	if (rc) {
		tp_machine_destroy(c->m);
		c->m = NULL;
		return rc;
	}
	*out = c->m;
	return 0;
}

/* "Multiple leaf switches contain nodes" (Slurm's words), one line. */
static void warn_multi_homed(struct tparse *p, const struct node_ctx *c,
			     const tp_machine *first, const char *mark)
{
	int32_t n = 0;
	for (int32_t i = 0; i < first->nnodes; i++)
		n += mark[i] != 0;
	if (n == 0)
		return;
	const struct sw *a = &p->sw[c->owner[c->dup_node]];
	const struct sw *b = &p->sw[c->dup_other];
	char more[64] = "";
	if (n > 1)
		snprintf(more, sizeof more, " (and %ld more node%s)", (long)(n - 1),
			 n > 2 ? "s" : "");
	char name[TP__HOSTNAME_MAX];
	tp__machine_name_put(first, c->dup_node, name);
	tp__warn(p->warn, "%s:%d: Multiple leaf switches contain nodes: '%s' is under '%s' (line %d) and '%s'%s; each node stays under the first switch of the file that lists it, as in Slurm",
		 p->what, b->line, name, a->name, a->line,
		 b->name, more);
}

/* The machine with its nodes as routers, switch by switch in pre-order:
 * one dimension, the router number.  node_sw[i]: the switch of node i.  A
 * node listed twice takes a second pass, so that it stays under the first
 * switch in file order and the routers stay numbered in pre-order without
 * gaps. */
static int machine_with_nodes(struct tparse *p, const int32_t *order,
			      tp_machine **out, int32_t **node_sw)
{
	int32_t n = p->nsw, nnodes = 0, named = 0;
	int rc = 0;
	for (int32_t i = 0; i < n && !rc; i++)
		if (p->sw[order[i]].nodes)
			rc = count_switch_nodes(p, &p->sw[order[i]], &nnodes, &named);
	if (rc)
		return rc;
	/* Slurm 25.05 and later run with no node under any switch (with "no
	 * switch can reach all nodes"): a skeleton, whose nodes join at run
	 * time (slurm_join.c); until they do there is nothing to place on */
	if (nnodes == 0)
		return terr(p, 0, TP_ENOENT, "%s switches, %s; until then jobs keep "
			    "Slurm's placement", p->yaml ? "empty" : "no Nodes= on the",
			    TP__NET_SKELETON);
	/* sized once: there are at most nnodes (fewer with duplicates) */
	if (!(*node_sw = tp__malloc_array((size_t)nnodes, sizeof **node_sw)))
		return terr(p, 0, TP_ENOMEM, "out of memory");
	struct node_ctx c;
	memset(&c, 0, sizeof c);
	c.node_sw = node_sw;
	tp_machine *first;
	if ((rc = add_nodes_pass(p, order, nnodes, named, &c, &first)) || c.ndup == 0) {
		*out = rc ? NULL : first;
		return rc;
	}
	struct node_ctx c2 = c;
	int32_t *owner = *node_sw;
	c2.ndup = c2.nmulti = 0;
	c2.router = 0;
	c2.first = first;
	c2.owner = owner;
	c2.dup_mark = calloc((size_t)first->nnodes, 1);
	*node_sw = tp__malloc_array((size_t)first->nnodes, sizeof **node_sw);
	rc = c2.dup_mark && *node_sw ? add_nodes_pass(p, order, first->nnodes, first->nnodes, &c2, out)
			 : terr(p, 0, TP_ENOMEM, "out of memory");
	if (!rc && c.nmulti)
		warn_multi_homed(p, &c2, first, c2.dup_mark);
	free(c2.dup_mark);
	free(owner);
	tp_machine_destroy(first);
	return rc;
}

/* A switch listed under a second parent: one warning line (Slurm accepts
 * it without one; a tree keeps one parent). */
static void warn_multi_parent(struct tparse *p)
{
	if (!p->multi_parent)
		return;
	const struct sw *c = &p->sw[p->mp_child], *a = &p->sw[p->mp_first],
			*b = &p->sw[p->mp_second];
	char more[64] = "";
	if (p->multi_parent > 1)
		snprintf(more, sizeof more, " (and %ld more)",
			 (long)p->multi_parent - 1);
	tp__warn(p->warn, "%s:%d: switch '%s' is under two switches, '%s' (line %d) and '%s'%s; topoplace keeps each switch under the first that lists it",
		 p->what, b->line, c->name, a->name, a->line, b->name, more);
}

static int build(struct tparse *p, const int *level_cost, int nlevels,
		 tp_machine **out)
{
	int32_t n = p->nsw;
	if (n == 0)
		/* Slurm: "No switches configured" */
		return terr(p, 0, TP_EINVAL, p->yaml ? "no switches" : "no SwitchName= lines");
	/* room for a forest's virtual top everywhere */
	size_t n1 = (size_t)n + 1;
	p->nfile = n;
	struct tp_tree *t = tree_alloc(n);
	int32_t *last = tp__malloc_array(n1, sizeof(int32_t));
	int32_t *order = tp__malloc_array(n1, sizeof(int32_t));
	int32_t *stack = tp__malloc_array(n1, sizeof(int32_t));
	int32_t *node_sw = NULL, root = -1;
	tp_machine *m = NULL;
	int rc = 0;
	p->first_child = tp__malloc_array(n1, sizeof(int32_t));
	p->next_sib = tp__malloc_array(n1, sizeof(int32_t));
	if (!t || !last || !order || !stack || !p->first_child || !p->next_sib) {
		rc = terr(p, 0, TP_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = list_children(p)) || (rc = check_graph(p)))
		goto out;
	link_switches(p, t, last);
	if ((rc = find_top_switch(p, t, &root)))
		goto out;
	order_depth_first(p, t, root, order, stack);
	if ((rc = set_levels_and_costs(p, t, root, level_cost, nlevels)) ||
	    (rc = machine_with_nodes(p, order, &m, &node_sw)))
		goto out;
	warn_multi_parent(p);
	count_trees(p, t, order);
	n = p->nsw;
	/* the nodes' links: one "switch" per node below its switch */
	if ((rc = add_node_links(t, m, node_sw)) || (rc = tp__tree_build_lanes(t))) {
		rc = terr(p, 0, rc, "out of memory");
		goto out;
	}
	/* success: the switch names move to the tree, the tree to the machine */
	for (int32_t s = 0; s < n; s++) {
		t->name[s] = p->sw[s].name;
		p->sw[s].name = NULL;
	}
	m->net_data = t;
	t = NULL;
	*out = m;
	m = NULL;
out:
	tp__tree_free(t);
	tp_machine_destroy(m);
	free(node_sw);
	free(last);
	free(order);
	free(stack);
	return rc;
}

int tp__tree_from_records(tp_machine **out, const struct tp__topo_recs *r,
			  const struct tp__topo_opts *o, tp_error *err)
{
	static const struct tp__topo_opts none = { NULL, 0, 0, NULL, NULL };
	if (!o)
		o = &none;
	const char *what = r && r->what ? r->what :
			   r && r->yaml ? "topology.yaml" : "topology.conf";
	if (!out || !r || r->n < 0 || (r->n > 0 && !r->rec))
		return tp_error_set(err, TP_EINVAL, "%s: missing records or output", what);
	*out = NULL;
	const int *level_cost = o->level_cost;
	int nlevels = o->nlevels;
	if (nlevels < 0 || (nlevels > 0 && !level_cost))
		return tp_error_set(err, TP_EINVAL, "%s: bad LevelCost", what);
	for (int l = 0; l < nlevels; l++)
		if (level_cost[l] < 1)
			return tp_error_set(err, TP_EINVAL,
					    "%s: LevelCost value %d is %d, expected >= 1",
					    what, l + 1, level_cost[l]);
	if (o->forest_cost < 0)
		return tp_error_set(err, TP_EINVAL, "%s: ForestCost %d, expected >= 1",
				    what, o->forest_cost);
	struct tparse p;
	memset(&p, 0, sizeof p);
	p.what = what;
	p.yaml = r->yaml;
	p.err = err;
	p.warn = r->warn;   /* the records' file's warnings (records.h) */
	p.forest_cost = o->forest_cost;
	p.cost_where = o->cost_where;
	int rc = add_records(&p, r);
	if (!rc)
		rc = build(&p, level_cost, nlevels, out);
	tp__names_free(&p.by_name);
	free(p.names);
	for (int32_t s = 0; s < p.nsw; s++)
		free(p.sw[s].name);
	free(p.sw);
	free(p.child_off);
	free(p.child);
	free(p.slevel);
	free(p.first_child);
	free(p.next_sib);
	return rc;
}
