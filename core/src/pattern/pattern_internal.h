/* topoplace — the communication pattern: the part of <topoplace/pattern.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_PATTERN_INTERNAL_H
#define TOPOPLACE_PATTERN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <topoplace/pattern.h>

/* Build a graph from an edge list of nedges undirected edges (u[i], v[i],
 * bytes[i]).  Duplicate pairs (in either direction) are summed; self-loops are
 * rejected.  bytes must be finite and >= 0.  what names the source. */
int tp_graph_from_edges(tp_graph **out, int32_t ntasks, int64_t nedges,
			const int32_t *u, const int32_t *v,
			const double *bytes, const char *what, tp_error *err);
int32_t tp_graph_ntasks(const tp_graph *g);
/* Number of undirected edges (each counted once). */
int64_t tp_graph_nedges(const tp_graph *g);
/* Sum of the bytes of all undirected edges. */
double tp_graph_total_bytes(const tp_graph *g);
/* Neighbours of task t: *adj and *bytes point into the graph; returns count.
 * *bytes is NULL only when the graph's weights could not be shown (see
 * tp_graph_weights). */
int32_t tp_graph_neighbors(const tp_graph *g, int32_t t, const int32_t **adj,
			   const double **bytes);
/* Raw CSR arrays (xadj has ntasks+1 entries). */
const int64_t *tp_graph_xadj(const tp_graph *g);
const int32_t *tp_graph_adjncy(const tp_graph *g);
/* A stencil whose pairs all carry the same bytes stores no weights: its
 * array is made on the first call (NULL if that runs out of memory) and then
 * lives as long as the graph.  Safe to call from several threads. */
const double *tp_graph_weights(const tp_graph *g);
/* Attach (copy) coordinates; dims in 1..6. */
int tp_graph_set_coords(tp_graph *g, int dims, const double *coords,
			tp_error *err);
/* Extent of the task grid per dimension when the graph came from a stencil
 * (0 otherwise): lets callers know the pattern is a full box. */
int tp_graph_grid_dims(const tp_graph *g, int *dims);
/* tp_graph_from_json_file from a buffer; what names it in messages. */
int tp_graph_from_json_string(tp_graph **out, const char *json, size_t len,
			      const char *what, int64_t expect_ntasks,
			      tp_error *err);
/* GPU peer matrix (MAGC's GPU communication pattern): task-to-task traffic
 * between GPU buffers, as JSON
 *   { "tasks": N, "traffic": [ [i, j, bytes], ... ] }
 * or CSV lines "i,j,bytes" ('#' comments, one optional header line).  The
 * format is recognised from the content ('{' starts JSON).  Both directions
 * and repeated pairs add up; self traffic, negative bytes and tasks outside
 * 0..N-1 are errors, and so is a sum of bytes that is not finite.  If
 * expect_ntasks > 0 the task count must match (CSV files take it as their
 * task count).  Files: regular, at most 256 MiB, no NUL byte. */
int tp_graph_from_gpu_matrix_file(tp_graph **out, const char *path,
				  int64_t expect_ntasks, tp_error *err);
int tp_graph_from_gpu_matrix_string(tp_graph **out, const char *text,
				    size_t len, const char *what,
				    int64_t expect_ntasks, tp_error *err);
/* Sum of two graphs over the same tasks (MAGC phase 1: CPU + GPU traffic);
 * keeps a's coordinates.  what names b in messages. */
int tp_graph_add(const tp_graph *a, const tp_graph *b, const char *what,
		 tp_graph **out, tp_error *err);
/* ---- Recognising a stencil ---- */

/* The shape of a regular stencil graph. */
typedef struct tp_stencil_shape {
	int ndims;          /* 2 or 3 */
	int dims[3];        /* extents, x fastest (1 beyond ndims) */
	int points;         /* 5 or 9 (2-D), 7 or 27 (3-D) */
	bool wrap[3];       /* periodic axes */
	double bytes[3];    /* bytes between face neighbours along each axis */
	char spec[160];     /* the shape as a --stencil spec (diagonal
			       neighbours of 9/27 points may carry other
			       bytes than that spec would give them) */
} tp_stencil_shape;

/* Is g a regular 2-D or 3-D stencil: tasks numbered x fastest on a box of
 * at least 2 per axis, each task linked to exactly its 5 or 9 (2-D), 7 or
 * 27 (3-D) point neighbours, every axis with or without wrap, and every
 * neighbour direction carrying the same bytes all over the grid?  Returns 1
 * with *out filled when it is, 0 when it is not, or a negative code.  An
 * axis of extent 2 is reported without wrap (both read the same).  Time:
 * one pass over the edges for each shape that task 0's neighbours allow. */
int tp_graph_detect_stencil(const tp_graph *g, tp_stencil_shape *out,
				      tp_error *err);

/* Every box of n tasks with each side at least 2: the 3-D ones (x, then
 * y, ascending; z what is left), then the 2-D ones (ext[2] = 1), in that
 * fixed order, so that detection and inference answer deterministically.
 * fn is called with each (nd 3 or 2) until it returns nonzero, which is
 * returned; 0 once all are seen. */
int tp__grid_shapes_each(int32_t n, int (*fn)(void *arg, int nd,
					      const int32_t ext[3]),
			 void *arg);

/* s's shape as the head of a --stencil spec ("8x8x8:27pt:periodic=x")
 * written into s->spec; its length. */
size_t tp__stencil_spec_head(tp_stencil_shape *s);

/* Is g, not an exact stencil, a grid all the same: tasks numbered x
 * fastest on a 2-D or 3-D box where at least 90 % of the bytes travel
 * between grid neighbours (edges and corners included, each axis wrapped
 * when its seam carries a face's bytes) and every axis carries face bytes?
 * A traced halo exchange with unequal neighbours and collectives is one
 * (grid_infer.c).  Returns 1 with *out (bytes[]: a face pair's average)
 * and *near_share (the bytes between neighbours, of all) when it is. */
int tp__graph_infer_grid(const tp_graph *g, tp_stencil_shape *out,
			 double *near_share);

/* ---- A training job's parallel layout (parallel.c) ---- */

/* The group kinds, in Megatron's default order (tp varies fastest). */
enum { TP__PAR_TP, TP__PAR_CP, TP__PAR_EP, TP__PAR_DP, TP__PAR_PP,
       TP__PAR_KINDS };
extern const char *const tp__par_kind_names[TP__PAR_KINDS];
/* One unit of bytes= in bytes: the time model needs sizes, the hint gives
 * relative volumes; at 1 MiB a step's messages are bandwidth-bound, as
 * training's are. */
#define TP__PAR_UNIT_BYTES 1048576.0

typedef struct tp__parallel {
	int64_t size[TP__PAR_KINDS];     /* ranks a group of each kind */
	int order[TP__PAR_KINDS];        /* kinds, the first varies fastest */
	int64_t stride[TP__PAR_KINDS];   /* rank step of each kind */
	double bytes[TP__PAR_KINDS];     /* relative volume a rank a step */
	double micro;                    /* micro-batches a step: micro=,
					  * model='s micro or gbs, else pp
					  * (the pipeline's fill, parstep.c) */
	int64_t ntasks;                  /* the product */
} tp__parallel;

/* The kind named s[0..n-1] ("tp"), or -1. */
int tp__par_kind(const char *s, size_t n);
/* A --parallel spec (parallel.c's head comment) for ntasks tasks (0: not
 * known; then dp= is needed).  One line on bad input. */
int tp__parallel_parse(const char *spec, int64_t ntasks, tp__parallel *p,
		       tp_error *err);
/* Rank's coordinate of kind k. */
int64_t tp__parallel_coord(const tp__parallel *p, int64_t rank, int kind);
/* The layout resolved, as a spec ("tp=8,...,order=...,bytes=..."). */
int tp__parallel_describe(const tp__parallel *p, char *buf, size_t len);
/* One training step's communication graph; rings in NCCL's order under map
 * (task -> node; NULL: rank order). */
int tp__parallel_graph(const tp__parallel *p, const int32_t *map,
		       tp_graph **out, tp_error *err);
/* The same for the kinds in the mask (1 << TP__PAR_TP | ...) alone: one
 * phase of the step.  With ep > 1 the gradients' all-reduce is two, as
 * Megatron's DDP runs them: the dense parameters' over the data-parallel
 * group (cp, ep, dp varying: bit TP__PAR_DP) and the experts' over the
 * expert-data-parallel group (cp, dp varying, ep fixed: bit TP__PAR_EDP),
 * half of dp's bytes each. */
#define TP__PAR_EDP TP__PAR_KINDS
#define TP__PAR_ALL ((1u << (TP__PAR_KINDS + 1)) - 1)
/* The pipeline's sends one way only, for the step's time (parstep.c): the
 * activations forward (stage s to s + 1, bit TP__PAR_PP_FWD) or the
 * gradients back (s + 1 to s, bit TP__PAR_PP_BWD), pp's bytes each; bit
 * TP__PAR_PP has both at once, as the mapping weighs the pair. */
#define TP__PAR_PP_FWD (TP__PAR_KINDS + 1)
#define TP__PAR_PP_BWD (TP__PAR_KINDS + 2)
/* The same for a set of pipeline stages' groups alone: bit s of stages
 * for stage s (at most 64; 0: all); a PP edge belongs to its lower
 * stage.  ep_step 0: the experts' all-to-all as every pair at once (the
 * mapping's weights); d in 1 .. ep - 1: its pairwise exchange's step d
 * alone, each member sending bytes / ep to the member d after it in the
 * group (parstep.c times the steps one after another). */
int tp__parallel_graph_stages(const tp__parallel *p, const int32_t *map,
			      unsigned kinds, uint64_t stages, int64_t ep_step,
			      tp_graph **out, tp_error *err);
int tp__parallel_graph_kinds(const tp__parallel *p, const int32_t *map,
			     unsigned kinds, tp_graph **out, tp_error *err);

/* g's tasks in groups of k consecutive ones, task t in group t / k
 * (graph_groups.c): each pair of groups exchanges the sum of what their
 * tasks do, what stays inside a group is left out, a group's rounds are
 * its tasks' mean; exchanges and size_scale are g's, no coordinates.
 * TP_EINVAL when k does not divide the tasks, TP_ENOMEM. */
int tp__graph_groups(const tp_graph *g, int32_t k, tp_graph **out, tp_error *err);
/* The same for any groups of k tasks each: task t in group group_of[t]
 * (0 .. ng - 1; NULL: t / k).  TP_EINVAL when ng groups of k are not the
 * tasks or a group is out of range, TP_ENOMEM. */
int tp__graph_quotient(const tp_graph *g, const int32_t *group_of, int32_t ng,
		       int32_t k, tp_graph **out, tp_error *err);

/* The graph's heavy part (graph_heavy.c): each task's heaviest entries that
 * carry share of its bytes, heaviest first, a pair kept when either end
 * keeps it.  *out owns its xadj, adjncy and weights (tp__graph_view_free);
 * its total_bytes and exchanges are g's.  TP_OK or TP_ENOMEM. */
int tp__graph_heavy_view(const tp_graph *g, double share, tp_graph *out);
void tp__graph_view_free(tp_graph *v);

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
	/* 2 * nedges, or NULL: the messages task u sent along its entry e in
	 * collectives' rounds over the whole run (a trace's fourth element),
	 * each waiting for the one before: a recursive doubling's steps,
	 * Bruck's all-to-all's.  Their latency adds up where the exchange's
	 * messages overlap (tp__graph_rounds_exchange; predict.c). */
	double *rounds;
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

/* The rounds task u sends along entry e in one exchange of the pattern
 * (0 without rounds). */
static inline double tp__graph_rounds_exchange(const struct tp_graph *g,
					       int64_t e)
{
	if (!g->rounds)
		return 0;
	return g->exchanges > 1 ? g->rounds[e] / g->exchanges : g->rounds[e];
}

/* g without its rounds (the time model leaves them out). */
void tp__graph_drop_rounds(tp_graph *g);

/* rounds[i] added to u[i]'s entry for v[i] (i < n; an edge the graph
 * lacks is skipped: tp_graph_from_edges made every one).  TP_OK or
 * TP_ENOMEM. */
int tp__graph_add_rounds(tp_graph *g, size_t n, const int32_t *u,
			 const int32_t *v, const double *rounds);

/* The bytes of a message the time model assumes when a stencil gives no
 * sizes: a face of 64 x 64 doubles, what halo codes send per neighbour
 * (LULESH at -s 45, a 64^3 subdomain's 7-point face).  Bandwidth counts
 * there; 1 byte would leave latency alone, the same for every placement
 * that crosses the same number of links. */
#define TP__ASSUMED_MESSAGE_BYTES 32768.0

/* u's CSR entry for v (rows are sorted), or -1. */
static inline int64_t tp__graph_entry(const struct tp_graph *g, int32_t u,
				      int32_t v)
{
	int64_t lo = g->xadj[u], hi = g->xadj[u + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (g->adjncy[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->xadj[u + 1] && g->adjncy[lo] == v ? lo : -1;
}

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

/* A JSON graph of the common shape (json_graph.c): {"tasks": N, "edges":
 * [[u, v, bytes] or [u, v], ...], "directed": B}, plain non-negative
 * integers, read without json-c.  0 with *out; 1 when the text is not that
 * shape or not valid (json-c reads it then, and says what is wrong); or a
 * negative code from building the graph, as tp_graph_from_json_string. */
int tp__graph_from_json_fast(const char *text, size_t len, const char *what,
			     int64_t expect, tp_graph **out, tp_error *err);

/* A JSON integer, or a JSON number with no fractional part (json_graph.c). */
struct json_object;
bool tp__json_int(struct json_object *o, int64_t *v);

#endif
