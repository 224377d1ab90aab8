/* topoplace — the progressive filling of one exchange's flows
 * (map/predict_fill.h): max-min fair rates round by round, for classes
 * of flows that always share a rate, each round after completions (or a
 * few starts) redoing the last rates only where they change; and the
 * exchange's lower bound.  The model is described in map/predict.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/error.h>
#include "map/predict_fill.h"
#include "map/predict_internal.h"
#include "net/hashtab.h"
#include "util/util_internal.h"

/* Flows completing within BATCH_SHARE of the next completion, or within
 * ELAPSED_SHARE of the time so far after it, complete with it: each ends
 * at its own time, and frees its lanes at most that much early.  Without
 * the second, a halo with RTT sharing took a round a completion (1,530 for
 * 2,688 flows on a 16^3 torus, 3 s: test_predict's halo_rounds); with it
 * at the share at which auto calls two times a tie, far fewer, within
 * 0.1 %.  A traced code's small messages of many sizes (LULESH, 13k flows
 * on 512 nodes of a torus: 550 rounds at half that share, 340 at it) make
 * the rounds the prediction's cost.  Both shares three times larger halved
 * the rounds (torus-4096 of default-speed.sh: 2.95 -> 1.4 s) and moved
 * predictions by 0.1-0.5 %, and on 30 held-out tori of simgrid.sh --site
 * (seeds 275618-47) auto went from 0.710 to 0.729 x Scotch: its lane
 * starts and trades choose between maps the model tells apart by less. */
#define BATCH_SHARE 0.01
#define ELAPSED_SHARE TP__PREDICT_TIE_SHARE

/* ---- the bound ---- */

/* The exchange's bound from time t: each flow's bytes left (rem; NULL: all
 * of them) alone on its slowest lane once its latency is paid, and each
 * lane's share of them; done (may be NULL) flows left out.  Seconds after
 * t. */
static double bound_rest(const struct tp__flows *fl, const double *rem,
			 const bool *done, double lat, double t, double *alone_s)
{
	double *load = calloc((size_t)fl->nlanes + 1, sizeof *load);
	if (!load)
		return -1;
	double b = fl->intra_s;
	for (int64_t f = 0; f < fl->nflows; f++) {
		if (done && done[f])
			continue;
		double bytes = rem ? rem[f] : fl->bytes[f], minbw = HUGE_VAL;
		for (int64_t k = fl->start[f]; k < fl->start[f + 1]; k++) {
			int32_t l = fl->lanes[k];
			load[l] += bytes * fl->mult[f];
			if (fl->bw[l] < minbw)
				minbw = fl->bw[l];
		}
		double alone = fmax(0, (double)fl->hops[f] * lat - t) + bytes / minbw;
		if (alone > b)
			b = alone;
	}
	if (alone_s)
		*alone_s = b;
	for (int32_t l = 0; l < fl->nlanes; l++)
		if (load[l] / fl->bw[l] > b)
			b = load[l] / fl->bw[l];
	free(load);
	return b;
}

double tp__flows_bound(const struct tp__flows *fl, double lat, double *alone_s)
{
	return bound_rest(fl, NULL, NULL, lat, 0, alone_s);
}

/* ---- progressive filling ---- */

struct heap_ent {
	double key;
	int32_t lane;
};

struct heap {
	struct heap_ent *e;
	size_t n, cap;
};

static int heap_push(struct heap *h, double key, int32_t lane)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 256;
		struct heap_ent *ne = realloc(h->e, nc * sizeof *ne);
		if (!ne)
			return TP_ENOMEM;
		h->e = ne;
		h->cap = nc;
	}
	size_t i = h->n++;
	/* ties by lane: the same order on every platform */
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (h->e[p].key < key || (h->e[p].key == key && h->e[p].lane <= lane))
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = (struct heap_ent){ key, lane };
	return TP_OK;
}

static struct heap_ent heap_pop(struct heap *h)
{
	struct heap_ent top = h->e[0], last = h->e[--h->n];
	size_t i = 0, n = h->n;
	struct heap_ent *e = h->e;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		/* the smaller child without a branch: which one is a coin
		 * toss the predictor loses half the time */
		if (c + 1 < n) {
			struct heap_ent a = e[c], b = e[c + 1];
			c += (size_t)((b.key < a.key) | ((b.key == a.key) & (b.lane < a.lane)));
		}
		if (last.key < e[c].key ||
		    (last.key == e[c].key && last.lane <= e[c].lane))
			break;
		e[i] = e[c];
		i = c;
	}
	e[i] = last;
	return top;
}

/* A lane's bandwidth left, and the weight of its unfrozen messages. */
struct lane_left {
	double R, N;
};

/* Flows with the same lanes, weight in sharing and latency always have
 * the same rate: the filling works on these classes.  A class's members
 * are its flows by bytes; each of the class's messages has sent the same
 * bytes, and a member ends when they reach its own.  A trace's messages
 * between two nodes come in many sizes (miniAMR's 512-rank trace on 128
 * nodes of a 4:1 tree: 17.7k flows, 5.6k classes), and a round's passes
 * and freezes visit classes, not flows.  A class as a freeze reads and
 * writes it, in one cache line: these were eight arrays, and a freeze's
 * visit touched a line of each (a 4,096-task halo's filling, 23k flows
 * over 33k lanes, was bound by memory). */
struct fclass {
	double w;            /* its weight in sharing (tp__flows) */
	double key;          /* the key of the event that fixed its rate, with
				fz_lane (its messages' weight on a lane,
				mult * w, is computed where it is read: the
				line holds the key in its place) */
	double mult;         /* its unfinished members' messages */
	double rate;         /* per message */
	int64_t fs;          /* its lanes that can bind: blanes[fs, fs + nb) */
	int32_t nb;
	int32_t route;       /* its whole route's lanes (the work counted) */
	int32_t fz_lane;     /* the lane that fixed its rate (-1: none) */
	int32_t pos;         /* its place in filling.flog, while flog_ok */
	int32_t m0, m1;      /* its unfinished members: memb[m0, m1) */
};

/* A lane in this round's redo (rates_lazy): its stamps, and its queue
 * entry's key and its event's key at the last rates while dirty. */
struct lane_ev {
	double cur;          /* its live entry's key while dirty */
	int64_t dirty;       /* its old event no longer stands */
	double old;          /* key at the last rates, while dirty */
	int64_t late;        /* its old point passed, checked */
	int64_t fired;       /* dirty, and done with */
};

/* A frozen class on a lane, by the order it froze in: its event's key and
 * lane, then the class (a lane fixes its classes in class order). */
struct frozen_ent {
	double key;
	int32_t lane, c;
};

static int cmp_frozen(const void *x, const void *y)
{
	const struct frozen_ent *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return (a->c > b->c) - (a->c < b->c);
}

/* A class's member: a flow, its bytes and messages. */
struct member {
	double bytes, mult;
	int32_t flow;
};

/* The filling's lanes are those that can bind (keep_binding), numbered
 * in the exchange's lane order: ties go by lane as they did. */
struct filling {
	const struct tp__flows *fl;
	int32_t ncls;
	struct fclass *c;
	int32_t *hops;       /* per class: its latency's lanes */
	double *sent;        /* per class: bytes each message has sent */
	double *head;        /* per class: its first unfinished member's
				bytes (memb[m0].bytes), beside sent: each
				round's passes over the live classes read
				both, and a member apart cost a cache line a
				class (a captured all-to-all: 16,000 classes
				and 260,000 members, those reads half the
				filling's time) */
	struct member *memb; /* by class, then bytes, then flow */
	int32_t *mstart;     /* class -> its members (ncls + 1) */
	bool *frozen, *done; /* per class, apart: a lane's classes are
				checked far more often than fixed (a done
				class stays frozen) */
	int32_t nlanes;      /* lanes that can bind */
	double *bw;          /* theirs */
	int32_t *blanes;     /* each class's, by fclass.fs */
	int64_t nblanes;
	int64_t *lstart;     /* lane -> its classes (transposed) */
	int32_t *lcls;
	struct lane_left *ln;
	int32_t *live, nlive;  /* the classes not done, in class order:
				  each round's passes visit these alone (a
				  trace's sizes spread the completions over
				  hundreds of rounds, most with few classes
				  left) */
	int32_t ndone;       /* classes done since the lanes' lists were
				last compacted */
	double t, lat;       /* now; a lane's latency */
	struct heap h;       /* lanes back in at a grown share */
	struct heap_ent *pend, *pend2;   /* the lanes by first share (sorted) */
	/* The last rates' events, kept for the next round (rates_lazy and
	 * rates_suffix; a class's is fclass.key and fz_lane): per lane the key
	 * of its event; per lane and per class this round's redo's stamps
	 * (a class's: 2 * rnd while pending, 2 * rnd + 1 once fixed again);
	 * the classes that lost members or started since (lost). */
	struct lane_ev *lev;
	double *lkey;        /* per lane, the key of its event (-1: none): apart
				from lev, which only a redo reads, since a
				filling from scratch sets every lane's */
	int64_t *cst;
	int64_t rnd;
	int32_t *lost, nlost;
	int32_t nlazy;       /* rounds done so (tp__fill_out.lazy) */
	int32_t lazy_wait, lazy_backoff;   /* rates_lazy not tried for
					      lazy_wait more rounds */
	double lazy_avg, suffix_per;   /* visits: a rates_lazy round's, and a
					  rates_suffix round's a class
					  redone (-1: none yet) */
	int64_t npend, nback;   /* classes pending this round, and fixed again */
	double pk;           /* this round's point: (pk, pl) the last event */
	int32_t pl;
	bool afresh;         /* the next rates from scratch: flows started */
	double next_start;   /* the first start to come at the last rates */
	bool always_afresh;  /* every round's (the check of the other way) */
	struct frozen_ent *kept;   /* one lane's frozen classes */
	int32_t *touched;          /* rates_suffix's lanes */
	int64_t *stamp;            /* per lane: touched this round (apart
				      from lane_ev: a pass over them all
				      reads eight bytes a lane, not 40) */
	int32_t *flog, nflog;      /* the classes in the order their rates
				      were fixed, while flog_ok (rates_lazy
				      moves events) */
	bool flog_ok;
	int64_t full_work;   /* the last rates from scratch's visits */
	/* for the bound from where the filling is (class_bound), when asked
	 * (tp__fill_opts.past): per member, the bytes of it and the class's
	 * members after it (times their messages); per class, its slowest
	 * lane's bandwidth; per lane, its bytes left */
	double *tail, *slow, *load;
};

/* A message waits its route's latency, then transfers (SimGrid's flow
 * model, CM02): a short route's messages take the lanes first. */
static bool started(const struct filling *s, int32_t c)
{
	return (double)s->hops[c] * s->lat <= s->t;
}

/* Class x's unfinished members (flows). */
static int32_t members_left(const struct fclass *x)
{
	return x->m1 - x->m0;
}

static void filling_free(struct filling *s)
{
	free(s->c);
	free(s->hops);
	free(s->sent);
	free(s->head);
	free(s->memb);
	free(s->mstart);
	free(s->frozen);
	free(s->done);
	free(s->bw);
	free(s->blanes);
	free(s->lstart);
	free(s->lcls);
	free(s->ln);
	free(s->live);
	free(s->h.e);
	free(s->pend);
	free(s->pend2);
	free(s->lev);
	free(s->lkey);
	free(s->cst);
	free(s->lost);
	free(s->kept);
	free(s->touched);
	free(s->stamp);
	free(s->flog);
	free(s->tail);
	free(s->slow);
	free(s->load);
}

/* Do flows f and g cross the same lanes with the same weight and
 * latency? */
static bool same_class(const struct tp__flows *fl, int64_t f, int64_t g)
{
	int64_t n = fl->start[f + 1] - fl->start[f];
	return fl->hops[f] == fl->hops[g] && fl->w[f] == fl->w[g] &&
	       fl->start[g + 1] - fl->start[g] == n &&
	       !memcmp(fl->lanes + fl->start[f], fl->lanes + fl->start[g],
		       (size_t)n * sizeof *fl->lanes);
}

static uint64_t class_hash(const struct tp__flows *fl, int64_t f)
{
	uint64_t wb;
	memcpy(&wb, &fl->w[f], sizeof wb);
	uint64_t h = tp__mix64(wb ^ (uint64_t)(uint32_t)fl->hops[f]);
	for (int64_t k = fl->start[f]; k < fl->start[f + 1]; k++)
		h = tp__mix64(h ^ (uint32_t)fl->lanes[k]);
	return h;
}

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return (a->flow > b->flow) - (a->flow < b->flow);
}

/* The flows into classes, numbered by their first flow (rep: that flow
 * of each), their members by bytes, then flow. */
static int build_classes(struct filling *s, const struct tp__flows *fl,
			 int32_t **rep_out)
{
	size_t F = (size_t)fl->nflows, cap = 16;
	while (cap < 2 * F)
		cap *= 2;
	int32_t *slot = tp__malloc_array(cap, sizeof *slot);
	int32_t *cls_of = tp__malloc_array(F, sizeof *cls_of);
	int32_t *rep = tp__malloc_array(F, sizeof *rep);
	s->mstart = tp__calloc(F + 1, sizeof *s->mstart);
	s->memb = tp__malloc_array(F, sizeof *s->memb);
	int rc = slot && cls_of && rep && s->mstart && s->memb ? TP_OK : TP_ENOMEM;
	if (!rc) {
		for (size_t h = 0; h < cap; h++)
			slot[h] = -1;
		for (int64_t f = 0; f < fl->nflows; f++) {
			size_t h = class_hash(fl, f) & (cap - 1);
			while (slot[h] >= 0 && !same_class(fl, rep[slot[h]], f))
				h = (h + 1) & (cap - 1);
			if (slot[h] < 0) {
				slot[h] = s->ncls;
				rep[s->ncls++] = (int32_t)f;
			}
			cls_of[f] = slot[h];
			s->mstart[slot[h] + 1]++;
		}
		for (int32_t c = 0; c < s->ncls; c++)
			s->mstart[c + 1] += s->mstart[c];
		/* in flow order within a class; then by bytes */
		memcpy(slot, s->mstart, (size_t)s->ncls * sizeof *slot);
		for (int64_t f = 0; f < fl->nflows; f++)
			s->memb[slot[cls_of[f]]++] = (struct member){
				fl->bytes[f], fl->mult[f], (int32_t)f };
		for (int32_t c = 0; c < s->ncls; c++)
			if (s->mstart[c + 1] - s->mstart[c] > 1)
				qsort(s->memb + s->mstart[c],
				      (size_t)(s->mstart[c + 1] - s->mstart[c]),
				      sizeof *s->memb, cmp_member);
	}
	free(slot);
	free(cls_of);
	*rep_out = rep;
	return rc;
}

/* Each class's lanes that can fix its rate, into s->blanes (the
 * exchange's lane numbers; count[l]: the classes crossing lane l).  A
 * lane only one class crosses fixes that class's rate at its bandwidth /
 * the class's weight, never before the class's slowest lane does, whose
 * share is at most that: of such lanes only the class's slowest stays,
 * unless a lane it shares is as slow.  The same rates with far fewer
 * lanes to sort (on a sparse torus most links carry one message: 109k
 * lanes, 23k flows). */
static int keep_binding(struct filling *s, const struct tp__flows *fl,
			const int32_t *rep, const int64_t *count)
{
	int64_t most = fl->start[fl->nflows];
	s->blanes = tp__malloc_array((size_t)most + 1, sizeof *s->blanes);
	if (!s->blanes)
		return TP_ENOMEM;
	int64_t n = 0;
	for (int32_t c = 0; c < s->ncls; c++) {
		int64_t f = rep[c];
		s->c[c].fs = n;
		double minbw = HUGE_VAL;
		int64_t anchor = -1;     /* the slowest lane, a shared one first */
		for (int64_t k = fl->start[f]; k < fl->start[f + 1]; k++) {
			int32_t l = fl->lanes[k];
			bool shared = count[l] > 1;
			if (fl->bw[l] < minbw ||
			    (fl->bw[l] == minbw && shared &&
			     count[fl->lanes[anchor]] <= 1)) {
				minbw = fl->bw[l];
				anchor = k;
			}
		}
		for (int64_t k = fl->start[f]; k < fl->start[f + 1]; k++)
			if (k == anchor || count[fl->lanes[k]] > 1)
				s->blanes[n++] = fl->lanes[k];
		s->c[c].nb = (int32_t)(n - s->c[c].fs);
	}
	s->nblanes = n;
	return TP_OK;
}

/* The lanes that can bind numbered in the exchange's order, each class's
 * renumbered (in s->blanes), their bandwidths into s->bw; num (the
 * exchange's lanes, -1 each) holds the numbers. */
static int number_lanes(struct filling *s, const struct tp__flows *fl,
			int32_t *num)
{
	for (int64_t k = 0; k < s->nblanes; k++)
		num[s->blanes[k]] = 0;
	int32_t n = 0;
	for (int32_t l = 0; l < fl->nlanes; l++)
		if (num[l] == 0)
			num[l] = n++;
	s->nlanes = n;
	s->bw = tp__malloc_array((size_t)n + 1, sizeof *s->bw);
	if (!s->bw)
		return TP_ENOMEM;
	for (int32_t l = 0; l < fl->nlanes; l++)
		if (num[l] >= 0)
			s->bw[num[l]] = fl->bw[l];
	for (int64_t k = 0; k < s->nblanes; k++)
		s->blanes[k] = num[s->blanes[k]];
	return TP_OK;
}

/* The classes (build_classes), their lanes that can bind and each such
 * lane's classes. */
static int classes_and_lanes(struct filling *s, const struct tp__flows *fl)
{
	int32_t *rep = NULL;
	int rc = build_classes(s, fl, &rep);
	size_t C = (size_t)s->ncls + 1;
	int64_t *count = tp__calloc((size_t)fl->nlanes + 1, sizeof *count);
	int32_t *num = tp__malloc_array((size_t)fl->nlanes + 1, sizeof *num);
	s->c = tp__calloc(C, sizeof *s->c);
	s->hops = tp__malloc_array(C, sizeof *s->hops);
	if (!rc && !(count && num && s->c && s->hops))
		rc = TP_ENOMEM;
	for (int32_t c = 0; !rc && c < s->ncls; c++) {
		struct fclass *x = &s->c[c];
		int64_t f = rep[c];
		x->w = fl->w[f];
		x->route = (int32_t)(fl->start[f + 1] - fl->start[f]);
		x->fz_lane = -1;
		x->m0 = s->mstart[c];
		x->m1 = s->mstart[c + 1];
		for (int32_t k = x->m0; k < x->m1; k++)
			x->mult += s->memb[k].mult;
		s->hops[c] = fl->hops[f];
		for (int64_t k = fl->start[f]; k < fl->start[f + 1]; k++)
			count[fl->lanes[k]]++;
	}
	for (int32_t l = 0; !rc && l < fl->nlanes; l++)
		num[l] = -1;
	if (!rc)
		rc = keep_binding(s, fl, rep, count);
	if (!rc)
		rc = number_lanes(s, fl, num);
	free(rep);
	free(count);
	free(num);
	if (rc)
		return rc;
	s->lstart = calloc((size_t)s->nlanes + 2, sizeof *s->lstart);
	s->lcls = tp__malloc_array((size_t)s->nblanes + 1, sizeof *s->lcls);
	int64_t *fill = tp__malloc_array((size_t)s->nlanes + 1, sizeof *fill);
	if (!s->lstart || !s->lcls || !fill) {
		free(fill);
		return TP_ENOMEM;
	}
	for (int64_t k = 0; k < s->nblanes; k++)
		s->lstart[s->blanes[k] + 1]++;
	for (int32_t l = 0; l < s->nlanes; l++)
		s->lstart[l + 1] += s->lstart[l];
	memcpy(fill, s->lstart, (size_t)s->nlanes * sizeof *fill);
	for (int32_t c = 0; c < s->ncls; c++)
		for (int64_t k = s->c[c].fs; k < s->c[c].fs + s->c[c].nb; k++)
			s->lcls[fill[s->blanes[k]]++] = c;
	free(fill);
	return TP_OK;
}

static int filling_init(struct filling *s, const struct tp__flows *fl)
{
	memset(s, 0, sizeof *s);
	s->fl = fl;
	/* flows, classes, events and places as int32_t: 2^31 flows would
	 * be past any work limit by far */
	if (fl->nflows >= INT32_MAX || fl->nflows < 1)
		return fl->nflows < 1 ? TP_OK : TP_ENOMEM;
	int rc = classes_and_lanes(s, fl);
	if (rc)
		return rc;
	size_t C = (size_t)s->ncls + 1, L = (size_t)s->nlanes + 1;
	s->ln = tp__malloc_array(L, sizeof *s->ln);
	s->frozen = calloc(C, sizeof *s->frozen);
	s->done = calloc(C, sizeof *s->done);
	s->sent = calloc(C, sizeof *s->sent);
	s->head = tp__malloc_array(C, sizeof *s->head);
	s->live = tp__malloc_array(C, sizeof *s->live);
	s->pend = tp__malloc_array(L, sizeof *s->pend);
	s->pend2 = tp__malloc_array(L, sizeof *s->pend2);
	s->lev = calloc(L, sizeof *s->lev);
	s->lkey = tp__malloc_array(L, sizeof *s->lkey);
	s->cst = calloc(C, sizeof *s->cst);
	s->lost = tp__malloc_array(C, sizeof *s->lost);
	s->flog = tp__malloc_array(C, sizeof *s->flog);
	s->stamp = calloc(L, sizeof *s->stamp);
	if (!s->flog || !s->stamp || !s->ln || !s->frozen || !s->done || !s->sent ||
	    !s->head || !s->live ||
	    !s->pend || !s->pend2 || !s->lev || !s->lkey || !s->cst || !s->lost)
		return TP_ENOMEM;
	s->next_start = -1;     /* no start seen: the first rates afresh */
	s->lazy_backoff = 1;
	s->lazy_avg = s->suffix_per = -1;
	for (int32_t c = 0; c < s->ncls; c++) {
		s->live[c] = c;
		s->head[c] = s->memb[s->c[c].m0].bytes;
	}
	s->nlive = s->ncls;
	int64_t most = 1;
	for (int32_t l = 0; l < s->nlanes; l++)
		if (s->lstart[l + 1] - s->lstart[l] > most)
			most = s->lstart[l + 1] - s->lstart[l];
	s->kept = tp__malloc_array((size_t)most, sizeof *s->kept);
	/* the lanes, then a lane's classes and as many again (log_share) */
	s->touched = tp__malloc_array(L + 2 * (size_t)most, sizeof *s->touched);
	return s->kept && s->touched ? TP_OK : TP_ENOMEM;
}

/* Is heap entry x before y: by key, then by lane (the same order on
 * every platform)? */
static bool ent_before(struct heap_ent x, struct heap_ent y)
{
	return x.key < y.key || (x.key == y.key && x.lane < y.lane);
}

/* The n entries of a in (key, lane) order, a in lane order: a stable
 * radix sort on the keys' top 24 bits (positive doubles order as their
 * bits do; sign, exponent and 12 bits of mantissa, a byte the same in
 * every key skipped), then insertion within what they leave tied; tmp
 * as large as a.  Returns the sorted copy (a or tmp).  Linear: a round's
 * lanes were pushed one by one onto a heap and most popped again, 55 %
 * of a prediction's time. */
static struct heap_ent *sort_by_key(struct heap_ent *a, struct heap_ent *tmp,
				    size_t n)
{
	for (int shift = 40; shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++) {
			uint64_t b;
			memcpy(&b, &a[i].key, sizeof b);
			count[((b >> shift) & 255) + 1]++;
		}
		bool one = false;
		for (size_t d = 1; d <= 256 && !one; d++)
			one = count[d] == n;
		if (one)
			continue;    /* this byte is the same in every key */
		for (size_t d = 1; d <= 256; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++) {
			uint64_t b;
			memcpy(&b, &a[i].key, sizeof b);
			tmp[count[(b >> shift) & 255]++] = a[i];
		}
		struct heap_ent *x = a;
		a = tmp;
		tmp = x;
	}
	for (size_t i = 1; i < n; i++) {
		struct heap_ent x = a[i];
		size_t j = i;
		while (j > 0 && ent_before(x, a[j - 1])) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
	return a;
}


/* The done classes out of the lanes' lists, the others in their order:
 * a lane's list is walked whenever it fixes rates, and a trace's spread
 * completions left most entries done. */
static void compact_lanes(struct filling *s)
{
	int64_t w = 0;
	for (int32_t l = 0; l < s->nlanes; l++) {
		int64_t from = s->lstart[l], to = s->lstart[l + 1];
		s->lstart[l] = w;
		for (int64_t k = from; k < to; k++)
			if (!s->done[s->lcls[k]])
				s->lcls[w++] = s->lcls[k];
	}
	s->lstart[s->nlanes] = w;
	s->ndone = 0;
}

/* ---- the last rates again, only where they change ----
 *
 * Where flows have only finished since the last rates (none started),
 * the filling is the last one but for what their end changes: their
 * lanes have more room, and what that moves.  On a sparse torus a round
 * ends a few hundred of 23k classes and changes tens to hundreds of
 * rates; redoing every freeze after the first that changed (the
 * completions are spread over the filling's events) cost a whole
 * filling a round, most of it the same rates again.
 *
 * fair_rates takes the lanes out of its queue in (key, lane) order (one
 * goes back in only at a larger share), and a lane fixes its unfrozen
 * classes' rates at its share when that is its key.  So this round's
 * filling is the last one's events in that order but where a lane's
 * state (its bandwidth left and unfrozen weight) differs from the last
 * one's at that point.  Such a lane is dirty: queued, and computed as
 * fair_rates would (its frozen classes' rates taken off its bandwidth in
 * the order they froze).  The other lanes' events stand and cost
 * nothing.  A lane turns dirty when a class on it ended, lost members or
 * started (from the start), when a class on it is fixed at another rate
 * or at another point (from then), and when a class on it is still
 * unfixed at the point its last event fixed it (from then: its weight
 * now counts there).  A lane whose event has passed has all its classes
 * fixed, and stays as it was.
 *
 * Where completions come last in the events (a trace's many sizes on a
 * tree: the fastest finish, which froze last) the events after the first
 * changed one are few, and redoing them all (rates_suffix) costs less
 * than following each change: on a tree the uplinks tie most lanes
 * together.  fair_rates takes whichever cost less a round lately.
 *
 * The events' keys must stay in the order the events are made, for the
 * next round reads that order from them: where rounding puts a lane's
 * share below the point reached (by a unit in the last place), its key
 * is the next double past the point's.  The rates are fair_rates' from
 * scratch to the last bit (test_predict's afresh_same and
 * lazy_rounds_same) but there and where rounding made a lane's share
 * fall below the key it was queued with (fair_rates then fixes it at
 * that key, which depends on when it was queued): on the outputs
 * digest's cases 487 of 336k rounds, by at most 2.4e-15 of a rate, and
 * no output. */

/* A lane into or out of the round's queue, in lane visits (the work a
 * filling counts, about 10 ns each where rates are computed from
 * scratch): the queue holds thousands of lanes.  Counted so, a redone
 * round's visits take 11-13 ns on a sparse torus. */
#define LAZY_QUEUE_VISITS 4

/* rates_suffix redoes at most this share of the classes left: 1 / 2. */
#define SUFFIX_SHARE 2

/* After rates_lazy gave up, it waits 2, 4, ... rounds, at most this many,
 * before it is tried again; and it is tried only while its rounds lately
 * (those it gave up with a filling from scratch added) cost less than
 * this many of the last filling from scratch's: in lane visits, which
 * cost it more time a visit on a torus (heap entries) and less on a
 * tree.  1: trace-512's fillings as before it, torus-4096's a fifth
 * slower than at 2 (default-speed.sh's seeds 629438 and 520982,
 * development). */
#define LAZY_BACKOFF_MAX 64
#define LAZY_COST_SHARE 2

/* Is event (k, l) before (pk, pl)? */
static inline bool ev_before(double k, int32_t l, double pk, int32_t pl)
{
	return k < pk || (k == pk && l < pl);
}

/* Is class c sending: started, not done?  From the two small arrays, not
 * the class's line: a lane's list holds many classes that are not (a
 * trace's late starts). */
static inline bool sending(const struct filling *s, int32_t c)
{
	return !s->done[c] && started(s, c);
}

/* Has class c's rate been fixed before this round's point? */
static bool frozen_before(const struct filling *s, int32_t c)
{
	if (s->cst[c] >= 2 * s->rnd)
		return s->cst[c] & 1;    /* fixed again, or pending */
	return s->c[c].fz_lane >= 0 &&
	       ev_before(s->c[c].key, s->c[c].fz_lane, s->pk, s->pl);
}

static bool lazy_share(struct filling *s, int32_t l, double *share,
		       int64_t *work);

/* Dirty lane l into the queue once, at its share or its old point,
 * whichever comes first (its share: at least the point's; its old point
 * while not yet checked, lazy_late). */
static int lazy_queue(struct filling *s, int32_t l, int64_t *work)
{
	const struct lane_ev *z = &s->lev[l];
	double at = z->cur;
	if (z->old >= 0 && z->late != s->rnd && z->old < at)
		at = z->old;
	*work += LAZY_QUEUE_VISITS;
	return heap_push(&s->h, at, l) ? TP_ENOMEM : TP_OK;
}

/* Lane l's state differs from this point on: queued now (its share is at
 * least the point's), its old event void: the classes it fixed wait for
 * it (pending), and its old point is checked (lazy_late). */
static int lazy_dirty(struct filling *s, int32_t l, int64_t *work)
{
	struct lane_ev *z = &s->lev[l];
	if (z->dirty == s->rnd ||
	    (s->lkey[l] >= 0 && ev_before(s->lkey[l], l, s->pk, s->pl)))
		return TP_OK;
	z->dirty = s->rnd;
	z->old = s->lkey[l];
	for (int64_t k = s->lstart[l]; s->lkey[l] >= 0 && k < s->lstart[l + 1]; k++) {
		int32_t c = s->lcls[k];
		const struct fclass *x = &s->c[c];
		if (!sending(s, c) || x->fz_lane != l || s->cst[c] >= 2 * s->rnd)
			continue;
		s->cst[c] = 2 * s->rnd;
		s->npend++;
	}
	/* queued at its share now (at least the point's), not at the
	 * point's, to be taken out and put back at once */
	double share;
	if (!lazy_share(s, l, &share, work)) {
		z->fired = s->rnd;     /* every class on it fixed: fixes none */
		s->lkey[l] = -1;
		return TP_OK;
	}
	z->cur = share > s->pk ? share : s->pk;
	return lazy_queue(s, l, work);
}

/* Dirty lane l at its old event's point, not fixed there again: the
 * classes it fixed then are still unfixed, and the lanes they cross see
 * their weight from here on. */
static int lazy_late(struct filling *s, int32_t l, int64_t *work)
{
	for (int64_t k = s->lstart[l]; k < s->lstart[l + 1]; k++) {
		int32_t c = s->lcls[k];
		const struct fclass *x = &s->c[c];
		if (s->cst[c] != 2 * s->rnd || !sending(s, c))
			continue;
		for (int64_t q = x->fs; q < x->fs + x->nb; q++) {
			int rc = lazy_dirty(s, s->blanes[q], work);
			if (rc)
				return rc;
		}
	}
	return TP_OK;
}

/* Lane l's share at this round's point, as fair_rates computes it (its
 * frozen classes' rates taken off its bandwidth in the order they froze,
 * by event, then class: a lane fixes its classes in class order); false
 * where it has no unfrozen weight left. */
static bool lazy_share(struct filling *s, int32_t l, double *share,
		       int64_t *work)
{
	int64_t from = s->lstart[l], to = s->lstart[l + 1];
	double N = 0;
	int32_t nf = 0;
	for (int64_t q = from; q < to; q++) {
		int32_t c = s->lcls[q];
		const struct fclass *x = &s->c[c];
		if (!sending(s, c))
			continue;
		N += x->mult * x->w;
		if (frozen_before(s, c))
			s->kept[nf++] = (struct frozen_ent){ x->key, x->fz_lane, c };
	}
	/* insertion for the few of a torus's lanes, else qsort: a tree's
	 * uplinks carry hundreds */
	if (nf > 16) {
		qsort(s->kept, (size_t)nf, sizeof *s->kept, cmp_frozen);
	} else {
		for (int32_t j = 1; j < nf; j++) {
			struct frozen_ent y = s->kept[j];
			int32_t m = j;
			for (; m > 0 && cmp_frozen(&s->kept[m - 1], &y) > 0; m--)
				s->kept[m] = s->kept[m - 1];
			s->kept[m] = y;
		}
	}
	double R = s->bw[l];
	for (int32_t j = 0; j < nf; j++) {
		const struct fclass *x = &s->c[s->kept[j].c];
		R -= x->mult * x->rate;
		N -= x->mult * x->w;
	}
	*work += to - from + 2 * nf;
	if (!(N > 1e-9))
		return false;
	*share = R / N;
	return true;
}

/* Dirty lane l out of the queue with key k, its share then: that share
 * kept if it grew (the caller queues it again), else its unfrozen classes
 * fixed at it. */
static int lazy_fire(struct filling *s, int32_t l, double k, int64_t *work)
{
	struct lane_ev *z = &s->lev[l];
	int64_t from = s->lstart[l], to = s->lstart[l + 1];
	double share;
	if (!lazy_share(s, l, &share, work)) {
		z->fired = s->rnd;
		s->lkey[l] = -1;
		return TP_OK;
	}
	if (share > k) {
		z->cur = share;
		return TP_OK;
	}
	if (share < 0)
		share = 0;
	z->fired = s->rnd;
	s->lkey[l] = -1;
	for (int64_t q = from; q < to; q++) {
		int32_t c = s->lcls[q];
		struct fclass *x = &s->c[c];
		if (!sending(s, c) || frozen_before(s, c))
			continue;
		double rate = share * x->w;
		bool same = x->fz_lane == l && x->key == k && x->rate == rate;
		if (s->cst[c] == 2 * s->rnd)
			s->nback++;
		x->rate = rate;
		x->fz_lane = l;
		x->key = k;
		s->cst[c] = 2 * s->rnd + 1;
		s->lkey[l] = k;
		*work += (int64_t)x->route * members_left(x);
		for (int64_t r = x->fs; !same && r < x->fs + x->nb; r++) {
			int rc = lazy_dirty(s, s->blanes[r], work);
			if (rc)
				return rc;
		}
	}
	return TP_OK;
}

/* The rates of this round from the last (flows ended since, or a few
 * started); *ok false where a class was left without one, or where the
 * redo has cost what the last rates from scratch did (on a tree the
 * uplinks tie most lanes together, and a redo turns into a whole filling
 * at twice the cost a lane): fair_rates then redoes them otherwise. */
static int rates_lazy(struct filling *s, int64_t *work, bool *ok)
{
	*ok = false;
	int64_t stop = *work + s->full_work;
	s->rnd++;
	s->npend = s->nback = 0;
	s->h.n = 0;
	s->pk = -1;
	s->pl = -1;
	int rc = TP_OK;
	for (int32_t i = 0; !rc && i < s->nlost; i++) {
		int32_t c = s->lost[i];
		const struct fclass *x = &s->c[c];
		if (!s->done[c] && s->cst[c] != 2 * s->rnd) {
			s->cst[c] = 2 * s->rnd;
			s->npend++;
		}
		for (int64_t q = x->fs; !rc && q < x->fs + x->nb; q++)
			rc = lazy_dirty(s, s->blanes[q], work);
	}
	while (!rc && s->h.n && *work <= stop) {
		struct heap_ent top = heap_pop(&s->h);
		int32_t l = top.lane;
		struct lane_ev *z = &s->lev[l];
		*work += LAZY_QUEUE_VISITS;
		if (z->dirty != s->rnd || z->fired == s->rnd)
			continue;
		/* queued at the point but before it by lane: its share is
		 * past the point's but by rounding; it goes after the point's
		 * key, so that the events' keys stay in the order they are
		 * made (the next round reads it from them) */
		bool past = ev_before(top.key, l, s->pk, s->pl);
		if (!past) {
			s->pk = top.key;
			s->pl = l;
		}
		if (past && top.key == z->cur)
			z->cur = nextafter(s->pk, HUGE_VAL);
		else if (top.key == z->cur)
			rc = lazy_fire(s, l, top.key, work);
		/* its old point: fixed again there, or late */
		if (!rc && z->fired != s->rnd && z->old >= 0 && top.key == z->old &&
		    z->late != s->rnd) {
			z->late = s->rnd;
			rc = lazy_late(s, l, work);
		}
		if (!rc && z->fired != s->rnd)
			rc = lazy_queue(s, l, work);
	}
	s->nlost = 0;
	*ok = !rc && !s->h.n && s->nback == s->npend;
	s->flog_ok = false;     /* its events moved */
	return rc;
}

static int cmp_lane(const void *x, const void *y)
{
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	return (i > j) - (i < j);
}

/* n places in the freeze log (>= 0) sorted, byte by byte from the
 * lowest (as many passes as the largest needs), tmp as scratch.  A
 * tree's uplink holds thousands of classes, and qsort's calls to its
 * comparison were a fifth of a captured all-to-all's filling. */
static void sort_places(int32_t *a, int32_t *tmp, int32_t n)
{
	int32_t most = 0;
	for (int32_t i = 0; i < n; i++)
		most = a[i] > most ? a[i] : most;
	for (int shift = 0; shift < 32 && most >> shift > 0; shift += 8) {
		int32_t count[257] = { 0 };
		for (int32_t i = 0; i < n; i++)
			count[((a[i] >> shift) & 255) + 1]++;
		for (int k = 0; k < 256; k++)
			count[k + 1] += count[k];
		for (int32_t i = 0; i < n; i++)
			tmp[count[(a[i] >> shift) & 255]++] = a[i];
		memcpy(a, tmp, (size_t)n * sizeof *a);
	}
}

/* Where event (k0, l0)'s classes begin in the freeze log. */
static int32_t suffix_from(const struct filling *s, double k0, int32_t l0)
{
	int32_t lo = 0, hi = s->nflog;   /* the first not before (k0, l0) */
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2, c = s->flog[mid];
		if (ev_before(s->c[c].key, s->c[c].fz_lane, k0, l0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The classes rates_suffix would fix again, and from which event (the
 * earliest of a class that lost members); -1 where the log is not in
 * order or a class started since. */
static int64_t suffix_size(const struct filling *s, double *k0, int32_t *l0)
{
	if (!s->flog_ok)
		return -1;
	*k0 = HUGE_VAL;
	*l0 = INT32_MAX;
	for (int32_t i = 0; i < s->nlost; i++) {
		int32_t c = s->lost[i];
		if (s->c[c].fz_lane < 0)
			return -1;    /* started since */
		if (ev_before(s->c[c].key, s->c[c].fz_lane, *k0, *l0)) {
			*k0 = s->c[c].key;
			*l0 = s->c[c].fz_lane;
		}
	}
	return s->nflog - suffix_from(s, *k0, *l0);
}

/* lazy_share's sums where the log is in order (rates_suffix), into
 * s->ln[l]: a lane's frozen classes by their places in it, integers (a
 * tree's uplinks carry hundreds). */
static bool log_share(struct filling *s, int32_t l, double *share, int64_t *work)
{
	int64_t from = s->lstart[l], to = s->lstart[l + 1];
	double N = 0;
	int32_t nf = 0;
	int32_t *pos = s->touched + s->nlanes;    /* scratch past the lanes */
	for (int64_t q = from; q < to; q++) {
		int32_t c = s->lcls[q];
		const struct fclass *x = &s->c[c];
		if (!sending(s, c))
			continue;
		N += x->mult * x->w;
		if (s->frozen[c])
			pos[nf++] = x->pos;
	}
	if (nf > 64) {
		sort_places(pos, pos + nf, nf);
	} else {
		for (int32_t j = 1; j < nf; j++) {
			int32_t y = pos[j], m = j;
			for (; m > 0 && pos[m - 1] > y; m--)
				pos[m] = pos[m - 1];
			pos[m] = y;
		}
	}
	double R = s->bw[l];
	for (int32_t j = 0; j < nf; j++) {
		const struct fclass *x = &s->c[s->flog[pos[j]]];
		R -= x->mult * x->rate;
		N -= x->mult * x->w;
	}
	*work += to - from + nf;
	s->ln[l].R = R;
	s->ln[l].N = N;
	if (!(N > 1e-9))
		return false;
	*share = R / N;
	return true;
}

/* The last rates again from their first event that a finished flow
 * changed, (k0, l0): the events before it stand, since a flow gone only
 * made its lanes' shares larger and none of them froze before its class
 * did.  The classes fixed from there are unfixed, and their lanes'
 * bandwidth and weight rebuilt as the whole filling would have them
 * there, into pend (*np), for fair_rates to go on from (*live: the
 * classes to fix).  Where completions come last in the events, a round
 * fixes a few classes again. */
static void rates_suffix(struct filling *s, double k0, int32_t l0,
			 int64_t *work, size_t *np, int64_t *live)
{
	s->rnd++;                /* the lanes' marks */
	int32_t nt = 0, from = suffix_from(s, k0, l0);
	/* the lanes' first keys after the last event kept: a share at the
	 * point can fall below it by rounding, and the events must stay in
	 * the order they are made (rates_lazy reads it from their keys) */
	double floor = from > 0 ? nextafter(s->c[s->flog[from - 1]].key, HUGE_VAL) : 0;
	*live = 0;
	for (int32_t i = from; i < s->nflog; i++) {
		int32_t c = s->flog[i];
		struct fclass *x = &s->c[c];
		if (!sending(s, c))
			continue;
		s->frozen[c] = false;
		x->rate = 0;
		x->fz_lane = -1;
		++*live;
		for (int64_t q = x->fs; q < x->fs + x->nb; q++) {
			int32_t l = s->blanes[q];
			if (s->stamp[l] != s->rnd) {
				s->stamp[l] = s->rnd;
				s->touched[nt++] = l;
			}
		}
		*work += (int64_t)x->route * members_left(x);
	}
	/* in lane order, as the whole filling lists them; past a few lanes
	 * in a hundred, a pass over the marks costs less than sorting */
	if (nt > s->nlanes / 64) {
		nt = 0;
		for (int32_t l = 0; l < s->nlanes; l++)
			if (s->stamp[l] == s->rnd)
				s->touched[nt++] = l;
	} else {
		qsort(s->touched, (size_t)nt, sizeof *s->touched, cmp_lane);
	}
	/* the log kept up to the undone (fair_rates adds the rest) */
	s->nflog = from;
	*np = 0;
	for (int32_t i = 0; i < nt; i++) {
		int32_t l = s->touched[i];
		double share;
		s->lkey[l] = -1;
		if (log_share(s, l, &share, work))
			s->pend[(*np)++] = (struct heap_ent){ share > floor ? share : floor, l };
		else
			s->ln[l].N = 0;
	}
	s->nlost = 0;
}

/* Every lane's bandwidth and unfrozen weight from scratch, the lanes with
 * weight into pend (np), the classes to fix into *live. */
static void rates_afresh(struct filling *s, int64_t *work, size_t *np,
			 int64_t *live)
{
	for (int32_t l = 0; l < s->nlanes; l++) {
		s->ln[l].R = s->bw[l];
		s->ln[l].N = 0;
		s->lkey[l] = -1;
	}
	*live = 0;
	for (int32_t i = 0; i < s->nlive; i++) {
		struct fclass *x = &s->c[s->live[i]];
		bool fr = s->frozen[s->live[i]] = !started(s, s->live[i]);
		x->rate = 0;
		x->fz_lane = -1;
		if (fr)
			continue;
		++*live;
		for (int64_t k = x->fs; k < x->fs + x->nb; k++)
			s->ln[s->blanes[k]].N += x->mult * x->w;
		/* the whole route of each flow, as the limits count it */
		*work += (int64_t)x->route * members_left(x);
	}
	s->nlost = 0;
	s->nflog = 0;
	s->flog_ok = true;
	*np = 0;
	for (int32_t l = 0; l < s->nlanes; l++)
		if (s->ln[l].N > 0)
			s->pend[(*np)++] = (struct heap_ent){ s->ln[l].R / s->ln[l].N, l };
}

/* A cost's running mean over the last rounds (-1: none yet). */
static double cost_avg(double avg, double x)
{
	return avg < 0 ? x : 0.75 * avg + 0.25 * x;
}

/* Max-min rates of the unfinished classes; the work done (each flow's
 * lanes touched) added to *work. */
static int fair_rates(struct filling *s, int64_t *work)
{
	if (s->ndone > s->nlive / 4)
		compact_lanes(s);
	size_t np;
	int64_t live;
	bool suffix = false;
	int64_t n = 0, w_in = *work;
	if (!s->afresh && !s->always_afresh) {
		/* the classes fixed from the first changed event on again
		 * (rates_suffix), or only what changes (rates_lazy), by what
		 * each cost a round lately; from scratch where the first
		 * would redo most of them and the second cost too much
		 * lately or gave up lately */
		double k0;
		int32_t l0;
		n = suffix_size(s, &k0, &l0);
		bool some = n >= 0 && SUFFIX_SHARE * n <= s->nlive;
		bool lazy = s->lazy_wait == 0 &&
			    (s->lazy_avg < 0 ||
			     s->lazy_avg < LAZY_COST_SHARE * (double)s->full_work);
		if (some && (s->lazy_avg < 0 || s->suffix_per < 0 ||
			     s->suffix_per * (double)n <= s->lazy_avg))
			lazy = false;    /* either not seen yet: the suffix */
		if (lazy) {
			bool ok;
			int rc = rates_lazy(s, work, &ok);
			/* given up (its state half redone: from scratch now):
			 * not tried for twice as many rounds as last time */
			s->lazy_backoff = ok ? 1 : 2 * s->lazy_backoff;
			if (s->lazy_backoff > LAZY_BACKOFF_MAX)
				s->lazy_backoff = LAZY_BACKOFF_MAX;
			s->lazy_wait = ok ? 0 : s->lazy_backoff;
			/* what the round cost: given up, the rates from
			 * scratch too */
			s->lazy_avg = cost_avg(s->lazy_avg, (double)(*work - w_in) +
						 (ok ? 0 : (double)s->full_work));
			s->nlazy += ok;
			if (rc || ok)
				return rc;
		} else {
			if (s->lazy_wait > 0)
				s->lazy_wait--;
			if (some) {
				rates_suffix(s, k0, l0, work, &np, &live);
				suffix = true;
				s->nlazy++;
			}
		}
	}
	int64_t w0 = *work;
	if (!suffix)
		rates_afresh(s, work, &np, &live);
	s->afresh = false;
	s->h.n = 0;
	const struct heap_ent *pend = sort_by_key(s->pend, s->pend2, np);
	size_t next = 0;
	/* a lane's share only grows as classes freeze elsewhere (each
	 * freezes at the smallest share), so its entry may be stale only by
	 * being low: it goes back in, onto the heap, at its share when it
	 * comes out (one entry a lane at a time); the lanes come out in
	 * (share, lane) order from the sorted ones and the heap together */
	while ((next < np || s->h.n) && live > 0) {
		struct heap_ent top;
		if (s->h.n && (next == np || ent_before(s->h.e[0], pend[next])))
			top = heap_pop(&s->h);
		else
			top = pend[next++];
		int32_t l = top.lane;
		if (!(s->ln[l].N > 1e-9))
			continue;    /* its classes all frozen */
		double share = s->ln[l].R / s->ln[l].N;
		if (share > top.key) {
			if (heap_push(&s->h, share, l))
				return TP_ENOMEM;
			continue;
		}
		if (share < 0)
			share = 0;
		bool any = false;
		for (int64_t k = s->lstart[l]; k < s->lstart[l + 1]; k++) {
			int32_t c = s->lcls[k];
			if (s->frozen[c])
				continue;
			struct fclass *x = &s->c[c];
			any = true;
			/* the log in order, or not used (a share rounded below
			 * the point rates_suffix went back to) */
			if (s->nflog > 0) {
				int32_t p = s->flog[s->nflog - 1];
				s->flog_ok = s->flog_ok &&
					     !ev_before(top.key, l, s->c[p].key, s->c[p].fz_lane);
			}
			x->fz_lane = l;
			s->c[c].key = top.key;
			x->pos = s->nflog;
			s->flog[s->nflog++] = c;
			s->frozen[c] = true;
			live--;
			x->rate = share * x->w;
			for (int64_t q = x->fs; q < x->fs + x->nb; q++) {
				struct lane_left *y = &s->ln[s->blanes[q]];
				y->R -= x->mult * x->rate;
				y->N -= x->mult * x->w;
			}
			*work += (int64_t)x->route * members_left(x);
		}
		if (any)
			s->lkey[l] = top.key;
		s->ln[l].N = 0;
	}
	if (!suffix)
		s->full_work = *work - w0;
	else if (n > 0)
		s->suffix_per = cost_avg(s->suffix_per, (double)(*work - w_in) / (double)n);
	return TP_OK;
}

/* The bytes left of each flow and which are done, for the bound of what
 * is left (bound_rest), in *rem and *done (NULL: out of memory). */
static void flows_left(const struct filling *s, double **rem, bool **done)
{
	size_t F = (size_t)s->fl->nflows + 1;
	*rem = tp__malloc_array(F, sizeof **rem);
	*done = calloc(F, sizeof **done);
	if (!*rem || !*done)
		return;
	for (int32_t c = 0; c < s->ncls; c++)
		for (int32_t k = s->mstart[c]; k < s->mstart[c + 1]; k++) {
			int32_t f = s->memb[k].flow;
			(*done)[f] = k < s->c[c].m0;
			(*rem)[f] = s->memb[k].bytes - s->sent[c];
		}
}

/* What class_bound needs, allocated and set.  TP_OK or TP_ENOMEM. */
static int bound_init(struct filling *s)
{
	size_t F = (size_t)s->fl->nflows + 1;
	s->tail = tp__malloc_array(F, sizeof *s->tail);
	s->slow = tp__malloc_array((size_t)s->ncls + 1, sizeof *s->slow);
	s->load = tp__malloc_array((size_t)s->nlanes + 1, sizeof *s->load);
	if (!s->tail || !s->slow || !s->load)
		return TP_ENOMEM;
	for (int32_t c = 0; c < s->ncls; c++) {
		double sum = 0, slow = HUGE_VAL;
		for (int32_t k = s->mstart[c + 1] - 1; k >= s->mstart[c]; k--)
			s->tail[k] = sum += s->memb[k].bytes * s->memb[k].mult;
		const struct fclass *x = &s->c[c];
		for (int64_t q = x->fs; q < x->fs + x->nb; q++)
			slow = fmin(slow, s->bw[s->blanes[q]]);
		s->slow[c] = slow;
	}
	return TP_OK;
}

/* A bound of the exchange's end from now, in seconds (bound_rest's, by
 * class): each class's bytes left on its lanes that can bind (a lane
 * only one class crosses carries no more than its slowest, which is one
 * of them), and its largest member alone on its slowest lane once its
 * latency is paid; the ends so far (worst).  *work: the lanes visited. */
static double class_bound(struct filling *s, double worst, int64_t *work)
{
	double rest = 0;
	for (int32_t l = 0; l < s->nlanes; l++)
		s->load[l] = 0;
	for (int32_t i = 0; i < s->nlive; i++) {
		int32_t c = s->live[i];
		const struct fclass *x = &s->c[c];
		double left = s->tail[x->m0] - s->sent[c] * x->mult;
		for (int64_t q = x->fs; q < x->fs + x->nb; q++)
			s->load[s->blanes[q]] += left;
		double alone = fmax(0, (double)s->hops[c] * s->lat - s->t) +
			       (s->memb[x->m1 - 1].bytes - s->sent[c]) / s->slow[c];
		rest = fmax(rest, alone);
		*work += x->nb;
	}
	for (int32_t l = 0; l < s->nlanes; l++)
		rest = fmax(rest, s->load[l] / s->bw[l]);
	*work += s->nlanes;
	return fmax(worst, fmax(s->fl->intra_s, s->t + rest));
}

/* Class c's members that end within cut of now, out: each one's end
 * into end_of and *worst, and the class's weight without them.  Returns
 * whether any ended. */
static bool members_end(struct filling *s, int32_t c, double cut,
			double *worst, double *end_of)
{
	struct fclass *x = &s->c[c];
	bool any = false;
	while (x->m0 < x->m1) {
		double need = x->rate > 0 ? (s->head[c] - s->sent[c]) / x->rate : HUGE_VAL;
		if (!(need <= cut))
			break;
		const struct member *m = &s->memb[x->m0];
		double end = s->t + need;
		if (end > *worst)
			*worst = end;
		if (end_of)
			end_of[m->flow] = end;
		x->mult -= m->mult;
		if (++x->m0 < x->m1)
			s->head[c] = s->memb[x->m0].bytes;
		any = true;
	}
	return any;
}

/* The classes started since the last rates (never fixed) into the lost
 * ones, for rates_lazy; false where they are more than a 64th of those
 * left, for which rates from scratch cost less (each new class dirties
 * its lanes from the start: on a sparse torus a quarter's starts made
 * the filling a fifth slower, a 64th's a tenth faster). */
static bool new_starts(struct filling *s)
{
	int32_t n = s->nlost;
	for (int32_t i = 0; i < s->nlive; i++) {
		int32_t c = s->live[i];
		if (started(s, c) && s->c[c].fz_lane < 0) {
			if (64 * (int64_t)(n - s->nlost + 1) > s->nlive)
				return false;
			s->lost[n++] = c;
		}
	}
	s->nlost = n;
	return true;
}

/* The exchange's time by progressive filling.  Rates change when
 * messages finish and when messages' latency is paid (a start: one event
 * per route length).  Past o->max_work (> 0) lane visits, the bound of
 * what is left (cut_short).  every_pass: a round's passes over every flow
 * and lane count too (under a launch's budget, whose estimate is in
 * visits: a 3,072-task graph on half of a 6-D torus, 22k flows, counted
 * only the live flows' lanes, and two predictions took 360 ms where 60
 * were estimated).  o->past: the bound from where the filling is
 * (class_bound), checked once every flow has started and whenever the
 * work has doubled since the last check (a few checks, each about a
 * round's cost); on a sparse 4,096-node torus a loser's bound rose past
 * its limit by the time the last flow started, 13 of its 319 rounds. */
int tp__flows_fill(const struct tp__flows *fl, double lat,
		   const struct tp__fill_opts *o, struct tp__fill_out *out,
		   double *end_of)
{
	struct filling s;
	int rc = filling_init(&s, fl);
	s.lat = lat;
	s.always_afresh = o->afresh;
	bool bounded = o->past > 0;
	if (!rc && bounded && s.c)
		rc = bound_init(&s);
	double worst = fl->intra_s;
	int64_t work = 0, next_check = fl->start[fl->nflows];
	bool started_all = false;
	memset(out, 0, sizeof *out);
	bool all_started = false;
	while (!rc && s.nlive > 0) {
		/* the next start; nothing under way: on to it, no rates to
		 * compute.  Once every class has started (the time only
		 * grows), none is left to look for: a pass over the live
		 * classes a round less */
		double next_at = HUGE_VAL;
		bool moving = all_started;
		for (int32_t i = 0; !all_started && i < s.nlive; i++) {
			int32_t c = s.live[i];
			if (started(&s, c))
				moving = true;
			else
				next_at = fmin(next_at, (double)s.hops[c] * lat);
		}
		all_started = next_at == HUGE_VAL;
		/* flows started since the last rates, when the first start to
		 * come moved (a completion's step can land on a start by
		 * rounding, so the steps' own test is not enough): new classes
		 * for rates_lazy, or the rates from scratch where they are
		 * many (each dirties its lanes from the start) or there are no
		 * rates yet */
		if (next_at != s.next_start) {
			s.afresh = s.afresh || s.next_start < 0 || !new_starts(&s);
			s.next_start = next_at;
		}
		if (!moving) {
			s.t = next_at;
			continue;
		}
		if (bounded && (work >= next_check || (!started_all && next_at == HUGE_VAL))) {
			started_all = next_at == HUGE_VAL;
			double b = class_bound(&s, worst, &work);
			next_check = 2 * work;
			if (b > o->past) {
				worst = b;
				out->past = true;
				break;
			}
		}
		if ((rc = fair_rates(&s, &work)))
			break;
		++out->rounds;
		if (o->every_pass)   /* four passes over the flows, two over the lanes */
			work += 4 * fl->nflows + 2 * (int64_t)fl->nlanes;
		if (o->max_work > 0 && work >= o->max_work) {
			/* past the work limit, what is left is bounded as a
			 * whole from here: at their current rates the slowest
			 * flows would end far too late (they speed up as the
			 * others end; 92 us against 48 on a halo) */
			double *rem, rest = -1;
			bool *done;
			flows_left(&s, &rem, &done);
			if (rem && done)
				rest = bound_rest(fl, rem, done, lat, s.t, NULL);
			free(rem);
			free(done);
			if (rest < 0)
				rc = TP_ENOMEM;
			else if (s.t + rest > worst)
				worst = s.t + rest;
			out->cut_short = true;
			break;
		}
		/* the next event: a completion, or the next start */
		double dt = HUGE_VAL;
		for (int32_t i = 0; i < s.nlive; i++) {
			int32_t c = s.live[i];
			const struct fclass *x = &s.c[c];
			if ((all_started || started(&s, c)) && x->rate > 0 &&
			    (s.head[c] - s.sent[c]) / x->rate < dt)
				dt = (s.head[c] - s.sent[c]) / x->rate;
		}
		if (!(dt < HUGE_VAL) && !(next_at < HUGE_VAL))
			break;      /* no rate anywhere: cannot happen with bw > 0 */
		double next_start = next_at - s.t;
		/* flows finishing close to the next event finish with it */
		double step = fmin(dt, next_start);
		double cut = dt < HUGE_VAL ? fmax(dt * (1 + BATCH_SHARE),
						  dt + ELAPSED_SHARE * (s.t + dt)) : -1;
		if (next_start < dt)
			cut = fmin(cut, next_start);
		int32_t kept = 0;
		for (int32_t i = 0; i < s.nlive; i++) {
			int32_t c = s.live[i];
			struct fclass *x = &s.c[c];
			s.live[kept++] = c;
			if (!all_started && !started(&s, c))
				continue;
			if (members_end(&s, c, cut, &worst, end_of))
				s.lost[s.nlost++] = c;
			if (x->m0 == x->m1) {
				s.done[c] = true;
				s.frozen[c] = true;
				s.ndone++;
				kept--;
			} else {
				s.sent[c] += x->rate * step;
			}
		}
		s.nlive = kept;
		/* on a start, exactly its time: started() must see it */
		s.t = next_start <= dt ? next_at : s.t + step;
	}
	if (end_of && (rc || !s.c))
		for (int64_t f = 0; f < fl->nflows; f++)
			end_of[f] = worst;
	else if (end_of)
		for (int32_t c = 0; c < s.ncls; c++)
			for (int32_t k = s.c[c].m0; k < s.c[c].m1; k++)
				end_of[s.memb[k].flow] = worst;
	out->lazy = s.nlazy;
	out->work = work;
	filling_free(&s);
	out->time = worst;
	return rc;
}
