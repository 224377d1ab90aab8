/* topoplace — the hwloc XML checker's values and objects: numbers, PCI
 * ids and hwloc bitmaps parsed with bounds; each object's attributes
 * checked against what hwloc needs of it and how it sits in its parent;
 * then the whole tree (disjoint siblings, unique PU and NUMA indices). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node_internal.h"
#include "util/util_internal.h"
#include "node/node_xml.h"

/* ---- values ---- */

bool tp__xml_dec(const char *s, int64_t max, int64_t *out)
{
	if (!*s || strlen(s) > 18)
		return false;
	int64_t v = 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		v = v * 10 + (*s - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* Exactly n hex digits (n = 0: 1..8) at *s; advances. */
static bool hexn(const char **s, int n, unsigned *out)
{
	unsigned v = 0;
	int k = 0;
	while (isxdigit((unsigned char)**s) && (n ? k < n : k < 8)) {
		char d = **s;
		v = v * 16 + (unsigned)(isdigit((unsigned char)d) ? d - '0'
							  : tolower((unsigned char)d) - 'a' + 10);
		(*s)++;
		k++;
	}
	if (!k || (n && k != n) || isxdigit((unsigned char)**s))
		return false;
	*out = v;
	return true;
}

static bool lit(const char **s, const char *l)
{
	size_t n = strlen(l);
	if (strncmp(*s, l, n))
		return false;
	*s += n;
	return true;
}

/* hwloc bitmap "0xf...f,0x0000ffff,,0x00000003" into the word pool. */
static int parse_set(struct xp *x, const char *an, const char *v, struct bset *b)
{
	b->present = true;
	b->inf = false;
	const char *s = v;
	if (lit(&s, "0xf...f")) {
		b->inf = true;
		if (!*s) {
			b->off = x->nwords;
			b->n = 0;
			return 0;
		}
		if (!lit(&s, ","))
			return tp__xml_err(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
	}
	uint32_t tmp[TP__XML_MAX_SET_WORDS];
	uint32_t n = 0;
	/* words "0x" and 1..8 hex digits, most significant first; an empty
	 * word between two commas is zero (hwloc writes "0xff,,,0x1") */
	for (;;) {
		unsigned w = 0;
		bool blank = n > 0 && *s == ',';
		if (!blank && (!lit(&s, "0x") || !hexn(&s, 0, &w)))
			return tp__xml_err(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
		if (n == TP__XML_MAX_SET_WORDS)
			return tp__xml_err(x, "%s: more than %d words", an, TP__XML_MAX_SET_WORDS);
		tmp[n++] = w;
		if (!*s)
			break;
		if (!lit(&s, ","))
			return tp__xml_err(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
	}
	if (x->wcap - x->nwords < n) {
		uint32_t nc = x->wcap ? x->wcap : 1024;
		while (nc - x->nwords < n)
			nc *= 2;
		uint32_t *nw = realloc(x->words, sizeof *nw * nc);
		if (!nw)
			return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
		x->words = nw;
		x->wcap = nc;
	}
	b->off = x->nwords;
	b->n = n;
	for (uint32_t i = 0; i < n; i++)     /* most significant word first */
		x->words[x->nwords + i] = tmp[n - 1 - i];
	x->nwords += n;
	return 0;
}

static uint32_t word(const struct xp *x, const struct bset *b, uint32_t i)
{
	return i < b->n ? x->words[b->off + i] : b->inf ? 0xffffffffu : 0;
}

static uint32_t max_n(const struct bset *a, const struct bset *b)
{
	return a->n > b->n ? a->n : b->n;
}

static bool subset(const struct xp *x, const struct bset *a, const struct bset *b)
{
	if (a->inf && !b->inf)
		return false;
	for (uint32_t i = 0, n = max_n(a, b); i < n; i++)
		if (word(x, a, i) & ~word(x, b, i))
			return false;
	return true;
}

static bool disjoint(const struct xp *x, const struct bset *a, const struct bset *b)
{
	if (a->inf && b->inf)
		return false;
	for (uint32_t i = 0, n = max_n(a, b); i < n; i++)
		if (word(x, a, i) & word(x, b, i))
			return false;
	return true;
}

static bool is_single(const struct xp *x, const struct bset *b, int64_t bit)
{
	if (b->inf)
		return false;
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t want = (int64_t)i == bit / 32 ? 1u << (bit % 32) : 0;
		if (x->words[b->off + i] != want)
			return false;
	}
	return (int64_t)b->n > bit / 32;
}

static bool empty_set(const struct xp *x, const struct bset *b)
{
	if (b->inf)
		return false;
	for (uint32_t i = 0; i < b->n; i++)
		if (x->words[b->off + i])
			return false;
	return true;
}

static int text_attr(struct xp *x, const char *an, const char *v, char *out)
{
	size_t n = strlen(v);
	if (n > MAX_TEXT)
		return tp__xml_err(x, "%s: longer than %d characters", an, MAX_TEXT);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return tp__xml_err(x, "%s: not printable ASCII", an);
	memcpy(out, v, n + 1);
	return 0;
}

/* ---- objects ---- */

/* hwloc 3 OS device types (a bitmask) as the hwloc 2 enum hwloc 2.9 reads,
 * the way hwloc 3's own v2 export writes them (first match wins), so that
 * node_build.c sees GPU, CoProc, Network and OpenFabrics devices as before. */
static unsigned osdev_v2(uint64_t types, const char *name, const char *subtype)
{
	enum { STORAGE = 1, MEMORY = 2, GPU = 4, COPROC = 8, NETWORK = 16,
	       OPENFABRICS = 32, DMA = 64 };
	if (types & (STORAGE | MEMORY))
		return 0;       /* Block */
	if (types & OPENFABRICS)
		return 3;       /* OpenFabrics */
	if (types & NETWORK)
		return !strcmp(subtype, "BXI") ? 3 : 2;
	if (types & DMA)
		return 4;
	if (types & COPROC)
		return !strncmp(name, "nvml", 4) || !strncmp(name, "rsmi", 4) ? 1 : 5;
	if (types & GPU)
		return 1;
	/* no known type: hwloc writes no osdev_type, which 2.9 reads as 0 */
	return 0;
}

/* gp_index="N", or 3.x's id="objN" without it: only the distance matrices
 * use it (hwloc never sees it), so a malformed one just names nothing. */
static void obj_gp(const struct xp *x, struct xobj *o)
{
	const char *v = tp__xml_attr(x, "gp_index");
	int64_t g;
	o->gp = -1;
	if (v && tp__xml_dec(v, INT64_MAX / 16, &g) && g > 0)
		o->gp = g;
	else if (!v && (v = tp__xml_attr(x, "id")) && !strncmp(v, "obj", 3) &&
		 tp__xml_dec(v + 3, INT64_MAX / 16, &g) && g > 0)
		o->gp = g;
}

static int obj_attrs(struct xp *x, struct xobj *o)
{
	const struct xtype *t = &xtypes[o->type];
	const char *v;
	int64_t n;
	int rc;
	if ((v = tp__xml_attr(x, "os_index"))) {
		if (!tp__xml_dec(v, 1 << 20, &o->os_index))
			return tp__xml_err(x, "os_index=\"%.20s\": expected a number up to %d", v,
					   1 << 20);
	}
	for (int k = 0; k < NSETS; k++)
		if ((v = tp__xml_attr(x, set_attr[k]))) {
			if (t->cls == XC_IO || t->cls == XC_MISC)
				return tp__xml_err(x, "%s object with %s", t->name, set_attr[k]);
			if ((rc = parse_set(x, set_attr[k], v, &o->set[k])))
				return rc;
		}
	if ((v = tp__xml_attr(x, "name")) && (rc = text_attr(x, "name", v, o->name)))
		return rc;
	if ((v = tp__xml_attr(x, "subtype")) && (rc = text_attr(x, "subtype", v, o->subtype)))
		return rc;
	if (t->cache_depth) {
		if ((v = tp__xml_attr(x, "depth")) && (!tp__xml_dec(v, 5, &n) || n != t->cache_depth))
			return tp__xml_err(x, "%s with depth=\"%.20s\"", t->name, v);
		if ((v = tp__xml_attr(x, "cache_type")) &&
		    (!tp__xml_dec(v, 2, &n) || (t->cache_type == 2) != (n == 2)))
			return tp__xml_err(x, "%s with cache_type=\"%.20s\"", t->name, v);
		if ((v = tp__xml_attr(x, "cache_size")) &&
		    !(o->has_size = tp__xml_dec(v, (int64_t)1 << 50, &o->cache_size)))
			return tp__xml_err(x, "cache_size=\"%.20s\": not a size", v);
		if ((v = tp__xml_attr(x, "cache_linesize")) &&
		    !(o->has_linesize = tp__xml_dec(v, 1 << 20, &o->linesize)))
			return tp__xml_err(x, "cache_linesize=\"%.20s\": not a size", v);
		if ((v = tp__xml_attr(x, "cache_associativity"))) {
			bool neg = v[0] == '-';
			if (!(o->has_assoc = tp__xml_dec(v + neg, 1 << 20, &o->assoc)))
				return tp__xml_err(x, "cache_associativity=\"%.20s\": not a number", v);
			if (neg)
				o->assoc = -o->assoc;
		}
	}
	if (o->type == T_GROUP) {
		if ((v = tp__xml_attr(x, "kind")) && !(o->has_kind = tp__xml_dec(v, 1 << 20, &o->kind)))
			return tp__xml_err(x, "kind=\"%.20s\": not a number", v);
		if ((v = tp__xml_attr(x, "subkind")) &&
		    !(o->has_subkind = tp__xml_dec(v, 1 << 20, &o->subkind)))
			return tp__xml_err(x, "subkind=\"%.20s\": not a number", v);
		if ((v = tp__xml_attr(x, "dont_merge")) &&
		    !(o->has_dont_merge = tp__xml_dec(v, 1, &o->dont_merge)))
			return tp__xml_err(x, "dont_merge=\"%.20s\": not 0 or 1", v);
	}
	if (o->type == T_BRIDGE || o->type == T_PCIDEV) {
		const char *s;
		unsigned prog_if;     /* hwloc 3 writes it (also in v2 XML); 2.9 does not read it */
		if ((v = tp__xml_attr(x, "pci_busid"))) {
			s = v;
			if (!hexn(&s, 4, &o->dom) || !lit(&s, ":") || !hexn(&s, 2, &o->bus) ||
			    !lit(&s, ":") || !hexn(&s, 2, &o->dev) || !lit(&s, ".") ||
			    !hexn(&s, 1, &o->fn) || *s || o->dev > 31 || o->fn > 7)
				return tp__xml_err(x, "pci_busid=\"%.40s\": expected DDDD:BB:DD.F", v);
			o->has_busid = true;
		}
		if ((v = tp__xml_attr(x, "pci_type"))) {
			s = v;
			if (!hexn(&s, 4, &o->cls) || !lit(&s, " [") || !hexn(&s, 4, &o->ven) ||
			    !lit(&s, ":") || !hexn(&s, 4, &o->did) || !lit(&s, "] [") ||
			    !hexn(&s, 4, &o->sven) || !lit(&s, ":") || !hexn(&s, 4, &o->sdid) ||
			    !lit(&s, "] ") || !hexn(&s, 2, &o->rev) ||
			    (*s && (!lit(&s, " ") || !hexn(&s, 2, &prog_if))) || *s)
				return tp__xml_err(x, "pci_type=\"%.40s\": expected CCCC [VVVV:DDDD] [VVVV:DDDD] RR [PP]",
						   v);
			o->has_pcitype = true;
		}
		if ((v = tp__xml_attr(x, "pci_link_speed"))) {
			size_t i = 0, dots = 0;
			for (; v[i]; i++)
				if (v[i] == '.' ? ++dots > 1 : !isdigit((unsigned char)v[i]))
					break;
			if (v[i] || !i || i >= sizeof o->speed || !isdigit((unsigned char)v[0]))
				return tp__xml_err(x, "pci_link_speed=\"%.20s\": not a number", v);
			memcpy(o->speed, v, i + 1);
			o->has_speed = true;
		}
	}
	if (o->type == T_BRIDGE) {
		const char *s;
		if ((v = tp__xml_attr(x, "bridge_type"))) {
			s = v;
			if (!(lit(&s, "0-1") || lit(&s, "1-1")) || *s)
				return tp__xml_err(x, "bridge_type=\"%.20s\": expected 0-1 or 1-1", v);
			o->bup = v[0] - '0';
			o->bdown = 1;
			o->has_btype = true;
		}
		if ((v = tp__xml_attr(x, "bridge_pci"))) {
			s = v;
			if (!hexn(&s, 4, &o->bdom) || !lit(&s, ":[") || !hexn(&s, 2, &o->secbus) ||
			    !lit(&s, "-") || !hexn(&s, 2, &o->subbus) || !lit(&s, "]") || *s ||
			    o->secbus > o->subbus)
				return tp__xml_err(x, "bridge_pci=\"%.40s\": expected DDDD:[BB-BB]", v);
			o->has_bpci = true;
		}
	}
	if (o->type == T_OSDEV && (v = tp__xml_attr(x, "osdev_type"))) {
		if (x->major >= 3) {
			if (!tp__xml_dec(v, INT32_MAX, &n))
				return tp__xml_err(x, "osdev_type=\"%.20s\": expected an hwloc 3 "
						   "type bitmask", v);
			o->osdev_type = osdev_v2((uint64_t)n, o->name, o->subtype);
		} else {
			if (!tp__xml_dec(v, 5, &n))
				return tp__xml_err(x, "osdev_type=\"%.20s\": expected 0..5", v);
			o->osdev_type = (unsigned)n;
		}
		o->has_osdev = true;
	}
	obj_gp(x, o);
	return 0;
}

/* What each object needs, and how it sits in its parent. */
static int obj_check(struct xp *x, struct xobj *o, const struct xobj *parent)
{
	const struct xtype *t = &xtypes[o->type];
	if (!parent && o->type != T_MACHINE)
		return tp__xml_err(x, "the root object is a %s, expected Machine", t->name);
	if (parent) {
		enum xclass pc = xtypes[parent->type].cls;
		bool ok = t->cls == XC_MISC ? true
			  : t->cls == XC_NORMAL ? pc == XC_NORMAL
			  : t->cls == XC_MEMORY ? pc == XC_NORMAL || pc == XC_MEMORY
			  : pc == XC_NORMAL || pc == XC_IO;
		if (pc == XC_MISC && t->cls != XC_MISC)
			ok = false;
		if (o->type == T_MACHINE || !ok)
			return tp__xml_err(x, "%s object inside a %s object", t->name,
					   xtypes[parent->type].name);
	}
	if (t->cls == XC_NORMAL || t->cls == XC_MEMORY) {
		for (int k = 0; k < NSETS; k++)
			if (!o->set[k].present)
				return tp__xml_err(x, "%s object without %s", t->name, set_attr[k]);
		if (!subset(x, &o->set[S_CPU], &o->set[S_CCPU]))
			return tp__xml_err(x, "%s object: cpuset not inside complete_cpuset", t->name);
		if (!subset(x, &o->set[S_NODE], &o->set[S_CNODE]))
			return tp__xml_err(x, "%s object: nodeset not inside complete_nodeset",
					   t->name);
		if (parent && (xtypes[parent->type].cls == XC_NORMAL ||
			       xtypes[parent->type].cls == XC_MEMORY)) {
			if (!subset(x, &o->set[S_CCPU], &parent->set[S_CCPU]) ||
			    !subset(x, &o->set[S_CPU], &parent->set[S_CPU]))
				return tp__xml_err(x, "%s object: cpuset not inside its parent's",
						   t->name);
			if (!subset(x, &o->set[S_CNODE], &parent->set[S_CNODE]) ||
			    !subset(x, &o->set[S_NODE], &parent->set[S_NODE]))
				return tp__xml_err(x, "%s object: nodeset not inside its parent's",
						   t->name);
		}
		if (!parent && empty_set(x, &o->set[S_NODE]))
			return tp__xml_err(x, "the root object has an empty nodeset");
	}
	if (o->type == T_PU || o->type == T_NUMA) {
		const struct bset *b = &o->set[o->type == T_PU ? S_CPU : S_NODE];
		if (o->os_index < 0 || o->os_index > MAX_INDEX)
			return tp__xml_err(x, "%s object without an os_index below %d", t->name,
					   MAX_INDEX + 1);
		if (!is_single(x, b, o->os_index))
			return tp__xml_err(x, "%s P#%lld: its %s is not exactly bit %lld", t->name,
					   (long long)o->os_index, o->type == T_PU ? "cpuset" : "nodeset",
					   (long long)o->os_index);
	}
	if (o->type == T_PCIDEV && (!o->has_busid || !o->has_pcitype))
		return tp__xml_err(x, "PCIDev object without %s",
				   o->has_busid ? "pci_type" : "pci_busid");
	if (o->type == T_BRIDGE) {
		if (!o->has_btype || !o->has_bpci)
			return tp__xml_err(x, "Bridge object without %s",
					   o->has_btype ? "bridge_pci" : "bridge_type");
		if (o->bup == 1 && (!o->has_busid || !o->has_pcitype))
			return tp__xml_err(x, "PCI Bridge object without %s",
					   o->has_busid ? "pci_type" : "pci_busid");
	}
	if (o->type == T_OSDEV && !o->has_osdev)
		return tp__xml_err(x, "OSDev object without osdev_type");
	return 0;
}

int tp__xml_new_object(struct xp *x, int32_t parent, int depth)
{
	const char *tn = tp__xml_attr(x, "type");
	if (!tn)
		return tp__xml_err(x, "object without a type");
	int type = -1;
	for (size_t i = 0; i < sizeof xtypes / sizeof *xtypes; i++)
		if (!strcmp(tn, xtypes[i].name))
			type = (int)i;
	if (type < 0)
		return tp__xml_err(x, "unknown object type \"%.40s\"", tn);
	if (x->nobj == TP__XML_MAX_OBJECTS)
		return tp__xml_err(x, "more than %d objects", TP__XML_MAX_OBJECTS);
	if (x->nobj == x->ocap) {
		int32_t nc = x->ocap ? x->ocap * 2 : 256;
		struct xobj *no = realloc(x->obj, sizeof *no * (size_t)nc);
		if (!no)
			return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
		x->obj = no;
		x->ocap = nc;
	}
	struct xobj *o = &x->obj[x->nobj];
	memset(o, 0, sizeof *o);
	o->type = type;
	o->parent = parent;
	o->depth = depth;
	o->line = x->line;
	o->os_index = -1;
	int rc = obj_attrs(x, o);
	if (!rc)
		rc = obj_check(x, o, parent >= 0 ? &x->obj[parent] : NULL);
	if (rc)
		return rc;
	return x->nobj++;
}

/* An <info name= value=> of object o (its attributes just read): an
 * OSDev's XGMIPeers is checked and kept, everything else dropped. */
int tp__xml_object_info(struct xp *x, struct xobj *o)
{
	const char *name = tp__xml_attr(x, "name"), *v = tp__xml_attr(x, "value");
	if (o->type != T_OSDEV || !name || strcmp(name, "XGMIPeers"))
		return 0;
	if (!v)
		return tp__xml_err(x, "info XGMIPeers without a value");
	if (o->has_xgmi)
		return tp__xml_err(x, "info XGMIPeers given twice");
	uint64_t peers = 0;
	for (const char *s = v; *s;) {
		if (*s == ' ') {
			s++;
			continue;
		}
		int64_t i;
		char num[4];
		size_t d = 0;
		if (strncmp(s, "rsmi", 4))
			return tp__xml_err(x, "info XGMIPeers=\"%.40s\": expected rsmiN names", v);
		for (s += 4; isdigit((unsigned char)*s) && d < sizeof num - 1; s++)
			num[d++] = *s;
		num[d] = '\0';
		if (!d || (*s && *s != ' ') || !tp__xml_dec(num, TP__XML_MAX_RSMI - 1, &i))
			return tp__xml_err(x, "info XGMIPeers=\"%.40s\": expected rsmiN names, "
					   "N below %d", v, TP__XML_MAX_RSMI);
		peers |= (uint64_t)1 << i;
	}
	o->has_xgmi = true;
	o->xgmi_peers = peers;
	return 0;
}

/* Normal siblings have disjoint complete cpusets; PU and NUMA indices are
 * unique.  One pass over the objects with a running union per parent. */
int tp__xml_check_tree(struct xp *x)
{
	int rc = 0;
	int32_t nobj = x->nobj;
	/* first normal child of each object, and the next normal sibling */
	int32_t *first = tp__malloc_array((size_t)nobj, sizeof *first);
	int32_t *next = tp__malloc_array((size_t)nobj, sizeof *next);
	int32_t *last = tp__malloc_array((size_t)nobj, sizeof *last);
	unsigned char *pu_seen = calloc(MAX_INDEX + 1, 1);
	unsigned char *numa_seen = calloc(MAX_INDEX + 1, 1);
	int npu = 0;
	if (!first || !next || !last || !pu_seen || !numa_seen) {
		rc = tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
		goto out;
	}
	for (int32_t i = 0; i < nobj; i++)
		first[i] = next[i] = last[i] = -1;
	for (int32_t i = 0; i < nobj && !rc; i++) {
		const struct xobj *o = &x->obj[i];
		x->line = o->line;
		if (o->type == T_PU || o->type == T_NUMA) {
			unsigned char *seen = o->type == T_PU ? pu_seen : numa_seen;
			if (seen[o->os_index])
				rc = tp__xml_err(x, "%s P#%lld given twice", xtypes[o->type].name,
						 (long long)o->os_index);
			seen[o->os_index] = 1;
			npu += o->type == T_PU;
		}
		if (o->parent < 0 || xtypes[o->type].cls != XC_NORMAL)
			continue;
		/* compare with the earlier normal siblings */
		for (int32_t s = first[o->parent]; s >= 0 && !rc; s = next[s])
			if (!disjoint(x, &x->obj[s].set[S_CCPU], &o->set[S_CCPU]))
				rc = tp__xml_err(x, "%s object: its cpuset overlaps a sibling's (line %d)",
						 xtypes[o->type].name, (int)x->obj[s].line);
		if (last[o->parent] < 0)
			first[o->parent] = i;
		else
			next[last[o->parent]] = i;
		last[o->parent] = i;
	}
	if (!rc && npu == 0)
		rc = tp__xml_err(x, "no PU object");
out:
	free(first);
	free(next);
	free(last);
	free(pu_seen);
	free(numa_seen);
	return rc;
}
