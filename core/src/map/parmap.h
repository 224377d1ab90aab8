/* topoplace — the training job's own candidate (parmap.c): tensor-parallel
 * groups on one node, pipeline stages in one NVLink domain, DP and PP
 * peers at the same local slot; its step's predicted time (parstep.c). */
#ifndef TOPOPLACE_PARMAP_H
#define TOPOPLACE_PARMAP_H

#include <stdint.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include <topoplace/predict.h>

#include "pattern/pattern_internal.h"

/* map[rank] = allocation index, for p's p->ntasks ranks (at most the
 * allocation's slots). */
enum { TP__PARMAP_BEST_FIT, TP__PARMAP_PATH, TP__PARMAP_REPLICA,
       TP__PARMAP_FULLEST, TP__PARMAP_VARIANTS };
int tp__parallel_map(const tp__parallel *p, const tp_alloc *a, int variant,
		     int32_t *map, tp_error *err);

/* The predicted time of one step's communication under map: each kind's
 * exchange (time model, predict.h) as a phase, every ring in NCCL's order
 * under map, the phases put together as GPipe runs them (step_schedule in
 * parstep.c; with one stage or more than 32, their sum).  mode:
 * TP__PAR_PREDICT_FULL as tp_predict_exchange, _LAUNCH or _BUDGET as
 * tp__predict_launch without or with a time budget. */
enum { TP__PAR_PREDICT_FULL, TP__PAR_PREDICT_LAUNCH, TP__PAR_PREDICT_BUDGET };
/* The phases, in the order they start: tp, cp, ep, dp, the pipeline's
 * sends forward and back, the experts' dp.  phase_us (NULL or
 * TP__PAR_PHASES entries): each one's time alone.  *in_step_us (NULL: not
 * wanted): the step as if every replica's pipeline ran in step, each
 * wave of sends as long as its slowest send (pipeline_waves): the
 * schedule's step plus, each way, what the waves in step take over the
 * slowest replica's own chain of sends (an estimate: the schedule is not
 * walked again). */
#define TP__PAR_PHASES TP_STEP_PHASES
int tp__parallel_predict(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, tp_prediction *out,
			 double *phase_us, double *in_step_us, tp_error *err);

/* The gradients' all-reduce and the pipeline's backward sends of map as
 * one exchange, every stage at once (*us): a step runs them side by side
 * where the last stages' all-reduce starts while the first stages still
 * send back (GPipe's drain, 1F1B's cool-down), and tp__parallel_predict,
 * which times each phase apart, cannot see them meet.  TP_OK or the model's
 * error. */
int tp__parallel_overlap(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, double *us, tp_error *err);

/* The same with the backward pass's own exchanges in the node, the
 * context ring and the experts' all-to-all added (tp, cp, ep): while the
 * pipeline drains, the last stages' all-reduces run beside the first
 * stages' whole backward pass, not only their sends. */
int tp__parallel_drain(const tp__parallel *p, const tp_alloc *a,
		       const int32_t *map, int mode, double *us, tp_error *err);

/* A training job's order timed as a step (tp__parallel_predict) and how
 * far it is from the layout's goals (tp__parallel_splits). */
struct tp__par_time {
	tp_prediction p;
	double phase_us[TP__PAR_PHASES];
	double in_step_us;       /* tp__parallel_predict's */
	int64_t tp_split, pp_split;
};

/* *t of map, mode as tp__parallel_predict.  TP_OK or the model's error. */
int tp__parallel_time(const tp__parallel *p, const tp_alloc *a,
		      const int32_t *map, int mode, struct tp__par_time *t,
		      tp_error *err);

/* map refined by whole nodes trading their ranks (parmap_swaps.c): a
 * trade is kept when the step's predicted time (tp__parallel_predict,
 * mode) falls, or stays and its time with the replicas in step falls, no
 * more stages are split (tp__parallel_splits) and the
 * all-reduce and backward sends at once (tp__parallel_overlap) take no
 * longer; passes over every pair of allocation nodes until one keeps
 * none, at most max_tries trades tried, none after deadline_ms
 * (tp__now_ms; 0: none).  *t: map's on entry (tp__parallel_time), the
 * map returned's on return; *kept: the trades kept.  TP_ENOMEM, or the
 * model's error (map then holds the trades kept, *t may not). */
int tp__parallel_swaps(const tp__parallel *p, const tp_alloc *a, int32_t *map,
		       int mode, int64_t max_tries, double deadline_ms,
		       struct tp__par_time *t, int64_t *kept, tp_error *err);

/* How far map is from the layout's goals: *tp_split the tensor-parallel
 * groups over more than one node, *pp_split the pipeline stages over more
 * than one innermost group of the network (none without a hierarchy).
 * TP_OK, or tp__hpaths_collect's error. */
int tp__parallel_splits(const tp__parallel *p, const tp_alloc *a,
			const int32_t *map, int64_t *tp_split,
			int64_t *pp_split);

/* map's TP groups (*groups), those over more than one node (*over_nodes)
 * and, of those, over more than one innermost group of the network
 * (*over_groups: NVLink domains of a block network, leaf switches; 0
 * without a hierarchy).  TP_OK, or tp__hpaths_collect's error. */
int tp__parallel_tp_spread(const tp__parallel *p, const tp_alloc *a,
			   const int32_t *map, int64_t *groups,
			   int64_t *over_nodes, int64_t *over_groups);

#endif
