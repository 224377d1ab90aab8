/* topoplace — one placement of a job: the whole pipeline behind every front
 * end.  The SPANK plugin and the topoplace command only translate their world
 * (Slurm's environment, argv) into a tp_job_request and a tp_job's result
 * into theirs (SLURM_HOSTFILE and CPU affinity; hostfiles, JSON, rankfiles);
 * every decision is taken here, so that both give the same bytes for the
 * same inputs.
 *
 *   request --tp_job_create--> inputs read and checked: the network, the
 *                              allocation and its task slots, the pattern
 *                              (stencil, JSON graph, GPU traffic matrix, any
 *                              combination), the policy, metric and budget
 *           --tp_job_run-----> rank -> node (phase 1: candidates scored,
 *                              never worse than Slurm's block order), then
 *                              optionally each task's cores and GPUs inside
 *                              its node (phases 2 and 3), metrics
 *           --tp_job_place_node-> phases 2 and 3 on one node only (what a
 *                              Slurm task computes for itself)
 *
 * Which policy: the job's (request.policy), else the site's override
 * (request.default_policy: the plugstack policy=), else topoplace.conf's
 * DefaultPolicy=, else auto.  The time budget follows the same order and
 * bounds everything tp_job_create and tp_job_run do.
 */
#ifndef TOPOPLACE_JOB_H
#define TOPOPLACE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/geom.h>
#include <topoplace/metrics.h>
#include <topoplace/predict.h>
#include <topoplace/node.h>
#include <topoplace/nodeplace.h>
#include <topoplace/pattern.h>
#include <topoplace/place.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file the job names: read by the core from name when text is NULL
 * (with the core's limit for the kind of file, as every reader of the
 * library); otherwise text[0..len-1] is its contents (a front end that must
 * read it with someone else's privileges and its own bound) and name only
 * labels messages. */
typedef struct tp_job_input {
	const char *name;
	const char *text;
	size_t len;
} tp_job_input;

/* request.flags */
#define TP_JOB_NODE_PLACEMENT 0x1u  /* tp_job_run also places every task
				       inside its node (needs node models) */
#define TP_JOB_METRICS 0x2u         /* tp_job_run scores the result and
				       Slurm's block order in full */
#define TP_JOB_REQUIRE_MODELS 0x4u  /* a node without a model is an error
				       (otherwise nodes without one get no
				       placement inside) */
#define TP_JOB_LAUNCH_BUDGET 0x8u   /* the placement runs inside a launch
				       (srun, slurmstepd): where neither the
				       request, its default nor the config's
				       TimeBudgetMs= gives a time budget, it
				       gets TP_JOB_LAUNCH_BUDGET_MS, not none */
/* A launch waits for its placement: auto's full search may take seconds
 * at machine scale. */
#define TP_JOB_LAUNCH_BUDGET_MS 1000.0

/* Default bounds (request fields left 0). */
#define TP_JOB_DEFAULT_MAX_TASKS (1 << 24)          /* 16,777,216 */
/* auto keeps Slurm's order unless a candidate beats it by this share. */
#define TP_JOB_DEFAULT_MIN_GAIN 0.005

typedef struct tp_job_request {
	/* The network and the site's defaults: a loaded config, or its path
	 * (then loading it counts against the time budget). */
	const tp_conf *conf;
	const char *conf_path;

	/* The allocation.  nodes: Slurm hostlist in Slurm's order (NULL: the
	 * job is only used for tp_job_place_node).  slots: the task slots of
	 * every node, a count ("4") or Slurm's SLURM_TASKS_PER_NODE form
	 * ("2(x3),1"); ntasks (0: every slot) may not exceed them.  Without
	 * slots, ntasks are spread over the nodes as Slurm does for -n
	 * (floor/ceil), no node above its capacity (same forms, NULL: no
	 * limit). */
	const char *nodes;
	const char *slots;
	const char *capacity;
	int64_t ntasks;
	int64_t max_tasks;           /* 0: TP_JOB_DEFAULT_MAX_TASKS */
	/* Slurm's own layout of the tasks, the baseline of every score: the
	 * release that lays the tasks out (TP_SLURM_VERSION(26, 5, 0); 0:
	 * unknown) and its slurm.conf.  srun's distribution (cyclic for no
	 * more tasks than nodes, else block; tp_job_create_step for -m) goes
	 * over the nodes in the hostlist's order (TopologyParam=
	 * BlockAsNodeRank or SwitchAsNodeRank: sorted by block or leaf
	 * switch); from 26.05 on, block goes in the partition topology's rank
	 * order (leaf switch, block, ring position, torus Morton code).  A
	 * note of the job (tp_job_note) says which was taken. */
	unsigned slurm_version;
	const char *slurm_conf;
	/* The job's partition: with a config whose network is Slurm's own
	 * topology (tp_conf_load_slurm), it picks the partition's topology of
	 * topology.yaml.  NULL: slurm.conf's default partition.  slurm_conf
	 * NULL: TP_DEFAULT_SLURM_CONF for that. */
	const char *partition;

	/* The pattern: any combination (the GPU matrix is added to the
	 * stencil or graph for node placement, MAGC's phase 1).  None: only
	 * policies that need no pattern apply (cyclic, random, zorder). */
	const char *stencil;
	tp_job_input graph;
	tp_job_input gpu_matrix;

	/* Choices; NULL (or < 0 for numbers) takes the next default. */
	const char *policy;
	const char *default_policy;
	const char *metric;
	double time_budget_ms;       /* 0: no bound */
	double default_time_budget_ms;
	bool seed_set;
	uint64_t seed;               /* random policy (default 1) */
	double min_gain;             /* < 0: TP_JOB_DEFAULT_MIN_GAIN */
	/* geometric search tuning (0: defaults) */
	enum tp_geom_search search;
	int parts_per_level;
	int threads;                 /* at most this many threads (0: one per
					CPU the process may run on); the
					config's MaxThreads= holds both */

	/* Inside the nodes. */
	unsigned flags;
	const char *node_topology;   /* hwloc XML for every node instead of
					the config's NodeTopology= */
	const char *gpu_links;       /* NVLink counts for every node instead
					of the config's GpuLinks= */
	int gpus_per_task;           /* 0: each task an equal share of its
					node's GPUs */
	const char *gpu_select;      /* magc (default), local-rank, closest */

	/* What the front end calls each input, for its messages ("--nodes",
	 * "SLURM_JOB_NODELIST"); NULL: a plain name ("nodes", "stencil"). */
	struct {
		const char *nodes, *slots, *capacity, *ntasks, *stencil,
			*policy, *metric, *time_budget;
	} what;
} tp_job_request;

/* A Slurm release as <slurm/slurm_version.h>'s SLURM_VERSION_NUM (the core
 * keeps the same formula privately, checked equal when it is built). */
#define TP_SLURM_VERSION(a, b, c) (((unsigned)(a) << 16) + ((unsigned)(b) << 8) + (unsigned)(c))

/* Every field unset: defaults everywhere. */
TP_EXPORT void tp_job_request_init(tp_job_request *r);

typedef struct tp_job tp_job;

/* Read and check every input of the request.  The request's strings must
 * stay valid until tp_job_destroy, except the input texts (graph.text,
 * gpu_matrix.text), which are parsed here and not kept.  Errors are one line naming the input and the problem
 * ("--stencil 4xfoo: ...", "graph.json:3: ...", "SLURM_NTASKS ...").  The
 * policy is resolved here: tp_job_policy() tells which. */
TP_EXPORT int tp_job_create(const tp_job_request *r, tp_job **out,
			    tp_error *err);
/* The same for a step with srun's -m / SLURM_DISTRIBUTION (block, cyclic,
 * plane=N, arbitrary, with :SOCKET[:CORE] and ,Pack or ,NoPack as srun
 * takes them; NULL or "": srun's default, cyclic for no more tasks than
 * nodes, block otherwise): Slurm's order, the baseline, is that
 * distribution's layout.  A text srun refuses is TP_EINVAL. */
TP_EXPORT int tp_job_create_step(const tp_job_request *r,
				 const char *distribution, tp_job **out,
				 tp_error *err);
/* tp_job_create_step for a training job: its pattern is one step's
 * communication from its parallel layout (tp_graph_from_parallel's spec,
 * "tp=8,pp=4"; dp defaults to what the task count leaves), named what in
 * messages ("--parallel"; NULL: "parallel").  The request may give no
 * stencil and no graph.  auto adds the layout's own candidate (tensor-
 * parallel groups on a node, pipeline stages in one NVLink domain) and
 * judges every candidate by the predicted step time, each with NCCL's
 * rings under its own order.  parallel and what must stay valid until
 * tp_job_destroy.  (An argument, not a request field: a field would grow
 * tp_job_request, which callers allocate.) */
TP_EXPORT int tp_job_create_parallel(const tp_job_request *r,
				     const char *distribution,
				     const char *parallel, const char *what,
				     tp_job **out, tp_error *err);
TP_EXPORT void tp_job_destroy(tp_job *job);

/* Map the tasks onto the nodes (and inside them with
 * TP_JOB_NODE_PLACEMENT).  Fails only on bad input or out of memory; a
 * placement that should not change Slurm's order ends with status
 * TP_JOB_KEPT and says why. */
TP_EXPORT int tp_job_run(tp_job *job, tp_error *err);

enum tp_job_status {
	TP_JOB_PENDING = 0,  /* not run yet */
	TP_JOB_PLACED,       /* the mapping differs from Slurm's order */
	TP_JOB_KEPT,         /* Slurm's own order stays: see tp_job_reason */
};

TP_EXPORT enum tp_job_status tp_job_status(const tp_job *job);
/* Why Slurm's order is kept ("policy none", "no communication pattern
 * given", "no candidate beats Slurm's order by 0.5 %"), "" otherwise. */
TP_EXPORT const char *tp_job_reason(const tp_job *job);

/* ---- what was asked, resolved ---- */
TP_EXPORT enum tp_policy tp_job_requested_policy(const tp_job *job);
TP_EXPORT enum tp_policy tp_job_policy(const tp_job *job);   /* the one run */
TP_EXPORT enum tp_metric_kind tp_job_metric(const tp_job *job);
TP_EXPORT double tp_job_time_budget_ms(const tp_job *job);
/* Where the time budget came from. */
enum tp_budget_source {
	TP_BUDGET_NONE = 0,       /* none anywhere: no bound */
	TP_BUDGET_REQUEST,        /* request.time_budget_ms */
	TP_BUDGET_DEFAULT,        /* request.default_time_budget_ms (the
				     plugin: the plugstack's time_budget_ms=) */
	TP_BUDGET_CONF,           /* the config's TimeBudgetMs= */
	TP_BUDGET_LAUNCH,         /* TP_JOB_LAUNCH_BUDGET's default */
};
TP_EXPORT enum tp_budget_source tp_job_time_budget_source(const tp_job *job);

/* ---- the allocation and the mapping ---- */
TP_EXPORT const tp_conf *tp_job_conf(const tp_job *job);
TP_EXPORT const tp_alloc *tp_job_alloc(const tp_job *job);
TP_EXPORT int32_t tp_job_ntasks(const tp_job *job);
/* The pattern the mapping is scored on (CPU + GPU traffic), or NULL. */
TP_EXPORT const tp_graph *tp_job_graph(const tp_job *job);
/* map[t]: allocation index of task t's node (Slurm's block order while
 * pending or kept). */
TP_EXPORT const int32_t *tp_job_map(const tp_job *job);
/* Slurm's block order as the job scored it (the tasks fill the nodes'
 * slots in the allocation's order); NULL before tp_job_run. */
TP_EXPORT const int32_t *tp_job_block_map(const tp_job *job);
TP_EXPORT const char *tp_job_task_node(const tp_job *job, int32_t task);

/* ---- how it was chosen ---- */
typedef struct tp_job_candidate {
	const char *name;       /* "block", "block+refine", "geometric", ... */
	bool ran;               /* false: skipped or failed (note says why) */
	bool scored;            /* score holds a value (false without a
				   pattern to score by) */
	bool chosen;
	double score;           /* under the metric, lower is better */
	bool ranked;            /* rank holds the GPU-link congestion */
	double rank;            /* ms, after phases 2 and 3 (MAGC phase 1) */
	double ms;              /* time it took */
	const char *note;
	bool has_congestion;    /* congestion holds a value: the maximum link
				   load, where auto's rule needed it */
	double congestion;
} tp_job_candidate;

TP_EXPORT int tp_job_ncandidates(const tp_job *job);
TP_EXPORT int tp_job_candidate_get(const tp_job *job, int i,
				   tp_job_candidate *out);
/* The geometric search's report when it ran, else NULL. */
TP_EXPORT const tp_geom_report *tp_job_geom_report(const tp_job *job);
/* Notes worth telling the user ("graph.json: 3 duplicate edges summed",
 * "time budget of 300 ms reached: ..."), one line each. */
TP_EXPORT int tp_job_nnotes(const tp_job *job);
TP_EXPORT const char *tp_job_note(const tp_job *job, int i);
/* Wall time of tp_job_create + tp_job_run. */
TP_EXPORT double tp_job_elapsed_ms(const tp_job *job);

/* With TP_JOB_METRICS: the result's and Slurm's block order's metrics
 * (NULL otherwise, or without a pattern). */
TP_EXPORT const tp_metrics *tp_job_metrics(const tp_job *job);
TP_EXPORT const tp_metrics *tp_job_block_metrics(const tp_job *job);
/* The predicted exchange time (predict.h) of the result, or with block of
 * Slurm's order; computed with the metrics (NULL without them). */
TP_EXPORT const tp_prediction *tp_job_prediction(const tp_job *job, bool block);
/* A training job's (tp_job_create_parallel) predicted step phase by
 * phase: TP_STEP_PHASES entries (predict.h: tp_step_phase_name), the
 * result's or with block Slurm's order's, each alone: the prediction's
 * exchange_us is at most their sum.
 * NULL where tp_job_prediction is, and for other jobs. */
TP_EXPORT const double *tp_job_step_phases(const tp_job *job, bool block);
/* Every link's load (tp_metrics_link_loads) under the result (mapped) and
 * under Slurm's block order (block), either NULL when not wanted; nlinks is
 * tp_machine_link_count() of the job's machine.  Both at once on the
 * threads the job may use (a picture's two panels).  TP_EINVAL without a
 * pattern, before tp_job_run, or when nlinks is not the machine's. */
TP_EXPORT int tp_job_link_loads(const tp_job *job, double *mapped, double *block,
				int64_t nlinks, tp_error *err);

/* The candidate list as text, one line per candidate then the verdict,
 * each line starting with prefix; what --explain and --topo-report print. */
TP_EXPORT int tp_job_explain(const tp_job *job, FILE *f, const char *prefix);

/* ---- inside the nodes ---- */

/* One node's share of a step: the tasks Slurm put there and the cores and
 * GPUs the step may use there. */
typedef struct tp_node_share {
	const char *node;          /* the node's name (its model) */
	const int32_t *tasks;      /* global task ids, local-rank order */
	int32_t ntasks;
	const int *cores;          /* Slurm's core numbers (logical order);
				      NULL: every core of the model */
	int ncores;
	const int *gpus;           /* Slurm's GPU numbers (PCI bus order);
				      NULL: every GPU of the model */
	int ngpus;
	bool want_cpus;            /* choose cores for the tasks */
	bool want_gpus;            /* choose GPUs for the tasks */
} tp_node_share;

/* What the tasks of one node get.  A side that could not be chosen says
 * why in its note (an error when the input is wrong, otherwise a remark
 * such as "no communication pattern to place by"). */
typedef struct tp_node_placement {
	int32_t ntasks;
	char model[64];            /* the node model's file name, "" if none */
	/* CPUs: MIMS socket placement inside the share, then next to the
	 * task's GPUs */
	bool cpus_set;
	char **cpus;               /* per task CPU list ("8-11,40-43") */
	int cores_per_task;
	double mims_bytes;         /* largest inter-socket message */
	bool cpu_error;
	char cpu_note[TP_ERROR_MSG_MAX];
	/* GPUs: MAGC with a GPU matrix, else local-rank order */
	bool gpus_set;
	int gpus_per_task;         /* the most any task got */
	int *gpu_start;            /* ntasks + 1 offsets into gpus */
	int *gpus;                 /* Slurm GPU numbers, task by task */
	enum tp_gpusel_algo gpu_algo;   /* the candidate kept */
	tp_gpusel_cost cost, local_rank_cost, closest_cost;  /* with a model */
	bool gpu_error;
	bool gpu_error_jobwide;    /* the same error on every node */
	char gpu_note[TP_ERROR_MSG_MAX];
} tp_node_placement;

/* Phases 2 and 3 on one node.  Deterministic: every task of the node that
 * calls it gets the same answer.  Fails only when out of memory; input
 * problems land in the notes. */
TP_EXPORT int tp_job_place_node(tp_job *job, const tp_node_share *share,
				tp_node_placement *out, tp_error *err);
TP_EXPORT void tp_node_placement_free(tp_node_placement *p);

/* The named node is the machine this runs on: its model is the config's
 * NodeTopology= (or the request's node_topology) when it has one, else the
 * one found on the node itself by tp_node_detect(cache_dir, 0), read from
 * the cache when it is valid and trusted.  Loaded once, like
 * tp_job_preload_node. */
TP_EXPORT int tp_job_detect_node(tp_job *job, const char *node,
				 const char *cache_dir, tp_error *err);
/* Load (once) the model of the named node, so that processes forked later
 * (Slurm's tasks) find it loaded.  TP_ENOMODEL when the node has none,
 * TP_ENOENT when the configuration lacks the node. */
TP_EXPORT int tp_job_preload_node(tp_job *job, const char *node,
				  tp_error *err);

/* The node model of allocation node i once loaded (by tp_job_run with
 * TP_JOB_NODE_PLACEMENT, or a node placement), else NULL; owned by the
 * job. */
TP_EXPORT const tp_node *tp_job_node_model(const tp_job *job, int32_t i);

/* With TP_JOB_NODE_PLACEMENT, after tp_job_run: task t's CPU list (NULL
 * when its node has none) and GPUs (*count of them; NULL when none). */
TP_EXPORT const char *tp_job_task_cpus(const tp_job *job, int32_t task);
TP_EXPORT const int *tp_job_task_gpus(const tp_job *job, int32_t task,
				      int *count);
/* The placement of allocation node i, or NULL. */
TP_EXPORT const tp_node_placement *tp_job_node_placement(const tp_job *job,
							 int32_t i);
/* Largest MIMS and the GPU costs over the nodes (max congestion: the
 * largest; weighted: the sum), for reports. */
TP_EXPORT int tp_job_node_totals(const tp_job *job, double *mims_bytes,
				 tp_gpusel_cost *cost,
				 tp_gpusel_cost *local_rank,
				 tp_gpusel_cost *closest);

/* Split a GPU list among the tasks of a node in local-rank order, as
 * Slurm's own binding would: task local gets a contiguous share, or with
 * fewer GPUs than tasks, neighbouring tasks share one.  Writes the task's
 * GPUs to out (capacity cap) and returns how many, or a negative code. */
TP_EXPORT int tp_gpus_split_local_rank(const int *gpus, int ngpus, int local,
				       int ntasks, int *out, int cap);

#ifdef __cplusplus
}
#endif
#endif
