/* Unit tests: geometric mapper (core/src/map/geom_*.c: the search, the
 * partitions, folding and selection). */
#include <math.h>
#include <stdint.h>

#include "map/geom_fold.h"
#include "map/geom_internal.h"
#include "map/geom_part.h"
#include "map/geom_select.h"
#include "testutil.h"
#include "input/alloc_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include <topoplace/conf.h>

/* A torus/mesh machine whose nodes n0..n(N-1) sit x-major. */
static tp_conf *make_conf(const char *dims, const char *wrap)
{
	char text[512];
	int x = 1, y = 1, z = 1;
	sscanf(dims, "%dx%dx%d", &x, &y, &z);
	snprintf(text, sizeof text,
		 "Network=torus Dims=%s Wrap=%s\nNodeName=n[0-%d] CoordOrder=x-major\n",
		 dims, wrap, x * y * z - 1);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "test.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

/* Node name at coordinates (x, y, z) of an X x Y grid. */
static void node_name(char *buf, size_t len, int x, int y, int z, int X, int Y)
{
	snprintf(buf, len, "n%d", x + X * (y + Y * z));
}

static uint64_t rng_state = 12345;
static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % n;
}

/* Allocation of the box [x0, x0+bx) x [y0, y0+by) x [z0, z0+bz) (coordinates
 * taken modulo the machine), listed in a shuffled order. */
static tp_alloc *box_alloc(const tp_machine *m, int x0, int y0, int z0, int bx,
			   int by, int bz, int slots)
{
	int X = tp_machine_dim(m, 0), Y = tp_machine_dim(m, 1), Z = tp_machine_dim(m, 2);
	int n = bx * by * bz;
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	int k = 0;
	for (int z = 0; z < bz; z++)
		for (int y = 0; y < by; y++)
			for (int x = 0; x < bx; x++) {
				char name[32];
				node_name(name, sizeof name, (x0 + x) % X, (y0 + y) % Y,
					  (z0 + z) % Z, X, Y);
				ids[k++] = tp_machine_find_node(m, name);
			}
	for (int i = n - 1; i > 0; i--) {
		int j = (int)rnd((uint32_t)i + 1);
		int32_t t = ids[i];
		ids[i] = ids[j];
		ids[j] = t;
	}
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, ids, n, slots, &a, NULL), 0);
	free(ids);
	return a;
}

static double geom_avg(const tp_graph *g, const tp_alloc *a, tp_geom_opts *o,
		       tp_geom_report *rep)
{
	int32_t n = tp_graph_ntasks(g);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	tp_error err;
	ck_assert_msg(tp_geom_map(g, a, o, map, rep, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_mapping_validate(g, a, map, &err) == 0, "%s", err.msg);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, false, &mt, NULL), 0);
	free(map);
	return mt.avg_hop_bytes;
}

START_TEST(select_orders)
{
	tp__pt p[200];
	for (int i = 0; i < 200; i++) {
		p[i].key = rnd(50);
		p[i].id = (uint32_t)i;
		p[i].w = 1;
	}
	tp__select(p, 200, 77);
	for (int i = 0; i < 77; i++)
		ck_assert(p[i].key < p[77].key ||
			  (p[i].key == p[77].key && p[i].id < p[77].id));
	for (int i = 78; i < 200; i++)
		ck_assert(p[i].key > p[77].key ||
			  (p[i].key == p[77].key && p[i].id > p[77].id));
	/* weighted: weights 1..4, target half of the total */
	uint64_t total = 0;
	for (int i = 0; i < 200; i++) {
		p[i].w = 1 + (uint32_t)(i % 4);
		total += p[i].w;
	}
	uint64_t wl;
	int64_t cut = tp__wselect(p, 200, total / 2, &wl);
	ck_assert(cut > 0 && cut < 200);
	uint64_t sum = 0;
	for (int64_t i = 0; i < cut; i++)
		sum += p[i].w;
	ck_assert_uint_eq(sum, wl);
	ck_assert(wl + 4 >= total / 2 && wl <= total / 2 + 4);
}
END_TEST

START_TEST(seam_shift_moves_low_side)
{
	tp_conf *c = make_conf("16x4x1", "yes");
	const tp_machine *m = tp_conf_machine(c);
	/* x in {0,1,14,15}: the gap 2..13 is the seam */
	const char *names = "n0,n1,n14,n15";
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, names, 1, "t", &a, NULL), 0);
	int sh[4 * 3];
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 1);
	ck_assert_int_eq(sh[0 * 3], 16);
	ck_assert_int_eq(sh[1 * 3], 17);
	ck_assert_int_eq(sh[2 * 3], 14);
	ck_assert_int_eq(sh[3 * 3], 15);
	tp_alloc_destroy(a);
	/* contiguous x 3..5: the natural wrap gap is largest, nothing moves */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n3,n4,n5", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 0);
	ck_assert_int_eq(sh[0], 3);
	tp_alloc_destroy(a);
	/* equal gaps (0, 5, 10 on a ring of 15): no shift */
	tp_conf_destroy(c);
	c = make_conf("15x1x1", "yes");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n0,n5,n10", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 0);
	tp_alloc_destroy(a);
	/* a mesh never shifts */
	tp_conf_destroy(c);
	c = make_conf("16x4x1", "no");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n0,n1,n14,n15", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 0);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Every plane occupied: no gap to put the seam in, so it goes between the
 * two adjacent planes with the fewest nodes together. */
START_TEST(seam_between_sparsest_planes)
{
	tp_conf *c = make_conf("6x2x1", "yes");
	const tp_machine *m = tp_conf_machine(c);
	/* nodes per x plane 2,2,1,1,2,2: the pair (2,3) holds 2, the fewest */
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n0,n6,n1,n7,n2,n3,n4,n10,n5,n11",
						1, "t", &a, NULL), 0);
	int sh[10 * 3];
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 1);
	int want[10] = { 6, 6, 7, 7, 8, 3, 4, 4, 5, 5 };
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(sh[i * 3], want[i]);
	tp_alloc_destroy(a);
	/* the fewest are across the natural wrap (planes 5 and 0): no shift */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n0,n1,n7,n2,n8,n3,n9,n4,n10,n5",
						1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 0);
	ck_assert_int_eq(sh[0], 0);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);

	/* a 2e9 extent with four nodes: the gap after x = 5 is the seam, and
	 * memory follows the nodes (a counter per coordinate was 8 GB) */
	int dims[1] = { 2000000000 };
	bool wrap[1] = { true };
	tp_machine *big = NULL;
	ck_assert_int_eq(tp_machine_create(&big, 1, dims, wrap, NULL), 0);
	int xs[4] = { 0, 1, 1999999999, 5 };
	int32_t ids[4];
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "b%d", i);
		ids[i] = tp_machine_add_node(big, name, &xs[i], NULL);
		ck_assert_int_ge(ids[i], 0);
	}
	ck_assert_int_eq(tp_alloc_from_nodes(big, ids, 4, 1, &a, NULL), 0);
	ck_assert_int_eq(tp_geom_seam_shift(a, sh), 1);
	ck_assert_int_eq(sh[0], 2000000000);
	ck_assert_int_eq(sh[1], 2000000001);
	ck_assert_int_eq(sh[2], 1999999999);
	ck_assert_int_eq(sh[3], 2000000005);
	tp_alloc_destroy(a);
	tp_machine_destroy(big);
}
END_TEST

/* A box of the stencil's shape in any orientation, even across the seam and
 * listed in random order, maps with exactly one hop per edge. */
START_TEST(box_is_optimal)
{
	static const struct {
		const char *stencil;
		int x0, y0, z0, bx, by, bz;
	} cases[] = {
		{ "4x4x4:7pt", 0, 0, 0, 4, 4, 4 },
		{ "8x4x2:7pt", 6, 1, 3, 2, 8, 4 },     /* permuted, crosses x seam */
		{ "6x3x2:7pt", 10, 9, 0, 3, 2, 6 },    /* odd sizes, both seams */
		{ "2x4x8:27pt", 9, 0, 5, 8, 2, 4 },
		{ "5x7:5pt", 2, 1, 4, 7, 5, 1 },       /* 2-D pattern, 3-D box */
	};
	tp_conf *c = make_conf("12x10x8", "yes");
	const tp_machine *m = tp_conf_machine(c);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tp_graph *g = NULL;
		tp_error err;
		ck_assert_msg(tp_graph_from_stencil(&g, cases[i].stencil, 0, &err) == 0, "%s", err.msg);
		tp_alloc *a = box_alloc(m, cases[i].x0, cases[i].y0, cases[i].z0,
					cases[i].bx, cases[i].by, cases[i].bz, 1);
		tp_geom_opts o;
		tp_geom_opts_default(&o);
		tp_geom_report rep;
		int32_t n = tp_graph_ntasks(g);
		int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
		ck_assert_int_eq(tp_geom_map(g, a, &o, map, &rep, &err), 0);
		tp_metrics mt;
		ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, NULL), 0);
		/* every stencil edge between nodes at distance 1 (27pt: the
		 * optimum is the grid's own distances, max dilation 3) */
		if (strstr(cases[i].stencil, "27pt"))
			ck_assert_int_le(mt.max_dilation, 3);
		else
			ck_assert_msg(mt.max_dilation == 1,
				      "%s: max dilation %lld (avg %.3f, variant %s)",
				      cases[i].stencil, (long long)mt.max_dilation, mt.avg_hop_bytes,
				      rep.best_desc);
		free(map);
		tp_alloc_destroy(a);
		tp_graph_destroy(g);
	}
	tp_conf_destroy(c);
}
END_TEST

START_TEST(sparse_beats_block)
{
	tp_conf *c = make_conf("16x16x16", "yes");
	const tp_machine *m = tp_conf_machine(c);
	int32_t ids[512];
	char used[4096] = { 0 };
	for (int k = 0; k < 512;) {
		uint32_t r = rnd(4096);
		if (!used[r]) {
			used[r] = 1;
			ids[k++] = (int32_t)r;
		}
	}
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, ids, 512, 1, &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8x8:7pt", 512, NULL), 0);
	int32_t map[512];
	ck_assert_int_eq(tp_map_block(a, 512, map, NULL), 0);
	double block = tp_metrics_hop_bytes(g, a, map) / tp_graph_total_bytes(g);
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	tp_geom_report rep;
	double geo = geom_avg(g, a, &o, &rep);
	ck_assert_msg(geo < 0.6 * block, "geometric %.3f vs block %.3f", geo, block);
	ck_assert_int_eq(rep.variants_total, 1 + 6 * 6 * 8);
	ck_assert_int_eq(rep.variants_scored, rep.variants_total);
	/* rotations only and the single variant are never better than full */
	o.search = TP_SEARCH_ROTATIONS;
	tp_geom_report r2;
	double rot = geom_avg(g, a, &o, &r2);
	ck_assert_int_eq(r2.variants_total, 1 + 36);
	ck_assert(rot >= geo);
	o.search = TP_SEARCH_NONE;
	double one = geom_avg(g, a, &o, &r2);
	ck_assert_int_eq(r2.variants_total, 1);
	ck_assert(one >= rot);
	/* multi-jagged with 4 parts per level still gives a valid, good map */
	o.search = TP_SEARCH_FULL;
	o.parts_per_level = 4;
	double mj = geom_avg(g, a, &o, &r2);
	ck_assert(mj < 0.7 * block);
	/* congestion metric scores, and finds something no worse on congestion */
	o.parts_per_level = 2;
	o.metric = TP_METRIC_CONGESTION;
	geom_avg(g, a, &o, &r2);
	tp_alloc_destroy(a);
	tp_graph_destroy(g);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(deterministic_across_threads)
{
	tp_conf *c = make_conf("12x12x12", "yes");
	const tp_machine *m = tp_conf_machine(c);
	int32_t ids[216];
	for (int k = 0; k < 216; k++)
		ids[k] = (int32_t)((k * 7919) % 1728);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, ids, 216, 4, &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "12x12x6:7pt:periodic=x", 864, NULL), 0);
	int32_t m1[864], m2[864], m3[864];
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	o.nthreads = 1;
	ck_assert_int_eq(tp_geom_map(g, a, &o, m1, NULL, NULL), 0);
	o.nthreads = 2;
	ck_assert_int_eq(tp_geom_map(g, a, &o, m2, NULL, NULL), 0);
	o.nthreads = 4;
	ck_assert_int_eq(tp_geom_map(g, a, &o, m3, NULL, NULL), 0);
	ck_assert_mem_eq(m1, m2, sizeof m1);
	ck_assert_mem_eq(m1, m3, sizeof m1);
	tp_alloc_destroy(a);
	tp_graph_destroy(g);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(heterogeneous_slots_and_subset)
{
	tp_conf *c = make_conf("8x8x8", "yes");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0-15],n[100-115]", 1, "t", &a, NULL), 0);
	/* 32 nodes: slots 1,2,3,4 repeating = 80 slots */
	for (int i = 0; i < 32; i++)
		ck_assert_int_eq(tp_alloc_set_slots(a, i, 1 + i % 4, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "10x8:5pt", 80, NULL), 0);
	int32_t map[80];
	tp_geom_report rep;
	tp_error err;
	ck_assert_msg(tp_geom_map(g, a, NULL, map, &rep, &err) == 0, "%s", err.msg);
	int count[32] = { 0 };
	for (int t = 0; t < 80; t++)
		count[map[t]]++;
	for (int i = 0; i < 32; i++)
		ck_assert_int_eq(count[i], 1 + i % 4);   /* exactly its slots */
	ck_assert(!rep.subset_selected);
	tp_graph_destroy(g);

	/* fewer tasks than slots: surplus dropped, result still valid */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "6x6:5pt", 36, NULL), 0);
	ck_assert_msg(tp_geom_map(g, a, NULL, map, &rep, &err) == 0, "%s", err.msg);
	ck_assert(rep.subset_selected);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(subset_picks_a_compact_group)
{
	/* 1-D ring of 64: two clusters of 8 nodes; 8 tasks fit in either, so
	 * the chosen nodes must all come from one cluster */
	tp_conf *c = make_conf("64x1x1", "yes");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[3-10],n[40-47]", 1, "t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x1:5pt", 8, NULL), 0);
	int32_t map[8];
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, NULL, NULL), 0);
	int lo = 0, hi = 0;
	for (int t = 0; t < 8; t++)
		if (map[t] < 8)
			lo++;
		else
			hi++;
	ck_assert(lo == 8 || hi == 8);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, false, &mt, NULL), 0);
	ck_assert_double_eq(mt.avg_hop_bytes, 1.0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(bad_input_and_budget)
{
	tp_conf *c = make_conf("8x8x8", "yes");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0-7]", 1, "t", &a, NULL), 0);
	tp_graph *g = NULL;
	tp_error err;
	int32_t map[64];
	/* no coordinates */
	int32_t u[] = { 0, 1 }, v[] = { 1, 2 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 2, u, v, NULL, "t", NULL), 0);
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "no task coordinates");
	tp_graph_destroy(g);
	/* more tasks than slots */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:5pt", 16, NULL), 0);
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "only 8 slots");
	/* bad parts per level */
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	o.parts_per_level = 1;
	tp_alloc_destroy(a);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0-15]", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_geom_map(g, a, &o, map, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "parts per level");
	/* a tiny budget still returns a valid mapping (the first variant) */
	tp_geom_opts_default(&o);
	o.time_budget_ms = 1e-9;
	o.nthreads = 1;
	tp_geom_report rep;
	ck_assert_int_eq(tp_geom_map(g, a, &o, map, &rep, &err), 0);
	ck_assert(rep.budget_hit);
	ck_assert_int_lt(rep.variants_scored, rep.variants_total);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* A torus or mesh of any dimension ("4x2x2x2"), nodes n0.. x-major. */
static tp_conf *make_conf_nd(const char *dims, const char *wrap, int *ext, int *nd)
{
	char text[512];
	int64_t total = 1;
	const char *c = dims;
	*nd = 0;
	while (*c) {
		ext[*nd] = (int)strtol(c, (char **)&c, 10);
		total *= ext[(*nd)++];
		if (*c == 'x')
			c++;
	}
	snprintf(text, sizeof text,
		 "Network=torus Dims=%s Wrap=%s\nNodeName=n[0-%lld] CoordOrder=x-major\n",
		 dims, wrap, (long long)total - 1);
	tp_conf *conf = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "test.conf", &conf, &err) == 0, "%s", err.msg);
	return conf;
}

/* The box of extents len[] from first[] (modulo the machine) of an N-D
 * machine made by make_conf_nd, in node order. */
static tp_alloc *box_alloc_nd(const tp_machine *m, const int *ext, int nd,
			      const int *first, const int *len, int slots)
{
	int64_t n = 1, total = 1;
	for (int d = 0; d < nd; d++) {
		n *= len[d];
		total *= ext[d];
	}
	char *in = calloc((size_t)total, 1);
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	for (int64_t k = 0; k < n; k++) {
		int64_t r = k, id = 0, st = 1;
		for (int d = 0; d < nd; d++) {
			id += ((first[d] + r % len[d]) % ext[d]) * st;
			r /= len[d];
			st *= ext[d];
		}
		in[id] = 1;
	}
	int64_t k = 0;
	for (int64_t i = 0; i < total; i++)
		if (in[i])
			ids[k++] = (int32_t)i;
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, ids, (int32_t)n, slots, &a, NULL), 0);
	free(in);
	free(ids);
	return a;
}

/* n random nodes of a make_conf machine of total nodes. */
static tp_alloc *random_alloc(const tp_machine *m, int total, int n, int slots)
{
	char *used = calloc((size_t)total, 1);
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	for (int k = 0; k < n;) {
		uint32_t r = rnd((uint32_t)total);
		if (!used[r]) {
			used[r] = 1;
			ids[k++] = (int32_t)r;
		}
	}
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, ids, n, slots, &a, NULL), 0);
	free(used);
	free(ids);
	return a;
}

START_TEST(budget_tiny_midsize)
{
	/* 32,768 tasks, ~95k edges: screened scoring; 1 ms is far too little
	 * for the 290 variants, but a valid mapping must come back */
	tp_conf *c = make_conf("32x32x32", "yes");
	tp_alloc *a = random_alloc(tp_conf_machine(c), 32768, 4096, 8);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32x32:7pt", 0, NULL), 0);
	int32_t *map = malloc(sizeof(int32_t) * 32768);
	for (int threads = 1; threads <= 2; threads++) {
		tp_geom_opts o;
		tp_geom_opts_default(&o);
		o.time_budget_ms = 1;
		o.nthreads = threads;
		tp_geom_report rep;
		tp_error err;
		ck_assert_msg(tp_geom_map(g, a, &o, map, &rep, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
		ck_assert(rep.budget_hit);
		ck_assert_int_ge(rep.variants_scored, 1);
		ck_assert_int_lt(rep.variants_scored, rep.variants_total);
		/* 288 permutations, longest extent, one blocked (2x2x2) */
		ck_assert_int_eq(rep.variants_total, 290);
		/* the score reported is the mapping's exact hop-bytes */
		ck_assert_double_eq_tol(rep.best_score, tp_metrics_hop_bytes(g, a, map), 1e-6);
		/* bounded (auto, after another candidate's result): past the
		 * budget before a first variant, no result */
		o.time_budget_ms = 1e-3;
		ck_assert_int_eq(tp__geom_map_bounded(g, a, &o, map, &rep, &err), TP_ETIME);
		tp_assert_err_has(&err, "geometric mapping: time budget of 0.001 ms reached before a first variant");
		ck_assert_int_eq(tp_geom_map(g, a, &o, map, &rep, &err), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	}
	/* without a budget, bounded is the plain search */
	tp_conf *c8 = make_conf("8x8x8", "yes");
	tp_alloc *a8 = random_alloc(tp_conf_machine(c8), 512, 128, 4);
	tp_graph *g8 = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g8, "8x8x8:7pt", 0, NULL), 0);
	int32_t m1[512], m2[512];
	tp_geom_opts o8;
	tp_geom_opts_default(&o8);
	ck_assert_int_eq(tp_geom_map(g8, a8, &o8, m1, NULL, NULL), 0);
	ck_assert_int_eq(tp__geom_map_bounded(g8, a8, &o8, m2, NULL, NULL), 0);
	ck_assert_mem_eq(m1, m2, sizeof m1);
	tp_graph_destroy(g8);
	tp_alloc_destroy(a8);
	tp_conf_destroy(c8);
	free(map);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Partition the points of ps twice, ranks read from the table (w = the
 * weight) and packed into the points (tp__pointset_pack): the same split
 * tree and the same leaves, or the same task order. */
static void assert_packed_same(pointset *ps, uint32_t w, const side_order *so,
			       int k, bool nodes)
{
	int64_t n = ps->n;
	tp__pt *p = malloc(sizeof *p * (size_t)n), *tmp = malloc(sizeof *p * (size_t)n);
	uint64_t *hist = malloc(sizeof(uint64_t) * tp__pointset_hist_len(ps));
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *leaf[2], order[2][600], nl[2];
	tree tr[2];
	memset(tr, 0, sizeof tr);
	if (!nodes)
		w = 1;   /* one slot per task */
	for (int64_t i = 0; i < n; i++)
		ids[i] = (int32_t)i;
	tp__part_side side = { ps, so, hist, tmp, INFINITY };
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			tp__pointset_pack(ps, w);
		ck_assert(ps->packed == (pass == 1));
		leaf[pass] = malloc(sizeof(int32_t) * (size_t)n);
		for (int64_t i = 0; i < n; i++)
			p[i] = tp__pointset_pt(ps, (uint32_t)i, w);
		if (nodes) {
			tp__node_cuts cuts = { ids, k, false, &tr[pass], leaf[pass], 0 };
			ck_assert_int_eq(tp__part_nodes(&side, &cuts, p, n), 0);
			nl[pass] = cuts.nleaves;
		} else {
			tree t = { 0 };   /* halves, then pairs: the tasks' tree */
			tp__node_cuts cuts = { ids, 2, false, &t, leaf[0], 0 };
			ck_assert_int_eq(tp__part_nodes(&side, &cuts, p, n), 0);
			nl[0] = cuts.nleaves;
			for (int64_t i = 0; i < n; i++)
				p[i] = tp__pointset_pt(ps, (uint32_t)i, 1);
			ck_assert_int_eq(tp__part_tasks(&side, &t, p, n, NULL), 0);
			for (int64_t i = 0; i < n; i++)
				order[pass][i] = (int32_t)p[i].id;
			free(t.v);
		}
		ps->packed = false;
	}
	if (nodes) {
		ck_assert_int_eq(nl[0], nl[1]);
		ck_assert_int_eq(tr[0].len, tr[1].len);
		ck_assert(!memcmp(tr[0].v, tr[1].v, sizeof(int32_t) * (size_t)tr[0].len));
		ck_assert(!memcmp(leaf[0], leaf[1], sizeof(int32_t) * (size_t)nl[0]));
	} else {
		ck_assert(!memcmp(order[0], order[1], sizeof(int32_t) * (size_t)n));
	}
	free(tr[0].v);
	free(tr[1].v);
	free(leaf[0]);
	free(leaf[1]);
	free(p);
	free(tmp);
	free(hist);
	free(ids);
}

START_TEST(packed_ranks_same_partition)
{
	/* 500 points, integer coordinates: a wide one (0..1799, parts often
	 * spread more than 2n + 16: the weighted quickselect's path), a
	 * narrow one with many ties, and one of ranks by sorting */
	enum { N = 500 };
	static double pos[N * 3];
	rng_state = 777;
	for (int i = 0; i < N; i++) {
		pos[i * 3] = rnd(1800);
		pos[i * 3 + 1] = rnd(7);
		pos[i * 3 + 2] = rnd(1000) / 7.0;
	}
	pointset ps;
	ck_assert_int_eq(tp__pointset_init(&ps, N, 3, pos), 0);
	ck_assert(!ps.packed);
	side_order so[3] = { { .perm = { 0, 1, 2 } },
			     { .perm = { 2, 0, 1 }, .reflect = { true, false, true } },
			     { .perm = { 0, 1, 2 }, .longest = true } };
	for (int v = 0; v < 3; v++)
		for (uint32_t w = 1; w <= 4; w += 3) {
			assert_packed_same(&ps, w, &so[v], 2, true);
			assert_packed_same(&ps, w, &so[v], 3, true);
			assert_packed_same(&ps, w, &so[v], 2, false);
		}
	/* ranks that do not fit in 32 bits together stay in the table */
	uint32_t keep = ps.maxrank[1];
	ps.maxrank[1] = 1u << 20;
	tp__pointset_pack(&ps, 1);
	ck_assert(!ps.packed);
	ps.maxrank[1] = keep;
	/* nor do unequal weights */
	tp__pointset_pack(&ps, 0);
	ck_assert(!ps.packed);
	tp__pointset_free(&ps);
}
END_TEST

/* Node partition of ps (weights w[i]) into tree *t, checked against
 * expect (NULL: none); its leaves into leaf, their count returned. */
static int32_t part_nodes_split(const pointset *ps, const side_order *so, int k,
				const uint32_t *w, const tree *expect, tree *t,
				int32_t *leaf, bool split)
{
	int64_t n = ps->n;
	tp__pt *p = malloc(sizeof *p * (size_t)n), *tmp = malloc(sizeof *p * (size_t)n);
	uint64_t *hist = malloc(sizeof(uint64_t) * tp__pointset_hist_len(ps));
	int32_t *ids = malloc(sizeof(int32_t) * (size_t)n);
	for (int64_t i = 0; i < n; i++) {
		ids[i] = (int32_t)i;
		p[i] = tp__pointset_pt(ps, (uint32_t)i, w[i]);
	}
	memset(t, 0, sizeof *t);
	t->expect = expect;
	tp__part_side side = { ps, so, hist, tmp, INFINITY };
	tp__node_cuts cuts = { ids, k, split, t, leaf, 0 };
	ck_assert_int_eq(tp__part_nodes(&side, &cuts, p, n), 0);
	int32_t nl = cuts.nleaves;
	free(p);
	free(tmp);
	free(hist);
	free(ids);
	return nl;
}

static int32_t part_nodes_with(const pointset *ps, const side_order *so, int k,
			       const uint32_t *w, const tree *expect, tree *t,
			       int32_t *leaf)
{
	return part_nodes_split(ps, so, k, w, expect, t, leaf, false);
}

/* The task order of a partition of ps's points (one slot each) into the
 * counts of tree tr. */
static void part_tasks_with(const pointset *ps, const side_order *so,
			    const tree *tr, int32_t *order)
{
	int64_t n = ps->n;
	tp__pt *p = malloc(sizeof *p * (size_t)n), *tmp = malloc(sizeof *p * (size_t)n);
	uint64_t *hist = malloc(sizeof(uint64_t) * tp__pointset_hist_len(ps));
	for (int64_t i = 0; i < n; i++)
		p[i] = tp__pointset_pt(ps, (uint32_t)i, 1);
	tp__part_side side = { ps, so, hist, tmp, INFINITY };
	ck_assert_int_eq(tp__part_tasks(&side, tr, p, n, NULL), 0);
	for (int64_t i = 0; i < n; i++)
		order[i] = (int32_t)p[i].id;
	free(p);
	free(tmp);
	free(hist);
}

/* part_tasks_with for a grid's point set, whose points are made from the
 * grid: p holds garbage on the way in.  The order is taken three ways, the
 * same: from p, as the task at each place, and as each task's place. */
static void part_tasks_grid(const pointset *ps, const side_order *so,
			    const tree *tr, int32_t *order)
{
	int64_t n = ps->n;
	tp__pt *p = malloc(sizeof *p * (size_t)n), *tmp = malloc(sizeof *p * (size_t)n);
	uint64_t *hist = malloc(sizeof(uint64_t) * tp__pointset_hist_len(ps));
	int32_t *at = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *pos = malloc(sizeof(int32_t) * (size_t)n);
	memset(p, 0xa5, sizeof *p * (size_t)n);
	tp__part_side side = { ps, so, hist, tmp, INFINITY };
	ck_assert_int_eq(tp__part_tasks(&side, tr, p, n, NULL), 0);
	for (int64_t i = 0; i < n; i++)
		order[i] = (int32_t)p[i].id;
	tp__task_order by_place = { .at = at }, by_task = { .pos = pos };
	memset(p, 0xa5, sizeof *p * (size_t)n);
	memset(at, 0xff, sizeof(int32_t) * (size_t)n);
	ck_assert_int_eq(tp__part_tasks(&side, tr, p, n, &by_place), 0);
	ck_assert(!memcmp(at, order, sizeof(int32_t) * (size_t)n));
	memset(pos, 0xff, sizeof(int32_t) * (size_t)n);
	ck_assert_int_eq(tp__part_tasks(&side, tr, p, n, &by_task), 0);
	for (int64_t i = 0; i < n; i++)
		ck_assert_int_eq(pos[order[i]], i);
	free(at);
	free(pos);
	free(p);
	free(tmp);
	free(hist);
}

/* The predicted split tree of equal slots, implicit (nothing stored) or
 * written out: node partitions checked against it keep nothing when they
 * match and store exactly their own tree when they do not (first at the
 * root, then only deep down), and task partitions follow either the same
 * way. */
START_TEST(implicit_tree_same_partition)
{
	enum { N = 360 };
	static double pos[N * 3];
	rng_state = 4242;
	for (int i = 0; i < N; i++) {
		pos[i * 3] = rnd(12);
		pos[i * 3 + 1] = rnd(9);
		pos[i * 3 + 2] = rnd(7);
	}
	pointset ps;
	ck_assert_int_eq(tp__pointset_init(&ps, N, 3, pos), 0);
	side_order so = { .perm = { 1, 0, 2 }, .reflect = { false, true, false } };
	static uint32_t w[N];
	static int32_t leaf[3][N], order[2][N * 3];
	for (int k = 2; k <= 5; k++)
		for (uint32_t wc = 1; wc <= 3; wc += 2) {
			tree full = { 0 }, t[3];
			ck_assert_int_eq(tp__tree_predict(&full, N, wc, k), 0);
			tree rule = { .len = full.len, .rule_n = N, .rule_w = wc, .rule_k = k };
			for (int i = 0; i < N; i++)
				w[i] = wc;
			int32_t nl0 = part_nodes_with(&ps, &so, k, w, NULL, &t[0], leaf[0]);
			/* the tree stored without expectation is the predicted one */
			ck_assert_int_eq(t[0].len, full.len);
			ck_assert(!memcmp(t[0].v, full.v, sizeof(int32_t) * (size_t)full.len));
			/* checked against the rule: nothing stored, same leaves */
			int32_t nl1 = part_nodes_with(&ps, &so, k, w, &rule, &t[1], leaf[1]);
			ck_assert_ptr_null(t[1].v);
			ck_assert_ptr_eq(t[1].expect, &rule);
			ck_assert_int_eq(t[1].len, full.len);
			ck_assert_int_eq(nl0, nl1);
			ck_assert(!memcmp(leaf[0], leaf[1], sizeof(int32_t) * N));
			/* tasks (wc per node) along the implicit tree as along
			 * the stored one */
			pointset tasks;
			static double tpos[N * 3 * 3];
			for (int i = 0; i < N * (int)wc; i++)
				for (int d = 0; d < 3; d++)
					tpos[i * 3 + d] = rnd(20);
			ck_assert_int_eq(tp__pointset_init(&tasks, N * (int32_t)wc, 3, tpos), 0);
			part_tasks_with(&tasks, &so, &full, order[0]);
			part_tasks_with(&tasks, &so, &rule, order[1]);
			ck_assert(!memcmp(order[0], order[1], sizeof(int32_t) * N * wc));
			tp__pointset_free(&tasks);
			/* two nodes of the right half weigh wc - 1 and wc + 1
			 * (sums unchanged until they are cut apart): the prefix
			 * that matched is written out, then the rest stored */
			if (wc > 1) {
				int hi[2] = { 0, 1 };
				for (int i = 0; i < N; i++)
					if (ps.rank[i * 3 + 1] < ps.rank[hi[0] * 3 + 1])
						hi[1] = hi[0], hi[0] = i;
				w[hi[0]] = wc - 1;
				w[hi[1]] = wc + 1;
				free(t[0].v);
				part_nodes_with(&ps, &so, k, w, NULL, &t[0], leaf[0]);
				int32_t nl2 = part_nodes_with(&ps, &so, k, w, &rule, &t[2], leaf[2]);
				ck_assert_ptr_null(t[2].expect);
				ck_assert_ptr_nonnull(t[2].v);
				ck_assert_int_eq(t[2].len, t[0].len);
				ck_assert(!memcmp(t[0].v, t[2].v, sizeof(int32_t) * (size_t)t[0].len));
				ck_assert(!memcmp(leaf[0], leaf[2], sizeof(int32_t) * (size_t)nl2));
				ck_assert(memcmp(t[0].v, full.v, sizeof(int32_t) * 4) == 0 ||
					  k > 2);
				free(t[2].v);
			}
			/* a rule of other slots differs at the root */
			for (int i = 0; i < N; i++)
				w[i] = wc;
			tree other = rule;
			other.rule_w = wc + 1;
			part_nodes_with(&ps, &so, k, w, &other, &t[2], leaf[2]);
			ck_assert_ptr_nonnull(t[2].v);
			ck_assert_int_eq(t[2].len, full.len);
			ck_assert(!memcmp(t[2].v, full.v, sizeof(int32_t) * (size_t)full.len));
			free(t[2].v);
			free(t[0].v);
			free(full.v);
		}
	tp__pointset_free(&ps);
}
END_TEST

/* A large root's last part cut on a second thread: the same tree and
 * leaves, whether both sides follow the implicit tree, either one leaves
 * it (odd weights in the first or the last part, sums unchanged at the
 * root), or the tree is stored (unequal weights, no expectation). */
START_TEST(split_root_same_partition)
{
	enum { N = 400000 };
	double *pos = malloc(sizeof(double) * N * 3);
	uint32_t *w = malloc(sizeof(uint32_t) * N);
	int32_t *leaf[2] = { malloc(sizeof(int32_t) * N), malloc(sizeof(int32_t) * N) };
	rng_state = 99;
	int lo = 0, hi = 0;   /* points of the lowest and highest x */
	for (int i = 0; i < N; i++) {
		pos[i * 3] = rnd(100);
		pos[i * 3 + 1] = rnd(80);
		pos[i * 3 + 2] = rnd(60);
		lo = pos[i * 3] < pos[lo * 3] ? i : lo;
		hi = pos[i * 3] > pos[hi * 3] ? i : hi;
	}
	int lo2 = lo == 0 ? 1 : 0, hi2 = hi == 0 ? 1 : 0;
	for (int i = 0; i < N; i++) {
		if (i != lo && pos[i * 3] <= pos[lo2 * 3])
			lo2 = i;
		if (i != hi && pos[i * 3] >= pos[hi2 * 3])
			hi2 = i;
	}
	pointset ps;
	ck_assert_int_eq(tp__pointset_init(&ps, N, 3, pos), 0);
	side_order so = { .perm = { 0, 1, 2 } };
	for (int k = 2; k <= 3; k++)
		for (int scene = 0; scene < 4; scene++) {
			tree rule = { .rule_n = N, .rule_w = 2, .rule_k = k }, t[2];
			for (int i = 0; i < N; i++)
				w[i] = scene == 3 ? 1 + rnd(4) : 2;
			if (scene == 1)   /* the first part leaves the rule */
				w[lo] = 1, w[lo2] = 3;
			if (scene == 2)   /* the last part (the thread's) */
				w[hi] = 1, w[hi2] = 3;
			const tree *e = scene == 3 ? NULL : &rule;
			int32_t nl[2];
			for (int split = 0; split < 2; split++)
				nl[split] = part_nodes_split(&ps, &so, k, w, e, &t[split],
							     leaf[split], split);
			ck_assert_int_eq(nl[0], N);
			ck_assert_int_eq(nl[1], N);
			ck_assert(!memcmp(leaf[0], leaf[1], sizeof(int32_t) * N));
			ck_assert_int_eq(t[0].len, t[1].len);
			ck_assert((t[0].v == NULL) == (t[1].v == NULL));
			ck_assert((t[0].v == NULL) == (scene == 0));
			if (t[0].v)
				ck_assert(!memcmp(t[0].v, t[1].v,
						  sizeof(int32_t) * (size_t)t[0].len));
			free(t[0].v);
			free(t[1].v);
		}
	tp__pointset_free(&ps);
	free(pos);
	free(w);
	free(leaf[0]);
	free(leaf[1]);
}
END_TEST

/* tp_geom_map and the eager search agree to the byte. */
static void assert_lazy_is_eager(const tp_graph *g, const tp_alloc *a,
				 const tp_geom_opts *o, const char *what)
{
	int32_t n = tp_graph_ntasks(g);
	int32_t *m1 = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *m2 = malloc(sizeof(int32_t) * (size_t)n);
	tp_geom_report r1, r2;
	tp_error err;
	ck_assert_msg(tp_geom_map(g, a, o, m1, &r1, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(tp__geom_map_eager(g, a, o, m2, &r2, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(memcmp(m1, m2, sizeof(int32_t) * (size_t)n) == 0,
		      "%s: lazy %s (%.0f) vs eager %s (%.0f)", what, r1.best_desc,
		      r1.best_score, r2.best_desc, r2.best_score);
	ck_assert_int_eq(r1.best_variant, r2.best_variant);
	ck_assert_double_eq(r1.best_score, r2.best_score);
	ck_assert_int_eq(r1.variants_scored, r1.variants_total);
	ck_assert_int_eq(r2.variants_scored, r2.variants_total);
	ck_assert(!r1.budget_hit && !r2.budget_hit);
	free(m1);
	free(m2);
}

START_TEST(lazy_matches_eager)
{
	tp_conf *c = make_conf("16x16x16", "yes");
	const tp_machine *m = tp_conf_machine(c);
	tp_geom_opts o;
	tp_graph *g = NULL;
	/* exact scoring, one slot per node, 289 variants */
	tp_alloc *a = random_alloc(m, 4096, 512, 1);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8x8:7pt", 0, NULL), 0);
	for (int threads = 1; threads <= 2; threads++) {
		tp_geom_opts_default(&o);
		o.nthreads = threads;
		assert_lazy_is_eager(g, a, &o, "8x8x8 1/node");
		o.parts_per_level = 3;
		assert_lazy_is_eager(g, a, &o, "8x8x8 3 parts");
		o.parts_per_level = 2;
		o.metric = TP_METRIC_CONGESTION;
		assert_lazy_is_eager(g, a, &o, "8x8x8 congestion");
	}
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	/* unequal slots: a split tree per machine variant */
	a = random_alloc(m, 4096, 200, 1);
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(tp_alloc_set_slots(a, i, 1 + i % 3, NULL), 0);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "19x21:5pt", 0, NULL), 0);
	tp_geom_opts_default(&o);
	assert_lazy_is_eager(g, a, &o, "19x21 unequal slots (399)");
	tp_graph_destroy(g);
	/* more slots than tasks: closest subset first */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "12x12x2:7pt", 0, NULL), 0);
	assert_lazy_is_eager(g, a, &o, "12x12x2 subset");
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	/* screened scoring (~95k edges), 8 slots per node */
	c = make_conf("32x32x32", "yes");
	a = random_alloc(tp_conf_machine(c), 32768, 4096, 8);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32x32:7pt", 0, NULL), 0);
	for (int threads = 1; threads <= 2; threads++) {
		tp_geom_opts_default(&o);
		o.nthreads = threads;
		assert_lazy_is_eager(g, a, &o, "32^3 screened");
	}
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* A stencil's grid positions are ranked from the grid, never written out;
 * the same positions given as coordinates map the same way, and
 * tp_graph_coords shows them. */
/* A node point set whose ranks pack keeps one word a point
 * (tp__pointset_alloc_ranked): every rank reads back as written, and the
 * node partition is the one of the same ranks in a table of a word a
 * dimension, with equal weights (packed into the points) and unequal ones
 * (read from the table), reflected orders and the longest extent.  Ranks
 * too wide to pack keep the wide table. */
START_TEST(one_word_ranks_same_partition)
{
	static const uint32_t shapes[][3] = { { 20, 31, 5 }, { 1023, 1, 700 },
					      { 1u << 20, 3, 1u << 13 } };
	static const side_order orders[] = {
		{ .perm = { 0, 1, 2 } },
		{ .perm = { 2, 0, 1 }, .reflect = { true, false, true } },
		{ .perm = { 0, 1, 2 }, .longest = true },
	};
	const int32_t n = 1500;
	uint32_t *w1 = malloc(sizeof(uint32_t) * n), *wv = malloc(sizeof(uint32_t) * n);
	int32_t *l1 = malloc(sizeof(int32_t) * n), *l2 = malloc(sizeof(int32_t) * n);
	for (int32_t i = 0; i < n; i++) {
		w1[i] = 2;
		wv[i] = 1 + rnd(4);
	}
	for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
		pointset wp, tp;
		ck_assert_int_eq(tp__pointset_alloc_ranked(&wp, n, 3, shapes[si]), 0);
		ck_assert_int_eq(tp__pointset_alloc(&tp, n, 3), 0);
		memcpy(tp.maxrank, shapes[si], sizeof shapes[si]);
		ck_assert(wp.rank_word == (si < 2));
		for (int32_t i = 0; i < n; i++) {
			uint32_t r[3];
			for (int d = 0; d < 3; d++)
				r[d] = rnd(shapes[si][d] + 1);
			r[i % 3] = i % 2 ? shapes[si][i % 3] : 0;   /* the extremes too */
			tp__pointset_set(&wp, (uint32_t)i, r);
			tp__pointset_set(&tp, (uint32_t)i, r);
		}
		for (int32_t i = 0; i < n; i++)
			for (int d = 0; d < 3; d++)
				ck_assert_uint_eq(tp__pointset_rank(&wp, (uint32_t)i, d),
						  tp__pointset_rank(&tp, (uint32_t)i, d));
		for (int equal = 0; equal < 2; equal++) {
			tp__pointset_pack(&wp, equal ? 2 : 0);
			tp__pointset_pack(&tp, equal ? 2 : 0);
			ck_assert(wp.packed == (equal && si < 2));
			for (size_t oi = 0; oi < sizeof orders / sizeof orders[0]; oi++) {
				tree t1, t2;
				const uint32_t *w = equal ? w1 : wv;
				int32_t n1 = part_nodes_with(&wp, &orders[oi], 2, w, NULL, &t1, l1);
				int32_t n2 = part_nodes_with(&tp, &orders[oi], 2, w, NULL, &t2, l2);
				ck_assert_int_eq(n1, n);
				ck_assert_int_eq(n2, n);
				ck_assert_msg(!memcmp(l1, l2, sizeof(int32_t) * (size_t)n) &&
					      t1.len == t2.len &&
					      !memcmp(t1.v, t2.v, sizeof(int32_t) * (size_t)t1.len),
					      "shape %zu, %s weights, order %zu", si,
					      equal ? "equal" : "unequal", oi);
				free(t1.v);
				free(t2.v);
			}
		}
		tp__pointset_free(&wp);
		tp__pointset_free(&tp);
	}
	free(w1);
	free(wv);
	free(l1);
	free(l2);
}
END_TEST

/* Tasks of a whole grid partitioned as boxes (tp__pointset_grid: cuts
 * between planes never touch the points, the rest are cut as points)
 * against the same positions given as coordinates, which are always cut
 * as points: every leaf of w tasks holds the same tasks.  Grids with
 * extents of 1, trees of node counts that do and do not fall between
 * planes, stored and implicit, 2 to 5 parts, reflected orders, the
 * longest extent, ranks packed into the points and in the table. */
static void sort_leaves(int32_t *order, int64_t n, int w)
{
	for (int64_t at = 0; at < n; at += w)
		for (int64_t i = at + 1; i < at + w; i++)
			for (int64_t j = i; j > at && order[j - 1] > order[j]; j--) {
				int32_t x = order[j];
				order[j] = order[j - 1];
				order[j - 1] = x;
			}
}

START_TEST(grid_boxes_same_partition)
{
	static const int grids[][3] = { { 8, 8, 8 }, { 16, 4, 2 }, { 12, 10, 6 },
					{ 19, 21, 1 }, { 1, 64, 1 }, { 6, 1, 10 } };
	static const side_order orders[] = {
		{ .perm = { 0, 1, 2 } },
		{ .perm = { 2, 0, 1 }, .reflect = { true, false, true } },
		{ .perm = { 1, 2, 0 }, .reflect = { false, true, false } },
		{ .perm = { 0, 1, 2 }, .longest = true },
		{ .perm = { 0, 1, 2 }, .reflect = { true, true, true }, .longest = true },
	};
	static const int slots[] = { 1, 2, 4, 3 };
	for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
		const int *grid = grids[gi];
		int used[3], k = 0;
		for (int d = 0; d < 3; d++)
			if (grid[d] > 1)
				used[k++] = d;
		int32_t n = grid[0] * grid[1] * grid[2];
		double *pos = malloc(sizeof(double) * (size_t)n * (size_t)k);
		int at[3] = { 0, 0, 0 };
		for (int32_t t = 0; t < n; t++) {
			for (int j = 0; j < k; j++)
				pos[(size_t)t * (size_t)k + (size_t)j] = at[used[j]];
			tp__grid_next(at, grid);
		}
		int32_t *o1 = malloc(sizeof(int32_t) * (size_t)n);
		int32_t *o2 = malloc(sizeof(int32_t) * (size_t)n);
		for (int packed = 0; packed < 2; packed++) {
			/* the grid's ranks pack, and it keeps no table: the
			 * coordinates' ranks in their table, then packed */
			pointset gp, cp;
			ck_assert_int_eq(tp__pointset_grid(&gp, grid, k, used), 0);
			ck_assert_int_eq(tp__pointset_init(&cp, n, k, pos), 0);
			ck_assert(gp.grid && !cp.grid && gp.packed && !gp.rank);
			tp__pointset_pack(&gp, 1);
			ck_assert(gp.packed);
			for (int32_t t = 0; t < n; t++)
				for (int j = 0; j < k; j++)
					ck_assert_uint_eq(tp__pointset_rank(&gp, (uint32_t)t, j),
							  tp__pointset_rank(&cp, (uint32_t)t, j));
			if (packed) {
				tp__pointset_pack(&cp, 1);
				ck_assert(cp.packed);
			}
			for (size_t si = 0; si < sizeof slots / sizeof slots[0]; si++) {
				int w = slots[si];
				if (n % w)
					continue;
				for (int parts = 2; parts <= 5; parts++)
					for (size_t oi = 0; oi < sizeof orders / sizeof orders[0]; oi++) {
						side_order so = orders[oi];
						for (int j = 0; j < k; j++)
							so.perm[j] = orders[oi].perm[j] % k;
						if (k < 3) {   /* a permutation of 0..k-1 */
							for (int j = 0; j < k; j++)
								so.perm[j] = (j + (int)oi) % k;
						}
						tree full = { 0 };
						ck_assert_int_eq(tp__tree_predict(&full, n / w, (uint64_t)w,
										 parts), 0);
						tree rule = { .len = full.len, .rule_n = n / w,
							      .rule_w = (uint64_t)w, .rule_k = parts };
						const tree *trees[2] = { &full, &rule };
						for (int ti = 0; ti < 2; ti++) {
							/* the grid's points are not read: garbage */
							part_tasks_with(&cp, &so, trees[ti], o1);
							part_tasks_grid(&gp, &so, trees[ti], o2);
							sort_leaves(o1, n, w);
							sort_leaves(o2, n, w);
							ck_assert_msg(!memcmp(o1, o2, sizeof(int32_t) * (size_t)n),
								      "grid %dx%dx%d, %d slots, %d parts, order %zu",
								      grid[0], grid[1], grid[2], w, parts, oi);
						}
						free(full.v);
					}
			}
			tp__pointset_free(&gp);
			tp__pointset_free(&cp);
		}
		free(o1);
		free(o2);
		free(pos);
	}
}
END_TEST

/* Under a budget, a first variant whose node side splits its root (262,144
 * nodes, a random half: no fold) is built alone and written straight into
 * the result on two threads: the same mapping and score as without a
 * budget. */
START_TEST(first_variant_alone_same_result)
{
	tp_conf *c = make_conf("128x64x64", "yes");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = random_alloc(m, 524288, 262144, 1);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "64x64x64:7pt", 0, NULL), 0);
	int32_t n = tp_graph_ntasks(g);
	int32_t *m1 = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *m2 = malloc(sizeof(int32_t) * (size_t)n);
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	o.search = TP_SEARCH_NONE;
	tp_geom_report r1, r2;
	ck_assert_int_eq(tp_geom_map(g, a, &o, m1, &r1, NULL), 0);
	o.time_budget_ms = 1e6;
	ck_assert_int_eq(tp_geom_map(g, a, &o, m2, &r2, NULL), 0);
	ck_assert(!memcmp(m1, m2, sizeof(int32_t) * (size_t)n));
	ck_assert(r1.best_score == r2.best_score);
	ck_assert(r2.best_score == tp_metrics_hop_bytes(g, a, m2));
	free(m1);
	free(m2);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(grid_positions_as_coordinates)
{
	static const char *const specs[] = { "8x8x8:7pt", "19x21:5pt",
					     "16x1x9:27pt:periodic=x", "1x1x64" };
	tp_conf *c = make_conf("16x16x16", "yes");
	const tp_machine *m = tp_conf_machine(c);
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		tp_graph *g = NULL, *e = NULL;
		ck_assert_int_eq(tp_graph_from_stencil(&g, specs[i], 0, NULL), 0);
		ck_assert_int_eq(tp_graph_from_stencil(&e, specs[i], 0, NULL), 0);
		int32_t n = tp_graph_ntasks(g);
		int nd = tp_graph_coord_dims(g), grid[3];
		ck_assert_int_eq(tp_graph_grid_dims(g, grid), nd);
		const double *co = tp_graph_coords(g);
		ck_assert_ptr_nonnull(co);
		for (int32_t t = 0; t < n; t++) {
			int32_t r = t;
			for (int d = 0; d < nd; d++) {
				ck_assert(co[(size_t)t * (size_t)nd + (size_t)d] == r % grid[d]);
				r /= grid[d];
			}
		}
		ck_assert_int_eq(tp_graph_set_coords(e, nd, co, NULL), 0);
		tp_alloc *a = random_alloc(m, 4096, (n + 1) / 2, 2);
		for (int k = 2; k <= 3; k++) {
			tp_geom_opts o;
			tp_geom_opts_default(&o);
			o.parts_per_level = k;
			int32_t *m1 = malloc(sizeof(int32_t) * (size_t)n);
			int32_t *m2 = malloc(sizeof(int32_t) * (size_t)n);
			tp_geom_report r1, r2;
			ck_assert_int_eq(tp_geom_map(g, a, &o, m1, &r1, NULL), 0);
			ck_assert_int_eq(tp_geom_map(e, a, &o, m2, &r2, NULL), 0);
			ck_assert_msg(!memcmp(m1, m2, sizeof(int32_t) * (size_t)n),
				      "%s, %d parts: %s vs %s", specs[i], k,
				      r1.best_desc, r2.best_desc);
			ck_assert_str_eq(r1.best_desc, r2.best_desc);
			free(m1);
			free(m2);
		}
		tp_alloc_destroy(a);
		tp_graph_destroy(e);
		tp_graph_destroy(g);
	}
	tp_conf_destroy(c);
}
END_TEST

/* Map stencil onto a box of an N-D torus; returns the metrics. */
static tp_metrics fold_case(const char *dims, const char *wrap, const int *first,
			    const int *len, int slots, const char *stencil,
			    tp_geom_report *rep)
{
	int ext[TP_MAX_DIMS], nd;
	tp_conf *c = make_conf_nd(dims, wrap, ext, &nd);
	int all_first[TP_MAX_DIMS] = { 0 };
	tp_alloc *a = box_alloc_nd(tp_conf_machine(c), ext, nd, first ? first : all_first,
				   len ? len : ext, slots);
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_stencil(&g, stencil, 0, &err) == 0, "%s", err.msg);
	int32_t n = tp_graph_ntasks(g);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	ck_assert_msg(tp_geom_map(g, a, &o, map, rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, false, &mt, NULL), 0);
	free(map);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	return mt;
}

START_TEST(fold_is_one_hop)
{
	static const struct {
		const char *dims, *wrap;
		int first[TP_MAX_DIMS], len[TP_MAX_DIMS];   /* len[0] 0: all */
		int slots;
		const char *stencil;
	} cases[] = {
		{ "4x2x2x2", "yes", {0}, {0}, 1, "8x4:5pt" },
		{ "3x2x2x2", "yes", {0}, {0}, 1, "6x4:5pt" },
		{ "3x2x2x2", "no", {0}, {0}, 1, "4x6:5pt" },
		{ "4x4x4x4x2", "yes", {0}, {0}, 1, "16x8x4:7pt" },      /* BG/Q 5-D */
		{ "4x4x4x4x2", "yes", {0}, {0}, 4, "32x8x8:7pt" },      /* 4 per node */
		{ "8x4x4x2", "yes", {6, 0, 0, 0}, {4, 4, 2, 2}, 2, "16x8:5pt" },  /* sub-box across the seam */
		{ "6x3x4x2x2x2", "yes,yes,yes,no,yes,no", {0}, {0}, 2, "24x12x4:7pt" },  /* 6-D */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tp_geom_report rep;
		tp_metrics mt = fold_case(cases[i].dims, cases[i].wrap,
					  cases[i].len[0] ? cases[i].first : NULL,
					  cases[i].len[0] ? cases[i].len : NULL,
					  cases[i].slots, cases[i].stencil, &rep);
		ck_assert_msg(rep.variants_folded > 0, "%s on %s: no fold", cases[i].stencil,
			      cases[i].dims);
		ck_assert_msg(mt.max_dilation == 1,
			      "%s on %s: max dilation %lld (avg %.3f, %s)", cases[i].stencil,
			      cases[i].dims, (long long)mt.max_dilation, mt.avg_hop_bytes, rep.best_desc);
		if (cases[i].slots == 1)   /* every edge exactly one hop */
			ck_assert_double_eq(mt.avg_hop_bytes, 1.0);
		else
			ck_assert(mt.avg_hop_bytes < 1.0);
	}
}
END_TEST

START_TEST(fold_does_not_apply)
{
	tp_geom_report rep;
	/* 16 = 4*4 but 3 is no product of 6, 4 and 2 */
	fold_case("6x4x2", "yes", NULL, NULL, 1, "16x3:5pt", &rep);
	ck_assert_int_eq(rep.variants_folded, 0);
	ck_assert_int_eq(rep.variants_total, 1 + 2 * 6 * 8);
	ck_assert(strncmp(rep.best_desc, "folded", 6) != 0);
	/* a 2-D grid onto a 2-D box is no fold either way it is split */
	fold_case("3x4", "yes", NULL, NULL, 1, "2x6:5pt", &rep);
	ck_assert_int_eq(rep.variants_folded, 0);
	/* factors match, but the nodes are not a box */
	int ext[TP_MAX_DIMS], nd;
	tp_conf *c = make_conf_nd("4x2x2x2", "yes", ext, &nd);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-15],n[17-31],n16", 1,
						"t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x4:5pt", 0, NULL), 0);
	int32_t map[64];
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, &rep, NULL), 0);
	ck_assert_int_gt(rep.variants_folded, 0);   /* order does not matter */
	tp_alloc_destroy(a);
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-30]", 1, "t", &a, NULL), 0);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "31x1:5pt", 0, NULL), 0);
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, &rep, NULL), 0);
	ck_assert_int_eq(rep.variants_folded, 0);   /* 31 nodes: no box */
	tp_alloc_destroy(a);
	/* unequal slots */
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-31]", 1, "t", &a, NULL), 0);
	ck_assert_int_eq(tp_alloc_set_slots(a, 0, 2, NULL), 0);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "11x3:5pt", 0, NULL), 0);
	ck_assert_int_eq(tp_geom_map(g, a, NULL, map, &rep, NULL), 0);
	ck_assert_int_eq(rep.variants_folded, 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(block_find_shapes)
{
	int b[TP__BLOCK_MAX][TP_MAX_DIMS];
	/* 96x92x36, 4 a node: the three with 4 pairs inside, not 1x1x4 */
	const int t6[] = { 96, 92, 36 };
	ck_assert_int_eq(tp__block_find(t6, 3, 4, b, TP__BLOCK_MAX), 3);
	ck_assert(b[0][0] == 1 && b[0][1] == 2 && b[0][2] == 2);
	ck_assert(b[1][0] == 2 && b[1][1] == 1 && b[1][2] == 2);
	ck_assert(b[2][0] == 2 && b[2][1] == 2 && b[2][2] == 1);
	/* 8 a node on a cube: the cube */
	const int t8[] = { 8, 8, 8 };
	ck_assert_int_eq(tp__block_find(t8, 3, 8, b, TP__BLOCK_MAX), 1);
	ck_assert(b[0][0] == 2 && b[0][1] == 2 && b[0][2] == 2);
	/* what the extents do not divide, and one task a node: none */
	const int odd[] = { 7, 5 };
	ck_assert_int_eq(tp__block_find(odd, 2, 2, b, TP__BLOCK_MAX), 0);
	ck_assert_int_eq(tp__block_find(t8, 3, 1, b, TP__BLOCK_MAX), 0);
	/* at most max */
	ck_assert_int_eq(tp__block_find(t6, 3, 4, b, 1), 1);
}
END_TEST

/* A random half of a 4-D torus (no box, so no fold), 4 tasks a node: the
 * first variant tried is blocked, and every node holds one 2x2x1 box of
 * the grid; without a budget the three shapes are variants, and the lazy
 * search still agrees with the eager one. */
START_TEST(blocked_nodes_hold_blocks)
{
	int ext[TP_MAX_DIMS], nd;
	tp_conf *c = make_conf_nd("6x4x4x2", "yes", ext, &nd);
	tp_alloc *a = random_alloc(tp_conf_machine(c), 192, 96, 4);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8x6:7pt", 0, NULL), 0);
	tp_geom_opts o;
	tp_geom_opts_default(&o);
	o.time_budget_ms = 1e-3;
	int32_t map[384];
	tp_geom_report rep;
	tp_error err;
	ck_assert_msg(tp_geom_map(g, a, &o, map, &rep, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(rep.variants_scored, 1);
	/* the grid of blocks nearest a cube first: 4x4x6 */
	ck_assert_msg(strstr(rep.best_desc, ", 2x2x1 blocks per node"), "%s", rep.best_desc);
	int lo[96][3], hi[96][3];
	for (int i = 0; i < 96; i++)
		for (int d = 0; d < 3; d++) {
			lo[i][d] = INT32_MAX;
			hi[i][d] = -1;
		}
	for (int t = 0; t < 384; t++) {
		int x[3] = { t % 8, t / 8 % 8, t / 64 };
		for (int d = 0; d < 3; d++) {
			lo[map[t]][d] = x[d] < lo[map[t]][d] ? x[d] : lo[map[t]][d];
			hi[map[t]][d] = x[d] > hi[map[t]][d] ? x[d] : hi[map[t]][d];
		}
	}
	for (int i = 0; i < 96; i++) {
		ck_assert_msg(hi[i][0] - lo[i][0] == 1 && hi[i][1] - lo[i][1] == 1 &&
			      hi[i][2] == lo[i][2], "node %d: not a 2x2x1 box", i);
		ck_assert(lo[i][0] % 2 == 0 && lo[i][1] % 2 == 0);
	}
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	ck_assert_double_eq_tol(rep.best_score, tp_metrics_hop_bytes(g, a, map), 1e-6);
	/* 1 + 3! task orders x (4! x 2^4) machine orders, then 3 blocked */
	tp_geom_opts_default(&o);
	assert_lazy_is_eager(g, a, &o, "blocked 4-D half");
	ck_assert_int_eq(tp_geom_map(g, a, &o, map, &rep, &err), 0);
	ck_assert_int_eq(rep.variants_total, 1 + 6 * 384 + 3);
	ck_assert_int_eq(rep.variants_scored, rep.variants_total);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(fold_find_and_place)
{
	/* a whole 6-D machine, 24x23x24x2x3x2 */
	const int text[] = { 96, 92, 72 }, mext[] = { 24, 23, 24, 2, 3, 2 };
	tp__fold f[TP__FOLD_MAX];
	int nf = tp__fold_find(text, 3, mext, 6, 4, f, TP__FOLD_MAX);
	ck_assert_int_gt(nf, 0);
	/* most task pairs inside a node first: 2x2x1 (4 pairs) */
	ck_assert_int_eq(f[0].block[0] * f[0].block[1] * f[0].block[2], 4);
	ck_assert_int_eq(f[0].block[2], 1);
	ck_assert_int_eq(f[0].block[0], 2);
	/* snake order: consecutive grid coordinates are one hop apart */
	for (int i = 0; i < nf; i++)
		for (int d = 0; d < 3; d++)
			for (uint32_t x = 0; x + 1 < (uint32_t)text[d]; x++) {
				uint32_t t0[3] = { 5, 7, 11 }, t1[3] = { 5, 7, 11 };
				t0[d] = x;
				t1[d] = x + 1;
				int c0[6], c1[6], hops = 0;
				tp__fold_place(&f[i], t0, c0);
				tp__fold_place(&f[i], t1, c1);
				for (int k = 0; k < 6; k++) {
					ck_assert(c0[k] >= 0 && c0[k] < mext[k]);
					hops += abs(c0[k] - c1[k]);
				}
				ck_assert_int_le(hops, 1);
			}
	char desc[96];
	tp__fold_describe(&f[0], "xyz", "xyzuvw", desc, sizeof desc);
	ck_assert_msg(strstr(desc, "2x2x1 per node") != NULL, "%s", desc);
	/* factors that do not match, or unequal totals */
	const int bad[] = { 16, 3 }, box[] = { 6, 4, 2 };
	ck_assert_int_eq(tp__fold_find(bad, 2, box, 3, 1, f, TP__FOLD_MAX), 0);
	const int odd[] = { 7, 7 };
	ck_assert_int_eq(tp__fold_find(odd, 2, box, 3, 1, f, TP__FOLD_MAX), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("geom");
	TCase *tc = tcase_create("geom");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, select_orders);
	tcase_add_test(tc, one_word_ranks_same_partition);
	tcase_add_test(tc, seam_shift_moves_low_side);
	tcase_add_test(tc, seam_between_sparsest_planes);
	tcase_add_test(tc, box_is_optimal);
	tcase_add_test(tc, sparse_beats_block);
	tcase_add_test(tc, deterministic_across_threads);
	tcase_add_test(tc, heterogeneous_slots_and_subset);
	tcase_add_test(tc, subset_picks_a_compact_group);
	tcase_add_test(tc, bad_input_and_budget);
	tcase_add_test(tc, budget_tiny_midsize);
	tcase_add_test(tc, lazy_matches_eager);
	tcase_add_test(tc, grid_positions_as_coordinates);
	tcase_add_test(tc, grid_boxes_same_partition);
	tcase_add_test(tc, first_variant_alone_same_result);
	tcase_add_test(tc, packed_ranks_same_partition);
	tcase_add_test(tc, implicit_tree_same_partition);
	tcase_add_test(tc, split_root_same_partition);
	tcase_add_test(tc, fold_is_one_hop);
	tcase_add_test(tc, fold_does_not_apply);
	tcase_add_test(tc, fold_find_and_place);
	tcase_add_test(tc, block_find_shapes);
	tcase_add_test(tc, blocked_nodes_hold_blocks);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
