/* topoplace — whole nodes trade places for the slowest messages, judged
 * by the predicted time itself (map/time_trades.h).
 *
 * Why: the lane refinement lowers the busiest lanes' loads, but the
 * exchange ends with its slowest message, and which message that is also
 * depends on when each starts and finishes.  On a 2:1 fat tree routed
 * destination mod k, two nodes of a leaf on one cable down each take 14 of
 * a port's 16 faces: no lane is over its share, yet the near messages
 * (shorter latency, larger RTT share) take the ports first and leave the
 * cable idle, then the far ones queue on it (simgrid.sh's ft2-s20: 50.1 us
 * predicted and simulated; 48.5 after 11 trades).  Only the model sees
 * that, so each trade is judged by a full prediction.
 *
 * The nodes whose messages end within CRITICAL_SHARE of the exchange's
 * end try to trade all their tasks with the PARTNERS nearest allocated
 * nodes either side of them in the machine's node order (a switch's other
 * nodes, then the next switches'), first improvement first.  A trade is kept
 * when the exchange ends no later and either ends sooner or the
 * potential, sum over nodes of (their last message's end / the exchange's
 * end)^16, drops: many nodes tie at the end, and the potential tells the
 * trades that relieve some of them from those that relieve none.
 *
 * Each try costs a prediction (O(rounds x flows x hops)), so the trades
 * stop after WORK_LIMIT units of rounds x flows (about 250 tries of a
 * 512-task halo, 2 s), before a prediction would pass the deadline, or
 * when no critical node finds a trade. */
#include <stdlib.h>
#include <string.h>

#include "map/predict_internal.h"
#include "map/time_trades.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

#define CRITICAL_SHARE 0.01
#define PARTNERS (TP__TIME_TRADES_PARTNERS / 2)   /* either side */
#define KEEP_SHARE 1e-4
#define WORK_LIMIT ((int64_t)1 << 25)

struct trades {
	const tp_graph *g;
	const tp_alloc *a;
	int32_t *map;
	int32_t *count;      /* tasks on each allocation node */
	int32_t *by_node;    /* allocation nodes in machine node order */
	int32_t *pos;        /* an allocation node's place in by_node */
	double *end;         /* last message's end per node, kept */
	double exchange;     /* the kept mapping's end, us */
	double potential;
	int64_t work;
	double last_ms;      /* the last prediction's wall time */
	double alone;        /* the first prediction's slowest message alone, us */
	int threads;
	struct try *tries;   /* one a thread: the trades tried side by side */
};

/* One trade tried on its own copy of the map: p's tasks and q's change
 * nodes, the exchange predicted. */
struct try {
	int32_t p, q;
	int32_t *map;
	double *end;         /* per node, as trades.end */
	double us, ms;
	int64_t work;
	int got;             /* predict()'s */
};

int64_t tp__time_trades_tries(int64_t work)
{
	return work > 0 ? WORK_LIMIT / work : INT64_MAX;
}

bool tp__time_trades_worth(int64_t work)
{
	return tp__time_trades_tries(work) >= 2 * PARTNERS;
}

static double potential(const struct trades *t, const double *end, double ref)
{
	double s = 0;
	for (int32_t k = 0; k < t->a->nnodes; k++) {
		double x = end[k] / ref;
		x *= x;
		x *= x;
		x *= x;
		s += x * x;
	}
	return s;
}

struct at_node {
	int32_t node, k;
};

static int cmp_at_node(const void *x, const void *y)
{
	const struct at_node *i = x, *j = y;
	if (i->node != j->node)
		return i->node < j->node ? -1 : 1;
	return (i->k > j->k) - (i->k < j->k);
}

/* Predict map into end: 1 when it was modelled in full, 0 when only
 * bounded (the trades stop), or TP_ENOMEM; its work (rounds x flows) and
 * wall time into *work and *ms. */
static int predict(const struct trades *t, const int32_t *map, double *end,
		   double *us, double *alone, int64_t *work, double *ms,
		   tp_error *err)
{
	tp_prediction p;
	double t0 = tp__now_ms();
	int rc = tp__predict_nodes(t->g, t->a, map, TP__PREDICT_MAX_WORK, &p,
				   end, alone, err);
	*ms = tp__now_ms() - t0;
	*work = 0;
	if (rc)
		return rc == TP_EINVAL ? 0 : rc;
	*work = tp__prediction_work(&p);
	*us = p.exchange_us;
	return !p.bound_only;
}

/* The tasks of nodes p and q swap nodes in map. */
static void trade(const tp_graph *g, int32_t *map, int32_t p, int32_t q)
{
	for (int32_t u = 0; u < g->ntasks; u++)
		if (map[u] == p)
			map[u] = q;
		else if (map[u] == q)
			map[u] = p;
}

/* Each node's tasks fit the other's slots, and there is something to
 * trade. */
static bool fits(const struct trades *t, int32_t p, int32_t q)
{
	return (t->count[p] || t->count[q]) && t->count[p] <= t->a->slots[q] &&
	       t->count[q] <= t->a->slots[p];
}

/* The k-th partner of p: the allocated nodes nearest in machine order,
 * alternately after and before it; -1 past either end. */
static int32_t partner(const struct trades *t, int32_t p, int k)
{
	int32_t off = k / 2 + 1;
	int32_t i = k % 2 ? t->pos[p] - off : t->pos[p] + off;
	return i >= 0 && i < t->a->nnodes ? t->by_node[i] : -1;
}

/* Past the work limit, or a deadline the next prediction (as long as the
 * last) would pass. */
static bool over(const struct trades *t, double deadline_ms)
{
	return t->work >= WORK_LIMIT ||
	       (deadline_ms > 0 && tp__now_ms() + t->last_ms >= deadline_ms);
}

static void try_run(void *arg, int32_t i)
{
	const struct trades *t = arg;
	struct try *y = &t->tries[i];
	memcpy(y->map, t->map, (size_t)t->g->ntasks * sizeof *y->map);
	trade(t->g, y->map, y->p, y->q);
	double alone;
	y->got = predict(t, y->map, y->end, &y->us, &alone, &y->work, &y->ms, NULL);
}

/* Is try y kept: the exchange ends no later, and sooner or with the
 * nodes at its end relieved? */
static bool keeps(const struct trades *t, const struct try *y)
{
	if (y->got != 1 || y->us > t->exchange * (1 + 1e-12))
		return false;
	return y->us < (1 - KEEP_SHARE) * t->exchange ||
	       potential(t, y->end, t->exchange) < (1 - KEEP_SHARE) * t->potential;
}

static void keep(struct trades *t, struct try *y)
{
	int32_t *m = t->map;
	memcpy(m, y->map, (size_t)t->g->ntasks * sizeof *m);
	int32_t c = t->count[y->p];
	t->count[y->p] = t->count[y->q];
	t->count[y->q] = c;
	double *e = t->end;
	t->end = y->end;
	y->end = e;
	t->exchange = y->us;
	t->potential = potential(t, t->end, y->us);
}

/* Node p's trades, first improvement first: 1 when one was kept, 0 when
 * none was or the work ran out (*stop: the trades end), or TP_ENOMEM.
 * Without a deadline up to `threads` partners are tried side by side and
 * judged in partner order, counted as if tried one by one: the trade kept
 * and the work spent are those of the one-by-one search, on any number of
 * threads. */
static int node_trades(struct trades *t, int32_t p, double deadline_ms, bool *stop)
{
	int side = deadline_ms > 0 ? 1 : t->threads;
	int k = 0;
	while (k < 2 * PARTNERS) {
		if (over(t, deadline_ms)) {
			*stop = true;
			return 0;
		}
		int n = 0;
		for (; k < 2 * PARTNERS && n < side; k++) {
			int32_t q = partner(t, p, k);
			if (q >= 0 && fits(t, p, q)) {
				t->tries[n].p = p;
				t->tries[n++].q = q;
			}
		}
		if (n == 0)
			return 0;
		tp__parallel_for(n, n, try_run, t);
		for (int i = 0; i < n; i++) {
			struct try *y = &t->tries[i];
			if (i > 0 && over(t, deadline_ms)) {
				*stop = true;
				return 0;
			}
			if (y->got < 0)
				return y->got;
			t->work += y->work;
			t->last_ms = y->ms;
			if (keeps(t, y)) {
				keep(t, y);
				return 1;
			}
			if (y->got == 0) {
				*stop = true;
				return 0;
			}
		}
	}
	return 0;
}

/* One pass over the critical nodes: 1 when a trade was kept, 0 when none
 * was found, or TP_ENOMEM. */
static int pass(struct trades *t, double deadline_ms, int32_t *crit)
{
	int32_t n = t->a->nnodes, nc = 0;
	for (int32_t k = 0; k < n; k++)
		if (t->end[k] >= (1 - CRITICAL_SHARE) * t->exchange)
			crit[nc++] = k;
	/* latest first; ties by index (insertion: few nodes are critical) */
	for (int32_t i = 1; i < nc; i++) {
		int32_t x = crit[i], j = i;
		while (j > 0 && t->end[crit[j - 1]] < t->end[x])
			crit[j] = crit[j - 1], j--;
		crit[j] = x;
	}
	for (int32_t i = 0; i < nc; i++) {
		bool stop = false;
		int got = node_trades(t, crit[i], deadline_ms, &stop);
		if (got || stop)
			return got;
	}
	return 0;
}

static void tries_free(struct trades *t)
{
	for (int i = 0; t->tries && i < t->threads; i++) {
		free(t->tries[i].map);
		free(t->tries[i].end);
	}
	free(t->tries);
}

static bool tries_init(struct trades *t, int threads)
{
	t->threads = threads < 1 ? 1 : threads > 2 * PARTNERS ? 2 * PARTNERS : threads;
	t->tries = calloc((size_t)t->threads, sizeof *t->tries);
	if (!t->tries)
		return false;
	for (int i = 0; i < t->threads; i++) {
		t->tries[i].map = tp__malloc_array((size_t)t->g->ntasks + 1,
						   sizeof *t->tries[i].map);
		t->tries[i].end = tp__malloc_array((size_t)t->a->nnodes + 1,
						   sizeof *t->tries[i].end);
		if (!t->tries[i].map || !t->tries[i].end)
			return false;
	}
	return true;
}

int tp__time_trades(const tp_graph *g, const tp_alloc *a, int32_t *map,
		    double deadline_ms, int threads, int64_t *trades, tp_error *err)
{
	*trades = 0;
	int32_t n = a->nnodes;
	if (n < 2 || g->ntasks < 2)
		return TP_OK;
	struct trades t = { .g = g, .a = a, .map = map };
	t.count = tp__calloc((size_t)n, sizeof *t.count);
	t.by_node = tp__malloc_array((size_t)n, sizeof *t.by_node);
	struct at_node *order = tp__malloc_array((size_t)n, sizeof *order);
	t.pos = tp__malloc_array((size_t)n, sizeof *t.pos);
	t.end = tp__malloc_array((size_t)n, sizeof *t.end);
	int32_t *crit = tp__malloc_array((size_t)n, sizeof *crit);
	int rc = TP_OK;
	if (!t.count || !t.by_node || !order || !t.pos || !t.end || !crit ||
	    !tries_init(&t, threads)) {
		rc = tp_error_set(err, TP_ENOMEM, "time trades: out of memory");
		goto out;
	}
	for (int32_t u = 0; u < g->ntasks; u++)
		t.count[map[u]]++;
	for (int32_t k = 0; k < n; k++)
		order[k] = (struct at_node){ a->node[k], k };
	qsort(order, (size_t)n, sizeof *order, cmp_at_node);
	for (int32_t i = 0; i < n; i++) {
		t.by_node[i] = order[i].k;
		t.pos[order[i].k] = i;
	}
	int got = predict(&t, map, t.end, &t.exchange, &t.alone, &t.work,
			  &t.last_ms, err);
	/* as fast as its slowest message alone, the exchange waits on no
	 * other message, and no trade relieves it (16 nodes of 1-byte
	 * messages, all latency, tried 256 trades for nothing) */
	if (got <= 0 || t.exchange <= (1 + TP__PREDICT_TIE_SHARE) * t.alone ||
	    !tp__time_trades_worth(t.work)) {
		rc = got < 0 ? got : TP_OK;
		goto out;
	}
	t.potential = potential(&t, t.end, t.exchange);
	while (!over(&t, deadline_ms)) {
		got = pass(&t, deadline_ms, crit);
		if (got < 0) {
			rc = tp_error_set(err, got, "time trades: out of memory");
			break;
		}
		if (!got)
			break;
		++*trades;
	}
out:
	free(t.count);
	free(t.by_node);
	free(order);
	free(t.pos);
	free(t.end);
	tries_free(&t);
	free(crit);
	return rc;
}
