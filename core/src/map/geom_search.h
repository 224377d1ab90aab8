/* topoplace — the geometric mapper's search, its shared state: the
 * variants, partitions and jobs of one search (geom_search.c), and the
 * functions its files share.  geom_prepare.c sets a search up, geom_score.c
 * builds partitions and scores variants, geom_search.c runs the jobs. */
#ifndef TOPOPLACE_GEOM_SEARCH_H
#define TOPOPLACE_GEOM_SEARCH_H

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "map/geom_fold.h"
#include "map/geom_part.h"
#include "map/metrics_internal.h"

#define MAX_PERMS 720
#define MAX_MACHINE_VARIANTS 512
#define WINDOW 64            /* variants a worker may run ahead */
#define TASKS_KEPT 8         /* task partitions held at once */
#define SAMPLE_EDGES 16384   /* screening sample */
#define FINALISTS 8          /* screened variants scored exactly */
#define NO_VARIANT INT32_MAX

enum { B_TODO, B_BUSY, B_DONE };            /* partition state */
enum { V_PENDING, V_CLAIMED, V_DONE };      /* variant state */
enum { J_NODES, J_TASKS, J_SCORE };         /* job kinds */

typedef struct node_part {
	side_order so;
	int state;
	int tree;             /* index into search.trees once built */
	int32_t *leaf_node;   /* allocation index of each leaf, in order */
	int32_t nleaves;
} node_part;

typedef struct task_part {
	int state;
	int users;            /* scoring jobs reading it now */
	uint64_t used_at;     /* last use, for eviction */
	int32_t *arr;         /* equal slots: task -> slot position (pos);
				 else slot position -> task (order) */
} task_part;

/* A variant's screening result. */
struct cand {
	double sample;
	int variant;
	bool done;
	bool exact;           /* also scored exactly */
};

typedef struct job {
	int kind, idx, pos;
	bool must;            /* needed by the first variant: no deadline */
	double deadline;      /* builds give up past it */
} job;

typedef struct search {
	const tp_graph *g;
	const tp_alloc *a;
	const tp_geom_opts *o;
	double t0, deadline;  /* deadline: INFINITY without a budget */
	double stop_at;       /* no new job after it: the deadline less the
				 time of one exact scoring when screening */
	double exact_ms;      /* longest exact scoring so far */
	pointset tasks, nodes;
	const int32_t *ids;   /* node pointset id -> allocation index, or NULL
				 when every node is used (the identity):
				 alloc_of */
	const int *used;      /* slots in use per allocation index: the
				 allocation's own, or own_used */
	int *own_used;        /* the closest subset's */
	int32_t nn;
	int slots_each;       /* the used nodes' common slots, or -1 */
	bool subset;          /* closest-subset selection dropped slots */
	int shifted;          /* dimensions moved by the seam shift */
	int porig[TP_MAX_DIMS], torig[TP_MAX_DIMS];  /* kept dim -> axis */
	/* variants */
	node_part *np;        /* [0] longest; then (machine perm, reflection) */
	int nnp;
	side_order *tso;      /* [0] longest; then one per task permutation */
	int ntso;
	int nperm_var;        /* 1 + (ntso - 1) * (nnp - 1) */
	tp__fold *fold;       /* variants nperm_var.. */
	int nfold;
	int32_t *cell_node;   /* folds: box cell -> node pointset id */
	/* blocked variants (nperm_var + nfold ..): the first permutation
	 * variant tried (block_base), with every node's tasks one block */
	int block[TP__BLOCK_MAX][TP_MAX_DIMS];   /* per grid axis */
	int nblock;
	int block_base;
	int64_t mstride[TP_MAX_DIMS];
	int nvar;
	bool eager;           /* tests: every node partition before any
				 scoring, variants in number order */
	bool bounded;         /* the first variant too stops at the
				 deadline (then no result, TP_ETIME) */
	int np_built;
	int32_t *order;       /* variants, most promising first */
	unsigned char *vstate;  /* per order position */
	int cursor;           /* first position not done */
	/* partitions */
	tree *trees;          /* distinct split trees (fixed capacity) */
	int ntrees;
	int predicted;        /* the equal-slots tree, or -1 */
	task_part *tp;        /* [task order * tp_stride + tree] */
	int tp_stride;
	int kept;             /* task partitions held or being built */
	uint64_t clock;
	/* releasing partitions no variant left can use */
	int *np_left;         /* per node partition: variants not yet scored */
	int *ti_left;         /* per task order: likewise */
	double *np_min, *ti_min;  /* their lowest screening score so far */
	double top[FINALISTS];    /* the lowest screening scores so far */
	int ntop;
	bool tree_mismatch;   /* a node partition missed the predicted tree */
	/* scoring */
	int32_t stride;       /* screening: every stride-th task; 1 = exact */
	struct cand *cand;    /* per variant (screening) */
	/* shared between the workers, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int inflight;
	bool first_done;      /* some variant has been scored */
	bool first_splits;    /* a node side cuts its root's last part on a
				 thread of its own (tp__part_nodes) */
	double best_score;
	int best_variant;
	int32_t *best_map;
	int scored;
	bool budget_hit;
	int err;
	bool exact_claimed;   /* a screened variant is being scored exactly */
	int next_final;       /* finalists: next to score */
	struct cand *finals;
	int nfinals;
} search;

/* Allocation index of node pointset id j. */
static inline int32_t alloc_of(const search *s, int32_t j)
{
	return s->ids ? s->ids[j] : j;
}

/* One worker's buffers. */
typedef struct wsp {
	tp__pt *buf, *tmp;    /* max(tasks, nodes) points each */
	uint64_t *hist;
	int32_t *map;         /* exact scoring */
	tp_congestion_ws *cws;
} wsp;

static inline bool out_of_time(const search *s)
{
	return tp__now_ms() > s->stop_at;
}

static inline bool is_blocked(const search *s, int v)
{
	return v >= s->nperm_var + s->nfold;
}

/* Blocked variant v's block, per grid axis. */
static inline const int *block_shape(const search *s, int v)
{
	return s->block[v - s->nperm_var - s->nfold];
}

static inline void variant_parts(const search *s, int v, int *ti, int *ni)
{
	if (is_blocked(s, v))
		v = s->block_base;
	if (v == 0) {
		*ti = *ni = 0;
		return;
	}
	*ti = 1 + (v - 1) / (s->nnp - 1);
	*ni = 1 + (v - 1) % (s->nnp - 1);
}

/* Subtree lengths by node count: a tree's parts hold few distinct counts
 * at each depth (two, when the cuts are even). */
struct len_memo {
	int n;
	int64_t nodes[256], len[256];
};

/* Under a budget, while a node side splits its root (two CPUs), the first
 * variant runs alone: next_job hands out nothing else until it is scored,
 * and its scoring writes the best mapping itself.  Under s->mu. */
static inline bool first_alone(const search *s)
{
	return !s->first_done && s->deadline < INFINITY && s->first_splits;
}

/* geom_prepare.c */
int tp__geom_check_inputs(const tp_graph *g, const tp_alloc *a,
			const tp_geom_opts *opt, tp_error *err);
/* Everything before the search proper (geom_prepare.c). */
int tp__geom_prepare(search *s, int32_t *ids);
int tp__geom_thread_count(const tp_geom_opts *opt);
int tp__geom_add_tree(search *s, tree *t);
int64_t tp__geom_tree_len(int64_t n, uint64_t w, int kparts, struct len_memo *m);
void tp__geom_fold_map(const search *s, const tp__fold *f, int32_t *map);

/* geom_score.c */
int tp__geom_build_nodes(search *s, int i, wsp *w, double deadline);
int tp__geom_build_tasks(search *s, int idx, wsp *w, double deadline);
int tp__geom_score_variant(search *s, int v, wsp *w);
int tp__geom_exact_score(search *s, int v, wsp *w, const int32_t *map,
		       const int *tc, int threads, double t0);
int *tp__geom_tc_room(const search *s, const wsp *w);
void tp__geom_variant_map(const search *s, const node_part *np, const int32_t *arr,
			int32_t *map, int *tc, bool two);
int tp__geom_wsp_scoring(const search *s, wsp *w);
void tp__geom_wsp_free(wsp *w);

#endif
