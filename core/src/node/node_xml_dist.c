/* topoplace — the hwloc XML checker's GPU-fabric distance matrices
 * (NVLinkBandwidth, XGMIBandwidth, XGMIHops): read and checked, their
 * objects resolved to PCI devices or partitions while the objects are still
 * known; node_dist.c turns them into link counts once the model is built. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node_internal.h"
#include "util/util_internal.h"
#include "node/node_xml.h"

/* ---- distance matrices ---- */

/* Only the GPU-fabric matrices are kept (node_dist.c reads them); NUMA
 * latencies and the rest are dropped unread, as before. */
static const char *const dist_name[TP__DIST_N] = {
	"NVLinkBandwidth", "XGMIBandwidth", "XGMIHops"
};

void tp__xml_dist_free(struct tp__xml_dist *d)
{
	if (!d)
		return;
	for (int k = 0; k < TP__DIST_N; k++) {
		free(d->m[k].end);
		free(d->m[k].val);
		memset(&d->m[k], 0, sizeof d->m[k]);
	}
}

struct dread {
	const char *tag;        /* "distances2" or "distances2hetero" */
	const char *name;       /* its name= */
	bool hetero;
	int type;               /* distances2: its objects' type */
	struct tp__dist_matrix *m;
	int nidx;
	int64_t nval;
};

__attribute__((format(printf, 3, 4)))
static int derr(struct xp *x, const struct dread *d, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tp__xml_err(x, "%s %s: %s", d->tag, d->name, msg);
}

static int type_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof xtypes / sizeof *xtypes; i++)
		if (strlen(xtypes[i].name) == n && !strncmp(s, xtypes[i].name, n))
			return (int)i;
	return -1;
}

static int cmp_gpent(const void *a, const void *b)
{
	const struct gpent *p = a, *q = b;
	return p->gp < q->gp ? -1 : p->gp > q->gp;
}

/* The objects by gp_index, built for the first kept matrix (they all come
 * after the root object, so every object is known by then). */
static int gp_table(struct xp *x)
{
	if (x->gpt_built)
		return 0;
	x->gpt = tp__malloc_array((size_t)x->nobj + 1, sizeof *x->gpt);
	if (!x->gpt)
		return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
	for (int32_t i = 0; i < x->nobj; i++)
		if (x->obj[i].gp >= 0)
			x->gpt[x->ngpt++] = (struct gpent){ x->obj[i].gp, i };
	qsort(x->gpt, (size_t)x->ngpt, sizeof *x->gpt, cmp_gpent);
	x->gpt_built = true;
	return 0;
}

/* The object with that gp_index; -1: none, -2: more than one. */
static int32_t gp_find(const struct xp *x, int64_t gp)
{
	int32_t lo = 0, hi = x->ngpt;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (x->gpt[mid].gp < gp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->ngpt || x->gpt[lo].gp != gp)
		return -1;
	return lo + 1 < x->ngpt && x->gpt[lo + 1].gp == gp ? -2 : x->gpt[lo].obj;
}

/* One word of an <indexes>: "Type:gp_index" (hetero) or "gp_index". */
static int dist_index(struct xp *x, struct dread *d, const char *t)
{
	if (d->nidx == d->m->n)
		return derr(x, d, "more than %d indexes", d->m->n);
	int type = d->type;
	const char *num = t;
	if (d->hetero) {
		const char *c = strchr(t, ':');
		if (!c || (type = type_by_name(t, (size_t)(c - t))) < 0)
			return derr(x, d, "index \"%.40s\": expected Type:gp_index", t);
		num = c + 1;
	}
	int64_t gp;
	if (!tp__xml_dec(num, INT64_MAX / 16, &gp))
		return derr(x, d, "index \"%.40s\": not a gp_index", t);
	int32_t o = gp_find(x, gp);
	if (o == -1)
		return derr(x, d, "index \"%.40s\": no object has gp_index %lld", t,
			    (long long)gp);
	if (o == -2)
		return derr(x, d, "index \"%.40s\": gp_index %lld is given to two objects",
			    t, (long long)gp);
	if (x->obj[o].type != type)
		return derr(x, d, "index \"%.40s\": object %lld is a %s (line %d)", t,
			    (long long)gp, xtypes[x->obj[o].type].name, (int)x->obj[o].line);
	x->dobj[d->nidx++] = o;
	return 0;
}

static int dist_value(struct xp *x, struct dread *d, const char *t)
{
	int64_t v;
	if (d->nval == (int64_t)d->m->n * d->m->n)
		return derr(x, d, "more than %lld values", (long long)d->nval);
	if (!tp__xml_dec(t, TP__XML_MAX_DIST_VALUE, &v))
		return derr(x, d, "value \"%.30s\": expected a number up to %lld", t,
			    (long long)TP__XML_MAX_DIST_VALUE);
	d->m->val[d->nval++] = (uint64_t)v;
	return 0;
}

/* The text of an <indexes> or <u64values> (its start tag just read):
 * words split by blanks, exactly length= characters, then its end tag. */
static int dist_content(struct xp *x, struct dread *d, const char *tag, bool empty)
{
	bool is_index = !strcmp(tag, "indexes");
	const char *lv = tp__xml_attr(x, "length");
	int64_t length;
	if (!lv || !tp__xml_dec(lv, TP__MAX_XML_BYTES, &length))
		return derr(x, d, "<%s> without a length", tag);
	if (empty)
		return length ? derr(x, d, "<%s length=\"%lld\"/> without its text", tag,
				     (long long)length) : 0;
	const char *start = x->p;
	char word[64];
	size_t n = 0;
	int rc = 0;
	while (!rc && x->p < x->end && *x->p != '<') {
		char c = *x->p;
		bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
		if (!blank && n == sizeof word - 1)
			return derr(x, d, "<%s>: a word longer than %d characters", tag,
				    (int)sizeof word - 1);
		if (!blank)
			word[n++] = c;
		tp__xml_advance(x, 1);
		if (n && (blank || x->p == x->end || *x->p == '<')) {
			word[n] = '\0';
			n = 0;
			rc = is_index ? dist_index(x, d, word) : dist_value(x, d, word);
		}
	}
	if (rc)
		return rc;
	if (x->p - start != length)
		return derr(x, d, "<%s length=\"%lld\"> holds %lld characters", tag,
			    (long long)length, (long long)(x->p - start));
	enum tok k;
	char name[MAX_NAME + 1];
	bool e;
	if ((rc = tp__xml_next_tag(x, &k, name, &e, false)))
		return rc;
	if (k != TK_CLOSE || strcmp(name, tag))
		return derr(x, d, "<%s> not closed by </%s>", tag, tag);
	return 0;
}

/* OS devices of the same backend as OS device i below its PCI device:
 * more than one when the device is partitioned (node_build.c counts partitions
 * by the same rule). */
static int backend_siblings(const struct xp *x, int32_t i)
{
	const struct xobj *o = &x->obj[i];
	int k = 0;
	for (int32_t j = 0; j < x->nobj; j++)
		k += x->obj[j].parent == o->parent && x->obj[j].type == T_OSDEV &&
		     tp__osdev_backend(x->obj[j].name) &&
		     !strncmp(x->obj[j].name, o->name, 4);
	return k;
}

/* What a matrix object stands for: an NVML or ROCm SMI OS device is its
 * GPU (the PCIDev above it), or, when the device has several (an MI300 in
 * CPX mode), the partition it names; a PCIDev is a device, or an NVSwitch
 * (hwloc's subtype, or class 0680 of NVIDIA: nvml's own test).  Returns
 * the object it stands for (two matrix objects for one device or one
 * partition are an error). */
static int32_t dist_end(const struct xp *x, int32_t i, struct tp__dist_end *e)
{
	const struct xobj *o = &x->obj[i];
	int32_t os = -1;
	if (o->type == T_OSDEV && tp__osdev_backend(o->name) && o->parent >= 0 &&
	    x->obj[o->parent].type == T_PCIDEV) {
		os = backend_siblings(x, i) > 1 ? i : -1;
		i = o->parent;
	}
	o = &x->obj[i];
	memset(e, 0, sizeof *e);
	if (o->type != T_PCIDEV)
		e->role = TP__END_OTHER;
	else if (!strcmp(o->subtype, "NVSwitch") || (o->cls == 0x0680 && o->ven == 0x10de))
		e->role = TP__END_NVSWITCH;
	else
		*e = (struct tp__dist_end){ TP__END_DEVICE, o->dom, o->bus, o->dev, o->fn,
					    "" };
	if (e->role == TP__END_DEVICE && os >= 0) {
		snprintf(e->osdev, sizeof e->osdev, "%.15s", x->obj[os].name);
		return os;
	}
	return i;
}

static int dist_ends(struct xp *x, struct dread *d)
{
	struct tp__dist_matrix *m = d->m;
	for (int i = 0; i < m->n; i++)
		x->dobj[i] = dist_end(x, x->dobj[i], &m->end[i]);
	for (int i = 0; i < m->n; i++)
		for (int j = 0; j < i; j++)
			if (x->dobj[i] == x->dobj[j])
				return derr(x, d, "objects %d and %d are one %s (line %d)",
					    j, i, x->obj[x->dobj[i]].type == T_OSDEV
						  ? "GPU partition" : "device",
					    (int)x->obj[x->dobj[i]].line);
	return 0;
}

/* The attributes of a kept matrix; *skip: one hwloc ignores too (a single
 * object, os indexing of I/O objects). */
static int dist_attrs(struct xp *x, struct dread *d, bool *skip)
{
	const char *nb = tp__xml_attr(x, "nbobjs"), *kd = tp__xml_attr(x, "kind");
	const char *ty = tp__xml_attr(x, "type"), *ix = tp__xml_attr(x, "indexing");
	int64_t n, kind;
	if (!nb || !tp__xml_dec(nb, INT32_MAX, &n) || n < 1)
		return derr(x, d, "without nbobjs=N");
	if (n > TP__XML_MAX_DIST_OBJS)
		return derr(x, d, "nbobjs=\"%lld\": more than %d objects", (long long)n,
			    TP__XML_MAX_DIST_OBJS);
	if (!kd || !tp__xml_dec(kd, INT32_MAX, &kind) || !kind)
		return derr(x, d, "without kind=N");
	if (!d->hetero) {
		if (!ty || (d->type = type_by_name(ty, strlen(ty))) < 0)
			return derr(x, d, "without a known type=");
		if (!ix)
			return derr(x, d, "without indexing=");
	}
	*skip = n < 2 || (!d->hetero && strcmp(ix, "gp"));
	d->m->n = (int)n;
	return 0;
}

int tp__xml_read_distances(struct xp *x, const char *tag, bool empty)
{
	const char *name = tp__xml_attr(x, "name");
	int kind = -1;
	for (int k = 0; k < TP__DIST_N && name; k++)
		if (!strcmp(name, dist_name[k]))
			kind = k;
	if (kind < 0)
		return empty ? 0 : tp__xml_skip_element(x, tag);
	struct tp__dist_matrix *m = &x->dist->m[kind];
	struct tp__dist_matrix tmp = { 0 };
	struct dread d = { tag, dist_name[kind], !strcmp(tag, "distances2hetero"), 0,
			   &tmp, 0, 0 };
	bool skip = false;
	int rc = dist_attrs(x, &d, &skip);
	if (rc || skip)
		return rc ? rc : empty ? 0 : tp__xml_skip_element(x, tag);
	if (m->n)
		return derr(x, &d, "a second matrix of that name (the first: line %d)",
			    m->line);
	if (empty)
		return derr(x, &d, "without indexes and values");
	if ((rc = gp_table(x)))
		return rc;
	int n = tmp.n;
	m->end = tp__calloc((size_t)n, sizeof *m->end);
	m->val = tp__calloc((size_t)n * (size_t)n, sizeof *m->val);
	if (!m->end || !m->val)
		return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
	m->n = n;
	m->line = x->line;
	d.m = m;
	for (;;) {
		enum tok k;
		char cn[MAX_NAME + 1];
		bool ce;
		if ((rc = tp__xml_next_tag(x, &k, cn, &ce, false)))
			return rc;
		if (k == TK_CLOSE && !strcmp(cn, tag))
			break;
		if (k != TK_OPEN)
			return derr(x, &d, "unterminated");
		if (!strcmp(cn, "info"))
			rc = ce ? 0 : tp__xml_skip_element(x, cn);
		else if (!strcmp(cn, "indexes") || !strcmp(cn, "u64values"))
			rc = dist_content(x, &d, cn, ce);
		else
			rc = derr(x, &d, "unexpected <%s>", cn);
		if (rc)
			return rc;
	}
	if (d.nidx != n || d.nval != (int64_t)n * n)
		return derr(x, &d, "%d indexes and %lld values for nbobjs=\"%d\" "
			    "(expected %d and %lld)", d.nidx, (long long)d.nval, n, n,
			    (long long)n * n);
	return dist_ends(x, &d);
}
