/* topoplace command — tori and meshes in SVG.
 *
 * A panel is a grid of cells: x to the right, y down, one small multiple
 * per z; dimensions beyond the third are projected (each cell aggregates
 * them).  A 1-D network is folded into rows of at most 64 routers.  When the
 * box holds more than MAX_CELLS routers, each axis is binned (a cell then
 * stands for bx x by x bz routers), the largest axis first, until it fits:
 * a picture never has more than MAX_CELLS cells whatever the machine.
 *
 * A cell shows the mean colour of its tasks.  Links between neighbouring
 * cells are bars in the gap between them, coloured by the load of the
 * cable's heavier direction (svg_cable_load); a wrap-around
 * link is a stub at the edge of its row or column; links that join cells
 * of different slices (z and higher) or stay inside an aggregated cell
 * show as a dot in the cell, coloured by the largest such load.  Only
 * loaded links are drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MAX_CELLS 4096
#define FOLD 64            /* cells per row of a folded 1-D network */
#define TARGET_W 560.0     /* px a panel aims at */
#define LABEL_H 13.0       /* slice label above each small multiple */

static const char axis_letter[TP_MAX_DIMS] = { 'x', 'y', 'z', 'u', 'v', 'w' };

struct torus_layout {
	int nd;
	int dims[TP_MAX_DIMS];
	int bin[3];            /* routers per cell along x, y, z */
	int cols, rows, slices;
	int fold;              /* 1-D: cells per row, else 0 */
	int slice_cols;        /* small multiples per row */
	double pitch, cell;    /* px between cell origins, cell side */
	double label;          /* px of the slice label (0: one slice) */
	double slice_w, slice_h;
};

/* Cells along axis k of a box with bins b. */
static int cells_along(int extent, int b)
{
	return (extent + b - 1) / b;
}

static void choose_bins(struct torus_layout *L)
{
	int ext[3] = { L->dims[0], L->nd > 1 ? L->dims[1] : 1,
		       L->nd > 2 ? L->dims[2] : 1 };
	for (int k = 0; k < 3; k++)
		L->bin[k] = 1;
	for (;;) {
		int64_t c[3], tot = 1;
		for (int k = 0; k < 3; k++) {
			c[k] = cells_along(ext[k], L->bin[k]);
			tot *= c[k];
		}
		if (tot <= MAX_CELLS)
			break;
		int big = 0;   /* the axis with the most cells (x first on ties) */
		for (int k = 1; k < 3; k++)
			if (c[k] > c[big])
				big = k;
		L->bin[big] = L->bin[big] * 2;
	}
	if (L->nd == 1) {
		int n = cells_along(ext[0], L->bin[0]);
		L->fold = n > FOLD ? FOLD : n;
		L->cols = L->fold;
		L->rows = cells_along(n, L->fold);
		L->slices = 1;
	} else {
		L->cols = cells_along(ext[0], L->bin[0]);
		L->rows = cells_along(ext[1], L->bin[1]);
		L->slices = cells_along(ext[2], L->bin[2]);
	}
}

/* Small multiples per row: the arrangement closest to a square. */
static void choose_grid(struct torus_layout *L)
{
	double best = HUGE_VAL;
	L->slice_cols = 1;
	for (int sc = 1; sc <= L->slices; sc++) {
		int sr = (L->slices + sc - 1) / sc;
		double w = sc * (L->cols + 1.0), h = sr * (L->rows + 2.0);
		double r = fabs(log(w / h));
		if (r < best - 1e-9) {
			best = r;
			L->slice_cols = sc;
		}
	}
	int sr = (L->slices + L->slice_cols - 1) / L->slice_cols;
	double units = L->slice_cols * (L->cols + 1.0);
	double pitch = TARGET_W / units;
	/* tall arrangements: keep the height near the width too */
	double hu = sr * (L->rows + 1.0);
	if (TARGET_W / hu < pitch)
		pitch = TARGET_W / hu;
	L->pitch = pitch < 4 ? 4 : pitch > 36 ? 36 : pitch;
	L->cell = L->pitch * 0.62;
	L->label = L->slices > 1 ? LABEL_H : 0;
	L->slice_w = (L->cols + 1.0) * L->pitch;
	L->slice_h = (L->rows + 1.0) * L->pitch + L->label;
}

/* Only links to other slices (z and higher) or inside a binned cell make
 * dots. */
static bool has_dots(const struct torus_layout *L)
{
	return L->nd > 2 || L->bin[0] > 1 || L->bin[1] > 1;
}

/* "x: 2 routers per cell" etc. into the note. */
static void describe(const struct torus_layout *L, char *note, size_t len)
{
	size_t o = 0;
	if (L->nd == 1)
		o += (size_t)snprintf(note + o, len - o, "x runs along rows of %d, "
				      "row after row", L->fold);
	else
		o += (size_t)snprintf(note + o, len - o, "x to the right, y down%s",
				      L->nd > 2 ? ", one square per z" : "");
	if (L->nd == 4 && o < len)
		o += (size_t)snprintf(note + o, len - o, ", u projected");
	else if (L->nd > 4 && o < len)
		o += (size_t)snprintf(note + o, len - o, ", u-%c projected",
				      axis_letter[L->nd - 1]);
	if ((L->bin[0] > 1 || L->bin[1] > 1 || L->bin[2] > 1) && o < len) {
		o += (size_t)snprintf(note + o, len - o, "; a cell is %d", L->bin[0]);
		for (int k = 1; k < 3 && k < L->nd && o < len; k++)
			o += (size_t)snprintf(note + o, len - o, "x%d", L->bin[k]);
		if (o < len)
			o += (size_t)snprintf(note + o, len - o, " routers");
	}
	if (o < len)
		snprintf(note + o, len - o, "; bars: loaded links%s",
			 has_dots(L) ? ", dots: loaded links to other squares or "
				       "inside a cell" : "");
}

static int torus_layout(const struct svg_net *net, void **out, double *w,
			double *h, char *note, size_t note_len)
{
	struct torus_layout *L = calloc(1, sizeof *L);
	if (!L)
		return -1;
	L->nd = tp_machine_ndims(net->m);
	for (int d = 0; d < L->nd; d++)
		L->dims[d] = tp_machine_dim(net->m, d);
	choose_bins(L);
	choose_grid(L);
	int sr = (L->slices + L->slice_cols - 1) / L->slice_cols;
	*w = L->slice_cols * L->slice_w;
	*h = sr * L->slice_h;
	describe(L, note, note_len);
	*out = L;
	return 0;
}

/* ---- cells ---- */

struct tcell {
	struct svg_acc acc;
	double right, down;        /* load to the next cell in x, in y */
	double wrap_right, wrap_down;   /* wrap-around (or fold) at the edge */
	double other;              /* links to other slices or inside */
	int32_t node;              /* the one node in the cell, or -1 */
};

static int cell_of(const struct torus_layout *L, const int *c, int *col,
		   int *row, int *slice)
{
	if (L->nd == 1) {
		int x = c[0] / L->bin[0];
		*col = x % L->fold;
		*row = x / L->fold;
		*slice = 0;
	} else {
		*col = c[0] / L->bin[0];
		*row = c[1] / L->bin[1];
		*slice = L->nd > 2 ? c[2] / L->bin[2] : 0;
	}
	return (*slice * L->rows + *row) * L->cols + *col;
}

static double maxd(double a, double b)
{
	return a > b ? a : b;
}

/* One loaded cable into the cells it touches: l is its even id (from
 * router a up to its +1 neighbour b), load its heavier direction's. */
static void add_link(const struct torus_layout *L, struct tcell *cells,
		     const tp_machine *m, int64_t l, double load)
{
	int a[TP_MAX_DIMS], b[TP_MAX_DIMS];
	if (tp_machine_link_ends(m, l, a, b) != 0)
		return;
	int d = (int)((l >> 1) % L->nd);
	int ca, ra, sa, cb, rb, sb;
	int ia = cell_of(L, a, &ca, &ra, &sa), ib = cell_of(L, b, &cb, &rb, &sb);
	struct tcell *x = &cells[ia];
	if (ia == ib) {
		x->other = maxd(x->other, load);
	} else if (L->nd == 1 || d == 0) {
		if (sa == sb && ra == rb && cb == ca + 1)
			x->right = maxd(x->right, load);
		else if (L->nd == 1 || (sa == sb && ra == rb))
			x->wrap_right = maxd(x->wrap_right, load);
		else
			x->other = maxd(x->other, load);
	} else if (d == 1 && sa == sb && ca == cb) {
		if (rb == ra + 1)
			x->down = maxd(x->down, load);
		else
			x->wrap_down = maxd(x->wrap_down, load);
	} else {
		x->other = maxd(x->other, load);
		cells[ib].other = maxd(cells[ib].other, load);
	}
}

static struct tcell *fill_cells(const struct torus_layout *L,
				const struct svg_net *net,
				const struct svg_panel *p)
{
	size_t nc = (size_t)L->cols * (size_t)L->rows * (size_t)L->slices;
	struct tcell *cells = calloc(nc, sizeof *cells);
	if (!cells)
		return NULL;
	for (size_t i = 0; i < nc; i++)
		cells[i].node = -1;
	/* every router's nodes (routers without nodes count as cells too) */
	int32_t nm = tp_machine_node_count(net->m);
	for (int32_t v = 0; v < nm; v++) {
		int c, r, s;
		struct tcell *x = &cells[cell_of(L, tp_machine_node_coords(net->m, v),
						 &c, &r, &s)];
		x->node = x->acc.nodes == 0 ? v : -1;
		svg_acc_add(&x->acc, net, p, v);
	}
	if (p->loads) {
		/* a cable once: ids 2c (up) and 2c + 1 (down) */
		int64_t nl = tp_machine_link_count(net->m);
		for (int64_t l = 0; l + 1 < nl; l += 2) {
			double ld = svg_cable_load(p, l);
			if (ld > 0)
				add_link(L, cells, net->m, l, ld);
		}
	}
	return cells;
}

/* A loaded link's bar: filled by its load, no stroke. */
static struct svg_paint link_paint(const struct svg_net *net, double load)
{
	return (struct svg_paint){ svg_load_colour(net, load), SVG_NONE, 0 };
}

/* Where a cell is drawn: its top left corner, and whether it ends its row
 * or its column (where the wrap-around links are drawn). */
struct cell_at {
	double x, y;
	bool last_col, last_row;
};

static void draw_cell(FILE *f, const struct torus_layout *L,
		      const struct svg_net *net, const struct svg_panel *p,
		      const struct tcell *x, const struct cell_at *at)
{
	double cx = at->x, cy = at->y;
	bool last_col = at->last_col, last_row = at->last_row;
	double P = L->pitch, C = L->cell, gap = P - C, bar = P * 0.3;
	char tip[192];
	const char *t = NULL;
	if (x->node >= 0) {
		svg_node_tip(tip, sizeof tip, net, p, x->node);
		t = tip;
	} else if (x->acc.alloc > 0) {
		snprintf(tip, sizeof tip, "%ld of %ld nodes in the job, %lld tasks",
			 (long)x->acc.alloc, (long)x->acc.nodes,
			 (long long)x->acc.tasks);
		t = tip;
	}
	uint32_t fill = x->acc.nodes ? svg_acc_fill(&x->acc) : SVG_BG;
	uint32_t edge = x->acc.alloc ? SVG_LINE : SVG_NONE;
	svg_rect(f, cx, cy, C, C, (struct svg_paint){ fill, edge, 0.5 }, t);
	if (x->right > 0)
		svg_rect(f, cx + C, cy + (C - bar) / 2, gap, bar,
			 link_paint(net, x->right), NULL);
	if (x->down > 0)
		svg_rect(f, cx + (C - bar) / 2, cy + C, bar, gap,
			 link_paint(net, x->down), NULL);
	if (x->wrap_right > 0 && last_col)
		svg_rect(f, cx + C, cy + (C - bar) / 2, gap * 0.6, bar,
			 link_paint(net, x->wrap_right), NULL);
	if (x->wrap_down > 0 && last_row)
		svg_rect(f, cx + (C - bar) / 2, cy + C, bar, gap * 0.6,
			 link_paint(net, x->wrap_down), NULL);
	if (x->other > 0)
		svg_circle(f, cx + C / 2, cy + C / 2, C * 0.22,
			   (struct svg_paint){ svg_load_colour(net, x->other),
					       0xffffffu, 0.6 });
}

/* "z=3" or "z=2-3" above slice s. */
static void slice_label(FILE *f, const struct torus_layout *L, int s,
			double x, double y)
{
	int lo = s * L->bin[2], hi = lo + L->bin[2] - 1;
	if (hi >= L->dims[2])
		hi = L->dims[2] - 1;
	if (lo == hi)
		svg_text(f, x, y,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "z=%d", lo);
	else
		svg_text(f, x, y,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "z=%d-%d", lo, hi);
}

static void torus_draw(FILE *f, const struct svg_net *net, const void *lp,
		       const struct svg_panel *p)
{
	const struct torus_layout *L = lp;
	struct tcell *cells = fill_cells(L, net, p);
	if (!cells) {
		svg_text(f, 0, 12,
			 (struct svg_font){ 11, SVG_START, false, SVG_INK },
			 "(out of memory)");
		return;
	}
	for (int s = 0; s < L->slices; s++) {
		double sx = (s % L->slice_cols) * L->slice_w;
		double sy = (s / L->slice_cols) * L->slice_h;
		if (L->label > 0)
			slice_label(f, L, s, sx + L->pitch * 0.2, sy + 10);
		for (int r = 0; r < L->rows; r++)
			for (int c = 0; c < L->cols; c++) {
				const struct tcell *x =
					&cells[((size_t)s * L->rows + r) * L->cols + c];
				if (x->acc.nodes == 0 && x->right == 0 && x->down == 0)
					continue;
				struct cell_at at = {
					sx + L->pitch * 0.2 + c * L->pitch,
					sy + L->label + L->pitch * 0.2 + r * L->pitch,
					c == L->cols - 1 || L->nd == 1, r == L->rows - 1,
				};
				draw_cell(f, L, net, p, x, &at);
			}
	}
	free(cells);
}

static void torus_legend(FILE *f, const void *lp, double x, double y)
{
	const struct torus_layout *L = lp;
	svg_text(f, x, y - 4,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK }, "links");
	double P = 14;
	svg_rect(f, x, y, P * 0.62, P * 0.62,
		 (struct svg_paint){ SVG_IDLE, SVG_LINE, 0.5 }, NULL);
	svg_rect(f, x + P * 0.62, y + P * 0.16, P * 0.38, P * 0.3,
		 (struct svg_paint){ svg_heat(0.7), SVG_NONE, 0 }, NULL);
	svg_rect(f, x + P, y, P * 0.62, P * 0.62,
		 (struct svg_paint){ SVG_IDLE, SVG_LINE, 0.5 }, NULL);
	svg_text(f, x + 30, y + 8,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "a loaded link between neighbours");
	if (!has_dots(L))
		return;
	svg_rect(f, x, y + 16, P * 0.62, P * 0.62,
		 (struct svg_paint){ SVG_IDLE, SVG_LINE, 0.5 }, NULL);
	svg_circle(f, x + P * 0.31, y + 16 + P * 0.31, P * 0.14,
		   (struct svg_paint){ svg_heat(0.7), 0xffffffu, 0.6 });
	svg_text(f, x + 30, y + 24,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK }, "%s",
		 L->nd > 2 ? "loaded links to other z (or inside a cell)"
			   : "loaded links inside a cell");
}

static void torus_destroy(void *lp)
{
	free(lp);
}

const struct svg_kind svg_torus_kind = {
	.layout = torus_layout,
	.draw = torus_draw,
	.legend = torus_legend,
	.destroy = torus_destroy,
};
