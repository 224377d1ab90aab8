/* topoplace — the names of the policies and of the metrics (util/names.c):
 * the part that is not exported.  tp_policy_parse and tp_policy_name are
 * <topoplace/place.h>'s, tp_metric_name is <topoplace/metrics.h>'s. */
#ifndef TOPOPLACE_NAMES_INTERNAL_H
#define TOPOPLACE_NAMES_INTERNAL_H

#include <topoplace/metrics.h>

/* Parse "hop-bytes" / "congestion". Returns 0 or TP_EINVAL. */
int tp_metric_parse(const char *name, enum tp_metric_kind *out, tp_error *err);

#endif
