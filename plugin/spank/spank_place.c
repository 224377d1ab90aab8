/* topoplace SPANK plugin — one placement, from the site settings, the job's
 * hints and the step's allocation to a private SLURM_HOSTFILE.  No SPANK
 * calls here: the hooks in spank_topoplace.c decide when to call it and what
 * to do with the result. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/topoplace.h>

#include "spank_tp.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ site args */

void tpk_site_defaults(struct tpk_site *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->conf_path, sizeof s->conf_path, "%s", TPK_DEFAULT_CONF);
	s->time_budget_ms = -1;
	s->max_file_bytes = TPK_DEFAULT_MAX_FILE_BYTES;
	s->cpu_bind = true;
}

static int check_policy_name(const char *name, char *err, size_t errlen)
{
	tp_error e;
	enum tp_policy p;
	if (!strcmp(name, "auto") || !strcmp(name, "none"))
		return 0;
	tp_error_clear(&e);
	if (tp_policy_parse(name, &p, &e) < 0) {
		const char *m = e.msg[0] ? e.msg : "unknown policy";
		size_t l = strlen(m);
		if (errlen) {
			if (l >= errlen)
				l = errlen - 1;
			memcpy(err, m, l);
			err[l] = '\0';
		}
		return -1;
	}
	return 0;
}

int tpk_site_arg(struct tpk_site *s, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	if (!eq) {
		snprintf(err, errlen, "plugstack argument '%s' is not key=value "
			 "(ignored)", arg);
		return -1;
	}
	size_t klen = (size_t)(eq - arg);
	const char *v = eq + 1;
	if (klen == 4 && !strncmp(arg, "conf", 4)) {
		if (v[0] != '/' || strlen(v) >= sizeof s->conf_path) {
			snprintf(err, errlen, "conf=%s: an absolute path is needed "
				 "(ignored)", v);
			return -1;
		}
		snprintf(s->conf_path, sizeof s->conf_path, "%s", v);
	} else if (klen == 6 && !strncmp(arg, "policy", 6)) {
		char why[256];
		if (strlen(v) >= sizeof s->policy ||
		    check_policy_name(v, why, sizeof why) < 0) {
			snprintf(err, errlen, "policy=%s: unknown policy; use auto, "
				 "none, geometric, graph, block, cyclic, random or zorder "
				 "(ignored)", v);
			return -1;
		}
		snprintf(s->policy, sizeof s->policy, "%s", v);
	} else if (klen == 14 && !strncmp(arg, "time_budget_ms", 14)) {
		char *end;
		errno = 0;
		double d = strtod(v, &end);
		if (!v[0] || *end || errno || !isfinite(d) || d < 0) {
			snprintf(err, errlen, "time_budget_ms=%s: a number of "
				 "milliseconds >= 0 is needed (ignored)", v);
			return -1;
		}
		s->time_budget_ms = d;
	} else if (klen == 14 && !strncmp(arg, "max_file_bytes", 14)) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (!v[0] || v[0] == '-' || *end || errno || n == 0 ||
		    n > TPK_MAX_FILE_BYTES_LIMIT) {
			snprintf(err, errlen, "max_file_bytes=%s: a byte count in "
				 "1..%u is needed (ignored)", v,
				 TPK_MAX_FILE_BYTES_LIMIT);
			return -1;
		}
		s->max_file_bytes = (size_t)n;
	} else if (klen == 8 && !strncmp(arg, "cpu_bind", 8)) {
		if (!strcmp(v, "yes") || !strcmp(v, "no")) {
			s->cpu_bind = !strcmp(v, "yes");
		} else {
			snprintf(err, errlen, "cpu_bind=%s: yes or no is needed "
				 "(ignored)", v);
			return -1;
		}
	} else {
		snprintf(err, errlen, "unknown plugstack argument '%s' (ignored); "
			 "known: conf=, policy=, time_budget_ms=, max_file_bytes=, "
			 "cpu_bind=", arg);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ key */

static void fnv(uint64_t *h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : "\x01");
	     *p; p++) {
		*h ^= *p;
		*h *= 1099511628211ull;
	}
	*h ^= 0x1f;
	*h *= 1099511628211ull;
}

void tpk_key(const struct tpk_site *site, const struct tpk_hints *hints,
	     const struct tpk_step *step, char out[17])
{
	uint64_t h = 14695981039346656037ull;
	char num[96];
	fnv(&h, site->conf_path);
	fnv(&h, site->policy);
	snprintf(num, sizeof num, "%.17g %zu", site->time_budget_ms,
		 site->max_file_bytes);
	fnv(&h, num);
	fnv(&h, hints->stencil);
	fnv(&h, hints->graph);
	fnv(&h, hints->gpu_matrix);
	fnv(&h, hints->policy);
	fnv(&h, hints->report ? "r" : "-");
	fnv(&h, step->nodelist);
	fnv(&h, step->tasks_per_node);
	snprintf(num, sizeof num, "%lld %d", (long long)step->ntasks,
		 step->ntasks_per_node);
	fnv(&h, num);
	/* A relative graph path means the file in basedir. */
	fnv(&h, hints->graph && hints->graph[0] != '/' ? step->basedir : "");
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ------------------------------------------------------------ placement */

struct ctx {
	const struct tpk_site *site;
	const struct tpk_hints *hints;
	const struct tpk_step *step;
	struct tpk_result *res;
	double t0;
	tp_conf *conf;
	tp_alloc *alloc;
	tp_graph *g;
	tp_graph *gm;              /* --topo-gpu-matrix, when it was read */
	int32_t *map, *block;
	char *buf;
	/* node models of the allocation (MAGC phase 1 ranks by them) */
	tp_node **models;          /* distinct, owned */
	int nmodels;
	const tp_node **model_of;  /* per allocation node, NULL: none */
};

static void say(char *dst, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(char *dst, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, TPK_LINE_MAX, fmt, ap);
	va_end(ap);
	for (char *p = dst; *p; p++)   /* one line, whatever the input held */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

#define KEPT "Slurm's placement is kept"

static void fail(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct ctx *c, const char *fmt, ...)
{
	char what[TPK_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	c->res->status = TPK_FAILED;
	say(c->res->msg, "topoplace: error: %s; " KEPT, what);
}

static void keep(struct ctx *c, const char *why)
{
	c->res->status = TPK_UNTOUCHED;
	if (c->hints->report)
		say(c->res->msg, "topoplace: %s; " KEPT, why);
}

static int load_conf(struct ctx *c)
{
	tp_error err;
	tp_error_clear(&err);
	if (c->conf)
		return 0;
	if (tp_conf_load(c->site->conf_path, &c->conf, &err) < 0) {
		fail(c, "site configuration: %s", err.msg[0] ? err.msg
		     : c->site->conf_path);
		return -1;
	}
	return 0;
}

static int make_alloc(struct ctx *c)
{
	const struct tpk_step *s = c->step;
	tp_error err;
	tp_error_clear(&err);
	if (!s->nodelist || !s->nodelist[0]) {
		fail(c, "the job's node list is unknown");
		return -1;
	}
	if (s->ntasks <= 0 || s->ntasks > INT32_MAX) {
		fail(c, "cannot tell the number of tasks of this step");
		return -1;
	}
	if (tp_alloc_from_hostlist(tp_conf_machine(c->conf), s->nodelist, 1,
				   "the job's nodes", &c->alloc, &err) < 0) {
		if (err.code == TP_ENOENT)
			fail(c, "%s (is %s up to date?)", err.msg,
			     c->site->conf_path);
		else
			fail(c, "%s", err.msg);
		return -1;
	}
	int32_t nn = tp_alloc_nnodes(c->alloc);
	int64_t specn = 0, sum = s->tasks_per_node
		? tpk_tasks_per_node_sum(s->tasks_per_node, &specn) : -1;
	int rc = 0;
	if (s->ntasks_per_node > 0 && (int64_t)s->ntasks_per_node * nn == s->ntasks) {
		for (int32_t i = 0; i < nn && rc == 0; i++)
			rc = tp_alloc_set_slots(c->alloc, i, s->ntasks_per_node, &err);
	} else if (sum == s->ntasks && specn == nn) {
		rc = tp_alloc_set_slots_spec(c->alloc, s->tasks_per_node, &err);
	} else {
		rc = tp_alloc_spread_tasks(c->alloc, s->ntasks, &err);
	}
	if (rc < 0) {
		fail(c, "task slots: %s", err.msg);
		return -1;
	}
	return 0;
}

/* MAGC phase 1: the GPU traffic counts for the nodes too, so tasks that
 * exchange GPU data share a node.  Adds --topo-gpu-matrix to c->g (or makes
 * it the pattern when there is no other).  A matrix that cannot be read
 * leaves the CPU pattern alone (each task reports the matrix problem when
 * it chooses its GPUs); without a CPU pattern the placement fails. */
static int add_gpu_matrix(struct ctx *c)
{
	const struct tpk_hints *h = c->hints;
	char why[256];
	char *buf = NULL;
	size_t len = 0;
	tp_graph *gm = NULL, *sum = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (tpk_read_user_file(h->gpu_matrix, c->step->basedir,
			       c->site->max_file_bytes, &c->step->cred, &buf, &len,
			       why, sizeof why) < 0) {
		snprintf(err.msg, sizeof err.msg, "%s", why);
	} else if (tp_graph_from_gpu_matrix_string(&gm, buf, len, h->gpu_matrix,
						   c->step->ntasks, &err) == 0 &&
		   (!c->g || tp_graph_add(c->g, gm, h->gpu_matrix, &sum, &err) == 0)) {
		if (sum) {
			tp_graph_destroy(c->g);
			c->g = sum;
			c->gm = gm;
		} else {
			c->g = gm;         /* the matrix is the whole pattern */
		}
		gm = NULL;
	}
	free(buf);
	tp_graph_destroy(gm);
	if (c->g)
		return 0;
	fail(c, "--topo-gpu-matrix: %s", err.msg);
	return -1;
}

static int make_graph(struct ctx *c)
{
	const struct tpk_hints *h = c->hints;
	tp_error err;
	tp_error_clear(&err);
	int64_t n = c->step->ntasks;
	if (h->stencil && h->graph) {
		fail(c, "give --topo-stencil or --topo-graph, not both");
		return -1;
	}
	if (!h->stencil && !h->graph)
		return add_gpu_matrix(c);
	if (h->stencil) {
		if (tp_graph_from_stencil(&c->g, h->stencil, n, &err) < 0) {
			/* The core's message names the spec itself. */
			fail(c, "--topo-stencil: %s", err.msg);
			return -1;
		}
		return h->gpu_matrix ? add_gpu_matrix(c) : 0;
	}
	char why[TPK_LINE_MAX];
	size_t len = 0;
	if (tpk_read_user_file(h->graph, c->step->basedir,
			       c->site->max_file_bytes, &c->step->cred, &c->buf,
			       &len, why, sizeof why) < 0) {
		fail(c, "--topo-graph: %s", why);
		return -1;
	}
	if (tp_graph_from_json_string(&c->g, c->buf, len, h->graph, n, &err) < 0) {
		fail(c, "--topo-graph: %s", err.msg);
		return -1;
	}
	return h->gpu_matrix ? add_gpu_matrix(c) : 0;
}

/* The node models of the allocation (NodeTopology=, GpuLinks=; each file
 * loaded once), for MAGC phase 1.  false when some node cannot be loaded
 * (its tasks will say why when they choose their GPUs). */
static bool load_models(struct ctx *c)
{
	int32_t nn = tp_alloc_nnodes(c->alloc);
	c->model_of = calloc((size_t)nn + 1, sizeof *c->model_of);
	c->models = calloc((size_t)nn + 1, sizeof *c->models);
	const char **xmls = calloc((size_t)nn + 1, sizeof *xmls);
	const char **links = calloc((size_t)nn + 1, sizeof *links);
	bool ok = c->model_of && c->models && xmls && links;
	for (int32_t i = 0; ok && i < nn; i++) {
		int32_t nid = tp_alloc_node(c->alloc, i);
		const char *x = tp_conf_node_topology(c->conf, nid);
		const char *l = tp_conf_node_gpu_links(c->conf, nid);
		if (!x)
			continue;
		int k = 0;
		while (k < c->nmodels && !(strcmp(xmls[k], x) == 0 &&
					   ((!l && !links[k]) ||
					    (l && links[k] && !strcmp(l, links[k])))))
			k++;
		if (k == c->nmodels) {
			tp_error err;
			tp_error_clear(&err);
			tp_node *nd = NULL;
			if (tp_node_load_xml(x, &nd, &err) < 0 ||
			    (l && tp_node_load_links(nd, l, &err) < 0)) {
				tp_node_destroy(nd);
				ok = false;
				break;
			}
			c->models[k] = nd;
			xmls[k] = x;
			links[k] = l;
			c->nmodels++;
		}
		c->model_of[i] = c->models[k];
	}
	free(xmls);
	free(links);
	return ok;
}

static double budget_ms(const struct ctx *c)
{
	if (c->site->time_budget_ms >= 0)
		return c->site->time_budget_ms;
	return tp_conf_time_budget_ms(c->conf);
}

/* Does c->map score worse than the block order (Slurm's default)? */
static bool worse_than_block(struct ctx *c, enum tp_metric_kind metric)
{
	int32_t n = (int32_t)c->step->ntasks;
	tp_congestion_ws *ws = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (!c->g)
		return false;
	if (!c->block) {
		c->block = malloc((size_t)n * sizeof *c->block);
		if (!c->block || tp_map_block(c->alloc, n, c->block, &err) < 0)
			return false;   /* cannot tell: keep the mapping */
	}
	if (metric == TP_METRIC_CONGESTION &&
	    tp_congestion_ws_create(&ws, tp_conf_machine(c->conf), &err) < 0)
		return false;
	double mine = tp_metrics_score(c->g, c->alloc, c->map, metric, ws);
	double slurm = tp_metrics_score(c->g, c->alloc, c->block, metric, ws);
	tp_congestion_ws_destroy(ws);
	return mine > slurm;
}

static void report(struct ctx *c, const char *label, enum tp_policy pol,
		   const tp_geom_report *grep)
{
	struct tpk_result *r = c->res;
	int32_t n = (int32_t)c->step->ntasks;
	int32_t nn = tp_alloc_nnodes(c->alloc);
	char extra[160] = "";
	if (pol == TP_POLICY_GEOMETRIC && grep && grep->budget_hit)
		snprintf(extra, sizeof extra, " (time budget hit: best of %d of "
			 "%d variants)", grep->variants_scored,
			 grep->variants_total);
	if (!c->g) {
		say(r->msg, "topoplace: policy %s: %ld tasks on %ld nodes in "
		    "%.1f ms (no communication pattern, no metrics)", label,
		    (long)n, (long)nn, r->elapsed_ms);
		return;
	}
	tp_metrics mb, mm;
	tp_error err;
	tp_error_clear(&err);
	if (!c->block) {
		c->block = malloc((size_t)n * sizeof *c->block);
		if (c->block && tp_map_block(c->alloc, n, c->block, &err) < 0) {
			free(c->block);
			c->block = NULL;
		}
	}
	if (!c->block ||
	    tp_metrics_compute(c->g, c->alloc, c->block, true, &mb, &err) < 0 ||
	    tp_metrics_compute(c->g, c->alloc, c->map, true, &mm, &err) < 0) {
		say(r->msg, "topoplace: policy %s: %ld tasks on %ld nodes in "
		    "%.1f ms%s (metrics unavailable: %s)", label, (long)n,
		    (long)nn, r->elapsed_ms, extra, err.msg);
		return;
	}
	say(r->msg, "topoplace: policy %s: %ld tasks on %ld nodes in %.1f ms%s; "
	    "hop-bytes %.6g -> %.6g, max congestion %.6g -> %.6g bytes "
	    "(Slurm's default order -> topoplace)", label, (long)n, (long)nn,
	    r->elapsed_ms, extra, mb.hop_bytes, mm.hop_bytes,
	    mb.max_congestion_bytes, mm.max_congestion_bytes);
}

static void place(struct ctx *c)
{
	const struct tpk_hints *h = c->hints;
	const struct tpk_step *s = c->step;
	struct tpk_result *r = c->res;
	tp_error err;
	tp_error_clear(&err);

	bool has_hint = h->stencil || h->graph || h->gpu_matrix;
	/* Which policy: the job's --topo-policy, else plugstack policy=, else
	 * topoplace.conf DefaultPolicy=, else auto. */
	const char *pname = h->policy ? h->policy
			    : c->site->policy[0] ? c->site->policy : NULL;
	const char *from = h->policy ? "--topo-policy" : "policy";
	if (!pname) {
		if (load_conf(c) < 0)
			return;
		pname = tp_conf_has_default_policy(c->conf)
			? tp_policy_name(tp_conf_default_policy(c->conf)) : "auto";
		from = "DefaultPolicy";
	}
	if (!strcmp(pname, "none")) {
		keep(c, "policy none");
		return;
	}
	if (!has_hint && !tpk_policy_pattern_free(pname)) {
		char why[256];
		if (!h->policy || !strcmp(pname, "auto") || !strcmp(pname, "block"))
			keep(c, "no communication pattern given");
		else if (check_policy_name(pname, why, sizeof why) < 0)
			fail(c, "--topo-policy=%s: unknown policy; use auto, none, "
			     "geometric, graph, block, cyclic, random or zorder", pname);
		else
			fail(c, "--topo-policy=%s needs a communication pattern "
			     "(--topo-stencil, --topo-graph or --topo-gpu-matrix)", pname);
		return;
	}
	if (load_conf(c) < 0 || make_alloc(c) < 0)
		return;
	if (has_hint && make_graph(c) < 0)
		return;

	enum tp_policy pol;
	char label[64];
	bool geo_ok = c->g && tp_graph_coord_dims(c->g) > 0;
	if (!strcmp(pname, "auto") && h->gpu_matrix) {
		/* the coordinates describe the CPU pattern only: every candidate
		 * is scored on the CPU + GPU traffic, as the command's auto */
		pol = TP_POLICY_AUTO;
		snprintf(label, sizeof label, "auto (CPU + GPU traffic, scored)");
	} else if (!strcmp(pname, "auto")) {
		/* a graph without coordinates gets graph mapping */
		pol = geo_ok ? TP_POLICY_GEOMETRIC : TP_POLICY_GRAPH;
		snprintf(label, sizeof label, "%s (auto)", tp_policy_name(pol));
	} else {
		if (tp_policy_parse(pname, &pol, &err) < 0) {
			fail(c, "%s=%s: unknown policy; use auto, none, geometric, "
			     "graph, block, cyclic, random or zorder", from, pname);
			return;
		}
		snprintf(label, sizeof label, "%s", tp_policy_name(pol));
		if (pol == TP_POLICY_GEOMETRIC && !geo_ok) {
			pol = TP_POLICY_GRAPH;
			snprintf(label, sizeof label, "graph (the graph has no task "
				 "coordinates for geometric)");
		}
	}
	snprintf(r->policy, sizeof r->policy, "%s", tp_policy_name(pol));
	if (pol == TP_POLICY_NONE) {
		keep(c, "policy none");
		return;
	}
	if (pol == TP_POLICY_BLOCK) {
		char why[160];
		snprintf(why, sizeof why, "policy %s: that is Slurm's own order", label);
		keep(c, why);
		return;
	}

	int32_t n = (int32_t)s->ntasks;
	c->map = malloc((size_t)n * sizeof *c->map);
	if (!c->map) {
		fail(c, "out of memory");
		return;
	}
	tp_place_opts po;
	tp_place_opts_default(&po);
	po.policy = pol;
	po.geom.metric = tp_conf_default_metric(c->conf);
	po.geom.time_budget_ms = budget_ms(c);
	/* MAGC phase 1: rank the candidates by the GPU-link congestion after
	 * phases 2 and 3 on the node models, one GPU per task */
	tp_nodes_gpu_rank_arg gr = { c->alloc, NULL, c->g, c->gm ? c->gm : c->g,
				     (int32_t)s->ntasks, 1 };
	if (pol == TP_POLICY_AUTO && h->gpu_matrix && load_models(c)) {
		gr.models = c->model_of;
		po.rank = tp_nodes_gpu_rank;
		po.rank_arg = &gr;
	}
	tp_geom_report grep;
	memset(&grep, 0, sizeof grep);
	int rc;
	if (c->g) {
		rc = tp_place(c->g, c->alloc, &po, c->map, &grep, &err);
	} else {
		switch (pol) {
		case TP_POLICY_CYCLIC:
			rc = tp_map_cyclic(c->alloc, n, c->map, &err); break;
		case TP_POLICY_ZORDER:
			rc = tp_map_zorder(c->alloc, n, c->map, &err); break;
		case TP_POLICY_RANDOM:
			rc = tp_map_random(c->alloc, n, po.seed, c->map, &err); break;
		default:
			rc = tp_error_set(&err, TP_EINVAL, "policy %s needs a "
					  "communication pattern", label);
		}
	}
	if (rc == TP_ETIME) {
		fail(c, "the time budget of %g ms ran out before any mapping "
		     "existed", po.geom.time_budget_ms);
		return;
	}
	if (rc < 0) {
		fail(c, "policy %s: %s", label, err.msg);
		return;
	}

	/* Never worse than Slurm's own order under the site's metric: a graph
	 * whose coordinates do not match its edges can mislead the geometric
	 * search (tp_place does not guard against it yet). */
	if (pol == TP_POLICY_GEOMETRIC && worse_than_block(c, po.geom.metric)) {
		char why2[160];
		snprintf(why2, sizeof why2, "policy %s scores worse than Slurm's own "
			 "order under %s", label, tp_metric_name(po.geom.metric));
		keep(c, why2);
		return;
	}

	char why[TPK_LINE_MAX];
	if (tpk_make_private_dir(s->tmpdir, s->tag, &s->cred, r->dir,
				 sizeof r->dir, why, sizeof why) < 0) {
		fail(c, "%s", why);
		return;
	}
	if (snprintf(r->hostfile, sizeof r->hostfile, "%s/hostfile", r->dir) >=
	    (int)sizeof r->hostfile) {
		fail(c, "temporary directory name too long");
		return;
	}
	if (tpk_become_user(&s->cred, why, sizeof why) < 0) {
		fail(c, "%s", why);
		return;
	}
	rc = tp_hostfile_write_path(r->hostfile, c->alloc, c->map, n, &err);
	tpk_become_root(&s->cred);
	if (rc < 0) {
		fail(c, "cannot write the hostfile: %s", err.msg);
		return;
	}
	r->status = TPK_PLACED;
	r->elapsed_ms = now_ms() - c->t0;
	if (h->report)
		report(c, label, pol, &grep);
}

void tpk_place(const struct tpk_site *site, const struct tpk_hints *hints,
	       const struct tpk_step *step, struct tpk_result *res)
{
	struct ctx c;
	memset(res, 0, sizeof *res);
	memset(&c, 0, sizeof c);
	c.site = site;
	c.hints = hints;
	c.step = step;
	c.res = res;
	c.t0 = now_ms();
	res->quiet = !hints->seen;
	place(&c);

	if (res->status != TPK_PLACED && res->dir[0]) {
		tpk_remove_private_dir(res->dir, &step->cred);
		res->dir[0] = '\0';
		res->hostfile[0] = '\0';
	}
	if (!res->elapsed_ms)
		res->elapsed_ms = now_ms() - c.t0;
	free(c.buf);
	free(c.map);
	free(c.block);
	for (int i = 0; i < c.nmodels; i++)
		tp_node_destroy(c.models[i]);
	free(c.models);
	free(c.model_of);
	tp_graph_destroy(c.gm);
	tp_graph_destroy(c.g);
	tp_alloc_destroy(c.alloc);
	tp_conf_destroy(c.conf);
}
