/* topoplace — topoplace.conf's Network=dragonfly: its keys (Groups=,
 * RoutersPerGroup=, Routing=, NodeNameFormat=, bandwidths), the machine of
 * net/dragonfly.c, the nodes placed by their names, and check-config's
 * account. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_kind.h"
#include "net/network.h"
#include "net/dragonfly.h"
#include "net/machine_internal.h"

/* ---- topoplace.conf: Network=dragonfly (conf_kind.h) ----
 *
 * Groups= x RoutersPerGroup= routers, NodesPerRouter= (conf.c's),
 * LinksPerGroupPair= (default 1), Routing=direct|valiant|adaptive
 * (AdaptiveShare=, default 0.5); the nodes placed along the box, by a
 * SwitchFile= (group, switch) or by their names (NodeNameFormat=). */

struct dfly_conf {
	int groups_line, groups;
	int rpg_line, rpg;
	int lpp_line, lpp;
	int routing_line;
	enum tp_dfly_routing routing;
	int share_line;
	double share;
	int format_line;
	struct tp__dfly_format *format;
	char *format_text;
	int lbw_line, gbw_line;
	double lbw, gbw;     /* LocalBandwidth=, GlobalBandwidth= (GB/s) */
};

static int conf_set_routing(struct tp__conf_reader *r, void *state,
			    const struct tp__conf_tok *t)
{
	struct dfly_conf *dc = state;
	if (!strcasecmp(t->val, "direct") || !strcasecmp(t->val, "minimal"))
		dc->routing = TP_DFLY_DIRECT;
	else if (!strcasecmp(t->val, "valiant") || !strcasecmp(t->val, "non-minimal"))
		dc->routing = TP_DFLY_VALIANT;
	else if (!strcasecmp(t->val, "adaptive"))
		dc->routing = TP_DFLY_ADAPTIVE;
	else
		return tp__conf_error(r, NULL, t->line, TP_EINVAL,
				      "Routing=%s: expected direct, valiant or adaptive",
				      t->val);
	return TP_OK;
}

/* AdaptiveShare=0.5: the non-minimal share of Routing=adaptive. */
static int conf_set_share(struct tp__conf_reader *r, void *state,
			  const struct tp__conf_tok *t)
{
	struct dfly_conf *dc = state;
	if (tp__conf_parse_number(t->val, true, &dc->share) || dc->share > 1)
		return tp__conf_error(r, NULL, t->line, TP_EINVAL,
				      "AdaptiveShare=%s: expected a fraction in 0..1", t->val);
	return TP_OK;
}

/* NodeNameFormat=x{group-1000}c{switch}s{*}b{*}n{*}. */
static int conf_set_format(struct tp__conf_reader *r, void *state,
			   const struct tp__conf_tok *t)
{
	struct dfly_conf *dc = state;
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp__dfly_format_parse(t->val, &dc->format, &e2);
	if (rc)
		return tp__conf_error(r, NULL, t->line, rc, "%s", e2.msg);
	return tp__conf_keep(r, &dc->format_text, t->val) ? TP_OK : TP_ENOMEM;
}

static void conf_free_dfly(void *state)
{
	struct dfly_conf *dc = state;
	tp__dfly_format_free(dc->format);
	free(dc->format_text);
}

static int conf_build_dfly(struct tp__conf_reader *r, void *state, int line,
			   const char *key)
{
	struct dfly_conf *dc = state;
	if (dc->share_line && dc->routing != TP_DFLY_ADAPTIVE)
		return tp__conf_error(r, NULL, dc->share_line, TP_EINVAL,
				      "AdaptiveShare= needs Routing=adaptive");
	int bad = r->dims_line ? r->dims_line : r->wrap_line ? r->wrap_line
		  : r->bw_line ? r->bw_line : r->topo_line ? r->topo_line
		  : r->dist_line;
	if (bad)
		return tp__conf_error(r, NULL, bad, TP_EINVAL,
				      "%s does not apply to Network=dragonfly (give Groups= and RoutersPerGroup=)",
				      bad == r->dims_line ? "Dims=" : bad == r->wrap_line
				      ? "Wrap=" : bad == r->bw_line ? "LinkBandwidth="
				      : bad == r->topo_line ? "TopologyFile=" : "Distance=");
	/* the cables of a switch tree (conf.c's keys): a dragonfly routes by
	 * Routing= */
	if (r->uplinks_line || r->routing_line)
		return tp__conf_error(r, NULL, r->uplinks_line ? r->uplinks_line
				      : r->routing_line, TP_EINVAL, "%s= needs Network=tree",
				      r->uplinks_line ? "LevelUplinks" : "UplinkRouting");
	if (!dc->groups_line || !dc->rpg_line)
		return tp__conf_error(r, NULL, line, TP_EINVAL,
				      "%s before %s= (Network=dragonfly needs Groups= and RoutersPerGroup= first)",
				      key, dc->groups_line ? "RoutersPerGroup" : "Groups");
	/* the box, router in group by group, named as Dims= would be */
	char dt[64];
	snprintf(dt, sizeof dt, "%dx%d", dc->rpg, dc->groups);
	if (!tp__conf_keep(r, &r->dims_text, dt))
		return TP_ENOMEM;
	r->ndims = 2;
	r->dims[0] = dc->rpg;
	r->dims[1] = dc->groups;
	tp_error e2;
	tp_error_clear(&e2);
	int rc = tp_machine_create_dragonfly(&r->out->m, dc->groups, dc->rpg,
					     r->npr_line ? r->npr : 1,
					     dc->lpp_line ? dc->lpp : 1, false, &e2);
	if (rc)
		return tp__conf_error(r, NULL, dc->groups_line, rc, "%s", e2.msg);
	if ((rc = tp_machine_set_dragonfly_routing(r->out->m, dc->routing,
						   dc->share_line ? dc->share : 0.5,
						   &e2)))
		return tp__conf_error(r, NULL, dc->routing_line, rc, "%s", e2.msg);
	tp__dfly_set_bandwidths(r->out->m, dc->lbw_line ? dc->lbw * 1e9 : 0,
				dc->gbw_line ? dc->gbw * 1e9 : 0);
	return TP_OK;
}

static bool conf_names_place(const void *state)
{
	return ((const struct dfly_conf *)state)->format != NULL;
}

/* NodeNameFormat=: each name of the line says its group and switch. */
static int conf_place_names(struct tp__conf_reader *r, const void *state,
			    const struct tp__conf_tok *name)
{
	const struct dfly_conf *dc = state;
	const tp_machine *m = r->out->m;
	struct tp__hostlist *hl;
	int64_t count;
	int rc = tp__conf_hostlist(r, name, &hl, &count);
	char host[TP__HOSTNAME_MAX];
	while (rc == TP_OK && tp__hostlist_next(hl, host)) {
		long long g = -1, sw = -1;
		int at = tp__dfly_format_match(dc->format, host, &g, &sw);
		if (at >= 0)
			rc = tp__conf_error(r, NULL, name->line, TP_EINVAL,
					    "NodeName=%s: node '%s' does not match NodeNameFormat=%s (at character %d)",
					    name->val, host, dc->format_text, at + 1);
		else if (g < 0 || g >= m->dims[1] || sw < 0 || sw >= m->dims[0])
			rc = tp__conf_error(r, NULL, name->line, TP_EINVAL,
					    "NodeName=%s: node '%s' is in group %lld, switch %lld: outside "
					    "Groups=%d, RoutersPerGroup=%d (NodeNameFormat=%s)",
					    name->val, host, g, sw, m->dims[1], m->dims[0],
					    dc->format_text);
		else
			rc = tp__conf_place(r, host, (int[]){ (int)sw, (int)g }, name->line);
	}
	tp__hostlist_free(hl);
	return rc;
}

static void conf_describe_dfly(const struct tp__conf_built *b, FILE *out)
{
	const tp_machine *m = b->m;
	fprintf(out, "dragonfly %d groups x %d routers, %d global link%s per group pair, %s routing, %ld nodes, %d per router\n",
		m->dims[1], m->dims[0], tp_machine_dragonfly_links(m),
		tp_machine_dragonfly_links(m) == 1 ? "" : "s",
		tp_dfly_routing_name(tp_machine_dragonfly_routing(m, NULL)),
		(long)m->nnodes, m->nodes_per_router);
	double share;
	if (tp_machine_dragonfly_routing(m, &share) == TP_DFLY_ADAPTIVE)
		fprintf(out, "adaptive routing: %g of the traffic non-minimal (Valiant)\n",
			share);
}

/* Groups=, RoutersPerGroup=, LinksPerGroupPair=: 1..2^20. */
#define DFLY_INT_AT(field) TP__CONF_INT_AT(struct dfly_conf, field, 1, 1 << 20)

/* In this order the messages about keys given to another kind name them. */
static const struct tp__conf_key dfly_keys[] = {
	{ "Groups", offsetof(struct dfly_conf, groups_line),
	  .flags = TP__CONF_KEY_OWN_NETWORK, DFLY_INT_AT(groups) },
	{ "RoutersPerGroup", offsetof(struct dfly_conf, rpg_line),
	  .flags = TP__CONF_KEY_OWN_NETWORK, DFLY_INT_AT(rpg) },
	{ "LinksPerGroupPair", offsetof(struct dfly_conf, lpp_line), DFLY_INT_AT(lpp) },
	{ "Routing", offsetof(struct dfly_conf, routing_line), .set = conf_set_routing },
	{ "NodeNameFormat", offsetof(struct dfly_conf, format_line), .set = conf_set_format },
	{ "AdaptiveShare", offsetof(struct dfly_conf, share_line), .set = conf_set_share },
	{ "LocalBandwidth", offsetof(struct dfly_conf, lbw_line),
	  TP__CONF_BANDWIDTH_AT(struct dfly_conf, lbw) },
	{ "GlobalBandwidth", offsetof(struct dfly_conf, gbw_line),
	  TP__CONF_BANDWIDTH_AT(struct dfly_conf, gbw) },
};


const struct tp__conf_kind tp__conf_dragonfly = {
	.name = "dragonfly",
	.selectable = true,
	.machines = tp__dfly_machines,
	TP__CONF_KEYS(dfly_keys, struct dfly_conf),
	.free_state = conf_free_dfly,
	.build = conf_build_dfly,
	.more_keys = " or NodeNameFormat=",
	.place_files = "CoordFile= or SwitchFile=",
	.switch_file = true,
	.names_place = conf_names_place,
	.place_names = conf_place_names,
	.describe = conf_describe_dfly,
};
