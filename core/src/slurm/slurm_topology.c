/* topoplace — Slurm's own topology, found as slurmctld finds it.
 *
 * slurmctld (src/interfaces/topology.c, 25.05 and later) reads
 * topology.yaml from slurm.conf's directory when it exists and then ignores
 * topology.conf; otherwise it loads the one plugin of slurm.conf's
 * TopologyPlugin= (default topology/flat: no topology) on topology.conf of
 * the same directory.  A partition takes the topology of its Topology=
 * (slurm.conf's PartitionName= line), else the cluster default: the first
 * topology with cluster_default: true, else the first of the file.
 * Releases before 25.05 have no topology.yaml; a 23.11 or 24.11 site does
 * not have one, and the rule is the same.  What is found is read into
 * records; conf/conf_slurm_build.c builds the network from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "slurm/slurm_release.h"
#include "slurm/slurm_topology.h"

/* name in path's directory (name alone when path has none), into out. */
static void beside(const char *path, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(out, len, "%.*s/%s", slash > path ? (int)(slash - path) : 0,
			 path, name);
	else
		snprintf(out, len, "%s", name);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

void tp__slurm_topology_free(struct tp__slurm_topology *st)
{
	if (!st)
		return;
	tp__stopo_set_free(&st->set);
	tp__slurm_keys_free(&st->keys);
	free(st->text);
	memset(st, 0, sizeof *st);
	st->chosen = -1;
}

static const char *kind_of_plugin(const char *plugin, enum tp__stopo_kind *k)
{
	static const struct { const char *plugin; enum tp__stopo_kind kind; } p[] = {
		{ "topology/tree", TP__STOPO_TREE },
		{ "topology/block", TP__STOPO_BLOCK },
		{ "topology/ring", TP__STOPO_RING },
		{ "topology/flat", TP__STOPO_FLAT },
		{ "topology/none", TP__STOPO_FLAT },  /* before 23.11 */
		{ "topology/default", TP__STOPO_FLAT },
	};
	for (size_t i = 0; i < sizeof p / sizeof *p; i++)
		if (!strcasecmp(plugin, p[i].plugin)) {
			*k = p[i].kind;
			return p[i].plugin;
		}
	return NULL;
}

const char *tp__stopo_kind_name(enum tp__stopo_kind k)
{
	switch (k) {
	case TP__STOPO_TREE: return "tree";
	case TP__STOPO_BLOCK: return "block";
	case TP__STOPO_FLAT: return "flat";
	case TP__STOPO_RING: return "ring";
	case TP__STOPO_TORUS3D: return "torus3d";
	default: return "none";
	}
}

/* The index of the cluster default of the set (-1: no topology). */
static int cluster_default(const struct tp__stopo_set *s)
{
	for (int i = 0; i < s->n; i++)
		if (s->t[i].cluster_default)
			return i;
	return s->n ? 0 : -1;
}

int tp__slurm_topology_index(const struct tp__slurm_topology *st,
			     const char *name)
{
	for (int i = 0; name && i < st->set.n; i++)
		if (!strcmp(st->set.t[i].name, name))
			return i;
	return -1;
}

/* The partition's topology: its Topology= of slurm.conf, else the cluster
 * default. */
static int choose(struct tp__slurm_topology *st, const char *partition,
		  tp_error *err)
{
	const struct tp__slurm_part *p = NULL;
	for (int i = 0; i < st->keys.npart; i++) {
		const struct tp__slurm_part *q = &st->keys.part[i];
		if (partition ? !strcmp(q->name, partition) : q->is_default)
			p = q;
	}
	if (p && p->topology && st->yaml) {
		st->chosen = tp__slurm_topology_index(st, p->topology);
		if (st->chosen < 0)
			return tp_error_set(err, TP_EINVAL, "%s:%d: PartitionName=%s "
					    "Topology=%s: no topology of that name in %s",
					    p->file, p->line, p->name, p->topology,
					    st->file);
		snprintf(st->chosen_why, sizeof st->chosen_why,
			 "partition %s: Topology=%s (%s:%d)", p->name, p->topology,
			 p->file, p->line);
		return TP_OK;
	}
	st->chosen = cluster_default(&st->set);
	if (st->chosen < 0)
		return TP_OK;
	if (!st->yaml)
		snprintf(st->chosen_why, sizeof st->chosen_why, "the one topology "
			 "of topology.conf");
	else if (p)
		snprintf(st->chosen_why, sizeof st->chosen_why, "partition %s%s has "
			 "no Topology=: the cluster default", p->name,
			 partition ? "" : " (Default=YES)");
	else if (partition)
		snprintf(st->chosen_why, sizeof st->chosen_why, "partition %s is not "
			 "in slurm.conf: the cluster default", partition);
	else
		snprintf(st->chosen_why, sizeof st->chosen_why, "no partition: the "
			 "cluster default");
	return TP_OK;
}

/* topology.conf under TopologyPlugin=: its text, one topology "default". */
static int load_conf(struct tp__slurm_topology *st, const char *path,
		     enum tp__stopo_kind kind, tp_error *err)
{
	size_t len;
	int rc = tp__read_file(path, TP__MAX_TOPOLOGY_BYTES, "topology.conf",
			       &st->text, &len, err);
	if (rc)
		return rc;
	st->set.t = calloc(1, sizeof *st->set.t);
	if (!st->set.t)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
	st->set.n = 1;
	st->set.t[0].name = "default";
	st->set.t[0].kind = kind;
	st->set.t[0].cluster_default = true;
	return TP_OK;
}

int tp__slurm_topology_load(const char *slurm_conf, const char *partition,
			    unsigned slurm_version,
			    const struct tp__slurm_live *live,
			    struct tp__slurm_topology *st,
			    struct tp__warnings *warn, tp_error *err)
{
	memset(st, 0, sizeof *st);
	st->chosen = -1;
	if (!slurm_conf || !*slurm_conf)
		return tp_error_set(err, TP_EINVAL, "Slurm's topology: no slurm.conf");
	struct tp__slurm_keys keys;
	int rc = tp__slurm_conf_keys(slurm_conf, &keys, err);
	if (rc)
		return rc;
	return tp__slurm_topology_find(slurm_conf, &keys, partition, slurm_version,
				       live, st, warn, err);
}

int tp__slurm_topology_find(const char *slurm_conf, struct tp__slurm_keys *keys,
			    const char *partition, unsigned slurm_version,
			    const struct tp__slurm_live *live,
			    struct tp__slurm_topology *st,
			    struct tp__warnings *warn, tp_error *err)
{
	memset(st, 0, sizeof *st);
	st->chosen = -1;
	st->keys = *keys;   /* taken over */
	memset(keys, 0, sizeof *keys);
	int rc = TP_OK;
	beside(slurm_conf, "topology.yaml", st->file, sizeof st->file);
	bool reads_yaml = !slurm_version || slurm_version >= TP__SLURM_VERSION(25, 5, 0);
	if (reads_yaml && exists(st->file)) {
		st->yaml = true;
		snprintf(st->why, sizeof st->why, "topology.yaml beside %s (Slurm "
			 "then ignores topology.conf and TopologyPlugin=)", slurm_conf);
		char *text;
		size_t len;
		rc = tp__read_file(st->file, TP__MAX_TOPOLOGY_BYTES, "topology.yaml",
				   &text, &len, err);
		if (!rc) {
			rc = tp__topology_yaml_read(text, len, st->file, &st->set,
						    warn, err);
			free(text);
		}
		/* nodes that join at run time: slurm.conf's Topology= */
		if (!rc)
			rc = tp__stopo_join(&st->set, st->file, &st->keys, warn, err);
	} else {
		const char *plugin = st->keys.topology_plugin
				     ? st->keys.topology_plugin : "topology/flat";
		enum tp__stopo_kind kind = TP__STOPO_NONE;
		const char *known = kind_of_plugin(plugin, &kind);
		beside(slurm_conf, "topology.conf", st->file, sizeof st->file);
		if (!known) {
			rc = tp_error_set(err, TP_EINVAL, "%s: TopologyPlugin=%s: not a "
					  "topology topoplace knows (tree, block, ring, "
					  "flat)", slurm_conf, plugin);
		} else if (kind == TP__STOPO_FLAT) {
			snprintf(st->why, sizeof st->why, "no topology.yaml beside %s, "
				 "and TopologyPlugin=%s%s: no network topology",
				 slurm_conf, plugin, st->keys.topology_plugin
				 ? "" : " (Slurm's default)");
			st->file[0] = '\0';
		} else {
			snprintf(st->why, sizeof st->why, "no topology.yaml beside %s; "
				 "TopologyPlugin=%s reads topology.conf", slurm_conf,
				 known);
			rc = load_conf(st, st->file, kind, err);
			/* the tree's or blocks' records, kept so that nodes join
			 * them: slurmctld loads topology.conf as the topology
			 * "default", and topology_g_add_rm_node applies
			 * Topology=default:UNIT to it as to topology.yaml's
			 * (interfaces/topology.c, 25.11 and later).  A file the
			 * reader refuses is built from its text, whose builder
			 * says why, as before; its warnings are said once. */
			struct tp__warnings w;
			memset(&w, 0, sizeof w);
			tp_error e;
			tp_error_clear(&e);
			struct tp__stopo *t = rc ? NULL : &st->set.t[0];
			if (t && !tp__topology_conf_records(st->text, st->file, &st->set,
							    t, &w, &e)) {
				t->conf_records = t->kind == TP__STOPO_TREE ||
						  t->kind == TP__STOPO_BLOCK;
				for (int i = 0; i < w.n; i++)
					tp__warn(warn, "%s", w.line[i]);
			}
			if (t && t->conf_records)
				rc = tp__stopo_join(&st->set, st->file, &st->keys, warn, err);
			else if (!rc && st->keys.nnode_topo)
				tp__warn(warn, "%s:%d: NodeName=%s Topology=%s: topoplace "
					 "reads Topology= with a tree or block topology "
					 "only; with %s those nodes stay where it puts them",
					 st->keys.node_topo[0].file,
					 st->keys.node_topo[0].line,
					 st->keys.node_topo[0].nodes,
					 st->keys.node_topo[0].topology, st->file);
		}
	}
	if (!rc)
		rc = choose(st, partition, err);
	/* slurmctld's live view: the nodes neither file places */
	if (!rc && live && live->text) {
		int which = live->topology ? tp__slurm_topology_index(st, live->topology)
					   : st->chosen;
		if (which < 0)
			tp__warn(warn, "%s: topology %s: not in %s; topoplace takes no "
				 "node's place from it", live->what ? live->what
				 : "slurmctld's topology", live->topology,
				 st->file[0] ? st->file : "Slurm's files");
		else
			rc = tp__stopo_live(&st->set, which, st->file, live, warn, err);
	}
	if (rc)
		tp__slurm_topology_free(st);
	return rc;
}
