/* topoplace pictures — a job's mapping: Slurm's block order (left) and
 * topoplace's mapping (right) on the network, drawn the same way so that
 * the eye compares them (topoplace map --format svg, --topo-report=svg).
 *
 *   tasks   each task gets a colour from its place in the pattern: its
 *           coordinates (stencil position or the graph's "coords": x red,
 *           y green, z blue), else its number along a ramp; a node (or a
 *           cell aggregating several) shows the mean colour of its tasks,
 *           so a compact block of the pattern reads as one clean colour
 *           and a scattered one as grey
 *   links   heat colours of the load the core's congestion metric counts
 *           (tp_metrics_link_loads), one scale for both sides
 *
 * How a network is drawn is the business of its kind (svg_torus.c,
 * svg_tree.c, svg_dragonfly.c); this file builds what they share, the
 * header, the panels and the legend.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MARGIN 16.0
#define TITLE_H 52.0      /* title and subtitle lines */
#define LINE_H 14.0       /* each further line of the note */
#define PANEL_HEAD 52.0   /* a panel's name and metrics */
#define LEGEND_H 64.0
#define MIN_PANEL_W 350.0

/* ---- shared helpers for the kinds ---- */

double svg_cable_load(const struct svg_panel *p, int64_t up)
{
	if (!p->loads || up < 0)
		return 0;
	double a = p->loads[up], b = p->loads[up + 1];
	return a > b ? a : b;
}

void svg_acc_add(struct svg_acc *c, const struct svg_net *net,
		 const struct svg_panel *p, int32_t node)
{
	c->nodes++;
	int32_t i = net->alloc_of[node];
	if (i < 0)
		return;
	c->alloc++;
	c->tasks += p->ntasks[i];
	c->r += p->rgb[3 * (size_t)i];
	c->g += p->rgb[3 * (size_t)i + 1];
	c->b += p->rgb[3 * (size_t)i + 2];
}

static uint32_t channel(double sum, int64_t n)
{
	double v = sum / (double)n;
	v = v < 0 ? 0 : v > 1 ? 1 : v;
	return (uint32_t)lround(v * 255);
}

uint32_t svg_acc_fill(const struct svg_acc *c)
{
	if (c->alloc == 0)
		return SVG_EMPTY;
	if (c->tasks == 0)
		return SVG_IDLE;
	return channel(c->r, c->tasks) << 16 | channel(c->g, c->tasks) << 8 |
	       channel(c->b, c->tasks);
}

uint32_t svg_load_colour(const struct svg_net *net, double load)
{
	if (!(load > 0) || !(net->max_load > 0))
		return SVG_LINE;
	return svg_heat(load / net->max_load);
}

void svg_node_tip(char *buf, size_t len, const struct svg_net *net,
		  const struct svg_panel *p, int32_t node)
{
	const char *name = tp_machine_node_name(net->m, node);
	int32_t i = net->alloc_of[node];
	if (i < 0)
		snprintf(buf, len, "%s: not in the job", name);
	else
		snprintf(buf, len, "%s: %ld task%s", name, (long)p->ntasks[i],
			 p->ntasks[i] == 1 ? "" : "s");
}

/* ---- task colours ---- */

/* rgb[3 t ..]: task t's colour, channels in 0..1.  *how says what the
 * colours mean (for the subtitle). */
static void task_colours(const tp_graph *g, int32_t n, float *rgb,
			 char *how, size_t len)
{
	int cd = g ? tp_graph_coord_dims(g) : 0;
	const double *co = g ? tp_graph_coords(g) : NULL;
	if (cd <= 0 || !co || n <= 0) {
		for (int32_t t = 0; t < n; t++) {
			uint32_t c = svg_ramp(n > 1 ? (double)t / (n - 1) : 0.5);
			rgb[3 * (size_t)t] = (float)((c >> 16) & 0xff) / 255.0f;
			rgb[3 * (size_t)t + 1] = (float)((c >> 8) & 0xff) / 255.0f;
			rgb[3 * (size_t)t + 2] = (float)(c & 0xff) / 255.0f;
		}
		snprintf(how, len, "colour: task number, 0 (violet) to %ld (yellow)",
			 (long)(n > 0 ? n - 1 : 0));
		return;
	}
	int use = cd < 3 ? cd : 3;
	double lo[3], hi[3];
	for (int d = 0; d < use; d++) {
		lo[d] = hi[d] = co[d];
		for (int32_t t = 1; t < n; t++) {
			double v = co[(size_t)t * (size_t)cd + (size_t)d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	}
	for (int32_t t = 0; t < n; t++) {
		double u[3] = { 0.5, 0.5, 0.5 };
		for (int d = 0; d < use; d++)
			if (hi[d] > lo[d])
				u[d] = (co[(size_t)t * (size_t)cd + (size_t)d] - lo[d]) /
				       (hi[d] - lo[d]);
		if (use == 1) {
			uint32_t c = svg_ramp(u[0]);
			rgb[3 * (size_t)t] = (float)((c >> 16) & 0xff) / 255.0f;
			rgb[3 * (size_t)t + 1] = (float)((c >> 8) & 0xff) / 255.0f;
			rgb[3 * (size_t)t + 2] = (float)(c & 0xff) / 255.0f;
			continue;
		}
		/* the colour cube, kept off black and white */
		for (int k = 0; k < 3; k++)
			rgb[3 * (size_t)t + k] = (float)(0.12 + 0.8 * u[k]);
	}
	snprintf(how, len, "colour: the task's place in the pattern (%s)",
		 use == 1 ? "x: violet to yellow"
		 : use == 2 ? "x: more red, y: more green"
		 : "x: more red, y: more green, z: more blue");
}

/* ---- the two panels ---- */

struct picture {
	const char *pattern;
	const tp_job *job;
	struct svg_net net;
	struct svg_panel side[2];
	float *trgb;                 /* task colours */
	const struct svg_kind *kind;
	void *layout;
	double body_w, body_h;
	char note[256], how[160];
};

static void panel_free(struct svg_panel *p)
{
	free(p->loads);
	free(p->rgb);
	free(p->ntasks);
}

static int panel_fill(struct picture *pc, struct svg_panel *p,
		      const char *id, const int32_t *map)
{
	int32_t n = tp_job_ntasks(pc->job), nn = tp_alloc_nnodes(pc->net.a);
	p->id = id;
	p->map = map;
	p->rgb = calloc((size_t)nn * 3 + 3, sizeof *p->rgb);
	p->ntasks = calloc((size_t)nn + 1, sizeof *p->ntasks);
	if (!p->rgb || !p->ntasks)
		return -1;
	for (int32_t t = 0; t < n; t++) {
		int32_t i = map[t];
		p->ntasks[i]++;
		for (int k = 0; k < 3; k++)
			p->rgb[3 * (size_t)i + k] += pc->trgb[3 * (size_t)t + k];
	}
	return 0;
}

/* Both panels' link loads, in one call: the core routes the two orders at
 * once, on the job's threads. */
static int panels_loads(struct picture *pc)
{
	if (!tp_job_graph(pc->job))
		return 0;
	int64_t nl = tp_machine_link_count(pc->net.m);
	for (int s = 0; s < 2; s++)
		if (!(pc->side[s].loads = calloc((size_t)nl + 1, sizeof(double))))
			return -1;
	/* the job's own inputs: only memory can fail here */
	if (tp_job_link_loads(pc->job, pc->side[1].loads, pc->side[0].loads, nl,
			      NULL) < 0)
		return -1;
	for (int s = 0; s < 2; s++)
		for (int64_t l = 0; l < nl; l++)
			if (pc->side[s].loads[l] > pc->net.max_load)
				pc->net.max_load = pc->side[s].loads[l];
	return 0;
}

/* The picture by what the network offers: its switches, its groups, else
 * its box of router coordinates. */
static const struct svg_kind *kind_of(const tp_machine *m)
{
	if (tp_machine_has(m, TP_CAP_SWITCHES))
		return &svg_tree_kind;
	if (tp_machine_has(m, TP_CAP_GROUPS))
		return &svg_dragonfly_kind;
	return &svg_torus_kind;
}

static int picture_init(struct picture *pc, const tp_job *job,
			const char *pattern)
{
	memset(pc, 0, sizeof *pc);
	pc->pattern = pattern;
	pc->job = job;
	pc->net.a = tp_job_alloc(pc->job);
	pc->net.m = tp_alloc_machine(pc->net.a);
	pc->net.has_loads = tp_job_graph(pc->job) != NULL;
	pc->net.bytes = !tp_machine_has_level_bandwidth(pc->net.m);
	int32_t nm = tp_machine_node_count(pc->net.m);
	int32_t n = tp_job_ntasks(pc->job);
	pc->net.alloc_of = malloc(((size_t)nm + 1) * sizeof *pc->net.alloc_of);
	pc->trgb = malloc(((size_t)n + 1) * 3 * sizeof *pc->trgb);
	if (!pc->net.alloc_of || !pc->trgb)
		return -1;
	for (int32_t v = 0; v < nm; v++)
		pc->net.alloc_of[v] = -1;
	for (int32_t i = 0; i < tp_alloc_nnodes(pc->net.a); i++)
		pc->net.alloc_of[tp_alloc_node(pc->net.a, i)] = i;
	task_colours(tp_job_graph(pc->job), n, pc->trgb, pc->how, sizeof pc->how);
	int rc = panel_fill(pc, &pc->side[0], "block", tp_job_block_map(pc->job));
	if (!rc)
		rc = panel_fill(pc, &pc->side[1], "topoplace", tp_job_map(pc->job));
	if (!rc)
		rc = panels_loads(pc);
	if (rc)
		return rc;
	pc->kind = kind_of(pc->net.m);
	return pc->kind->layout(&pc->net, &pc->layout, &pc->body_w, &pc->body_h,
				pc->note, sizeof pc->note);
}

static void picture_free(struct picture *pc)
{
	if (pc->kind && pc->layout)
		pc->kind->destroy(pc->layout);
	panel_free(&pc->side[0]);
	panel_free(&pc->side[1]);
	free(pc->net.alloc_of);
	free(pc->trgb);
}

/* "torus 8x8x8", "mesh 4x4", "switch tree (13 switches)", ... */
static void network_name(const tp_machine *m, char *buf, size_t len)
{
	const char *k = tp_machine_kind(m);
	if (tp_machine_has(m, TP_CAP_SWITCHES)) {
		snprintf(buf, len, "switch tree of %ld switches",
			 (long)tp_machine_switch_count(m));
		return;
	}
	if (tp_machine_has(m, TP_CAP_GROUPS)) {
		snprintf(buf, len, "%s of %d groups of %d routers", k,
			 tp_machine_dim(m, 1), tp_machine_dim(m, 0));
		return;
	}
	size_t o = (size_t)snprintf(buf, len, "%s ", k);
	for (int d = 0; d < tp_machine_ndims(m) && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", d ? "x" : "",
				      tp_machine_dim(m, d));
}

static void panel_head(FILE *f, const struct picture *pc, int side)
{
	const tp_job *job = pc->job;
	const tp_metrics *m = side ? tp_job_metrics(job) : tp_job_block_metrics(job);
	bool kept = side && tp_job_status(job) == TP_JOB_KEPT;
	if (side == 0)
		svg_text(f, 0, 14,
			 (struct svg_font){ 13, SVG_START, true, SVG_INK },
			 "Slurm's block order");
	else if (kept)
		svg_text(f, 0, 14,
			 (struct svg_font){ 13, SVG_START, true, SVG_INK },
			 "topoplace: Slurm's order kept");
	else
		svg_text(f, 0, 14,
			 (struct svg_font){ 13, SVG_START, true, SVG_INK },
			 "topoplace: %s", tp_policy_name(tp_job_policy(job)));
	if (m) {
		char busy[32];
		svg_amount(busy, sizeof busy, m->max_congestion_bytes, pc->net.bytes);
		svg_text(f, 0, 30,
			 (struct svg_font){ 11, SVG_START, false, SVG_INK },
			 "%.3g hops/byte, busiest link %s, %.0f%% in-node",
			 m->avg_hop_bytes, busy, 100 * m->frac_intra_node);
	} else {
		svg_text(f, 0, 30,
			 (struct svg_font){ 11, SVG_START, false, SVG_INK },
			 "no communication pattern: no link loads");
	}
	if (kept)
		svg_text(f, 0, 44,
			 (struct svg_font){ 10, SVG_START, false, 0x555555u },
			 "(%s)", tp_job_reason(job));
}

/* Split text at spaces into lines of at most width characters; returns
 * the count (at most max), each line's start and length in starts/lens. */
static int wrap(const char *text, int width, int max, const char **starts,
		int *lens)
{
	int n = 0;
	const char *s = text;
	while (*s && n < max) {
		int len = (int)strlen(s);
		if (len > width) {
			len = width;
			while (len > 0 && s[len] != ' ')
				len--;
			if (len == 0)
				len = width;
		}
		starts[n] = s;
		lens[n++] = len;
		s += len;
		while (*s == ' ')
			s++;
	}
	return n;
}

/* The key to the task colours: a small square of the colour cube (2-D and
 * 3-D patterns) or a ramp. */
static void colour_key(FILE *f, const struct picture *pc, double x, double y)
{
	const tp_graph *g = tp_job_graph(pc->job);
	int cd = g ? tp_graph_coord_dims(g) : 0;
	svg_text(f, x, y - 4,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK },
		 "task colour");
	if (cd >= 2) {
		const int k = 6;
		for (int j = 0; j < k; j++)
			for (int i = 0; i < k; i++) {
				double u = (double)i / (k - 1), v = (double)j / (k - 1);
				uint32_t c = (uint32_t)lround((0.12 + 0.8 * u) * 255) << 16 |
					     (uint32_t)lround((0.12 + 0.8 * v) * 255) << 8 |
					     (uint32_t)lround(0.52 * 255);
				svg_rect(f, x + i * 6, y + j * 6, 6, 6,
					 (struct svg_paint){ c, SVG_NONE, 0 },
					 NULL);
			}
		svg_text(f, x + 40, y + 10,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "x →");
		svg_text(f, x + 40, y + 32,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "y ↓");
		return;
	}
	for (int i = 0; i < 20; i++)
		svg_rect(f, x + i * 6, y, 6.3, 10,
			 (struct svg_paint){ svg_ramp(i / 19.0), SVG_NONE, 0 },
			 NULL);
	svg_text(f, x, y + 22,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 cd ? "x low" : "task 0");
	svg_text(f, x + 120, y + 22,
		 (struct svg_font){ 10, SVG_END, false, SVG_INK }, "%s",
		 cd ? "x high" : "last task");
}

static void draw_picture(FILE *f, struct picture *pc)
{
	double pw = pc->body_w > MIN_PANEL_W ? pc->body_w : MIN_PANEL_W;
	/* wide networks (trees) one above the other, the others side by side */
	bool stacked = pc->body_w > 600 && pc->body_w > 1.2 * pc->body_h;
	double w = stacked ? 2 * MARGIN + pw : 3 * MARGIN + 2 * pw;
	double step = PANEL_HEAD + pc->body_h + MARGIN;
	const char *starts[4];
	int lens[4];
	int nl = wrap(pc->note, (int)((w - 2 * MARGIN) / 6.2), 4, starts, lens);
	double top = MARGIN + TITLE_H + (nl > 1 ? (nl - 1) * LINE_H : 0);
	double h = top + (stacked ? step : 0) + PANEL_HEAD + pc->body_h +
		   LEGEND_H + MARGIN;
	char net[96], title[512];
	network_name(pc->net.m, net, sizeof net);
	snprintf(title, sizeof title, "topoplace map: %ld tasks on %ld nodes of a %s",
		 (long)tp_job_ntasks(pc->job), (long)tp_alloc_nnodes(pc->net.a), net);
	svg_begin(f, w, h, title);
	svg_text(f, MARGIN, MARGIN + 8,
		 (struct svg_font){ 15, SVG_START, true, SVG_INK },
		 "%s", title);
	svg_text(f, MARGIN, MARGIN + 26,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK },
		 "pattern: %s; %s", pc->pattern ? pc->pattern : "none", pc->how);
	for (int i = 0; i < nl; i++)
		svg_text(f, MARGIN, MARGIN + 41 + i * LINE_H,
			 (struct svg_font){ 11, SVG_START, false, SVG_INK },
			 "%.*s", lens[i], starts[i]);
	for (int s = 0; s < 2; s++) {
		double x = MARGIN + (stacked ? 0 : s * (pw + MARGIN));
		double y = top + (stacked ? s * step : 0);
		svg_group(f, NULL, x, y);
		panel_head(f, pc, s);
		svg_group_end(f);
		/* the body alone in a group of its own: tests render it by id */
		svg_group(f, s ? "topoplace-net" : "block-net", x, y + PANEL_HEAD);
		pc->kind->draw(f, &pc->net, pc->layout, &pc->side[s]);
		svg_group_end(f);
	}
	double ly = top + (stacked ? step : 0) + PANEL_HEAD + pc->body_h + 26;
	double lx = MARGIN;
	if (pc->net.has_loads) {
		svg_heat_legend(f, lx, ly, 200, pc->net.max_load, pc->net.bytes,
				pc->net.bytes ? "link load (bytes routed over it)"
					      : "link load (bytes / bandwidth)");
		lx += 240;
	}
	colour_key(f, pc, lx, ly);
	lx += 170;
	if (pc->kind->legend)
		pc->kind->legend(f, pc->layout, lx, ly);
	svg_end(f);
}

int svg_map_picture(FILE *f, const tp_job *job, const char *pattern)
{
	struct picture pc;
	int rc = picture_init(&pc, job, pattern);
	if (!rc)
		draw_picture(f, &pc);
	picture_free(&pc);
	return rc;
}
