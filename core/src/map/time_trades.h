/* topoplace — whole nodes trade places for the slowest messages, each
 * trade judged by the predicted time (map/time_trades.c). */
#ifndef TOPOPLACE_TIME_TRADES_H
#define TOPOPLACE_TIME_TRADES_H

#include <topoplace/alloc.h>
#include <topoplace/pattern.h>

/* Trades in map (allocation indices) while they end the predicted
 * exchange sooner or relieve the nodes at its end, until none is found,
 * their work limit, or deadline_ms (tp__now_ms; 0: none).  Without a
 * deadline, up to `threads` trades are predicted side by side; the
 * result is the same on any number.  The trades kept into *trades;
 * nothing is done where the exchange can only be bounded.  TP_ENOMEM, or
 * TP_OK. */
int tp__time_trades(const tp_graph *g, const tp_alloc *a, int32_t *map,
		    double deadline_ms, int threads, int64_t *trades,
		    tp_error *err);

/* A node tries to trade with this many partners (its nearest allocated
 * nodes either side of it). */
#define TP__TIME_TRADES_PARTNERS 16

/* The tries the trades' work limit affords where one prediction does
 * work (tp__prediction_work); are they enough for one node's partners?
 * Fewer cannot finish a single node's search: at 4,096 tasks on a torus
 * (8 tries, 1.6 s) they found 0.2 %, at 512 ranks of a captured trace
 * (7 tries, 0.3 s) 0.15 %, both under the tie share. */
int64_t tp__time_trades_tries(int64_t work);
bool tp__time_trades_worth(int64_t work);

#endif
