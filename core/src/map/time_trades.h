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

#endif
