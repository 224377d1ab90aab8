/* topoplace — the progressive filling of one exchange's flows
 * (map/predict_fill.h): max-min fair rates round by round, each round
 * after completions alone redoing only the later freezes; and the
 * exchange's lower bound.  The model is described in map/predict.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/error.h>
#include "map/predict_fill.h"
#include "map/predict_internal.h"
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
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && (h->e[c + 1].key < h->e[c].key ||
				     (h->e[c + 1].key == h->e[c].key &&
				      h->e[c + 1].lane < h->e[c].lane)))
			c++;
		if (last.key < h->e[c].key ||
		    (last.key == h->e[c].key && last.lane <= h->e[c].lane))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	h->e[i] = last;
	return top;
}

/* A lane's bandwidth left, and the weight of its unfrozen messages. */
struct lane_left {
	double R, N;
};

/* A flow as a freeze reads and writes it, in one cache line: these were
 * eight arrays, and a freeze's visit to a flow touched a line of each (a
 * 4,096-task halo's filling, 23k flows over 33k lanes, was bound by
 * memory). */
struct fflow {
	double w;            /* its weight in sharing (tp__flows) */
	double mw;           /* mult * w: its messages' weight on a lane */
	double mult;
	double rate;         /* per message */
	int64_t fs;          /* its lanes that can bind: blanes[fs, fs + nb) */
	int32_t nb;
	int32_t route;       /* its whole route's lanes (the work counted) */
	int32_t ev_of, pos_of;   /* its freeze's event, and its place in flog
				    (-1: none) */
};

/* The filling's lanes are those that can bind (keep_binding), numbered
 * in the exchange's lane order: ties go by lane as they did. */
struct filling {
	const struct tp__flows *fl;
	struct fflow *f;
	bool *frozen, *done; /* per flow, apart: a lane's flows are checked
				far more often than fixed (a done flow stays
				frozen) */
	int32_t nlanes;      /* lanes that can bind */
	double *bw;          /* theirs */
	int32_t *blanes;     /* each flow's, by fflow.fs */
	int64_t nblanes;
	int64_t *lstart;     /* lane -> its flows (transposed) */
	int32_t *lflows;
	struct lane_left *ln;
	double *rem;         /* bytes left of each message */
	int64_t *live, nlive;  /* the flows not done, in flow order: each
				  round's passes visit these alone (a
				  trace's sizes spread the completions over
				  hundreds of rounds, most with few flows
				  left) */
	int64_t ndone;       /* flows done since the lanes' lists were last
				compacted */
	double t, lat;       /* now; a lane's latency */
	struct heap h;       /* lanes back in at a grown share */
	struct heap_ent *pend, *pend2;   /* the lanes by first share (sorted) */
	/* The last rates' freezes, kept for the next round (fair_rates):
	 * flog the flows in the order they froze, ev_first[e] where event
	 * e's flows begin in it (an event: a lane fixing its flows' rates),
	 * and each flow's ev_of and pos_of. */
	int32_t *flog, nflog, *ev_first, nev;
	int32_t restart;     /* the first event of a flow done since the last
				rates (INT32_MAX: none) */
	bool afresh;         /* the next rates from scratch: flows started */
	double next_start;   /* the first start to come at the last rates */
	bool always_afresh;  /* every round's (the check of the other way) */
	int64_t *stamp, stamp_now;  /* per lane: touched this round */
	int32_t *touched;
	int32_t *kept;       /* one lane's frozen flows' places */
};

/* A message waits its route's latency, then transfers (SimGrid's flow
 * model, CM02): a short route's messages take the lanes first. */
static bool started(const struct filling *s, int64_t f)
{
	return (double)s->fl->hops[f] * s->lat <= s->t;
}

static void filling_free(struct filling *s)
{
	free(s->f);
	free(s->frozen);
	free(s->done);
	free(s->bw);
	free(s->blanes);
	free(s->lstart);
	free(s->lflows);
	free(s->ln);
	free(s->rem);
	free(s->live);
	free(s->h.e);
	free(s->pend);
	free(s->pend2);
	free(s->flog);
	free(s->ev_first);
	free(s->stamp);
	free(s->touched);
	free(s->kept);
}

/* Each flow's lanes that can fix its rate, into s->blanes (the exchange's
 * lane numbers; count[l]: lane l's flows).  A lane only one flow crosses
 * fixes that flow's rate at its bandwidth / the flow's weight, never
 * before the flow's slowest lane does, whose share is at most that: of
 * such lanes only the flow's slowest stays, unless a lane it shares is as
 * slow.  The same rates with far fewer lanes to sort (on a sparse torus
 * most links carry one message: 109k lanes, 23k flows). */
static int keep_binding(struct filling *s, const struct tp__flows *fl,
			const int64_t *count)
{
	s->blanes = tp__malloc_array((size_t)fl->start[fl->nflows] + 1,
				     sizeof *s->blanes);
	if (!s->blanes)
		return TP_ENOMEM;
	int64_t n = 0;
	for (int64_t f = 0; f < fl->nflows; f++) {
		s->f[f].fs = n;
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
		s->f[f].nb = (int32_t)(n - s->f[f].fs);
	}
	s->nblanes = n;
	return TP_OK;
}

/* The lanes that can bind numbered in the exchange's order, each flow's
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

static int filling_init(struct filling *s, const struct tp__flows *fl)
{
	memset(s, 0, sizeof *s);
	s->fl = fl;
	/* flows, events and places as int32_t: 2^31 flows would be past any
	 * work limit by far */
	if (fl->nflows >= INT32_MAX || fl->nflows < 1)
		return fl->nflows < 1 ? TP_OK : TP_ENOMEM;
	size_t F = (size_t)fl->nflows + 1;
	s->f = tp__calloc(F, sizeof *s->f);
	int64_t *count = tp__calloc((size_t)fl->nlanes + 1, sizeof *count);
	int32_t *num = tp__malloc_array((size_t)fl->nlanes + 1, sizeof *num);
	int rc = s->f && count && num ? TP_OK : TP_ENOMEM;
	for (int64_t k = 0; !rc && k < fl->start[fl->nflows]; k++)
		count[fl->lanes[k]]++;
	for (int32_t l = 0; !rc && l < fl->nlanes; l++)
		num[l] = -1;
	if (!rc)
		rc = keep_binding(s, fl, count);
	if (!rc)
		rc = number_lanes(s, fl, num);
	free(count);
	free(num);
	if (rc)
		return rc;
	size_t L = (size_t)s->nlanes + 1;
	s->lstart = calloc(L + 1, sizeof *s->lstart);
	s->lflows = tp__malloc_array((size_t)s->nblanes + 1, sizeof *s->lflows);
	s->ln = tp__malloc_array(L, sizeof *s->ln);
	s->frozen = calloc(F, sizeof *s->frozen);
	s->done = calloc(F, sizeof *s->done);
	s->rem = tp__malloc_array(F, sizeof *s->rem);
	s->live = tp__malloc_array(F, sizeof *s->live);
	s->pend = tp__malloc_array(L, sizeof *s->pend);
	s->pend2 = tp__malloc_array(L, sizeof *s->pend2);
	s->flog = tp__malloc_array(F, sizeof *s->flog);
	s->ev_first = tp__malloc_array(F + 1, sizeof *s->ev_first);
	s->stamp = calloc(L, sizeof *s->stamp);
	s->touched = tp__malloc_array(L, sizeof *s->touched);
	if (!s->lstart || !s->lflows || !s->ln || !s->frozen || !s->done || !s->rem || !s->live ||
	    !s->pend || !s->pend2 || !s->flog || !s->ev_first || !s->stamp ||
	    !s->touched)
		return TP_ENOMEM;
	s->restart = INT32_MAX;
	s->next_start = -1;     /* no start seen: the first rates afresh */
	for (int64_t f = 0; f < fl->nflows; f++) {
		struct fflow *x = &s->f[f];
		s->live[f] = f;
		s->rem[f] = fl->bytes[f];
		x->w = fl->w[f];
		x->mult = fl->mult[f];
		x->mw = fl->mult[f] * fl->w[f];
		x->route = (int32_t)(fl->start[f + 1] - fl->start[f]);
		x->ev_of = -1;
		for (int64_t k = x->fs; k < x->fs + x->nb; k++)
			s->lstart[s->blanes[k] + 1]++;
	}
	s->nlive = fl->nflows;
	for (int32_t l = 0; l < s->nlanes; l++)
		s->lstart[l + 1] += s->lstart[l];
	int64_t *fill = tp__malloc_array(L, sizeof *fill);
	if (!fill)
		return TP_ENOMEM;
	memcpy(fill, s->lstart, (size_t)s->nlanes * sizeof *fill);
	for (int64_t f = 0; f < fl->nflows; f++)
		for (int64_t k = s->f[f].fs; k < s->f[f].fs + s->f[f].nb; k++)
			s->lflows[fill[s->blanes[k]]++] = (int32_t)f;
	free(fill);
	int64_t most = 1;
	for (int32_t l = 0; l < s->nlanes; l++)
		if (s->lstart[l + 1] - s->lstart[l] > most)
			most = s->lstart[l + 1] - s->lstart[l];
	s->kept = tp__malloc_array((size_t)most, sizeof *s->kept);
	return s->kept ? TP_OK : TP_ENOMEM;
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

/* The done flows out of the lanes' lists, the others in their order:
 * a lane's list is walked whenever it fixes rates, and a trace's spread
 * completions left most entries done. */
static void compact_lanes(struct filling *s)
{
	int64_t w = 0;
	for (int32_t l = 0; l < s->nlanes; l++) {
		int64_t from = s->lstart[l], to = s->lstart[l + 1];
		s->lstart[l] = w;
		for (int64_t k = from; k < to; k++)
			if (!s->done[s->lflows[k]])
				s->lflows[w++] = s->lflows[k];
	}
	s->lstart[s->nlanes] = w;
	s->ndone = 0;
}

/* Every lane's bandwidth and unfrozen weight from scratch, the lanes with
 * weight into pend (np), the flows to fix into *live. */
static void rates_afresh(struct filling *s, int64_t *work, size_t *np,
			 int64_t *live)
{
	for (int32_t l = 0; l < s->nlanes; l++) {
		s->ln[l].R = s->bw[l];
		s->ln[l].N = 0;
	}
	*live = 0;
	for (int64_t i = 0; i < s->nlive; i++) {
		struct fflow *x = &s->f[s->live[i]];
		bool fr = s->frozen[s->live[i]] = !started(s, s->live[i]);
		x->rate = 0;
		x->ev_of = -1;
		if (fr)
			continue;
		++*live;
		for (int64_t k = x->fs; k < x->fs + x->nb; k++)
			s->ln[s->blanes[k]].N += x->mw;
		/* the whole route, as the limits count it */
		*work += x->route;
	}
	s->nflog = s->nev = 0;
	*np = 0;
	for (int32_t l = 0; l < s->nlanes; l++)
		if (s->ln[l].N > 0)
			s->pend[(*np)++] = (struct heap_ent){ s->ln[l].R / s->ln[l].N, l };
}

static int cmp_lane(const void *x, const void *y)
{
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	return (i > j) - (i < j);
}

/* The last rates again, flows having finished since (and none started):
 * the freezes before the first done flow's event stand, since a flow
 * gone only made its lanes' shares larger and none of them froze before
 * it did; the rest are undone, and their lanes' bandwidth and weight
 * rebuilt as the whole filling would have them at that event (the same
 * sums in the same order: the rates are the same to the last bit, which
 * test_predict's afresh_same checks).  The finished flows are the
 * fastest, which froze last: a round fixes hundreds of flows, not the
 * whole exchange's.  false when redoing most of the freezes would cost
 * more than all of them, or a frozen flow has no event: rates_afresh then
 * sets every flow and lane anew. */
static bool rates_again(struct filling *s, int64_t *work, size_t *np,
			int64_t *live)
{
	if (s->restart < 0)
		return false;
	int32_t e0 = s->restart < s->nev ? s->restart : s->nev;
	int32_t from = e0 < s->nev ? s->ev_first[e0] : s->nflog;
	if (2 * (int64_t)(s->nflog - from) > s->nlive)
		return false;
	s->stamp_now++;
	int32_t nt = 0;
	*live = 0;
	for (int32_t k = from; k < s->nflog; k++) {
		if (s->done[s->flog[k]])
			continue;
		struct fflow *x = &s->f[s->flog[k]];
		s->frozen[s->flog[k]] = false;
		x->rate = 0;
		x->ev_of = -1;
		++*live;
		for (int64_t q = x->fs; q < x->fs + x->nb; q++) {
			int32_t l = s->blanes[q];
			if (s->stamp[l] != s->stamp_now) {
				s->stamp[l] = s->stamp_now;
				s->touched[nt++] = l;
			}
		}
		*work += x->route;
	}
	s->nflog = from;
	s->nev = e0;
	/* in lane order, as the whole filling lists them: sort_by_key then
	 * has little to do on ties; past a few lanes in a hundred, a pass
	 * over the marks costs less than sorting them */
	if (nt > s->nlanes / 64) {
		nt = 0;
		for (int32_t l = 0; l < s->nlanes; l++)
			if (s->stamp[l] == s->stamp_now)
				s->touched[nt++] = l;
	} else {
		qsort(s->touched, (size_t)nt, sizeof *s->touched, cmp_lane);
	}
	*np = 0;
	for (int32_t i = 0; i < nt; i++) {
		int32_t l = s->touched[i];
		double N = 0, R = s->bw[l];
		int64_t nk = 0;
		for (int64_t k = s->lstart[l]; k < s->lstart[l + 1]; k++) {
			int32_t f = s->lflows[k];
			if (s->done[f] || !started(s, f))
				continue;
			const struct fflow *x = &s->f[f];
			N += x->mw;
			if (!s->frozen[f])
				continue;
			if (x->ev_of < 0)
				return false;   /* frozen by no event: start afresh */
			s->kept[nk++] = x->pos_of;
		}
		*work += s->lstart[l + 1] - s->lstart[l];
		/* the frozen flows in the order they froze */
		for (int64_t j = 1; j < nk; j++) {
			int32_t y = s->kept[j];
			int64_t m = j;
			for (; m > 0 && s->kept[m - 1] > y; m--)
				s->kept[m] = s->kept[m - 1];
			s->kept[m] = y;
		}
		for (int64_t j = 0; j < nk; j++) {
			const struct fflow *x = &s->f[s->flog[s->kept[j]]];
			R -= x->mult * x->rate;
			N -= x->mw;
		}
		s->ln[l].R = R;
		s->ln[l].N = N;
		if (N > 0)
			s->pend[(*np)++] = (struct heap_ent){ R / N, l };
	}
	return true;
}

/* Max-min rates of the unfinished flows; the work done (lanes touched)
 * added to *work. */
static int fair_rates(struct filling *s, int64_t *work)
{
	if (s->ndone > s->nlive / 4)
		compact_lanes(s);
	size_t np;
	int64_t live;
	if (s->afresh || s->always_afresh || !rates_again(s, work, &np, &live))
		rates_afresh(s, work, &np, &live);
	s->afresh = false;
	s->restart = INT32_MAX;
	s->h.n = 0;
	const struct heap_ent *pend = sort_by_key(s->pend, s->pend2, np);
	size_t next = 0;
	/* a lane's share only grows as flows freeze elsewhere (each freezes at
	 * the smallest share), so its entry may be stale only by being low:
	 * it goes back in, onto the heap, at its share when it comes out (one
	 * entry a lane at a time); the lanes come out in (share, lane) order
	 * from the sorted ones and the heap together */
	while ((next < np || s->h.n) && live > 0) {
		struct heap_ent top;
		if (s->h.n && (next == np || ent_before(s->h.e[0], pend[next])))
			top = heap_pop(&s->h);
		else
			top = pend[next++];
		int32_t l = top.lane;
		if (!(s->ln[l].N > 1e-9))
			continue;    /* its flows all frozen */
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
			int32_t f = s->lflows[k];
			if (s->frozen[f])
				continue;
			struct fflow *x = &s->f[f];
			if (!any)
				s->ev_first[s->nev] = s->nflog;
			any = true;
			x->ev_of = s->nev;
			x->pos_of = s->nflog;
			s->flog[s->nflog++] = f;
			s->frozen[f] = true;
			live--;
			x->rate = share * x->w;
			for (int64_t q = x->fs; q < x->fs + x->nb; q++) {
				struct lane_left *y = &s->ln[s->blanes[q]];
				y->R -= x->mult * x->rate;
				y->N -= x->mw;
			}
			*work += x->route;
		}
		if (any)
			s->nev++;
		s->ln[l].N = 0;
	}
	return TP_OK;
}

/* The exchange's time in seconds by progressive filling; rounds into
 * *rounds.  Rates change when messages finish and when messages' latency
 * is paid (a start: one event per route length).  Past max_work (> 0)
 * lane visits, the bound of what is left (*cut_short).  every_pass: a
 * round's passes over every flow and lane count too (under a launch's
 * budget, whose estimate is in visits: a 3,072-task graph on half of a
 * 6-D torus, 22k flows, counted only the live flows' lanes, and two
 * predictions took 360 ms where 60 were estimated, the whole budget). */
int tp__flows_fill(const struct tp__flows *fl, double lat, int64_t max_work,
		   bool every_pass, bool afresh, double *out, int32_t *rounds,
		   bool *cut_short, double *end_of)
{
	struct filling s;
	int rc = filling_init(&s, fl);
	s.lat = lat;
	s.always_afresh = afresh;
	double worst = fl->intra_s;
	int64_t left = fl->nflows, work = 0;
	*rounds = 0;
	*cut_short = false;
	while (!rc && left > 0) {
		/* the next start; nothing under way: on to it, no rates to
		 * compute */
		double next_at = HUGE_VAL;
		bool moving = false;
		for (int64_t i = 0; i < s.nlive; i++) {
			int64_t f = s.live[i];
			if (started(&s, f))
				moving = true;
			else
				next_at = fmin(next_at, (double)fl->hops[f] * lat);
		}
		/* flows started since the last rates, when the first start to
		 * come moved: the rates from scratch (a completion's step can
		 * land on a start by rounding, so the steps' own test is not
		 * enough) */
		if (next_at != s.next_start) {
			s.afresh = true;
			s.next_start = next_at;
		}
		if (!moving) {
			s.t = next_at;
			continue;
		}
		if ((rc = fair_rates(&s, &work)))
			break;
		++*rounds;
		if (every_pass)   /* four passes over the flows, two over the lanes */
			work += 4 * fl->nflows + 2 * (int64_t)fl->nlanes;
		if (max_work > 0 && work >= max_work) {
			/* past the work limit, what is left is bounded as a
			 * whole from here: at their current rates the slowest
			 * flows would end far too late (they speed up as the
			 * others end; 92 us against 48 on a halo) */
			double rest = bound_rest(fl, s.rem, s.done, lat, s.t, NULL);
			if (rest < 0)
				rc = TP_ENOMEM;
			else if (s.t + rest > worst)
				worst = s.t + rest;
			*cut_short = true;
			break;
		}
		/* the next event: a completion, or the next start */
		double dt = HUGE_VAL;
		for (int64_t i = 0; i < s.nlive; i++) {
			int64_t f = s.live[i];
			if (started(&s, f) && s.f[f].rate > 0 &&
			    s.rem[f] / s.f[f].rate < dt)
				dt = s.rem[f] / s.f[f].rate;
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
		int64_t kept = 0;
		for (int64_t i = 0; i < s.nlive; i++) {
			int64_t f = s.live[i];
			struct fflow *x = &s.f[f];
			s.live[kept++] = f;
			if (!started(&s, f))
				continue;
			double need = x->rate > 0 ? s.rem[f] / x->rate : HUGE_VAL;
			if (need <= cut) {
				double end = s.t + need;
				if (end > worst)
					worst = end;
				if (end_of)
					end_of[f] = end;
				s.done[f] = true;
				s.frozen[f] = true;
				s.ndone++;
				if (x->ev_of < s.restart)
					s.restart = x->ev_of;
				kept--;
				left--;
			} else {
				s.rem[f] -= x->rate * step;
			}
		}
		s.nlive = kept;
		/* on a start, exactly its time: started() must see it */
		s.t = next_start <= dt ? next_at : s.t + step;
	}
	if (end_of)
		for (int64_t f = 0; f < fl->nflows; f++)
			if (!s.done || !s.done[f])
				end_of[f] = worst;
	filling_free(&s);
	*out = worst;
	return rc;
}
