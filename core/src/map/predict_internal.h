/* topoplace — the time model's internals (map/predict.c). */
#ifndef TOPOPLACE_PREDICT_INTERNAL_H
#define TOPOPLACE_PREDICT_INTERNAL_H

#include <topoplace/predict.h>

/* The predicted exchange time of map, unchecked.  Past max_work lanes
 * crossed (0: no limit) only the bound (routing alone past it), or the
 * filling stops and the rest finish at their rates. */
int tp__predict(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		int64_t max_work, tp_prediction *out, tp_error *err);

/* tp__predict, and node_end[k] (a->nnodes) the latest end, in us, of the
 * messages to and from allocation node k (0: none; all of them the bound
 * when the exchange is only bounded), and *alone_us (may be NULL) the
 * slowest message alone on the fabric.  TP_EINVAL when the exchange is too
 * large to route message by message under max_work. */
int tp__predict_nodes(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int64_t max_work, tp_prediction *out, double *node_end,
		      double *alone_us, tp_error *err);

/* tp__predict_nodes with every round's rates computed from scratch, not
 * from the last round's: the same result to the last bit, slower (the
 * check of the incremental rounds). */
int tp__predict_afresh(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       int64_t max_work, tp_prediction *out, double *node_end,
		       tp_error *err);

/* The lower bound tp__predict(g, a, map, max_work) starts from, without
 * the filling (milliseconds where the filling takes hundreds): that
 * prediction's exchange_us is never below it, to the last bit (the same
 * flows, the same sums).  A candidate whose bound is past another's
 * predicted time cannot be faster, and is not filled. */
int tp__predict_lower(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int64_t max_work, double *bound_us);

/* A prediction's work: rounds x flows (at least 1 each). */
static inline int64_t tp__prediction_work(const tp_prediction *p)
{
	return (int64_t)(p->rounds > 0 ? p->rounds : 1) * (p->flows > 0 ? p->flows : 1);
}

/* us in three significant digits, without exponent for times a launch
 * sees (tp_prediction_line's). */
void tp__fmt_us(char *buf, size_t len, double us);

/* Predicted times closer than this share tie: the metric decides. */
#define TP__PREDICT_TIE_SHARE 0.005

/* Predicted times closer than this share differ by the order of the
 * arithmetic alone (the filling sums a lane's flows by class): an order
 * among candidates keeps them as they came. */
#define TP__PREDICT_ROUNDING_SHARE 1e-12

/* tp_predict_exchange's limit: about a second of work. */
#define TP__PREDICT_MAX_WORK ((int64_t)1 << 26)

/* The fabric as the model routes it (network.h's lanes): the kind's lane
 * ids, then a port in and a port out per node where the kind's routes
 * have none (tp__fabric_lanes counts both). */
int64_t tp__fabric_kind_lanes(const tp_machine *m);
int64_t tp__fabric_lanes(const tp_machine *m);
/* The lanes of a message from machine node ni to nj (ni != nj) into
 * buf[0..cap-1]: how many, or TP_EINVAL when cap is too small. */
int tp__fabric_route(const tp_machine *m, int32_t ni, int32_t nj,
		     int64_t *buf, int cap);
/* bytes/s of one lane. */
double tp__fabric_bandwidth(const tp_machine *m, int64_t lane);

/* Lanes the routing crosses at most: 2 x edges x the longest route. */
int64_t tp__predict_work(const tp_graph *g, const tp_alloc *a);

/* The launch's limits (auto's choice, a policy held to Slurm's order):
 * routing of at most TP__PREDICT_LAUNCH_WORK lanes, the filling of about
 * TP__PREDICT_ROUNDS rounds of it. */
#define TP__PREDICT_LAUNCH_WORK ((int64_t)1 << 22)
#define TP__PREDICT_ROUNDS 8
/* May a launch predict this exchange with left_ms of its budget left (0:
 * no budget)?  Within the work limit, and a quarter of what is left. */
bool tp__predict_affordable(const tp_graph *g, const tp_alloc *a,
			    double left_ms);
/* tp__predict under the launch's limits: under a budget (budget) about
 * TP__PREDICT_ROUNDS rounds of the filling, then the bound of what is
 * left; without one, the reports' TP__PREDICT_MAX_WORK. */
int tp__predict_launch(const tp_graph *g, const tp_alloc *a,
		       const int32_t *map, bool budget, tp_prediction *out);
/* The same with each task's end (us) into task_end (g->ntasks): when the
 * last message it sends or receives between nodes ends, 0 without one;
 * the bound where the exchange is not followed message by message.
 * TP_OK or TP_ENOMEM. */
int tp__predict_launch_tasks(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool budget, tp_prediction *out,
			     double *task_end);
/* The same for a candidate out of the running once its time is past
 * past_us (> 0): the filling stops as soon as its bound shows that, and
 * then *past, out->bound_only, and out's time and bound are the bound
 * reached (above past_us). */
int tp__predict_launch_past(const tp_graph *g, const tp_alloc *a,
			    const int32_t *map, bool budget, double past_us,
			    tp_prediction *out, bool *past);

/* The latency of g's collective rounds under map (us) that every
 * prediction adds to the exchange (predict.c, rounds_latency), *in_us,
 * and in one pass *off_us: each round inside a node as if it crossed the
 * fewest hops between two consecutive nodes of a (none on one node).
 * TP_OK or TP_ENOMEM. */
int tp__predict_rounds(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       double *in_us, double *off_us);

/* The hops of a route of len lanes (tp__fabric_route) that carry a
 * latency: the ports the model adds are cables only where the kind says
 * so. */
int tp__fabric_route_hops(const tp_machine *m, int len);

/* tp__predict_lower under tp__predict_launch's limits. */
int tp__predict_launch_lower(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool budget, double *bound_us);
/* tp__predict_launch without a budget as the bound alone (bound_only;
 * exchange_us and bound_us tp__predict_launch_lower's, to the last bit),
 * its messages, flows and lanes counted: where auto judged the candidates
 * on their bounds (place_choice.c).  TP_OK, TP_EINVAL or TP_ENOMEM. */
int tp__predict_launch_bound(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, tp_prediction *out);

#endif
