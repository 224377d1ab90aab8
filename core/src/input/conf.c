/* topoplace — topoplace.conf reader (see conf.h; the format: doc/topoplace.conf.5).
 *
 * The text is read whole and cut into physical lines by the core's one line
 * loop (tp__each_line), comments removed; '\'-continued lines are joined
 * here into logical lines of Key=Value tokens, each token remembering its
 * own physical line for messages.  A logical line holding NodeName= places
 * nodes; any other line sets machine-wide or site settings.
 * The machine is created when the first NodeName= or CoordFile= is met, so the
 * shape settings must come before that.
 *
 * No kind of network is named here: Network= picks one of tp__conf_kinds
 * (net/net_conf.h), whose own keys, machine and check-config account live
 * in its file (net/torus.c, tree.c, dragonfly.c, block.c).  What stays is
 * what every network shares, and Slurm's topology as the source of the
 * machine (Network=slurm, or no Network=), described with Slurm's own
 * kinds of topology (slurm_topo.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "conf/conf_kind.h"
#include "slurm/slurm_topology.h"
#include "input/conf_internal.h"
#include "map/metrics_internal.h"
#include "net/machine_internal.h"
#include "node/node_internal.h"
#include "util/digits_internal.h"

struct tp_conf {
	struct tp__conf_built b;    /* the machine and how it was built */
	const struct tp__conf_kind *kind;   /* its kind (net/net_conf.h) */
	bool has_policy;
	enum tp_policy policy;
	enum tp_metric_kind metric;
	double time_budget_ms;
	bool has_time_budget;       /* TimeBudgetMs= given (0 included) */
	int max_threads;            /* MaxThreads= (0: not set) */
	char *path;                 /* the config's name in messages */
	bool from_slurm;            /* the network is Slurm's topology */
	char *source;               /* how it was found (check-config) */
	char *used;                 /* the topology used, one line */
	/* slurmctld's live view it was loaded with (tp_conf_load_slurm_live):
	 * copies, kept for Slurm's layout of the job's tasks (tp__conf_live) */
	struct tp__slurm_live live;
	bool has_live;
	int nslurm_topo;            /* topology.yaml's topologies, by name */
	char **slurm_topo;
	int slurm_used;             /* the one used, of them (-1: none) */

	/* NodeTopology= / GpuLinks= of NodeName= lines: distinct pairs, the
	 * config lines that first named them (for check-config), and the pair
	 * of every machine node (-1: none) */
	int ntopo;
	char **topo_xml, **topo_links;
	double *topo_linkbw;        /* GpuLinkBandwidth= (GB/s; 0: not set) */
	int *topo_line;             /* ntopo x 2: NodeTopology=, GpuLinks= */
	int32_t *node_topo, node_topo_cap;
};

/* Where nodes were placed, for "already placed at FILE:LINE": a span of
 * consecutive nodes from one line, not a record per node (two million
 * nodes of a few CoordOrder= lines would otherwise write 16 MB). */
struct origin {
	struct tp__span span;  /* first, for tp__span_of */
	int32_t line;          /* of node span.first; node first + k's is
				  line + step x k (a CoordFile's lines: one
				  record, not one per node) */
	int32_t step;          /* 0 or 1 */
	int32_t src;
};

struct loader {
	struct tp__conf_reader r;   /* what the kinds see (first: they are
				       handed &ld->r) */
	char *dir;             /* directory CoordFile paths are relative to */
	tp_conf *c;
	/* Network=slurm, or no Network= and no network of the config's own:
	 * the machine is Slurm's topology */
	bool slurm_net;
	void **state;          /* each kind's, as tp__conf_kinds lists them */

	/* Settings seen so far (line 0: not given). */
	int policy_line, metric_line, budget_line, threads_line;
	int first_node_line;
	/* the time model's speeds: HopLatency=, NodeBandwidth=,
	 * IntraNodeBandwidth= (line 0: the defaults) */
	int lat_line, nodebw_line, intrabw_line, sharing_line;
	double lat_s, nodebw, intrabw;
	bool rtt_sharing;          /* FlowSharing=rtt */

	struct origin *origin; /* spans, in node order */
	size_t norigins, origin_cap;
	char **srcs;           /* srcs[0] = what, then CoordFile paths */
	int nsrcs;

	struct tp__conf_tok *toks;
	int ntoks, tokcap;

	int cur_topo;          /* topology pair of the NodeName= line, or -1 */
	const tp_conf_slurm *slurm;   /* where Slurm's topology is (NULL:
					 the defaults) */
};

/* ---- messages ---- */

/* tp__conf_error of the loader's reader. */
#define lerr(ld, ...) tp__conf_error(&(ld)->r, __VA_ARGS__)

static int oom(struct loader *ld)
{
	return tp_error_set(ld->r.err, TP_ENOMEM, "%s: out of memory", ld->r.what);
}

/* The loader a kind was handed the reader of. */
static struct loader *loader_of(struct tp__conf_reader *r)
{
	return (struct loader *)r;
}

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
 * number's "e" of "1e3GB/s" is its own: no unit starts with e. */
static int parse_with_unit(const char *s, const struct conf_unit *units,
			   size_t n, double bare_scale, bool allow_zero,
			   double *out)
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
		while (i < n && strcmp(s + len, units[i].name))
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
			       gbps);
}

/* A time in seconds: a bare number of microseconds, or with a unit (ns,
 * us, ms, s).  0, -1 not a time, -2 negative. */
int tp__conf_parse_time(const char *s, double *sec)
{
	static const struct conf_unit units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
	};
	return parse_with_unit(s, units, sizeof units / sizeof *units, 1e-6, true,
			       sec);
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
static int split(char *s, char sep, char **parts, int max)
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
static int file_err(struct loader *ld, int line, int rc, const char *key,
		    const char *val, const char *path, const tp_error *e2)
{
	size_t n = strlen(path);
	const char *msg = e2->msg;
	if (!strcmp(val, path) && !strncmp(msg, path, n) && msg[n] == ':' &&
	    msg[n + 1] == ' ')
		msg += n + 2;
	return lerr(ld, NULL, line, rc, "%s=%s: %s", key, val, msg);
}

/* ---- node bookkeeping ---- */

static int add_src(struct loader *ld, const char *name)
{
	char **ns = realloc(ld->srcs, (size_t)(ld->nsrcs + 1) * sizeof *ns);
	if (!ns)
		return -1;
	ld->srcs = ns;
	if (!(ns[ld->nsrcs] = strdup(name)))
		return -1;
	return ld->nsrcs++;
}

/* Record topology pair t (-1: none) for machine node idx. */
static int node_topo_set(tp_conf *c, int32_t idx, int t)
{
	if (t < 0 && !c->node_topo)
		return 0;
	if (idx >= c->node_topo_cap) {
		int32_t ncap = c->node_topo_cap ? c->node_topo_cap : 1024;
		while (ncap <= idx)
			ncap *= 2;
		int32_t *nt = tp__realloc_array(c->node_topo, (size_t)ncap, sizeof(int32_t));
		if (!nt)
			return -1;
		for (int32_t i = c->node_topo_cap; i < ncap; i++)
			nt[i] = -1;
		c->node_topo = nt;
		c->node_topo_cap = ncap;
	}
	c->node_topo[idx] = t;
	return 0;
}

/* Nodes first..first+count-1 were placed by line of source src (the nodes
 * are appended, so spans stay in node order). */
static int origin_add(struct loader *ld, int32_t first, int64_t count, int line,
		      int src, int step)
{
	struct origin *o = ld->norigins ? &ld->origin[ld->norigins - 1] : NULL;
	/* a single node fits either kind of record */
	bool one = count == 1;
	if (o && o->src == src && o->span.first + o->span.count == first) {
		if ((step == 0 || one) && o->step == 0 && o->line == line) {
			o->span.count += (int32_t)count;
			return TP_OK;
		}
		if ((step == 1 || one) && (o->step == 1 || o->span.count == 1) &&
		    line == o->line + o->span.count) {
			o->step = 1;
			o->span.count += (int32_t)count;
			return TP_OK;
		}
	}
	if (tp__grow((void **)&ld->origin, ld->norigins, &ld->origin_cap,
		     sizeof *ld->origin))
		return oom(ld);
	ld->origin[ld->norigins++] = (struct origin){ { first, (int32_t)count },
						      line, one ? 0 : step, src };
	return TP_OK;
}

/* The span that placed node i; NULL for a node no line of this file placed
 * (one of a topology file's). */
static const struct origin *origin_of(const struct loader *ld, int32_t i)
{
	return tp__span_of(ld->origin, ld->norigins, sizeof *ld->origin, i);
}

/* "duplicate node 'NAME' (already placed at FILE:LINE)" for node prev, at
 * file:line. */
static int duplicate(struct loader *ld, const char *file, int line,
		     const char *name, int32_t prev)
{
	const struct origin *o = origin_of(ld, prev);
	if (!o)
		return lerr(ld, file, line, TP_EINVAL, "duplicate node '%s'", name);
	return lerr(ld, file, line, TP_EINVAL,
		    "duplicate node '%s' (already placed at %s:%d)",
		    name, ld->srcs[o->src],
		    (int)(o->line + o->step * (prev - o->span.first)));
}

#define GRID_RESERVE_MAX ((int64_t)1 << 22)

/* Room for n more nodes (a line that names many at once). */
static int nodes_reserve(struct loader *ld, int64_t n, bool along_grid)
{
	/* at least double: a machine given as many NodeName= lines is then
	 * copied O(log lines) times, not once per line */
	const tp_machine *m = ld->c->b.m;
	int64_t want = (int64_t)m->nnodes + n;
	if (want > m->cap && want < 2 * (int64_t)m->cap)
		want = 2 * (int64_t)m->cap;
	/* Lines along the grid (CoordOrder=) usually fill it: room for every
	 * position at once spares the copies of growing.  Only address space
	 * until nodes are placed; bounded, since a sparse grid may be vast. */
	int64_t grid = m->nrouters > GRID_RESERVE_MAX / m->nodes_per_router
			       ? GRID_RESERVE_MAX
			       : m->nrouters * m->nodes_per_router;
	if (along_grid && want > m->cap && grid > want)
		want = grid;
	if (tp__machine_reserve(ld->c->b.m, want))
		return oom(ld);
	return TP_OK;
}

/* Place one node; file/line name the place it was given. */
static int place_node(struct loader *ld, const char *name, const int *coords,
		      int src, int line)
{
	tp_machine *m = ld->c->b.m;
	const char *file = ld->srcs[src];
	tp_error e2;
	tp_error_clear(&e2);
	int32_t prev = -1;
	int idx = tp__machine_add(m, name, coords, &prev, &e2);
	if (idx < 0 && prev >= 0)
		return duplicate(ld, file, line, name, prev);
	if (idx < 0)
		return lerr(ld, file, line, idx, "%s", e2.msg);
	if (origin_add(ld, idx, 1, line, src, 0))
		return TP_ENOMEM;
	return node_topo_set(ld->c, idx, ld->cur_topo) < 0 ? oom(ld) : TP_OK;
}

/* ---- the machine ---- */

static int ensure_slurm(struct loader *ld, int line, const char *key);

static int nkinds(void)
{
	int n = 0;
	while (tp__conf_kinds[n])
		n++;
	return n;
}

/* The state of kind k (NULL: it keeps none). */
static void *state_of(const struct loader *ld, const struct tp__conf_kind *k)
{
	for (int i = 0; tp__conf_kinds[i]; i++)
		if (tp__conf_kinds[i] == k)
			return ld->state[i];
	return NULL;
}

/* Where the line of key j of kind i is kept (0: not given). */
static int *key_line(const struct loader *ld, int i, int j)
{
	return (int *)((char *)ld->state[i] + tp__conf_kinds[i]->keys[j].line_at);
}

/* Given without Network=, a key of a network of the config's own (Dims=,
 * or a kind's key that says so): not Slurm's topology. */
static bool own_network(const struct loader *ld)
{
	if (ld->r.dims_line)
		return true;
	for (int i = 0; tp__conf_kinds[i]; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++)
			if ((tp__conf_kinds[i]->keys[j].flags & TP__CONF_KEY_OWN_NETWORK) &&
			    *key_line(ld, i, j))
				return true;
	return false;
}

/* Keys of one kind of network given to another: "X= needs Network=K". */
static int foreign_keys(struct loader *ld)
{
	/* the first of them in the file; of one line, the key of the kind
	 * listed last (the order these messages have always had) */
	int fi = -1, fj = -1, first = 0;
	for (int i = nkinds() - 1; i >= 0; i--) {
		if (tp__conf_kinds[i] == ld->c->kind)
			continue;
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++) {
			int l = *key_line(ld, i, j);
			if (l && (fi < 0 || l < first)) {
				fi = i;
				fj = j;
				first = l;
			}
		}
	}
	if (fi >= 0)
		return lerr(ld, NULL, first, TP_EINVAL, "%s= needs Network=%s",
			    tp__conf_kinds[fi]->keys[fj].name, tp__conf_kinds[fi]->name);
	return TP_OK;
}

/* Create the machine from the settings, at the first line that needs it. */
static int ensure_machine(struct loader *ld, int line, const char *key)
{
	if (ld->c->b.m)
		return TP_OK;
	/* no Network= and no shape of its own: Slurm's topology, unless the
	 * line places nodes itself (then Network= was forgotten) */
	bool places = strcmp(key, "NodeName=") && strcmp(key, "end of file");
	if (!ld->r.net_line && !own_network(ld) && !places)
		ld->slurm_net = true;
	if (!ld->r.net_line && !ld->slurm_net)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "%s before Network= (Network= and Dims= must come first)", key);
	if (ld->slurm_net)
		return ensure_slurm(ld, line, key);
	const struct tp__conf_kind *k = ld->c->kind;
	int rc = foreign_keys(ld);
	if (!rc)
		rc = k->build(&ld->r, state_of(ld, k), line, key);
	if (!rc)
		ld->first_node_line = line;
	return rc;
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
	int n = split(tmp, 'x', parts, TP_MAX_DIMS);
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
	int n = split(tmp, ',', parts, TP_MAX_DIMS);
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
	int n = split(tmp, ',', parts, TP_MAX_DIMS);
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
	int n = split(tmp, ',', parts, 17);
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

static char *conf_path(const struct loader *ld, const char *val);

/* A Slurm topology file named by key=val (relative to the config's
 * directory): its path and text (both malloc'ed). */
int tp__conf_read_topology(struct tp__conf_reader *r, int line, const char *key,
			   const char *val, char **path, char **text)
{
	struct loader *ld = loader_of(r);
	*text = NULL;
	if (!(*path = conf_path(ld, val)))
		return oom(ld);
	size_t len;
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__read_file(*path, TP__MAX_TOPOLOGY_BYTES, "topology.conf", text,
			       &len, &e2);
	return rc ? file_err(ld, line, rc, key, val, *path, &e2) : TP_OK;
}

/* The partitions whose topology is t (a list "a, b"; "" for none). */
static void partitions_of(const struct tp__slurm_topology *st, int t, bool dflt,
			  char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < st->keys.npart; i++) {
		const struct tp__slurm_part *p = &st->keys.part[i];
		int k = p->topology && st->yaml
			? tp__slurm_topology_index(st, p->topology) : -1;
		if (k == t || (k < 0 && dflt))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
					      n ? ", " : "", p->name);
		if (n >= len)
			break;
	}
}

/* check-config's account of Slurm's topology: the file and why, each
 * topology and its partitions, the one used, what topoplace.conf adds. */
/* Where a topology's nodes came from when not all from its file: those
 * slurm.conf's Topology= put there, and the units still empty, whose nodes
 * join at run time (slurm_join.c). */
static void placed_line(const struct tp__slurm_topology *st, int which, FILE *f)
{
	const struct tp__stopo *t = &st->set.t[which];
	if (t->kind != TP__STOPO_TREE && t->kind != TP__STOPO_BLOCK)
		return;
	int32_t units = 0, empty = 0;
	for (int32_t i = 0; i < t->nrec; i++) {
		const struct tp__topo_rec *r = &t->rec[i];
		if (t->kind == TP__STOPO_TREE && r->switches && *r->switches)
			continue;   /* not a leaf */
		units++;
		empty += !r->nodes || !*r->nodes;
	}
	const char *unit = t->kind == TP__STOPO_TREE ? "leaf switch" : "block";
	if (t->njoined)
		fprintf(f, "  placed by slurm.conf's Topology=: %lld node%s\n",
			(long long)t->njoined, t->njoined == 1 ? "" : "s");
	if (t->nlive)
		fprintf(f, "  placed by slurmctld's live view: %lld node%s\n",
			(long long)t->nlive, t->nlive == 1 ? "" : "s");
	if (empty && st->yaml)
		fprintf(f, "  %ld of %ld %s%s without nodes: theirs join at run time "
			"(slurmd --conf \"Topology=...\", scontrol update)\n",
			(long)empty, (long)units, unit,
			units == 1 ? "" : t->kind == TP__STOPO_TREE ? "es" : "s");
}

static int describe_source(struct loader *ld, const struct tp__slurm_topology *st,
			   int which, const char *which_why, bool block_tree)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return oom(ld);
	fprintf(f, "Slurm's topology: %s\n  why: %s\n", st->file, st->why);
	int def = -1;
	for (int i = 0; i < st->set.n && def < 0; i++)
		if (st->set.t[i].cluster_default)
			def = i;
	if (def < 0 && st->set.n)
		def = 0;
	for (int i = 0; i < st->set.n; i++) {
		const struct tp__stopo *t = &st->set.t[i];
		char parts[1024];
		partitions_of(st, i, i == def, parts, sizeof parts);
		fprintf(f, "  topology %s (%s%s%s): partitions %s\n", t->name,
			tp__stopo_kind_name(t->kind), i == def ? ", cluster default" : "",
			st->yaml ? "" : ", topology.conf", *parts ? parts : "none");
	}
	fprintf(f, "  used: %s (%s)\n", st->set.t[which].name, which_why);
	placed_line(st, which, f);
	free(ld->c->used);
	if (asprintf(&ld->c->used, "Slurm's topology %s (%s) of %s, %s",
		     st->set.t[which].name,
		     tp__stopo_kind_name(st->set.t[which].kind), st->file,
		     which_why) < 0)
		ld->c->used = NULL;
	/* what topoplace.conf adds, in line order; a key for another kind is
	 * ignored here (another partition's topology may be of its kind), said
	 * here only: a warning would follow every job of this partition */
	enum tp__stopo_kind kind = st->set.t[which].kind;
	bool tree = kind == TP__STOPO_TREE, block = kind == TP__STOPO_BLOCK;
	struct added { int line; const char *key; bool applies; } added[64] = {
		{ ld->r.cost_line, "LevelCost", tree },
		{ ld->r.lbw_line, "LevelBandwidth", tree || (block && block_tree) },
	};
	size_t na = 2;
	for (int i = 0; tp__conf_kinds[i]; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys; j++) {
			const struct tp__conf_key *k = &tp__conf_kinds[i]->keys[j];
			if (!(k->flags & TP__CONF_KEY_SLURM) || na == 64)
				continue;
			added[na] = (struct added){ *key_line(ld, i, j), k->name,
						    tp__conf_kinds[i]->slurm_kind == kind };
			na++;
		}
	const struct added site[] = {
		{ ld->policy_line, "DefaultPolicy", true },
		{ ld->metric_line, "DefaultMetric", true },
		{ ld->budget_line, "TimeBudgetMs", true },
		{ ld->threads_line, "MaxThreads", true },
		{ ld->lat_line, "HopLatency", true },
		{ ld->nodebw_line, "NodeBandwidth", true },
		{ ld->intrabw_line, "IntraNodeBandwidth", true },
		{ ld->sharing_line, "FlowSharing", true },
	};
	for (size_t i = 0; i < sizeof site / sizeof *site && na < 64; i++)
		added[na++] = site[i];
	for (size_t i = 1; i < na; i++)       /* by line (insertion sort) */
		for (size_t j = i; j > 0 && added[j - 1].line > added[j].line; j--) {
			struct added t = added[j];
			added[j] = added[j - 1];
			added[j - 1] = t;
		}
	bool any = false;
	for (size_t i = 0; i < na; i++)
		if (added[i].line) {
			fprintf(f, "%s%s= (line %d%s)", any ? ", " : "  from topoplace.conf: ",
				added[i].key, added[i].line, added[i].applies ? ""
				: tree ? ", not for a tree: ignored" : block
				? ", not for blocks: ignored" : ", ignored");
			any = true;
		}
	if (any)
		fputc('\n', f);
	if (fclose(f) || !buf) {
		free(buf);
		return oom(ld);
	}
	free(ld->c->source);
	ld->c->source = buf;
	return TP_OK;
}

/* Keys that do not apply to Slurm's topology: the box's, and the kinds'
 * own that Slurm's topology does not take. */
static int slurm_refused_keys(struct loader *ld)
{
	const struct { int line; const char *key; } box[] = {
		{ ld->r.dims_line, "Dims" }, { ld->r.wrap_line, "Wrap" },
		{ ld->r.npr_line, "NodesPerRouter" }, { ld->r.bw_line, "LinkBandwidth" },
		{ ld->r.dist_line, "Distance" },
	};
	int line = 0;
	const char *key = NULL;
	for (size_t i = 0; i < sizeof box / sizeof *box && !line; i++)
		if (box[i].line) {
			line = box[i].line;
			key = box[i].key;
		}
	for (int i = 0; tp__conf_kinds[i] && !line; i++)
		for (int j = 0; j < tp__conf_kinds[i]->nkeys && !line; j++)
			if (!(tp__conf_kinds[i]->keys[j].flags & TP__CONF_KEY_SLURM) &&
			    *key_line(ld, i, j)) {
				line = *key_line(ld, i, j);
				key = tp__conf_kinds[i]->keys[j].name;
			}
	if (line)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "%s= does not apply to Slurm's topology (Network=%s): "
			    "give the network's own Network=", key,
			    ld->r.net_line ? "slurm" : "not given");
	if (ld->r.topo_line)
		return lerr(ld, NULL, ld->r.topo_line, TP_EINVAL,
			    "TopologyFile= needs Network=tree or Network=block (without "
			    "Network=, topoplace reads Slurm's own topology)");
	for (int i = 0; tp__conf_kinds[i]; i++) {
		const struct tp__conf_kind *k = tp__conf_kinds[i];
		int rc = k->slurm_check ? k->slurm_check(&ld->r, ld->state[i]) : TP_OK;
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* What the kinds' keys add to the machine of Slurm's topology of kind sk. */
static int slurm_options(struct loader *ld, enum tp__stopo_kind sk,
			 struct tp__topo_opts *to, tp_block_opts *bo)
{
	for (int i = 0; tp__conf_kinds[i]; i++) {
		const struct tp__conf_kind *k = tp__conf_kinds[i];
		int rc = k->slurm_options ? k->slurm_options(&ld->r, ld->state[i], sk, to, bo)
					  : TP_OK;
		if (rc)
			return rc;
	}
	/* LevelBandwidth= is the tree's, or that of the tree between blocks */
	bo->level_bandwidth = ld->c->b.level_bw;
	bo->nlevel_bandwidth = ld->r.lbw_line && bo->tree_text ? ld->c->b.nlevel_bw : 0;
	return TP_OK;
}

/* Network=slurm, or no Network= at all: the machine is Slurm's own
 * topology, read as slurmctld reads it (slurm_topology.c); topoplace.conf
 * adds what Slurm's files cannot say (bandwidths, costs, node models). */
static int ensure_slurm(struct loader *ld, int line, const char *key)
{
	(void)key;
	int rc = slurm_refused_keys(ld);
	if (rc)
		return rc;
	const tp_conf_slurm *sl = ld->slurm;
	const char *slurm_conf = sl && sl->slurm_conf && *sl->slurm_conf
				 ? sl->slurm_conf : TP_DEFAULT_SLURM_CONF;
	struct tp__slurm_topology st;
	tp_error e2;
	tp_error_clear(&e2);
	rc = tp__slurm_topology_load(slurm_conf, sl ? sl->partition : NULL,
				     sl ? sl->slurm_version : 0, tp__conf_live(ld->c), &st,
				     &ld->c->b.warn, &e2);
	if (rc)
		return lerr(ld, NULL, ld->r.net_line, rc, "Slurm's topology: %s", e2.msg);
	int which = st.chosen;
	char which_why[TP_ERROR_MSG_MAX];
	snprintf(which_why, sizeof which_why, "%s", st.chosen_why);
	if (sl && sl->topology) {
		which = tp__slurm_topology_index(&st, sl->topology);
		snprintf(which_why, sizeof which_why, "asked for by name");
		if (which < 0)
			rc = lerr(ld, NULL, 0, TP_ENOENT, "Slurm's topology: no "
				  "topology %s in %s", sl->topology,
				  st.file[0] ? st.file : "Slurm's files");
	} else if (which < 0) {
		rc = lerr(ld, NULL, ld->r.net_line, TP_ENOENT, "Slurm's topology: %s%s",
			  st.why, st.yaml ? " (it names no topology)" : "");
	}
	/* every topology by name, for check-config */
	for (int i = 0; !rc && st.yaml && i < st.set.n; i++) {
		char **nt = realloc(ld->c->slurm_topo, sizeof *nt * (size_t)(i + 1));
		if (!nt || !(nt[i] = strdup(st.set.t[i].name))) {
			if (nt)
				ld->c->slurm_topo = nt;
			rc = oom(ld);
			break;
		}
		ld->c->slurm_topo = nt;
		ld->c->nslurm_topo = i + 1;
	}
	ld->c->slurm_used = st.yaml ? which : -1;
	char cost_where[512];
	snprintf(cost_where, sizeof cost_where, "%s:%d", ld->r.what, ld->r.cost_line);
	struct tp__topo_opts to = { ld->r.cost, ld->r.ncost, 0, &ld->c->b.warn,
				    ld->r.cost_line ? cost_where : NULL };
	tp_block_opts bo = { 0 };
	if (!rc)
		rc = slurm_options(ld, st.set.t[which].kind, &to, &bo);
	if (!rc)
		rc = describe_source(ld, &st, which, which_why, bo.tree_text != NULL);
	if (!rc) {
		struct tp__stopo_built built = { NULL, NULL, &ld->c->b.warn };
		rc = tp__slurm_topology_machine(&st, which, &to, &bo, &built,
						ld->r.err);
		ld->c->b.m = built.m;
		const char *tree_used = built.tree_used;
		if (!rc && tree_used) {
			free(ld->c->b.tree_path);
			if (asprintf(&ld->c->b.tree_path, "topology %s of %s", tree_used,
				     st.file) < 0) {
				ld->c->b.tree_path = NULL;
				rc = oom(ld);
			}
		}
		if (!rc && ld->c->b.m->nnodes == 0)
			rc = lerr(ld, st.file, st.set.t[which].line, TP_ENOENT,
				  "topology %s has no nodes (nothing to place tasks on)",
				  st.set.t[which].name);
		if (!rc) {
			ld->c->from_slurm = true;
			ld->c->kind = tp__conf_kind_of(ld->c->b.m);
			if (!ld->c->kind)   /* every kind lists its machines */
				rc = lerr(ld, st.file, 0, TP_EINVAL,
					  "no kind of network describes a %s",
					  tp_machine_kind(ld->c->b.m));
			free(ld->c->b.topo_path);
			if (!(ld->c->b.topo_path = strdup(st.file)))
				rc = oom(ld);
			ld->first_node_line = line;
		}
	}
	tp__slurm_topology_free(&st);
	return rc;
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
 * route's latency: TCP, and SimGrid's flow model). */
static int set_sharing(struct loader *ld, const struct tp__conf_tok *t)
{
	int rc = set_once(ld, t, &ld->sharing_line, false);
	if (rc)
		return rc;
	if (!strcasecmp(t->val, "fair"))
		ld->rtt_sharing = false;
	else if (!strcasecmp(t->val, "rtt"))
		ld->rtt_sharing = true;
	else
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "FlowSharing=%s: expected fair or rtt", t->val);
	return TP_OK;
}

/* ---- CoordFile ---- */

/* Consecutive lines of a CoordFile naming consecutive numbers
 * ("nid000000 0 0 0", "nid000001 1 0 0", ...) are gathered into one
 * numbered run of the machine: a quarter million lines were 80 ms of name
 * hashing, storing and per-line records.  The gathered coordinates wait in
 * the machine's own array, after its nodes, where the run's nodes go. */
struct cf_run {
	struct loader *ld;
	int src, nd;
	struct tp__hostlist_run hr;   /* prefix and suffix in the file's text */
	int32_t n;                    /* names gathered (0: none) */
	int line;                     /* of the first */
};

/* Where the run's node i waits. */
static int *cf_run_at(const struct cf_run *r, int32_t i)
{
	const tp_machine *m = r->ld->c->b.m;
	return m->coords + ((size_t)m->nnodes + (size_t)i) * (size_t)r->nd;
}

/* Start a run at name (false: it has no number to count on); the machine
 * has room for one node more. */
static bool cf_run_start(struct cf_run *r, const char *name, const int *c, int line)
{
	size_t ds, de;
	uint64_t v;
	if (!tp__name_split(name, &ds, &de, &v))
		return false;
	r->hr = (struct tp__hostlist_run){ name, name + de, ds, strlen(name + de),
					   v, v, (uint32_t)(de - ds) };
	memcpy(cf_run_at(r, 0), c, sizeof(int) * (size_t)r->nd);
	r->n = 1;
	r->line = line;
	return true;
}

/* Add name at line to the run if it is its next name on the next line and
 * the machine has room. */
static bool cf_run_extend(struct cf_run *r, const char *name, const int *c, int line)
{
	size_t ds, de;
	uint64_t v;
	const struct tp__hostlist_run *hr = &r->hr;
	const tp_machine *m = r->ld->c->b.m;
	if (!r->n || line != r->line + r->n || m->nnodes + r->n >= m->cap ||
	    !tp__name_split(name, &ds, &de, &v) || v != hr->hi + 1 || ds != hr->plen ||
	    memcmp(name, hr->prefix, ds) || strcmp(name + de, hr->suffix))
		return false;
	/* the run writes v in max(width, its digits) digits: exactly these */
	unsigned dv = tp__digits_of(v);
	if (de - ds != (dv > hr->width ? dv : hr->width))
		return false;
	memcpy(cf_run_at(r, r->n), c, sizeof(int) * (size_t)r->nd);
	r->hr.hi = v;
	r->n++;
	return true;
}

static void cf_run_coords(void *arg, int64_t i, int *c)
{
	/* tp__machine_add_run asks for them where they already are */
	const int *at = cf_run_at(arg, (int32_t)i);
	if (c != at)
		memmove(c, at, sizeof(int) * (size_t)((const struct cf_run *)arg)->nd);
}

/* Place the gathered names: as one run when long enough and the machine
 * takes it (tp__runs_appends), else, or when anything is wrong with it (a
 * name placed before, a full router), name by name with their own lines,
 * for place_node's messages. */
static int cf_run_flush(struct cf_run *r)
{
	struct loader *ld = r->ld;
	tp_machine *m = ld->c->b.m;
	int32_t n = r->n, first = m->nnodes, prev;
	if (n == 0)
		return TP_OK;
	if (n >= TP__LIST_RUN_MIN && tp__runs_appends(&m->runs, &r->hr) &&
	    ld->cur_topo < 0) {
		tp_error e;
		tp_error_clear(&e);
		if (tp__machine_add_run(m, &r->hr, cf_run_coords, r, &prev, &e) == TP_OK) {
			r->n = 0;
			return origin_add(ld, first, n, r->line, r->src, 1);
		}
	}
	/* node i waits at slot first + i; nodes placed before it take slots
	 * up to first + i, so it is copied out first */
	char name[TP__HOSTNAME_MAX];
	int rc = TP_OK, c[TP_MAX_DIMS];
	for (int32_t i = 0; i < n && rc == TP_OK; i++) {
		tp__hostlist_run_name(&r->hr, r->hr.lo + (uint64_t)i, name);
		memcpy(c, m->coords + ((size_t)first + (size_t)i) * (size_t)r->nd,
		       sizeof(int) * (size_t)r->nd);
		rc = place_node(ld, name, c, r->src, r->line + i);
	}
	r->n = 0;
	return rc;
}

/* The kind SwitchFile= is for. */
static const char *switch_file_kind(void)
{
	for (int i = 0; tp__conf_kinds[i]; i++)
		if (tp__conf_kinds[i]->switch_file)
			return tp__conf_kinds[i]->name;
	return "?";
}

/* A CoordFile's or SwitchFile's lines: '#' comments, no continuation. */
static const struct tp__line_format coord_format = { .comment = '#' };

/* What reading one CoordFile or SwitchFile carries from line to line. */
struct coord_file {
	struct loader *ld;
	const char *file;         /* its path, for messages */
	bool sw;                  /* a SwitchFile: "name group switch" */
	struct cf_run run;
	int placed;               /* lines that named a node */
};

/* The blank-separated fields of p, in place: the first max into f; their
 * count (all of them). */
static int coord_fields(char *p, char **f, int max)
{
	int nf = 0;
	char *save = NULL;
	for (char *w = strtok_r(p, " \t\r\v\f", &save); w;
	     w = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (nf < max)
			f[nf] = w;
		nf++;
	}
	return nf;
}

/* The coordinates of the node f[0] from its fields into c. */
static int coord_values(const struct coord_file *cf, char **f, int line, int *c)
{
	const tp_machine *m = cf->ld->c->b.m;
	bool sw = cf->sw;
	for (int d = 0; d < m->ndims; d++) {
		long long v;
		/* SwitchFile: group (dimension 1) first, then the switch */
		const char *fv = f[sw ? 2 - d : d + 1];
		char what[32];
		int r = tp__conf_parse_ll(fv, INT_MIN, INT_MAX, &v);
		if (r == 0 && v >= 0 && v < m->dims[d]) {
			c[d] = (int)v;
			continue;
		}
		snprintf(what, sizeof what, sw ? (d ? "group" : "switch")
					       : "coordinate %d", d);
		if (r == -1)
			return lerr(cf->ld, cf->file, line, TP_EINVAL,
				    "node '%s': %s ('%s') is not a number",
				    f[0], what, fv);
		return lerr(cf->ld, cf->file, line, TP_EINVAL,
			    "node '%s': %s is outside 0..%d",
			    f[0], what, m->dims[d] - 1);
	}
	return TP_OK;
}

/* One line of the file: a node and its place, gathered into the run of
 * numbered names or placed on its own. */
static int coord_line(void *arg, char *p, long number)
{
	struct coord_file *cf = arg;
	struct loader *ld = cf->ld;
	int line = (int)number, nd = ld->c->b.m->ndims;
	char *f[TP_MAX_DIMS + 2];
	int nf = coord_fields(p, f, TP_MAX_DIMS + 2);
	if (nf == 0)
		return TP_OK;
	if (nf != nd + 1)
		return cf->sw ? lerr(ld, cf->file, line, TP_EINVAL,
				     "expected a node name, its group and its switch, found %d field%s",
				     nf, nf == 1 ? "" : "s")
			: lerr(ld, cf->file, line, TP_EINVAL,
			       "expected a node name and %d coordinates, found %d field%s",
			       nd, nf, nf == 1 ? "" : "s");
	int c[TP_MAX_DIMS];
	int rc = coord_values(cf, f, line, c);
	if (rc == TP_OK && !cf_run_extend(&cf->run, f[0], c, line)) {
		rc = cf_run_flush(&cf->run);
		if (rc == TP_OK)
			rc = nodes_reserve(ld, 1, false);
		if (rc == TP_OK && !cf_run_start(&cf->run, f[0], c, line))
			rc = place_node(ld, f[0], c, cf->run.src, line);
	}
	cf->placed++;
	return rc;
}

/* CoordFile=: lines "name x y z"; SwitchFile= (dragonflies): lines "name
 * group switch". */
static int load_coord_file(struct loader *ld, const struct tp__conf_tok *t)
{
	bool sw = !strcasecmp(t->key, "SwitchFile");
	ld->cur_topo = -1;      /* models come from later NodeName= lines */
	const struct tp__conf_kind *kind = ld->c->kind;
	if (sw && !(kind && kind->switch_file))
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "SwitchFile= needs Network=%s", switch_file_kind());
	int rc = ensure_machine(ld, t->line, sw ? "SwitchFile=" : "CoordFile=");
	if (rc)
		return rc;
	if (ld->c->from_slurm)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "%s= does not apply to Slurm's topology (its file places the nodes)",
			    t->key);
	if (ld->c->kind->nodes_sit)
		return lerr(ld, NULL, t->line, TP_EINVAL,
			    "CoordFile= does not apply to Network=%s", ld->c->kind->name);
	char *path;
	if (t->val[0] != '/' && ld->dir) {
		size_t n = strlen(ld->dir) + strlen(t->val) + 2;
		path = malloc(n);
		if (path)
			snprintf(path, n, "%s/%s", ld->dir, t->val);
	} else {
		path = strdup(t->val);
	}
	if (!path)
		return oom(ld);
	int src = add_src(ld, path);
	free(path);
	if (src < 0)
		return oom(ld);
	const char *file = ld->srcs[src];
	char *text;
	size_t len;
	tp_error e2;
	tp_error_clear(&e2);
	rc = tp__read_file(file, TP__MAX_COORDS_BYTES, sw ? "a SwitchFile" : "a CoordFile",
			   &text, &len, &e2);
	if (rc)
		return file_err(ld, t->line, rc, t->key, t->val, file, &e2);
	struct coord_file cf = {
		.ld = ld, .file = file, .sw = sw,
		.run = { .ld = ld, .src = src, .nd = ld->c->b.m->ndims },
	};
	/* a coordinate file usually fills the grid: room for it at once
	 * (address space until nodes are placed) */
	rc = nodes_reserve(ld, 1, true);
	if (rc == TP_OK)
		rc = tp__each_line(text, &coord_format, file, ld->r.err, coord_line, &cf);
	if (rc == TP_OK)
		rc = cf_run_flush(&cf.run);
	free(text);
	if (rc == TP_OK && cf.placed == 0)
		rc = lerr(ld, file, 0, TP_EINVAL, "no nodes in %s", t->key);
	return rc;
}

/* A path relative to the config file's directory; NULL when out of memory. */
static char *conf_path(const struct loader *ld, const char *val)
{
	if (val[0] == '/' || !ld->dir)
		return strdup(val);
	size_t n = strlen(ld->dir) + strlen(val) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", ld->dir, val);
	return p;
}

/* NodeTopology= (and GpuLinks=, GpuLinkBandwidth= as linkbw GB/s, 0 when
 * not given) of a NodeName= line: sets ld->cur_topo. */
static int add_topo(struct loader *ld, const struct tp__conf_tok *topo,
		    const struct tp__conf_tok *links, double linkbw)
{
	if (!*topo->val)
		return lerr(ld, NULL, topo->line, TP_EINVAL,
			    "NodeTopology=: empty file name");
	if (links && !*links->val)
		return lerr(ld, NULL, links->line, TP_EINVAL,
			    "GpuLinks=: empty file name");
	tp_conf *c = ld->c;
	char *x = conf_path(ld, topo->val);
	char *l = links ? conf_path(ld, links->val) : NULL;
	if (!x || (links && !l)) {
		free(x);
		free(l);
		return oom(ld);
	}
	for (int i = 0; i < c->ntopo; i++)
		if (!strcmp(c->topo_xml[i], x) && c->topo_linkbw[i] == linkbw &&
		    (l ? c->topo_links[i] && !strcmp(c->topo_links[i], l)
		       : !c->topo_links[i])) {
			free(x);
			free(l);
			ld->cur_topo = i;
			return 0;
		}
	char **nx = realloc(c->topo_xml, sizeof(char *) * (size_t)(c->ntopo + 1));
	if (nx)
		c->topo_xml = nx;
	char **nl = nx ? realloc(c->topo_links, sizeof(char *) * (size_t)(c->ntopo + 1))
		       : NULL;
	if (nl)
		c->topo_links = nl;
	int *nline = nl ? realloc(c->topo_line, sizeof(int) * 2 * (size_t)(c->ntopo + 1))
			: NULL;
	if (nline)
		c->topo_line = nline;
	double *nb = nline ? realloc(c->topo_linkbw, sizeof(double) *
				     (size_t)(c->ntopo + 1)) : NULL;
	if (nb)
		c->topo_linkbw = nb;
	if (!nx || !nl || !nline || !nb) {
		free(x);
		free(l);
		return oom(ld);
	}
	c->topo_xml[c->ntopo] = x;
	c->topo_links[c->ntopo] = l;
	c->topo_linkbw[c->ntopo] = linkbw;
	c->topo_line[2 * c->ntopo] = topo->line;
	c->topo_line[2 * c->ntopo + 1] = links ? links->line : 0;
	ld->cur_topo = c->ntopo++;
	return 0;
}

/* ---- NodeName lines ----
 *
 * A NodeName= line goes through four phases: its keys are sorted out
 * (node_keys), NodeTopology=/GpuLinks= are recorded, the placement keys
 * are checked without expanding the hostlist (node_coords, node_order), and
 * then the hostlist is counted, bounded and its names placed one by one
 * (place_names). */

struct node_keys {
	const struct tp__conf_tok *name, *order, *offset, *coords, *topo, *links,
				  *linkbw;
};

/* The hostlist of a NodeName= line, counted and bounded before any name
 * is expanded. */
static int node_hostlist(struct loader *ld, const struct tp__conf_tok *name,
			 struct tp__hostlist **hl, int64_t *count)
{
	char what[TP_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof what, "NodeName=%s", name->val);
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__hostlist_parse(name->val, what, TP__MAX_CONF_NAMES,
				    "the most one config line may name", hl,
				    count, &e2);
	if (rc)
		return lerr(ld, NULL, name->line, rc, "%s", e2.msg);
	if (*count == 0) {
		tp__hostlist_free(*hl);
		*hl = NULL;
		return lerr(ld, NULL, name->line, TP_EINVAL,
			    "NodeName=%s: no node names", name->val);
	}
	return TP_OK;
}

/* How else the nodes of kind are placed, in messages. */
static const char *more_keys(const struct tp__conf_kind *kind)
{
	return kind->more_keys ? kind->more_keys : "";
}

static const char *place_files(const struct tp__conf_kind *kind)
{
	return kind->place_files ? kind->place_files : "CoordFile=";
}

/* A NodeName= line that places nothing: on a tree (whose nodes sit under
 * their switches) a check that every node is under a switch; anywhere it
 * gives nodes placed before (by a CoordFile=, or on a tree) their
 * NodeTopology= and GpuLinks= (a later line wins). */
struct model_ctx {
	struct loader *ld;
	const struct tp__conf_tok *name;
};

/* Nodes of a NodeName= line without placement: placed already (by the
 * topology, the block file or an earlier line); NodeTopology= for each. */
static int model_nodes(void *arg, int32_t first, int32_t count,
		       const struct tp__listed *l)
{
	struct model_ctx *x = arg;
	struct loader *ld = x->ld;
	const struct tp__conf_kind *kind = ld->c->kind;
	char host[TP__HOSTNAME_MAX];
	/* Slurm's topology is the partition's: other nodes are another's */
	if (first < 0 && ld->c->from_slurm)
		return 0;
	if (first < 0 && kind->nodes_sit)
		return lerr(ld, NULL, x->name->line, TP_EINVAL,
			    "NodeName=%s: node '%s' is %s of %s", x->name->val,
			    tp__listed_name(l, 0, host), kind->unplaced,
			    ld->c->b.topo_path);
	if (first < 0)
		return lerr(ld, NULL, x->name->line, TP_EINVAL,
			    "NodeName=%s: node '%s' is not placed (give Coords= or CoordOrder=%s, or place it with a %s line before this one)",
			    x->name->val, tp__listed_name(l, 0, host), more_keys(kind),
			    place_files(kind));
	if (ld->cur_topo >= 0)
		for (int32_t i = count; i-- > 0;)   /* the last first: one growth */
			if (node_topo_set(ld->c, first + i, ld->cur_topo) < 0)
				return oom(ld);
	return TP_OK;
}

static int model_line(struct loader *ld, const struct tp__conf_tok *name)
{
	struct tp__hostlist *hl;
	int64_t count;
	int rc = node_hostlist(ld, name, &hl, &count);
	if (rc)
		return rc;
	struct model_ctx x = { ld, name };
	rc = tp__machine_each_listed(ld->c->b.m, hl, model_nodes, &x);
	tp__hostlist_free(hl);
	return rc;
}

/* Sort the keys of a NodeName= line into k; each at most once. */
static int node_keys(struct loader *ld, const struct tp__conf_tok *toks, int n,
		     struct node_keys *k)
{
	memset(k, 0, sizeof *k);
	for (int i = 0; i < n; i++) {
		const struct tp__conf_tok *t = &toks[i];
		const struct tp__conf_tok **slot;
		if (!strcasecmp(t->key, "NodeName"))
			slot = &k->name;
		else if (!strcasecmp(t->key, "NodeTopology"))
			slot = &k->topo;
		else if (!strcasecmp(t->key, "GpuLinks"))
			slot = &k->links;
		else if (!strcasecmp(t->key, "GpuLinkBandwidth"))
			slot = &k->linkbw;
		else if (!strcasecmp(t->key, "CoordOrder"))
			slot = &k->order;
		else if (!strcasecmp(t->key, "Offset"))
			slot = &k->offset;
		else if (!strcasecmp(t->key, "Coords"))
			slot = &k->coords;
		else
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s=%s: not allowed on a NodeName= line (only CoordOrder=, Offset=, Coords=, NodeTopology=, GpuLinks=, GpuLinkBandwidth=)",
				    t->key, t->val);
		if (*slot)
			return lerr(ld, NULL, t->line, TP_EINVAL,
				    "%s= given twice on one line", t->key);
		*slot = t;
	}
	return TP_OK;
}

/* Coords=X,Y,Z: one position inside the grid. */
static int node_coords(struct loader *ld, const struct tp__conf_tok *coords, int *c)
{
	const tp_machine *m = ld->c->b.m;
	int nd = m->ndims;
	char tmp[256];
	if (strlen(coords->val) >= sizeof tmp)
		return lerr(ld, NULL, coords->line, TP_EINVAL,
			    "Coords=%.40s...: too long", coords->val);
	strcpy(tmp, coords->val);
	char *parts[TP_MAX_DIMS];
	int k = split(tmp, ',', parts, TP_MAX_DIMS);
	if (k != nd)
		return lerr(ld, NULL, coords->line, TP_EINVAL,
			    "Coords=%s: %s%d coordinates, Dims=%s has %d dimensions",
			    coords->val, k > TP_MAX_DIMS ? "more than " : "",
			    k > TP_MAX_DIMS ? TP_MAX_DIMS : k, ld->r.dims_text, nd);
	for (int d = 0; d < nd; d++) {
		long long v;
		int r = tp__conf_parse_ll(parts[d], INT_MIN, INT_MAX, &v);
		if (r == -1)
			return lerr(ld, NULL, coords->line, TP_EINVAL,
				    "Coords=%s: coordinate %d ('%s') is not a number",
				    coords->val, d, parts[d]);
		if (r == -2 || v < 0 || v >= m->dims[d])
			return lerr(ld, NULL, coords->line, TP_EINVAL,
				    "Coords=%s: coordinate %d is outside 0..%d",
				    coords->val, d, m->dims[d] - 1);
		c[d] = (int)v;
	}
	return TP_OK;
}

/* CoordOrder=x-major|z-major and Offset=N. */
static int node_order(struct loader *ld, const struct node_keys *k,
		      bool *x_major, long long *off)
{
	*off = 0;
	if (!strcasecmp(k->order->val, "x-major"))
		*x_major = true;
	else if (!strcasecmp(k->order->val, "z-major"))
		*x_major = false;
	else
		return lerr(ld, NULL, k->order->line, TP_EINVAL,
			    "CoordOrder=%s: expected x-major or z-major",
			    k->order->val);
	if (k->offset) {
		int r = tp__conf_parse_ll(k->offset->val, 0, INT64_MAX / 4, off);
		if (r)
			return lerr(ld, NULL, k->offset->line, TP_EINVAL,
				    "Offset=%s: %s", k->offset->val,
				    r == -1 ? "not a number" : "expected a number >= 0");
	}
	return TP_OK;
}

/* Position p of the grid in CoordOrder= order into c. */
static void order_coords(const tp_machine *m, bool x_major, int64_t p, int *c)
{
	int64_t q = p / m->nodes_per_router;
	if (x_major) {
		for (int d = 0; d < m->ndims; d++) {
			c[d] = (int)(q % m->dims[d]);
			q /= m->dims[d];
		}
	} else {
		for (int d = m->ndims - 1; d >= 0; d--) {
			c[d] = (int)(q % m->dims[d]);
			q /= m->dims[d];
		}
	}
}

/* Ranges shorter than this go name by name (the machine's table of runs
 * stays small whatever the config). */
#define RUN_MIN 256

/* The grid positions of a run, walked in order: an increment per node
 * instead of a division per dimension. */
struct run_place {
	const tp_machine *m;
	bool x_major;
	int64_t from, next;        /* next: the i that c[] holds */
	int sub;                   /* node on the router */
	int c[TP_MAX_DIMS];
};

static void run_coords(void *arg, int64_t i, int *c)
{
	struct run_place *rp = arg;
	const tp_machine *m = rp->m;
	if (i != rp->next) {
		order_coords(m, rp->x_major, rp->from + i, rp->c);
		rp->sub = (int)((rp->from + i) % m->nodes_per_router);
	}
	for (int d = 0; d < m->ndims; d++)
		c[d] = rp->c[d];
	rp->next = i + 1;
	if (++rp->sub < m->nodes_per_router)
		return;
	rp->sub = 0;
	int n = m->ndims;
	for (int k = 0; k < n; k++) {
		int d = rp->x_major ? k : n - 1 - k;
		if (++rp->c[d] < m->dims[d])
			return;
		rp->c[d] = 0;
	}
}

/* The names of run along the grid from position from. */
static int place_run(struct loader *ld, const struct tp__hostlist_run *run,
		     bool x_major, int64_t from, int line)
{
	tp_machine *m = ld->c->b.m;
	int32_t first = m->nnodes, prev = -1;
	int64_t count = (int64_t)(run->hi - run->lo) + 1;
	struct run_place rp = { .m = m, .x_major = x_major, .from = from,
				.next = -1 };
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__machine_add_run(m, run, run_coords, &rp, &prev, &e2);
	if (rc && prev >= 0) {
		char name[TP__HOSTNAME_MAX];
		tp__machine_name_put(m, prev, name);
		return duplicate(ld, NULL, line, name, prev);
	}
	if (rc)
		return lerr(ld, NULL, line, rc, "%s", e2.msg);
	if (origin_add(ld, first, count, line, 0, 0))
		return TP_ENOMEM;
	if (ld->cur_topo >= 0)
		for (int64_t i = count; i-- > 0;)   /* the last first: one growth */
			if (node_topo_set(ld->c, first + (int32_t)i, ld->cur_topo) < 0)
				return oom(ld);
	return TP_OK;
}

/* Expand the hostlist and place its names: at c (Coords=) or along the
 * grid from position off (CoordOrder=). */
static int place_names(struct loader *ld, const struct node_keys *k, int *c,
		       bool x_major, long long off)
{
	const tp_machine *m = ld->c->b.m;
	const struct tp__conf_tok *name = k->name;
	int line = name->line;
	struct tp__hostlist *hl;
	int64_t count;
	int rc = node_hostlist(ld, name, &hl, &count);
	if (rc)
		return rc;
	int64_t per = m->nodes_per_router;
	int64_t positions = m->nrouters > INT64_MAX / per ? INT64_MAX : m->nrouters * per;
	if (k->coords && count != 1)
		rc = lerr(ld, NULL, line, TP_EINVAL,
			  "NodeName=%s: Coords= places one node, the hostlist has %lld names (use CoordOrder=)",
			  name->val, (long long)count);
	else if (k->order && off + count > positions)
		rc = lerr(ld, NULL, line, TP_EINVAL,
			  "NodeName=%s CoordOrder=%s: %lld nodes from position %lld go beyond the grid's %lld positions (Dims=%s, %lld per router)",
			  name->val, k->order->val, (long long)count, off,
			  (long long)positions, ld->r.dims_text, (long long)per);
	if (rc == TP_OK)
		rc = nodes_reserve(ld, count, k->order != NULL);
	/* Along the grid, a long numbered range ("nid[000000-158975]") is one
	 * record of the machine; other names go one by one. */
	char host[TP__HOSTNAME_MAX];
	struct tp__hostlist_run run;
	int got;
	for (int64_t i = 0; rc == TP_OK; i++) {
		got = tp__hostlist_next_run(hl, host, k->order ? RUN_MIN : UINT64_MAX,
					    &run);
		if (!got)
			break;
		if (got == 2) {
			rc = place_run(ld, &run, x_major, off + i, line);
			i += (int64_t)(run.hi - run.lo);
			continue;
		}
		if (k->order)
			order_coords(m, x_major, off + i, c);
		rc = place_node(ld, host, c, 0, line);
	}
	tp__hostlist_free(hl);
	return rc;
}

int tp__conf_hostlist(struct tp__conf_reader *r, const struct tp__conf_tok *name,
		      struct tp__hostlist **hl, int64_t *count)
{
	struct loader *ld = loader_of(r);
	*hl = NULL;
	int rc = node_hostlist(ld, name, hl, count);
	if (rc == TP_OK)
		rc = nodes_reserve(ld, *count, false);
	if (rc) {
		tp__hostlist_free(*hl);
		*hl = NULL;
	}
	return rc;
}

int tp__conf_place(struct tp__conf_reader *r, const char *name,
		   const int *coords, int line)
{
	return place_node(loader_of(r), name, coords, 0, line);
}

static int node_line(struct loader *ld, const struct tp__conf_tok *toks, int n)
{
	struct node_keys k;
	ld->cur_topo = -1;
	int rc = node_keys(ld, toks, n, &k);
	if (rc)
		return rc;
	const struct tp__conf_tok *name = k.name;
	int line = name->line;
	if (!ld->r.net_line && !ld->c->b.m && (k.coords || k.order || k.offset))
		return lerr(ld, NULL, line, TP_EINVAL,
			    "NodeName= before Network= (Network= and Dims= must come "
			    "first; without Network=, Slurm's topology places the nodes)");
	if ((rc = ensure_machine(ld, line, "NodeName=")))
		return rc;
	if (k.links && !k.topo)
		return lerr(ld, NULL, k.links->line, TP_EINVAL,
			    "NodeName=%s: GpuLinks= needs NodeTopology=", name->val);
	/* GpuLinkBandwidth=: the speed of the links GpuLinks= only counts */
	if (k.linkbw && !k.links)
		return lerr(ld, NULL, k.linkbw->line, TP_EINVAL,
			    "NodeName=%s: GpuLinkBandwidth= needs GpuLinks= (an XML's "
			    "distances carry their own speed)", name->val);
	double linkbw = 0;
	if (k.linkbw && (rc = tp__conf_bandwidth(&ld->r, k.linkbw, &linkbw)))
		return rc;
	if (k.topo && (rc = add_topo(ld, k.topo, k.links, linkbw)) < 0)
		return rc;
	const struct tp__conf_tok *extra = k.coords ? k.coords : k.order ? k.order : k.offset;
	const struct tp__conf_kind *kind = ld->c->kind;
	bool in_file = ld->c->from_slurm || kind->nodes_sit;
	if (ld->c->from_slurm && extra)
		return lerr(ld, NULL, extra->line, TP_EINVAL,
			    "NodeName=%s: %s= does not apply to Slurm's topology (its file places the nodes)",
			    name->val, extra->key);
	if (in_file && extra)
		return lerr(ld, NULL, extra->line, TP_EINVAL,
			    "NodeName=%s: %s= does not apply to Network=%s (nodes sit %s in TopologyFile=)",
			    name->val, extra->key, kind->name, kind->nodes_sit);
	/* a kind may place the names it reads itself (NodeNameFormat=); a
	 * line without a place otherwise gives models to nodes placed before */
	void *state = state_of(ld, kind);
	if (!in_file && !extra && kind->names_place && kind->names_place(state))
		return kind->place_names(&ld->r, state, name);
	if (in_file || (!extra && k.topo))
		return model_line(ld, name);
	if (!k.coords && !k.order)
		return lerr(ld, NULL, line, TP_EINVAL,
			    "NodeName=%s: needs Coords= or CoordOrder=%s (or NodeTopology= for nodes a %s placed)",
			    name->val, more_keys(kind), place_files(kind));
	if (k.coords && k.order)
		return lerr(ld, NULL, k.coords->line, TP_EINVAL,
			    "NodeName=%s: Coords= and CoordOrder= exclude each other",
			    name->val);
	if (k.offset && !k.order)
		return lerr(ld, NULL, k.offset->line, TP_EINVAL,
			    "NodeName=%s: Offset= needs CoordOrder=", name->val);
	/* Everything cheap is checked before the hostlist is expanded. */
	int c[TP_MAX_DIMS];
	bool x_major = true;
	long long off = 0;
	rc = k.coords ? node_coords(ld, k.coords, c)
		      : node_order(ld, &k, &x_major, &off);
	return rc ? rc : place_names(ld, &k, c, x_major, off);
}

/* ---- logical lines ---- */

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
	int rc = set_once(ld, t, key_line(ld, i, j), true);
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

static int settings_line(struct loader *ld, const struct tp__conf_tok *toks, int n)
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
		else if (!strcasecmp(k, "TopologyFile"))
			rc = set_topo(ld, t);
		else if (!strcasecmp(k, "Distance"))
			rc = set_distance(ld, t);
		else if (!strcasecmp(k, "LevelCost"))
			rc = set_levels(ld, t, true);
		else if (!strcasecmp(k, "LevelBandwidth"))
			rc = set_levels(ld, t, false);
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
			rc = load_coord_file(ld, &toks[i]);
	return rc;
}

static int logical_line(struct loader *ld)
{
	const struct tp__conf_tok *name = NULL;
	for (int i = 0; i < ld->ntoks; i++) {
		if (!strcasecmp(ld->toks[i].key, "NodeName")) {
			if (name)
				return lerr(ld, NULL, ld->toks[i].line, TP_EINVAL,
					    "NodeName= given twice on one line");
			name = &ld->toks[i];
		}
	}
	int rc = name ? node_line(ld, ld->toks, ld->ntoks)
		      : settings_line(ld, ld->toks, ld->ntoks);
	ld->ntoks = 0;
	return rc;
}

static int push_tok(struct loader *ld, char *key, char *val, int line)
{
	if (ld->ntoks == ld->tokcap) {
		int ncap = ld->tokcap ? ld->tokcap * 2 : 16;
		struct tp__conf_tok *nt = realloc(ld->toks, (size_t)ncap * sizeof *nt);
		if (!nt)
			return oom(ld);
		ld->toks = nt;
		ld->tokcap = ncap;
	}
	ld->toks[ld->ntoks].key = key;
	ld->toks[ld->ntoks].val = val;
	ld->toks[ld->ntoks].line = line;
	ld->ntoks++;
	return TP_OK;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Split one physical line (comment already cut) into tokens, in place.
 * Double quotes group a value that holds blanks: CoordFile="a b.coords". */
static int tokenize(struct loader *ld, char *s, int line)
{
	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			return TP_OK;
		char *start = s, *w = s, *eq = NULL;
		bool q = false;
		for (; *s && (q || !is_blank(*s)); s++) {
			if (*s == '"') {
				q = !q;
				continue;
			}
			if (*s == '=' && !eq && !q)
				eq = w;
			*w++ = *s;
		}
		if (q) {
			*w = '\0';   /* the token as read, not its unshifted tail */
			return lerr(ld, NULL, line, TP_EINVAL,
				    "unterminated '\"' in '%s'", start);
		}
		bool more = *s != '\0';
		*w = '\0';
		if (more)
			s++;
		if (!eq)
			return lerr(ld, NULL, line, TP_EINVAL,
				    "'%s': expected Key=Value", start);
		*eq = '\0';
		if (eq == start)
			return lerr(ld, NULL, line, TP_EINVAL,
				    "'=%s': missing key before '='", eq + 1);
		if (!eq[1])
			return lerr(ld, NULL, line, TP_EINVAL, "%s=: empty value",
				    start);
		int rc = push_tok(ld, start, eq + 1, line);
		if (rc)
			return rc;
		if (!more)
			return TP_OK;
	}
}

static int at_end(struct loader *ld);

/* topoplace.conf's lines: a '#' between double quotes is no comment
 * (CoordFile="a#b.coords") and a '\' escapes nothing.  Its '\'
 * continuation is conf_line's, not the loop's: each token of a continued
 * line keeps its own physical line for messages. */
static const struct tp__line_format conf_format = {
	.comment = '#', .quotes = true,
};

/* One physical line, comment cut: its tokens join those that a '\' at
 * the end of the lines before carried over; a line without one ends the
 * logical line, which then takes effect. */
static int conf_line(void *arg, char *p, long number)
{
	struct loader *ld = arg;
	size_t len = strlen(p);
	while (len && is_blank(p[len - 1]))
		p[--len] = '\0';
	bool cont = len && p[len - 1] == '\\';
	if (cont)
		p[--len] = '\0';
	int rc = tokenize(ld, p, (int)number);
	if (rc == TP_OK && !cont && ld->ntoks)
		rc = logical_line(ld);
	return rc;
}

static int parse_text(struct loader *ld, char *text)
{
	int rc = tp__each_line(text, &conf_format, ld->r.what, ld->r.err,
			       conf_line, ld);
	/* a '\' on the last line: the tokens it carried still take effect */
	if (rc == TP_OK && ld->ntoks)
		rc = logical_line(ld);
	if (rc)
		return rc;
	return at_end(ld);
}

/* After the last line: the machine built, checked and finished. */
static int at_end(struct loader *ld)
{
	int rc;
	if (!ld->r.net_line && !own_network(ld))
		ld->slurm_net = true;   /* zero configuration: Slurm's topology */
	if (!ld->r.net_line && !ld->slurm_net)
		return lerr(ld, NULL, 0, TP_EINVAL, "no Network= line");
	if (ld->slurm_net && (rc = ensure_machine(ld, 0, "end of file")))
		return rc;
	const struct tp__conf_kind *kind = ld->c->kind;
	if (!kind->dims_shape && (rc = ensure_machine(ld, 0, "end of file")))
		return rc;
	if (ld->c->b.m) {
		struct tp__fabric *f = &ld->c->b.m->fab;
		if (ld->lat_line)
			f->hop_lat = ld->lat_s;
		if (ld->nodebw_line) {
			f->node_bw = ld->nodebw * 1e9;
			f->node_bw_set = true;
		}
		if (ld->intrabw_line)
			f->intra_bw = ld->intrabw * 1e9;
		f->rtt_sharing = ld->rtt_sharing;
	}
	if (kind->finish && (rc = kind->finish(&ld->r, state_of(ld, kind))))
		return rc;
	if (kind->dims_shape && !ld->r.dims_line && !ld->c->from_slurm)
		return lerr(ld, NULL, 0, TP_EINVAL, "no Dims= line");
	if (!ld->c->b.m || ld->c->b.m->nnodes == 0)
		return lerr(ld, NULL, 0, TP_EINVAL,
			    "no nodes (no NodeName= or CoordFile= line)");
	return TP_OK;
}

/* Each kind's state, zeroed. */
static int states_new(struct loader *ld)
{
	int n = nkinds();
	if (!(ld->state = calloc((size_t)n, sizeof *ld->state)))
		return -1;
	for (int i = 0; i < n; i++)
		if (tp__conf_kinds[i]->state_size &&
		    !(ld->state[i] = calloc(1, tp__conf_kinds[i]->state_size)))
			return -1;
	return 0;
}

static void loader_free(struct loader *ld)
{
	free(ld->dir);
	free(ld->r.dims_text);
	free(ld->r.wrap_text);
	free(ld->r.bw_text);
	free(ld->r.topo_text);
	for (int i = 0; ld->state && tp__conf_kinds[i]; i++) {
		if (ld->state[i] && tp__conf_kinds[i]->free_state)
			tp__conf_kinds[i]->free_state(ld->state[i]);
		free(ld->state[i]);
	}
	free(ld->state);
	free(ld->origin);
	for (int i = 0; i < ld->nsrcs; i++)
		free(ld->srcs[i]);
	free(ld->srcs);
	free(ld->toks);
}

/* A copy of the live view into c (NULL: none). */
static int keep_live(tp_conf *c, const struct tp__slurm_live *live)
{
	if (!live || !live->text)
		return TP_OK;
	char *text = malloc(live->len + 1);
	if (!text)
		return TP_ENOMEM;
	memcpy(text, live->text, live->len);
	text[live->len] = '\0';
	c->live.text = text;
	c->live.len = live->len;
	c->has_live = true;
	if ((live->topology && !(c->live.topology = strdup(live->topology))) ||
	    !(c->live.what = strdup(live->what ? live->what : "slurmctld's topology")))
		return TP_ENOMEM;
	return TP_OK;
}

const struct tp__slurm_live *tp__conf_live(const tp_conf *c)
{
	return c && c->has_live ? &c->live : NULL;
}

static int load(char *text, const char *what, const char *dir,
		const tp_conf_slurm *slurm, const struct tp__slurm_live *live,
		tp_conf **out, tp_error *err)
{
	struct loader ld;
	memset(&ld, 0, sizeof ld);
	ld.cur_topo = -1;
	ld.slurm = slurm;
	ld.r.what = what;
	ld.r.err = err;
	ld.c = calloc(1, sizeof *ld.c);
	int rc = TP_OK;
	if (!ld.c || !(ld.c->path = strdup(what)) || (dir && !(ld.dir = strdup(dir))) ||
	    add_src(&ld, what) != 0 || states_new(&ld) || keep_live(ld.c, live)) {
		rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	} else {
		ld.r.dir = ld.dir;
		ld.r.out = &ld.c->b;
		ld.c->policy = TP_POLICY_NONE;
		ld.c->metric = TP_METRIC_HOP_BYTES;
		rc = parse_text(&ld, text);
	}
	if (rc) {
		tp_conf_destroy(ld.c);
		ld.c = NULL;
	}
	*out = ld.c;
	loader_free(&ld);
	return rc;
}

int tp_conf_load(const char *path, tp_conf **out, tp_error *err)
{
	return tp_conf_load_slurm(path, NULL, out, err);
}

int tp_conf_load_slurm(const char *path, const tp_conf_slurm *slurm,
		       tp_conf **out, tp_error *err)
{
	return tp_conf_load_slurm_live(path, slurm, NULL, 0, NULL, NULL, out, err);
}

int tp_conf_load_slurm_live(const char *path, const tp_conf_slurm *slurm,
			    const char *live_text, size_t live_len,
			    const char *live_topology, const char *live_what,
			    tp_conf **out, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "tp_conf_load: out is NULL");
	*out = NULL;
	if (!path || !*path)
		return tp_error_set(err, TP_EINVAL, "tp_conf_load: no path");
	char *text;
	size_t len;
	int rc = tp__read_file(path, TP__MAX_CONF_BYTES, "topoplace.conf", &text,
			       &len, err);
	if (rc)
		return rc;
	char *dir = NULL;
	const char *slash = strrchr(path, '/');
	if (slash) {
		size_t n = (size_t)(slash - path);
		dir = strndup(path, n ? n : 1); /* "/x.conf" -> "/" */
		if (!dir) {
			free(text);
			return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
		}
	}
	struct tp__slurm_live live = { live_text, live_len, live_topology, live_what };
	rc = load(text, path, dir, slurm, live_text ? &live : NULL, out, err);
	free(dir);
	free(text);
	return rc;
}

int tp_conf_load_string(const char *text, const char *what, tp_conf **out,
			tp_error *err)
{
	if (!what)
		what = "config";
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: out is NULL", what);
	*out = NULL;
	if (!text)
		return tp_error_set(err, TP_EINVAL, "%s: text is NULL", what);
	char *copy = strdup(text);
	if (!copy)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = load(copy, what, NULL, NULL, NULL, out, err);
	free(copy);
	return rc;
}

void tp_conf_destroy(tp_conf *c)
{
	if (!c)
		return;
	tp_machine_destroy(c->b.m);
	free(c->source);
	free(c->used);
	free((char *)c->live.text);
	free((char *)c->live.topology);
	free((char *)c->live.what);
	for (int i = 0; i < c->nslurm_topo; i++)
		free(c->slurm_topo[i]);
	free(c->slurm_topo);
	free(c->b.topo_path);
	free(c->b.tree_path);
	for (int i = 0; i < c->ntopo; i++) {
		free(c->topo_xml[i]);
		free(c->topo_links[i]);
	}
	free(c->topo_xml);
	free(c->topo_links);
	free(c->topo_linkbw);
	free(c->topo_line);
	free(c->node_topo);
	free(c->path);
	free(c);
}

const char *tp_conf_network_source(const tp_conf *c)
{
	return c && c->from_slurm ? c->source : NULL;
}

const char *tp_conf_network_used(const tp_conf *c)
{
	return c && c->from_slurm ? c->used : NULL;
}

int tp_conf_slurm_ntopologies(const tp_conf *c)
{
	return c ? c->nslurm_topo : 0;
}

const char *tp_conf_slurm_topology(const tp_conf *c, int i)
{
	return c && i >= 0 && i < c->nslurm_topo ? c->slurm_topo[i] : NULL;
}

int tp_conf_slurm_topology_names(const tp_conf_slurm *s, char ***names, int *n,
				 tp_error *err)
{
	*names = NULL;
	*n = 0;
	struct tp__slurm_topology st;
	int rc = tp__slurm_topology_load(s && s->slurm_conf ? s->slurm_conf
					 : TP_DEFAULT_SLURM_CONF, NULL,
					 s ? s->slurm_version : 0, NULL, &st, NULL, err);
	if (rc)
		return rc;
	if (st.yaml && st.set.n > 0) {
		*names = calloc((size_t)st.set.n, sizeof **names);
		for (int i = 0; *names && i < st.set.n; i++) {
			if (!((*names)[i] = strdup(st.set.t[i].name)))
				break;
			*n = i + 1;
		}
		if (*n != st.set.n)
			rc = tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	tp__slurm_topology_free(&st);
	if (rc) {
		tp_conf_slurm_topology_names_free(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return rc;
}

void tp_conf_slurm_topology_names_free(char **names, int n)
{
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int tp_conf_slurm_topology_used(const tp_conf *c)
{
	return c && c->from_slurm ? c->slurm_used : -1;
}

int tp_conf_nwarnings(const tp_conf *c)
{
	return c ? c->b.warn.n : 0;
}

const char *tp_conf_warning(const tp_conf *c, int i)
{
	return c && i >= 0 && i < c->b.warn.n ? c->b.warn.line[i] : NULL;
}

int tp_conf_nmodels(const tp_conf *c)
{
	return c ? c->ntopo : 0;
}

/* "topoplace.conf:7: NodeTopology=PATH: problem", PATH not repeated. */
static int model_err(const tp_conf *c, int line, const char *key,
		     const char *path, int rc, const tp_error *e, tp_error *err)
{
	size_t n = strlen(path);
	const char *msg = e->msg;
	if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	return tp_error_set(err, rc, "%s:%d: %s=%s: %s", c->path, line, key,
			    path, msg);
}

/* What check-config adds to loading: a node model is read only when a job
 * needs it (the plugin never loads models with the config), so a mistyped
 * NodeTopology= path would surface only then; here it is read as a job
 * would read it, and named with its config line. */
int tp_conf_check_model(const tp_conf *c, int i, tp_error *err)
{
	if (!c || i < 0 || i >= c->ntopo)
		return tp_error_set(err, TP_EINVAL, "node model %d: no such model", i);
	tp_node *n = NULL;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp_node_load_xml(c->topo_xml[i], &n, &e);
	if (rc)
		return model_err(c, c->topo_line[2 * i], "NodeTopology",
				 c->topo_xml[i], rc, &e, err);
	tp__node_set_link_rate(n, c->topo_linkbw[i]);
	if (c->topo_links[i] && (rc = tp_node_load_links(n, c->topo_links[i], &e)) < 0) {
		tp_node_destroy(n);
		return model_err(c, c->topo_line[2 * i + 1], "GpuLinks",
				 c->topo_links[i], rc, &e, err);
	}
	tp_node_destroy(n);
	return TP_OK;
}

static int topo_of(const tp_conf *c, int32_t node)
{
	if (!c || !c->node_topo || node < 0 || node >= c->node_topo_cap)
		return -1;
	return c->node_topo[node];
}

const char *tp_conf_node_topology(const tp_conf *c, int32_t node)
{
	int t = topo_of(c, node);
	return t >= 0 ? c->topo_xml[t] : NULL;
}

const char *tp_conf_node_gpu_links(const tp_conf *c, int32_t node)
{
	int t = topo_of(c, node);
	return t >= 0 ? c->topo_links[t] : NULL;
}

double tp_conf_node_gpu_link_bw(const tp_conf *c, int32_t node)
{
	int t = topo_of(c, node);
	return t >= 0 ? c->topo_linkbw[t] : 0;
}

const tp_machine *tp_conf_machine(const tp_conf *c)
{
	return c ? c->b.m : NULL;
}

enum tp_policy tp_conf_default_policy(const tp_conf *c)
{
	return c ? c->policy : TP_POLICY_NONE;
}

bool tp_conf_has_default_policy(const tp_conf *c)
{
	return c && c->has_policy;
}

enum tp_metric_kind tp_conf_default_metric(const tp_conf *c)
{
	return c ? c->metric : TP_METRIC_HOP_BYTES;
}

bool tp_conf_has_time_budget(const tp_conf *c)
{
	return c && c->has_time_budget;
}

double tp_conf_time_budget_ms(const tp_conf *c)
{
	return c ? c->time_budget_ms : 0.0;
}

int tp_conf_max_threads(const tp_conf *c)
{
	return c ? c->max_threads : 0;
}

void tp_conf_describe(const tp_conf *c, FILE *out)
{
	if (!c || !c->b.m || !out)
		return;
	if (c->kind && c->kind->describe)
		c->kind->describe(&c->b, out);
	const struct tp__fabric *f = &c->b.m->fab;
	double port = tp__machine_node_port_bw(c->b.m);
	fprintf(out, "predicted time: %g us a link, node ports %g GB/s, %g GB/s "
		"inside a node, %s sharing\n", f->hop_lat * 1e6, port / 1e9,
		f->intra_bw / 1e9, f->rtt_sharing ? "rtt" : "fair");
	fprintf(out, "default policy %s, metric %s, time budget ",
		c->has_policy ? tp_policy_name(c->policy) : "auto (the default)",
		tp_metric_name(c->metric));
	/* which budget applies where, and why (TimeBudgetMs= or not) */
	if (c->time_budget_ms > 0)
		fprintf(out, "%g ms (TimeBudgetMs=)", c->time_budget_ms);
	else if (c->has_time_budget)
		fputs("none (TimeBudgetMs=0)", out);
	else
		fprintf(out, "none for topoplace map, %g ms in srun and slurmstepd "
			"unless the plugstack line's time_budget_ms= sets one (no "
			"TimeBudgetMs=)", TP_JOB_LAUNCH_BUDGET_MS);
	if (c->max_threads > 0)
		fprintf(out, ", at most %d threads", c->max_threads);
	fputc('\n', out);
}
