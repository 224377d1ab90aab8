/* topoplace — a training job's step under a map, as the time model
 * predicts it (tp__parallel_predict): each kind's exchange timed as a
 * phase of its own, as a pipeline runs it, then the phases put together
 * as GPipe runs them.
 *
 * Phases, not one exchange of them all: at once, the longest phase
 * (tensor parallel, inside the nodes) would hide every other and make
 * every placement look the same.  The per-layer kinds (tensor, context,
 * expert parallel) and the stage sends are timed stage by stage and
 * replica by replica, as a pipeline runs them; the gradients' all-reduces
 * (an MoE step's dense and experts', two phases) once, every stage at
 * once.  step_schedule then runs the pipeline's parts as GPipe does, so
 * that a stage's layers run while other stages send.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <topoplace/metrics.h>

#include "util/util_internal.h"
#include "map/parmap.h"
#include "map/predict_internal.h"

/* Lanes crossed by a phase filled in full under a budget: a 4,096-rank
 * step's ring phase crosses about 50,000 and takes milliseconds. */
#define TP__PAR_FULL_WORK ((int64_t)1 << 18)

static void add_phase(tp_prediction *sum, const tp_prediction *k)
{
	sum->exchange_us += k->exchange_us;
	sum->bound_us += k->bound_us;
	sum->messages += k->messages;
	sum->flows += k->flows;
	if (k->links > sum->links)
		sum->links = k->links;
	sum->rounds += k->rounds;
	sum->bound_only |= k->bound_only;
}

/* One graph's exchange under the time model (mode as tp__parallel_predict);
 * an empty graph takes no time. */
static int one_graph(const tp__parallel *p, const tp_alloc *a,
		     const int32_t *map, unsigned kinds, uint64_t stages,
		     int64_t ep_step, int mode, tp_prediction *pk,
		     double *task_end, tp_error *err)
{
	if (task_end)
		for (int64_t t = 0; t < p->ntasks; t++)
			task_end[t] = 0;
	memset(pk, 0, sizeof *pk);
	tp_graph *g = NULL;
	int rc = tp__parallel_graph_stages(p, map, kinds, stages, ep_step, &g, err);
	if (rc)
		return rc;
	if (g->nedges == 0) {
		tp_graph_destroy(g);
		return 0;
	}
	/* a phase small enough is filled in full even under a budget (the
	 * rounds' limit would leave only its bound, and bounds alike hide
	 * the difference between placements) */
	if (mode == TP__PAR_PREDICT_BUDGET &&
	    tp__predict_work(g, a) <= TP__PAR_FULL_WORK)
		mode = TP__PAR_PREDICT_LAUNCH;
	if (task_end) {
		if (tp__predict_launch_tasks(g, a, map, mode == TP__PAR_PREDICT_BUDGET,
					     pk, task_end))
			rc = tp_error_set(err, TP_ENOMEM, "parallel: the step's "
					  "time could not be predicted");
	} else if (mode == TP__PAR_PREDICT_FULL)
		rc = tp_predict_exchange(g, a, map, pk, err);
	else if (tp__predict_launch(g, a, map, mode == TP__PAR_PREDICT_BUDGET, pk))
		rc = tp_error_set(err, TP_ENOMEM, "parallel: the step's time "
				  "could not be predicted");
	tp_graph_destroy(g);
	return rc;
}

/* Each replica's end (rep[r], r the dp coordinate) from its tasks' ends;
 * returns the slowest replica's. */
static double replica_ends(const tp__parallel *p, const double *end, double *rep)
{
	double most = 0;
	for (int64_t r = 0; r < p->size[TP__PAR_DP]; r++)
		rep[r] = 0;
	for (int64_t t = 0; t < p->ntasks; t++) {
		int64_t r = tp__parallel_coord(p, t, TP__PAR_DP);
		rep[r] = fmax(rep[r], end[t]);
		most = fmax(most, end[t]);
	}
	return most;
}

/* One phase's exchange.  The experts' all-to-all alone is the pairwise
 * exchange, its ep - 1 steps one after another, as MPI libraries run a
 * large all-to-all (and train_step.c does): a step's bottleneck does not
 * wait for another's.  Timed as every pair at once, two EP groups
 * split over the same two leaves looked no slower than one, since a lone
 * node's card, sending to its three peers at once, was as slow as the
 * cable both groups share; in SMPI the groups met on that cable in two of
 * the three steps (NVL72 with a card a GPU, seed 554138 of
 * simgrid-train.sh --draw runs: the fourth stage of the Kueue-like order
 * alone, 1,007 us predicted, 1,688 simulated; the steps summed give
 * 1,679, and the other stages of it and of Slurm's order are within 1 %
 * but one inside its racks, 57 us against 61).  rep (NULL: not wanted;
 * else 2 dp doubles, end ntasks doubles): each replica's
 * share into rep[r] (r: the dp coordinate), when the last message between
 * nodes of its ranks ends, all replicas exchanging at once; a step of the
 * all-to-all ends with its slowest message.  A phase without messages
 * between nodes gives every replica the phase's time. */
static int one_phase_set(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, unsigned kinds, uint64_t stages,
			 int mode, tp_prediction *pk, double *end, double *rep,
			 tp_error *err)
{
	int64_t ep = p->size[TP__PAR_EP], dp = p->size[TP__PAR_DP];
	int64_t steps = kinds == 1u << TP__PAR_EP && ep >= 3 ? ep - 1 : 1;
	memset(pk, 0, sizeof *pk);
	for (int64_t r = 0; rep && r < dp; r++)
		rep[r] = 0;
	double step_rep_max = 0;
	for (int64_t d = 1; d <= steps; d++) {
		tp_prediction ps;
		int rc = one_graph(p, a, map, kinds, stages, steps > 1 ? d : 0, mode,
				   &ps, rep ? end : NULL, err);
		if (rc)
			return rc;
		add_phase(pk, &ps);
		if (!rep)
			continue;
		/* this step's end for each replica, added to the replica's */
		double *cur = rep + dp;
		step_rep_max = fmax(step_rep_max, replica_ends(p, end, cur));
		for (int64_t r = 0; r < dp; r++)
			rep[r] += cur[r];
	}
	if (rep && !(step_rep_max > 0))
		for (int64_t r = 0; r < dp; r++)
			rep[r] = pk->exchange_us;
	return 0;
}

/* Per-layer kind k over pp (<= TP__PAR_STAGES_TIMED) stages: M
 * micro-batches through each replica's pipeline, the first passing every
 * stage once, the other M - 1 following at the pace of its slowest stage:
 * (sum of T_s + (M - 1) max T_s) / M, T_s the replica's share of stage
 * s's exchange of the whole step's volume (one_phase_set); the step's
 * is the slowest replica's.  Replicas meet only in the gradients'
 * all-reduce, so each runs its pipeline at its own pace: the slowest
 * group of each stage taken over all replicas was high wherever those
 * groups were in different replicas (NVL72
 * seeds 188334 and 437346 of simgrid-train.sh: Slurm's order's EP 2,045
 * us, SMPI 1,586 and 1,581).  Each replica timed alone matched there
 * (1,569) but missed where two replicas' groups share a cable (554138
 * with a card a GPU, --draw runs): one_phase_set times them at once.
 * *pk: the stages' sums; its bound the old formula's, never above the
 * time. */
static int replica_pipelines(const tp__parallel *p, const tp_alloc *a,
			     const int32_t *map, int k, int mode, double M,
			     tp_prediction *pk, double *layer, tp_error *err)
{
	int64_t pp = p->size[TP__PAR_PP], dp = p->size[TP__PAR_DP];
	double *end = tp__malloc_array((size_t)p->ntasks + 1, sizeof *end);
	/* rep: per stage, per replica; then one replica's step ends */
	double *rep = tp__malloc_array((size_t)((pp + 1) * dp) + 1, sizeof *rep);
	memset(pk, 0, sizeof *pk);
	if (!end || !rep) {
		free(end);
		free(rep);
		return tp_error_set(err, TP_ENOMEM, "parallel: out of memory");
	}
	int rc = 0;
	double bsum = 0, bmost = 0;
	for (int64_t st = 0; st < pp && !rc; st++) {
		tp_prediction ps;
		rc = one_phase_set(p, a, map, 1u << k, (uint64_t)1 << st, mode, &ps,
				   end, rep + st * dp, err);
		if (rc)
			break;
		bsum += ps.bound_us;
		bmost = fmax(bmost, ps.bound_us);
		double ex = pk->exchange_us, bd = pk->bound_us;
		add_phase(pk, &ps);
		pk->exchange_us = ex;
		pk->bound_us = bd;
	}
	if (!rc) {
		double slowest = 0;
		for (int64_t r = 0; r < dp; r++) {
			double sum = 0, most = 0;
			for (int64_t st = 0; st < pp; st++) {
				sum += rep[st * dp + r];
				most = fmax(most, rep[st * dp + r]);
			}
			slowest = fmax(slowest, (sum + (M - 1) * most) / M);
		}
		pk->exchange_us = slowest;
		pk->bound_us = fmin((bsum + (M - 1) * bmost) / M, slowest);
		/* one micro-batch's share one way (forward and backward
		 * run the same layers) */
		for (int64_t i = 0; layer && i < pp * dp; i++)
			layer[i] += rep[i] / (2 * M);
	}
	free(end);
	free(rep);
	return rc;
}

/* Every stage's exchange of kinds at once. */
static int one_phase(const tp__parallel *p, const tp_alloc *a,
		     const int32_t *map, unsigned kinds, int mode,
		     tp_prediction *pk, tp_error *err)
{
	return one_phase_set(p, a, map, kinds, 0, mode, pk, NULL, NULL, err);
}

/* Stages timed one by one up to this many; beyond, the pipeline's factor
 * on the phase of all stages at once (the launch budget). */
#define TP__PAR_STAGES_TIMED 32

/* The pipeline's sends one way (k: TP__PAR_PP_FWD or _PP_BWD), as GPipe
 * runs them with blocking sends: a stage receives a micro-batch, sends it
 * on, and only then receives the next, so neighbouring boundaries never
 * send at once and boundaries two apart do.  Micro-batch m crosses the
 * boundary at position q (counted in the sends' direction) in wave
 * 2m + q; a wave takes the exchange of the boundaries in it at once, each
 * with one micro-batch's share of the step's volume.  On five rail
 * allocations of simgrid-train.sh (seeds 435394-401, the pipeline alone,
 * M = 2 as the bench runs it) the waves in step were SMPI's time to 0.1 %
 * for 8 of 9 orders.  Each boundary timed alone, (sum + (M - 1) max) / M,
 * was 670 to 1,000 us short and saw no two boundaries meet.
 *
 * Each replica runs its own pipeline (its ranks of a stage meet in every
 * layer's TP, CP and EP exchanges, the replicas only in the gradients'
 * all-reduce), so a replica waits for its own sends, not for the slowest
 * send of every wave: its message (m, q) lasts as long as its slowest
 * send in that wave, and the replica's end is its longest chain of
 * messages (replicas_end).  With every wave as long as its slowest send,
 * NVL72 seed 60739 of simgrid-train.sh --draw runs had Slurm's order's
 * forward sends at 1,511 us (two replicas slowed on a cable at boundary 1,
 * two others at boundary 2: four slow waves of five), SMPI 1,176, and an
 * order predicted 4 % faster by them ran 1.14x as long; replica by
 * replica, 1,175.  The waves in step are kept beside (in_step): an order
 * must be faster that way too (par_faster in job_map.c), and node trades
 * go by them on a tie (parmap_swaps.c).  Still above SMPI where replicas
 * fall out of step and so out of each other's way (busy seed 601654: an
 * order's sends 3,400 us, SMPI 1,977).  A simulation send by send, each rank's
 * blocking sends sharing the lanes max-min fairly, matched SMPI on busy
 * seed 294374 (2,355 us, waves 2,687) but chose no better (busy
 * 294368-87 0.856 -> 0.848, runs 38729-48 0.839 -> 0.857 with one order
 * 2 % slower) at ten times the time.  Sets: the first S waves' and the
 * last S's differ, the middle ones alternate two; at most 2 S + 2. */
#define WAVE_SETS (4 * TP__PAR_STAGES_TIMED)
/* Micro-batches followed one by one up to this many; beyond, each
 * replica's chain grows by its last PACE_ROWS micro-batches' average pace
 * (the middle micro-batches all see the same waves: the chains settle
 * into a steady pace within a few; at micro=65 to 1000 the same times to
 * the microsecond as followed one by one). */
#define PACE_CAP 64
#define PACE_ROWS 8

struct waves {
	const tp__parallel *p;
	const tp_alloc *a;
	const int32_t *map;
	int k, mode;
	int64_t S, M, reps;
	uint64_t set[WAVE_SETS];   /* the sets timed */
	double us[WAVE_SETS], bound[WAVE_SETS];
	double *rep_us;            /* per set, each replica's sends' time */
	double *end;               /* ntasks: one set's task ends */
	int n;
	int slot[WAVE_SETS];       /* wave_slot -> its set's index */
	tp_prediction *out;        /* sums every set's counts (add_phase) */
};

/* The boundaries (bit b: stage b to b + 1) sending in wave w; forward,
 * counted from stage 0, backward from the last. */
static uint64_t wave_set(const struct waves *v, int64_t w)
{
	uint64_t set = 0;
	for (int64_t q = w & 1; q < v->S && q <= w; q += 2)
		if ((w - q) / 2 < v->M)
			set |= (uint64_t)1 << (v->k == TP__PAR_PP_FWD ? q : v->S - 1 - q);
	return set;
}

/* Waves 0 .. 2 (M - 1) + S - 1; those from S - 1 to 2 (M - 1) have every
 * boundary of the wave's parity sending, two sets: wave w's slot, one of
 * at most 2 S, the same for waves of the same set. */
static int64_t wave_slot(const struct waves *v, int64_t w)
{
	int64_t mid0 = v->S - 1, mid1 = 2 * (v->M - 1);
	if (mid1 < mid0 + 2 || w <= mid0 + 1)
		return w;
	if (w <= mid1)
		return mid0 + ((w - mid0) & 1);
	return mid0 + 2 + (w - mid1 - 1);
}

/* The slot's set timed, if new: each replica's sends in it take as long
 * as its slowest (the last message between nodes of its ranks), the set's
 * boundaries sending at once. */
static int time_slot(struct waves *v, int64_t w, tp_error *err)
{
	uint64_t set = wave_set(v, w);
	int i = 0;
	while (i < v->n && v->set[i] != set)
		i++;
	v->slot[wave_slot(v, w)] = i;
	if (i < v->n)
		return 0;
	tp_prediction pk;
	int rc = one_graph(v->p, v->a, v->map, 1u << v->k, set, 0, v->mode, &pk,
			   v->end, err);
	if (rc)
		return rc;
	add_phase(v->out, &pk);
	v->n++;
	double *rep = v->rep_us + (size_t)i * (size_t)v->reps;
	/* no message between nodes: every replica at the set's time */
	if (!(replica_ends(v->p, v->end, rep) > 0))
		for (int64_t r = 0; r < v->reps; r++)
			rep[r] = pk.exchange_us;
	v->set[i] = set;
	v->us[i] = pk.exchange_us;
	v->bound[i] = pk.bound_us;
	return 0;
}

/* The micro-batches from this one on see the last waves, fewer sends. */
static int64_t pace_tail(const struct waves *v)
{
	return v->M - 2 - v->S / 2 > 0 ? v->M - 2 - v->S / 2 : 0;
}

/* Rows of n doubles, one a micro-batch, in rows' ring of PACE_ROWS + 1
 * and a spare after it: at micro-batch PACE_CAP, when tail is further,
 * the middle's rest at its last pace, the row before tail extrapolated
 * from *prev (row m - 1) and the row PACE_ROWS before it into the spare
 * (*prev then); returns the micro-batch to go on from (tail, else m). */
static int64_t pace_skip(int64_t m, int64_t tail, int64_t n, double *rows,
			 const double **prev)
{
	if (m != PACE_CAP || m >= tail)
		return m;
	int64_t H = PACE_ROWS + 1;
	const double *old = rows + (m - 1 - PACE_ROWS) % H * n, *last = *prev;
	double *at = rows + H * n, ahead = (double)(tail - m) / PACE_ROWS;
	for (int64_t i = 0; i < n; i++)
		at[i] = last[i] + ahead * (last[i] - old[i]);
	*prev = at;
	return tail;
}

/* Replica r's pass one way (v: its sends), stages in the sends' order
 * (position i: stage i forward, pp - 1 - i backward): a stage's message
 * of micro-batch m starts once it has received m, run its layers
 * (layer[st dp + r]; NULL: none) and sent m - 1, and the next stage has
 * sent m - 1 on; it lasts the replica's time in its wave (2m + i) over
 * div.  Position i starts at start[i]; its end (its last send's, the last
 * position's last layers') into end[i].  rows: (PACE_ROWS + 2) 2 pp
 * doubles. */
static void pass_chain(const struct waves *v, const double *layer, int64_t r,
		       const double *start, double div, double *rows,
		       double *end)
{
	int64_t S = v->S, pp = S + 1, M = v->M, H = PACE_ROWS + 1, n = 2 * pp;
	int64_t dp = v->reps, tail = pace_tail(v);
	const double *prev = NULL;
	for (int64_t m = 0; m < M; m++) {
		m = pace_skip(m, tail, n, rows, &prev);
		/* row: [2 i] position i's layers' end, [2 i + 1] its send's */
		double *row = rows + m % H * n;
		for (int64_t i = 0; i < pp; i++) {
			int64_t st = v->k == TP__PAR_PP_FWD ? i : pp - 1 - i;
			double at = m ? prev[2 * i + 1] : start[i];
			if (i)
				at = fmax(at, row[2 * i - 1]);
			row[2 * i] = layer ? at + layer[st * dp + r] : at;
			if (i == S) {
				row[2 * i + 1] = row[2 * i];
				continue;
			}
			double go = fmax(row[2 * i], m ? prev[2 * i + 3] : start[i + 1]);
			int slot = v->slot[wave_slot(v, 2 * m + i)];
			row[2 * i + 1] = go + v->rep_us[(size_t)slot * (size_t)dp +
							(size_t)r] / div;
		}
		prev = row;
	}
	for (int64_t i = 0; i < pp; i++)
		end[i] = prev[2 * i + 1];
}

/* The slowest replica's end: its longest chain of sends (pass_chain
 * without layers).  rows: (PACE_ROWS + 2) 2 pp + 2 pp doubles. */
static double replicas_end(const struct waves *v, double *rows)
{
	int64_t pp = v->S + 1;
	double *start = rows + (PACE_ROWS + 2) * 2 * pp, *end = start + pp;
	double slowest = 0;
	for (int64_t i = 0; i < pp; i++)
		start[i] = 0;
	for (int64_t r = 0; r < v->reps; r++) {
		pass_chain(v, NULL, r, start, 1, rows, end);
		slowest = fmax(slowest, end[v->S - 1]);
	}
	return slowest;
}

static void waves_free(struct waves *v)
{
	free(v->rep_us);
	v->rep_us = NULL;
}

/* The sends one way timed wave by wave into *v (zeroed by the caller, its
 * rep_us kept for step_schedule: waves_free). */
static int pipeline_waves(const tp__parallel *p, const tp_alloc *a,
			  const int32_t *map, int k, int mode, double micro,
			  struct waves *vp, tp_prediction *out, double *in_step,
			  tp_error *err)
{
	memset(out, 0, sizeof *out);
	struct waves v = { .p = p, .a = a, .map = map, .k = k, .mode = mode,
			   .S = p->size[TP__PAR_PP] - 1, .out = out };
	v.M = micro >= 1 ? (int64_t)(micro + 0.5) : 1;
	v.reps = p->size[TP__PAR_DP];
	double *rows = tp__malloc_array((size_t)((PACE_ROWS + 3) * 2 * (v.S + 1)),
					sizeof *rows);
	v.end = tp__malloc_array((size_t)p->ntasks, sizeof *v.end);
	v.rep_us = tp__malloc_array((size_t)v.reps * WAVE_SETS, sizeof *v.rep_us);
	int rc = 0;
	if (!rows || !v.end || !v.rep_us)
		rc = tp_error_set(err, TP_ENOMEM, "parallel: out of memory");
	/* in step: every wave as long as its slowest send; the middle
	 * waves (M may be in the hundreds) counted, not walked */
	int64_t last = 2 * (v.M - 1) + v.S - 1, mid0 = v.S - 1, mid1 = 2 * (v.M - 1);
	double sum = 0, bsum = 0;
	for (int64_t w = 0; w <= last && !rc; w++) {
		int64_t times = 1;
		if (mid1 >= mid0 + 2 && w >= mid0 && w <= mid1) {
			if (w > mid0 + 1) {
				w = mid1;   /* counted with the first two */
				continue;
			}
			times = (mid1 - w) / 2 + 1;
		}
		if (!(rc = time_slot(&v, w, err))) {
			int i = v.slot[wave_slot(&v, w)];
			sum += (double)times * v.us[i];
			bsum += (double)times * v.bound[i];
		}
	}
	if (!rc) {
		out->exchange_us = replicas_end(&v, rows) / (double)v.M;
		out->bound_us = fmin(bsum / (double)v.M, out->exchange_us);
		*in_step = sum / (double)v.M;
	}
	free(rows);
	free(v.end);
	v.end = NULL;
	v.out = NULL;
	*vp = v;
	if (rc)
		waves_free(vp);
	return rc;
}

/* The step as GPipe runs it, replica by replica: each stage, each
 * micro-batch, receives, runs its layers (their exchanges in the node
 * and the group: tp, cp, ep), and sends on once the next stage has sent
 * the micro-batch before; backward the same the other way, a stage
 * starting once its own forward is done; then the gradients'
 * all-reduces, every stage at once.  The phases one after another (their
 * sum) miss that a stage's layers run while other stages send: on NVL72
 * seed 509578 of simgrid-train.sh --draw runs (one port), Slurm's order's
 * phases summed were 7,827 us in SMPI and its step 6,336 (its slowest
 * stage boundary and slowest expert group were in different stages); an
 * order faster in every phase, 6,549 summed, ran 7,065, and the sum chose
 * it (0.87x predicted).  As a schedule Slurm's order is 7,401 us, that
 * order 6,799, and another, 6,627, is placed: 0.89x in SMPI.  Each
 * stage's all-reduce from the end of its own backward pass (while the
 * first stages still drain, as SMPI runs it) did no better on the bench
 * (0.862 of Slurm's order against 0.863, 22 orders slower against 21, on
 * 16 sets of 40 choices): the schedule does not see the all-reduces meet
 * the backward sends on the cables, and the drain guard (job_map.c)
 * looks at that. */
struct step_parts {
	double *layer;            /* pp x dp: stage s, replica r at [s dp + r] */
	double grads_us;          /* the gradients' all-reduces' phases */
	struct waves wv[2];       /* the sends forward, backward */
};

/* The step's time under step_parts (see there). */
static double step_schedule(const tp__parallel *p, struct step_parts *sp,
			    double *buf)
{
	int64_t pp = p->size[TP__PAR_PP], dp = p->size[TP__PAR_DP];
	double *rows = buf, *start = rows + (PACE_ROWS + 2) * 2 * pp;
	double *fwd = start + pp, *bwd = fwd + pp, drained = 0;
	for (int64_t r = 0; r < dp; r++) {
		for (int64_t i = 0; i < pp; i++)
			start[i] = 0;
		pass_chain(&sp->wv[0], sp->layer, r, start, (double)sp->wv[0].M,
			   rows, fwd);
		/* backward position i is stage pp - 1 - i */
		for (int64_t i = 0; i < pp; i++)
			start[i] = fwd[pp - 1 - i];
		pass_chain(&sp->wv[1], sp->layer, r, start, (double)sp->wv[1].M,
			   rows, bwd);
		for (int64_t i = 0; i < pp; i++)
			drained = fmax(drained, bwd[i]);
	}
	return drained + sp->grads_us;
}

int tp__parallel_predict(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, tp_prediction *out,
			 double *phase_us, double *in_step_us, tp_error *err)
{
	memset(out, 0, sizeof *out);
	double in_step = 0;
	int64_t pp = p->size[TP__PAR_PP], dp = p->size[TP__PAR_DP];
	double M = p->micro >= 1 ? p->micro : (double)pp;
	/* The pipeline's sends are two phases, forward then back, as GPipe
	 * runs them (every activation forward before any gradient comes
	 * back; 1F1B sends one way in its warm-up and cool-down, both ways
	 * in between).  Timed both ways at once, a forward and a backward
	 * send that share a cable (a stage over two units, d-mod-k putting
	 * both on one cable up) looked as slow as two forward sends that
	 * do: on the bench's development allocations (simgrid-train.sh)
	 * placements predicted 1 % faster than Slurm's order ran 3 to 6 %
	 * slower.  The experts' DP last. */
	static const int PHASES[TP__PAR_PHASES] = {
		TP__PAR_TP, TP__PAR_CP, TP__PAR_EP, TP__PAR_DP, TP__PAR_PP_FWD,
		TP__PAR_PP_BWD, TP__PAR_EDP
	};
	/* the step as one schedule (step_schedule) where every stage is
	 * timed, each phase's parts kept for it (sp); else the phases' sum */
	bool sched = pp > 1 && pp <= TP__PAR_STAGES_TIMED;
	struct step_parts sp = { 0 };
	double *buf = NULL;
	int rc = 0;
	if (sched) {
		sp.layer = tp__calloc((size_t)(pp * dp), sizeof *sp.layer);
		buf = tp__malloc_array((size_t)((PACE_ROWS + 2) * 2 * pp + 3 * pp),
				       sizeof *buf);
		if (!sp.layer || !buf)
			rc = tp_error_set(err, TP_ENOMEM, "parallel: out of memory");
	}
	for (size_t ph = 0; ph < sizeof PHASES / sizeof PHASES[0] && !rc; ph++) {
		int k = PHASES[ph];
		tp_prediction pk;
		/* The gradients' all-reduces run once, every stage at once.
		 * The stage sends (pp) run in waves (pipeline_waves).  The
		 * per-layer kinds (tp, cp, ep) run a micro-batch at a time
		 * along each replica's pipeline (replica_pipelines).  Beyond
		 * TP__PAR_STAGES_TIMED stages, for the launch's budget, a
		 * phase of all stages at once times (M + pp - 1) / M.
		 * Adding up every phase replica by replica (the slowest
		 * replica's sum of phases) chose worse on the rail bench
		 * (simgrid-train.sh --net rail --draw runs, seeds 847989-8008:
		 * 0.888 -> 0.910 of Slurm's order), though it timed Slurm's
		 * order closer to SMPI. */
		bool sends = k == TP__PAR_PP_FWD || k == TP__PAR_PP_BWD;
		bool grads = k == TP__PAR_DP || k == TP__PAR_EDP;
		if (grads || (sends && pp == 1)) {
			rc = one_phase(p, a, map, 1u << k, mode, &pk, err);
			sp.grads_us += grads ? pk.exchange_us : 0;
		} else if (!sched) {
			rc = one_phase(p, a, map, 1u << k, mode, &pk, err);
			double f = (M + (double)(pp - 1)) / M;
			pk.exchange_us *= f;
			pk.bound_us *= f;
		} else if (sends) {
			double waves = 0;
			rc = pipeline_waves(p, a, map, k, mode, M,
					    &sp.wv[k == TP__PAR_PP_BWD], &pk, &waves, err);
			in_step += waves - pk.exchange_us;
		} else {
			rc = replica_pipelines(p, a, map, k, mode, M, &pk, sp.layer, err);
		}
		if (rc)
			break;
		add_phase(out, &pk);
		if (phase_us)
			phase_us[ph] = pk.exchange_us;
	}
	if (!rc && sched) {
		out->exchange_us = step_schedule(p, &sp, buf);
		out->bound_us = fmin(out->bound_us, out->exchange_us);
	}
	if (in_step_us)
		*in_step_us = out->exchange_us + in_step;
	free(sp.layer);
	free(buf);
	waves_free(&sp.wv[0]);
	waves_free(&sp.wv[1]);
	return rc;
}

int tp__parallel_time(const tp__parallel *p, const tp_alloc *a,
		      const int32_t *map, int mode, struct tp__par_time *t,
		      tp_error *err)
{
	int rc = tp__parallel_predict(p, a, map, mode, &t->p, t->phase_us,
				      &t->in_step_us, err);
	if (!rc && (rc = tp__parallel_splits(p, a, map, &t->tp_split, &t->pp_split)))
		tp_error_set(err, rc, "parallel: out of memory");
	return rc;
}

static int phases_at_once(const tp__parallel *p, const tp_alloc *a,
			  const int32_t *map, unsigned kinds, int mode,
			  double *us, tp_error *err)
{
	tp_prediction pk;
	int rc = one_phase(p, a, map, kinds, mode, &pk, err);
	*us = rc ? 0 : pk.exchange_us;
	return rc;
}

int tp__parallel_overlap(const tp__parallel *p, const tp_alloc *a,
			 const int32_t *map, int mode, double *us, tp_error *err)
{
	unsigned kinds = 1u << TP__PAR_DP | 1u << TP__PAR_EDP | 1u << TP__PAR_PP_BWD;
	return phases_at_once(p, a, map, kinds, mode, us, err);
}

int tp__parallel_drain(const tp__parallel *p, const tp_alloc *a,
		       const int32_t *map, int mode, double *us, tp_error *err)
{
	unsigned kinds = 1u << TP__PAR_TP | 1u << TP__PAR_CP | 1u << TP__PAR_EP |
			 1u << TP__PAR_DP | 1u << TP__PAR_EDP | 1u << TP__PAR_PP_BWD;
	return phases_at_once(p, a, map, kinds, mode, us, err);
}

const char *tp_step_phase_name(int phase)
{
	/* tp__parallel_predict's PHASES, in its order */
	static const char *const NAMES[TP_STEP_PHASES] = {
		"tp", "cp", "ep", "dp", "pp-fwd", "pp-bwd", "dp-experts"
	};
	return phase >= 0 && phase < TP_STEP_PHASES ? NAMES[phase] : NULL;
}

int tp_predict_parallel_phases(const char *spec, const tp_alloc *a,
			       const int32_t *map, int32_t ntasks,
			       tp_prediction *out, double *phase_us,
			       tp_error *err)
{
	if (!a || !map || !out)
		return tp_error_set(err, TP_EINVAL, "parallel: missing allocation, "
				    "map or output");
	tp__parallel p;
	tp_graph *none = NULL;
	int rc = tp__parallel_parse(spec, ntasks, &p, err);
	/* the map checked against the slots once, before any phase (the
	 * per-replica timings read each task's node unchecked): the
	 * step's tasks without their messages */
	if (!rc && !(rc = tp__parallel_graph_kinds(&p, NULL, 0, &none, err)))
		rc = tp_mapping_validate(none, a, map, err);
	tp_graph_destroy(none);
	if (!rc)
		rc = tp__parallel_predict(&p, a, map, TP__PAR_PREDICT_FULL, out,
					  phase_us, NULL, err);
	return rc;
}

int tp_predict_parallel(const char *spec, const tp_alloc *a,
			const int32_t *map, int32_t ntasks, tp_prediction *out,
			tp_error *err)
{
	return tp_predict_parallel_phases(spec, a, map, ntasks, out, NULL, err);
}
