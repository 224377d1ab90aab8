/* topoplace command — a node's inside in SVG (node-info --format svg, and
 * map --format svg --node NAME with the tasks placed there).
 *
 * One box per socket, side by side: its cores as a grid, below them its
 * PCIe tree drawn top-down (host bridges, bridges and switches, GPUs and
 * network cards, each card's port), lines for the PCIe links.  NVLinks are
 * green curves under the GPUs (wider for more lanes), or lines down to one
 * NVSwitch bar.  With a placement each task of the node gets a colour: its
 * cores and GPUs are filled with it, and a list under the picture says
 * which CPUs and GPUs each task got.  Nodes are small (at most 64 GPUs and
 * 64 cards, hwloc trees of bounded depth), so everything is drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define MARGIN 16.0
#define TOP 58.0           /* title lines */
#define SOCK_HEAD 20.0
#define CORE_P 13.0        /* core grid pitch */
#define CORE_COLS 16
#define SLOT_W 100.0       /* one leaf of a PCIe tree */
#define BOX_W 90.0
#define BOX_H 26.0
#define ROW_H 40.0
#define SOCK_GAP 44.0
#define NV_AREA 70.0
#define MAX_TASK_LINES 48
#define NVLINK_GREEN 0x4c9a00u

struct vpart {
	tp_node_part p;
	int child, sibling;   /* first child, next sibling (part order) */
	double x, y;          /* box centre, absolute */
};

struct nview {
	const tp_node *n;
	int np, nsock;
	struct vpart *v;
	double *sock_x, *sock_w;
	double sock_h, tree_y, width, height;
	int *core_task, *gpu_task;    /* local task index, -1; -2: shared */
	int ngpu;
	double gpu_bottom;
};

/* ---- the placement on the node ---- */

/* Each PU of a CPU list ("0-3,8") onto the core that holds it. */
static void mark_cpus(struct nview *w, const char *list, int task,
		      const int *pu_core, int npu_max)
{
	const char *s = list;
	while (s && *s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			return;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1)
				return;
			s = end;
		}
		for (long pu = a; pu <= b && pu < npu_max; pu++)
			if (pu >= 0 && pu_core[pu] >= 0) {
				int *c = &w->core_task[pu_core[pu]];
				*c = *c == -1 || *c == task ? task : -2;
			}
		if (*s == ',')
			s++;
		else if (*s)
			return;
	}
}

static int placement(struct nview *w, const struct svg_node_tasks *t)
{
	const tp_node *n = w->n;
	int nc = tp_node_ncores(n);
	w->ngpu = tp_node_ngpus(n);
	w->core_task = malloc(((size_t)nc + 1) * sizeof *w->core_task);
	w->gpu_task = malloc(((size_t)w->ngpu + 1) * sizeof *w->gpu_task);
	if (!w->core_task || !w->gpu_task)
		return -1;
	for (int c = 0; c < nc; c++)
		w->core_task[c] = -1;
	for (int g = 0; g < w->ngpu; g++)
		w->gpu_task[g] = -1;
	if (!t)
		return 0;
	/* PU os index -> core */
	int maxpu = 0, pus[256];
	for (int c = 0; c < nc; c++) {
		int k = tp_node_core_pus(n, c, pus, 256);
		for (int i = 0; i < k && i < 256; i++)
			maxpu = pus[i] + 1 > maxpu ? pus[i] + 1 : maxpu;
	}
	int *pu_core = malloc(((size_t)maxpu + 1) * sizeof *pu_core);
	if (!pu_core)
		return -1;
	for (int i = 0; i < maxpu; i++)
		pu_core[i] = -1;
	for (int c = 0; c < nc; c++) {
		int k = tp_node_core_pus(n, c, pus, 256);
		for (int i = 0; i < k && i < 256; i++)
			if (pus[i] >= 0)
				pu_core[pus[i]] = c;
	}
	for (int32_t i = 0; i < t->ntasks; i++) {
		if (t->cpus && t->cpus[i])
			mark_cpus(w, t->cpus[i], (int)i, pu_core, maxpu);
		if (!t->gpu_start)
			continue;
		for (int k = t->gpu_start[i]; k < t->gpu_start[i + 1]; k++) {
			int g = t->gpus[k];
			if (g < 0 || g >= w->ngpu)
				continue;
			int *x = &w->gpu_task[g];
			*x = *x == -1 || *x == (int)i ? (int)i : -2;
		}
	}
	free(pu_core);
	return 0;
}

/* ---- layout ---- */

/* Leaves left to right in part order, a parent centred over its children;
 * returns the next free slot.  Depth is bounded by the XML checks (64). */
static int place(struct nview *w, int p, int depth, int slot, double x0,
		 double y0)
{
	struct vpart *v = &w->v[p];
	v->y = y0 + depth * ROW_H + BOX_H / 2;
	if (v->child < 0) {
		v->x = x0 + (slot + 0.5) * SLOT_W;
		return slot + 1;
	}
	double lo = 0, hi = 0;
	bool first = true;
	for (int c = v->child; c >= 0; c = w->v[c].sibling) {
		slot = place(w, c, depth + 1, slot, x0, y0);
		if (first)
			lo = w->v[c].x;
		hi = w->v[c].x;
		first = false;
	}
	v->x = (lo + hi) / 2;
	return slot;
}

static int leaves(const struct nview *w, int p)
{
	if (w->v[p].child < 0)
		return 1;
	int k = 0;
	for (int c = w->v[p].child; c >= 0; c = w->v[c].sibling)
		k += leaves(w, c);
	return k;
}

static int depth_of(const struct nview *w, int p)
{
	int d = 0;
	for (int c = w->v[p].child; c >= 0; c = w->v[c].sibling) {
		int x = 1 + depth_of(w, c);
		d = x > d ? x : d;
	}
	return d;
}

static int cores_of(const tp_node *n, int s)
{
	int k = 0;
	for (int c = 0; c < tp_node_ncores(n); c++)
		k += tp_node_core_package(n, c) == s;
	return k;
}

static int layout(struct nview *w)
{
	const tp_node *n = w->n;
	w->np = tp_node_nparts(n);
	w->nsock = tp_node_npackages(n);
	w->v = calloc((size_t)w->np + 1, sizeof *w->v);
	w->sock_x = calloc((size_t)w->nsock + 1, sizeof *w->sock_x);
	w->sock_w = calloc((size_t)w->nsock + 1, sizeof *w->sock_w);
	if (!w->v || !w->sock_x || !w->sock_w)
		return -1;
	for (int p = 0; p < w->np; p++) {
		tp_node_part_get(n, p, &w->v[p].p);
		w->v[p].child = w->v[p].sibling = -1;
	}
	/* children in part order: prepend from the last part */
	for (int p = w->np - 1; p >= 0; p--) {
		int up = w->v[p].p.parent;
		if (up >= 0 && up < w->np) {
			w->v[p].sibling = w->v[up].child;
			w->v[up].child = p;
		}
	}
	int maxrows = 0, maxdepth = 0;
	for (int s = 0; s < w->nsock; s++) {
		int k = cores_of(n, s), cols = k < CORE_COLS ? k : CORE_COLS;
		int rows = cols ? (k + cols - 1) / cols : 0;
		maxrows = rows > maxrows ? rows : maxrows;
		int d = depth_of(w, s);
		maxdepth = d > maxdepth ? d : maxdepth;
		double tw = w->v[s].child >= 0 ? leaves(w, s) * SLOT_W : 0;
		double cw = cols * CORE_P + 90;
		w->sock_w[s] = (tw > cw ? tw : cw) + 16;
	}
	double x = MARGIN;
	for (int s = 0; s < w->nsock; s++) {
		w->sock_x[s] = x;
		x += w->sock_w[s] + SOCK_GAP;
	}
	w->width = x - SOCK_GAP + MARGIN;
	w->tree_y = TOP + SOCK_HEAD + maxrows * CORE_P + 24;
	w->sock_h = w->tree_y - TOP + maxdepth * ROW_H + 8;
	for (int s = 0; s < w->nsock; s++) {
		double x0 = w->sock_x[s] + 8 +
			    (w->sock_w[s] - 16 - (w->v[s].child >= 0
						  ? leaves(w, s) * SLOT_W : 0)) / 2;
		for (int c = w->v[s].child, slot = 0; c >= 0; c = w->v[c].sibling)
			slot = place(w, c, 0, slot, x0, w->tree_y);
		/* the socket's end of its links: over its first and last host
		 * bridge */
		double lo = 0, hi = 0;
		for (int c = w->v[s].child; c >= 0; c = w->v[c].sibling) {
			if (c == w->v[s].child)
				lo = w->v[c].x;
			hi = w->v[c].x;
		}
		w->v[s].x = w->v[s].child >= 0 ? (lo + hi) / 2
			    : w->sock_x[s] + w->sock_w[s] / 2;
		w->v[s].y = w->tree_y - 10;
	}
	w->gpu_bottom = TOP + w->sock_h;
	if (w->width < 520)
		w->width = 520;
	return 0;
}

/* ---- drawing ---- */

static uint32_t task_fill(int task)
{
	return task == -2 ? 0x888888u : task >= 0 ? svg_category(task) : SVG_IDLE;
}

static void draw_cores(FILE *f, const struct nview *w,
		       const struct svg_node_tasks *t, int s)
{
	const tp_node *n = w->n;
	int k = 0, lo = -1, hi = -1;
	for (int c = 0; c < tp_node_ncores(n); c++) {
		if (tp_node_core_package(n, c) != s)
			continue;
		if (lo < 0)
			lo = c;
		hi = c;
		double x = w->sock_x[s] + 8 + (k % CORE_COLS) * CORE_P;
		double y = TOP + SOCK_HEAD + 4 + (k / CORE_COLS) * CORE_P;
		char tip[96];
		int tk = w->core_task[c];
		if (tk >= 0 && t)
			snprintf(tip, sizeof tip, "core %d: task %ld", c,
				 (long)t->tasks[tk]);
		else
			snprintf(tip, sizeof tip, "core %d%s", c,
				 tk == -2 ? ": several tasks" : "");
		svg_rect(f, x, y, CORE_P - 2, CORE_P - 2,
			 (struct svg_paint){ task_fill(tk), SVG_LINE, 0.5 },
			 tip);
		k++;
	}
	svg_text(f, w->sock_x[s] + 8, TOP + 14,
		 (struct svg_font){ 11, SVG_START, true, SVG_INK }, "socket%d",
		 s);
	if (lo >= 0)
		svg_text(f, w->sock_x[s] + 70, TOP + 14,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "cores %d-%d", lo, hi);
}

/* Two lines of a part's box: what it is, and its bus id. */
static void part_label(const tp_node *n, const tp_node_part *p, char *a,
		       size_t alen, char *b, size_t blen)
{
	const char *sp = strchr(p->name, ' ');
	switch (p->kind) {
	case TP_PART_GPU:
		snprintf(a, alen, "%s", p->name);
		snprintf(b, blen, "%s", tp_node_gpu_busid(n, p->index));
		break;
	case TP_PART_NIC:
		snprintf(a, alen, "%s", p->name);
		snprintf(b, blen, "%s", tp_node_nic_busid(n, p->index));
		break;
	case TP_PART_PORT:
		snprintf(a, alen, "port");
		snprintf(b, blen, "to the network");
		break;
	case TP_PART_HOSTBRIDGE:
		snprintf(a, alen, "host bridge");
		snprintf(b, blen, "%s", strncmp(p->name, "host bridge ", 12)
			 ? p->name : p->name + 12);
		break;
	default:
		snprintf(a, alen, "%.*s", sp ? (int)(sp - p->name) : 20, p->name);
		snprintf(b, blen, "%s", sp ? sp + 1 : "");
	}
}

static void draw_part(FILE *f, const struct nview *w,
		      const struct svg_node_tasks *t, int p)
{
	const struct vpart *v = &w->v[p];
	const tp_node *n = w->n;
	char a[48], b[48], tip[160];
	part_label(n, &v->p, a, sizeof a, b, sizeof b);
	uint32_t fill = 0xf0f0f0u, stroke = 0x8a8a8au;
	snprintf(tip, sizeof tip, "%s", v->p.name);
	if (v->p.kind == TP_PART_GPU) {
		int tk = w->gpu_task[v->p.index];
		fill = tk == -1 ? 0xdff0d0u : task_fill(tk);
		stroke = NVLINK_GREEN;
		int nic = tp_node_gpu_nic(n, v->p.index);
		size_t o = (size_t)snprintf(tip, sizeof tip, "%s %s", v->p.name, b);
		if (nic >= 0)
			o += (size_t)snprintf(tip + o, sizeof tip - o,
					      ", nearest card NIC%d", nic);
		if (tk >= 0 && t && o < sizeof tip)
			snprintf(tip + o, sizeof tip - o, ", task %ld",
				 (long)t->tasks[tk]);
		else if (tk == -2 && o < sizeof tip)
			snprintf(tip + o, sizeof tip - o, ", several tasks");
	} else if (v->p.kind == TP_PART_NIC || v->p.kind == TP_PART_PORT) {
		fill = 0xdce8f5u;
		stroke = 0x3a6ea5u;
	}
	double x = v->x - BOX_W / 2, y = v->y - BOX_H / 2;
	svg_rect(f, x, y, BOX_W, BOX_H,
		 (struct svg_paint){ fill, stroke,
				     v->p.kind == TP_PART_GPU ? 1.5 : 0.8 },
		 tip);
	uint32_t ink = svg_ink_on(fill);
	bool bold = v->p.kind == TP_PART_GPU || v->p.kind == TP_PART_NIC;
	svg_text(f, v->x, y + 11, (struct svg_font){ 9, SVG_MIDDLE, bold, ink },
		 "%s", a);
	svg_text(f, v->x, y + 22,
		 (struct svg_font){ 8, SVG_MIDDLE, false, ink }, "%s", b);
}

/* The PCIe links: from each part's top up to its parent's bottom (the
 * socket's: the bottom of its core grid). */
static void draw_links(FILE *f, const struct nview *w)
{
	for (int p = 0; p < w->np; p++) {
		const struct vpart *v = &w->v[p];
		int up = v->p.parent;
		if (up < 0 || v->p.kind == TP_PART_SOCKET)
			continue;
		const struct vpart *u = &w->v[up];
		double y2 = u->p.kind == TP_PART_SOCKET ? w->tree_y - 12
							: u->y + BOX_H / 2;
		char tip[96];
		snprintf(tip, sizeof tip, "%s: %.4g GB/s", tp_node_link_name(w->n,
			 v->p.uplink), tp_node_link_bandwidth(w->n, v->p.uplink));
		svg_line(f, v->x, v->y - BOX_H / 2, u->x, y2,
			 (struct svg_pen){ 0x777777u, 1.4 }, tip);
	}
}

static const struct vpart *gpu_part(const struct nview *w, int g)
{
	for (int p = 0; p < w->np; p++)
		if (w->v[p].p.kind == TP_PART_GPU && w->v[p].p.index == g)
			return &w->v[p];
	return NULL;
}

/* GB/s of the fabric link between parts a and b: the model's figure (its
 * links at the rate of their generation); lanes x TP_NVLINK_BW when no
 * link joins the two parts themselves. */
static double fabric_bw(const tp_node *n, int a, int b, int lanes)
{
	int x, y;
	for (int l = 0; tp_node_link_parts(n, l, &x, &y) == TP_OK; l++)
		if ((x == a && y == b) || (x == b && y == a))
			return tp_node_link_bandwidth(n, l);
	return lanes * TP_NVLINK_BW;
}

/* NVLinks: curves under the GPUs, or lines down to the NVSwitch bar. */
static void draw_nvlinks(FILE *f, const struct nview *w)
{
	const tp_node *n = w->n;
	double base = w->gpu_bottom;
	if (tp_node_has_nvswitch(n)) {
		double lo = HUGE_VAL, hi = -HUGE_VAL;
		for (int g = 0; g < w->ngpu; g++) {
			const struct vpart *v = gpu_part(w, g);
			if (!v)
				continue;
			lo = v->x < lo ? v->x : lo;
			hi = v->x > hi ? v->x : hi;
			char tip[96];
			snprintf(tip, sizeof tip, "GPU%d - NVSwitch: %d lanes", g,
				 tp_node_nvlinks(n, g, (g + 1) % w->ngpu));
			svg_line(f, v->x, v->y + BOX_H / 2, v->x, base + 30,
				 (struct svg_pen){ NVLINK_GREEN, 3 }, tip);
		}
		if (lo <= hi) {
			struct svg_paint green = { NVLINK_GREEN, SVG_NONE, 0 };
			struct svg_font white = { 10, SVG_MIDDLE, true, 0xffffffu };
			svg_rect(f, lo - 30, base + 30, hi - lo + 60, 16, green, NULL);
			svg_text(f, (lo + hi) / 2, base + 42, white, "NVSwitch");
		}
		return;
	}
	for (int a = 0; a < w->ngpu; a++)
		for (int b = a + 1; b < w->ngpu; b++) {
			int lanes = tp_node_nvlinks(n, a, b);
			const struct vpart *va = gpu_part(w, a), *vb = gpu_part(w, b);
			if (lanes <= 0 || !va || !vb)
				continue;
			double y1 = va->y + BOX_H / 2, y2 = vb->y + BOX_H / 2;
			double dip = base + 10 + fabs(vb->x - va->x) * 0.08;
			if (dip > base + NV_AREA - 8)
				dip = base + NV_AREA - 8;
			char tip[96];
			snprintf(tip, sizeof tip, "GPU%d - GPU%d: NVLink x%d (%.4g GB/s)",
				 a, b, lanes,
				 fabric_bw(n, (int)(va - w->v), (int)(vb - w->v), lanes));
			svg_curve(f, (struct svg_pt){ va->x, y1 },
				  (struct svg_pt){ (va->x + vb->x) / 2,
						   2 * dip - (y1 + y2) / 2 },
				  (struct svg_pt){ vb->x, y2 },
				  (struct svg_pen){ NVLINK_GREEN,
						    1 + 0.5 * lanes },
				  tip);
		}
}

static void draw_tasks(FILE *f, const struct nview *w,
		       const struct svg_node_tasks *t, double y)
{
	svg_text(f, MARGIN, y,
		 (struct svg_font){ 11, SVG_START, true, SVG_INK },
		 "tasks on %s", t->node ? t->node : "the node");
	int shown = t->ntasks < MAX_TASK_LINES ? (int)t->ntasks : MAX_TASK_LINES;
	double colw = 300;
	int per_col = 16;
	for (int i = 0; i < shown; i++) {
		double x = MARGIN + (i / per_col) * colw;
		double yy = y + 16 + (i % per_col) * 15;
		svg_rect(f, x, yy - 9, 10, 10,
			 (struct svg_paint){ svg_category(i), SVG_LINE, 0.5 },
			 NULL);
		char gl[160] = "";
		size_t o = 0;
		if (t->gpu_start)
			for (int k = t->gpu_start[i]; k < t->gpu_start[i + 1] &&
			     o < sizeof gl; k++)
				o += (size_t)snprintf(gl + o, sizeof gl - o, "%s%d",
						      k == t->gpu_start[i] ? ", GPU " : ",",
						      t->gpus[k]);
		svg_text(f, x + 14, yy,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "task %ld: CPUs %s%s", (long)t->tasks[i],
			 t->cpus && t->cpus[i] ? t->cpus[i] : "(not chosen)",
			 gl);
	}
	if (t->ntasks > shown)
		svg_text(f, MARGIN, y + 16 + per_col * 15 + 4,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "... and %ld more tasks", (long)(t->ntasks - shown));
	(void)w;
}

static double tasks_height(const struct svg_node_tasks *t)
{
	if (!t)
		return 0;
	int shown = t->ntasks < MAX_TASK_LINES ? (int)t->ntasks : MAX_TASK_LINES;
	int rows = shown < 16 ? shown : 16;
	return 30 + rows * 15 + (t->ntasks > shown ? 16 : 0);
}

static void nview_free(struct nview *w)
{
	free(w->v);
	free(w->sock_x);
	free(w->sock_w);
	free(w->core_task);
	free(w->gpu_task);
}

void svg_node_picture(FILE *f, const tp_node *n,
		      const struct svg_node_tasks *t, const char *title)
{
	struct nview w;
	memset(&w, 0, sizeof w);
	w.n = n;
	if (layout(&w) < 0 || placement(&w, t) < 0) {
		nview_free(&w);
		svg_begin(f, 300, 40, title);
		svg_text(f, 10, 24,
			 (struct svg_font){ 11, SVG_START, false, SVG_INK },
			 "out of memory");
		svg_end(f);
		return;
	}
	bool nv = false;
	for (int a = 0; a < w.ngpu && !nv; a++)
		for (int b = a + 1; b < w.ngpu && !nv; b++)
			nv = tp_node_nvlinks(n, a, b) > 0;
	/* wide enough for the title lines and the legend */
	char sub[512];
	int nnic = tp_node_nnics(n);
	snprintf(sub, sizeof sub,
		 "%s: %d socket%s, %d cores, %d PUs, %d GPU%s%s, %d network card%s",
		 tp_node_source(n), w.nsock, w.nsock == 1 ? "" : "s",
		 tp_node_ncores(n), tp_node_npus(n), w.ngpu, w.ngpu == 1 ? "" : "s",
		 tp_node_has_nvswitch(n) ? " on an NVSwitch" : "", nnic,
		 nnic == 1 ? "" : "s");
	double need = 2 * MARGIN + (double)strlen(title ? title : "") * 9.0;
	if (need < 2 * MARGIN + (double)strlen(sub) * 6.3)
		need = 2 * MARGIN + (double)strlen(sub) * 6.3;
	if (need < 2 * MARGIN + 560)
		need = 2 * MARGIN + 560;
	if (w.width < need)
		w.width = need;
	double nv_h = nv ? NV_AREA : 0;
	double legend_y = w.gpu_bottom + nv_h + 28;
	double h = legend_y + 30 + tasks_height(t) + MARGIN;
	svg_begin(f, w.width, h, title);
	svg_text(f, MARGIN, MARGIN + 8,
		 (struct svg_font){ 15, SVG_START, true, SVG_INK },
		 "%s", title);
	svg_text(f, MARGIN, MARGIN + 26,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK }, "%s", sub);
	svg_group(f, "node", 0, 0);
	for (int s = 0; s < w.nsock; s++) {
		svg_rect(f, w.sock_x[s], TOP, w.sock_w[s], w.sock_h,
			 (struct svg_paint){ 0xfbfbfbu, 0x9a9a9au, 1 }, NULL);
		draw_cores(f, &w, t, s);
		if (s + 1 < w.nsock) {
			double x1 = w.sock_x[s] + w.sock_w[s], x2 = w.sock_x[s + 1];
			svg_line(f, x1, TOP + 30, x2, TOP + 30,
				 (struct svg_pen){ 0x555555u, 3 },
				 "inter-socket link");
			svg_text(f, (x1 + x2) / 2, TOP + 24,
				 (struct svg_font){ 9, SVG_MIDDLE, false,
						    SVG_INK },
				 "%.4g GB/s", TP_SMP_BW);
		}
	}
	draw_links(f, &w);
	draw_nvlinks(f, &w);
	for (int p = 0; p < w.np; p++)
		if (w.v[p].p.kind != TP_PART_SOCKET && w.v[p].p.kind != TP_PART_NVSWITCH)
			draw_part(f, &w, t, p);
	svg_group_end(f);
	svg_text(f, MARGIN, legend_y - 8,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "grey lines: PCIe links (bandwidth in their tooltips); green: "
		 "NVLink, wider for more lanes; blue: network cards");
	if (t)
		svg_text(f, MARGIN, legend_y + 6,
			 (struct svg_font){ 10, SVG_START, false, SVG_INK },
			 "filled cores and GPUs: the task of that colour");
	if (t)
		draw_tasks(f, &w, t, legend_y + 30);
	svg_end(f);
	nview_free(&w);
}
