/* topoplace command — dragonflies in SVG.
 *
 * The groups sit on a circle, each a box of its routers (columns) and the
 * nodes on them (rows); the global links between two groups are one chord,
 * coloured by the busiest of them; a group's border is coloured by its
 * busiest local link.  Bounds: more than MAX_GROUPS groups are binned
 * (a box then stands for several consecutive groups, and links between them
 * count as local), more than MAX_ROUTERS routers per group too, and more
 * than MAX_SLOTS nodes per router are drawn as one cell per router; so at
 * most MAX_GROUPS^2 / 2 chords whatever the machine.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MAX_GROUPS 64
#define MAX_ROUTERS 32
#define MAX_SLOTS 8
#define HEAD 12.0
#define MAX_RADIUS 300.0
#define PI 3.14159265358979323846

struct dfly_layout {
	int groups, routers, per_router;    /* the machine */
	int gbin, rbin;                     /* groups, routers per box / cell */
	int ng, na, np;                     /* boxes, columns, rows */
	double pitch, bw, bh, radius, centre;
	int32_t *slot;                      /* machine node -> row in its box */
};

static void dfly_destroy(void *lp)
{
	struct dfly_layout *L = lp;
	if (L)
		free(L->slot);
	free(L);
}

static int ceil_div(int a, int b)
{
	return (a + b - 1) / b;
}

/* Each node's row: its rank among the nodes of its router (node order). */
static int node_slots(struct dfly_layout *L, const tp_machine *m)
{
	int64_t nr = tp_machine_router_count(m);
	int32_t nm = tp_machine_node_count(m);
	int32_t *seen = calloc((size_t)nr + 1, sizeof *seen);
	L->slot = malloc(((size_t)nm + 1) * sizeof *L->slot);
	if (!seen || !L->slot) {
		free(seen);
		return -1;
	}
	for (int32_t v = 0; v < nm; v++) {
		int64_t r = tp_machine_router_of(m, v);
		int32_t k = seen[r]++;
		L->slot[v] = L->np == 1 ? 0 : k;
	}
	free(seen);
	return 0;
}

static int dfly_layout(const struct svg_net *net, void **out, double *w,
		       double *h, char *note, size_t note_len)
{
	const tp_machine *m = net->m;
	struct dfly_layout *L = calloc(1, sizeof *L);
	if (!L)
		return -1;
	L->routers = tp_machine_dim(m, 0);
	L->groups = tp_machine_dim(m, 1);
	L->per_router = tp_machine_nodes_per_router(m);
	L->gbin = ceil_div(L->groups, MAX_GROUPS);
	L->rbin = ceil_div(L->routers, MAX_ROUTERS);
	L->ng = ceil_div(L->groups, L->gbin);
	L->na = ceil_div(L->routers, L->rbin);
	L->np = L->per_router <= MAX_SLOTS && L->gbin == 1 && L->rbin == 1
		? L->per_router : 1;
	if (node_slots(L, m) < 0) {
		dfly_destroy(L);
		return -1;
	}
	/* boxes round a circle whose circumference holds them all */
	double pitch = 12;
	for (;;) {
		L->pitch = pitch;
		L->bw = L->na * pitch + 4;
		L->bh = HEAD + L->np * pitch + 4;
		double side = L->bw > L->bh ? L->bw : L->bh;
		L->radius = L->ng * (side + 14) / (2 * PI);
		if (L->radius < 70 + side)
			L->radius = 70 + side;
		if (L->radius <= MAX_RADIUS || pitch <= 3)
			break;
		pitch -= 1;
	}
	double side = L->bw > L->bh ? L->bw : L->bh;
	L->centre = L->radius + side * 0.75 + 40;
	*w = *h = 2 * L->centre;
	snprintf(note, note_len, "groups on a circle (routers across, their nodes "
		 "down); a chord is the busiest global link between two groups, a "
		 "border the busiest local link%s",
		 L->gbin > 1 ? "; consecutive groups binned" : "");
	*out = L;
	return 0;
}

static void box_centre(const struct dfly_layout *L, int i, double r,
		       double *x, double *y)
{
	double th = -PI / 2 + 2 * PI * i / L->ng;
	*x = L->centre + r * cos(th);
	*y = L->centre + r * sin(th);
}

struct dloads {
	double *chord;    /* ng x ng, upper triangle */
	double *local;    /* per box */
};

static int fill_loads(const struct dfly_layout *L, const struct svg_net *net,
		      const struct svg_panel *p, struct dloads *d)
{
	d->chord = calloc((size_t)L->ng * (size_t)L->ng + 1, sizeof *d->chord);
	d->local = calloc((size_t)L->ng + 1, sizeof *d->local);
	if (!d->chord || !d->local)
		return -1;
	if (!p->loads)
		return 0;
	/* every directed id: a link's two directions land on the same chord
	 * or border, which keeps the heavier (svg_cable_load's rule) */
	int64_t nl = tp_machine_link_count(net->m);
	for (int64_t l = 0; l < nl; l++) {
		double ld = p->loads[l];
		int a[2], b[2];
		if (!(ld > 0) || tp_machine_link_ends(net->m, l, a, b) != 0)
			continue;
		int gi = a[1] / L->gbin, hi = b[1] / L->gbin;
		if (gi == hi) {
			d->local[gi] = ld > d->local[gi] ? ld : d->local[gi];
			continue;
		}
		int lo = gi < hi ? gi : hi, up = gi < hi ? hi : gi;
		double *c = &d->chord[(size_t)lo * (size_t)L->ng + (size_t)up];
		*c = ld > *c ? ld : *c;
	}
	return 0;
}

/* A chord bends towards the centre, halfway from the chord's middle: near
 * groups stay near the rim, far ones cross the middle. */
static void chord(FILE *f, const struct dfly_layout *L, struct svg_pt a,
		  struct svg_pt b, struct svg_pen pen, const char *tip)
{
	double mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
	struct svg_pt bend = { L->centre + (mx - L->centre) * 0.5,
			       L->centre + (my - L->centre) * 0.5 };
	svg_curve(f, a, bend, b, pen, tip);
}

/* Chords, lightest first so that the heavy ones lie on top. */
static void draw_chords(FILE *f, const struct dfly_layout *L,
			const struct svg_net *net, const struct dloads *d)
{
	double side = L->bw > L->bh ? L->bw : L->bh;
	double r = L->radius - side * 0.5 - 3;
	size_t n = 0, cap = (size_t)L->ng * (size_t)(L->ng - 1) / 2 + 1;
	int32_t *idx = malloc(cap * sizeof *idx);
	if (!idx)
		return;
	for (int i = 0; i < L->ng; i++)
		for (int j = i + 1; j < L->ng; j++) {
			struct svg_pt a, b;
			box_centre(L, i, r, &a.x, &a.y);
			box_centre(L, j, r, &b.x, &b.y);
			if (L->ng <= 16)   /* the all-to-all structure, faint */
				chord(f, L, a, b, (struct svg_pen){ 0xebebebu,
								    0.6 },
				      NULL);
			if (d->chord[(size_t)i * L->ng + (size_t)j] > 0)
				idx[n++] = i * L->ng + j;
		}
	/* insertion sort by load, then index: n is at most 2016 */
	for (size_t i = 1; i < n; i++) {
		int32_t v = idx[i];
		size_t j = i;
		while (j > 0 && d->chord[idx[j - 1]] > d->chord[v]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
	for (size_t k = 0; k < n; k++) {
		int i = idx[k] / L->ng, j = idx[k] % L->ng;
		double ld = d->chord[idx[k]];
		struct svg_pt a, b;
		box_centre(L, i, r, &a.x, &a.y);
		box_centre(L, j, r, &b.x, &b.y);
		char tip[128], amt[32];
		svg_amount(amt, sizeof amt, ld, net->bytes);
		snprintf(tip, sizeof tip, "groups %d - %d: busiest global link %s",
			 i * L->gbin, j * L->gbin, amt);
		struct svg_pen pen = { svg_load_colour(net, ld),
				       1.2 + 2.8 * ld / net->max_load };
		chord(f, L, a, b, pen, tip);
	}
	free(idx);
}

static void draw_groups(FILE *f, const struct dfly_layout *L,
			const struct svg_net *net, const struct svg_panel *p,
			const struct dloads *d)
{
	size_t ncell = (size_t)L->ng * (size_t)L->na * (size_t)L->np;
	struct svg_acc *acc = calloc(ncell + 1, sizeof *acc);
	int32_t *one = malloc((ncell + 1) * sizeof *one);
	if (!acc || !one) {
		free(acc);
		free(one);
		return;
	}
	int32_t nm = tp_machine_node_count(net->m);
	for (size_t c = 0; c < ncell; c++)
		one[c] = -1;
	for (int32_t v = 0; v < nm; v++) {
		const int *co = tp_machine_node_coords(net->m, v);
		size_t c = ((size_t)(co[1] / L->gbin) * L->na + (size_t)(co[0] / L->rbin)) *
			   L->np + (size_t)L->slot[v];
		one[c] = acc[c].nodes == 0 ? v : -1;
		svg_acc_add(&acc[c], net, p, v);
	}
	double side = L->bw > L->bh ? L->bw : L->bh;
	for (int i = 0; i < L->ng; i++) {
		double cx, cy, lx, ly;
		char label[32];
		if (L->gbin == 1)
			snprintf(label, sizeof label, "g%d", i);
		else
			snprintf(label, sizeof label, "g%d-%d", i * L->gbin,
				 (i + 1) * L->gbin - 1);
		/* labels outside the box, further out where they lie sideways */
		double th = -PI / 2 + 2 * PI * i / L->ng;
		box_centre(L, i, L->radius, &cx, &cy);
		box_centre(L, i, L->radius + side * 0.5 + 10 +
			   fabs(cos(th)) * 2.8 * (double)strlen(label), &lx, &ly);
		double x0 = cx - L->bw / 2, y0 = cy - L->bh / 2;
		char tip[128], amt[32];
		svg_amount(amt, sizeof amt, d->local[i], net->bytes);
		snprintf(tip, sizeof tip, "group %d: busiest local link %s",
			 i * L->gbin, amt);
		bool busy = d->local[i] > 0;
		struct svg_paint frame = {
			0xf5f5f5u, busy ? svg_load_colour(net, d->local[i]) : 0xb0b0b0u,
			busy ? 2.5 : 0.6,
		};
		svg_rect(f, x0, y0, L->bw, L->bh, frame, tip);
		svg_text(f, lx, ly + 3,
			 (struct svg_font){ 9, SVG_MIDDLE, false, SVG_INK },
			 "%s", label);
		for (int a = 0; a < L->na; a++)
			for (int s = 0; s < L->np; s++) {
				size_t c = ((size_t)i * L->na + (size_t)a) * L->np + (size_t)s;
				if (acc[c].nodes == 0)
					continue;
				char nt[192];
				if (one[c] >= 0)
					svg_node_tip(nt, sizeof nt, net, p, one[c]);
				else
					snprintf(nt, sizeof nt, "%ld nodes, %ld in the job",
						 (long)acc[c].nodes, (long)acc[c].alloc);
				double C = L->pitch * 0.78;
				struct svg_paint paint = {
					svg_acc_fill(&acc[c]),
					acc[c].alloc ? SVG_LINE : SVG_NONE, 0.5,
				};
				svg_rect(f, x0 + 2 + a * L->pitch,
					 y0 + HEAD + s * L->pitch, C, C, paint, nt);
			}
	}
	free(acc);
	free(one);
}

static void dfly_draw(FILE *f, const struct svg_net *net, const void *lp,
		      const struct svg_panel *p)
{
	const struct dfly_layout *L = lp;
	struct dloads d = { NULL, NULL };
	if (fill_loads(L, net, p, &d) == 0) {
		draw_chords(f, L, net, &d);
		draw_groups(f, L, net, p, &d);
	}
	free(d.chord);
	free(d.local);
}

static void dfly_legend(FILE *f, const void *lp, double x, double y)
{
	(void)lp;
	svg_text(f, x, y - 4,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK }, "links");
	svg_curve(f, (struct svg_pt){ x, y + 12 },
		  (struct svg_pt){ x + 15, y - 2 },
		  (struct svg_pt){ x + 30, y + 12 },
		  (struct svg_pen){ svg_heat(0.7), 2.5 }, NULL);
	svg_text(f, x + 38, y + 9,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "chord: busiest global link of two groups");
	svg_rect(f, x + 2, y + 18, 24, 12,
		 (struct svg_paint){ 0xf5f5f5u, svg_heat(0.7), 2.5 }, NULL);
	svg_text(f, x + 38, y + 28,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "border: busiest local link of a group");
}

const struct svg_kind svg_dragonfly_kind = {
	.layout = dfly_layout,
	.draw = dfly_draw,
	.legend = dfly_legend,
	.destroy = dfly_destroy,
};
