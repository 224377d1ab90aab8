/* topoplace — Slurm's own order of an allocation's nodes: the baseline
 * every mapping is judged against ("never worse than Slurm's order").
 *
 * Before 26.05 a step's tasks fill the nodes in the job's hostlist order.
 * Slurm 26.05's select/cons_tres ranks the nodes of a job by their topology
 * (topology_g_get_rank) and the step layout sorts by that rank, ties by node
 * index (_task_layout_topo in slurm_step_layout.c):
 *   topology/tree   the position of the node's leaf switch (a switch with
 *                   Nodes=) among the leaves, in topology.conf's order;
 *   topology/block  the index of its block among the BlockName= lines;
 *   a node in no leaf or block ranks 0, before all others.
 * SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK and select/linear keep the
 * hostlist order.  With topology.yaml (read instead of topology.conf when
 * it exists) the job's partition's topology ranks the same way when it is
 * a tree or blocks.  topology/ring and topology/torus3d define ranks too
 * (ring positions, Morton codes of torus coordinates), but a real 26.05.3
 * cluster lays a step's tasks out in the hostlist's order on both
 * (tests/slurm/topology.sh compares): that order is the baseline there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "slurm/slurm_topology.h"

#define VERSION_26_05 ((26u << 16) + (5u << 8))

enum kind { BY_LEAF, BY_BLOCK };

struct ranker {
	const tp_alloc *a;
	int32_t *pos_of;     /* machine node -> allocation index, or -1 */
	int32_t *rank;       /* per allocation index; -1: not ranked yet */
	int32_t current;
};

static int rank_span(void *arg, int32_t first, int32_t count,
		     const struct tp__listed *l)
{
	(void)l;
	struct ranker *r = arg;
	for (int32_t k = 0; first >= 0 && k < count; k++) {
		int32_t i = r->pos_of[first + k];
		/* the first leaf or block that holds the node, as Slurm's loop */
		if (i >= 0 && r->rank[i] < 0)
			r->rank[i] = r->current;
	}
	return 0;
}

/* The value of key (case-insensitive) among line's words, cut in place. */
static char *word_value(char *line, const char *key)
{
	size_t kl = strlen(key);
	for (char *p = line; *p;) {
		p += strspn(p, " \t\r");
		char *end = p + strcspn(p, " \t\r");
		if (!strncasecmp(p, key, kl) && p[kl] == '=') {
			*end = '\0';
			return p + kl + 1;
		}
		p = end;
	}
	return NULL;
}

struct topo_walk {
	struct ranker *r;
	enum kind kind;
	int32_t leaves, blocks;
};

/* One switch (leaf: with nodes) or block, in the file's order. */
static void rank_entry(struct topo_walk *w, const char *nodes)
{
	if (w->kind == BY_LEAF) {
		if (!nodes)
			return;         /* a switch above the leaves */
		w->r->current = ++w->leaves;
	} else {
		w->r->current = w->blocks++;   /* every block has its index */
		if (!nodes)
			return;
	}
	struct tp__hostlist *hl;
	int64_t count;
	tp_error e;
	tp_error_clear(&e);
	if (tp__hostlist_parse(nodes, "Nodes=", TP__MAX_TREE_NODES,
			       "the most a topology holds", &hl, &count, &e))
		return;   /* slurmctld refuses such a file; nothing to rank */
	tp__machine_each_listed(tp_alloc_machine(w->r->a), hl, rank_span, w->r);
	tp__hostlist_free(hl);
}

static int topo_line(void *arg, char *line, int number)
{
	(void)number;
	struct topo_walk *w = arg;
	char *start = line + strspn(line, " \t\r");
	bool leaf = w->kind == BY_LEAF && !strncasecmp(start, "SwitchName=", 11);
	bool block = w->kind == BY_BLOCK && !strncasecmp(start, "BlockName=", 10);
	if (leaf || block)
		rank_entry(w, word_value(line, "Nodes"));
	return 0;
}

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const int32_t *rank = arg;
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	if (rank[a] != rank[b])
		return rank[a] < rank[b] ? -1 : 1;
	return (a > b) - (a < b);
}


static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n == wl && !strncasecmp(p, word, wl))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}


void tp__slurm_order(const char *slurm_conf, const char *partition,
		     unsigned version, const tp_alloc *a, int32_t *order,
		     char *how)
{
	int32_t nn = tp_alloc_nnodes(a);
	for (int32_t i = 0; i < nn; i++)
		order[i] = i;
	how[0] = '\0';   /* the hostlist's order, nothing to say */
	if (!slurm_conf || !*slurm_conf || version < VERSION_26_05 || nn < 2)
		return;
	struct tp__slurm_keys k;
	tp_error e;
	tp_error_clear(&e);
	if (tp__slurm_conf_keys(slurm_conf, &k, &e)) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (%.400s)", e.msg);
		return;
	}
	if ((k.select_type && !strcasecmp(k.select_type, "select/linear")) ||
	    has_word(k.select_params, "CR_NO_DIST_TOPO_BLOCK")) {
		if (!k.select_type || strcasecmp(k.select_type, "select/linear"))
			snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order "
				 "(CR_NO_DIST_TOPO_BLOCK)");
		tp__slurm_keys_free(&k);
		return;
	}
	/* the topology of the partition, found as slurmctld finds it (the
	 * keys taken over): tree and blocks rank the nodes; flat, ring and
	 * torus3d keep the hostlist's order */
	struct tp__slurm_topology st;
	if (tp__slurm_topology_find(slurm_conf, &k, partition, version, &st, NULL,
				    &e)) {
		snprintf(how, TP_ERROR_MSG_MAX, "the hostlist's order (%.400s)", e.msg);
		return;
	}
	const struct tp__stopo *t = st.chosen >= 0 ? &st.set.t[st.chosen] : NULL;
	if (!t || (t->kind != TP__STOPO_TREE && t->kind != TP__STOPO_BLOCK)) {
		tp__slurm_topology_free(&st);
		return;
	}
	enum kind kind = t->kind == TP__STOPO_TREE ? BY_LEAF : BY_BLOCK;
	const tp_machine *m = tp_alloc_machine(a);
	int32_t nm = m->nnodes;
	struct ranker r = {
		.a = a,
		.pos_of = tp__malloc_array((size_t)nm, sizeof(int32_t)),
		.rank = tp__malloc_array((size_t)nn, sizeof(int32_t)),
	};
	if (r.pos_of && r.rank) {
		for (int32_t j = 0; j < nm; j++)
			r.pos_of[j] = -1;
		for (int32_t i = 0; i < nn; i++) {
			r.pos_of[tp_alloc_node(a, i)] = i;
			r.rank[i] = -1;
		}
		struct topo_walk w = { .r = &r, .kind = kind };
		if (st.yaml) {
			for (int32_t i = 0; i < t->nrec; i++)
				rank_entry(&w, t->rec[i].nodes);
		} else {
			tp__each_conf_line(st.text, st.file, &e, topo_line, &w);
		}
		for (int32_t i = 0; i < nn; i++)
			if (r.rank[i] < 0)
				r.rank[i] = 0;
		qsort_r(order, (size_t)nn, sizeof *order, cmp_rank, r.rank);
		char src[512];
		if (st.yaml)
			snprintf(src, sizeof src, "topology %.100s of %.300s", t->name,
				 st.file);
		else
			snprintf(src, sizeof src, "%.400s", st.file);
		snprintf(how, TP_ERROR_MSG_MAX, "%s, as Slurm %u.%02u lays tasks out "
			 "(%.440s)", kind == BY_LEAF ? "leaf switch by leaf switch"
			 : "block by block", version >> 16, (version >> 8) & 0xff, src);
	}
	free(r.pos_of);
	free(r.rank);
	tp__slurm_topology_free(&st);
}

int tp_alloc_take_slurm_order(tp_alloc *a, const char *slurm_conf,
			      const char *partition, unsigned version, char *how)
{
	char own[TP_ERROR_MSG_MAX];
	int32_t nn = tp_alloc_nnodes(a);
	int32_t *order = tp__malloc_array((size_t)(nn ? nn : 1), sizeof *order);
	if (!a || !order) {
		free(order);
		return TP_ENOMEM;
	}
	tp__slurm_order(slurm_conf, partition, version, a, order, how ? how : own);
	int rc = tp__alloc_reorder(a, order);
	free(order);
	return rc;
}
