/* topoplace — the node models of topoplace.conf (NodeTopology=, GpuLinks=,
 * GpuLinkBandwidth= of NodeName= lines: the registry of distinct ones, and
 * each one checked as a job would read it), and what a loaded config
 * answers: its machine, models, warnings, site defaults and check-config's
 * summary (the tp_conf_* accessors).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/job.h>
#include "conf/conf_kind.h"
#include "conf/conf_internal.h"
#include "conf/conf_loader.h"
#include "net/machine_internal.h"
#include "node/node_internal.h"

/* NodeTopology= (and GpuLinks=, GpuLinkBandwidth= as linkbw GB/s, 0 when
 * not given) of a NodeName= line: sets ld->cur_topo. */
int tp__ld_add_topo(struct loader *ld, const struct tp__conf_tok *topo,
		    const struct tp__conf_tok *links, double linkbw)
{
	if (!*topo->val)
		return lerr(ld, NULL, topo->line, TP_EINVAL,
			    "NodeTopology=: empty file name");
	if (links && !*links->val)
		return lerr(ld, NULL, links->line, TP_EINVAL,
			    "GpuLinks=: empty file name");
	tp_conf *c = ld->c;
	char *x = tp__ld_conf_path(ld, topo->val);
	char *l = links ? tp__ld_conf_path(ld, links->val) : NULL;
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
	static const char *const sharing[] = {
		[TP__SHARING_FAIR] = "fair sharing",
		[TP__SHARING_RTT] = "rtt sharing",
		[TP__SHARING_WORSE] = "the worse of fair and rtt sharing" };
	fprintf(out, "predicted time: %g us a link, node ports %g GB/s, %g GB/s "
		"inside a node, %s%s, ", f->hop_lat * 1e6, port / 1e9,
		f->intra_bw / 1e9, sharing[tp__fabric_sharing(c->b.m)],
		f->sharing_set ? "" : " (assumed: FlowSharing= not set)");
	if (f->eager_bytes < 0)
		fprintf(out, "every message sent eagerly");
	else
		fprintf(out, "rendezvous past %g KiB", f->eager_bytes / 1024);
	fprintf(out, "%s\n", f->eager_set ? "" : " (assumed: EagerLimit= not set)");
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
