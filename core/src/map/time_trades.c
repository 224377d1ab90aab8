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

#define CRITICAL_SHARE 0.01
#define PARTNERS 8
#define KEEP_SHARE 1e-4
#define WORK_LIMIT ((int64_t)1 << 25)

struct trades {
	const tp_graph *g;
	const tp_alloc *a;
	int32_t *map;
	int32_t *count;      /* tasks on each allocation node */
	int32_t *by_node;    /* allocation nodes in machine node order */
	int32_t *pos;        /* an allocation node's place in by_node */
	double *end, *tried; /* last message's end per node: kept, tried */
	double exchange;     /* the kept mapping's end, us */
	double potential;
	int64_t work;
	double last_ms;      /* the last prediction's wall time */
	double alone;        /* the last prediction's slowest message alone, us */
};

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

/* Predict t->map into end: 1 when it was modelled in full, 0 when only
 * bounded (the trades stop), or TP_ENOMEM. */
static int predict(struct trades *t, double *end, double *us, tp_error *err)
{
	tp_prediction p;
	double t0 = tp__now_ms();
	int rc = tp__predict_nodes(t->g, t->a, t->map, TP__PREDICT_MAX_WORK, &p,
				   end, &t->alone, err);
	t->last_ms = tp__now_ms() - t0;
	if (rc)
		return rc == TP_EINVAL ? 0 : rc;
	t->work += (int64_t)(p.rounds > 0 ? p.rounds : 1) * (p.flows > 0 ? p.flows : 1);
	*us = p.exchange_us;
	return !p.bound_only;
}

static void trade(struct trades *t, int32_t p, int32_t q)
{
	for (int32_t u = 0; u < t->g->ntasks; u++)
		if (t->map[u] == p)
			t->map[u] = q;
		else if (t->map[u] == q)
			t->map[u] = p;
	int32_t c = t->count[p];
	t->count[p] = t->count[q];
	t->count[q] = c;
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
		int32_t p = crit[i];
		for (int k = 0; k < 2 * PARTNERS; k++) {
			if (over(t, deadline_ms))
				return 0;
			int32_t q = partner(t, p, k);
			if (q < 0 || !fits(t, p, q))
				continue;
			trade(t, p, q);
			double us = 0;
			int got = predict(t, t->tried, &us, NULL);
			if (got < 0)
				return got;
			if (got == 1 && us <= t->exchange * (1 + 1e-12)) {
				double pot = potential(t, t->tried, t->exchange);
				if (us < (1 - KEEP_SHARE) * t->exchange ||
				    pot < (1 - KEEP_SHARE) * t->potential) {
					double *e = t->end;
					t->end = t->tried;
					t->tried = e;
					t->exchange = us;
					t->potential = potential(t, t->end, us);
					return 1;
				}
			}
			trade(t, q, p);
			if (got == 0)
				return 0;
		}
	}
	return 0;
}

int tp__time_trades(const tp_graph *g, const tp_alloc *a, int32_t *map,
		    double deadline_ms, int64_t *trades, tp_error *err)
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
	t.tried = tp__malloc_array((size_t)n, sizeof *t.tried);
	int32_t *crit = tp__malloc_array((size_t)n, sizeof *crit);
	int rc = TP_OK;
	if (!t.count || !t.by_node || !order || !t.pos || !t.end || !t.tried || !crit) {
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
	int got = predict(&t, t.end, &t.exchange, err);
	/* as fast as its slowest message alone, the exchange waits on no
	 * other message, and no trade relieves it (16 nodes of 1-byte
	 * messages, all latency, tried 256 trades for nothing) */
	if (got <= 0 || t.exchange <= (1 + TP__PREDICT_TIE_SHARE) * t.alone) {
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
	free(t.tried);
	free(crit);
	return rc;
}
