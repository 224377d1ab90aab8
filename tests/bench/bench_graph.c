/* bench_graph — graph mapping of irregular task graphs on tori,
 * fat trees and dragonflies, against block, random and Scotch (-b0).
 *
 *   build-bench/bench/bench_graph [--no-scotch] [--meshes DIR]
 *
 * Task graphs: part adjacency of METIS partitions of gmsh-meshed demo
 * geometries (tests/bench/make-meshes.sh; bytes = shared faces), and one
 * clearly labelled synthetic graph (seeded random geometric graph, 65,536
 * points in the unit cube, each joined to its k nearest among the 27
 * surrounding grid cells) for the "65,536 tasks / 400,000 edges < 3 s" target.
 * Metrics are topoplace's (avg hop-bytes per byte and max link congestion);
 * Scotch's mapping is read back and scored by the same code.  Scotch's
 * targets: `sub` of `torus3D` (torus) and `sub` of `tleaf` (fat tree; level
 * costs 2*(c0+c1), 2*c0 and 1 scaled x10, see below); no Scotch target for
 * the dragonfly (n/a). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <topoplace/topoplace.h>
#include "input/alloc_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include "bench_time.h"
#include "bench_prog.h"

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rand_below(uint64_t *s, uint64_t n)
{
	return splitmix64(s) % n;
}

static double rand_unit(uint64_t *s)
{
	return (splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void die(const char *what, const tp_error *e)
{
	fprintf(stderr, "bench_graph: %s: %s\n", what, e ? e->msg : strerror(errno));
	exit(2);
}

/* k distinct random indices of 0..n-1, sorted. */
static int32_t *rand_subset(int32_t n, int32_t k, uint64_t seed)
{
	int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
	uint64_t s = seed;
	for (int32_t i = 0; i < n; i++)
		p[i] = i;
	for (int32_t i = 0; i < k; i++) {
		int32_t j = i + (int32_t)rand_below(&s, (uint64_t)(n - i));
		int32_t t = p[i]; p[i] = p[j]; p[j] = t;
	}
	for (int32_t i = 1; i < k; i++)	/* insertion sort is fine at 10^4 */
		for (int32_t j = i; j > 0 && p[j - 1] > p[j]; j--) {
			int32_t t = p[j]; p[j] = p[j - 1]; p[j - 1] = t;
		}
	return p;
}

/* ---- machines ---- */

enum net { NET_TORUS, NET_TREE, NET_DFLY };

struct mach {
	enum net net;
	tp_machine *m;
	int torus[3];
	char desc[160];
	char scotch_arch[200];   /* after "sub N labels": the architecture */
	int64_t *label;          /* Scotch terminal of machine node */
};

static void mach_torus(struct mach *M, int X, int Y, int Z)
{
	tp_error e = {0};
	int dims[3] = { X, Y, Z };
	bool wrap[3] = { true, true, true };
	memset(M, 0, sizeof *M);
	M->net = NET_TORUS;
	if (tp_machine_create(&M->m, 3, dims, wrap, &e))
		die("torus", &e);
	M->label = malloc(sizeof(int64_t) * (size_t)X * Y * Z);
	char name[32];
	for (int z = 0; z < Z; z++)
		for (int y = 0; y < Y; y++)
			for (int x = 0; x < X; x++) {
				int c[3] = { x, y, z };
				snprintf(name, sizeof name, "t%d_%d_%d", x, y, z);
				int32_t id = tp_machine_add_node(M->m, name, c, &e);
				if (id < 0)
					die("torus node", &e);
				M->label[id] = tp_machine_router_of(M->m, id);
			}
	snprintf(M->desc, sizeof M->desc, "3-D torus %dx%dx%d, 1 node/router", X, Y, Z);
	snprintf(M->scotch_arch, sizeof M->scotch_arch, "torus3D\t%d\t%d\t%d", X, Y, Z);
}

/* 3-level fat tree: core, SPINES aggregation switches, LEAVES leaves of
 * NPL nodes; LevelCost c0 (leaf uplink), c1 (aggregation uplink). */
enum { SPINES = 4, LEAVES = 16, NPL = 32, C0 = 1, C1 = 2 };

static void mach_tree(struct mach *M)
{
	tp_error e = {0};
	char *t = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&t, &tl);
	memset(M, 0, sizeof *M);
	M->net = NET_TREE;
	fprintf(f, "SwitchName=core Switches=agg[0-%d]\n", SPINES - 1);
	for (int a = 0; a < SPINES; a++)
		fprintf(f, "SwitchName=agg%d Switches=leaf[%d-%d]\n", a,
			a * (LEAVES / SPINES), (a + 1) * (LEAVES / SPINES) - 1);
	for (int l = 0; l < LEAVES; l++)
		fprintf(f, "SwitchName=leaf%d Nodes=n[%03d-%03d]\n", l, l * NPL,
			(l + 1) * NPL - 1);
	fclose(f);
	int cost[2] = { C0, C1 };
	if (tp_machine_from_topology(&M->m, t, "bench-topology.conf", cost, 2, &e))
		die("tree", &e);
	free(t);
	int32_t n = tp_machine_node_count(M->m);
	M->label = malloc(sizeof(int64_t) * (size_t)n);
	for (int32_t i = 0; i < n; i++)	/* "nNNN": tleaf terminal NNN */
		M->label[i] = atol(tp_machine_node_name(M->m, i) + 1);
	snprintf(M->desc, sizeof M->desc,
		 "fat tree: core, %d aggregation, %d leaves x %d nodes, LevelCost=%d,%d",
		 SPINES, LEAVES, NPL, C0, C1);
	/* tleaf: root level (different aggregation switch): 2(c0+c1); same
	 * aggregation switch, other leaf: 2c0; same leaf: 0 in our model,
	 * given as 1 with the others x10 (Scotch wants costs >= 1). */
	snprintf(M->scotch_arch, sizeof M->scotch_arch, "tleaf\t3\t%d\t%d\t%d\t%d\t%d\t1",
		 SPINES, 10 * 2 * (C0 + C1), LEAVES / SPINES, 10 * 2 * C0, NPL);
}

static void mach_dfly(struct mach *M, int G, int A, int P, int L)
{
	tp_error e = {0};
	memset(M, 0, sizeof *M);
	M->net = NET_DFLY;
	if (tp_machine_create_dragonfly(&M->m, G, A, P, L, false, &e))
		die("dragonfly", &e);
	char name[32];
	for (int g = 0; g < G; g++)
		for (int r = 0; r < A; r++)
			for (int p = 0; p < P; p++) {
				int c[2] = { r, g };
				snprintf(name, sizeof name, "d%d_%d_%d", g, r, p);
				if (tp_machine_add_node(M->m, name, c, &e) < 0)
					die("dragonfly node", &e);
			}
	snprintf(M->desc, sizeof M->desc,
		 "dragonfly %d groups x %d routers x %d nodes, %d global links/pair, direct routing",
		 G, A, P, L);
}

/* ---- graphs ---- */

static tp_graph *load_json(const char *path)
{
	tp_error e = {0};
	tp_graph *g = NULL;
	if (tp_graph_from_json_file(&g, path, -1, &e))
		die(path, &e);
	return g;
}

/* Random geometric graph: n points in the unit cube, each joined to its k
 * nearest among the 27 grid cells around it (cells hold ~4 points); bytes =
 * 1024.  Seeded, deterministic. */
static tp_graph *make_rgg(int32_t n, int k, uint64_t seed)
{
	uint64_t s = seed;
	int C = (int)cbrt(n / 4.0);
	double *p = malloc(sizeof(double) * 3 * (size_t)n);
	int32_t *cell = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *start = calloc((size_t)C * C * C + 1, sizeof(int32_t));
	int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
	for (int32_t i = 0; i < n; i++) {
		int ci[3];
		for (int d = 0; d < 3; d++) {
			p[3 * i + d] = rand_unit(&s);
			ci[d] = (int)(p[3 * i + d] * C);
			if (ci[d] >= C)
				ci[d] = C - 1;
		}
		cell[i] = ci[0] + C * (ci[1] + C * ci[2]);
		start[cell[i] + 1]++;
	}
	for (int64_t c = 0; c < (int64_t)C * C * C; c++)
		start[c + 1] += start[c];
	int32_t *fill = malloc(sizeof(int32_t) * (size_t)C * C * C);
	memcpy(fill, start, sizeof(int32_t) * (size_t)C * C * C);
	for (int32_t i = 0; i < n; i++)
		order[fill[cell[i]]++] = i;
	int64_t cap = (int64_t)n * k, ne = 0;
	int32_t *u = malloc(sizeof(int32_t) * (size_t)cap);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)cap);
	int32_t best[64];
	double bd[64];
	for (int32_t i = 0; i < n; i++) {
		int c0 = cell[i] % C, c1 = cell[i] / C % C, c2 = cell[i] / C / C;
		int nb = 0;
		for (int dz = -1; dz <= 1; dz++)
		for (int dy = -1; dy <= 1; dy++)
		for (int dx = -1; dx <= 1; dx++) {
			int x = c0 + dx, y = c1 + dy, z = c2 + dz;
			if (x < 0 || y < 0 || z < 0 || x >= C || y >= C || z >= C)
				continue;
			int32_t c = x + C * (y + C * z);
			for (int32_t q = start[c]; q < start[c + 1]; q++) {
				int32_t j = order[q];
				if (j == i)
					continue;
				double d = 0;
				for (int t = 0; t < 3; t++)
					d += (p[3 * i + t] - p[3 * j + t]) * (p[3 * i + t] - p[3 * j + t]);
				if (nb == k && d >= bd[k - 1])
					continue;
				int pos = nb < k ? nb++ : k - 1;
				while (pos > 0 && bd[pos - 1] > d) {
					bd[pos] = bd[pos - 1];
					best[pos] = best[pos - 1];
					pos--;
				}
				bd[pos] = d;
				best[pos] = j;
			}
		}
		for (int b = 0; b < nb; b++) {
			u[ne] = i;
			v[ne] = best[b];
			ne++;
		}
	}
	/* i->j and j->i are summed by the builder: give each arc 512 bytes. */
	double *w = malloc(sizeof(double) * (size_t)ne);
	for (int64_t e = 0; e < ne; e++)
		w[e] = 512;
	tp_error e = {0};
	tp_graph *g = NULL;
	if (tp_graph_from_edges(&g, n, ne, u, v, w, "rgg", &e))
		die("rgg", &e);
	free(p); free(cell); free(start); free(order); free(fill);
	free(u); free(v); free(w);
	return g;
}

/* ---- one case ---- */

enum { R_BLOCK, R_RANDOM, R_GRAPH, R_AUTO, R_BUDGET, R_SCOTCH, R_N };
static const char *rname[R_N] = { "block", "random", "graph", "auto", "graph-2.5s", "scotch" };

struct res {
	bool have;
	double hb, cong, ms;
	char note[120];
};

static void score(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		  struct res *r)
{
	tp_error e = {0};
	tp_metrics mt;
	if (tp_mapping_validate(g, a, map, &e))
		die("invalid mapping", &e);
	if (tp_metrics_compute(g, a, map, true, &mt, &e))
		die("metrics", &e);
	r->have = true;
	r->hb = mt.avg_hop_bytes;
	r->cong = mt.max_congestion_bytes;
}

static void run_scotch(const struct mach *M, const tp_graph *g, const tp_alloc *a,
		       struct res *r)
{
	char dir[] = "/tmp/bench_graph.XXXXXX", p[256], t[256], m[256], lg[256];
	if (!mkdtemp(dir)) {
		snprintf(r->note, sizeof r->note, "mkdtemp failed");
		return;
	}
	snprintf(p, sizeof p, "%s/g.grf", dir);
	snprintf(t, sizeof t, "%s/t.tgt", dir);
	snprintf(m, sizeof m, "%s/m.map", dir);
	snprintf(lg, sizeof lg, "%s/log", dir);
	const int64_t *xadj = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	int32_t n = tp_graph_ntasks(g);
	FILE *f = fopen(p, "w");
	fprintf(f, "0\n%d\t%lld\n0\t010\n", n, (long long)xadj[n]);
	for (int32_t i = 0; i < n; i++) {
		fprintf(f, "%lld", (long long)(xadj[i + 1] - xadj[i]));
		for (int64_t e = xadj[i]; e < xadj[i + 1]; e++)
			fprintf(f, "\t%lld\t%d", (long long)llround(w[e] > 1 ? w[e] : 1), adj[e]);
		fputc('\n', f);
	}
	fclose(f);
	f = fopen(t, "w");
	fprintf(f, "sub\t%d", tp_alloc_nnodes(a));
	for (int32_t i = 0; i < tp_alloc_nnodes(a); i++)
		fprintf(f, "%s%lld", i % 16 ? " " : "\n", (long long)M->label[tp_alloc_node(a, i)]);
	fprintf(f, "\n%s\n", M->scotch_arch);
	fclose(f);
	/* -Cd: a fixed seed (Debian's build reseeds on every run), so that
	 * the table repeats */
	char *argv[] = { "scotch_gmap", "-b0", "-Cd", p, t, m, NULL };
	double t0 = now_ms();
	int st = run_prog(argv, lg, 300, NULL, NULL);
	r->ms = now_ms() - t0;
	if (st != 0) {
		snprintf(r->note, sizeof r->note, "scotch_gmap %s %d", st == -2 ? "timeout" : "exit", st);
		goto out;
	}
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	long long cnt, vv, pp;
	int32_t got = 0;
	f = fopen(m, "r");
	if (f && fscanf(f, "%lld", &cnt) == 1 && cnt == n)
		while (fscanf(f, "%lld %lld", &vv, &pp) == 2 && vv >= 0 && vv < n)
			map[vv] = (int32_t)pp, got++;
	if (f)
		fclose(f);
	if (got != n) {
		snprintf(r->note, sizeof r->note, "bad mapping file");
	} else {
		/* -b0 over nodes gives equal counts; our slots may differ by one:
		 * accept only a valid mapping. */
		tp_error e = {0};
		if (tp_mapping_validate(g, a, map, &e))
			snprintf(r->note, sizeof r->note, "unbalanced: %.100s", e.msg);
		else
			score(g, a, map, r);
	}
	free(map);
out:
	unlink(p); unlink(t); unlink(m); unlink(lg);
	rmdir(dir);
}

struct bres {
	const char *name;
	int32_t tasks, nodes;
	int64_t edges;
	struct res r[R_N];
};

static bool use_scotch = true;

static void run_case(struct bres *B, const char *name, const char *what,
		     struct mach *M, tp_graph *g, int32_t nnodes, uint64_t seed,
		     bool scotch_ok, const char *scotch_na)
{
	tp_error e = {0};
	int32_t n = tp_graph_ntasks(g);
	int32_t total = tp_machine_node_count(M->m);
	int32_t *nodes = rand_subset(total, nnodes, seed);
	tp_alloc *a = NULL;
	int tpn = (n + nnodes - 1) / nnodes;
	if (tp_alloc_from_nodes(M->m, nodes, nnodes, tpn, &a, &e))
		die("alloc", &e);
	if (tp_alloc_spread_tasks(a, n, &e))
		die("spread", &e);
	free(nodes);
	memset(B, 0, sizeof *B);
	B->name = name;
	B->tasks = n;
	B->nodes = nnodes;
	B->edges = tp_graph_nedges(g);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	double t0 = now_ms();
	if (tp_map_block(a, n, map, &e))
		die("block", &e);
	B->r[R_BLOCK].ms = now_ms() - t0;
	score(g, a, map, &B->r[R_BLOCK]);
	t0 = now_ms();
	if (tp_map_random(a, n, 12345, map, &e))
		die("random", &e);
	B->r[R_RANDOM].ms = now_ms() - t0;
	score(g, a, map, &B->r[R_RANDOM]);
	for (int k = R_GRAPH; k <= R_BUDGET; k++) {
		tp_place_opts po;
		tp_place_report rep;
		if (k == R_BUDGET && n < 65536)
			continue;
		tp_place_opts_default(&po);
		po.policy = k == R_AUTO ? TP_POLICY_AUTO : TP_POLICY_GRAPH;
		/* graph-2.5s: the graph policy with TimeBudgetMs=2500 (the
		 * refinement stops at the deadline), large cases only. */
		if (k == R_BUDGET)
			po.geom.time_budget_ms = 2500;
		t0 = now_ms();
		if (tp_place_ex(g, a, &po, map, &rep, &e))
			die("tp_place_ex", &e);
		B->r[k].ms = now_ms() - t0;
		score(g, a, map, &B->r[k]);
		if (rep.best >= 0)
			snprintf(B->r[k].note, sizeof B->r[k].note, "%s", rep.cand[rep.best].name);
	}
	if (!scotch_ok)
		snprintf(B->r[R_SCOTCH].note, sizeof B->r[R_SCOTCH].note, "%s", scotch_na);
	else if (!use_scotch)
		snprintf(B->r[R_SCOTCH].note, sizeof B->r[R_SCOTCH].note, "--no-scotch");
	else
		run_scotch(M, g, a, &B->r[R_SCOTCH]);
	free(map);
	tp_alloc_destroy(a);

	printf("\n%s: %s\n  %d tasks, %lld edges, %d of %d nodes (random), %s\n",
	       name, what, n, (long long)B->edges, nnodes, total, M->desc);
	printf("  %-8s %14s %16s %10s  %s\n", "mapping", "avg hop-bytes",
	       "max congestion", "time ms", "note");
	for (int k = 0; k < R_N; k++) {
		struct res *r = &B->r[k];
		if (!r->have && k == R_BUDGET)
			continue;
		if (r->have)
			printf("  %-8s %14.4f %16.0f %10.1f  %s\n", rname[k], r->hb,
			       r->cong, r->ms, r->note);
		else
			printf("  %-8s %14s %16s %10s  %s\n", rname[k], "n/a", "n/a",
			       "-", r->note);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	char dir[1100] = "";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-scotch"))
			use_scotch = false;
		else if (!strcmp(argv[i], "--meshes") && i + 1 < argc)
			snprintf(dir, sizeof dir, "%s", argv[++i]);
		else {
			fprintf(stderr, "usage: bench_graph [--no-scotch] [--meshes DIR]\n");
			return 2;
		}
	}
	/* The meshes: build-bench/meshes next to this binary's build dir. */
	if (!dir[0]) {
		char self[1024];
		ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
		if (l < 0)
			die("readlink", NULL);
		self[l] = 0;
		char *s = strrchr(self, '/');
		*s = 0;                      /* .../BUILD/bench */
		s = strrchr(self, '/');
		*s = 0;                      /* .../BUILD */
		snprintf(dir, sizeof dir, "%s/meshes", self);
	}
	char path[1300], cmd[2600];
	snprintf(path, sizeof path, "%s/boolean-65536.json", dir);
	if (access(path, R_OK)) {
		const char *src = getenv("TOPOPLACE_SRC");
		snprintf(cmd, sizeof cmd, "sh %s/tests/bench/make-meshes.sh %s >&2",
			 src ? src : ".", dir);
		if (system(cmd) != 0) {
			fprintf(stderr, "bench_graph: %s failed; run it from the source root\n", cmd);
			return 2;
		}
	}

	struct bres B[16];
	int nb = 0;
	struct mach torus, tree, dfly;
	mach_torus(&torus, 16, 16, 16);
	mach_tree(&tree);
	mach_dfly(&dfly, 16, 8, 4, 2);
	const char *meshes[] = { "boolean-4096", "piece-4096" };
	const char *mwhat[] = {
		"gmsh demo boolean.geo (CSG part), ~295k tets, METIS 4096 parts",
		"gmsh demo piece.geo (machined part), ~332k tets, METIS 4096 parts" };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s.json", dir, meshes[i]);
		tp_graph *g = load_json(path);
		char nm[64];
		snprintf(nm, sizeof nm, "%s/torus", meshes[i]);
		run_case(&B[nb++], strdup(nm), mwhat[i], &torus, g, 512, 11 + i, true, "");
		snprintf(nm, sizeof nm, "%s/fattree", meshes[i]);
		run_case(&B[nb++], strdup(nm), mwhat[i], &tree, g, 256, 21 + i, true, "");
		snprintf(nm, sizeof nm, "%s/dragonfly", meshes[i]);
		run_case(&B[nb++], strdup(nm), mwhat[i], &dfly, g, 256, 31 + i, false,
			 "n/a: no Scotch target (deco via amk_grf not done)");
		tp_graph_destroy(g);
	}
	/* 65,536-task cases on 8192 random nodes of a 32^3 torus (25%). */
	struct mach big;
	mach_torus(&big, 32, 32, 32);
	int first_big = nb;
	snprintf(path, sizeof path, "%s/boolean-65536.json", dir);
	tp_graph *g = load_json(path);
	run_case(&B[nb++], "boolean-65536/torus",
		 "gmsh demo boolean.geo, ~295k tets, METIS 65536 parts", &big, g, 8192, 41, true, "");
	tp_graph_destroy(g);
	g = make_rgg(65536, 11, 7);
	run_case(&B[nb++], "rgg-65536/torus",
		 "SYNTHETIC random geometric graph, 65536 points, 11 nearest (seed 7)",
		 &big, g, 8192, 42, true, "");
	tp_graph_destroy(g);

	/* Targets. */
	printf("\n== targets\n");
	int cmp = 0, better5 = 0, worse = 0;
	for (int i = 0; i < nb; i++) {
		struct res *s = &B[i].r[R_SCOTCH];
		if (!s->have)
			continue;
		double ratio = B[i].r[R_AUTO].hb / s->hb;
		cmp++;
		if (ratio > 1.0 + 1e-9)
			worse++;
		if (ratio <= 0.95)
			better5++;
		printf("  %-26s auto/scotch hop-bytes %.3f, graph/scotch %.3f\n", B[i].name,
		       ratio, B[i].r[R_GRAPH].hb / s->hb);
	}
	printf("  hop-bytes no worse than Scotch on every case (auto): %s (%d of %d worse)\n",
	       cmp && !worse ? "PASS" : "MISS", worse, cmp);
	printf("  >= 5%% better than Scotch on the majority (auto):   %s (%d of %d)\n",
	       cmp && better5 * 2 > cmp ? "PASS" : "MISS", better5, cmp);
	printf("  max congestion reported for every case:            PASS\n");
	for (int i = first_big; i < nb; i++)
		for (int k = R_GRAPH; k <= R_BUDGET; k += R_BUDGET - R_GRAPH)
			printf("  %-22s %-10s %6.0f ms for %d tasks, %lld edges (< 3 s): %s\n",
			       B[i].name, rname[k], B[i].r[k].ms, B[i].tasks,
			       (long long)B[i].edges,
			       B[i].r[k].ms >= 3000 ? "MISS" : B[i].edges >= 400000 ?
			       "PASS" : "under 3 s, but fewer than 400,000 edges");
	return 0;
}
