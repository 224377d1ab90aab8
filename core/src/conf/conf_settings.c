/* topoplace — topoplace.conf's settings: the keys every network shares
 * (Network=, the box Dims=, Wrap=, NodesPerRouter=, LinkBandwidth=,
 * Distance=, Slurm-style TopologyFile=, LevelCost=, LevelBandwidth=, a
 * switch tree's LevelUplinks= and UplinkRouting=, the site's DefaultPolicy=, DefaultMetric=, TimeBudgetMs=, MaxThreads=, the
 * time model's HopLatency=, NodeBandwidth=, IntraNodeBandwidth=,
 * FlowSharing=), a settings line's dispatch to them and to the kinds' own
 * keys, and the value parsers and messages the kinds use too (the
 * tp__conf_* services of conf/conf_kind.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topoplace/place.h>
#include "conf/conf_kind.h"
#include "util/util_internal.h"
#include "conf/conf_loader.h"
#include "util/names_internal.h"
#include "net/tree.h"

/* ---- messages ---- */

int tp__conf_error(struct tp__conf_reader *r, const char *file, int line,
		   int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tp__line_verror(r->err, file ? file : r->what, line, code, fmt, ap);
	va_end(ap);
	return rc;
}

int tp__conf_oom(struct tp__conf_reader *r)
{
	return oom(loader_of(r));
}
/* ---- small parsers ---- */

int tp__conf_parse_ll(const char *s, long long lo, long long hi, long long *out)
{
	if (!*s || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end)
		return -1;
	if (errno == ERANGE || v < lo || v > hi)
		return -2;
	*out = v;
	return 0;
}

int tp__conf_parse_number(const char *s, bool allow_zero, double *out)
{
	if (!*s || (*s != '.' && *s != '-' && *s != '+' && (*s < '0' || *s > '9')))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || !isfinite(v))
		return -1;
	if (v < 0 || (!allow_zero && v == 0))
		return -2;
	*out = v;
	return 0;
}

struct conf_unit {
	const char *name;
	double scale;
};

/* A number followed by one of units[n] (none: bare_scale), scaled: 0, -1
 * not such a value, -2 out of range (<= 0, or < 0 when allow_zero).  The
 * number's "e" of "1e3GB/s" is its own: no unit starts with e.  nocase:
 * the unit's case does not matter (bytes; a bandwidth's b is bits). */
static int parse_with_unit(const char *s, const struct conf_unit *units,
			   size_t n, double bare_scale, bool allow_zero,
			   bool nocase, double *out)
{
	char num[64];
	size_t len = strspn(s, "0123456789.eE+-");
	if (len == 0 || len >= sizeof num)
		return -1;
	memcpy(num, s, len);
	num[len] = '\0';
	double scale = bare_scale;
	if (s[len]) {
		size_t i = 0;
		while (i < n && (nocase ? strcasecmp(s + len, units[i].name)
				      : strcmp(s + len, units[i].name)))
			i++;
		if (i == n)
			return -1;
		scale = units[i].scale;
	}
	double v;
	int rc = tp__conf_parse_number(num, allow_zero, &v);
	if (rc)
		return rc;
	if (!isfinite(v * scale) || (!allow_zero && v * scale <= 0))
		return -2;
	*out = v * scale;
	return 0;
}

/* A bandwidth in GB/s (10^9 bytes/s): a bare number, or with a unit
 * (25GB/s, 200Gb/s, 200Gbps, 25GBps, 400MB/s, 1.6TB/s; B bytes, b bits).
 * 0, -1 not a bandwidth, -2 not > 0. */
int tp__conf_parse_bandwidth(const char *s, double *gbps)
{
	static const struct conf_unit units[] = {
		{ "TB/s", 1e3 }, { "TBps", 1e3 }, { "Tb/s", 125 }, { "Tbps", 125 },
		{ "GB/s", 1 }, { "GBps", 1 }, { "Gb/s", 0.125 }, { "Gbps", 0.125 },
		{ "MB/s", 1e-3 }, { "MBps", 1e-3 },
		{ "Mb/s", 1.25e-4 }, { "Mbps", 1.25e-4 },
	};
	return parse_with_unit(s, units, sizeof units / sizeof *units, 1, false,
			       false, gbps);
}

/* A time in seconds: a bare number of microseconds, or with a unit (ns,
 * us, ms, s).  0, -1 not a time, -2 negative. */
int tp__conf_parse_time(const char *s, double *sec)
{
	static const struct conf_unit units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
	};
	return parse_with_unit(s, units, sizeof units / sizeof *units, 1e-6, true,
			       false, sec);
}

int tp__conf_bandwidth(struct tp__conf_reader *r, const struct tp__conf_tok *t,
		       double *gbps)
{
	int rc = tp__conf_parse_bandwidth(t->val, gbps);
	if (rc)
		return tp__conf_error(r, NULL, t->line, TP_EINVAL,
				      "%s=%s: %s", t->key, t->val, rc == -2
				      ? "not a positive bandwidth"
				      : "not a bandwidth (GB/s, or a number with "
				      "GB/s, Gb/s, Gbps, MB/s, ...)");
	return TP_OK;
}

int tp__conf_int(struct tp__conf_reader *r, const struct tp__conf_tok *t,
		 const char *key, long long lo, long long hi, int *val)
{
	long long v = 0;
	if (tp__conf_parse_ll(t->val, lo, hi, &v))
		return tp__conf_error(r, NULL, t->line, TP_EINVAL,
				      "%s=%s: expected an integer in %lld..%lld",
				      key ? key : t->key, t->val, lo, hi);
	*val = (int)v;
	return TP_OK;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* Split s in place at sep; fills parts[0..max-1], returns the count, or
 * max + 1 when there are more. */
int tp__ld_split(char *s, char sep, char **parts, int max)
{
	int n = 0;
	for (;;) {
		char *e = strchr(s, sep);
		if (n == max)
			return max + 1;
		parts[n++] = s;
		if (!e)
			return n;
		*e = '\0';
		s = e + 1;
	}
}

/* A file named by a key could not be read: "KEY=VALUE: PATH: problem", the
 * path left out when it is the value itself. */
int tp__ld_file_err(struct loader *ld, int line, int rc, const char *key,
		    const char *val, const char *path, const tp_error *e2)
{
	size_t n = strlen(path);
	const char *msg = e2->msg;
	if (!strcmp(val, path) && !strncmp(msg, path, n) && msg[n] == ':' &&
	    msg[n + 1] == ' ')
		msg += n + 2;
	return lerr(ld, NULL, line, rc, "%s=%s: %s", key, val, msg);
}

/* ---- settings ---- */

static int set_once(struct loader *ld, const struct tp__conf_tok *t, int *seen_line,
		    bool shape)
{
	if (*seen_line)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "%s= given twice (first on line %d)", t->key, *seen_line);
	if (shape && ld->c->b.m)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "%s= must come before the first NodeName= or CoordFile= line (line %d)",
			    t->key, ld->first_node_line);
	*seen_line = t->line;
	return TP_OK;
}

static char *keep_text(struct loader *ld, char **slot, const char *v)
{
	free(*slot);
	*slot = strdup(v);
	if (!*slot)
		oom(ld);
	return *slot;
}

char *tp__conf_keep(struct tp__conf_reader *r, char **slot, const char *v)
{
	return keep_text(loader_of(r), slot, v);
}

static int set_network(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.net_line, true);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "slurm")) {
		ld->slurm_net = true;
		return TP_OK;
	}
	int n = 0;
	for (int i = 0; tp__conf_kinds[i]; i++) {
		const struct tp__conf_kind *k = tp__conf_kinds[i];
		if (k->selectable && !strcasecmp(t->val, k->name)) {
			ld->c->kind = k;
			return TP_OK;
		}
		n += k->selectable;
	}
	/* "slurm, torus, mesh ... or block": the kinds Network= takes */
	char names[512];
	size_t len = (size_t)snprintf(names, sizeof names, "slurm");
	for (int i = 0; tp__conf_kinds[i] && len < sizeof names; i++)
		if (tp__conf_kinds[i]->selectable)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
						--n ? ", " : " or ", tp__conf_kinds[i]->name);
	return lerr(ld, NULL, t->line, TP_EINVAL,
		    "Network=%s: unknown network, expected %s", t->val, names);
}

static int set_dims(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.dims_line, true);
	if (rc)
		return rc;
	if (!keep_text(ld, &ld->r.dims_text, t->val))
		return TP_ENOMEM;
	char tmp[256];
	if (strlen(t->val) >= sizeof tmp)
		return lerr(ld, NULL, t->line, TP_EINVAL, "Dims=%.40s...: too long",
			    t->val);
	strcpy(tmp, t->val);
	for (char *p = tmp; *p; p++)
		if (*p == 'X')
			*p = 'x';
	char *parts[TP_MAX_DIMS];
	int n = tp__ld_split(tmp, 'x', parts, TP_MAX_DIMS);
	if (n > TP_MAX_DIMS)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "Dims=%s: more than %d dimensions", t->val, TP_MAX_DIMS);
	for (int d = 0; d < n; d++) {
		long long v;
		int r = tp__conf_parse_ll(parts[d], 0, INT_MAX, &v);
		if (r == -1)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "Dims=%s: dimension %d ('%s') is not a number (expected e.g. 24x24x24)",
				    t->val, d + 1, parts[d]);
		if (r == -2)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "Dims=%s: dimension %d is %s", t->val, d + 1,
				    parts[d][0] == '-' ? "negative" : "too large");
		if (v == 0)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "Dims=%s: dimension %d is zero", t->val, d + 1);
		ld->r.dims[d] = (int)v;
	}
	ld->r.ndims = n;
	return TP_OK;
}

static int set_wrap(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.wrap_line, true);
	if (rc)
		return rc;
	if (!keep_text(ld, &ld->r.wrap_text, t->val))
		return TP_ENOMEM;
	char tmp[256];
	if (strlen(t->val) >= sizeof tmp)
		return lerr(ld, NULL, t->line, TP_EINVAL, "Wrap=%.40s...: too long",
			    t->val);
	strcpy(tmp, t->val);
	char *parts[TP_MAX_DIMS];
	int n = tp__ld_split(tmp, ',', parts, TP_MAX_DIMS);
	if (n > TP_MAX_DIMS)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "Wrap=%s: more than %d values", t->val, TP_MAX_DIMS);
	for (int d = 0; d < n; d++)
		if (parse_bool(parts[d], &ld->r.wrap[d]))
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "Wrap=%s: value %d ('%s') is not yes or no",
				    t->val, d + 1, parts[d]);
	ld->r.nwrap = n;
	return TP_OK;
}

static int set_npr(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.npr_line, true);
	if (rc)
		return rc;
	long long v;
	int r = tp__conf_parse_ll(t->val, 1, INT_MAX, &v);
	if (r == -1)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "NodesPerRouter=%s: not a number", t->val);
	if (r == -2)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "NodesPerRouter=%s: expected 1..%d", t->val, INT_MAX);
	ld->r.npr = (int)v;
	return TP_OK;
}

static int set_bw(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.bw_line, true);
	if (rc)
		return rc;
	if (!keep_text(ld, &ld->r.bw_text, t->val))
		return TP_ENOMEM;
	char tmp[256];
	if (strlen(t->val) >= sizeof tmp)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "LinkBandwidth=%.40s...: too long", t->val);
	strcpy(tmp, t->val);
	char *parts[TP_MAX_DIMS];
	int n = tp__ld_split(tmp, ',', parts, TP_MAX_DIMS);
	if (n > TP_MAX_DIMS)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "LinkBandwidth=%s: more than %d values", t->val,
			    TP_MAX_DIMS);
	for (int d = 0; d < n; d++) {
		int r = tp__conf_parse_bandwidth(parts[d], &ld->r.bw[d]);
		if (r)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "LinkBandwidth=%s: value %d ('%s') is not a positive number",
				    t->val, d + 1, parts[d]);
	}
	ld->r.nbw = n;
	return TP_OK;
}

static int set_topo(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.topo_line, true);
	if (rc)
		return rc;
	if (!*t->val)
		return lerr(ld, NULL, t->line, TP_EINVAL, "TopologyFile=: empty path");
	return keep_text(ld, &ld->r.topo_text, t->val) ? TP_OK : TP_ENOMEM;
}

/* LevelCost=1,2,4 (integers >= 1) or LevelBandwidth=100,50 (numbers > 0),
 * one value per level of links from the leaf switches up, at most 16. */
static int set_levels(struct loader *ld, const struct tp__conf_tok *t, bool cost)
{
	int rc = set_once(ld, t, cost ? &ld->r.cost_line : &ld->r.lbw_line, true);
	if (rc)
		return rc;
	char tmp[256];
	if (strlen(t->val) >= sizeof tmp)
		return lerr(ld, NULL, t->line, TP_EINVAL, "%s=%.40s...: too long",
			    t->key, t->val);
	strcpy(tmp, t->val);
	char *parts[17];
	int n = tp__ld_split(tmp, ',', parts, 17);
	if (n > 16)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "%s=%s: more than 16 values", t->key, t->val);
	for (int i = 0; i < n; i++) {
		long long v = 0;
		double x = 0;
		int r = cost ? tp__conf_parse_ll(parts[i], 1, 1000000, &v)
			     : tp__conf_parse_bandwidth(parts[i], &x);
		if (r)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s=%s: value %d ('%s') is not %s", t->key,
				    t->val, i + 1, parts[i],
				    cost ? "an integer in 1..1000000"
					 : "a positive number");
		if (cost)
			ld->r.cost[i] = (int)v;
		else
			ld->c->b.level_bw[i] = x;
	}
	if (cost)
		ld->r.ncost = n;
	else
		ld->c->b.nlevel_bw = n;
	return TP_OK;
}

/* LevelUplinks=8 or 8,4: the parallel cables above each switch of a
 * level of switch links, leaf switches first (a tree's, or that of the
 * tree between blocks: the kinds apply them). */
static int set_uplinks(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.uplinks_line, true);
	if (rc)
		return rc;
	const char *p = t->val;
	int n = 0;
	for (;;) {
		char num[32];
		size_t len = strcspn(p, ",");
		long long v = -1;
		if (n == 16)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "LevelUplinks=%s: more than 16 values", t->val);
		if (len > 0 && len < sizeof num) {
			memcpy(num, p, len);
			num[len] = '\0';
			if (tp__conf_parse_ll(num, 1, 65536, &v))
				v = -1;
		}
		if (v < 0)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "LevelUplinks=%s: value %d is not an integer in 1..65536",
				    t->val, n + 1);
		ld->r.uplinks[n++] = (int)v;
		if (!p[len])
			break;
		p += len + 1;
	}
	ld->r.nuplinks = n;
	return TP_OK;
}

/* UplinkRouting=dmodk (static, by destination: OpenSM's ftree and updn) or
 * adaptive (every message spread over all the cables). */
static int set_routing(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.routing_line, true);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "dmodk") || !strcasecmp(t->val, "d-mod-k") ||
	    !strcasecmp(t->val, "static"))
		ld->r.adaptive = false;
	else if (!strcasecmp(t->val, "adaptive"))
		ld->r.adaptive = true;
	else
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "UplinkRouting=%s: expected dmodk or adaptive", t->val);
	return TP_OK;
}

int tp__conf_apply_uplinks(struct tp__conf_reader *r, tp_machine *t)
{
	if (!r->uplinks_line && !r->routing_line)
		return TP_OK;
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__tree_set_lanes(t, r->uplinks, r->nuplinks, r->adaptive, &e2);
	if (rc)
		return tp__conf_error(r, NULL, r->uplinks_line ? r->uplinks_line
				      : r->routing_line, rc, "%s", e2.msg);
	return TP_OK;
}

void tp__conf_describe_uplinks(const tp_machine *t, FILE *out)
{
	int uplinks[16];
	bool adaptive = false;
	int n = tp__tree_uplinks(t, uplinks, &adaptive);
	if (n == 0)
		fputs("not given: assumed a quarter of the nodes below (a 4:1 taper)", out);
	for (int l = 0; l < n; l++)
		fprintf(out, "%s%d", l ? "," : "", uplinks[l]);
	fprintf(out, ", routed %s", adaptive ? "adaptively" : "by destination mod k");
}

/* A Slurm topology file named by key=val (relative to the config's
 * directory): its path and text (both malloc'ed). */
int tp__conf_read_topology(struct tp__conf_reader *r, int line, const char *key,
			   const char *val, char **path, char **text)
{
	struct loader *ld = loader_of(r);
	*text = NULL;
	if (!(*path = tp__ld_conf_path(ld, val)))
		return oom(ld);
	size_t len;
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__read_file(*path, TP__MAX_TOPOLOGY_BYTES, "topology.conf", text,
			       &len, &e2);
	return rc ? tp__ld_file_err(ld, line, rc, key, val, *path, &e2) : TP_OK;
}

static int set_distance(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->r.dist_line, true);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "hops"))
		ld->r.dist_bw = false;
	else if (!strcasecmp(t->val, "bandwidth"))
		ld->r.dist_bw = true;
	else
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "Distance=%s: expected hops or bandwidth", t->val);
	return TP_OK;
}

static int set_policy(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->policy_line, false);
	if (rc)
		return rc;
	tp_error e2;
	tp_error_clear(&e2);
	enum tp_policy p;
	if ((rc = tp_policy_parse(t->val, &p, &e2)))
		return lerr(ld, NULL, t->line, rc, "DefaultPolicy=%s: %s", t->val,
			    e2.msg);
	ld->c->policy = p;
	ld->c->has_policy = true;
	return TP_OK;
}

static int set_metric(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->metric_line, false);
	if (rc)
		return rc;
	tp_error e2;
	tp_error_clear(&e2);
	enum tp_metric_kind k;
	if ((rc = tp_metric_parse(t->val, &k, &e2)))
		return lerr(ld, NULL, t->line, rc, "DefaultMetric=%s: %s", t->val,
			    e2.msg);
	ld->c->metric = k;
	return TP_OK;
}

static int set_budget(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->budget_line, false);
	if (rc)
		return rc;
	double v;
	if (tp__conf_parse_number(t->val, true, &v))
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "TimeBudgetMs=%s: not a number >= 0", t->val);
	ld->c->time_budget_ms = v;
	ld->c->has_time_budget = true;
	return TP_OK;
}

/* MaxThreads=N: the most threads one placement uses (its search and its
 * refinement), below the CPUs it may run on. */
static int set_max_threads(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->threads_line, false);
	if (rc)
		return rc;
	char *end;
	errno = 0;
	long v = strtol(t->val, &end, 10);
	if (!t->val[0] || *end || errno || v < 1 || v > TP__MAX_THREADS)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "MaxThreads=%s: a thread count in 1..%d is needed",
			    t->val, TP__MAX_THREADS);
	ld->c->max_threads = (int)v;
	return TP_OK;
}

/* HopLatency=0.1us, NodeBandwidth=25GB/s, IntraNodeBandwidth=100: what
 * the time model needs that no topology file says (every network). */
static int set_speed(struct loader *ld, const struct tp__conf_tok *t)
{
	bool lat = !strcasecmp(t->key, "HopLatency");
	bool node = !strcasecmp(t->key, "NodeBandwidth");
	int rc = set_once(ld, t, lat ? &ld->lat_line : node ? &ld->nodebw_line
			  : &ld->intrabw_line, false);
	if (rc)
		return rc;
	if (lat) {
		if ((rc = tp__conf_parse_time(t->val, &ld->lat_s)) ||
		    ld->lat_s > 1)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "HopLatency=%s: %s", t->val, rc == -2
				    ? "negative" : rc ? "not a time (100ns, 0.1us, "
				    "1e-7s; a bare number is us)" : "above 1 s");
		return TP_OK;
	}
	return tp__conf_bandwidth(&ld->r, t, node ? &ld->nodebw : &ld->intrabw);
}

/* FlowSharing=fair (every message crossing a link an equal share: credit
 * flow control, InfiniBand) or rtt (shares in inverse proportion to the
 * route's latency: TCP, RoCE, and SimGrid's flow model); not given: the
 * kind's (tp__fabric_sharing). */
static int set_sharing(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->sharing_line, false);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "fair"))
		ld->sharing = TP__SHARING_FAIR;
	else if (!strcasecmp(t->val, "rtt"))
		ld->sharing = TP__SHARING_RTT;
	else
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "FlowSharing=%s: expected fair or rtt", t->val);
	return TP_OK;
}

/* EagerLimit=16KiB: messages past it pay their route's latency three
 * times (an MPI library's rendezvous: a request, a reply, then the data);
 * "none": every message is sent eagerly.  Bytes, or with K, KB, KiB, M,
 * MB, MiB (powers of 1024, as MPI libraries count them). */
static int set_eager(struct loader *ld, const struct tp__conf_tok *t)
{
	static const struct conf_unit units[] = {
		{ "B", 1 }, { "K", 1024 }, { "KB", 1024 }, { "KiB", 1024 },
		{ "M", 1048576 }, { "MB", 1048576 }, { "MiB", 1048576 },
	};
	int rc = set_once(ld, t, &ld->eager_line, false);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "none")) {
		ld->eager_bytes = -1;
		return TP_OK;
	}
	double v;
	if (parse_with_unit(t->val, units, sizeof units / sizeof *units, 1, true,
			    true, &v) || v > 1e12)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "EagerLimit=%s: expected bytes (16384, 16KiB, 1MiB) "
			    "or none", t->val);
	ld->eager_bytes = v;
	return TP_OK;
}

/* ---- a settings line ---- */

/* Key k is key *j of kind *i. */
static bool find_kind_key(const char *k, int *i, int *j)
{
	for (*i = 0; tp__conf_kinds[*i]; ++*i)
		for (*j = 0; *j < tp__conf_kinds[*i]->nkeys; ++*j)
			if (!strcasecmp(k, tp__conf_kinds[*i]->keys[*j].name))
				return true;
	return false;
}

/* A key of kind i's own: once, before the first node; parsed by the kind,
 * or here by its rule. */
static int set_kind_key(struct loader *ld, const struct tp__conf_tok *t, int i,
			int j)
{
	const struct tp__conf_key *k = &tp__conf_kinds[i]->keys[j];
	int rc = set_once(ld, t, tp__ld_key_line(ld, i, j), true);
	if (rc)
		return rc;
	if (k->set)
		return k->set(&ld->r, ld->state[i], t);
	void *at = (char *)ld->state[i] + k->val_at;
	switch (k->rule) {
	case TP__CONF_INT:
		return tp__conf_int(&ld->r, t, NULL, k->lo, k->hi, at);
	case TP__CONF_GBS:
		if (tp__conf_parse_number(t->val, false, at))
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s=%s: expected a positive number (GB/s)", t->key,
				    t->val);
		return TP_OK;
	case TP__CONF_BANDWIDTH:
		return tp__conf_bandwidth(&ld->r, t, at);
	case TP__CONF_SET:
		break;
	}
	return TP_EINVAL;     /* a key without a set function or a rule */
}

int tp__ld_settings_line(struct loader *ld, const struct tp__conf_tok *toks, int n)
{
	int rc = TP_OK;
	for (int i = 0; i < n && rc == TP_OK; i++) {
		const struct tp__conf_tok *t = &toks[i];
		const char *k = t->key;
		int ki, kj;
		if (!strcasecmp(k, "Network"))
			rc = set_network(ld, t);
		else if (!strcasecmp(k, "Dims"))
			rc = set_dims(ld, t);
		else if (!strcasecmp(k, "Wrap"))
			rc = set_wrap(ld, t);
		else if (!strcasecmp(k, "NodesPerRouter"))
			rc = set_npr(ld, t);
		else if (!strcasecmp(k, "LinkBandwidth"))
			rc = set_bw(ld, t);
		else if (!strcasecmp(k, "DefaultPolicy"))
			rc = set_policy(ld, t);
		else if (!strcasecmp(k, "DefaultMetric"))
			rc = set_metric(ld, t);
		else if (!strcasecmp(k, "TimeBudgetMs"))
			rc = set_budget(ld, t);
		else if (!strcasecmp(k, "MaxThreads"))
			rc = set_max_threads(ld, t);
		else if (!strcasecmp(k, "HopLatency") ||
			 !strcasecmp(k, "NodeBandwidth") ||
			 !strcasecmp(k, "IntraNodeBandwidth"))
			rc = set_speed(ld, t);
		else if (!strcasecmp(k, "FlowSharing"))
			rc = set_sharing(ld, t);
		else if (!strcasecmp(k, "EagerLimit"))
			rc = set_eager(ld, t);
		else if (!strcasecmp(k, "TopologyFile"))
			rc = set_topo(ld, t);
		else if (!strcasecmp(k, "Distance"))
			rc = set_distance(ld, t);
		else if (!strcasecmp(k, "LevelCost"))
			rc = set_levels(ld, t, true);
		else if (!strcasecmp(k, "LevelBandwidth"))
			rc = set_levels(ld, t, false);
		else if (!strcasecmp(k, "LevelUplinks"))
			rc = set_uplinks(ld, t);
		else if (!strcasecmp(k, "UplinkRouting"))
			rc = set_routing(ld, t);
		else if (find_kind_key(k, &ki, &kj))
			rc = set_kind_key(ld, t, ki, kj);
		else if (!strcasecmp(k, "CoordFile") || !strcasecmp(k, "SwitchFile"))
			; /* after the line's settings */
		else if (!strcasecmp(k, "CoordOrder") || !strcasecmp(k, "Offset") ||
			 !strcasecmp(k, "Coords"))
			rc = lerr(ld, NULL, t->line, TP_EINVAL,
				  "%s=%s: needs NodeName= on the same line", k, t->val);
		else
			rc = lerr(ld, NULL, t->line, TP_EINVAL,
				  "unknown key '%s' in '%s=%s'", k, k, t->val);
	}
	for (int i = 0; i < n && rc == TP_OK; i++)
		if (!strcasecmp(toks[i].key, "CoordFile") ||
		    !strcasecmp(toks[i].key, "SwitchFile"))
			rc = tp__ld_load_coord_file(ld, &toks[i]);
	return rc;
}
