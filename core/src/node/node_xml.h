/* topoplace — what the files of the hwloc XML checker share, private to
 * node/: the scanner's state, the objects as read and hwloc's object types
 * (node_xml.c: the document and its canonical rewrite; node_xml_scan.c:
 * the scanner; node_xml_objects.c: values and objects; node_xml_dist.c:
 * the distance matrices).  The two tables are small constants: each file
 * that includes this has its own copy. */
#ifndef TOPOPLACE_NODE_XML_H
#define TOPOPLACE_NODE_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/node_internal.h"

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

enum tok { TK_END, TK_OPEN, TK_CLOSE };

/* node_xml_scan.c: the scanner.  "FILE: hwloc XML line N: ..." into
 * x->err, TP_EINVAL. */
__attribute__((format(printf, 2, 3)))
int tp__xml_err(struct xp *x, const char *fmt, ...);
/* Past n characters, counting lines. */
void tp__xml_advance(struct xp *x, size_t n);
/* The value of attribute name of the element just read, or NULL. */
const char *tp__xml_attr(const struct xp *x, const char *name);
int tp__xml_next_tag(struct xp *x, enum tok *kind, char *name, bool *empty,
		     bool skip_text);
int tp__xml_skip_element(struct xp *x, const char *name);

/* node_xml_objects.c: values and objects. */
bool tp__xml_dec(const char *s, int64_t max, int64_t *out);
/* The <object> just read, checked, as x->obj[i]: i, or an error. */
int tp__xml_new_object(struct xp *x, int32_t parent, int depth);
int tp__xml_object_info(struct xp *x, struct xobj *o);
int tp__xml_check_tree(struct xp *x);

/* node_xml_dist.c: a <distances2> or <distances2hetero> element (its
 * start tag just read), kept in x->dist when it is a GPU-fabric matrix. */
int tp__xml_read_distances(struct xp *x, const char *tag, bool empty);

#endif
