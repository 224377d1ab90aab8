/* topoplace — the predicted time of one exchange of the pattern.
 *
 * Every edge {u, v} of w bytes is two messages, u -> v and v -> u, all
 * sent at once (one halo exchange, one round of the graph).  Each message
 * is routed over the fabric as it routes (topoplace.conf(5): a fat tree's
 * parallel uplinks by destination mod k, a torus in dimension order, a
 * dragonfly minimal, Valiant or adaptive), each link's bandwidth is shared
 * max-min fairly among the messages crossing it (progressive filling,
 * recomputed whenever messages finish), and every link crossed adds its
 * latency.  Two tasks of one node exchange at the node's memory bandwidth.
 * The exchange time is the slowest rank's: the last message to arrive.
 */
#ifndef TOPOPLACE_PREDICT_H
#define TOPOPLACE_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_prediction {
	double exchange_us;   /* predicted time of one exchange */
	double bound_us;      /* a lower bound: the busiest link's bytes /
				 its bandwidth, or the slowest message
				 alone on its route, whichever is larger */
	int64_t messages;     /* messages between nodes (2 per edge) */
	int64_t flows;        /* after merging messages of one size between
				 the same two nodes (they share alike) */
	int64_t links;        /* directed links crossed by any message */
	int32_t rounds;       /* rates computed: once, then after each
				 group of messages that finish together */
	bool bound_only;      /* exchange_us is a bound: bound_us (the
				 exchange was too large for the filling
				 under the work limit), or the filling
				 reached the limit and what was left is
				 bounded from there */
} tp_prediction;

/* The predicted exchange time of map (map[t] = allocation index of task
 * t) into out.  Costs O(F x H + L log L) per round for F flows of H links
 * over L links; rounds are tens to hundreds (messages finishing within
 * 1 % of each other, or within 0.25 % of the time so far, finish
 * together).  Bounded to about 2^26 link visits: a larger exchange gets
 * its bound, and a filling that reaches the limit the bound of what is
 * left from there (bound_only, both). */
TP_EXPORT int tp_predict_exchange(const tp_graph *g, const tp_alloc *a,
				  const int32_t *map, tp_prediction *out,
				  tp_error *err);

/* A training job's step (tp_graph_from_parallel's spec, ntasks tasks;
 * 0: dp= gives them): each kind's exchange timed as a phase of its own
 * (tensor, context, expert, data parallel, pipeline), every NCCL ring in
 * its order under map, then put together as GPipe runs them: a stage's
 * layers while other stages send, the gradients' all-reduces last (with
 * one stage, or more than 32, the phases' sum).  exchange_us and bound_us are the step's, at most the
 * phases' sum; messages, flows and rounds are sums, links the most of a
 * phase. */
TP_EXPORT int tp_predict_parallel(const char *spec, const tp_alloc *a,
				  const int32_t *map, int32_t ntasks,
				  tp_prediction *out, tp_error *err);

/* The phases of a training step, in the order they start: tensor, context and expert parallel (each layer's), the gradients'
 * all-reduce (with ep > 1 the dense parameters'), the pipeline's sends
 * forward and back, the experts' gradients' all-reduce (ep > 1).
 * tp_step_phase_name(i): "tp", "cp", "ep", "dp", "pp-fwd", "pp-bwd",
 * "dp-experts"; NULL out of range. */
#define TP_STEP_PHASES 7
TP_EXPORT const char *tp_step_phase_name(int phase);

/* tp_predict_parallel with each phase's time alone (us) into phase_us[0
 * .. TP_STEP_PHASES - 1] (NULL: not wanted); out->exchange_us is at most
 * their sum. */
TP_EXPORT int tp_predict_parallel_phases(const char *spec, const tp_alloc *a,
					 const int32_t *map, int32_t ntasks,
					 tp_prediction *out, double *phase_us,
					 tp_error *err);

/* "predicted exchange 268 us -> 184 us (0.69x)": from Slurm's order (or
 * any baseline) to the result, into buf; "bound" marks a time that is a
 * bound only.  Returns what snprintf returns. */
TP_EXPORT int tp_prediction_line(char *buf, size_t len,
				 const tp_prediction *from,
				 const tp_prediction *to);

/* "step by phase: tp 196 -> 196 us, ep 420 -> 322 us, ...": a training
 * step's phases (TP_STEP_PHASES entries each) from Slurm's order (or any
 * baseline) to the result, those that take time in either, into buf.
 * Returns what snprintf returns (the line is cut to len). */
TP_EXPORT int tp_step_phases_line(char *buf, size_t len, const double *from,
				  const double *to);

#ifdef __cplusplus
}
#endif
#endif
