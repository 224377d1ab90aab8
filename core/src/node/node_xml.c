/* topoplace — hwloc XML is checked and rewritten before hwloc sees it: here
 * the document is read in order and the canonical one written from the
 * checked values; the scanner is node_xml_scan.c, the values and objects
 * node_xml_objects.c, the GPU-fabric matrices node_xml_dist.c.
 *
 * hwloc 2.9's XML import trusts its input: a Package without
 * complete_cpuset crashes it (SIGSEGV), nodeset=",x00000001" aborts it on an
 * assertion, a NUMANode without os_index costs 0.5-1 GB and seconds.  A
 * node model reaches slurmstepd, where a crash or a stall takes every job
 * step with it, so no byte of a user's or admin's XML goes to hwloc as is.
 *
 * The rule: the text is parsed by the bounded scanner (no recursion,
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

#include "node/node_internal.h"
#include "util/util_internal.h"
#include "node/node_xml.h"

/* ---- the document ---- */

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
	if ((rc = tp__xml_next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_OPEN || strcmp(n, "topology"))
		return tp__xml_err(x, "expected <topology>");
	const char *ver = tp__xml_attr(x, "version");
	if (!ver || (strncmp(ver, "2.", 2) && strncmp(ver, "3.", 2)) || !ver[2] ||
	    strspn(ver + 2, "0123456789") != strlen(ver + 2) || strlen(ver) > 6)
		return tp__xml_err(x, "%s%s%s: only hwloc 2.x and 3.x XML is read (convert it with hwloc 2's lstopo --input OLD.xml NEW.xml)",
				   ver ? "version=\"" : "no version", ver ? ver : "", ver ? "\"" : "");
	x->major = ver[0] - '0';
	if (empty)
		return tp__xml_err(x, "no object in <topology>");
	/* the root object, then whatever follows it (dropped) */
	if ((rc = tp__xml_next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_OPEN || strcmp(n, "object"))
		return tp__xml_err(x, "expected the root <object> first in <topology>");
	for (;;) {
		if (k == TK_OPEN && !strcmp(n, "object") && (depth > 0 || x->nobj == 0)) {
			int32_t parent = depth ? stack[depth - 1] : -1;
			int32_t i = tp__xml_new_object(x, parent, depth);
			if (i < 0)
				return i;
			if (!empty) {
				if (depth == TP__XML_MAX_DEPTH)
					return tp__xml_err(x, "objects nested deeper than %d",
							   TP__XML_MAX_DEPTH);
				stack[depth++] = i;
			}
		} else if (k == TK_OPEN && depth == 0 && (!strcmp(n, "distances2") ||
							  !strcmp(n, "distances2hetero"))) {
			if ((rc = tp__xml_read_distances(x, n, empty)))
				return rc;
		} else if (k == TK_OPEN) {
			if (depth > 0 && !strcmp(n, "info") &&
			    (rc = tp__xml_object_info(x, &x->obj[stack[depth - 1]])))
				return rc;
			if (!empty && (rc = tp__xml_skip_element(x, n)))
				return rc;
		} else if (k == TK_CLOSE) {
			if (depth == 0) {
				if (strcmp(n, "topology"))
					return tp__xml_err(x, "</%s> closes <topology>", n);
				break;
			}
			if (strcmp(n, "object"))
				return tp__xml_err(x, "</%s> closes <object>", n);
			depth--;
		} else {
			return tp__xml_err(x, "unterminated <topology>");
		}
		if ((rc = tp__xml_next_tag(x, &k, n, &empty, depth == 0)))
			return rc;
	}
	if ((rc = tp__xml_next_tag(x, &k, n, &empty, false)))
		return rc;
	if (k != TK_END)
		return tp__xml_err(x, "data after </topology>");
	return 0;
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
		rc = tp__xml_check_tree(x);
	if (!rc)
		rc = write_canonical(x, canon, canon_len);
	free(x->obj);
	free(x->words);
	free(x->gpt);
	free(x);
	return rc;
}
