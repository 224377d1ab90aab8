/* topoplace — the job pipeline's private layout and the calls between its
 * files, each of which calls only those below it:
 *
 *   job.c          the pipeline's steps (tp_job_create, tp_job_run)
 *   job_report.c   tp_job_explain and the GPU totals (the layout only)
 *   job_map.c      phase 1, rank -> node          } call job_models.c
 *   job_node.c     phases 2 and 3, inside nodes   } and job_context.c
 *   job_models.c   the node models                  (the layout only)
 *   job_context.c  the request read, notes, budget, accessors
 *
 * Not installed. */
#ifndef TOPOPLACE_JOB_INTERNAL_H
#define TOPOPLACE_JOB_INTERNAL_H

#include <topoplace/job.h>

#include "slurm/slurm_conf.h"
#include "pattern/pattern_internal.h"

#define TP_JOB_MAX_CANDIDATES 20
#define TP_JOB_MAX_NOTES 16

/* A candidate as the job reports it (names and notes owned here). */
struct tp_job_cand {
	char name[24];
	bool ran, scored, chosen, ranked, congested;
	double score, rank, ms;
	double congestion;         /* max link load, when congested */
	bool predicted;            /* predicted_us holds its exchange time */
	double predicted_us;
	bool predicted_bound;      /* predicted_us is a bound (predict.h) */
	bool lower;                /* predicted_us is only its lower bound:
				      not filled, past the best's time */
	char note[128];
};

/* One distinct node model: the files it came from and the loaded model
 * (NULL when loading failed: err says why). */
struct tp_job_model {
	const char *xml, *links;   /* owned by the config or the request */
	double linkbw;             /* GpuLinkBandwidth= (0: not set) */
	tp_node *node;
	tp_error err;
};

struct tp_job {
	tp_job_request req;
	double t0;                 /* tp_job_create's start (monotonic ms) */
	double budget_ms;          /* 0: none */
	enum tp_budget_source budget_from;
	tp_conf *own_conf;         /* loaded from req.conf_path */
	const tp_conf *conf;

	/* resolved choices */
	enum tp_policy requested, policy;
	bool explicit_policy;      /* the job named it (req.policy) */
	enum tp_metric_kind metric;
	double min_gain;

	/* allocation and pattern */
	tp_alloc *alloc;
	char slurm_order[TP_ERROR_MSG_MAX];   /* how alloc's order was taken */
	char *distribution;        /* the step's -m (NULL: srun's default) */
	struct tp__slurm_layout layout;   /* until take_order */
	bool have_layout;
	enum tp__slurm_dist dist;  /* Slurm's distribution of the step */
	int plane;                 /* its plane size */
	int32_t *order;            /* Slurm's order of the hostlist's nodes,
				      until tp_job_create takes it */
	int32_t ntasks;
	int32_t node_groups;       /* > 0: Slurm's node groups of this many
				      ranks were mapped whole (job_groups.c) */
	tp_graph *cpu;             /* stencil or JSON graph */
	struct tp_job_early *early; /* the stencil graph being built while the
				      machine and the allocation load */
	tp_graph *gm;              /* GPU matrix */
	tp_graph *sum;             /* cpu + gm when both */
	const tp_graph *g;         /* the pattern phase 1 scores: sum, cpu or
				      gm; NULL without one */
	/* a training job's layout (tp_job_create_parallel): cpu is its step
	 * graph, rings in rank order until the mapping is chosen, then in
	 * NCCL's order under the map; g_block the same under Slurm's order
	 * (metrics and predicted time of the baseline; NULL: g) */
	const char *par_spec, *par_what;
	bool have_par;
	tp__parallel par;
	tp_graph *g_block;
	/* the fewest pipeline stages over two innermost groups of Slurm's
	 * order and the layout's own variants (the allocation's room), when
	 * parallel_stage timed them */
	bool have_stage_room;
	int64_t stage_room_split;

	/* result */
	enum tp_job_status status;
	char reason[256];
	int32_t *map, *block;
	struct tp_job_cand cand[TP_JOB_MAX_CANDIDATES];
	int ncand;
	bool have_geom;
	tp_geom_report geom;
	bool have_metrics;
	tp_metrics m, mblock;
	bool have_pred;            /* pred, pred_block: predict.h */
	bool on_bounds;            /* auto judged on the exchange's bounds
				      (place_choice.c): pred and pred_block
				      are the bounds too */
	tp_prediction pred, pred_block;
	double step_us[2][TP_STEP_PHASES];  /* a training job's pred and
					       pred_block phase by phase */
	char notes[TP_JOB_MAX_NOTES][TP_ERROR_MSG_MAX];
	int nnotes;
	double elapsed_ms;

	/* node models: distinct ones, and the one of each allocation node */
	struct tp_job_model *models;
	int nmodels;
	const tp_node **model_of;  /* per allocation node (NULL: none) */
	bool models_tried;         /* tp__job_load_models loaded them */
	int models_rc;             /* and failed so: models_err says why */
	tp_error models_err;
	bool models_loaded;        /* a step of the run took them */
	/* the node this runs on, with the model detected there
	   (tp_job_detect_node); local_nid -1: none */
	int32_t local_nid;
	tp_node *local_model;
	tp_error local_err;

	/* inside the nodes (TP_JOB_NODE_PLACEMENT) */
	tp_node_placement *np;     /* per allocation node */
	int32_t *task_pos;         /* task -> position among its node's tasks */
};

/* job_context.c */
/* tp_job_create's reading of the request (job.c adds the node models). */
int tp__job_open(const tp_job_request *r, const char *distribution,
		 const char *parallel, const char *what, tp_job **out,
		 tp_error *err);
void tp__job_note(tp_job *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double tp__job_remaining_ms(const tp_job *job);   /* 0: no budget */
/* Threads the placement may use: one per CPU the process may run on, held
 * to the request's threads and the config's MaxThreads=. */
int tp__job_threads(const tp_job *job);
/* How the allocation's order was taken as Slurm's ("the hostlist's order",
 * "leaf switch by leaf switch, as Slurm 26.05 lays tasks out (...)"). */
const char *tp_job_slurm_order(const tp_job *job);

/* job_models.c */
/* The model of machine node nid (loaded once per distinct file pair);
 * NULL with why filled when it has none or it does not load. */
const tp_node *tp__job_model_of(tp_job *job, int32_t nid, tp_error *why);
/* Whether the run needs node models: phase 1 ranks by the GPU links, or
 * tp_job_run places the insides of the nodes (asked for, and not policy
 * none, which leaves everything to Slurm). */
bool tp__job_ranks_by_gpus(const tp_job *job);
bool tp__job_places_nodes(const tp_job *job);
/* In tp_job_create: model_of, when the run will need it; an error kept. */
void tp__job_load_models(tp_job *job);
/* Where the run needs model_of: 0, or the error loading met. */
int tp__job_models_ready(tp_job *job, tp_error *err);

/* job_map.c: phase 1, the rank -> node mapping. */
int tp__job_map(tp_job *job, tp_error *err);

/* job_groups.c: Slurm's node groups mapped whole.  k when Slurm's order
 * (job->block) puts every node's ranks together, k >= 2 consecutive ones
 * on each, else 0; the groups' pattern placed with po (one group a node),
 * job->map each rank on its group's node, rep the groups' candidates. */
struct tp_place_report;
int32_t tp__job_slurm_groups(const tp_job *job);
int tp__job_place_groups(tp_job *job, int32_t k, const tp_place_opts *po,
			 struct tp_place_report *rep, tp_error *err);

/* job_node.c: phases 2 and 3 on every node of the mapping. */
int tp__job_place_nodes(tp_job *job, tp_error *err);

#endif
