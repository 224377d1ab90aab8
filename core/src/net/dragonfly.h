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

/* ---- dragonfly node names (dragonfly.c): NodeNameFormat= ----
 * "x{group-1000}c{switch}s{*}b{*}n{*}" (see dragonfly.c). */
struct tp__dfly_format;
int tp__dfly_format_parse(const char *fmt, struct tp__dfly_format **out,
			  tp_error *err);
void tp__dfly_format_free(struct tp__dfly_format *f);
/* -1 when name matches (group and switch numbers, offsets applied, into
 * *group and *sw), else the position of the first character that does
 * not. */
int tp__dfly_format_match(const struct tp__dfly_format *f, const char *name,
			  long long *group, long long *sw);

#endif
