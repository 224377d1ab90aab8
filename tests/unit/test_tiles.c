/* Unit tests: a grid's node tiles (core/src/map/node_tiles.c) and auto's
 * candidate "tiles" (place_auto.c). */
#include "testutil.h"
#include "input/alloc_internal.h"
#include "map/node_tiles.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"
#include <topoplace/conf.h>

static tp_graph *stencil(const char *spec)
{
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_stencil(&g, spec, 0, &err) == 0, "%s", err.msg);
	return g;
}

/* The most messages leaving one node of map (a's nodes). */
static int busiest_node(const tp_graph *g, const tp_alloc *a, const int32_t *map)
{
	int *out = calloc((size_t)a->nnodes, sizeof *out), most = 0;
	ck_assert_ptr_nonnull(out);
	for (int32_t u = 0; u < g->ntasks; u++)
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
			if (map[g->adjncy[e]] != map[u])
				out[map[u]]++;
	for (int32_t i = 0; i < a->nnodes; i++)
		most = out[i] > most ? out[i] : most;
	free(out);
	return most;
}

/* 8x6x4, 4 tasks a node: the blocks of the most pairs inside, nearest a
 * cube (2x2x1), leave interior nodes 16 messages; 2x1x2 touches a z face
 * everywhere, 14; 1x2x2 too, but its grid of tiles is longer. */
START_TEST(worth_on_a_thin_grid)
{
	tp_graph *g = stencil("8x6x4:7pt");
	struct tp__tiles t;
	ck_assert(tp__tiles_worth(g, 4, &t));
	ck_assert_int_eq(t.dims, 3);
	ck_assert_int_eq(t.shape[0], 2);
	ck_assert_int_eq(t.shape[1], 1);
	ck_assert_int_eq(t.shape[2], 2);
	ck_assert_int_eq(t.ext[0], 4);
	ck_assert_int_eq(t.ext[1], 6);
	ck_assert_int_eq(t.ext[2], 2);
	ck_assert_int_eq(t.ntiles, 48);
	ck_assert_double_eq(t.busiest, 14);
	ck_assert_double_eq(t.blocks_busiest, 16);
	tp_graph_destroy(g);
}
END_TEST

/* Where every shape's busiest tile sends as much, no tiling is worth it:
 * a cube deep enough for interior tiles, any periodic grid, a single
 * shape (3 divides only 6), a task a node. */
START_TEST(not_worth)
{
	struct tp__tiles t;
	const char *specs[] = { "8x8x8:7pt", "8x6x4:7pt:periodic=all" };
	for (int i = 0; i < 2; i++) {
		tp_graph *g = stencil(specs[i]);
		ck_assert_msg(!tp__tiles_worth(g, 4, &t), "%s", specs[i]);
		tp_graph_destroy(g);
	}
	tp_graph *g = stencil("8x6x4:7pt");
	ck_assert(!tp__tiles_worth(g, 3, &t));
	ck_assert(!tp__tiles_worth(g, 1, &t));
	ck_assert(!tp__tiles_worth(g, 5, &t));    /* 192 tasks: not in fives */
	tp_graph_destroy(g);
}
END_TEST

/* Coordinates that are not a full box of integers: a gap, a repeat, a
 * fraction, none at all. */
START_TEST(not_a_grid)
{
	struct tp__tiles t;
	const char *bad[] = {
		"{\"tasks\": 4, \"coords\": [[0,0],[1,0],[0,1],[1,2]],"
		" \"edges\": [[0,1,1],[2,3,1],[0,2,1]]}",
		"{\"tasks\": 4, \"coords\": [[0,0],[1,0],[0,1],[0,1]],"
		" \"edges\": [[0,1,1],[2,3,1],[0,2,1]]}",
		"{\"tasks\": 4, \"coords\": [[0,0],[1,0],[0,1],[1,1.5]],"
		" \"edges\": [[0,1,1],[2,3,1],[0,2,1]]}",
		"{\"tasks\": 4, \"edges\": [[0,1,1],[2,3,1],[0,2,1]]}",
	};
	for (int i = 0; i < 4; i++) {
		tp_graph *g = NULL;
		tp_error err;
		ck_assert_msg(tp_graph_from_json_string(&g, bad[i], strlen(bad[i]), "t.json",
							0, &err) == 0, "%s", err.msg);
		ck_assert_msg(!tp__tiles_worth(g, 2, &t), "case %d", i);
		tp_graph_destroy(g);
	}
}
END_TEST

/* A JSON graph whose coordinates fill a box, in any order, with a heavy
 * axis: the tiles follow the bytes, not the cube.  4x4 tasks, pairs along
 * x 10 bytes, along y 1; 2 a node: 2x1 tiles keep an x pair inside and send
 * at most 10 + 4 = 14, 1x2 tiles keep a y pair and send up to 40 + 2.  The
 * blocks of the fewest bytes off them are the same 2x1: not worth it. */
START_TEST(weights_decide)
{
	char json[2048] = "{\"tasks\": 16, \"coords\": [";
	for (int t = 15; t >= 0; t--)
		snprintf(json + strlen(json), sizeof json - strlen(json), "%s[%d,%d]",
			 t == 15 ? "" : ",", t % 4, t / 4);
	strcat(json, "], \"edges\": [");
	bool first = true;
	for (int t = 0; t < 16; t++) {
		/* task i has coordinates of 15 - i */
		int c = 15 - t, x = c % 4, y = c / 4;
		if (x < 3) {
			snprintf(json + strlen(json), sizeof json - strlen(json), "%s[%d,%d,10]",
				 first ? "" : ",", t, t - 1);
			first = false;
		}
		if (y < 3)
			snprintf(json + strlen(json), sizeof json - strlen(json), ",[%d,%d,1]",
				 t, t - 4);
	}
	strcat(json, "]}");
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_json_string(&g, json, strlen(json), "t.json", 0, &err) == 0,
		      "%s", err.msg);
	struct tp__tiles t;
	ck_assert(!tp__tiles_worth(g, 2, &t));
	tp_graph_destroy(g);
}
END_TEST

/* auto on 48 nodes of a dragonfly, 8x6x4 with 64 KiB faces: the tiles run,
 * the busiest node of the result sends 14 messages where the blocks' sent
 * 16, and the map is the same on 1, 2 and 4 threads. */
START_TEST(auto_maps_the_tiles)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=dragonfly Groups=9 RoutersPerGroup=4 "
					  "NodesPerRouter=4 LinksPerGroupPair=2 Routing=direct\n"
					  "NodeBandwidth=25 LocalBandwidth=25 GlobalBandwidth=25 "
					  "HopLatency=0.1us\n"
					  "NodeName=df[0-143] CoordOrder=x-major\n",
					  "t.conf", &c, &err) == 0, "%s", err.msg);
	tp_alloc *a = NULL;
	ck_assert_msg(tp_alloc_from_hostlist(tp_conf_machine(c),
					     "df[1,3,5,8-9,12,15,17,20-23,27,30,33-34,38,41,"
					     "44-46,50,53,57,60-61,66,70,74,77,80,84,88,91,95,"
					     "99,103-104,108,112,117,121,124,128,133,137,140,143]",
					     4, "t", &a, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(a->nnodes, 48);
	tp_graph *g = stencil("8x6x4:7pt:bytes=65536");
	int32_t *map[3];
	int threads[3] = { 1, 2, 4 };
	for (int i = 0; i < 3; i++) {
		tp_place_opts o;
		tp_place_opts_default(&o);
		o.policy = TP_POLICY_AUTO;
		o.geom.nthreads = threads[i];
		tp_place_report rep;
		map[i] = malloc(sizeof(int32_t) * (size_t)g->ntasks);
		ck_assert_msg(tp_place_ex(g, a, &o, map[i], &rep, &err) == 0, "%s", err.msg);
		bool ran = false;
		for (int k = 0; k < rep.ncandidates; k++)
			if (!strcmp(rep.cand[k].name, "tiles")) {
				ran = rep.cand[k].ran;
				ck_assert_msg(strstr(rep.cand[k].note, "2x1x2 tiles") != NULL,
					      "%s", rep.cand[k].note);
			}
		ck_assert(ran);
		ck_assert_int_eq(busiest_node(g, a, map[i]), 14);
		if (i > 0)
			ck_assert(!memcmp(map[0], map[i], sizeof(int32_t) * (size_t)g->ntasks));
	}
	for (int i = 0; i < 3; i++)
		free(map[i]);
	/* the tiles on nodes of unequal counts: refused, saying why */
	struct tp__tiles t;
	ck_assert(tp__tiles_worth(g, 4, &t));
	tp_alloc *b = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "df[0-48]", 4, "t", &b,
						&err), 0);
	int32_t *m = malloc(sizeof(int32_t) * (size_t)g->ntasks);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	ck_assert_int_eq(tp__tiles_map(g, b, &o, &t, m, &err), TP_EINVAL);
	tp_assert_err_has(&err, "48 tiles on 49 nodes");
	free(m);
	tp_alloc_destroy(b);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tiles");
	TCase *tc = tcase_create("tiles");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, worth_on_a_thin_grid);
	tcase_add_test(tc, not_worth);
	tcase_add_test(tc, not_a_grid);
	tcase_add_test(tc, weights_decide);
	tcase_add_test(tc, auto_maps_the_tiles);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
