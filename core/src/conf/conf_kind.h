/* topoplace — what each kind of network reads from topoplace.conf.
 *
 * conf.c reads what every network shares (Network=, NodeName= lines,
 * CoordFile=, node models, policy, Slurm's topology as the source) and
 * knows no kind by name.  Each kind of network describes its part in one
 * struct tp__conf_kind, in its own file conf/kind_NAME.c: the name
 * Network= gives it, its own keys (Groups= of kind_dragonfly.c,
 * ForestCost= of kind_tree.c, ...) with the functions that parse them into
 * the kind's state, the function that builds its machine from them (by
 * the builders of net/, from the records Slurm's readers give), and its
 * account in check-config.  kinds.c lists them.  A new kind: its model in
 * net/, its descriptor in conf/kind_NAME.c, one line in kinds.c, its
 * tests.
 *
 * The keys that several kinds read stay conf.c's: the box (Dims=, Wrap=,
 * NodesPerRouter=, LinkBandwidth=, Distance=) and Slurm-style topology files
 * (TopologyFile=, LevelCost=, LevelBandwidth=, and the cables of a switch
 * tree, LevelUplinks= and UplinkRouting=: trees and the tree between
 * blocks take them).  A kind finds them parsed in
 * struct tp__conf_reader and says itself which of them do not apply to it.
 */
#ifndef TOPOPLACE_CONF_KIND_H
#define TOPOPLACE_CONF_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "net/machine_internal.h"
#include "net/network.h"
#include "net/records.h"
#include "util/util_internal.h"
#include "slurm/slurm_topo.h"

/* One Key=Value of topoplace.conf and its physical line. */
struct tp__conf_tok {
	char *key;
	char *val;
	int line;
};

/* What loading leaves in the tp_conf: the machine and what check-config
 * says about how it was built. */
struct tp__conf_built {
	tp_machine *m;
	char *topo_path;            /* the topology file read (or Slurm's) */
	char *tree_path;            /* the tree between blocks (kind_block.c) */
	bool bw_set;                /* LinkBandwidth= applied */
	int nlevel_bw;
	double level_bw[16];        /* LevelBandwidth= (congestion on trees) */
	struct tp__warnings warn;   /* what loading accepted with a warning */
};

/* The reader of one topoplace.conf as the kinds see it (conf.c's loader
 * begins with it).  Settings not given have line 0. */
struct tp__conf_reader {
	const char *what;           /* the config's name in messages */
	const char *dir;            /* relative paths start here (NULL: .) */
	tp_error *err;
	struct tp__conf_built *out;

	int net_line;               /* Network= */
	/* the box: Dims=, Wrap=, NodesPerRouter=, LinkBandwidth=, Distance= */
	int dims_line, ndims, dims[TP_MAX_DIMS];
	char *dims_text;            /* a kind without Dims= may set its own */
	int wrap_line, nwrap;
	bool wrap[TP_MAX_DIMS];
	char *wrap_text;
	int npr_line, npr;
	int bw_line, nbw;
	double bw[TP_MAX_DIMS];
	char *bw_text;
	int dist_line;
	bool dist_bw;               /* Distance=bandwidth */
	/* Slurm-style files: TopologyFile=, LevelCost=, LevelBandwidth= (its
	 * values in out->level_bw) */
	int topo_line;
	char *topo_text;
	int cost_line, ncost, cost[16];
	int lbw_line;
	/* LevelUplinks= (values, leaf switches first), UplinkRouting= */
	int uplinks_line, nuplinks, uplinks[16];
	int routing_line;
	bool adaptive;
};

/* How conf.c parses a key of a kind's own that has no set function. */
enum tp__conf_rule {
	TP__CONF_SET = 0,           /* the key's set function parses it */
	/* an integer in lo..hi into an int: "KEY=VAL: expected an integer in
	 * LO..HI" */
	TP__CONF_INT,
	/* a number > 0 (GB/s, no unit) into a double: "KEY=VAL: expected a
	 * positive number (GB/s)" */
	TP__CONF_GBS,
	/* a bandwidth in GB/s, bare or with a unit, into a double
	 * (tp__conf_bandwidth's messages) */
	TP__CONF_BANDWIDTH,
};

/* A key of one kind's own. */
struct tp__conf_key {
	const char *name;           /* "Groups" (matched without case) */
	/* offsetof(the kind's state, the int line of this key): conf.c
	 * records it, refusing a key given twice or after the first node */
	size_t line_at;
	/* Parses t->val into state (errors through tp__conf_error); NULL:
	 * conf.c parses it by rule into the field at val_at. */
	int (*set)(struct tp__conf_reader *r, void *state,
		   const struct tp__conf_tok *t);
	unsigned flags;             /* TP__CONF_KEY_* */
	enum tp__conf_rule rule;
	size_t val_at;              /* offsetof(the kind's state, the value) */
	long long lo, hi;           /* TP__CONF_INT's range */
};

/* The parts of a struct tp__conf_key that a rule parses (set NULL): the
 * value is member field of the kind's state type st. */
#define TP__CONF_INT_AT(st, field, min, max) \
	.rule = TP__CONF_INT, .val_at = offsetof(st, field), .lo = (min), .hi = (max)
#define TP__CONF_GBS_AT(st, field) \
	.rule = TP__CONF_GBS, .val_at = offsetof(st, field)
#define TP__CONF_BANDWIDTH_AT(st, field) \
	.rule = TP__CONF_BANDWIDTH, .val_at = offsetof(st, field)

/* A struct tp__conf_kind's keys (an array) and state (a type). */
#define TP__CONF_KEYS(array, state) \
	.keys = (array), .nkeys = (int)(sizeof(array) / sizeof *(array)), \
	.state_size = sizeof(state)

/* Given without Network=, the key describes a network of its own (not
 * Slurm's topology): "no Network= line". */
#define TP__CONF_KEY_OWN_NETWORK 1u
/* Also read when the network is Slurm's topology (its kind's part of it). */
#define TP__CONF_KEY_SLURM       2u

struct tp__conf_kind {
	const char *name;           /* "dragonfly": Network=NAME, messages */
	bool selectable;            /* Network=NAME accepted (else only Slurm's) */
	/* the tables of the machines it builds (NULL-terminated): a machine of
	 * Slurm's topology is described by the kind that lists its table */
	const struct tp_net_ops *const *machines;

	const struct tp__conf_key *keys;
	int nkeys;
	size_t state_size;          /* its state, zeroed at the start */
	void (*free_state)(void *state);   /* NULL: nothing inside to free */

	/* The machine from the settings, at line (0: the end of the file) of
	 * the key that needs it; the other kinds' keys are refused before. */
	int (*build)(struct tp__conf_reader *r, void *state, int line,
		     const char *key);
	/* After the last line, with the machine built (NULL: nothing). */
	int (*finish)(struct tp__conf_reader *r, void *state);
	/* The machine's box is Dims=: it is built by the first node, and a
	 * config without Dims= is refused; otherwise it is built at the end
	 * of the file at the latest. */
	bool dims_shape;

	/* Nodes that sit in its topology file: "under their switches"; NULL
	 * when topoplace.conf places them.  unplaced: "under no switch". */
	const char *nodes_sit, *unplaced;
	/* How else its nodes are placed, in messages: " or NodeNameFormat=",
	 * "CoordFile= or SwitchFile=" (NULL: "", "CoordFile="). */
	const char *more_keys, *place_files;
	bool switch_file;           /* SwitchFile= (group, switch) applies */
	/* A NodeName= line without a place: true when the kind places its
	 * names itself (place_names); NULL: never. */
	bool (*names_place)(const void *state);
	int (*place_names)(struct tp__conf_reader *r, const void *state,
			   const struct tp__conf_tok *name);

	/* Network=slurm: Slurm's topologies of this kind (TP__STOPO_NONE:
	 * none) take its TP__CONF_KEY_SLURM keys; slurm_check runs before
	 * Slurm's files are read, slurm_options fills the options of the
	 * machine of Slurm's topology of kind sk (NULL: none). */
	enum tp__stopo_kind slurm_kind;
	int (*slurm_check)(struct tp__conf_reader *r, const void *state);
	int (*slurm_options)(struct tp__conf_reader *r, void *state,
			     enum tp__stopo_kind sk, struct tp__topo_opts *to,
			     tp_block_opts *bo);

	/* check-config's account of the machine. */
	void (*describe)(const struct tp__conf_built *b, FILE *out);
};

/* ---- the kinds (kinds.c): NULL-terminated, in the order Network= lists
 * them */
extern const struct tp__conf_kind *const tp__conf_kinds[];

extern const struct tp__conf_kind tp__conf_torus, tp__conf_mesh;  /* kind_torus.c */
extern const struct tp__conf_kind tp__conf_tree;                  /* kind_tree.c */
extern const struct tp__conf_kind tp__conf_dragonfly;             /* kind_dragonfly.c */
extern const struct tp__conf_kind tp__conf_block;                 /* kind_block.c */
extern const struct tp__conf_kind tp__conf_rings;                 /* kind_rings.c */

/* The kind that built m (NULL: none lists its table). */
const struct tp__conf_kind *tp__conf_kind_of(const tp_machine *m);

/* ---- what conf.c gives the kinds ---- */

/* "WHAT:LINE: message" (file NULL: the config) into r->err; returns code. */
int tp__conf_error(struct tp__conf_reader *r, const char *file, int line,
		   int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* "WHAT: out of memory"; TP_ENOMEM. */
int tp__conf_oom(struct tp__conf_reader *r);
/* *slot = a copy of v (the old one freed); NULL (and the error set) when
 * out of memory. */
char *tp__conf_keep(struct tp__conf_reader *r, char **slot, const char *v);
/* Whole-string decimal integer in [lo, hi]: 0, -1 not a number, -2 out of
 * range. */
int tp__conf_parse_ll(const char *s, long long lo, long long hi,
		      long long *out);
/* Whole-string finite number > 0 (>= 0 when allow_zero): 0, -1 not a
 * number, -2 out of range. */
int tp__conf_parse_number(const char *s, bool allow_zero, double *out);
/* A bandwidth in GB/s, bare or with a unit (25GB/s, 200Gb/s, 200Gbps):
 * 0, -1 not a bandwidth, -2 not > 0. */
int tp__conf_parse_bandwidth(const char *s, double *gbps);
/* A time in seconds, bare (us) or with a unit (ns, us, ms, s): 0, -1 not
 * a time, -2 negative. */
int tp__conf_parse_time(const char *s, double *sec);
/* t's value as a bandwidth (GB/s), or "KEY=VAL: not a bandwidth". */
int tp__conf_bandwidth(struct tp__conf_reader *r, const struct tp__conf_tok *t,
		       double *gbps);
/* t's value as an integer in lo..hi, or "KEY=VAL: expected an integer in
 * LO..HI" with KEY key (NULL: t's). */
int tp__conf_int(struct tp__conf_reader *r, const struct tp__conf_tok *t,
		 const char *key, long long lo, long long hi, int *val);
/* The Slurm topology file key=val names (relative to the config's
 * directory; at most TP__MAX_TOPOLOGY_BYTES): its path and text, both
 * malloc'ed; errors "KEY=VAL: problem" at line. */
int tp__conf_read_topology(struct tp__conf_reader *r, int line, const char *key,
			   const char *val, char **path, char **text);
/* LevelUplinks= and UplinkRouting= (when given) on the switch tree t (a
 * tree, or the tree between blocks); errors "WHAT:LINE: ..." at the line of
 * the key that does not fit. */
int tp__conf_apply_uplinks(struct tp__conf_reader *r, tp_machine *t);
/* check-config's words for the cables up of the switch tree t: "8,4,
 * routed by destination mod k" or "not given: assumed ... (a 4:1 taper),
 * routed ..." (no newline). */
void tp__conf_describe_uplinks(const tp_machine *t, FILE *out);
/* The hostlist of a NodeName= token, counted and bounded, and room in the
 * machine for its names. */
int tp__conf_hostlist(struct tp__conf_reader *r, const struct tp__conf_tok *name,
		      struct tp__hostlist **hl, int64_t *count);
/* One node at coords, given at line of the config. */
int tp__conf_place(struct tp__conf_reader *r, const char *name,
		   const int *coords, int line);

#endif
