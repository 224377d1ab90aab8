/* topoplace — slurmctld's live view of a topology: where nodes that joined
 * at run time are, when neither the topology file nor slurm.conf's
 * Topology= says.
 *
 * A dynamic node (slurmd -Z --conf "Topology=default:leaf3") tells
 * slurmctld its unit when it registers; only slurmctld knows it then.  The
 * front ends fetch slurmctld's records: srun's plugin through libslurm
 * (slurm_load_topo, slurm_print_topo_info_msg), the command by running
 * `scontrol show topology NAME`.  Both give the same lines, the ones
 * topology plugins print (topology_tree.c, topology_block.c, 23.11 to
 * 26.05):
 *
 *   SwitchName=s0 Level=0 LinkSpeed=1 Nodes=node[1-4]
 *   SwitchName=top Level=1 LinkSpeed=1 Nodes=node[1-8] Switches=s[0-1]
 *   BlockName=b1 BlockIndex=0 Nodes=node[1-4] BlockSize=4
 *   AggregatedBlock=b[1-2] BlockIndex=0 Nodes=node[1-8] BlockSize=8
 *
 * The text is untrusted (another process's output; SLURM_TOPO_LEN cuts
 * its lines short): every line must be one of these, with known keys and
 * plain names, or nothing is taken from it (one warning).  Only nodes no
 * record of the topology holds are taken, into the unit slurmctld has them
 * in: a leaf switch (Level=0; upper switches list every node below them)
 * or a base block (aggregated blocks are not units).  A leaf the file
 * lacks is reached by the path of switches above it, from the first one
 * the file has, as slurmctld created it (topology_tree.c); the joining
 * itself is slurm.conf's (slurm_join.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "slurm/slurm_topo.h"

/* A live view far above any cluster's: bounded work on garbage. */
#define LIVE_MAX_RECORDS 65536
/* Switch levels: slurmctld finds at most 21 (net/tree_build.c) */
#define LIVE_MAX_DEPTH 24
/* HOST_NAME_MAX, as slurmctld bounds SwitchName= */
#define LIVE_NAME_MAX 64

struct live_rec {
	char *name, *nodes, *switches;
	long level;               /* tree: Level=; -1 unknown */
	bool unit;                /* a leaf switch or a base block */
	int line;
};

struct live {
	struct live_rec *r;
	int n, cap;
	const char *what;
	bool tree;
	char why[TP_ERROR_MSG_MAX];   /* the first bad line, "" when none */
	int why_line;
};

static bool name_ok(const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || n > LIVE_NAME_MAX)
		return false;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!isgraph(*p) || *p == ':' || *p == ',' || *p == '=' ||
		    *p == '[' || *p == ']' || *p == '"' || *p == '\'')
			return false;
	return true;
}

/* A hostlist value: printable, without blanks or quotes. */
static bool list_ok(const char *v)
{
	if (!*v)
		return false;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!isgraph(*p) || *p == '=' || *p == '"' || *p == '\'')
			return false;
	return true;
}

static int bad(struct live *L, int line, const char *fmt, const char *arg)
{
	if (!L->why[0]) {
		snprintf(L->why, sizeof L->why, fmt, arg);
		L->why_line = line;
	}
	return 1;
}

/* One line into a record; 1 (L->why set) when it is not one. */
static int live_line(struct live *L, char *s, int line)
{
	struct live_rec r = { .level = -1, .line = line };
	const char *first = NULL;
	bool aggregated = false;
	char *save = NULL;
	for (char *tok = strtok_r(s, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok)
			return bad(L, line, "'%.64s': expected Key=Value", tok);
		*eq = '\0';
		char *v = eq + 1;
		if (!first)
			first = tok;
		if (L->tree && !strcasecmp(tok, "SwitchName")) {
			if (r.name || !name_ok(v))
				return bad(L, line, "SwitchName=%.80s: not one switch name", v);
			r.name = v;
		} else if (!L->tree && (!strcasecmp(tok, "BlockName") ||
					!strcasecmp(tok, "AggregatedBlock"))) {
			aggregated = !strcasecmp(tok, "AggregatedBlock");
			if (r.name || (!aggregated && !name_ok(v)) ||
			    (aggregated && !list_ok(v)))
				return bad(L, line, "%.80s: not one block name", v);
			r.name = v;
		} else if (!strcasecmp(tok, "Nodes")) {
			if (r.nodes || !list_ok(v))
				return bad(L, line, "Nodes=%.80s: not one node list", v);
			r.nodes = v;
		} else if (L->tree && !strcasecmp(tok, "Switches")) {
			if (r.switches || !list_ok(v))
				return bad(L, line, "Switches=%.80s: not one switch list", v);
			r.switches = v;
		} else if ((L->tree && (!strcasecmp(tok, "Level") ||
					!strcasecmp(tok, "LinkSpeed"))) ||
			   (!L->tree && (!strcasecmp(tok, "BlockIndex") ||
					 !strcasecmp(tok, "BlockSize")))) {
			char *end;
			long x = strtol(v, &end, 10);
			if (end == v || *end || x < 0 || x > 4294967295L)
				return bad(L, line, "'%.80s': not a number", v);
			if (!strcasecmp(tok, "Level"))
				r.level = x;
		} else {
			return bad(L, line, "unknown key '%.64s'", tok);
		}
	}
	if (!first)
		return 0;        /* a blank line */
	if (!r.name || (strcasecmp(first, "SwitchName") &&
			strcasecmp(first, "BlockName") &&
			strcasecmp(first, "AggregatedBlock")))
		return bad(L, line, "%s", L->tree ? "not a SwitchName= line"
			   : "not a BlockName= line");
	if (L->tree && r.level < 0)
		return bad(L, line, "%s", "SwitchName= without Level=");
	r.unit = L->tree ? r.level == 0 && !r.switches : !aggregated;
	if (L->n == L->cap) {
		if (L->n >= LIVE_MAX_RECORDS)
			return bad(L, line, "%s", "more switches or blocks than any "
				   "cluster has");
		int nc = L->cap ? 2 * L->cap : 64;
		struct live_rec *nr = realloc(L->r, sizeof *nr * (size_t)nc);
		if (!nr)
			return -1;
		L->r = nr;
		L->cap = nc;
	}
	L->r[L->n++] = r;
	return 0;
}

static int add_names(void *arg, const char *name)
{
	return tp__name_set_add(arg, name);
}

static int32_t file_rec(const struct tp__stopo *t, const char *name)
{
	for (int32_t i = 0; i < t->nrec; i++)
		if (t->rec[i].name && !strcmp(t->rec[i].name, name))
			return i;
	return -1;
}

/* The live switch whose Switches= names name (-1: none). */
static int live_parent(const struct live *L, const char *name, tp_error *err)
{
	for (int i = 0; i < L->n; i++) {
		if (!L->r[i].switches)
			continue;
		struct tp__name_set kids;
		memset(&kids, 0, sizeof kids);
		int rc = tp__stopo_each_name(L->r[i].switches, "Switches=", err, add_names, &kids, NULL);
		bool has = !rc && tp__name_set_has(&kids, name);
		tp__name_set_free(&kids);
		if (rc)
			return -2;
		if (has)
			return i;
	}
	return -1;
}

/* The path slurm.conf's Topology= would give unit i: the switches from the
 * first one the file has down to the leaf ("top:s9"), malloc'ed. */
static char *tree_path(const struct live *L, const struct tp__stopo *t, int i,
		       tp_error *err)
{
	const char *chain[LIVE_MAX_DEPTH];
	int n = 0, at = i;
	chain[n++] = L->r[i].name;
	while (file_rec(t, chain[n - 1]) < 0 && n < LIVE_MAX_DEPTH) {
		int p = live_parent(L, chain[n - 1], err);
		if (p == -2)
			return NULL;
		if (p < 0 || p == at)
			break;
		at = p;
		chain[n++] = L->r[p].name;
	}
	size_t len = 1;
	for (int k = 0; k < n; k++)
		len += strlen(chain[k]) + 1;
	char *out = malloc(len), *w = out;
	if (!out)
		return NULL;
	for (int k = n - 1; k >= 0; k--)
		w += sprintf(w, "%s%s", chain[k], k ? ":" : "");
	return out;
}

int tp__stopo_live(struct tp__stopo_set *s, int which, const char *file,
		   const struct tp__slurm_live *live, struct tp__warnings *warn,
		   tp_error *err)
{
	if (!live || !live->text || which < 0 || which >= s->n)
		return TP_OK;
	struct tp__stopo *t = &s->t[which];
	if (t->kind != TP__STOPO_TREE && t->kind != TP__STOPO_BLOCK)
		return TP_OK;
	const char *what = live->what ? live->what : "slurmctld's topology";
	if (live->len > TP__MAX_TOPOLOGY_BYTES || memchr(live->text, '\0', live->len)) {
		tp__warn(warn, "%s: %s; topoplace takes no node's place from it", what,
			 live->len > TP__MAX_TOPOLOGY_BYTES ? "larger than any topology"
			 : "a NUL byte in the text");
		return TP_OK;
	}
	struct live L = { .what = what, .tree = t->kind == TP__STOPO_TREE };
	char *copy = strndup(live->text, live->len);
	struct tp__name_set placed;
	memset(&placed, 0, sizeof placed);
	struct tp__slurm_node_topo *q = NULL;
	char **unit = NULL;
	int nq = 0, rc = TP_OK;
	if (!copy) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		goto out;
	}
	int line = 0;
	for (char *p = copy, *nl; p && !L.why[0]; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		line++;
		if (live_line(&L, p, line) < 0) {
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
			goto out;
		}
	}
	/* the nodes the topology's records place already */
	tp_error e;
	tp_error_clear(&e);
	for (int32_t r = 0; !L.why[0] && r < t->nrec; r++)
		if (t->rec[r].nodes && *t->rec[r].nodes &&
		    tp__stopo_each_name(t->rec[r].nodes, "nodes", &e, add_names, &placed, NULL)) {
			if (e.code == TP_ENOMEM) {
				rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
				goto out;
			}
			goto out;   /* the file's own error: its builder says it */
		}
	q = tp__calloc((size_t)L.n + 1, sizeof *q);
	unit = tp__calloc((size_t)L.n + 1, sizeof *unit);
	if (!q || !unit) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
		goto out;
	}
	/* the units' nodes counted before any is expanded: no more than a
	 * network of the kind holds (a 108-byte line named 1.7 million, 2.5 s
	 * of work) */
	int64_t named = 0, most = L.tree ? TP__MAX_TREE_NODES : TP__BLOCK_MAX_NODES;
	for (int i = 0; !L.why[0] && i < L.n; i++) {
		struct live_rec *r = &L.r[i];
		if (!r->unit || !r->nodes)
			continue;
		struct tp__name_set here;
		memset(&here, 0, sizeof here);
		int64_t c = 0;
		if (tp__stopo_each_name_within(r->nodes, "Nodes=", most - named,
					       L.tree ? "the most nodes of a tree"
						      : "the most nodes of a block network",
					       &e, add_names, &here, &c)) {
			tp__name_set_free(&here);
			if (e.code == TP_ENOMEM) {
				rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
				goto out;
			}
			bad(&L, r->line, "%.300s", e.msg);
			break;
		}
		named += c;
		/* the new ones; a node in two units counts in the first */
		const char **fresh = tp__malloc_array(here.n + 1, sizeof *fresh);
		size_t nf = 0;
		for (size_t k = 0; fresh && k < here.n; k++)
			if (!tp__name_set_has(&placed, here.names[k])) {
				fresh[nf++] = here.names[k];
				if (tp__name_set_add(&placed, here.names[k]))
					break;
			}
		char *hl = NULL;
		if (fresh && nf && tp__hostlist_format(fresh, nf, &hl))
			hl = NULL;
		free(fresh);
		tp__name_set_free(&here);
		if (!nf)
			continue;
		char *path = hl ? (L.tree ? tree_path(&L, t, i, &e) : strdup(r->name)) : NULL;
		char *label = NULL;
		if (path && asprintf(&label, "%s:%s", t->name, r->name) < 0)
			label = NULL;
		if (!path || !label) {
			free(hl);
			free(path);
			free(label);
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		q[nq] = (struct tp__slurm_node_topo){
			.nodes = tp__stopo_own(s, hl), .topology = tp__stopo_own(s, label),
			.file = (char *)what, .line = r->line };
		unit[nq] = tp__stopo_own(s, path);
		if (!q[nq].nodes || !q[nq].topology || !unit[nq]) {
			rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
			goto out;
		}
		nq++;
	}
	if (L.why[0]) {
		tp__warn(warn, "%.200s:%d: %.400s; topoplace takes no node's place "
			 "from it", what, L.why_line, L.why);
		goto out;
	}
	rc = tp__stopo_join_units(s, which, q, (const char *const *)unit, nq,
				  file ? file : what, warn, err);
out:
	tp__name_set_free(&placed);
	free(q);
	free(unit);
	free(L.r);
	free(copy);
	return rc;
}
