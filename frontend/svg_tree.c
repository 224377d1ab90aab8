/* topoplace command — switch trees in SVG.
 *
 * Nested boxes: every switch is a box holding its own nodes (a grid of
 * cells) and the boxes of the switches below it, children in the order of
 * their nodes (Slurm's topology.conf order).  A box's header band is its
 * uplink, coloured by load; a bar under a node cell is the node's own link.
 * Nested boxes need no lines and scale: a 4,096-node fat tree is a few
 * hundred boxes.  Bounds: on machines of more than COLLAPSE_ABOVE nodes a
 * subtree without any node of the job is one collapsed box; when more than
 * MAX_NODE_CELLS node cells would remain, each switch's nodes become one
 * cell (their mean colour).  The layout is computed without recursion, so
 * a deep tree cannot exhaust the stack.  A forest (several trees, joined
 * through Slurm's virtual top) gets one more box, "(forest)", around its
 * trees.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define COLLAPSE_ABOVE 512
#define MAX_NODE_CELLS 8192
#define HEAD 15.0          /* header band */
#define PAD 4.0
#define GAP 6.0            /* between child boxes */
#define NAME_MAX_CHARS 22
#define CHAR_W 6.0

struct tbox {
	double x, y, w, h;     /* x, y: relative to the parent while laying out,
				  then absolute */
	double grid_y;         /* the node grid, relative to the box */
	int grid_cols;
	bool collapsed;
};

struct tree_layout {
	int32_t ns, nm, top;
	int32_t nb;                   /* boxes: the switches, + 1 for a forest's
					 virtual top (box ns) */
	int32_t *child_off, *child;   /* child switches, by their first node */
	int32_t *node_off, *nodes;    /* each switch's own nodes */
	int32_t *sub_nodes, *sub_alloc;
	int32_t *order;               /* switches in pre-order (drawn ones) */
	int32_t norder;
	bool aggregate;               /* a switch's nodes as one cell */
	double pitch;
	struct tbox *box;
};

static void tree_destroy(void *lp)
{
	struct tree_layout *L = lp;
	if (!L)
		return;
	free(L->child_off);
	free(L->child);
	free(L->node_off);
	free(L->nodes);
	free(L->sub_nodes);
	free(L->sub_alloc);
	free(L->order);
	free(L->box);
	free(L);
}

/* Counting sort of items by key into CSR (off has nkeys + 1 entries). */
static int csr(int32_t nkeys, int32_t nitems, const int32_t *key,
	       int32_t **off_out, int32_t **items_out)
{
	int32_t *off = calloc((size_t)nkeys + 2, sizeof *off);
	int32_t *items = malloc(((size_t)nitems + 1) * sizeof *items);
	if (!off || !items) {
		free(off);
		free(items);
		return -1;
	}
	for (int32_t i = 0; i < nitems; i++)
		if (key[i] >= 0)
			off[key[i] + 1]++;
	for (int32_t k = 0; k < nkeys; k++)
		off[k + 1] += off[k];
	int32_t *pos = malloc(((size_t)nkeys + 1) * sizeof *pos);
	if (!pos) {
		free(off);
		free(items);
		return -1;
	}
	memcpy(pos, off, (size_t)nkeys * sizeof *pos);
	for (int32_t i = 0; i < nitems; i++)
		if (key[i] >= 0)
			items[pos[key[i]]++] = i;
	free(pos);
	*off_out = off;
	*items_out = items;
	return 0;
}

/* The box above box s (-1 for the outermost). */
static int32_t box_parent(const struct tree_layout *L, const tp_machine *m,
			  int32_t s)
{
	if (s >= L->ns)
		return -1;
	int32_t p = tp_machine_switch_parent(m, s);
	return p < 0 && L->nb > L->ns ? L->ns : p;
}

static const char *box_name(const struct tree_layout *L, const tp_machine *m,
			    int32_t s)
{
	const char *n = s < L->ns ? tp_machine_switch_name(m, s) : NULL;
	return n ? n : "(forest)";
}

/* Pre-order of the switches from the top, children by their first node
 * (first_node[]), never through a collapsed box.  Without recursion. */
static int preorder(struct tree_layout *L, const int32_t *first_node)
{
	int32_t *stack = malloc(((size_t)L->nb + 1) * sizeof *stack);
	L->order = malloc(((size_t)L->nb + 1) * sizeof *L->order);
	if (!stack || !L->order) {
		free(stack);
		return -1;
	}
	/* children sorted by first node, then index: insertion sort per
	 * switch (fan-outs are small) */
	for (int32_t s = 0; s < L->nb; s++) {
		int32_t *c = L->child + L->child_off[s];
		int32_t n = L->child_off[s + 1] - L->child_off[s];
		for (int32_t i = 1; i < n; i++) {
			int32_t v = c[i], j = i;
			while (j > 0 && (first_node[c[j - 1]] > first_node[v] ||
					 (first_node[c[j - 1]] == first_node[v] &&
					  c[j - 1] > v))) {
				c[j] = c[j - 1];
				j--;
			}
			c[j] = v;
		}
	}
	int32_t sp = 0;
	stack[sp++] = L->top;
	L->norder = 0;
	while (sp > 0) {
		int32_t s = stack[--sp];
		L->order[L->norder++] = s;
		if (L->box[s].collapsed)
			continue;
		for (int32_t i = L->child_off[s + 1] - 1; i >= L->child_off[s]; i--)
			stack[sp++] = L->child[i];
	}
	free(stack);
	return 0;
}

/* Nodes, allocated nodes and the first node under every switch, bottom up
 * through the parent links (levels give a safe order: a child's level is
 * below its parent's). */
static int subtree_counts(struct tree_layout *L, const struct svg_net *net,
			  int32_t *first_node)
{
	const tp_machine *m = net->m;
	L->sub_nodes = calloc((size_t)L->nb + 1, sizeof *L->sub_nodes);
	L->sub_alloc = calloc((size_t)L->nb + 1, sizeof *L->sub_alloc);
	int32_t *by_level = malloc(((size_t)L->ns + 1) * sizeof *by_level);
	if (!L->sub_nodes || !L->sub_alloc || !by_level) {
		free(by_level);
		return -1;
	}
	for (int32_t s = 0; s < L->nb; s++)
		first_node[s] = INT32_MAX;
	for (int32_t v = 0; v < L->nm; v++) {
		int32_t s = tp_machine_node_switch(m, v);
		L->sub_nodes[s]++;
		L->sub_alloc[s] += net->alloc_of[v] >= 0;
		if (v < first_node[s])
			first_node[s] = v;
	}
	/* switches by increasing level: counting sort */
	int maxl = 0;
	for (int32_t s = 0; s < L->ns; s++)
		if (tp_machine_switch_level(m, s) > maxl)
			maxl = tp_machine_switch_level(m, s);
	int32_t k = 0;
	for (int l = 0; l <= maxl; l++)
		for (int32_t s = 0; s < L->ns; s++)
			if (tp_machine_switch_level(m, s) == l)
				by_level[k++] = s;
	for (int32_t i = 0; i < k; i++) {
		int32_t s = by_level[i], p = box_parent(L, m, s);
		if (p < 0)
			continue;
		L->sub_nodes[p] += L->sub_nodes[s];
		L->sub_alloc[p] += L->sub_alloc[s];
		if (first_node[s] < first_node[p])
			first_node[p] = first_node[s];
	}
	free(by_level);
	return 0;
}

static double name_width(const char *name)
{
	size_t n = strlen(name ? name : "");
	return (double)(n > NAME_MAX_CHARS ? NAME_MAX_CHARS : n) * CHAR_W + 2 * PAD;
}

/* Size of switch s's box from its nodes and its children (already sized),
 * children placed in rows of a width near the square root of their area. */
static void size_box(struct tree_layout *L, const tp_machine *m, int32_t s)
{
	struct tbox *b = &L->box[s];
	double w = name_width(box_name(L, m, s)), h = HEAD;
	if (b->collapsed) {
		b->w = w > 96 ? w : 96;
		b->h = HEAD + 16;
		return;
	}
	int32_t k = L->node_off[s + 1] - L->node_off[s];
	double P = L->pitch;
	b->grid_y = HEAD + PAD;
	if (k > 0) {
		int cols = L->aggregate ? 1 : (int)ceil(sqrt(k * 1.6));
		if (cols > k)
			cols = (int)k;
		int rows = L->aggregate ? 1 : (int)((k + cols - 1) / cols);
		b->grid_cols = cols;
		double gw = L->aggregate ? 3 * P : cols * P;
		w = w > gw + 2 * PAD ? w : gw + 2 * PAD;
		h += PAD + rows * P;
	}
	int32_t c0 = L->child_off[s], c1 = L->child_off[s + 1];
	if (c1 > c0) {
		double area = 0, widest = 0;
		for (int32_t i = c0; i < c1; i++) {
			const struct tbox *c = &L->box[L->child[i]];
			area += (c->w + GAP) * (c->h + GAP);
			widest = c->w > widest ? c->w : widest;
		}
		double target = sqrt(area) * 1.6;
		target = target > widest ? target : widest;
		/* as many per row as fit the target, then rows evened out (16
		 * leaves: 4 rows of 4, not 3 of 5 and one alone) */
		int32_t fit = 0;
		for (double x = 0; c0 + fit < c1; fit++) {
			x += L->box[L->child[c0 + fit]].w + GAP;
			if (fit > 0 && x - GAP > target)
				break;
		}
		int32_t nrows = (c1 - c0 + fit - 1) / fit;
		int32_t per_row = (c1 - c0 + nrows - 1) / nrows;
		double x = 0, y = 0, rowh = 0, maxw = 0;
		for (int32_t i = c0; i < c1; i++) {
			struct tbox *c = &L->box[L->child[i]];
			if (x > 0 && (i - c0) % per_row == 0) {
				y += rowh + GAP;
				x = rowh = 0;
			}
			c->x = PAD + x;
			c->y = y;   /* below the grid: shifted once h is known */
			x += c->w + GAP;
			rowh = c->h > rowh ? c->h : rowh;
			maxw = x - GAP > maxw ? x - GAP : maxw;
		}
		double top = h + PAD;
		for (int32_t i = c0; i < c1; i++)
			L->box[L->child[i]].y += top;
		h = top + y + rowh;
		w = w > maxw + 2 * PAD ? w : maxw + 2 * PAD;
	}
	b->w = w;
	b->h = h + PAD;
}

static int tree_layout(const struct svg_net *net, void **out, double *w,
		       double *h, char *note, size_t note_len)
{
	const tp_machine *m = net->m;
	struct tree_layout *L = calloc(1, sizeof *L);
	int32_t *key = NULL, *first_node = NULL;
	if (!L)
		return -1;
	L->ns = tp_machine_switch_count(m);
	L->nm = tp_machine_node_count(m);
	L->top = 0;
	L->nb = L->ns + (tp_machine_tree_count(m) > 1);
	key = malloc(((size_t)(L->ns > L->nm ? L->ns : L->nm) + 1) * sizeof *key);
	first_node = malloc(((size_t)L->nb + 1) * sizeof *first_node);
	L->box = calloc((size_t)L->nb + 1, sizeof *L->box);
	if (!key || !first_node || !L->box)
		goto oom;
	for (int32_t s = 0; s < L->ns; s++) {
		key[s] = box_parent(L, m, s);
		if (key[s] < 0)
			L->top = s;
	}
	if (L->nb > L->ns)
		L->top = L->ns;
	if (csr(L->nb, L->ns, key, &L->child_off, &L->child) < 0)
		goto oom;
	for (int32_t v = 0; v < L->nm; v++)
		key[v] = tp_machine_node_switch(m, v);
	if (csr(L->nb, L->nm, key, &L->node_off, &L->nodes) < 0 ||
	    subtree_counts(L, net, first_node) < 0)
		goto oom;
	for (int32_t s = 0; s < L->ns; s++)
		L->box[s].collapsed = L->nm > COLLAPSE_ABOVE && s != L->top &&
				      L->sub_alloc[s] == 0;
	if (preorder(L, first_node) < 0)
		goto oom;
	int64_t cells = 0;
	for (int32_t i = 0; i < L->norder; i++)
		if (!L->box[L->order[i]].collapsed)
			cells += L->node_off[L->order[i] + 1] - L->node_off[L->order[i]];
	L->aggregate = cells > MAX_NODE_CELLS;
	L->pitch = cells > 2048 ? 7 : 10;
	/* sizes bottom-up (reverse pre-order), then absolute positions */
	for (int32_t i = L->norder - 1; i >= 0; i--)
		size_box(L, m, L->order[i]);
	L->box[L->top].x = L->box[L->top].y = 0;
	for (int32_t i = 0; i < L->norder; i++) {
		int32_t s = L->order[i];
		if (L->box[s].collapsed)
			continue;
		for (int32_t c = L->child_off[s]; c < L->child_off[s + 1]; c++) {
			L->box[L->child[c]].x += L->box[s].x;
			L->box[L->child[c]].y += L->box[s].y;
		}
	}
	*w = L->box[L->top].w;
	*h = L->box[L->top].h;
	snprintf(note, note_len, "boxes are switches, the switches and nodes below "
		 "them inside; a header is the switch's uplink, a bar under a node "
		 "its link, coloured by load%s%s",
		 L->nm > COLLAPSE_ABOVE ? "; subtrees without nodes of the job "
		 "collapsed" : "",
		 L->aggregate ? "; a switch's nodes shown as one cell" : "");
	free(key);
	free(first_node);
	*out = L;
	return 0;
oom:
	free(key);
	free(first_node);
	tree_destroy(L);
	return -1;
}

static void draw_nodes(FILE *f, const struct tree_layout *L,
		       const struct svg_net *net, const struct svg_panel *p,
		       int32_t s)
{
	const struct tbox *b = &L->box[s];
	double P = L->pitch, C = P * 0.72;
	int32_t n0 = L->node_off[s], n1 = L->node_off[s + 1];
	double gx = b->x + PAD, gy = b->y + b->grid_y;
	char tip[192];
	if (L->aggregate && n1 > n0) {
		struct svg_acc acc = { 0 };
		double mx = 0;
		for (int32_t i = n0; i < n1; i++) {
			svg_acc_add(&acc, net, p, L->nodes[i]);
			double ld = svg_cable_load(p, tp_machine_node_link(net->m,
									   L->nodes[i]));
			if (ld > mx)
				mx = ld;
		}
		snprintf(tip, sizeof tip, "%ld nodes, %ld in the job, %lld tasks",
			 (long)acc.nodes, (long)acc.alloc, (long long)acc.tasks);
		svg_rect(f, gx, gy, 3 * P - (P - C), C,
			 (struct svg_paint){ svg_acc_fill(&acc), SVG_LINE,
					     0.5 },
			 tip);
		if (mx > 0)
			svg_rect(f, gx, gy + C, 3 * P - (P - C), P - C,
				 (struct svg_paint){ svg_load_colour(net, mx),
						     SVG_NONE, 0 },
				 NULL);
		return;
	}
	for (int32_t i = n0; i < n1; i++) {
		int32_t v = L->nodes[i], k = i - n0;
		double x = gx + (k % b->grid_cols) * P, y = gy + (k / b->grid_cols) * P;
		struct svg_acc acc = { 0 };
		svg_acc_add(&acc, net, p, v);
		svg_node_tip(tip, sizeof tip, net, p, v);
		svg_rect(f, x, y, C, C,
			 (struct svg_paint){ svg_acc_fill(&acc),
					     acc.alloc ? SVG_LINE : SVG_NONE, 0.5 },
			 tip);
		double ld = svg_cable_load(p, tp_machine_node_link(net->m, v));
		if (ld > 0)
			svg_rect(f, x, y + C, C, P - C,
				 (struct svg_paint){ svg_load_colour(net, ld),
						     SVG_NONE, 0 },
				 NULL);
	}
}

static void draw_box(FILE *f, const struct tree_layout *L,
		     const struct svg_net *net, const struct svg_panel *p,
		     int32_t s)
{
	const struct tbox *b = &L->box[s];
	const char *name = box_name(L, net->m, s);
	int32_t up = box_parent(L, net->m, s);
	/* the link above switch s: ids 2s up, 2s + 1 down (machine.h) */
	double ld = up >= 0 ? svg_cable_load(p, 2 * (int64_t)s) : 0;
	uint32_t band = up < 0 ? 0x555555u : ld > 0 ? svg_load_colour(net, ld)
						     : 0xd6d6d6u;
	char tip[256], amt[32];
	svg_amount(amt, sizeof amt, ld, net->bytes);
	if (up < 0 && s >= L->ns)
		snprintf(tip, sizeof tip, "%s: separate trees, joined through a "
			 "virtual top switch (ForestCost=)", name);
	else if (up < 0)
		snprintf(tip, sizeof tip, "%s: the top switch", name);
	else
		snprintf(tip, sizeof tip, "%s -> %s: %s", name,
			 box_name(L, net->m, up), amt);
	svg_rect(f, b->x, b->y, b->w, b->h,
		 (struct svg_paint){ b->collapsed ? SVG_EMPTY : 0xf5f5f5u,
				     0xb0b0b0u, 0.6 },
		 NULL);
	svg_rect(f, b->x, b->y, b->w, HEAD,
		 (struct svg_paint){ band, SVG_NONE, 0 }, tip);
	char shown[NAME_MAX_CHARS + 1];
	snprintf(shown, sizeof shown, "%s", name);
	svg_text(f, b->x + PAD, b->y + 11,
		 (struct svg_font){ 10, SVG_START, false, svg_ink_on(band) },
		 "%s", shown);
	if (b->collapsed) {
		svg_text(f, b->x + PAD, b->y + HEAD + 12,
			 (struct svg_font){ 9, SVG_START, false, SVG_INK },
			 "%ld nodes, none in the job", (long)L->sub_nodes[s]);
		return;
	}
	draw_nodes(f, L, net, p, s);
}

static void tree_draw(FILE *f, const struct svg_net *net, const void *lp,
		      const struct svg_panel *p)
{
	const struct tree_layout *L = lp;
	for (int32_t i = 0; i < L->norder; i++)
		draw_box(f, L, net, p, L->order[i]);
}

static void tree_legend(FILE *f, const void *lp, double x, double y)
{
	(void)lp;
	svg_text(f, x, y - 4,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK },
		 "switches");
	svg_rect(f, x, y, 70, 30,
		 (struct svg_paint){ 0xf5f5f5u, 0xb0b0b0u, 0.6 }, NULL);
	svg_rect(f, x, y, 70, 10,
		 (struct svg_paint){ svg_heat(0.7), SVG_NONE, 0 }, NULL);
	svg_rect(f, x + 4, y + 14, 7, 7,
		 (struct svg_paint){ SVG_IDLE, SVG_LINE, 0.5 }, NULL);
	svg_rect(f, x + 4, y + 21, 7, 3,
		 (struct svg_paint){ svg_heat(0.4), SVG_NONE, 0 }, NULL);
	svg_text(f, x + 78, y + 9,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "header: the switch's uplink");
	svg_text(f, x + 78, y + 24,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK },
		 "bar under a node: its own link");
}

const struct svg_kind svg_tree_kind = {
	.layout = tree_layout,
	.draw = tree_draw,
	.legend = tree_legend,
	.destroy = tree_destroy,
};
