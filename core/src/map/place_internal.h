/* topoplace — the policy layer: the part of <topoplace/place.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_PLACE_INTERNAL_H
#define TOPOPLACE_PLACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/place.h>

/* What the policy layer tried (graph and auto; geometric reports one). */
#define TP_PLACE_MAX_CANDIDATES 16

typedef struct tp_place_candidate {
	char name[24];          /* "block", "zorder", "geometric", "greedy",
				   "bipartition", "hierarchical", "modcolor",
				   "NAME+refine" */
	bool ran;               /* false: skipped (see note) */
	double score;           /* tp_metrics_score under the metric */
	double rank;            /* the rank option's score (0 without it) */
	double ms;              /* time it took */
	char note[112];         /* why skipped or failed, else what it did */
	bool has_congestion;    /* congestion holds the maximum link load */
	double congestion;      /* max_congestion_bytes (the auto rule) */
	bool has_predicted;     /* predicted_us holds its exchange time */
	double predicted_us;    /* (auto, by predicted time: predict.h) */
	bool predicted_bound;   /* ... a bound: the model stopped at its limit */
	int64_t predicted_work; /* ... its rounds x flows (time_trades.h) */
	bool judged_bound;      /* predicted_us is its exchange's bound (the
				   run judged on bounds: on_bounds) */
	bool has_lower;         /* unpredicted, lower_us its exchange's lower
				   bound: past the best's time, it could not
				   win (place_choice.c) */
	double lower_us;
} tp_place_candidate;

typedef struct tp_place_report {
	enum tp_policy policy;
	enum tp_metric_kind metric;
	int ncandidates;
	int best;               /* index of the kept candidate, -1 if none */
	tp_place_candidate cand[TP_PLACE_MAX_CANDIDATES];
	bool have_geom;         /* geometric ran: geom holds its report */
	tp_geom_report geom;
	bool budget_hit;        /* a candidate was skipped for the budget */
	bool by_time;           /* auto chose by predicted time */
	bool on_bounds;         /* ... on the exchange's bounds: too large to
				   fill within the work limit */
	double elapsed_ms;
} tp_place_report;

/* Same with the candidates report (may be NULL). */
int tp_place_ex(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		int32_t *map, tp_place_report *report, tp_error *err);
/* tp_place_ex with greedy growth, when auto builds its candidates side by
 * side, started only once the others are built, and ended before the
 * refinement begun beside it returns (for the tests: as on many cores,
 * where greedy, on one thread, ends last, and may end while that
 * refinement runs). */
int tp__place_ex_greedy_last(const tp_graph *g, const tp_alloc *a,
			     const tp_place_opts *o, int32_t *map,
			     tp_place_report *report, tp_error *err);
int tp_map_cyclic(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err);
int tp_map_random(const tp_alloc *a, int32_t ntasks, uint64_t seed,
		  int32_t *map, tp_error *err);

#endif
