/* topoplace pictures — SVG written as text by hand (no library, the same
 * bytes for the same inputs), for both front ends: the topoplace command
 * (map --format svg, node-info --format svg) and the SPANK plugin
 * (--topo-report=svg).  Output formatting only: what they show about the
 * model (link loads, link ends, the tree's and the node's shapes) comes
 * from the core's public API.
 *
 *   svg.c            the writer: elements, escaping, colour scales
 *   svg_map.c        map --format svg: Slurm's block order and topoplace's
 *                    mapping side by side on the network, tasks coloured by
 *                    their place in the pattern, links by their load
 *   svg_torus.c      tori and meshes: x-y slices, one per z, higher
 *                    dimensions projected, large boxes binned
 *   svg_tree.c       switch trees: nested switch boxes, uplink loads
 *   svg_dragonfly.c  dragonflies: groups on a circle, global links as chords
 *   svg_node.c       node-info --format svg and map --node: sockets, cores,
 *                    PCIe tree, GPUs, NVLinks, network cards, and the tasks
 *                    placed there
 *
 * Pictures stay bounded: above a few thousand cells every kind aggregates
 * (bins of routers, collapsed subtrees, groups of groups), so a picture of
 * a machine of any size has at most some ten thousand elements.
 */
#ifndef TOPOPLACE_SVG_H
#define TOPOPLACE_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <topoplace/topoplace.h>

/* ---- svg.c: the writer ---- */

/* Colours are 0xRRGGBB. */
#define SVG_NONE 0xffffffffu      /* no fill / no stroke */
#define SVG_BG 0xffffffu          /* picture background */
#define SVG_EMPTY 0xe4e4e4u       /* parts outside the allocation */
#define SVG_IDLE 0xfafafau        /* allocated, no task */
#define SVG_LINE 0x9a9a9au        /* unloaded structure */
#define SVG_INK 0x222222u         /* text */

/* Start a document of w x h pixels (white background), title in <title>. */
void svg_begin(FILE *f, double w, double h, const char *title);
void svg_end(FILE *f);
/* <g id=... transform=translate(x,y)> ... </g>; id may be NULL. */
void svg_group(FILE *f, const char *id, double x, double y);
void svg_group_end(FILE *f);

/* How a shape is painted: its fill and its stroke (SVG_NONE: none), the
 * stroke stroke_w wide. */
struct svg_paint {
	uint32_t fill, stroke;
	double stroke_w;
};

/* How a line or a curve is drawn. */
struct svg_pen {
	uint32_t colour;
	double width;
};

struct svg_pt {
	double x, y;
};

enum svg_anchor { SVG_START, SVG_MIDDLE, SVG_END };

/* How text is set: size in pixels, anchored at its start, middle or end,
 * bold or not, in colour. */
struct svg_font {
	double size;
	enum svg_anchor anchor;
	bool bold;
	uint32_t colour;
};

/* Shapes.  tip: a tooltip (<title>) or NULL. */
void svg_rect(FILE *f, double x, double y, double w, double h,
	      struct svg_paint paint, const char *tip);
void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      struct svg_pen pen, const char *tip);
void svg_circle(FILE *f, double cx, double cy, double r,
		struct svg_paint paint);
/* A quadratic curve from a to b bent towards c. */
void svg_curve(FILE *f, struct svg_pt a, struct svg_pt c, struct svg_pt b,
	       struct svg_pen pen, const char *tip);

/* Text at (x, y) (baseline), escaped. */
void svg_text(FILE *f, double x, double y, struct svg_font font,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Text escaped for XML: & < > " as entities (attributes are always in
 * double quotes), control bytes and bytes that
 * are not UTF-8 as '?'. */
void svg_escape(FILE *f, const char *s);

/* Colour scales. */
/* Link load: frac in (0, 1] from pale yellow to dark red; <= 0 gives
 * SVG_LINE (unloaded). */
uint32_t svg_heat(double frac);
/* t in [0, 1] along a perceptual ramp (dark violet, blue, green, yellow). */
uint32_t svg_ramp(double t);
/* A categorical colour (12, then repeating). */
uint32_t svg_category(int i);
/* Ink that reads on the background colour bg: dark or white. */
uint32_t svg_ink_on(uint32_t bg);
/* "12.5 KiB" (or "0.25" for a unitless load when bytes is false). */
void svg_amount(char *buf, size_t len, double v, bool bytes);
/* A heat scale legend: a bar of w x 10 px at (x, y) with its ends
 * labelled, caption above. */
void svg_heat_legend(FILE *f, double x, double y, double w, double max,
		     bool bytes, const char *caption);

/* ---- svg_map.c: a job's mapping ---- */

/* The picture of a finished job (tp_job_run; with TP_JOB_METRICS the
 * panels show the metrics too), a whole document on f.  pattern describes
 * the pattern in the subtitle ("stencil 8x8:5pt"), NULL: none.  0, or -1
 * when out of memory (f then holds a partial document). */
int svg_map_picture(FILE *f, const tp_job *job, const char *pattern);

/* What the kinds share: the machine, the allocation, the load scale. */
struct svg_net {
	const tp_machine *m;
	const tp_alloc *a;
	int32_t *alloc_of;       /* machine node -> allocation index, -1 */
	bool has_loads;          /* a pattern: links carry loads */
	bool bytes;              /* loads in bytes (else bytes / bandwidth) */
	double max_load;         /* over both panels: one scale */
};

/* One side of the picture: a mapping, its link loads, its tasks' colours
 * per allocation node (sums of task colours, and counts). */
struct svg_panel {
	const char *id;          /* "block", "topoplace" */
	const int32_t *map;
	double *loads;           /* per directed link id; NULL without a
				    pattern */
	float *rgb;              /* 3 per allocation node: sums of 0..1 */
	int32_t *ntasks;         /* per allocation node */
};

/* Tasks and colour of a cell that aggregates machine nodes. */
struct svg_acc {
	double r, g, b;
	int64_t tasks;
	int32_t alloc;           /* allocated nodes in the cell */
	int32_t nodes;
};

void svg_acc_add(struct svg_acc *c, const struct svg_net *net,
		 const struct svg_panel *p, int32_t node);
/* The cell's fill: SVG_EMPTY outside the allocation, SVG_IDLE allocated
 * without tasks, else the mean colour of its tasks. */
uint32_t svg_acc_fill(const struct svg_acc *c);
/* The colour of a link load on the shared scale. */
uint32_t svg_load_colour(const struct svg_net *net, double load);
/* Links are full duplex, one id per direction (network.h); a picture draws
 * a cable once, with the load of its heavier direction: that is what limits
 * it, and the scale's top (the largest directed load) stays the congestion
 * metric.  up is the id of one direction, up + 1 the other's (trees: 2s and
 * 2s + 1; tori: cable * 2 + dir); 0 without loads or for up < 0. */
double svg_cable_load(const struct svg_panel *p, int64_t up);
/* "nid00012: tasks 4 (of 4 slots)"-style tooltip of machine node `node`. */
void svg_node_tip(char *buf, size_t len, const struct svg_net *net,
		  const struct svg_panel *p, int32_t node);

/* One kind of network: lay a panel out once (its size in px), then draw
 * each panel at the origin (the caller translates). */
struct svg_kind {
	int (*layout)(const struct svg_net *net, void **layout, double *w,
		      double *h, char *note, size_t note_len);
	void (*draw)(FILE *f, const struct svg_net *net, const void *layout,
		     const struct svg_panel *p);
	/* legend lines particular to the kind (may be NULL) */
	void (*legend)(FILE *f, const void *layout, double x, double y);
	void (*destroy)(void *layout);
};

extern const struct svg_kind svg_torus_kind, svg_tree_kind,
	svg_dragonfly_kind;

/* ---- svg_node.c ---- */

/* The tasks placed on one node (NULL: the bare node). */
struct svg_node_tasks {
	const char *node;            /* its name */
	int32_t ntasks;
	const int32_t *tasks;        /* global task ids */
	const char *const *cpus;     /* per task CPU list, or NULL */
	const int *gpu_start;        /* ntasks + 1 offsets into gpus, or NULL */
	const int *gpus;
};

/* The node's picture, a whole document, on f. */
void svg_node_picture(FILE *f, const tp_node *n,
		      const struct svg_node_tasks *t, const char *title);

#endif
