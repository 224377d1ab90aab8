/* topoplace — hwloc XML is checked and rewritten before hwloc sees it.
 *
 * hwloc 2.9's XML import trusts its input: a Package without
 * complete_cpuset crashes it (SIGSEGV), nodeset=",x00000001" aborts it on an
 * assertion, a NUMANode without os_index costs 0.5-1 GB and seconds.  A
 * node model reaches slurmstepd, where a crash or a stall takes every job
 * step with it, so no byte of a user's or admin's XML goes to hwloc as is.
 *
 * The rule: the text is parsed by the bounded scanner below (no recursion,
 * at most TP__XML_MAX_DEPTH levels and TP__XML_MAX_OBJECTS objects, names
 * and values bounded), the objects are checked against what hwloc needs of
 * them, and a canonical hwloc 2.0 document is written from the checked
 * values alone.  Only that document is loaded by hwloc.  Checked:
 *   - the root element is <topology version="2.x"> or "3.x" (hwloc 1.x
 *     XML is refused: convert it with hwloc 2's "lstopo --input old.xml
 *     new.xml"), its first child the one root <object type="Machine">;
 *   - every object has a known hwloc 2 type; normal objects (Machine,
 *     Package, Die, Core, PU, caches, Group) sit under normal objects,
 *     memory objects (NUMANode, MemCache) under normal or memory ones, I/O
 *     objects (Bridge, PCIDev, OSDev) under normal or I/O ones, Misc
 *     anywhere and only Misc under Misc;
 *   - normal and memory objects carry all four sets (cpuset,
 *     complete_cpuset, nodeset, complete_nodeset) in hwloc's bitmap syntax
 *     ("0x0000ffff,0x00000003", optionally "0xf...f," first), of at most
 *     TP__XML_MAX_SET_WORDS words; I/O and Misc objects carry none;
 *     cpuset is inside complete_cpuset and nodeset inside complete_nodeset;
 *     an object's complete sets are inside its parent's; normal siblings
 *     have disjoint complete cpusets; the root's nodeset is not empty;
 *   - a PU has an os_index below 8192 and its cpuset is exactly that bit;
 *     a NUMANode likewise with its nodeset; neither index appears twice;
 *   - caches: depth and cache_type agree with the type name; Bridges have
 *     bridge_type "0-1" or "1-1" and bridge_pci "DDDD:[BB-BB]", a PCI
 *     upstream side and every PCIDev have pci_busid "DDDD:BB:DD.F" and
 *     pci_type "CCCC [VVVV:DDDD] [VVVV:DDDD] RR" (hwloc 3 adds the prog-if,
 *     " PP", read and dropped); an OSDev has osdev_type;
 *     numbers are decimal and bounded; names are printable ASCII.
 * hwloc 3.x: its OSDev osdev_type is a bitmask (Storage 1, Memory 2, GPU 4,
 * CoProc 8, Network 16, OpenFabrics 32, DMA 64); it is written as the 2.x
 * enum the way hwloc 3's own v2 export writes it, so GPUs, co-processors,
 * network and OpenFabrics devices read as before.  Its id="objN" stands for
 * gp_index when that is missing; its new attributes (cache_inclusive, a
 * Bridge's depth, ...) and top-level elements (<info>, <pci_locality>,
 * <memtier>, ...) are dropped like any unknown one.
 * Kept of the <info> elements: an OSDev's XGMIPeers (ROCm SMI's list of a
 * GPU's xGMI peers, "rsmi1 rsmi5 "), checked to be rsmiN names with N below
 * TP__XML_MAX_RSMI.
 * Kept of the distance matrices (<distances2>, <distances2hetero>): those
 * named NVLinkBandwidth, XGMIBandwidth and XGMIHops, which hwloc 2.9 never
 * sees: node_dist.c turns them into NVLink lanes or xGMI links once the
 * model is built.  Checked: nbobjs at most TP__XML_MAX_DIST_OBJS, kind
 * given, a distances2's type known and its indexing "gp" (hwloc's own rule:
 * "os" and a single object are ignored, as hwloc ignores them); the
 * <indexes> and <u64values> children, any number of them, each exactly
 * length= characters of blank-separated words, together exactly nbobjs
 * indexes ("Type:gp_index" in a distances2hetero) and nbobjs^2 values of at
 * most 18 digits; every index names one object of that type by its
 * gp_index, and no device twice (an nvmlN or rsmiN OS device stands for
 * the PCIDev above it).  A second matrix of one name is refused.
 * Dropped without a word: everything topoplace does not read and hwloc
 * would otherwise parse (other info, page_type, userdata, other distances,
 * memattrs, cpukinds, support, gp_index, allowed sets, local_memory,
 * unknown attributes).  Each refusal is one line: "FILE: hwloc XML line N: ...".
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_ATTRS 64           /* attributes of one element */
#define MAX_NAME 64            /* element and attribute names */
#define MAX_VALUE 4096         /* decoded attribute value */
#define MAX_TEXT 128           /* name= and subtype= kept */
#define MAX_INDEX (TP__XML_MAX_SET_WORDS * 32 - 1)   /* PU, NUMANode os_index */

enum xclass { XC_NORMAL, XC_MEMORY, XC_IO, XC_MISC };

static const struct xtype {
	const char *name;
	enum xclass cls;
	int cache_depth;        /* caches: 1..5 */
	int cache_type;         /* 0 unified, 2 instruction */
} xtypes[] = {
	{ "Machine", XC_NORMAL, 0, 0 }, { "Package", XC_NORMAL, 0, 0 },
	{ "Die", XC_NORMAL, 0, 0 }, { "Core", XC_NORMAL, 0, 0 },
	{ "PU", XC_NORMAL, 0, 0 }, { "Group", XC_NORMAL, 0, 0 },
	{ "L1Cache", XC_NORMAL, 1, 0 }, { "L2Cache", XC_NORMAL, 2, 0 },
	{ "L3Cache", XC_NORMAL, 3, 0 }, { "L4Cache", XC_NORMAL, 4, 0 },
	{ "L5Cache", XC_NORMAL, 5, 0 }, { "L1iCache", XC_NORMAL, 1, 2 },
	{ "L2iCache", XC_NORMAL, 2, 2 }, { "L3iCache", XC_NORMAL, 3, 2 },
	{ "NUMANode", XC_MEMORY, 0, 0 }, { "MemCache", XC_MEMORY, 0, 0 },
	{ "Bridge", XC_IO, 0, 0 }, { "PCIDev", XC_IO, 0, 0 },
	{ "OSDev", XC_IO, 0, 0 }, { "Misc", XC_MISC, 0, 0 },
};
enum { T_MACHINE = 0, T_PU = 4, T_GROUP = 5, T_NUMA = 14, T_BRIDGE = 16,
       T_PCIDEV = 17, T_OSDEV = 18 };

enum { S_CPU, S_CCPU, S_NODE, S_CNODE, NSETS };
static const char *const set_attr[NSETS] = {
	"cpuset", "complete_cpuset", "nodeset", "complete_nodeset"
};

struct bset {
	bool present, inf;      /* inf: "0xf...f," every bit above is set */
	uint32_t off, n;        /* words in the pool, least significant first */
};

struct xobj {
	int type;
	int32_t parent, line;
	int depth;
	int64_t os_index;       /* -1: not given */
	int64_t gp;             /* gp_index (3.x: id="objN"), -1: none */
	struct bset set[NSETS];
	char name[MAX_TEXT + 1], subtype[MAX_TEXT + 1];
	/* caches */
	int64_t cache_size, linesize, assoc;
	bool has_size, has_linesize, has_assoc;
	/* groups */
	int64_t kind, subkind, dont_merge;
	bool has_kind, has_subkind, has_dont_merge;
	/* PCI */
	bool has_busid, has_pcitype, has_speed, has_btype, has_bpci, has_osdev;
	unsigned dom, bus, dev, fn;
	unsigned cls, ven, did, sven, sdid, rev;
	char speed[32];
	unsigned bup, bdown, bdom, secbus, subbus;
	unsigned osdev_type;
	/* OSDev: <info name="XGMIPeers">, bit i for rsmi<i> */
	bool has_xgmi;
	uint64_t xgmi_peers;
};

struct xattr {
	char name[MAX_NAME + 1];
	char *value;            /* decoded, in the value pool */
};

struct gpent {
	int64_t gp;
	int32_t obj;
};

struct xp {
	const char *s, *end, *p;
	const char *what;
	tp_error *err;
	int line;
	int major;              /* 2 or 3: <topology version=> */
	struct tp__xml_dist *dist;
	struct gpent *gpt;      /* objects by gp_index, for the matrices */
	int32_t ngpt;
	bool gpt_built;
	struct xobj *obj;
	int32_t nobj, ocap;
	uint32_t *words;
	uint32_t nwords, wcap;
	int32_t dobj[TP__XML_MAX_DIST_OBJS];   /* a matrix's objects */
	struct xattr attr[MAX_ATTRS];
	int nattr;
	char vbuf[MAX_ATTRS][MAX_VALUE + 1];
};

__attribute__((format(printf, 2, 3)))
static int xerr(struct xp *x, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tp_error_set(x->err, TP_EINVAL, "%s: hwloc XML line %d: %s", x->what,
			    x->line, msg);
}

/* ---- the scanner ---- */

static void advance(struct xp *x, size_t n)
{
	for (size_t i = 0; i < n && x->p < x->end; i++, x->p++)
		if (*x->p == '\n')
			x->line++;
}

static void skip_ws(struct xp *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\r' ||
				 *x->p == '\n'))
		advance(x, 1);
}

static bool at(const struct xp *x, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(x->end - x->p) >= n && !memcmp(x->p, lit, n);
}

/* Skip up to and past the literal end; error when it never comes. */
static int skip_past(struct xp *x, const char *endlit, const char *what)
{
	size_t n = strlen(endlit);
	while (x->p < x->end) {
		if (at(x, endlit)) {
			advance(x, n);
			return 0;
		}
		advance(x, 1);
	}
	return xerr(x, "unterminated %s", what);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' ||
	       c == ':';
}

static int read_name(struct xp *x, char *out)
{
	size_t n = 0;
	while (x->p < x->end && name_char(*x->p)) {
		if (n == MAX_NAME)
			return xerr(x, "name longer than %d characters", MAX_NAME);
		out[n++] = *x->p;
		advance(x, 1);
	}
	out[n] = '\0';
	return n ? 0 : xerr(x, "expected a name");
}

/* Decode one entity at x->p (after '&') into *c. */
static int entity(struct xp *x, char *c)
{
	static const struct { const char *n; char c; } ents[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' },
		{ "quot;", '"' }, { "apos;", '\'' },
	};
	for (size_t i = 0; i < sizeof ents / sizeof *ents; i++)
		if (at(x, ents[i].n)) {
			*c = ents[i].c;
			advance(x, strlen(ents[i].n));
			return 0;
		}
	if (at(x, "#")) {
		advance(x, 1);
		bool hex = at(x, "x");
		if (hex)
			advance(x, 1);
		unsigned v = 0;
		int nd = 0;
		while (x->p < x->end && nd < 6 &&
		       (hex ? isxdigit((unsigned char)*x->p) : isdigit((unsigned char)*x->p))) {
			char d = *x->p;
			v = v * (hex ? 16u : 10u) +
			    (unsigned)(isdigit((unsigned char)d) ? d - '0'
							       : (tolower((unsigned char)d) - 'a' + 10));
			nd++;
			advance(x, 1);
		}
		if (nd && at(x, ";") && v >= 0x20 && v < 0x7f) {
			advance(x, 1);
			*c = (char)v;
			return 0;
		}
	}
	return xerr(x, "bad character reference in an attribute value");
}

/* Attributes up to '>' or "/>"; *empty says which. */
static int read_attrs(struct xp *x, bool *empty)
{
	x->nattr = 0;
	for (;;) {
		skip_ws(x);
		if (x->p >= x->end)
			return xerr(x, "unterminated element");
		if (at(x, "/>")) {
			advance(x, 2);
			*empty = true;
			return 0;
		}
		if (at(x, ">")) {
			advance(x, 1);
			*empty = false;
			return 0;
		}
		if (x->nattr == MAX_ATTRS)
			return xerr(x, "more than %d attributes", MAX_ATTRS);
		struct xattr *a = &x->attr[x->nattr];
		int rc = read_name(x, a->name);
		if (rc)
			return rc;
		for (int i = 0; i < x->nattr; i++)
			if (!strcmp(x->attr[i].name, a->name))
				return xerr(x, "attribute %s given twice", a->name);
		skip_ws(x);
		if (!at(x, "="))
			return xerr(x, "attribute %s without a value", a->name);
		advance(x, 1);
		skip_ws(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\''))
			return xerr(x, "attribute %s: value not quoted", a->name);
		char q = *x->p;
		advance(x, 1);
		char *v = x->vbuf[x->nattr];
		size_t n = 0;
		for (;;) {
			if (x->p >= x->end)
				return xerr(x, "attribute %s: unterminated value", a->name);
			char c = *x->p;
			if (c == q) {
				advance(x, 1);
				break;
			}
			if (c == '<')
				return xerr(x, "attribute %s: '<' in a value", a->name);
			advance(x, 1);
			if (c == '&' && (rc = entity(x, &c)))
				return rc;
			if (n == MAX_VALUE)
				return xerr(x, "attribute %s: value longer than %d characters",
					    a->name, MAX_VALUE);
			v[n++] = c;
		}
		v[n] = '\0';
		a->value = v;
		x->nattr++;
	}
}

static const char *attr(const struct xp *x, const char *name)
{
	for (int i = 0; i < x->nattr; i++)
		if (!strcmp(x->attr[i].name, name))
			return x->attr[i].value;
	return NULL;
}

enum tok { TK_END, TK_OPEN, TK_CLOSE };

/* The next tag, skipping comments, processing instructions, a DOCTYPE and
 * blank text.  Text other than blanks is an error unless skip_text. */
static int next_tag(struct xp *x, enum tok *kind, char *name, bool *empty,
		    bool skip_text)
{
	for (;;) {
		skip_ws(x);
		if (x->p >= x->end) {
			*kind = TK_END;
			return 0;
		}
		int rc;
		if (at(x, "<!--")) {
			if ((rc = skip_past(x, "-->", "comment")))
				return rc;
		} else if (at(x, "<?")) {
			if ((rc = skip_past(x, "?>", "processing instruction")))
				return rc;
		} else if (at(x, "<!DOCTYPE")) {
			const char *q = x->p;
			while (q < x->end && *q != '>' && *q != '[')
				q++;
			if (q < x->end && *q == '[')
				return xerr(x, "a DOCTYPE with an internal subset");
			if ((rc = skip_past(x, ">", "DOCTYPE")))
				return rc;
		} else if (at(x, "<![CDATA[")) {
			return xerr(x, "CDATA section");
		} else if (at(x, "</")) {
			advance(x, 2);
			if ((rc = read_name(x, name)))
				return rc;
			skip_ws(x);
			if (!at(x, ">"))
				return xerr(x, "bad end tag </%s", name);
			advance(x, 1);
			*kind = TK_CLOSE;
			return 0;
		} else if (at(x, "<")) {
			advance(x, 1);
			if ((rc = read_name(x, name)) || (rc = read_attrs(x, empty)))
				return rc;
			*kind = TK_OPEN;
			return 0;
		} else {
			if (!skip_text)
				return xerr(x, "unexpected text");
			while (x->p < x->end && *x->p != '<')
				advance(x, 1);      /* text of dropped elements */
		}
	}
}

/* ---- values ---- */

static bool dec(const char *s, int64_t max, int64_t *out)
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
			return xerr(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
	}
	uint32_t tmp[TP__XML_MAX_SET_WORDS];
	uint32_t n = 0;
	/* words "0x" and 1..8 hex digits, most significant first; an empty
	 * word between two commas is zero (hwloc writes "0xff,,,0x1") */
	for (;;) {
		unsigned w = 0;
		bool blank = n > 0 && *s == ',';
		if (!blank && (!lit(&s, "0x") || !hexn(&s, 0, &w)))
			return xerr(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
		if (n == TP__XML_MAX_SET_WORDS)
			return xerr(x, "%s: more than %d words", an, TP__XML_MAX_SET_WORDS);
		tmp[n++] = w;
		if (!*s)
			break;
		if (!lit(&s, ","))
			return xerr(x, "%s=\"%.40s\": not an hwloc bitmap", an, v);
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
		return xerr(x, "%s: longer than %d characters", an, MAX_TEXT);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return xerr(x, "%s: not printable ASCII", an);
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
	const char *v = attr(x, "gp_index");
	int64_t g;
	o->gp = -1;
	if (v && dec(v, INT64_MAX / 16, &g) && g > 0)
		o->gp = g;
	else if (!v && (v = attr(x, "id")) && !strncmp(v, "obj", 3) &&
		 dec(v + 3, INT64_MAX / 16, &g) && g > 0)
		o->gp = g;
}

static int obj_attrs(struct xp *x, struct xobj *o)
{
	const struct xtype *t = &xtypes[o->type];
	const char *v;
	int64_t n;
	int rc;
	if ((v = attr(x, "os_index"))) {
		if (!dec(v, 1 << 20, &o->os_index))
			return xerr(x, "os_index=\"%.20s\": expected a number up to %d", v,
				    1 << 20);
	}
	for (int k = 0; k < NSETS; k++)
		if ((v = attr(x, set_attr[k]))) {
			if (t->cls == XC_IO || t->cls == XC_MISC)
				return xerr(x, "%s object with %s", t->name, set_attr[k]);
			if ((rc = parse_set(x, set_attr[k], v, &o->set[k])))
				return rc;
		}
	if ((v = attr(x, "name")) && (rc = text_attr(x, "name", v, o->name)))
		return rc;
	if ((v = attr(x, "subtype")) && (rc = text_attr(x, "subtype", v, o->subtype)))
		return rc;
	if (t->cache_depth) {
		if ((v = attr(x, "depth")) && (!dec(v, 5, &n) || n != t->cache_depth))
			return xerr(x, "%s with depth=\"%.20s\"", t->name, v);
		if ((v = attr(x, "cache_type")) &&
		    (!dec(v, 2, &n) || (t->cache_type == 2) != (n == 2)))
			return xerr(x, "%s with cache_type=\"%.20s\"", t->name, v);
		if ((v = attr(x, "cache_size")) &&
		    !(o->has_size = dec(v, (int64_t)1 << 50, &o->cache_size)))
			return xerr(x, "cache_size=\"%.20s\": not a size", v);
		if ((v = attr(x, "cache_linesize")) &&
		    !(o->has_linesize = dec(v, 1 << 20, &o->linesize)))
			return xerr(x, "cache_linesize=\"%.20s\": not a size", v);
		if ((v = attr(x, "cache_associativity"))) {
			bool neg = v[0] == '-';
			if (!(o->has_assoc = dec(v + neg, 1 << 20, &o->assoc)))
				return xerr(x, "cache_associativity=\"%.20s\": not a number", v);
			if (neg)
				o->assoc = -o->assoc;
		}
	}
	if (o->type == T_GROUP) {
		if ((v = attr(x, "kind")) && !(o->has_kind = dec(v, 1 << 20, &o->kind)))
			return xerr(x, "kind=\"%.20s\": not a number", v);
		if ((v = attr(x, "subkind")) &&
		    !(o->has_subkind = dec(v, 1 << 20, &o->subkind)))
			return xerr(x, "subkind=\"%.20s\": not a number", v);
		if ((v = attr(x, "dont_merge")) &&
		    !(o->has_dont_merge = dec(v, 1, &o->dont_merge)))
			return xerr(x, "dont_merge=\"%.20s\": not 0 or 1", v);
	}
	if (o->type == T_BRIDGE || o->type == T_PCIDEV) {
		const char *s;
		unsigned prog_if;     /* hwloc 3 writes it (also in v2 XML); 2.9 does not read it */
		if ((v = attr(x, "pci_busid"))) {
			s = v;
			if (!hexn(&s, 4, &o->dom) || !lit(&s, ":") || !hexn(&s, 2, &o->bus) ||
			    !lit(&s, ":") || !hexn(&s, 2, &o->dev) || !lit(&s, ".") ||
			    !hexn(&s, 1, &o->fn) || *s || o->dev > 31 || o->fn > 7)
				return xerr(x, "pci_busid=\"%.40s\": expected DDDD:BB:DD.F", v);
			o->has_busid = true;
		}
		if ((v = attr(x, "pci_type"))) {
			s = v;
			if (!hexn(&s, 4, &o->cls) || !lit(&s, " [") || !hexn(&s, 4, &o->ven) ||
			    !lit(&s, ":") || !hexn(&s, 4, &o->did) || !lit(&s, "] [") ||
			    !hexn(&s, 4, &o->sven) || !lit(&s, ":") || !hexn(&s, 4, &o->sdid) ||
			    !lit(&s, "] ") || !hexn(&s, 2, &o->rev) ||
			    (*s && (!lit(&s, " ") || !hexn(&s, 2, &prog_if))) || *s)
				return xerr(x, "pci_type=\"%.40s\": expected CCCC [VVVV:DDDD] [VVVV:DDDD] RR [PP]",
					    v);
			o->has_pcitype = true;
		}
		if ((v = attr(x, "pci_link_speed"))) {
			size_t i = 0, dots = 0;
			for (; v[i]; i++)
				if (v[i] == '.' ? ++dots > 1 : !isdigit((unsigned char)v[i]))
					break;
			if (v[i] || !i || i >= sizeof o->speed || !isdigit((unsigned char)v[0]))
				return xerr(x, "pci_link_speed=\"%.20s\": not a number", v);
			memcpy(o->speed, v, i + 1);
			o->has_speed = true;
		}
	}
	if (o->type == T_BRIDGE) {
		const char *s;
		if ((v = attr(x, "bridge_type"))) {
			s = v;
			if (!(lit(&s, "0-1") || lit(&s, "1-1")) || *s)
				return xerr(x, "bridge_type=\"%.20s\": expected 0-1 or 1-1", v);
			o->bup = v[0] - '0';
			o->bdown = 1;
			o->has_btype = true;
		}
		if ((v = attr(x, "bridge_pci"))) {
			s = v;
			if (!hexn(&s, 4, &o->bdom) || !lit(&s, ":[") || !hexn(&s, 2, &o->secbus) ||
			    !lit(&s, "-") || !hexn(&s, 2, &o->subbus) || !lit(&s, "]") || *s ||
			    o->secbus > o->subbus)
				return xerr(x, "bridge_pci=\"%.40s\": expected DDDD:[BB-BB]", v);
			o->has_bpci = true;
		}
	}
	if (o->type == T_OSDEV && (v = attr(x, "osdev_type"))) {
		if (x->major >= 3) {
			if (!dec(v, INT32_MAX, &n))
				return xerr(x, "osdev_type=\"%.20s\": expected an hwloc 3 "
					    "type bitmask", v);
			o->osdev_type = osdev_v2((uint64_t)n, o->name, o->subtype);
		} else {
			if (!dec(v, 5, &n))
				return xerr(x, "osdev_type=\"%.20s\": expected 0..5", v);
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
		return xerr(x, "the root object is a %s, expected Machine", t->name);
	if (parent) {
		enum xclass pc = xtypes[parent->type].cls;
		bool ok = t->cls == XC_MISC ? true
			  : t->cls == XC_NORMAL ? pc == XC_NORMAL
			  : t->cls == XC_MEMORY ? pc == XC_NORMAL || pc == XC_MEMORY
			  : pc == XC_NORMAL || pc == XC_IO;
		if (pc == XC_MISC && t->cls != XC_MISC)
			ok = false;
		if (o->type == T_MACHINE || !ok)
			return xerr(x, "%s object inside a %s object", t->name,
				    xtypes[parent->type].name);
	}
	if (t->cls == XC_NORMAL || t->cls == XC_MEMORY) {
		for (int k = 0; k < NSETS; k++)
			if (!o->set[k].present)
				return xerr(x, "%s object without %s", t->name, set_attr[k]);
		if (!subset(x, &o->set[S_CPU], &o->set[S_CCPU]))
			return xerr(x, "%s object: cpuset not inside complete_cpuset", t->name);
		if (!subset(x, &o->set[S_NODE], &o->set[S_CNODE]))
			return xerr(x, "%s object: nodeset not inside complete_nodeset",
				    t->name);
		if (parent && (xtypes[parent->type].cls == XC_NORMAL ||
			       xtypes[parent->type].cls == XC_MEMORY)) {
			if (!subset(x, &o->set[S_CCPU], &parent->set[S_CCPU]) ||
			    !subset(x, &o->set[S_CPU], &parent->set[S_CPU]))
				return xerr(x, "%s object: cpuset not inside its parent's",
					    t->name);
			if (!subset(x, &o->set[S_CNODE], &parent->set[S_CNODE]) ||
			    !subset(x, &o->set[S_NODE], &parent->set[S_NODE]))
				return xerr(x, "%s object: nodeset not inside its parent's",
					    t->name);
		}
		if (!parent && empty_set(x, &o->set[S_NODE]))
			return xerr(x, "the root object has an empty nodeset");
	}
	if (o->type == T_PU || o->type == T_NUMA) {
		const struct bset *b = &o->set[o->type == T_PU ? S_CPU : S_NODE];
		if (o->os_index < 0 || o->os_index > MAX_INDEX)
			return xerr(x, "%s object without an os_index below %d", t->name,
				    MAX_INDEX + 1);
		if (!is_single(x, b, o->os_index))
			return xerr(x, "%s P#%lld: its %s is not exactly bit %lld", t->name,
				    (long long)o->os_index, o->type == T_PU ? "cpuset" : "nodeset",
				    (long long)o->os_index);
	}
	if (o->type == T_PCIDEV && (!o->has_busid || !o->has_pcitype))
		return xerr(x, "PCIDev object without %s",
			    o->has_busid ? "pci_type" : "pci_busid");
	if (o->type == T_BRIDGE) {
		if (!o->has_btype || !o->has_bpci)
			return xerr(x, "Bridge object without %s",
				    o->has_btype ? "bridge_pci" : "bridge_type");
		if (o->bup == 1 && (!o->has_busid || !o->has_pcitype))
			return xerr(x, "PCI Bridge object without %s",
				    o->has_busid ? "pci_type" : "pci_busid");
	}
	if (o->type == T_OSDEV && !o->has_osdev)
		return xerr(x, "OSDev object without osdev_type");
	return 0;
}

/* ---- the document ---- */

/* Skip the rest of an element whose start tag was just read (its name). */
static int skip_element(struct xp *x, const char *name)
{
	char stack[TP__XML_MAX_DEPTH][MAX_NAME + 1];
	int depth = 0;
	snprintf(stack[depth++], sizeof stack[0], "%s", name);
	while (depth > 0) {
		enum tok k;
		char n[MAX_NAME + 1];
		bool empty;
		int rc = next_tag(x, &k, n, &empty, true);
		if (rc)
			return rc;
		if (k == TK_END)
			return xerr(x, "unterminated element <%s>", stack[depth - 1]);
		if (k == TK_CLOSE) {
			if (strcmp(n, stack[depth - 1]))
				return xerr(x, "</%s> closes <%s>", n, stack[depth - 1]);
			depth--;
		} else if (!empty) {
			if (depth == TP__XML_MAX_DEPTH)
				return xerr(x, "elements nested deeper than %d", TP__XML_MAX_DEPTH);
			snprintf(stack[depth++], sizeof stack[0], "%s", n);
		}
	}
	return 0;
}

static int new_object(struct xp *x, int32_t parent, int depth)
{
	const char *tn = attr(x, "type");
	if (!tn)
		return xerr(x, "object without a type");
	int type = -1;
	for (size_t i = 0; i < sizeof xtypes / sizeof *xtypes; i++)
		if (!strcmp(tn, xtypes[i].name))
			type = (int)i;
	if (type < 0)
		return xerr(x, "unknown object type \"%.40s\"", tn);
	if (x->nobj == TP__XML_MAX_OBJECTS)
		return xerr(x, "more than %d objects", TP__XML_MAX_OBJECTS);
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
static int object_info(struct xp *x, struct xobj *o)
{
	const char *name = attr(x, "name"), *v = attr(x, "value");
	if (o->type != T_OSDEV || !name || strcmp(name, "XGMIPeers"))
		return 0;
	if (!v)
		return xerr(x, "info XGMIPeers without a value");
	if (o->has_xgmi)
		return xerr(x, "info XGMIPeers given twice");
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
			return xerr(x, "info XGMIPeers=\"%.40s\": expected rsmiN names", v);
		for (s += 4; isdigit((unsigned char)*s) && d < sizeof num - 1; s++)
			num[d++] = *s;
		num[d] = '\0';
		if (!d || (*s && *s != ' ') || !dec(num, TP__XML_MAX_RSMI - 1, &i))
			return xerr(x, "info XGMIPeers=\"%.40s\": expected rsmiN names, "
				    "N below %d", v, TP__XML_MAX_RSMI);
		peers |= (uint64_t)1 << i;
	}
	o->has_xgmi = true;
	o->xgmi_peers = peers;
	return 0;
}

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
	return xerr(x, "%s %s: %s", d->tag, d->name, msg);
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
	if (!dec(num, INT64_MAX / 16, &gp))
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
	if (!dec(t, TP__XML_MAX_DIST_VALUE, &v))
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
	const char *lv = attr(x, "length");
	int64_t length;
	if (!lv || !dec(lv, TP__MAX_XML_BYTES, &length))
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
		advance(x, 1);
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
	if ((rc = next_tag(x, &k, name, &e, false)))
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
	const char *nb = attr(x, "nbobjs"), *kd = attr(x, "kind");
	const char *ty = attr(x, "type"), *ix = attr(x, "indexing");
	int64_t n, kind;
	if (!nb || !dec(nb, INT32_MAX, &n) || n < 1)
		return derr(x, d, "without nbobjs=N");
	if (n > TP__XML_MAX_DIST_OBJS)
		return derr(x, d, "nbobjs=\"%lld\": more than %d objects", (long long)n,
			    TP__XML_MAX_DIST_OBJS);
	if (!kd || !dec(kd, INT32_MAX, &kind) || !kind)
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

static int read_distances(struct xp *x, const char *tag, bool empty)
{
	const char *name = attr(x, "name");
	int kind = -1;
	for (int k = 0; k < TP__DIST_N && name; k++)
		if (!strcmp(name, dist_name[k]))
			kind = k;
	if (kind < 0)
		return empty ? 0 : skip_element(x, tag);
	struct tp__dist_matrix *m = &x->dist->m[kind];
	struct tp__dist_matrix tmp = { 0 };
	struct dread d = { tag, dist_name[kind], !strcmp(tag, "distances2hetero"), 0,
			   &tmp, 0, 0 };
	bool skip = false;
	int rc = dist_attrs(x, &d, &skip);
	if (rc || skip)
		return rc ? rc : empty ? 0 : skip_element(x, tag);
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
		if ((rc = next_tag(x, &k, cn, &ce, false)))
			return rc;
		if (k == TK_CLOSE && !strcmp(cn, tag))
			break;
		if (k != TK_OPEN)
			return derr(x, &d, "unterminated");
		if (!strcmp(cn, "info"))
			rc = ce ? 0 : skip_element(x, cn);
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

/* The object tree: objects in document order with their parents. */
static int read_objects(struct xp *x)
{
	int32_t stack[TP__XML_MAX_DEPTH];
	int depth = 0;
	enum tok k;
	char n[MAX_NAME + 1];
	bool empty;
	int rc;
	/* <topology version="2.x"> */
	if ((rc = next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_OPEN || strcmp(n, "topology"))
		return xerr(x, "expected <topology>");
	const char *ver = attr(x, "version");
	if (!ver || (strncmp(ver, "2.", 2) && strncmp(ver, "3.", 2)) || !ver[2] ||
	    strspn(ver + 2, "0123456789") != strlen(ver + 2) || strlen(ver) > 6)
		return xerr(x, "%s%s%s: only hwloc 2.x and 3.x XML is read (convert it with hwloc 2's lstopo --input OLD.xml NEW.xml)",
			    ver ? "version=\"" : "no version", ver ? ver : "", ver ? "\"" : "");
	x->major = ver[0] - '0';
	if (empty)
		return xerr(x, "no object in <topology>");
	/* the root object, then whatever follows it (dropped) */
	if ((rc = next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_OPEN || strcmp(n, "object"))
		return xerr(x, "expected the root <object> first in <topology>");
	for (;;) {
		if (k == TK_OPEN && !strcmp(n, "object") && (depth > 0 || x->nobj == 0)) {
			int32_t parent = depth ? stack[depth - 1] : -1;
			int32_t i = new_object(x, parent, depth);
			if (i < 0)
				return i;
			if (!empty) {
				if (depth == TP__XML_MAX_DEPTH)
					return xerr(x, "objects nested deeper than %d",
						    TP__XML_MAX_DEPTH);
				stack[depth++] = i;
			}
		} else if (k == TK_OPEN && depth == 0 && (!strcmp(n, "distances2") ||
							  !strcmp(n, "distances2hetero"))) {
			if ((rc = read_distances(x, n, empty)))
				return rc;
		} else if (k == TK_OPEN) {
			if (depth > 0 && !strcmp(n, "info") &&
			    (rc = object_info(x, &x->obj[stack[depth - 1]])))
				return rc;
			if (!empty && (rc = skip_element(x, n)))
				return rc;
		} else if (k == TK_CLOSE) {
			if (depth == 0) {
				if (strcmp(n, "topology"))
					return xerr(x, "</%s> closes <topology>", n);
				break;
			}
			if (strcmp(n, "object"))
				return xerr(x, "</%s> closes <object>", n);
			depth--;
		} else {
			return xerr(x, "unterminated <topology>");
		}
		if ((rc = next_tag(x, &k, n, &empty, depth == 0)))
			return rc;
	}
	if ((rc = next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_END)
		return xerr(x, "data after </topology>");
	return 0;
}

/* Normal siblings have disjoint complete cpusets; PU and NUMA indices are
 * unique.  One pass over the objects with a running union per parent. */
static int check_tree(struct xp *x)
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
				rc = xerr(x, "%s P#%lld given twice", xtypes[o->type].name,
					  (long long)o->os_index);
			seen[o->os_index] = 1;
			npu += o->type == T_PU;
		}
		if (o->parent < 0 || xtypes[o->type].cls != XC_NORMAL)
			continue;
		/* compare with the earlier normal siblings */
		for (int32_t s = first[o->parent]; s >= 0 && !rc; s = next[s])
			if (!disjoint(x, &x->obj[s].set[S_CCPU], &o->set[S_CCPU]))
				rc = xerr(x, "%s object: its cpuset overlaps a sibling's (line %d)",
					  xtypes[o->type].name, (int)x->obj[s].line);
		if (last[o->parent] < 0)
			first[o->parent] = i;
		else
			next[last[o->parent]] = i;
		last[o->parent] = i;
	}
	if (!rc && npu == 0)
		rc = xerr(x, "no PU object");
out:
	free(first);
	free(next);
	free(last);
	free(pu_seen);
	free(numa_seen);
	return rc;
}

/* ---- the canonical document ---- */

struct out {
	char *b;
	size_t n, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	if (o->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(o->b + o->n, o->cap - o->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)k < o->cap - o->n) {
			o->n += (size_t)k;
			return;
		}
		size_t nc = o->cap * 2;
		while (nc - o->n <= (size_t)k)
			nc *= 2;
		char *nb = realloc(o->b, nc);
		if (!nb) {
			o->oom = true;
			return;
		}
		o->b = nb;
		o->cap = nc;
	}
}

static void put_text(struct out *o, const char *an, const char *v)
{
	put(o, " %s=\"", an);
	for (; *v; v++) {
		switch (*v) {
		case '&': put(o, "&amp;"); break;
		case '<': put(o, "&lt;"); break;
		case '>': put(o, "&gt;"); break;
		case '"': put(o, "&quot;"); break;
		default: put(o, "%c", *v);
		}
	}
	put(o, "\"");
}

static void put_set(struct out *o, const struct xp *x, const char *an,
		    const struct bset *b)
{
	put(o, " %s=\"%s", an, b->inf ? "0xf...f" : "");
	if (b->inf && b->n)
		put(o, ",");
	for (uint32_t i = b->n; i-- > 0;)
		put(o, "0x%08x%s", x->words[b->off + i], i ? "," : "");
	put(o, "\"");
}

static void put_object(struct out *o, const struct xp *x, const struct xobj *ob)
{
	const struct xtype *t = &xtypes[ob->type];
	put(o, "%*s<object type=\"%s\"", 2 * (ob->depth + 1), "", t->name);
	if (ob->os_index >= 0)
		put(o, " os_index=\"%lld\"", (long long)ob->os_index);
	for (int k = 0; k < NSETS; k++)
		if (ob->set[k].present)
			put_set(o, x, set_attr[k], &ob->set[k]);
	if (ob->name[0])
		put_text(o, "name", ob->name);
	if (ob->subtype[0])
		put_text(o, "subtype", ob->subtype);
	if (t->cache_depth) {
		put(o, " depth=\"%d\" cache_type=\"%d\"", t->cache_depth, t->cache_type);
		if (ob->has_size)
			put(o, " cache_size=\"%lld\"", (long long)ob->cache_size);
		if (ob->has_linesize)
			put(o, " cache_linesize=\"%lld\"", (long long)ob->linesize);
		if (ob->has_assoc)
			put(o, " cache_associativity=\"%lld\"", (long long)ob->assoc);
	}
	if (ob->has_kind)
		put(o, " kind=\"%lld\"", (long long)ob->kind);
	if (ob->has_subkind)
		put(o, " subkind=\"%lld\"", (long long)ob->subkind);
	if (ob->has_dont_merge)
		put(o, " dont_merge=\"%lld\"", (long long)ob->dont_merge);
	if (ob->has_btype)
		put(o, " bridge_type=\"%u-%u\"", ob->bup, ob->bdown);
	if (ob->has_bpci)
		put(o, " bridge_pci=\"%04x:[%02x-%02x]\"", ob->bdom, ob->secbus, ob->subbus);
	if (ob->has_busid)
		put(o, " pci_busid=\"%04x:%02x:%02x.%01x\"", ob->dom, ob->bus, ob->dev, ob->fn);
	if (ob->has_pcitype)
		put(o, " pci_type=\"%04x [%04x:%04x] [%04x:%04x] %02x\"", ob->cls, ob->ven,
		    ob->did, ob->sven, ob->sdid, ob->rev);
	if (ob->has_speed)
		put(o, " pci_link_speed=\"%s\"", ob->speed);
	if (ob->has_osdev)
		put(o, " osdev_type=\"%u\"", ob->osdev_type);
}

static void put_xgmi(struct out *o, const struct xobj *ob)
{
	put(o, "%*s<info name=\"XGMIPeers\" value=\"", 2 * (ob->depth + 2), "");
	const char *sep = "";
	for (int i = 0; i < TP__XML_MAX_RSMI; i++)
		if (ob->xgmi_peers >> i & 1) {
			put(o, "%srsmi%d", sep, i);
			sep = " ";
		}
	put(o, "\"/>\n");
}

static int write_canonical(struct xp *x, char **out, size_t *len)
{
	struct out o = { malloc(65536), 0, 65536, false };
	if (!o.b)
		return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
	put(&o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
		"<topology version=\"2.0\">\n");
	for (int32_t i = 0; i < x->nobj; i++) {
		const struct xobj *ob = &x->obj[i];
		put_object(&o, x, ob);
		bool has_children = i + 1 < x->nobj && x->obj[i + 1].depth > ob->depth;
		if (!has_children && !ob->has_xgmi) {
			put(&o, "/>\n");
		} else {
			put(&o, ">\n");
			if (ob->has_xgmi)
				put_xgmi(&o, ob);
			if (has_children)
				continue;
			put(&o, "%*s</object>\n", 2 * (ob->depth + 1), "");
		}
		/* close the ancestors whose last descendant this is */
		int next_depth = i + 1 < x->nobj ? x->obj[i + 1].depth : 0;
		for (int d = ob->depth - 1; d >= next_depth; d--)
			put(&o, "%*s</object>\n", 2 * (d + 1), "");
	}
	put(&o, "</topology>\n");
	if (o.oom) {
		free(o.b);
		return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->what);
	}
	*out = o.b;
	*len = o.n;
	return 0;
}

int tp__node_xml_check(const char *xml, size_t len, const char *what,
		       char **canon, size_t *canon_len, tp_error *err)
{
	struct tp__xml_dist dist = { 0 };
	int rc = tp__node_xml_check_dist(xml, len, what, canon, canon_len, &dist, err);
	tp__xml_dist_free(&dist);
	return rc;
}

int tp__node_xml_check_dist(const char *xml, size_t len, const char *what,
			    char **canon, size_t *canon_len,
			    struct tp__xml_dist *dist, tp_error *err)
{
	*canon = NULL;
	*canon_len = 0;
	if (len > TP__MAX_XML_BYTES)
		return tp__too_large(what, len, TP__MAX_XML_BYTES, "an hwloc XML file", err);
	int rc = tp__nul_check(xml, len, what, err);
	if (rc)
		return rc;
	struct xp *x = calloc(1, sizeof *x);
	if (!x)
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	x->s = x->p = xml;
	x->end = xml + len;
	x->what = what;
	x->err = err;
	x->line = 1;
	x->dist = dist;
	if (len >= 3 && !memcmp(xml, "\xef\xbb\xbf", 3))
		x->p += 3;     /* UTF-8 byte order mark */
	rc = read_objects(x);
	if (!rc)
		rc = check_tree(x);
	if (!rc)
		rc = write_canonical(x, canon, canon_len);
	free(x->obj);
	free(x->words);
	free(x->gpt);
	free(x);
	return rc;
}
