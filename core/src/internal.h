/* topoplace — private structure layouts shared by the core's modules.
 * Not installed; front ends use the accessors in the public headers. */
#ifndef TOPOPLACE_INTERNAL_H
#define TOPOPLACE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <topoplace/topoplace.h>
#include "pattern/pattern_internal.h"

/* The machine's node names: an arena and an open-addressing index
 * (hashtab.c). */
struct tp__names {
	uint64_t *slot;        /* (hash << 32) | (index + 1), 0 = empty */
	size_t cap, n;
	char **blocks;         /* the names themselves */
	size_t nblocks;
	size_t bsize, left;    /* size of the last block, bytes left in it */
};

/* Nodes per router (hashtab.c): a dense array of counts when the machine
 * has at most TP__DENSE_ROUTERS routers (allocated at the first node, its
 * pages touched only where nodes are), else a hash of the used ones. */
#define TP__DENSE_ROUTERS ((int64_t)1 << 22)
struct tp__routers {
	int64_t nrouters;
	int32_t *dense;
	uint64_t *key;         /* router id + 1, 0 = empty */
	int32_t *val;
	size_t cap, n;
};

/* The splitmix64 finaliser: a well-mixed 64-bit hash of x. */
uint64_t tp__mix64(uint64_t x);
/* The next number of the splitmix64 generator at *state: small, seedable,
 * identical on every platform. */
static inline uint64_t tp__splitmix64(uint64_t *state)
{
	return tp__mix64(*state += 0x9e3779b97f4a7c15ULL);
}
uint32_t tp__name_hash(const char *s);
int32_t tp__names_find(const struct tp__names *t, char *const *names,
		       const char *name, uint32_t h);
int tp__names_add(struct tp__names *t, uint32_t h, int32_t idx);
char *tp__names_store(struct tp__names *t, const char *name);
void tp__names_free(struct tp__names *t);
/* A set of distinct names in the order first added (slurm.conf's nodes,
 * the nodes a topology places): the names and their index. */
struct tp__name_set {
	struct tp__names set;
	char **names;
	size_t n, cap;
};
/* Add name unless present: TP_OK, or TP_ENOMEM. */
int tp__name_set_add(struct tp__name_set *s, const char *name);
bool tp__name_set_has(const struct tp__name_set *s, const char *name);
void tp__name_set_free(struct tp__name_set *s);
/* The count of router (created with add), or NULL. */
int32_t *tp__routers_slot(struct tp__routers *t, int64_t router, bool add);
/* Call fn for every router with nodes; stops at the first non-zero. */
int tp__routers_each(const struct tp__routers *t,
		     int (*fn)(int64_t router, int32_t count, void *arg), void *arg);
/* Room for n names in the index (a hint: fewer resizes). */
int tp__names_reserve(struct tp__names *t, size_t n);
void tp__routers_free(struct tp__routers *t);

/* A numbered run of names in a hostlist (hostlist.c): prefix<v>suffix for
 * v in lo..hi, v written with at least width digits; the prefix does not
 * end with a digit and the suffix holds none, so a name's last number is
 * its v.  Pointers into the hostlist's text. */
struct tp__hostlist_run {
	const char *prefix, *suffix;
	size_t plen, slen;
	uint64_t lo, hi;
	uint32_t width;
};

/* The machine's numbered runs of names (name_runs.c): a CoordOrder= range
 * is one record instead of one index entry per node. */
struct tp__run {
	uint64_t lo, hi;
	uint32_t width;
	int32_t first;                 /* node index of lo */
};
struct tp__run_family {
	char *text;                    /* prefix then suffix */
	size_t plen, slen;
	struct tp__run *r;             /* sorted by lo */
	size_t n, cap;
	bool disjoint;                 /* no two runs overlap */
};
/* Node indices first..first+count-1. */
struct tp__span {
	int32_t first, count;
};
/* Of n records stride bytes apart, each beginning with a tp__span, in
 * increasing first and not overlapping: the one that holds node i, or NULL
 * (a binary search). */
const void *tp__span_of(const void *base, size_t n, size_t stride, int32_t i);

/* A numbered run's names by node index: nodes first..first+count-1 are
 * prefix, lo + i written in at least width digits, suffix.  Their text is
 * written only when tp_machine_node_name asks (a hostfile formats them
 * without it): two million names of a machine are 34 MB to touch. */
struct tp__run_names {
	struct tp__span span;          /* its nodes; first, for tp__span_of */
	uint64_t lo;
	uint32_t width;
	const char *text;              /* prefix then suffix: the family's */
	size_t plen, slen;
	size_t each;                   /* bytes per name in block */
	_Atomic(char *) block;         /* the names, once asked for */
};
struct tp__name_runs {
	struct tp__run_family *f;      /* sorted by (plen, slen, prefix, suffix) */
	size_t n, cap;
};

/* Register run hr whose first name is node `first`; *text receives its
 * family's prefix then suffix, kept as long as t.  TP_EINVAL when a name
 * is in a run already: *clash is that node, *clash_v its number. */
int tp__runs_add(struct tp__name_runs *t, const struct tp__hostlist_run *hr,
		 int32_t first, const char **text, int32_t *clash,
		 uint64_t *clash_v);
/* Split name into prefix name[0..*ds), its last number name[*ds..*de) = *v
 * and a suffix without digits; false when it has no number of at most 18
 * digits. */
bool tp__name_split(const char *name, size_t *ds, size_t *de, uint64_t *v);
/* Whether tp__runs_add(hr) would cost O(1) moves: hr goes after every run
 * of its family, which is disjoint, or it starts one of few families.  A
 * loader that adds runs in any order (a topology.conf's Nodes= lists) adds
 * the others name by name, so that its cost stays linear. */
bool tp__runs_appends(const struct tp__name_runs *t,
		      const struct tp__hostlist_run *hr);
/* Whether hr names name; the name of number v into buf (TP__HOSTNAME_MAX
 * bytes). */
bool tp__hostlist_run_has(const struct tp__hostlist_run *hr, const char *name);
void tp__hostlist_run_name(const struct tp__hostlist_run *hr, uint64_t v,
			   char *buf);
/* The node of a name, or -1. */
int32_t tp__runs_find(const struct tp__name_runs *t, const char *name);
/* The family of prefix<number>suffix, or -1; then the node of number v
 * written in len digits, or -1, and in *count how many numbers v, v+1, ...
 * up to upto name the nodes that follow it (v..upto all written in the
 * same number of digits); 0 with -1. */
int tp__runs_family(const struct tp__name_runs *t, const char *pre,
		    size_t plen, const char *suf, size_t slen);
int32_t tp__runs_span(const struct tp__name_runs *t, int fam, uint64_t v,
		      unsigned len, uint64_t upto, uint64_t *count);
void tp__runs_free(struct tp__name_runs *t);

struct tp_net_ops; /* network.h: one table per kind of network */

/* A machine: named nodes on routers, the routers embedded in a box of
 * integer coordinates, and the network that joins them (network.h). */
/* The fabric's speeds for the time model (map/predict.c), from
 * topoplace.conf (HopLatency=, NodeBandwidth=, IntraNodeBandwidth=); the
 * kinds' own bandwidths (LevelBandwidth=, LinkBandwidth=, ...) stay with
 * the kind (tp_net_ops.lane_bandwidth). */
struct tp__fabric {
	double node_bw;       /* bytes/s of a node's network port, each
				 direction; also every link whose own
				 bandwidth is not given */
	double hop_lat;       /* seconds per link crossed */
	double intra_bw;      /* bytes/s between two tasks of one node */
	bool node_bw_set;     /* NodeBandwidth= given (else a kind may take
				 its first level's) */
	bool rtt_sharing;     /* FlowSharing=rtt: a link's bandwidth shared
				 in inverse proportion to each message's
				 route latency (TCP, SimGrid), else equally */
};

/* The defaults: a 200 Gb/s port (HDR InfiniBand, Slingshot 11), 100 ns a
 * link (a switch hop and its cable), shared memory at 100 GB/s. */
#define TP__DEFAULT_NODE_BW 25e9
#define TP__DEFAULT_HOP_LAT 1e-7
#define TP__DEFAULT_INTRA_BW 100e9

struct tp_machine {
	int ndims;                     /* the coordinate box */
	int dims[TP_MAX_DIMS];
	bool wrap[TP_MAX_DIMS];
	int64_t stride[TP_MAX_DIMS];   /* router id = sum coords[d]*stride[d] */
	int64_t nrouters;
	int nodes_per_router;

	const struct tp_net_ops *net;  /* the kind of network */
	void *net_data;                /* its own data, owned */
	bool plain_hops;               /* distance = unweighted hop count in
					  the box (tori and meshes with every
					  hop cost 1): computed inline */
	const double *link_weight;     /* congestion weight of a byte per link
					  (1/bandwidth on trees with
					  LevelBandwidth=), in net_data; NULL:
					  every link weighs 1 */
	struct tp__fabric fab;         /* speeds for the time model */

	int32_t nnodes, cap;
	char **names;                  /* names of the nodes not in a numbered
					  run, in by_name's arena (the entries
					  of run nodes are never written) */
	struct tp__run_names *rn;      /* the numbered runs by node index */
	size_t nrn, rncap;
	pthread_mutex_t names_mu;      /* writing a run's names when first
					  asked for (tp_machine_node_name) */
	int *coords;                   /* nnodes x ndims router coordinates */
	struct tp__names by_name;      /* name -> index, but for... */
	struct tp__name_runs runs;     /* ...names placed as numbered runs */
	struct tp__routers router_use; /* router id -> nodes on it (sparse) */
};

struct tp_alloc {
	const tp_machine *m;
	int32_t nnodes;
	int32_t *node;                 /* machine node index, Slurm's order */
	int *slots;                    /* task slots per allocated node */
	int64_t total_slots;
};

struct tp_graph {
	int32_t ntasks;
	int64_t nedges;                /* undirected */
	int64_t *xadj;                 /* ntasks + 1 */
	int32_t *adjncy;               /* 2 * nedges */
	double *weights;               /* 2 * nedges, or NULL when every entry
					  weighs unit_w (read through
					  tp__graph_w) */
	/* 2 * nedges, or NULL: the bytes task u sends along its entry e in one
	 * exchange, where the pattern's messages go one way (a ring's: each
	 * member sends to the next, never back; the reverse entry holds 0).
	 * Only the time model reads it (tp__graph_w_exchange); the mapping and
	 * the metrics keep the symmetric weights, a pair's bytes. */
	double *send;
	double unit_w;
	/* tp_graph_weights' array for a graph without weights, made on the
	 * first request (the mapping never needs it) */
	_Atomic(double *) shown_w;
	double total_bytes;
	int coord_dims;                /* 0 = no coordinates */
	double *coords;                /* ntasks x coord_dims, or NULL when
					  they are the grid positions (a
					  stencil's: grid_ndims > 0) */
	/* tp_graph_coords' array for grid positions, made on the first
	 * request (the mapping reads the grid itself) */
	_Atomic(double *) shown_c;
	int64_t merged_dups;           /* input edges summed into an earlier
					  one (tp_graph_merged_duplicates) */
	int grid_ndims;                /* > 0 when built from a stencil */
	int grid[3];
	/* The weights are the sum of this many exchanges of the pattern (a
	 * trace's "exchanges"; 0 or 1: one).  The predicted time models one
	 * exchange: a traced run's totals as one message a pair would make
	 * every exchange bandwidth-bound, however small its messages. */
	double exchanges;
	/* > 0: the pattern gives no sizes (a stencil without bytes=); its
	 * weights are relative and the predicted time takes each as this many
	 * bytes */
	double size_scale;
};

/* The bytes of a message the time model assumes when a stencil gives no
 * sizes: a face of 64 x 64 doubles, what halo codes send per neighbour
 * (LULESH at -s 45, a 64^3 subdomain's 7-point face).  Bandwidth counts
 * there; 1 byte would leave latency alone, the same for every placement
 * that crosses the same number of links. */
#define TP__ASSUMED_MESSAGE_BYTES 32768.0

/* Task u's CSR entry e's bytes in one exchange of the pattern (predicted
 * time): what u sends to adjncy[e] (send[] where the pattern's messages go
 * one way; 0 is no message).  A stencil without sizes: a face neighbour's message is
 * size_scale bytes, a diagonal one's that over 64 for every further axis
 * it moves along (an edge of a 64 x 64 face is a line of 64 values, a
 * corner one value): a 27-point code sends its edges and corners, not 26
 * faces. */
static inline double tp__graph_w_exchange(const struct tp_graph *g, int32_t u,
					  int64_t e)
{
	double w = g->send ? g->send[e] : g->weights ? g->weights[e] : g->unit_w;
	if (g->size_scale > 0) {
		w *= g->size_scale;
		if (g->grid_ndims > 1 && !g->coords) {
			int64_t a = u, b = g->adjncy[e];
			int moved = 0;
			for (int d = 0; d < g->grid_ndims; d++) {
				moved += a % g->grid[d] != b % g->grid[d];
				a /= g->grid[d];
				b /= g->grid[d];
			}
			for (int k = 1; k < moved; k++)
				w /= 64;
		}
	}
	return g->exchanges > 1 ? w / g->exchanges : w;
}

/* The weight of CSR entry e.  A stencil whose pairs all carry the same bytes
 * keeps no per-entry weights: a million tasks of a 7-point stencil write and
 * read 48 MB fewer. */
static inline double tp__graph_w(const struct tp_graph *g, int64_t e)
{
	return g->weights ? g->weights[e] : g->unit_w;
}

/* The next grid position after at (x fastest) in a grid of extents ext. */
static inline void tp__grid_next(int *at, const int *ext)
{
	if (++at[0] == ext[0]) {
		at[0] = 0;
		if (++at[1] == ext[1]) {
			at[1] = 0;
			at[2]++;
		}
	}
}

/* Tasks of a stencil spec, or -1 when tp_graph_from_stencil refuses it
 * (parsing only: nothing is allocated). */
int64_t tp__stencil_ntasks(const char *spec);

/* A recognised stencil's grid positions become g's coordinates and grid
 * (pattern_detect.c), as a --stencil graph has them. */
void tp__graph_adopt_grid(tp_graph *g, const tp_stencil_shape *s);

/* The name of node into buf (TP__HOSTNAME_MAX bytes), its length: a
 * numbered run's without writing the run's names out. */
size_t tp__machine_name_put(const tp_machine *m, int32_t node, char *buf);

/* Room for n nodes (a hint for loaders that know their count; the name
 * index grows on its own, or tp__names_reserve sizes it), and
 * tp_machine_add_node() that also returns the index of the node a
 * duplicate name repeats (*dup, when not NULL). */
int tp__machine_reserve(tp_machine *m, int64_t n);
/* Add the nodes of run hr, node i of it at the coordinates coords(arg, i,
 * c) gives; all or none.  A name placed before: *dup is its node. */
int tp__machine_add_run(tp_machine *m, const struct tp__hostlist_run *hr,
			void (*coords)(void *arg, int64_t i, int *c), void *arg,
			int32_t *dup, tp_error *err);
int tp__machine_add(tp_machine *m, const char *name, const int *coords,
		    int32_t *dup, tp_error *err);

/* The seam-shifted router coordinates of the allocation's nodes (nnodes x
 * ndims) into out; full_planes as tp__seam_cuts (geom_part.h): true is
 * tp_geom_seam_shift, false Slurm's rule (zorder).  Returns the dimensions
 * shifted or TP_ENOMEM. */
int tp__seam_shift(const tp_alloc *a, int *out, bool full_planes);

/* Hop-bytes, but free to stop early and return any value above bound once
 * the sum exceeds it (used to discard losing candidates quickly). */
double tp__hop_bytes_bounded(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound);
/* The same on at most `threads` threads (0: as many as pay off); the
 * result is the same to the last bit whatever the count. */
double tp__hop_bytes_threads(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound, int threads);

/* Same from per-task router coordinates tc (ntasks x ndims of m), on at
 * most `threads` threads as above. */
double tp__hop_bytes_task_coords(const tp_graph *g, const tp_machine *m,
				 const int *tc, double bound, int threads);

/* Overflow-checked allocation helpers (NULL on overflow or failure). */
void *tp__calloc(size_t n, size_t size);
void *tp__malloc_array(size_t n, size_t size);
/* realloc with the same overflow check and huge-page advice (util.c) */
void *tp__realloc_array(void *p, size_t n, size_t size);
void *tp__huge_advise(void *p, size_t bytes);

/* ---- input: files (util.c) ----
 *
 * Every file the core reads is opened with tp__open_regular(): non-blocking
 * (a FIFO never hangs the caller), close-on-exec, no controlling terminal;
 * anything but a regular file is refused ("not a regular file (a FIFO)"),
 * and the size is bounded before and while reading.  Text files with a NUL
 * byte are refused with the line of the NUL.  The limit of each kind: */
#define TP__MAX_CONF_BYTES      ((size_t)64 << 20)   /* topoplace.conf */
#define TP__MAX_TOPOLOGY_BYTES  ((size_t)64 << 20)   /* topology.conf */
#define TP__MAX_COORDS_BYTES    ((size_t)256 << 20)  /* CoordFile= */
#define TP__MAX_GRAPH_BYTES     ((size_t)1 << 30)    /* JSON task graph (streamed) */
#define TP__MAX_MATRIX_BYTES    ((size_t)256 << 20)  /* GPU matrix, JSON or CSV */
#define TP__MAX_LINKS_BYTES     ((size_t)1 << 20)    /* gres.conf Links= / nvidia-smi topo -m */
#define TP__MAX_XML_BYTES       ((size_t)64 << 20)   /* hwloc XML of one node */
#define TP__MAX_HOSTFILE_BYTES  ((size_t)256 << 20)  /* hostfile read back */
#define TP__MAX_HOSTLIST_BYTES  ((size_t)64 << 20)   /* hostlist file (--nodes @FILE) */

/* Open path for reading as described above; *size_out is its size from
 * fstat.  kind names the file kind in the size message ("topology.conf"). */
int tp__open_regular(const char *path, size_t max_bytes, const char *kind,
		     int *fd_out, size_t *size_out, tp_error *err);
/* read(2) restarted on EINTR. */
ssize_t tp__read_some(int fd, char *buf, size_t len);
/* "PATH: N bytes, more than the 64 MiB limit for KIND" (size 0: unknown). */
int tp__too_large(const char *path, uint64_t size, size_t max_bytes,
		  const char *kind, tp_error *err);
/* Read a whole regular file of at most max_bytes into a malloc'ed,
 * NUL-terminated *buf_out (NUL bytes inside left for the caller to judge);
 * errors name the file. */
int tp__read_whole(const char *path, size_t max_bytes, const char *kind,
		   char **buf_out, size_t *len_out, tp_error *err);
/* The same for a text file: no NUL inside (the line of one is named). */
int tp__read_file(const char *path, size_t max_bytes, const char *kind,
		  char **buf_out, size_t *len_out, tp_error *err);
/* TP_EINVAL "what:LINE: NUL byte (not a text file)" when buf[0..len) holds
 * a NUL byte. */
int tp__nul_check(const char *buf, size_t len, const char *what,
		  tp_error *err);

/* A NUL-terminated malloc'ed copy of text[0..len-1]; errors (a NUL byte
 * inside, out of memory) name what. */
int tp__text_copy(const char *text, size_t len, const char *what, char **out,
		  tp_error *err);

/* ---- line-based text (lines.c) ----
 *
 * The one loop over the lines of a text: a line ends at '\n' or at the end
 * of the text ("a\n" is one line, "" none); each reader states its format. */
struct tp__line_format {
	char comment;        /* cuts the line from it on; '\0': no comments */
	/* A comment character between double quotes starts no comment
	 * (topoplace.conf's CoordFile="a#b").  The quotes are counted on each
	 * physical line, without escapes, and stay in the line; one left
	 * open runs to the line's end, for the reader to refuse. */
	bool quotes;
	/* Slurm's parser (slurm.conf, topology.conf): "\#" is a '#' that
	 * starts no comment, blanks and '\r' at a line's end are dropped,
	 * and a line ending in '\' is joined with the next, a blank between
	 * them, numbered as its first.  Off: a '\' is a character and the
	 * line is handed as it is. */
	bool slurm;
	bool blank_after;    /* with slurm: every line handed ends in a blank */
	bool skip_blank;     /* lines of blanks and '\r' only are not handed */
};
/* fn's return: non-zero stops the loop and is returned; TP__LINES_STOP
 * stops it without an error (the caller maps it to TP_OK). */
#define TP__LINES_STOP 1
typedef int (*tp__line_fn)(void *arg, char *line, long number);
/* Calls fn with every line of text (written in place: comments cut, lines
 * terminated) and its number from 1.  TP_ENOMEM "WHAT: out of memory"
 * when a joined line cannot grow. */
int tp__each_line(char *text, const struct tp__line_format *fmt,
		  const char *what, tp_error *err, tp__line_fn fn, void *arg);
/* The line at *at (NULL at the end), its length without the '\n' in
 * *len; *at moves to the next.  For a look at lines that leaves them as
 * they are. */
const char *tp__line_next(const char **at, size_t *len);

/* ---- Slurm's topology.conf-style files (util.c; slurm/topology_conf.c) ---- */
/* Sets err to "WHAT:LINE: message" ("WHAT: message" when line is 0) and
 * returns code. */
int tp__line_error(tp_error *err, const char *what, int line, int code,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int tp__line_verror(tp_error *err, const char *what, int line, int code,
		    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* tp__each_line with topology.conf's format (the comment from '#' on,
 * Slurm's continuation and escapes) over a copy of text, the line number
 * as an int.  TP_ENOMEM "WHAT: out of memory" when no copy can be made. */
int tp__each_conf_line(const char *text, const char *what, tp_error *err,
		       int (*fn)(void *arg, char *line, int number), void *arg);

/* ---- warnings (util.c) ----
 *
 * Lines that do not stop a loader: what Slurm accepts with a warning in a
 * topology.conf.  Each names its file and line; the first TP__MAX_WARNINGS
 * are kept, the rest counted. */
#define TP__MAX_WARNINGS 8
struct tp__warnings {
	int n, dropped;
	char line[TP__MAX_WARNINGS][TP_ERROR_MSG_MAX];
};
/* Adds a line (w NULL: dropped silently). */
void tp__warn(struct tp__warnings *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* tp_machine_from_topology with topoplace.conf's settings
 * (slurm/topology_conf.c reads the text, net/tree_build.c builds the tree). */
struct tp__topo_opts {
	const int *level_cost;      /* LevelCost=, nlevels values */
	int nlevels;
	int forest_cost;            /* ForestCost=; 0: the top level's cost */
	struct tp__warnings *warn;  /* NULL: warnings dropped */
	const char *cost_where;     /* "FILE:LINE" of LevelCost= for its
				       errors; NULL: the topology file */
};
int tp__machine_from_topology(tp_machine **out, const char *text,
			      const char *what, const struct tp__topo_opts *o,
			      tp_error *err);

/* ---- Slurm's own configuration (slurm_conf.c, slurm_order.c) ---- */
/* The slurm.conf keys that decide Slurm's task layout (NULL: not set),
 * read as Slurm reads them (Include followed, the last line wins). */
struct tp__slurm_part {
	char *name, *topology;       /* Topology= (NULL: the cluster default) */
	bool is_default;             /* Default=YES */
	char *file;                  /* where it is said */
	int line;
};
/* NodeName=HOSTLIST ... Topology=TOPO:UNIT[,TOPO:UNIT...] (Slurm 25.11 and
 * later): where those nodes join each named topology at run time, over
 * what topology.yaml says (slurm_join.c). */
struct tp__slurm_node_topo {
	char *nodes, *topology;      /* the two values as written */
	char *file;                  /* where it is said */
	int line;
};
struct tp__slurm_keys {
	char *topology_plugin, *select_type, *select_params;
	char *topology_param;        /* TopologyParam= (node ranks) */
	/* PartitionName= lines, in order */
	struct tp__slurm_part *part;
	int npart;
	char *default_topology;      /* of PartitionName=DEFAULT */
	/* NodeName= lines with Topology= (or NodeName=DEFAULT's), in order */
	struct tp__slurm_node_topo *node_topo;
	int nnode_topo;
	char *default_node_topology; /* of NodeName=DEFAULT */
};
/* slurm.conf's node names (Include= followed), in the order first listed:
 * TP_OK with *names filled (the caller frees it: tp__name_set_free), or an
 * error in err, also when it names no node. */
int tp__slurm_conf_nodes(const char *slurm_conf, struct tp__name_set *names,
			 tp_error *err);
int tp__slurm_conf_keys(const char *slurm_conf, struct tp__slurm_keys *k,
			tp_error *err);
void tp__slurm_keys_free(struct tp__slurm_keys *k);

/* Slurm's own order of a's nodes, as its step layout takes them: order[k]
 * is the allocation index of the k-th node.  Slurm 26.05 and later with
 * topology/tree or topology/block (unless CR_NO_DIST_TOPO_BLOCK) go leaf
 * switch by leaf switch, or block by block, in topology.conf's order;
 * every other case is the hostlist's order.  *how says which in words
 * (TP_ERROR_MSG_MAX bytes), "" for the hostlist's order with nothing to
 * say (before 26.05, no slurm.conf).  A file that cannot be read is not an error:
 * the hostlist's order, and *how says why. */
void tp__slurm_order(const char *slurm_conf, const char *partition,
		     unsigned version,
		     const tp_alloc *a, int32_t *order, char *how);
/* Slurm's layout of a step (slurm_order.c, where each rule cites Slurm's
 * code): the distribution srun takes, the node index order (the
 * hostlist's, or TopologyParam=BlockAsNodeRank/SwitchAsNodeRank's) and,
 * from 26.05, the partition topology's rank order that block follows. */
enum tp__slurm_dist { TP__DIST_DEFAULT, TP__DIST_BLOCK, TP__DIST_CYCLIC,
		      TP__DIST_PLANE, TP__DIST_ARBITRARY };
struct tp__slurm_layout {
	enum tp__slurm_dist dist;   /* asked (-m); DEFAULT: srun picks */
	int plane;                  /* plane=N */
	char flags[16];             /* after ',': Pack, NoPack ("": none) */
	bool pack;                  /* CR_PACK_NODES */
	bool ranked;                /* rank_order is the topology's */
	unsigned version;
	int32_t *index_order;       /* allocation indexes in node index order */
	int32_t *rank_order;        /* in block's order (26.05 ranks) */
	char index_how[TP_ERROR_MSG_MAX / 2];   /* " sorted by ..." or " (why
						   slurm.conf was not read)" */
	char rank_how[TP_ERROR_MSG_MAX / 2];
};
/* -m's text (NULL or "": srun's default) into its node level; what names
 * it in the one-line error. */
int tp__slurm_dist_parse(const char *text, const char *what,
			 enum tp__slurm_dist *dist, int *plane, char *flags16,
			 tp_error *err);
/* Everything but the task count: fails only on a bad distribution (a
 * slurm.conf that does not read is the hostlist's order, index_how says
 * why). */
struct tp__slurm_live;   /* slurmctld's live view (slurm_topo.h), or NULL */
/* The live view a config was loaded with (tp_conf_load_slurm_live), or
 * NULL: Slurm's layout of a job's tasks reads the same topology. */
const struct tp__slurm_live *tp__conf_live(const tp_conf *c);
int tp__slurm_layout_load(const char *slurm_conf, const char *partition,
			  unsigned version, const struct tp__slurm_live *live,
			  const char *distribution,
			  const char *what, const tp_alloc *a,
			  struct tp__slurm_layout *L, tp_error *err);
void tp__slurm_layout_free(struct tp__slurm_layout *L);
/* The distribution srun takes for ntasks on nnodes, the order the nodes go
 * in for it (*order points into L), and the words for the report. */
enum tp__slurm_dist tp__slurm_layout_pick(const struct tp__slurm_layout *L,
					  int64_t ntasks, int32_t nnodes,
					  const int32_t **order, char *how);
/* plane=N's tasks a node (_task_layout_plane, room everywhere). */
void tp__slurm_plane_counts(int32_t nn, int64_t n, int plane, int64_t *count);
/* rank -> allocation index as Slurm assigns task ids, the nodes in a's
 * order holding their slots: block, cyclic, or plane (blocks of plane).
 * A mapping, in map/slurm_layout.c. */
int tp__slurm_layout_map(enum tp__slurm_dist d, int plane, const tp_alloc *a,
			 int32_t ntasks, int32_t *map, tp_error *err);
/* a's nodes (and their slots) put in order: the k-th becomes order[k].
 * TP_EINVAL, a unchanged, when order is not a permutation. */
int tp__alloc_reorder(tp_alloc *a, const int32_t *order);

/* ---- util: Slurm hostlists (util/hostlist.c) ----
 *
 * "nid[001-004,8],login1,a[0-1]b[2-3]-ib": the expression is parsed and
 * counted without expanding it; names are then produced one at a time.  A
 * caller gives the most names it accepts (the machine's node count, or
 * TP__MAX_CONF_NAMES for a config line) and gets one line naming the source
 * when the count is larger, before any name is produced. */
#define TP__HOSTNAME_MAX 256            /* longest name + NUL */
#define TP__MAX_CONF_NAMES ((int64_t)1 << 22)   /* names in one config value */
#define TP__MAX_TREE_NODES ((int64_t)1 << 20)   /* nodes in a topology.conf */

struct tp__hostlist;

/* Parse text (NUL-terminated; read in place, so it must outlive *out);
 * what names it in messages ("NodeName=..."), bound_what says what
 * max_names is ("the machine's node count").  On success *count is the
 * number of names (duplicates included). */
int tp__hostlist_parse(const char *text, const char *what, int64_t max_names,
		       const char *bound_what, struct tp__hostlist **out,
		       int64_t *count, tp_error *err);
/* names[0..n) as one sorted Slurm hostlist ("n[01-04,09],login1"),
 * malloc'ed into *out; duplicates once (hostlist_fmt.c). */
int tp__hostlist_format(const char *const *names, size_t n, char **out);
/* The next name into buf (TP__HOSTNAME_MAX bytes): 1, or 0 at the end. */
int tp__hostlist_next(struct tp__hostlist *hl, char *buf);
/* The same, but where the next names are a whole range of at least
 * min_len names of a one-group entry with a prefix that does not end with
 * a digit and a suffix without digits, that range as *run (valid while hl
 * lives) and 2. */
int tp__hostlist_next_run(struct tp__hostlist *hl, char *buf,
			  uint64_t min_len, struct tp__hostlist_run *run);
void tp__hostlist_free(struct tp__hostlist *hl);

/* A hostlist's names resolved against a machine, in the list's order
 * (tp__machine_each_listed): fn gets node first and the count-1 nodes after
 * it, named l's names 0..count-1, or first -1 (count 1) for a name the
 * machine does not have.  A numbered range goes a span of consecutive nodes
 * at a time, its names written only if asked for (tp__listed_name, into
 * buf, TP__HOSTNAME_MAX bytes).  Stops at fn's first non-zero return. */
struct tp__listed {
	const char *name;                    /* or NULL: run's number v on */
	const struct tp__hostlist_run *run;
	uint64_t v;
};
typedef int (*tp__listed_fn)(void *arg, int32_t first, int32_t count,
			     const struct tp__listed *l);
int tp__machine_each_listed(const tp_machine *m, struct tp__hostlist *hl,
			    tp__listed_fn fn, void *arg);
const char *tp__listed_name(const struct tp__listed *l, int32_t k, char *buf);

/* A loader's list of new nodes into m, in order (tp__machine_add_list): a
 * numbered range of at least min_run names is one run of the machine
 * (coords(arg, i, c) places its node i; then ran(arg, first, count)), when
 * the run table takes it in order (tp__runs_appends); any other name, and
 * every name of a range holding a name placed before, goes to one(arg,
 * name), which applies the loader's rule for duplicates.  A run that fails
 * otherwise goes to fail(arg, rc, e), whose return is returned.  Stops at
 * the first non-zero return.  tp__add_list_named: how many names of a fresh
 * hl would go to one() at most (a size for the name index). */
#define TP__LIST_RUN_MIN 8   /* ranges shorter go name by name: the run
				table stays at most an eighth of the nodes */
struct tp__add_list {
	uint64_t min_run;
	void (*coords)(void *arg, int64_t i, int *c);
	int (*one)(void *arg, const char *name);
	int (*ran)(void *arg, int32_t first, int32_t count);
	int (*fail)(void *arg, int rc, const tp_error *e);
};
int tp__machine_add_list(tp_machine *m, struct tp__hostlist *hl,
			 const struct tp__add_list *ops, void *arg);
int tp__add_list_named(struct tp__hostlist *hl, uint64_t min_run);

/* Block networks (map/block_map.c): tasks split among the job's blocks by a
 * min-cut partition holding each block's share exactly, then among each
 * block's nodes (policy auto's and graph's candidate "blocks"). */
int tp__block_map(const tp_graph *g, const tp_alloc *a, int seed, int32_t *map,
		  tp_error *err);

/* A JSON graph of the common shape (json_graph.c): {"tasks": N, "edges":
 * [[u, v, bytes] or [u, v], ...], "directed": B}, plain non-negative
 * integers, read without json-c.  0 with *out; 1 when the text is not that
 * shape or not valid (json-c reads it then, and says what is wrong); or a
 * negative code from building the graph, as tp_graph_from_json_string. */
int tp__graph_from_json_fast(const char *text, size_t len, const char *what,
			     int64_t expect, tp_graph **out, tp_error *err);

/* tp_geom_map whose first variant also stops at the time budget: TP_ETIME
 * and no result when it cannot finish one (auto, when a candidate already
 * has a result: one partition of a million points can take longer than
 * all that is left of the budget). */
int tp__geom_map_bounded(const tp_graph *g, const tp_alloc *a,
			 const tp_geom_opts *opt, int32_t *map,
			 tp_geom_report *report, tp_error *err);

/* Hierarchical mapping (hiermap.c) with each group's tasks split over its
 * children by the tasks' coordinates instead of METIS: recursive
 * bisection along the longest extent, every child getting exactly its
 * count (policy auto's candidate "hier-coords", for tasks with
 * coordinates; no METIS needed).  TP_EINVAL without task coordinates,
 * otherwise as tp_graphmap_hierarchical. */
int tp__graphmap_hier_coords(const tp_graph *g, const tp_alloc *a,
			     const tp_graphmap_opts *o, int32_t *map,
			     tp_error *err);
/* Whether hier-coords can follow g's tasks as boxes of a stencil's grid
 * (a regular allocation then costs a pass writing the map, not a pass
 * over the tasks per level of bisection). */
bool tp__hier_coords_boxes(const tp_graph *g);
/* A split's lower cost per task and level of bisection below it, set
 * below its measured cost; a
 * split that would not fit its deadline even so is not started. */
#define TP__HIER_COORDS_NS_PER_TASK_LEVEL 15.0

/* ---- dragonfly node names (dragonfly.c): NodeNameFormat= ----
 * "x{group-1000}c{switch}s{*}b{*}n{*}" (see dragonfly.c). */
struct tp__dfly_format;
int tp__dfly_format_parse(const char *fmt, struct tp__dfly_format **out,
			  tp_error *err);
void tp__dfly_format_free(struct tp__dfly_format *f);
/* -1 when name matches (group and switch numbers, offsets applied, into
 * *group and *sw), else the position of the first character that does
 * not. */
int tp__dfly_format_match(const struct tp__dfly_format *f, const char *name,
			  long long *group, long long *sw);

/* A JSON integer, or a JSON number with no fractional part (json_graph.c). */
struct json_object;
bool tp__json_int(struct json_object *o, int64_t *v);

/* Monotonic clock in milliseconds. */
double tp__now_ms(void);
/* Grow *p (n elements of size bytes used, *cap allocated) to hold one more:
 * the capacity doubles from 16.  0, or -1 when memory runs out. */
int tp__grow(void **p, size_t n, size_t *cap, size_t size);
/* CPUs this process may run on: its affinity mask (a Slurm step is bound
 * to the job's CPUs, fewer than the node's), else the online count. */
int tp__cpus(void);
/* The most threads one placement starts (the search's and the
 * refinement's; a site may set fewer: MaxThreads=). */
#define TP__MAX_THREADS 256
/* fn(arg, i) for every i in 0..n-1, on up to `threads` threads (this one
 * among them), each taking the next i as it is free; returns when all are
 * done and every thread it started has ended.  fn must not depend on which
 * thread runs which i. */
void tp__parallel_for(int32_t n, int threads, void (*fn)(void *arg, int32_t i),
		      void *arg);

/* ---- core/node: one node's inside (node.c and node_*.c, gpusel*.c) ---- */

enum tp_vkind { TP_V_PACKAGE, TP_V_HOSTBRIDGE, TP_V_BRIDGE, TP_V_GPU,
		TP_V_NVSWITCH, TP_V_NIC, TP_V_PORT,
		TP_V_GPUDEV };   /* a partitioned GPU's device: its partitions
				    (TP_V_GPU) hang below it */

struct tp_node_vertex {
	int kind;
	int parent;         /* vertex index, -1 for sockets and the NVSwitch */
	int uplink;         /* link to the parent, -1 when none */
	int depth;          /* 0 for sockets */
	int fanout;         /* PCI children (bridges: > 1 means a switch) */
	char name[40];      /* "GPU0", "switch 0000:01:00.0", "socket1" */
};

struct tp_node_link {
	int a, b;           /* vertices */
	double bw;          /* GB/s */
	char name[96];
};

struct tp_node_gpu {
	char busid[16];
	unsigned domain, bus, dev, func;
	unsigned vendor, device;   /* PCI ids */
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
	/* Partitions (node_build.c): the GPUs of one PCI device share its
	 * number (pdev, the device's place in bus order), its links and its
	 * bandwidth.  nparts 1 and osdev "" for a device that is one GPU. */
	int pdev;
	int part, nparts;   /* which partition of the device, how many */
	char osdev[16];     /* its OS device ("rsmi3", "nvml1") when nparts > 1 */
	int fvert;          /* where its fabric links end: the device's vertex
			       for a partition, else its own */
};

struct tp_node_nic {
	char busid[16];
	int package, numa;  /* logical indices, -1 unknown */
	int vertex;
	int port_link;      /* the card's link to the network */
};

struct tp_node {
	char *source;
	char *xml;                     /* the hwloc XML it was built from */
	size_t xml_len;
	int npackages, nnuma, ncores, npus;
	int *core_pkg;                 /* ncores */
	int *core_pu_off, *core_pus;   /* PU os indices of each core (CSR) */
	int ngpus;
	struct tp_node_gpu *gpu;
	int nvert, vcap;
	struct tp_node_vertex *vert;
	int nlinks, lcap, nlinks_pci;  /* links [0, nlinks_pci) are PCIe/socket */
	struct tp_node_link *link;
	int *pkg_link;                 /* npackages^2: inter-socket link or -1 */
	int *nvl;                      /* ngpus^2 fabric links: NVLink lanes
					  or xGMI links (fabric says which) */
	double *fbw;                   /* ngpus^2: GB/s of those links, each
					  way (0: none) */
	double link_rate;              /* GB/s of a link counted without its
					  speed (0: by its kind) */
	int fabric;                    /* enum tp_gpu_fabric */
	int nvswitch;                  /* NVLinks read as an NVSwitch fabric */
	int nvswitch_seen;             /* a vendor library saw the switches:
					  switched whatever the counts say */
	int *nvl_link;                 /* ngpus^2: direct fabric link id or -1 */
	int *nvs_link;                 /* ngpus: GPU-NVSwitch link id or -1 */
	int *path;                     /* ngpus^2 enum tp_gpu_path */
	double *pbw;                   /* ngpus^2 path bandwidth */
	int *route_off, *route;        /* ngpus^2 + 1 offsets; links */
	int nnics;
	struct tp_node_nic *nic;       /* network cards, PCI bus order */
	int *gpu_nic;                  /* ngpus: nearest NIC, -1 without */
	int *nic_route_off, *nic_route;   /* ngpus + 1 offsets; links from
					     the GPU to its NIC */
};

/* hwloc XML is checked and rewritten before hwloc loads it (node_xml.c):
 * *canon (malloc'ed) is a canonical hwloc 2.0 document holding only the
 * checked objects and attributes topoplace reads. */
#define TP__XML_MAX_DEPTH 64          /* nested elements */
#define TP__XML_MAX_OBJECTS 65536     /* <object> elements */
#define TP__XML_MAX_SET_WORDS 256     /* 32-bit words of a cpuset/nodeset */
/* Of an OS device's <info> elements only ROCm SMI's XGMIPeers ("rsmi1
 * rsmi5 ") is kept: peers rsmi0..rsmi63. */
#define TP__XML_MAX_RSMI 64
int tp__node_xml_check(const char *xml, size_t len, const char *what,
		       char **canon, size_t *canon_len, tp_error *err);

/* The GPU-fabric matrices of an hwloc XML (<distances2> and
 * <distances2hetero> named NVLinkBandwidth, XGMIBandwidth or XGMIHops):
 * node_xml_dist.c checks them and resolves their objects to PCI devices
 * while it still knows the objects; node_dist.c turns them into link counts
 * once the model is built (hwloc never sees them). */
#define TP__XML_MAX_DIST_OBJS 256     /* nbobjs of a kept matrix */
#define TP__XML_MAX_DIST_VALUE INT64_C(999999999999999999)   /* 18 digits */
enum tp__dist_kind { TP__DIST_NVLINK_BW, TP__DIST_XGMI_BW, TP__DIST_XGMI_HOPS,
		     TP__DIST_N };
enum tp__dist_role {
	TP__END_OTHER = 0,      /* a CPU package, a NIC, ...: not used */
	TP__END_DEVICE,         /* a PCI device (a GPU, if the model says so) */
	TP__END_NVSWITCH,
};
struct tp__dist_end {
	int role;
	unsigned dom, bus, dev, fn;   /* TP__END_DEVICE: its PCI address */
	char osdev[16];         /* the partition's OS device ("rsmi3") when
				   the device has several (node_build.c's rule:
				   tp__osdev_backend); "" otherwise */
};
/* The backend of a GPU's OS device that counts partitions: "rsmi" or
 * "nvml" followed by a number (NVML and ROCm SMI list one such device per
 * partition, one per GPU otherwise); 0 for any other name.  Returns the
 * prefix length (4). */
int tp__osdev_backend(const char *name);
struct tp__dist_matrix {
	int n;                  /* objects; 0: the XML has no such matrix */
	int line;               /* of its element, for messages */
	struct tp__dist_end *end;     /* n */
	uint64_t *val;          /* n x n, row-major as hwloc writes them */
};
struct tp__xml_dist {
	struct tp__dist_matrix m[TP__DIST_N];
};
void tp__xml_dist_free(struct tp__xml_dist *d);
/* tp__node_xml_check that also hands back the matrices (dist zeroed by the
 * caller, freed with tp__xml_dist_free even on error). */
int tp__node_xml_check_dist(const char *xml, size_t len, const char *what,
			    char **canon, size_t *canon_len,
			    struct tp__xml_dist *dist, tp_error *err);
/* GPUs a < b are the two GCDs of one MI250 / MI250X (node_build.c): 4 xGMI
 * links where nothing better says how many. */
bool tp__node_mi250_pair(const tp_node *n, int a, int b);
/* Set the node's NVLink or xGMI counts from the matrices (node_dist.c);
 * what names the XML in messages. */
int tp__node_xml_fabric(tp_node *n, const struct tp__xml_dist *d,
			const char *what, tp_error *err);

/* Recompute NVLink links, path classes, bandwidths and routes after the
 * lane counts (nvl) changed. */
int tp__node_finish(tp_node *n, tp_error *err);

#endif
