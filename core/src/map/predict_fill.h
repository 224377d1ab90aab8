/* topoplace — one exchange's messages as flows over lanes, and their
 * progressive filling (map/predict_fill.c), for map/predict.c. */
#ifndef TOPOPLACE_PREDICT_FILL_H
#define TOPOPLACE_PREDICT_FILL_H

#include <stdbool.h>
#include <stdint.h>

/* The messages of one exchange, merged into flows (map/predict.c's
 * build_flows): each crosses lanes (network.h), dense indices. */
struct tp__flows {
	int64_t nflows;
	int64_t *start;      /* nflows + 1: its lanes in lanes[] */
	int32_t *lanes;      /* dense lane indices */
	double *bytes;       /* of one message */
	double *mult;        /* messages it stands for */
	double *w;           /* its messages' weight in sharing (1, or with
				RTT-weighted sharing 1 / its hops: the
				shortest routes take the largest shares) */
	double *w_rtt;       /* sharing not known (TP__SHARING_WORSE): the
				RTT weights of a second filling, w then
				fair's; else NULL */
	int32_t *ends[2];    /* its two nodes, as allocation indices */
	int32_t *hops;       /* lanes with a latency (network.h:
				port_cables) */
	int32_t nlanes;
	double *bw;          /* per dense lane, bytes/s */
	double intra_s;      /* the slowest message between tasks of a node */
	int64_t messages;
};

/* The exchange's lower bound in seconds: the busiest lane's bytes /
 * bandwidth, or the slowest message alone on its slowest lane once its
 * latency (lat a hop) is paid; that message's time into *alone_s (NULL:
 * not wanted).  -1 when out of memory. */
double tp__flows_bound(const struct tp__flows *fl, double lat, double *alone_s);

/* What a filling is asked.  max_work (> 0): past that many lane visits,
 * the bound of what is left (cut_short); every_pass: a round's passes
 * over the flows and lanes count too; afresh: every round's rates from
 * scratch (the check of the incremental rounds); past (> 0, seconds): once
 * the bound from where the filling is shows the exchange ends after past,
 * it stops there (a candidate out of the running: its time is not
 * wanted, only that it is past). */
struct tp__fill_opts {
	int64_t max_work;
	bool every_pass, afresh;
	double past;
};

struct tp__fill_out {
	double time;         /* seconds; a bound when cut_short or past */
	int32_t rounds;
	int32_t lazy;        /* rounds whose rates came from the last ones,
				redone only where they changed or from the
				first event that changed */
	int64_t work;        /* lane visits counted */
	bool cut_short, past;
};

/* The exchange's time by progressive filling into *out; end_of (may be
 * NULL) each flow's end.  TP_OK or TP_ENOMEM. */
int tp__flows_fill(const struct tp__flows *fl, double lat,
		   const struct tp__fill_opts *o, struct tp__fill_out *out,
		   double *end_of);

#endif
