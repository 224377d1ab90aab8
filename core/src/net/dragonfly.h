/* topoplace — what net/dragonfly.c's dragonflies offer beyond their table
 * and the queries of machine_internal.h: the bandwidths of their links for
 * the time model (topoplace.conf's LocalBandwidth= and GlobalBandwidth=,
 * conf/kind_dragonfly.c). */
#ifndef TOPOPLACE_NET_DRAGONFLY_H
#define TOPOPLACE_NET_DRAGONFLY_H

#include "net/machine_internal.h"

/* The bandwidths (bytes/s; 0: the fabric's default) of a dragonfly's links
 * inside a group and between groups.  Nothing when m is no dragonfly. */
void tp__dfly_set_bandwidths(tp_machine *m, double local_bw, double global_bw);

#endif
