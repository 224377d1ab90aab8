/* topoplace — GPU-fabric link counts from an hwloc XML's distance matrices.
 *
 * node_xml_dist.c keeps an XML's NVLinkBandwidth, XGMIBandwidth and
 * XGMIHops matrices, checked and resolved to PCI devices.  Once the model
 * is built (its GPUs numbered in PCI bus order) they become NVLink lanes or
 * xGMI link counts, set as a GpuLinks= file would set them; such a file,
 * loaded afterwards, still overrides them.
 *
 * NVLinkBandwidth (hwloc's nvml backend, topology-nvml.c): for a GPU pair,
 * or a GPU and an NVSwitch, the sum of the rates of the links between
 * them, MB/s each way, by the version NVML reports for each link: 20000
 * per NVLink 1 link (P100), 25000 for NVLink 2 to 4 (V100, A100, H100),
 * 50000 for NVLink 5 (Blackwell); 1000000 on the diagonal (not read).  The
 * values are bandwidths already: the model takes them as they are (a
 * DGX-2's V100 has 6 x 25000 to its switches: 150 GB/s).  The link count
 * (the NV# of the path matrix) is value / rate, the rate being
 *   - 50000 when every value is a multiple of it and some GPU has more
 *     than 18 x 25000 in all (more than an H100's 18 NVLink 4 links can
 *     carry: NVLink 5, 18 x 50000 on a B200);
 *   - else 25000 when every value is a multiple of 25000;
 *   - else 20000 when every one is a multiple of 20000 (NVLink 1);
 *   - else the matrix is refused.
 * A few NVLink 5 links that no GPU's total betrays are counted as twice as
 * many NVLink 4 ones: the count is off, the bandwidth is not.
 * GPUs joined to NVSwitches: a pair's lanes are the fewer of the two GPUs'
 * lanes to all switches (plus any direct lanes), and the model has the
 * switch whatever the counts.
 *
 * XGMIBandwidth and XGMIHops (hwloc's rsmi backend): a pair one hop apart
 * (or, without XGMIHops, a pair with bandwidth) has max(1, round(bw /
 * 50000)) direct links and the bandwidth reported (bw / 1000 GB/s), one
 * link of TP_XGMI_BW (50 GB/s) without a bandwidth; pairs farther apart
 * are left to the model's routes through other GPUs.  hwloc on AMD SMI writes the pair's largest bandwidth
 * (50000, 100000 or 200000: one, two or four links) and the hops from the
 * driver's weights.  hwloc on ROCm SMI writes 100000 for every xGMI pair
 * (hwloc leaves checking the XGMI version for later) and 1 hop
 * for every one, joined directly or not: a matrix whose every GPU pair is 0
 * or 100000 is read as that placeholder, which says which pairs are linked
 * but not how many links; such pairs get XGMIPeers' counts (four between
 * the two GCDs of an MI250 or MI250X, else one) rather than a uniform two.
 * These counts replace those of XGMIPeers.
 *
 * Partitioned GPUs (an MI300A or MI300X in CPX mode: several rsmiN OS
 * devices below one PCI device) are named by their OS devices; a matrix
 * object that is such an OS device is that partition.  Pairs of partitions
 * of one device (1 hop and 100000 in ROCm SMI's matrices) share the
 * package, not an xGMI link: the model drops them (tp__node_finish), and
 * the partitions of two devices share the one set of links between them.
 *
 * Refused, one line "FILE: hwloc XML line N: NAME: ...": a matrix not
 * symmetric among its GPUs and switches, a count above TP_NODE_MAX_NVLINKS,
 * hops above TP_NODE_MAX_GPUS, NVLink values of no known rate.  Ignored: a
 * matrix that names none of the model's GPUs (it says nothing of them).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "node/node_internal.h"

static const char *const dist_name[TP__DIST_N] = {
	"NVLinkBandwidth", "XGMIBandwidth", "XGMIHops"
};

/* One matrix against the model: which model GPU each object is. */
struct mview {
	const struct tp__dist_matrix *m;
	int kind;
	const char *what;
	int gpu[TP__XML_MAX_DIST_OBJS];   /* model GPU, -1: not one */
	int pos[TP_NODE_MAX_GPUS];        /* the matrix object of GPU g, -1 */
	int named;                        /* model GPUs it names */
};

__attribute__((format(printf, 3, 4)))
static int merr(const struct mview *v, tp_error *err, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tp_error_set(err, TP_EINVAL, "%s: hwloc XML line %d: %s: %s", v->what,
			    v->m->line, dist_name[v->kind], msg);
}

static void view(struct mview *v, const tp_node *n, const struct tp__xml_dist *d,
		 int kind, const char *what)
{
	v->m = &d->m[kind];
	v->kind = kind;
	v->what = what;
	v->named = 0;
	for (int g = 0; g < TP_NODE_MAX_GPUS; g++)
		v->pos[g] = -1;
	for (int i = 0; i < v->m->n; i++) {
		const struct tp__dist_end *e = &v->m->end[i];
		v->gpu[i] = -1;
		for (int g = 0; g < n->ngpus && e->role == TP__END_DEVICE; g++) {
			const struct tp_node_gpu *p = &n->gpu[g];
			/* a partition only by its OS device */
			if (p->domain == e->dom && p->bus == e->bus && p->dev == e->dev &&
			    p->func == e->fn && v->gpu[i] < 0 &&
			    (p->nparts > 1 ? !strcmp(p->osdev, e->osdev) : !e->osdev[0])) {
				v->gpu[i] = g;
				v->pos[g] = i;
				v->named++;
			}
		}
	}
}

static bool is_switch(const struct mview *v, int i)
{
	return v->m->end[i].role == TP__END_NVSWITCH;
}

static bool used(const struct mview *v, int i)
{
	return v->gpu[i] >= 0 || is_switch(v, i);
}

static uint64_t val(const struct mview *v, int i, int j)
{
	return v->m->val[(size_t)i * v->m->n + j];
}

/* "GPU3 (0000:3b:00.0)", "GPU3 (rsmi3 of 0000:02:00.0)" for a partition,
 * or "NVSwitch 12" (its place in the matrix). */
static const char *obj_name(const tp_node *n, const struct mview *v, int i,
			    char *buf, size_t len)
{
	if (v->gpu[i] >= 0 && n->gpu[v->gpu[i]].nparts > 1)
		snprintf(buf, len, "GPU%d (%s of %s)", v->gpu[i],
			 n->gpu[v->gpu[i]].osdev, n->gpu[v->gpu[i]].busid);
	else if (v->gpu[i] >= 0)
		snprintf(buf, len, "GPU%d (%s)", v->gpu[i], n->gpu[v->gpu[i]].busid);
	else
		snprintf(buf, len, "NVSwitch %d", i);
	return buf;
}

/* Symmetric among the objects read (GPUs and switches); the diagonal and
 * the other objects are not read. */
static int check_symmetric(const tp_node *n, const struct mview *v, tp_error *err)
{
	for (int i = 0; i < v->m->n; i++)
		for (int j = i + 1; j < v->m->n; j++) {
			if (!used(v, i) || !used(v, j) || val(v, i, j) == val(v, j, i))
				continue;
			char a[72], b[72];
			return merr(v, err, "not symmetric: %s to %s is %llu, %s to %s is %llu",
				    obj_name(n, v, i, a, sizeof a), obj_name(n, v, j, b, sizeof b),
				    (unsigned long long)val(v, i, j), b, a,
				    (unsigned long long)val(v, j, i));
		}
	return 0;
}

/* MB/s per link (see above): 50000 (NVLink 5), 25000 (NVLink 2 to 4),
 * 20000 (NVLink 1), else 0.  A device's partitions count once in a GPU's
 * total (they share the device's links), and pairs of one device (no
 * link) are no pairs here. */
static uint64_t nvlink_rate(const tp_node *n, const struct mview *v)
{
	bool m50 = true, m25 = true, m20 = true, sw = false, equal = true;
	uint64_t most = 0, pair = 0;   /* the largest total of one GPU */
	for (int i = 0; i < v->m->n; i++)
		for (int j = 0; j < v->m->n; j++) {
			sw = sw || (i != j && is_switch(v, i) && v->gpu[j] >= 0);
			if (i == j || v->gpu[i] < 0 || v->gpu[j] < 0 ||
			    tp__node_same_device(n, v->gpu[i], v->gpu[j]))
				continue;
			equal = equal && (!pair || val(v, i, j) == pair);
			pair = val(v, i, j);
		}
	for (int i = 0; i < v->m->n; i++) {
		uint64_t sum = 0;
		for (int j = 0; j < v->m->n; j++) {
			if (i == j || !used(v, i) || !used(v, j) ||
			    (is_switch(v, i) && is_switch(v, j)))
				continue;
			m50 = m50 && val(v, i, j) % 50000 == 0;
			m25 = m25 && val(v, i, j) % 25000 == 0;
			m20 = m20 && val(v, i, j) % 20000 == 0;
			if (v->gpu[i] >= 0 && sum <= TP__XML_MAX_DIST_VALUE &&
			    (v->gpu[j] < 0 || n->gpu[v->gpu[j]].part == 0))
				sum += val(v, i, j);
		}
		most = sum > most ? sum : most;
	}
	/* every pair alike and no switch named: an NVSwitch node as
	 * tp_node_write_xml writes it, each pair what one GPU has */
	if (!sw && equal && pair)
		most = pair;
	return m50 && most > 18 * 25000 ? 50000 : m25 ? 25000 : m20 ? 20000 : 0;
}

/* Lanes of one value, or -1 (message set) beyond TP_NODE_MAX_NVLINKS. */
static int lanes(const tp_node *n, const struct mview *v, int i, int j,
		 uint64_t per, const char *unit, tp_error *err)
{
	uint64_t x = val(v, i, j);
	uint64_t l = per == 50000 && v->kind != TP__DIST_NVLINK_BW
		     ? (x + 25000) / 50000 : x / per;
	if (l <= TP_NODE_MAX_NVLINKS)
		return (int)l;
	char a[72], b[72];
	merr(v, err, "%s to %s: %llu MB/s, more than %d %s",
	     obj_name(n, v, i, a, sizeof a), obj_name(n, v, j, b, sizeof b),
	     (unsigned long long)x, TP_NODE_MAX_NVLINKS, unit);
	return -1;
}

/* NVLink lanes of every GPU pair into c (ngpus x ngpus, zeroed);
 * *switched: through NVSwitches; *rate_out: MB/s a link. */
static int nvlink_counts(const tp_node *n, const struct mview *v, int *c,
			 bool *switched, uint64_t *rate_out, tp_error *err)
{
	int ng = n->ngpus, rc = check_symmetric(n, v, err);
	if (rc)
		return rc;
	uint64_t rate = nvlink_rate(n, v);
	*rate_out = rate;
	if (!rate)
		return merr(v, err, "values not multiples of 25000 MB/s (NVLink 2 to 5) "
			    "or 20000 (NVLink 1) per link");
	int sw[TP_NODE_MAX_GPUS] = { 0 };
	for (int i = 0; i < v->m->n; i++)
		for (int j = 0; j < v->m->n && v->gpu[i] >= 0; j++) {
			if (i == j || !used(v, j))
				continue;
			int l = lanes(n, v, i, j, rate, "lanes", err);
			if (l < 0)
				return TP_EINVAL;
			if (is_switch(v, j))
				sw[v->gpu[i]] += l;
			else
				c[v->gpu[i] * ng + v->gpu[j]] = l;
		}
	*switched = false;
	for (int a = 0; a < ng; a++)
		for (int b = 0; b < ng; b++) {
			if (a == b || !sw[a] || !sw[b])
				continue;
			*switched = true;
			c[a * ng + b] += sw[a] < sw[b] ? sw[a] : sw[b];
			if (c[a * ng + b] > TP_NODE_MAX_NVLINKS)
				return merr(v, err, "GPU%d to GPU%d: %d lanes through NVSwitches, "
					    "more than %d", a, b, c[a * ng + b],
					    TP_NODE_MAX_NVLINKS);
		}
	return 0;
}

/* Every GPU pair of bw 0 or 100000 MB/s, one at least: ROCm SMI's
 * placeholder, not a measure. */
static bool rsmi_placeholder(const struct mview *bw)
{
	bool any = false;
	for (int i = 0; i < bw->m->n; i++)
		for (int j = 0; j < bw->m->n; j++) {
			if (i == j || bw->gpu[i] < 0 || bw->gpu[j] < 0)
				continue;
			if (val(bw, i, j) != 0 && val(bw, i, j) != 100000)
				return false;
			any = any || val(bw, i, j);
		}
	return any;
}

/* xGMI links of the pair (a, b): hops from h, bandwidth from bw (either may
 * name neither GPU); -1 (message set) when out of range.  *gbs: the
 * bandwidth reported for a direct pair, GB/s (0: none, or the
 * placeholder). */
static int xgmi_pair(const tp_node *n, const struct mview *h, const struct mview *bw,
		     bool placeholder, int a, int b, double *gbs, tp_error *err)
{
	*gbs = 0;
	int hi = h->pos[a], hj = h->pos[b], bi = bw->pos[a], bj = bw->pos[b];
	bool has_h = hi >= 0 && hj >= 0, has_b = bi >= 0 && bj >= 0;
	uint64_t hops = has_h ? val(h, hi, hj) : 0;
	uint64_t band = has_b ? val(bw, bi, bj) : 0;
	if (hops > TP_NODE_MAX_GPUS) {
		char x[72], y[72];
		merr(h, err, "%s to %s: %llu hops, more than %d",
		     obj_name(n, h, hi, x, sizeof x), obj_name(n, h, hj, y, sizeof y),
		     (unsigned long long)hops, TP_NODE_MAX_GPUS);
		return -1;
	}
	bool direct = has_h ? hops == 1 : band > 0;
	if (!direct)
		return 0;
	if (!band)
		return 1;
	if (placeholder)
		return tp__node_mi250_pair(n, a < b ? a : b, a < b ? b : a) ? 4 : 1;
	int l = lanes(n, bw, bi, bj, 50000, "xGMI links", err);
	*gbs = (double)band / 1000;
	return l < 0 ? -1 : l < 1 ? 1 : l;
}

static int xgmi_counts(const tp_node *n, const struct mview *h,
		       const struct mview *bw, int *c, double *gbs, tp_error *err)
{
	int ng = n->ngpus, rc = 0;
	if ((h->named && (rc = check_symmetric(n, h, err))) ||
	    (bw->named && (rc = check_symmetric(n, bw, err))))
		return rc;
	bool placeholder = bw->named && rsmi_placeholder(bw);
	for (int a = 0; a < ng; a++)
		for (int b = 0; b < ng; b++) {
			double g = 0;
			int l = a == b ? 0 : xgmi_pair(n, h, bw, placeholder, a, b, &g,
						       err);
			if (l < 0)
				return TP_EINVAL;
			c[a * ng + b] = l;
			gbs[a * ng + b] = g;
		}
	return 0;
}

static int set_nvlink(tp_node *n, const struct tp__xml_dist *d, const char *what,
		      int *c, tp_error *err)
{
	struct mview *v = malloc(sizeof *v);
	if (!v)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	view(v, n, d, TP__DIST_NVLINK_BW, what);
	bool sw = false;
	uint64_t rate = 0;
	int rc = v->named ? nvlink_counts(n, v, c, &sw, &rate, err) : 0;
	if (!rc && v->named) {
		char who[TP_ERROR_MSG_MAX / 2];
		snprintf(who, sizeof who, "%s: hwloc XML line %d: NVLinkBandwidth", what,
			 v->m->line);
		rc = tp__node_set_fabric(n, c, NULL, (double)rate / 1000, n->ngpus, who,
					 TP_FABRIC_NVLINK, sw, err);
	}
	free(v);
	return rc;
}

static int set_xgmi(tp_node *n, const struct tp__xml_dist *d, const char *what,
		    int *c, tp_error *err)
{
	struct mview *h = malloc(sizeof *h), *bw = malloc(sizeof *bw);
	double *gbs = tp__calloc((size_t)n->ngpus * (size_t)n->ngpus, sizeof *gbs);
	int rc = h && bw && gbs ? 0
		 : tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	if (!rc) {
		view(h, n, d, TP__DIST_XGMI_HOPS, what);
		view(bw, n, d, TP__DIST_XGMI_BW, what);
	}
	if (!rc && (h->named || bw->named))
		rc = xgmi_counts(n, h, bw, c, gbs, err);
	if (!rc && (h->named || bw->named)) {
		const struct mview *v = bw->named ? bw : h;
		char who[TP_ERROR_MSG_MAX / 2];
		snprintf(who, sizeof who, "%s: hwloc XML line %d: %s", what, v->m->line,
			 dist_name[v->kind]);
		rc = tp__node_set_fabric(n, c, gbs, 0, n->ngpus, who, TP_FABRIC_XGMI,
					 false, err);
	}
	free(h);
	free(bw);
	free(gbs);
	return rc;
}

int tp__node_xml_fabric(tp_node *n, const struct tp__xml_dist *d,
			const char *what, tp_error *err)
{
	int ng = n->ngpus;
	if (ng == 0)
		return 0;
	int *c = tp__calloc((size_t)ng * (size_t)ng, sizeof *c);
	if (!c)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	int rc = d->m[TP__DIST_NVLINK_BW].n ? set_nvlink(n, d, what, c, err) : 0;
	for (int i = 0; i < ng * ng; i++)
		c[i] = 0;
	if (!rc && (d->m[TP__DIST_XGMI_BW].n || d->m[TP__DIST_XGMI_HOPS].n))
		rc = set_xgmi(n, d, what, c, err);
	free(c);
	return rc;
}
