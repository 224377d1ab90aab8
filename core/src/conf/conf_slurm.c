/* topoplace — Slurm's topology as topoplace.conf's machine (Network=slurm,
 * or no Network=): the keys that do not apply to it refused, Slurm's files
 * read as slurmctld reads them (slurm_topology.c), what topoplace.conf adds
 * to them, check-config's account of it, slurmctld's live view kept, and
 * the accessors that answer about it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_kind.h"
#include "net/machine_internal.h"
#include "net/records.h"
#include "slurm/slurm_conf.h"
#include "slurm/slurm_topo.h"
#include "conf/conf_internal.h"
#include "conf/conf_loader.h"
#include "conf/conf_records.h"
#include "slurm/slurm_topology.h"

/* The partitions whose topology is t (a list "a, b"; "" for none). */
static void partitions_of(const struct tp__slurm_topology *st, int t, bool dflt,
			  char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < st->keys.npart; i++) {
		const struct tp__slurm_part *p = &st->keys.part[i];
		int k = p->topology && st->yaml
			? tp__slurm_topology_index(st, p->topology) : -1;
		if (k == t || (k < 0 && dflt))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
					      n ? ", " : "", p->name);
		if (n >= len)
			break;
	}
}

/* check-config's account of Slurm's topology: the file and why, each
 * topology and its partitions, the one used, what topoplace.conf adds. */
/* Where a topology's nodes came from when not all from its file: those
 * slurm.conf's Topology= put there, and the units still empty, whose nodes
 * join at run time (slurm_join.c). */
static void placed_line(const struct tp__slurm_topology *st, int which, FILE *f)
{
	const struct tp__stopo *t = &st->set.t[which];
	if (t->kind != TP__STOPO_TREE && t->kind != TP__STOPO_BLOCK)
		return;
	int32_t units = 0, empty = 0;
	for (int32_t i = 0; i < t->nrec; i++) {
		const struct tp__topo_rec *r = &t->rec[i];
		if (t->kind == TP__STOPO_TREE && r->switches && *r->switches)
			continue;   /* not a leaf */
		units++;
		empty += !r->nodes || !*r->nodes;
	}
	const char *unit = t->kind == TP__STOPO_TREE ? "leaf switch" : "block";
	if (t->njoined)
		fprintf(f, "  placed by slurm.conf's Topology=: %lld node%s\n",
			(long long)t->njoined, t->njoined == 1 ? "" : "s");
	if (t->nlive)
		fprintf(f, "  placed by slurmctld's live view: %lld node%s\n",
			(long long)t->nlive, t->nlive == 1 ? "" : "s");
	if (empty && st->yaml)
		fprintf(f, "  %ld of %ld %s%s without nodes: theirs join at run time "
			"(slurmd --conf \"Topology=...\", scontrol update)\n",
			(long)empty, (long)units, unit,
			units == 1 ? "" : t->kind == TP__STOPO_TREE ? "es" : "s");
}

static int describe_source(struct loader *ld, const struct tp__slurm_topology *st,
			   int which, const char *which_why, bool block_tree)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return oom(ld);
	fprintf(f, "Slurm's topology: %s\n  why: %s\n", st->file, st->why);
	int def = -1;
	for (int i = 0; i < st->set.n && def < 0; i++)
		if (st->set.t[i].cluster_default)
			def = i;
	if (def < 0 && st->set.n)
		def = 0;
	for (int i = 0; i < st->set.n; i++) {
		const struct tp__stopo *t = &st->set.t[i];
		char parts[1024];
		partitions_of(st, i, i == def, parts, sizeof parts);
		fprintf(f, "  topology %s (%s%s%s): partitions %s\n", t->name,
			tp__stopo_kind_name(t->kind), i == def ? ", cluster default" : "",
			st->yaml ? "" : ", topology.conf", *parts ? parts : "none");
	}
	fprintf(f, "  used: %s (%s)\n", st->set.t[which].name, which_why);
	placed_line(st, which, f);
	free(ld->c->used);
	if (asprintf(&ld->c->used, "Slurm's topology %s (%s) of %s, %s",
		     st->set.t[which].name,
		     tp__stopo_kind_name(st->set.t[which].kind), st->file,
		     which_why) < 0)
		ld->c->used = NULL;
	/* what topoplace.conf adds, in line order; a key for another kind is
	 * ignored here (another partition's topology may be of its kind), said
	 * here only: a warning would follow every job of this partition */
	enum tp__stopo_kind kind = st->set.t[which].kind;
	bool tree = kind == TP__STOPO_TREE, block = kind == TP__STOPO_BLOCK;
	/* topology.yaml's blocks take the first tree of the file that holds
	 * them (conf_slurm_build.c): with none, their cables are ignored */
	bool yaml_tree = false;
	for (int j = 0; st->yaml && j < st->set.n; j++)
		yaml_tree |= st->set.t[j].kind == TP__STOPO_TREE && st->set.t[j].nrec > 0;
	struct added { int line; const char *key; bool applies; } added[64] = {
		{ ld->r.cost_line, "LevelCost", tree },
		{ ld->r.lbw_line, "LevelBandwidth", tree || (block && block_tree) },
		/* the cables of the tree between the blocks: TreeTopologyFile='s
		 * or topology.yaml's (when one holds the blocks) */
		{ ld->r.uplinks_line, "LevelUplinks", tree || (block && (block_tree || yaml_tree)) },
		{ ld->r.routing_line, "UplinkRouting", tree || (block && (block_tree || yaml_tree)) },
	};
	size_t na = 4;
	for (int i = 0; tp__conf_kinds[i]; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++) {
			const struct tp__conf_key *k = &tp__conf_kinds[i]->keys[j];
			if (!(k->flags & TP__CONF_KEY_SLURM) || na == 64)
				continue;
			added[na] = (struct added){ *tp__ld_key_line(ld, i, j), k->name,
						    tp__conf_kinds[i]->slurm_kind == kind };
			na++;
		}
	const struct added site[] = {
		{ ld->policy_line, "DefaultPolicy", true },
		{ ld->metric_line, "DefaultMetric", true },
		{ ld->budget_line, "TimeBudgetMs", true },
		{ ld->threads_line, "MaxThreads", true },
		{ ld->lat_line, "HopLatency", true },
		{ ld->nodebw_line, "NodeBandwidth", true },
		{ ld->intrabw_line, "IntraNodeBandwidth", true },
		{ ld->sharing_line, "FlowSharing", true },
		{ ld->eager_line, "EagerLimit", true },
	};
	for (size_t i = 0; i < sizeof site / sizeof *site && na < 64; i++)
		added[na++] = site[i];
	for (size_t i = 1; i < na; i++)       /* by line (insertion sort) */
		for (size_t j = i; j > 0 && added[j - 1].line > added[j].line; j--) {
			struct added t = added[j];
			added[j] = added[j - 1];
			added[j - 1] = t;
		}
	bool any = false;
	for (size_t i = 0; i < na; i++)
		if (added[i].line) {
			fprintf(f, "%s%s= (line %d%s)", any ? ", " : "  from topoplace.conf: ",
				added[i].key, added[i].line, added[i].applies ? ""
				: tree ? ", not for a tree: ignored" : block
				? ", not for blocks: ignored" : ", ignored");
			any = true;
		}
	if (any)
		fputc('\n', f);
	if (fclose(f) || !buf) {
		free(buf);
		return oom(ld);
	}
	free(ld->c->source);
	ld->c->source = buf;
	return TP_OK;
}

/* Keys that do not apply to Slurm's topology: the box's, and the kinds'
 * own that Slurm's topology does not take. */
static int slurm_refused_keys(struct loader *ld)
{
	const struct { int line; const char *key; } box[] = {
		{ ld->r.dims_line, "Dims" }, { ld->r.wrap_line, "Wrap" },
		{ ld->r.npr_line, "NodesPerRouter" }, { ld->r.bw_line, "LinkBandwidth" },
		{ ld->r.dist_line, "Distance" },
	};
	int line = 0;
	const char *key = NULL;
	for (size_t i = 0; i < sizeof box / sizeof *box && !line; i++)
		if (box[i].line) {
			line = box[i].line;
			key = box[i].key;
		}
	for (int i = 0; tp__conf_kinds[i] && !line; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys && !line; j++)
			if (!(tp__conf_kinds[i]->keys[j].flags & TP__CONF_KEY_SLURM) &&
			    *tp__ld_key_line(ld, i, j)) {
				line = *tp__ld_key_line(ld, i, j);
				key = tp__conf_kinds[i]->keys[j].name;
			}
	if (line)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "%s= does not apply to Slurm's topology (Network=%s): "
			    "give the network's own Network=", key,
			    ld->r.net_line ? "slurm" : "not given");
	if (ld->r.topo_line)
		return lerr(ld, NULL, ld->r.topo_line, TP_EINVAL,
			    "TopologyFile= needs Network=tree or Network=block (without "
			    "Network=, topoplace reads Slurm's own topology)");
	for (int i = 0; tp__conf_kinds[i]; i++) {
		const struct tp__conf_kind *k = tp__conf_kinds[i];
		int rc = k->slurm_check ? k->slurm_check(&ld->r, ld->state[i]) : TP_OK;
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* What the kinds' keys add to the machine of Slurm's topology of kind sk. */
static int slurm_options(struct loader *ld, enum tp__stopo_kind sk,
			 struct tp__topo_opts *to, tp_block_opts *bo)
{
	for (int i = 0; tp__conf_kinds[i]; i++) {
		const struct tp__conf_kind *k = tp__conf_kinds[i];
		int rc = k->slurm_options ? k->slurm_options(&ld->r, ld->state[i], sk, to, bo)
					  : TP_OK;
		if (rc)
			return rc;
	}
	/* LevelBandwidth= is the tree's, or that of the tree between blocks */
	bo->level_bandwidth = ld->c->b.level_bw;
	bo->nlevel_bandwidth = ld->r.lbw_line && bo->tree_text ? ld->c->b.nlevel_bw : 0;
	return TP_OK;
}

/* Network=slurm, or no Network= at all: the machine is Slurm's own
 * topology, read as slurmctld reads it (slurm_topology.c); topoplace.conf
 * adds what Slurm's files cannot say (bandwidths, costs, node models). */
int tp__ld_ensure_slurm(struct loader *ld, int line, const char *key)
{
	(void)key;
	int rc = slurm_refused_keys(ld);
	if (rc)
		return rc;
	const tp_conf_slurm *sl = ld->slurm;
	const char *slurm_conf = sl && sl->slurm_conf && *sl->slurm_conf
				 ? sl->slurm_conf : TP_DEFAULT_SLURM_CONF;
	struct tp__slurm_topology st;
	tp_error e2;
	tp_error_clear(&e2);
	rc = tp__slurm_topology_load(slurm_conf, sl ? sl->partition : NULL,
				     sl ? sl->slurm_version : 0, tp__conf_live(ld->c), &st,
				     &ld->c->b.warn, &e2);
	if (rc)
		return lerr(ld, NULL, ld->r.net_line, rc, "Slurm's topology: %s", e2.msg);
	int which = st.chosen;
	char which_why[TP_ERROR_MSG_MAX];
	snprintf(which_why, sizeof which_why, "%s", st.chosen_why);
	if (sl && sl->topology) {
		which = tp__slurm_topology_index(&st, sl->topology);
		snprintf(which_why, sizeof which_why, "asked for by name");
		if (which < 0)
			rc = lerr(ld, NULL, 0, TP_ENOENT, "Slurm's topology: no "
				  "topology %s in %s", sl->topology,
				  st.file[0] ? st.file : "Slurm's files");
	} else if (which < 0) {
		rc = lerr(ld, NULL, ld->r.net_line, TP_ENOENT, "Slurm's topology: %s%s",
			  st.why, st.yaml ? " (it names no topology)" : "");
	}
	/* every topology by name, for check-config */
	for (int i = 0; !rc && st.yaml && i < st.set.n; i++) {
		char **nt = realloc(ld->c->slurm_topo, sizeof *nt * (size_t)(i + 1));
		if (!nt || !(nt[i] = strdup(st.set.t[i].name))) {
			if (nt)
				ld->c->slurm_topo = nt;
			rc = oom(ld);
			break;
		}
		ld->c->slurm_topo = nt;
		ld->c->nslurm_topo = i + 1;
	}
	ld->c->slurm_used = st.yaml ? which : -1;
	char cost_where[512];
	snprintf(cost_where, sizeof cost_where, "%s:%d", ld->r.what, ld->r.cost_line);
	struct tp__topo_opts to = { ld->r.cost, ld->r.ncost, 0, &ld->c->b.warn,
				    ld->r.cost_line ? cost_where : NULL };
	tp_block_opts bo = { 0 };
	if (!rc)
		rc = slurm_options(ld, st.set.t[which].kind, &to, &bo);
	if (!rc)
		rc = describe_source(ld, &st, which, which_why, bo.tree_text != NULL);
	if (!rc) {
		struct tp__stopo_built built = { NULL, NULL, &ld->c->b.warn };
		rc = tp__slurm_topology_machine(&st, which, &to, &bo, &built,
						ld->r.err);
		ld->c->b.m = built.m;
		const char *tree_used = built.tree_used;
		if (!rc && tree_used) {
			free(ld->c->b.tree_path);
			if (asprintf(&ld->c->b.tree_path, "topology %s of %s", tree_used,
				     st.file) < 0) {
				ld->c->b.tree_path = NULL;
				rc = oom(ld);
			}
		}
		if (!rc && ld->c->b.m->nnodes == 0)
			rc = lerr(ld, st.file, st.set.t[which].line, TP_ENOENT,
				  "topology %s has no nodes (nothing to place tasks on)",
				  st.set.t[which].name);
		if (!rc) {
			ld->c->from_slurm = true;
			ld->c->kind = tp__conf_kind_of(ld->c->b.m);
			if (!ld->c->kind)   /* every kind lists its machines */
				rc = lerr(ld, st.file, 0, TP_EINVAL,
					  "no kind of network describes a %s",
					  tp_machine_kind(ld->c->b.m));
			free(ld->c->b.topo_path);
			if (!(ld->c->b.topo_path = strdup(st.file)))
				rc = oom(ld);
			ld->first_node_line = line;
		}
	}
	tp__slurm_topology_free(&st);
	return rc;
}

/* A copy of the live view into c (NULL: none). */
int tp__ld_keep_live(tp_conf *c, const struct tp__slurm_live *live)
{
	if (!live || !live->text)
		return TP_OK;
	char *text = malloc(live->len + 1);
	if (!text)
		return TP_ENOMEM;
	memcpy(text, live->text, live->len);
	text[live->len] = '\0';
	c->live.text = text;
	c->live.len = live->len;
	c->has_live = true;
	if ((live->topology && !(c->live.topology = strdup(live->topology))) ||
	    !(c->live.what = strdup(live->what ? live->what : "slurmctld's topology")))
		return TP_ENOMEM;
	return TP_OK;
}

const struct tp__slurm_live *tp__conf_live(const tp_conf *c)
{
	return c && c->has_live ? &c->live : NULL;
}

const char *tp_conf_network_source(const tp_conf *c)
{
	return c && c->from_slurm ? c->source : NULL;
}

const char *tp_conf_network_used(const tp_conf *c)
{
	return c && c->from_slurm ? c->used : NULL;
}

int tp_conf_slurm_ntopologies(const tp_conf *c)
{
	return c ? c->nslurm_topo : 0;
}

const char *tp_conf_slurm_topology(const tp_conf *c, int i)
{
	return c && i >= 0 && i < c->nslurm_topo ? c->slurm_topo[i] : NULL;
}

int tp_conf_slurm_topology_names(const tp_conf_slurm *s, char ***names, int *n,
				 tp_error *err)
{
	*names = NULL;
	*n = 0;
	struct tp__slurm_topology st;
	int rc = tp__slurm_topology_load(s && s->slurm_conf ? s->slurm_conf
					 : TP_DEFAULT_SLURM_CONF, NULL,
					 s ? s->slurm_version : 0, NULL, &st, NULL, err);
	if (rc)
		return rc;
	if (st.yaml && st.set.n > 0) {
		*names = calloc((size_t)st.set.n, sizeof **names);
		for (int i = 0; *names && i < st.set.n; i++) {
			if (!((*names)[i] = strdup(st.set.t[i].name)))
				break;
			*n = i + 1;
		}
		if (*n != st.set.n)
			rc = tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	tp__slurm_topology_free(&st);
	if (rc) {
		tp_conf_slurm_topology_names_free(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return rc;
}

void tp_conf_slurm_topology_names_free(char **names, int n)
{
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int tp_conf_slurm_topology_used(const tp_conf *c)
{
	return c && c->from_slurm ? c->slurm_used : -1;
}

