/* topoplace — the names of the policies and of the metrics, parsed and
 * printed: topoplace.conf's DefaultPolicy= and DefaultMetric=, a request's
 * policy and metric, and every report.  Below all of their users (the
 * config reader, the policy layer, the metrics, the pipeline), so that a
 * reader need not call up into map/ for a name.
 */
#include <stddef.h>
#include <strings.h>

#include <topoplace/place.h>
#include "util/names_internal.h"

static const struct {
	const char *name;
	enum tp_policy p;
} POLICIES[] = {
	{ "none", TP_POLICY_NONE },       { "geometric", TP_POLICY_GEOMETRIC },
	{ "block", TP_POLICY_BLOCK },     { "cyclic", TP_POLICY_CYCLIC },
	{ "random", TP_POLICY_RANDOM },   { "zorder", TP_POLICY_ZORDER },
	{ "graph", TP_POLICY_GRAPH },     { "auto", TP_POLICY_AUTO },
	{ "modcolor", TP_POLICY_MODCOLOR },
	{ "hierarchical", TP_POLICY_HIERARCHICAL },
};
#define NPOLICIES (sizeof POLICIES / sizeof POLICIES[0])

int tp_policy_parse(const char *name, enum tp_policy *out, tp_error *err)
{
	for (size_t i = 0; name && i < NPOLICIES; i++)
		if (!strcasecmp(name, POLICIES[i].name)) {
			*out = POLICIES[i].p;
			return 0;
		}
	return tp_error_set(err, TP_EINVAL,
			    "unknown policy '%s' (valid: none, geometric, block, cyclic, random, zorder, graph, auto, modcolor, hierarchical)",
			    name ? name : "");
}

const char *tp_policy_name(enum tp_policy p)
{
	for (size_t i = 0; i < NPOLICIES; i++)
		if (POLICIES[i].p == p)
			return POLICIES[i].name;
	return "unknown";
}

int tp_metric_parse(const char *name, enum tp_metric_kind *out, tp_error *err)
{
	if (!name || !out)
		return tp_error_set(err, TP_EINVAL,
				    "metric: missing name (valid: hop-bytes, congestion)");
	if (!strcasecmp(name, "hop-bytes") || !strcasecmp(name, "hopbytes")) {
		*out = TP_METRIC_HOP_BYTES;
		return TP_OK;
	}
	if (!strcasecmp(name, "congestion")) {
		*out = TP_METRIC_CONGESTION;
		return TP_OK;
	}
	return tp_error_set(err, TP_EINVAL,
			    "unknown metric '%s' (valid: hop-bytes, congestion)",
			    name);
}

const char *tp_metric_name(enum tp_metric_kind k)
{
	switch (k) {
	case TP_METRIC_HOP_BYTES: return "hop-bytes";
	case TP_METRIC_CONGESTION: return "congestion";
	}
	return "unknown";
}
