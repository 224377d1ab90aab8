/* topoplace — topoplace.conf's loader, shared by the files of conf/ and
 * private to them: the tp_conf it fills, where each node was placed, the
 * settings seen so far, and the functions one file of conf/ gives another.
 * The kinds of network see only its first member, the reader
 * (conf/conf_kind.h).
 */
#ifndef TOPOPLACE_CONF_LOADER_H
#define TOPOPLACE_CONF_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <topoplace/conf.h>
#include "slurm/slurm_topo.h"
#include "util/util_internal.h"
#include "conf/conf_kind.h"

struct tp_conf {
	struct tp__conf_built b;    /* the machine and how it was built */
	const struct tp__conf_kind *kind;   /* its kind (conf/conf_kind.h) */
	bool has_policy;
	enum tp_policy policy;
	enum tp_metric_kind metric;
	double time_budget_ms;
	bool has_time_budget;       /* TimeBudgetMs= given (0 included) */
	int max_threads;            /* MaxThreads= (0: not set) */
	char *path;                 /* the config's name in messages */
	bool from_slurm;            /* the network is Slurm's topology */
	char *source;               /* how it was found (check-config) */
	char *used;                 /* the topology used, one line */
	/* slurmctld's live view it was loaded with (tp_conf_load_slurm_live):
	 * copies, kept for Slurm's layout of the job's tasks (tp__conf_live) */
	struct tp__slurm_live live;
	bool has_live;
	int nslurm_topo;            /* topology.yaml's topologies, by name */
	char **slurm_topo;
	int slurm_used;             /* the one used, of them (-1: none) */

	/* NodeTopology= / GpuLinks= of NodeName= lines: distinct pairs, the
	 * config lines that first named them (for check-config), and the pair
	 * of every machine node (-1: none) */
	int ntopo;
	char **topo_xml, **topo_links;
	double *topo_linkbw;        /* GpuLinkBandwidth= (GB/s; 0: not set) */
	int *topo_line;             /* ntopo x 2: NodeTopology=, GpuLinks= */
	int32_t *node_topo, node_topo_cap;
};

/* Where nodes were placed, for "already placed at FILE:LINE": a span of
 * consecutive nodes from one line, not a record per node (two million
 * nodes of a few CoordOrder= lines would otherwise write 16 MB). */
struct origin {
	struct tp__span span;  /* first, for tp__span_of */
	int32_t line;          /* of node span.first; node first + k's is
				  line + step x k (a CoordFile's lines: one
				  record, not one per node) */
	int32_t step;          /* 0 or 1 */
	int32_t src;
};

struct loader {
	struct tp__conf_reader r;   /* what the kinds see (first: they are
				       handed &ld->r) */
	char *dir;             /* directory CoordFile paths are relative to */
	tp_conf *c;
	/* Network=slurm, or no Network= and no network of the config's own:
	 * the machine is Slurm's topology */
	bool slurm_net;
	void **state;          /* each kind's, as tp__conf_kinds lists them */

	/* Settings seen so far (line 0: not given). */
	int policy_line, metric_line, budget_line, threads_line;
	int first_node_line;
	/* the time model's speeds: HopLatency=, NodeBandwidth=,
	 * IntraNodeBandwidth= (line 0: the defaults) */
	int lat_line, nodebw_line, intrabw_line, sharing_line, eager_line;
	double lat_s, nodebw, intrabw;
	enum tp__sharing sharing;  /* FlowSharing= */
	double eager_bytes;        /* EagerLimit= (-1: none) */

	struct origin *origin; /* spans, in node order */
	size_t norigins, origin_cap;
	char **srcs;           /* srcs[0] = what, then CoordFile paths */
	int nsrcs;

	struct tp__conf_tok *toks;
	int ntoks, tokcap;

	int cur_topo;          /* topology pair of the NodeName= line, or -1 */
	const tp_conf_slurm *slurm;   /* where Slurm's topology is (NULL:
					 the defaults) */
};

/* ---- messages ---- */

/* tp__conf_error of the loader's reader. */
#define lerr(ld, ...) tp__conf_error(&(ld)->r, __VA_ARGS__)

/* "WHAT: out of memory" (inline: one line, called from every file). */
static inline int oom(struct loader *ld)
{
	return tp_error_set(ld->r.err, TP_ENOMEM, "%s: out of memory", ld->r.what);
}

/* The loader a kind was handed the reader of. */
static inline struct loader *loader_of(struct tp__conf_reader *r)
{
	return (struct loader *)r;
}

/* ---- what one file of conf/ gives the others ----
 * (tp__ld_: the loader's, private to conf/; what the kinds call is
 * tp__conf_*, in conf/conf_kind.h) */

/* conf.c: the reader */
/* The state of kind k (NULL: it keeps none). */
void *tp__ld_state_of(const struct loader *ld, const struct tp__conf_kind *k);
/* Where the line of key j of kind i is kept (0: not given). */
int *tp__ld_key_line(const struct loader *ld, int i, int j);
/* Create the machine from the settings, at the first line that needs it
 * (key names it in messages). */
int tp__ld_ensure_machine(struct loader *ld, int line, const char *key);
/* A path relative to the config file's directory; NULL when out of memory. */
char *tp__ld_conf_path(const struct loader *ld, const char *val);

/* conf_settings.c: the settings and the value parsers */
/* Split s in place at sep; fills parts[0..max-1], returns the count, or
 * max + 1 when there are more. */
int tp__ld_split(char *s, char sep, char **parts, int max);
/* A file named by a key could not be read: "KEY=VALUE: PATH: problem", the
 * path left out when it is the value itself. */
int tp__ld_file_err(struct loader *ld, int line, int rc, const char *key,
		    const char *val, const char *path, const tp_error *e2);
/* A logical line without NodeName=: each key set, then its CoordFile= or
 * SwitchFile= read. */
int tp__ld_settings_line(struct loader *ld, const struct tp__conf_tok *toks,
			 int n);

/* conf_nodes.c: NodeName= lines and the placed nodes */
/* A source of nodes' places (the config, then each CoordFile): its index
 * in ld->srcs, -1 when out of memory. */
int tp__ld_add_src(struct loader *ld, const char *name);
/* Nodes first..first+count-1 were placed by line of source src (step 1:
 * one line a node). */
int tp__ld_origin_add(struct loader *ld, int32_t first, int64_t count,
		      int line, int src, int step);
/* Room for n more nodes (along_grid: a file that usually fills the grid). */
int tp__ld_nodes_reserve(struct loader *ld, int64_t n, bool along_grid);
/* Place one node; src and line name the place it was given. */
int tp__ld_place_node(struct loader *ld, const char *name, const int *coords,
		      int src, int line);
/* A logical line holding NodeName=. */
int tp__ld_node_line(struct loader *ld, const struct tp__conf_tok *toks, int n);

/* conf_coords.c */
/* CoordFile= or SwitchFile= t: its file read, its nodes placed. */
int tp__ld_load_coord_file(struct loader *ld, const struct tp__conf_tok *t);

/* conf_slurm.c: Slurm's topology as the machine */
/* Network=slurm, or no Network=: the machine is Slurm's own topology. */
int tp__ld_ensure_slurm(struct loader *ld, int line, const char *key);
/* A copy of slurmctld's live view into c (NULL: none). */
int tp__ld_keep_live(tp_conf *c, const struct tp__slurm_live *live);

/* conf_models.c: the node models */
/* NodeTopology= (and GpuLinks=, GpuLinkBandwidth= as linkbw GB/s, 0 when
 * not given) of a NodeName= line: sets ld->cur_topo. */
int tp__ld_add_topo(struct loader *ld, const struct tp__conf_tok *topo,
		    const struct tp__conf_tok *links, double linkbw);

#endif
