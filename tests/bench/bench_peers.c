/* bench_peers — topoplace beside the peers on the cases where a
 * peer was ahead, all scored by the same code (topoplace's metrics: average
 * hops per byte, and the maximum load of a directed link with both
 * directions of every edge routed, metrics.h).
 *
 *   bench_peers [--no-scotch] [--no-zoltan2] [--case NAME[,NAME...]] [--list]
 *               [--meshes DIR]
 *
 * Peers run here: Scotch 7 (scotch_gmap -b0 -Cd on a `sub` target of
 * torus3D or tleaf, read back and scored here) and Zoltan2 13.2 (Debian's
 * libtrilinos-zoltan2-dev: the geometric task mapper of Deveci et al.,
 * Geom+R+S: torus shift and every rotation a run on 49 MPI ranks computes,
 * driven by bench-tools/zoltan2_map, see there; tori only, it needs task
 * coordinates and torus extents).  A peer missing here gives a "not run"
 * row, never a failure.  Peers that cannot run here (Mt-KaHyPar: not in
 * Debian; TreeMatch: only inside Open MPI's MPI_Dist_graph_create; Scotch
 * and TreeMatch inside a GPU node) appear as "ref:" rows: the numbers the
 * issue's author measured on the same kind of case with an independent
 * scorer, with the set-up; they are not comparable digit for digit (other
 * random allocation, other scorer).
 *
 * Cases:
 *   ft-stencil  fat tree (core, 4 aggregation switches, 16 leaves x 32
 *               nodes, LevelCost=1,2), 128 random nodes, 8x8x8 7-point
 *               stencil, 4 tasks per node
 *   ft-mesh     the same tree, 256 random nodes, the part graph of a
 *               METIS partition (1,024 parts, METIS's numbering) of the
 *               gmsh boolean demo mesh, 4 tasks per node
 *   t24-1       24^3 torus, 4,096 random nodes, 16^3 7-point stencil
 *   t32-8       32^3 torus, 4,096 random nodes x 8 tasks, 32^3 stencil
 *   seam-2k     32^3 torus, a 16x16x8 box of 2,048 nodes across the x
 *               seam (x 24..31 and 0..7), 8 tasks per node, 32x32x16
 *               stencil
 *   pcie16      inside one 16-GPU PCIe node (conf/examples/nodes/pcie16.xml):
 *               a 4x4 5-point stencil as a GPU matrix, 3 MB per
 *               edge between rows, 1 MB inside a row; phases 2 and 3,
 *               maximum link congestion (ms); 0.508 ms is the least any
 *               assignment can do (an inner task's 8 MB over its own
 *               GPU's link), which TreeMatch and Scotch reach
 *   rand-65k-1  README's case: 64^3 torus, 65,536 random nodes, 64x32x32
 *               7-point stencil, 1 task per node
 *   rand-65k-8  README's case: 48^3 torus, 8,192 random nodes x 8 tasks,
 *               64x32x32 stencil
 *               (both: bench_geom's very allocations, bench_alloc.h; its
 *               1M cases stay out, Zoltan2's 49 variants take too long)
 * Random allocations: seeded splitmix64, listed in node order (so block is
 * Slurm's default).  The auto row's note gives the geometric candidate
 * alone (bench_geom's mapping) when a refinement of it was kept.  topoplace runs policy auto with the defaults and no time
 * budget (the tree cases also hierarchical alone), each once (deterministic;
 * the time is one run's).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <topoplace/node.h>
#include <topoplace/nodeplace.h>
#include <topoplace/version.h>

#include "bench_alloc.h"
#include "input/alloc_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include "bench_time.h"
#include "bench_prog.h"

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif

static void die(const char *what, const tp_error *e)
{
	fprintf(stderr, "bench_peers: %s: %s\n", what, e ? e->msg : strerror(errno));
	exit(2);
}

static int cmp_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	return (a > b) - (a < b);
}

static bool use_scotch = true, use_zoltan2 = true;
static char zoltan2_path[1100];
static char meshes_dir[1100];

/* ---- machines and allocations ---- */

struct mach {
	tp_machine *m;
	bool torus;
	int T;                  /* torus extent (cube) */
	char scotch_arch[200];  /* after "sub N labels" */
	int64_t *label;         /* Scotch terminal of each machine node */
};

static void mach_torus(struct mach *M, int T)
{
	tp_error e;
	int dims[3] = { T, T, T };
	bool wrap[3] = { true, true, true };
	memset(M, 0, sizeof *M);
	M->torus = true;
	M->T = T;
	if (tp_machine_create(&M->m, 3, dims, wrap, &e))
		die("torus", &e);
	M->label = malloc(sizeof(int64_t) * (size_t)T * T * T);
	char name[32];
	for (int z = 0; z < T; z++)
		for (int y = 0; y < T; y++)
			for (int x = 0; x < T; x++) {
				int c[3] = { x, y, z };
				snprintf(name, sizeof name, "t%d_%d_%d", x, y, z);
				int32_t id = tp_machine_add_node(M->m, name, c, &e);
				if (id < 0)
					die("torus node", &e);
				M->label[id] = tp_machine_router_of(M->m, id);
			}
	snprintf(M->scotch_arch, sizeof M->scotch_arch, "torus3D\t%d\t%d\t%d", T, T, T);
}

/* bench_graph's fat tree: core, 4 aggregation switches, 16 leaves x 32. */
static void mach_tree(struct mach *M)
{
	tp_error e;
	char *t = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&t, &tl);
	memset(M, 0, sizeof *M);
	fprintf(f, "SwitchName=core Switches=agg[0-3]\n");
	for (int a = 0; a < 4; a++)
		fprintf(f, "SwitchName=agg%d Switches=leaf[%d-%d]\n", a, a * 4, a * 4 + 3);
	for (int l = 0; l < 16; l++)
		fprintf(f, "SwitchName=leaf%d Nodes=n[%03d-%03d]\n", l, l * 32, l * 32 + 31);
	fclose(f);
	int cost[2] = { 1, 2 };
	if (tp_machine_from_topology(&M->m, t, "bench-topology.conf", cost, 2, &e))
		die("tree", &e);
	free(t);
	int32_t n = tp_machine_node_count(M->m);
	M->label = malloc(sizeof(int64_t) * (size_t)n);
	for (int32_t i = 0; i < n; i++)
		M->label[i] = atol(tp_machine_node_name(M->m, i) + 1);
	/* as bench_graph: our distances x 10 (2(c0+c1), 2c0), 1 on a leaf */
	snprintf(M->scotch_arch, sizeof M->scotch_arch, "tleaf\t3\t4\t60\t4\t20\t32\t1");
}

/* The allocation of nodes p[0..k) (freed here) in node order, so that
 * block is Slurm's default. */
static tp_alloc *sorted_alloc(const struct mach *M, int32_t *p, int32_t k,
			      int slots)
{
	qsort(p, (size_t)k, sizeof(int32_t), cmp_i32);
	tp_alloc *a = NULL;
	tp_error e;
	if (tp_alloc_from_nodes(M->m, p, k, slots, &a, &e))
		die("alloc", &e);
	free(p);
	return a;
}

static tp_alloc *random_alloc(const struct mach *M, int32_t k, int slots,
			      uint64_t seed)
{
	int32_t n = tp_machine_node_count(M->m);
	int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
	for (int32_t i = 0; i < n; i++)
		p[i] = i;
	for (int32_t i = 0; i < k; i++) {
		int32_t j = i + (int32_t)(splitmix64(&seed) % (uint64_t)(n - i));
		int32_t t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return sorted_alloc(M, p, k, slots);
}

/* bench_geom's allocation of its case NAME (bench_alloc.h: the same rule,
 * seed and generator), so the nodes are the very ones of its table; node
 * ids here are bench_geom's (router id, x fastest). */
static tp_alloc *geom_alloc(const struct mach *M, const char *name, int32_t k,
			    int slots)
{
	int64_t nr = (int64_t)M->T * M->T * M->T;
	int32_t *p = malloc(sizeof(int32_t) * (size_t)k);
	if (!p || bench_random_nodes(name, BENCH_GEOM_SEED, nr, k, p))
		die("bench_geom allocation", NULL);
	return sorted_alloc(M, p, k, slots);
}

/* A box x0.. (bx x by x bz, wrapping) of a T^3 torus, in node order. */
static tp_alloc *box_alloc(const struct mach *M, const int *o, const int *b,
			   int slots)
{
	int T = M->T, k = 0;
	int32_t *p = malloc(sizeof(int32_t) * (size_t)b[0] * b[1] * b[2]);
	for (int z = 0; z < b[2]; z++)
		for (int y = 0; y < b[1]; y++)
			for (int x = 0; x < b[0]; x++)
				p[k++] = (o[0] + x) % T + T * ((o[1] + y) % T +
							   T * ((o[2] + z) % T));
	return sorted_alloc(M, p, k, slots);
}

/* ---- results ---- */

struct row {
	char tool[40];
	bool have;
	double hops, cong, ms;
	char note[100];
};

static void score(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		  struct row *r)
{
	tp_error e;
	tp_metrics mt;
	if (tp_mapping_validate(g, a, map, &e))
		die("invalid mapping", &e);
	if (tp_metrics_compute(g, a, map, true, &mt, &e))
		die("metrics", &e);
	r->have = true;
	r->hops = mt.avg_hop_bytes;
	r->cong = mt.max_congestion_bytes;
}

/* Whether PROG is an executable in one of PATH's directories. */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[1024], file[1200];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(dir, sizeof dir, "%.*s", (int)n, path);
		snprintf(file, sizeof file, "%s/%s", n ? dir : ".", prog);
		if (!access(file, X_OK))
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* ---- topoplace ---- */

static void run_topoplace(const tp_graph *g, const tp_alloc *a,
			  enum tp_policy pol, struct row *r)
{
	tp_place_opts o;
	tp_place_report rep;
	tp_error e;
	tp_place_opts_default(&o);
	o.policy = pol;
	int32_t *map = malloc(sizeof(int32_t) * (size_t)tp_graph_ntasks(g) + 4);
	snprintf(r->tool, sizeof r->tool, "topoplace %s", tp_policy_name(pol));
	double t0 = now_ms();
	if (tp_place_ex(g, a, &o, map, &rep, &e))
		die("tp_place_ex", &e);
	r->ms = now_ms() - t0;
	score(g, a, map, r);
	if (rep.best >= 0)
		snprintf(r->note, sizeof r->note, "kept %s", rep.cand[rep.best].name);
	/* geometric alone (bench_geom's mapping), when refine was kept after
	 * it: scores are hop-bytes, so the ratio gives its avg hops */
	for (int i = 0; rep.best >= 0 && i < rep.ncandidates; i++) {
		const tp_place_candidate *c = &rep.cand[i];
		if (i == rep.best || !c->ran || strcmp(c->name, "geometric") ||
		    rep.cand[rep.best].score <= 0)
			continue;
		size_t l = strlen(r->note);
		snprintf(r->note + l, sizeof r->note - l, "; geometric alone "
			 "%.4f in %.0f ms", r->hops * c->score /
			 rep.cand[rep.best].score, c->ms);
	}
	free(map);
}

static void run_block(const tp_graph *g, const tp_alloc *a, struct row *r)
{
	int32_t *map = malloc(sizeof(int32_t) * (size_t)tp_graph_ntasks(g) + 4);
	tp_error e;
	snprintf(r->tool, sizeof r->tool, "block (Slurm)");
	if (tp_map_block(a, tp_graph_ntasks(g), map, &e))
		die("block", &e);
	score(g, a, map, r);
	free(map);
}

/* ---- Scotch ---- */

static void run_scotch(const struct mach *M, const tp_graph *g,
		       const tp_alloc *a, struct row *r)
{
	snprintf(r->tool, sizeof r->tool, "Scotch 7 gmap -b0 -Cd");
	if (!use_scotch) {
		snprintf(r->note, sizeof r->note, "not run: --no-scotch");
		return;
	}
	if (!in_path("scotch_gmap")) {
		snprintf(r->note, sizeof r->note, "not run: scotch_gmap not "
			 "installed (sh contrib/install-deps.sh bench)");
		return;
	}
	char dir[] = "/tmp/bench_peers.XXXXXX", p[256], t[256], m[256], lg[256];
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
		for (int64_t k = xadj[i]; k < xadj[i + 1]; k++)
			fprintf(f, "\t%lld\t%d", (long long)llround(w[k] > 1 ? w[k] : 1), adj[k]);
		fputc('\n', f);
	}
	fclose(f);
	f = fopen(t, "w");
	fprintf(f, "sub\t%d", tp_alloc_nnodes(a));
	for (int32_t i = 0; i < tp_alloc_nnodes(a); i++)
		fprintf(f, "%s%lld", i % 16 ? " " : "\n",
			(long long)M->label[tp_alloc_node(a, i)]);
	fprintf(f, "\n%s\n", M->scotch_arch);
	fclose(f);
	/* -Cd: Debian's Scotch seeds at random by default; a fixed seed
	 * keeps the table reproducible */
	char *argv[] = { "scotch_gmap", "-b0", "-Cd", p, t, m, NULL };
	double t0 = now_ms();
	int st = run_prog(argv, lg, 300, NULL, NULL);
	r->ms = now_ms() - t0;
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	long long cnt, vv, pp;
	int32_t got = 0;
	if (st == 0 && (f = fopen(m, "r"))) {
		if (fscanf(f, "%lld", &cnt) == 1 && cnt == n)
			while (fscanf(f, "%lld %lld", &vv, &pp) == 2 && vv >= 0 && vv < n)
				map[vv] = (int32_t)pp, got++;
		fclose(f);
	}
	tp_error e;
	if (st != 0)
		snprintf(r->note, sizeof r->note, "not run: scotch_gmap %s %d",
			 st == -2 ? "timeout" : "exit", st);
	else if (got != n)
		snprintf(r->note, sizeof r->note, "not run: bad mapping file");
	else if (tp_mapping_validate(g, a, map, &e))
		snprintf(r->note, sizeof r->note, "unbalanced: %.80s", e.msg);
	else
		score(g, a, map, r);
	free(map);
	unlink(p);
	unlink(t);
	unlink(m);
	unlink(lg);
	rmdir(dir);
}

/* ---- Zoltan2 (tori, task coordinates) ---- */

/* The driver's one line ("zoltan2_map: 49 variants, kept rank 10's, 96 ms
 * per variant") as the row's note. */
static void zoltan2_note(const char *log, struct row *r)
{
	char line[200] = "";
	FILE *f = fopen(log, "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "zoltan2_map: ", 13))
			break;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(r->note, sizeof r->note, "%.90s",
		 strncmp(line, "zoltan2_map: ", 13) ? "" : line + 13);
}

static void run_zoltan2(const struct mach *M, const tp_graph *g,
			const tp_alloc *a, struct row *r)
{
	snprintf(r->tool, sizeof r->tool, "Zoltan2 13.2 Geom+R+S");
	if (!use_zoltan2) {
		snprintf(r->note, sizeof r->note, "not run: --no-zoltan2");
		return;
	}
	if (access(zoltan2_path, X_OK)) {
		snprintf(r->note, sizeof r->note, "not run: bench-tools/zoltan2_map "
			 "not built (bench deps; make zoltan2-map)");
		return;
	}
	char dir[] = "/tmp/bench_peers.XXXXXX", in[256], out[256], lg[256];
	if (!mkdtemp(dir)) {
		snprintf(r->note, sizeof r->note, "not run: mkdtemp failed");
		return;
	}
	snprintf(in, sizeof in, "%s/in", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(lg, sizeof lg, "%s/log", dir);
	int32_t n = tp_graph_ntasks(g), nn = tp_alloc_nnodes(a);
	int td = tp_graph_coord_dims(g);
	const double *tc = tp_graph_coords(g);
	const int64_t *xadj = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	int slots = tp_alloc_slots(a, 0);
	int64_t np = tp_alloc_total_slots(a);
	FILE *f = fopen(in, "w");
	fprintf(f, "3 %lld %d %d %lld %d\n%d %d %d\n", (long long)np, td, n,
		(long long)xadj[n], slots, M->T, M->T, M->T);
	/* one processor per slot, the node's slots consecutive */
	int32_t *proc_node = malloc(sizeof(int32_t) * (size_t)np);
	int64_t k = 0;
	for (int32_t i = 0; i < nn; i++) {
		const int *c = tp_machine_node_coords(M->m, tp_alloc_node(a, i));
		for (int s = 0; s < tp_alloc_slots(a, i); s++) {
			fprintf(f, "%d %d %d\n", c[0], c[1], c[2]);
			proc_node[k++] = i;
		}
	}
	for (int32_t t = 0; t < n; t++) {
		for (int d = 0; d < td; d++)
			fprintf(f, "%g ", tc[(int64_t)t * td + d]);
		fputc('\n', f);
	}
	for (int32_t t = 0; t <= n; t++)
		fprintf(f, "%lld\n", (long long)xadj[t]);
	for (int64_t e = 0; e < xadj[n]; e++)
		fprintf(f, "%d\n", adj[e]);
	for (int64_t e = 0; e < xadj[n]; e++)
		fprintf(f, "%g\n", w[e]);
	fclose(f);
	char *argv[] = { zoltan2_path, in, out, NULL };
	double t0 = now_ms();
	int st = run_prog(argv, lg, 600, NULL, NULL);
	r->ms = now_ms() - t0;
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	int32_t got = 0;
	long long p;
	if (st == 0 && (f = fopen(out, "r"))) {
		while (got < n && fscanf(f, "%lld", &p) == 1 && p >= 0 && p < np)
			map[got++] = proc_node[p];
		fclose(f);
	}
	if (st != 0 || got != n)
		snprintf(r->note, sizeof r->note, "not run: zoltan2_map %s (log "
			 "%.60s)", st ? "failed" : "bad output", lg);
	else {
		score(g, a, map, r);
		zoltan2_note(lg, r);
	}
	free(map);
	free(proc_node);
	if (st == 0) {
		unlink(in);
		unlink(out);
		unlink(lg);
		rmdir(dir);
	}
}

/* ---- one network case ---- */

#define MAX_ROWS 8

struct refrow {
	const char *tool;
	double hops, cong;      /* < 0: not given */
	const char *setup;
};

struct outcome {
	const char *name;
	bool have_peer;
	double best_hops, best_cong, topo_hops, topo_cong;
	char hops_peer[40], cong_peer[40];   /* copies: the rows are gone */
};

static struct outcome outcomes[16];
static int noutcomes;

static void print_case(const char *name, const char *what, struct row *rows,
		       int nrows, int topo, const struct refrow *refs, int nrefs)
{
	printf("\n%s: %s\n", name, what);
	printf("  %-30s %10s %12s %10s  %s\n", "mapping", "avg hops", "max cong",
	       "time ms", "note");
	struct outcome *o = &outcomes[noutcomes++];
	memset(o, 0, sizeof *o);
	o->name = name;
	o->topo_hops = rows[topo].hops;
	o->topo_cong = rows[topo].cong;
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		if (r->have)
			printf("  %-30s %10.4f %12.0f %10.1f  %s\n", r->tool, r->hops,
			       r->cong, r->ms, r->note);
		else
			printf("  %-30s %10s %12s %10s  %s\n", r->tool, "n/a", "n/a",
			       "-", r->note);
		bool peer = r->have && strncmp(r->tool, "topoplace", 9) &&
			    strncmp(r->tool, "block", 5);
		if (!peer)
			continue;
		if (!o->have_peer || r->hops < o->best_hops) {
			o->best_hops = r->hops;
			snprintf(o->hops_peer, sizeof o->hops_peer, "%s", r->tool);
		}
		if (!o->have_peer || r->cong < o->best_cong) {
			o->best_cong = r->cong;
			snprintf(o->cong_peer, sizeof o->cong_peer, "%s", r->tool);
		}
		o->have_peer = true;
	}
	for (int i = 0; i < nrefs; i++) {
		char h[16] = "-", c[16] = "-";
		if (refs[i].hops >= 0)
			snprintf(h, sizeof h, "%.4f", refs[i].hops);
		if (refs[i].cong >= 0)
			snprintf(c, sizeof c, "%.3g", refs[i].cong);
		printf("  ref: %-25s %10s %12s %10s  not run here, other "
		       "allocation: %s\n", refs[i].tool, h, c, "-", refs[i].setup);
	}
	if (o->have_peer)
		printf("  topoplace / best peer run here: avg hops %.3f (%s), "
		       "max congestion %.3f (%s)\n", o->topo_hops / o->best_hops,
		       o->hops_peer, o->best_cong > 0 ? o->topo_cong / o->best_cong : 1,
		       o->cong_peer);
	fflush(stdout);
}

static tp_graph *stencil(const char *spec)
{
	tp_graph *g = NULL;
	tp_error e;
	if (tp_graph_from_stencil(&g, spec, 0, &e))
		die(spec, &e);
	return g;
}

static void case_ft_stencil(void)
{
	struct mach M;
	mach_tree(&M);
	tp_alloc *a = random_alloc(&M, 128, 4, 1313);
	tp_graph *g = stencil("8x8x8:7pt");
	struct row rows[MAX_ROWS];
	memset(rows, 0, sizeof rows);
	run_block(g, a, &rows[0]);
	run_topoplace(g, a, TP_POLICY_AUTO, &rows[1]);
	run_topoplace(g, a, TP_POLICY_HIERARCHICAL, &rows[2]);
	run_scotch(&M, g, a, &rows[3]);
	static const struct refrow refs[] = {
		{ "Mt-KaHyPar (hierarchical)", 1.564, 82,
		  "measured elsewhere: 1.564-1.576 avg hops, 82-87 B on the busiest leaf "
		  "uplink (128 fragmented nodes of 16 leaves x 32, 8x8x8, 4/node)" },
		{ "topoplace auto before", 1.610, 130,
		  "measured elsewhere, same set-up and scorer as the row above" },
	};
	print_case("ft-stencil", "fat tree core/4 agg/16 leaves x 32, LevelCost=1,2; "
		   "128 random nodes, 8x8x8 7pt, 4/node", rows, 4, 1, refs, 2);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(M.m);
	free(M.label);
}

static void case_ft_mesh(void)
{
	char path[1300], cmd[2800];
	snprintf(path, sizeof path, "%s/boolean-1024.json", meshes_dir);
	if (access(path, R_OK)) {
		const char *src = getenv("TOPOPLACE_SRC");
		snprintf(cmd, sizeof cmd, "sh %s/tests/bench/make-meshes.sh %s >&2",
			 src ? src : ".", meshes_dir);
		if (system(cmd) != 0 || access(path, R_OK)) {
			printf("\nft-mesh: skipped (%s missing; run from the source root)\n",
			       path);
			return;
		}
	}
	tp_graph *g = NULL;
	tp_error e;
	if (tp_graph_from_json_file(&g, path, -1, &e))
		die(path, &e);
	struct mach M;
	mach_tree(&M);
	tp_alloc *a = random_alloc(&M, 256, 4, 1314);
	struct row rows[MAX_ROWS];
	memset(rows, 0, sizeof rows);
	run_block(g, a, &rows[0]);
	run_topoplace(g, a, TP_POLICY_AUTO, &rows[1]);
	run_topoplace(g, a, TP_POLICY_HIERARCHICAL, &rows[2]);
	run_scotch(&M, g, a, &rows[3]);
	static const struct refrow refs[] = {
		{ "TreeMatch (greedy, -O)", 1.2682, -1,
		  "measured elsewhere: the same tree, 256 nodes, METIS-numbered mesh of "
		  "1,024 parts; topoplace kept block there, 1.2706" },
	};
	print_case("ft-mesh", "the same tree, 256 random nodes, gmsh boolean "
		   "demo in 1,024 METIS parts, 4/node", rows, 4, 1, refs, 1);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(M.m);
	free(M.label);
}

/* GEOM: bench_geom's random allocation of its case NAME, else bench_peers'
 * own (seed 1315 + T) or the box. */
static void case_torus(const char *name, const char *what, int T, int32_t nn,
		       int slots, const char *spec, const int *box0,
		       const int *boxn, bool geom, const struct refrow *refs,
		       int nrefs)
{
	struct mach M;
	mach_torus(&M, T);
	tp_alloc *a = geom ? geom_alloc(&M, name, nn, slots)
		    : box0 ? box_alloc(&M, box0, boxn, slots)
			   : random_alloc(&M, nn, slots, 1315 + (uint64_t)T);
	tp_graph *g = stencil(spec);
	struct row rows[MAX_ROWS];
	memset(rows, 0, sizeof rows);
	run_block(g, a, &rows[0]);
	run_topoplace(g, a, TP_POLICY_AUTO, &rows[1]);
	run_zoltan2(&M, g, a, &rows[2]);
	run_scotch(&M, g, a, &rows[3]);
	print_case(name, what, rows, 4, 1, refs, nrefs);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(M.m);
	free(M.label);
}

/* ---- inside a 16-GPU PCIe node ---- */

static double node_congestion(const tp_node *n, const tp_graph *g, bool magc,
			      tp_gpusel_cost *c)
{
	int G = tp_node_ngpus(n);
	int32_t tasks[64];
	int pkg[64], core[64], gpus[64];
	tp_error e;
	for (int t = 0; t < G; t++)
		tasks[t] = t;
	if (magc) {
		if (tp_node_place_cpus(&(tp_node_tasks){ n, g, tasks, G },
				tp_node_ncores(n) / G, &(tp_cpu_slots){ pkg,
				core, 0 }, &e))
			die("phase 2", &e);
		if (tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks, G },
				.task_package = pkg, .gpus_per_task = 1,
				.algo = TP_GPUSEL_MAGC }, gpus, c, &e))
			die("phase 3", &e);
	} else if (tp_gpusel(&(tp_gpusel_request){ .on = { n, g, tasks, G },
			.gpus_per_task = 1, .algo = TP_GPUSEL_LOCAL_RANK },
			gpus, c, &e)) {
		die("local rank", &e);
	}
	return c->max_congestion_ms;
}

static void case_pcie16(const char *src)
{
	char path[1300];
	snprintf(path, sizeof path, "%s/conf/examples/nodes/pcie16.xml", src);
	tp_node *n = NULL;
	tp_error e;
	if (tp_node_load_xml(path, &n, &e)) {
		printf("\npcie16: skipped (%s)\n", e.msg);
		return;
	}
	/* 1 MB per x edge (inside a row), 3 MB per y edge (between rows), each
	 * way: what each task sends the other */
	tp_graph *g = stencil("4x4:5pt:bytes=1000000:weights=1,3");
	tp_gpusel_cost lr, tp;
	double t0 = now_ms();
	node_congestion(n, g, true, &tp);
	double ms = now_ms() - t0;
	node_congestion(n, g, false, &lr);
	printf("\npcie16: inside one 16-GPU PCIe node (pcie16.xml), 4x4 5pt GPU "
	       "matrix, 3 MB per edge between rows, 1 MB inside a row\n");
	printf("  %-30s %12s %12s %10s\n", "mapping", "max cong ms", "weighted ms",
	       "time ms");
	printf("  %-30s %12.3f %12.3f %10s\n", "local rank (Slurm)",
	       lr.max_congestion_ms, lr.weighted_ms, "-");
	printf("  %-30s %12.3f %12.3f %10.2f\n", "topoplace phases 2+3",
	       tp.max_congestion_ms, tp.weighted_ms, ms);
	printf("  ref: %-25s %12.3f %12s %10s  not run here: measured elsewhere (the same "
	       "node and pattern; topoplace before: 0.80)\n", "TreeMatch, Scotch",
	       0.508, "-", "-");
	struct outcome *o = &outcomes[noutcomes++];
	memset(o, 0, sizeof *o);
	o->name = "pcie16";
	o->topo_cong = tp.max_congestion_ms;
	o->best_cong = 0.508;
	snprintf(o->cong_peer, sizeof o->cong_peer, "TreeMatch/Scotch (ref)");
	printf("  topoplace / reference peers: max congestion %.3f\n",
	       tp.max_congestion_ms / 0.508);
	tp_graph_destroy(g);
	tp_node_destroy(n);
}

/* ---- main ---- */

static const char *const CASES[] = { "ft-stencil", "ft-mesh", "t24-1", "t32-8",
				     "seam-2k", "pcie16", "rand-65k-1",
				     "rand-65k-8" };
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

int main(int argc, char **argv)
{
	bool sel[NCASES], any = false;
	memset(sel, 0, sizeof sel);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-scotch"))
			use_scotch = false;
		else if (!strcmp(argv[i], "--no-zoltan2"))
			use_zoltan2 = false;
		else if (!strcmp(argv[i], "--meshes") && i + 1 < argc)
			snprintf(meshes_dir, sizeof meshes_dir, "%s", argv[++i]);
		else if (!strcmp(argv[i], "--list")) {
			for (int k = 0; k < NCASES; k++)
				puts(CASES[k]);
			return 0;
		} else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
			char *dup = strdup(argv[++i]), *save = NULL;
			for (char *t = strtok_r(dup, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				int k = 0;
				while (k < NCASES && strcmp(t, CASES[k]))
					k++;
				if (k == NCASES) {
					fprintf(stderr, "bench_peers: --case %s: unknown (see --list)\n", t);
					return 2;
				}
				sel[k] = any = true;
			}
			free(dup);
		} else {
			fprintf(stderr, "usage: bench_peers [--no-scotch] [--no-zoltan2] "
				"[--case NAME[,NAME]] [--list] [--meshes DIR]\n");
			return 2;
		}
	}
	for (int k = 0; k < NCASES && !any; k++)
		sel[k] = true;
	/* BUILD/bench/bench_peers: the driver in BUILD/bench-tools, the
	 * meshes in BUILD/meshes, the sources two levels up */
	char self[1024], src[1100];
	ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
	if (l < 0)
		die("readlink", NULL);
	self[l] = 0;
	*strrchr(self, '/') = 0;
	*strrchr(self, '/') = 0;
	snprintf(zoltan2_path, sizeof zoltan2_path, "%s/bench-tools/zoltan2_map", self);
	if (!meshes_dir[0])
		snprintf(meshes_dir, sizeof meshes_dir, "%s/meshes", self);
	const char *env = getenv("TOPOPLACE_SRC");
	snprintf(src, sizeof src, "%s", env ? env : TP_SOURCE_DIR);

	printf("bench_peers: topoplace %s beside its peers; every "
	       "mapping scored by topoplace's metrics:\navg hops = hop-bytes / "
	       "bytes; max cong = largest load of a directed link, both "
	       "directions of every edge routed.\n", TOPOPLACE_VERSION);
	printf("Rows \"ref:\" are numbers the issue's author measured on another "
	       "random allocation with another scorer;\nthey are not run here and "
	       "only roughly comparable.  \"not run\" rows: the peer is missing "
	       "here.\n");
	if (sel[0])
		case_ft_stencil();
	if (sel[1])
		case_ft_mesh();
	static const struct refrow t24[] = {
		{ "Zoltan2 (measured elsewhere)", 2.809, -1, "24^3, 4,096 random nodes, 16^3; "
		  "topoplace then 2.826" } };
	static const struct refrow t32[] = {
		{ "Zoltan2 (measured elsewhere)", 1.867, -1, "32^3, 8 tasks/node; topoplace then 1.874" } };
	static const struct refrow seam[] = {
		{ "Zoltan2 (measured elsewhere)", -1, 14, "2,048 nodes across the seam, "
		  "equal hops; topoplace then 17 (both directions)" } };
	if (sel[2])
		case_torus("t24-1", "24^3 torus, 4,096 random nodes, 16x16x16 7pt, "
			   "1/node", 24, 4096, 1, "16x16x16:7pt", NULL, NULL, false,
			   t24, 1);
	if (sel[3])
		case_torus("t32-8", "32^3 torus, 4,096 random nodes x 8 tasks, "
			   "32x32x32 7pt", 32, 4096, 8, "32x32x32:7pt", NULL, NULL,
			   false, t32, 1);
	if (sel[4]) {
		int o[3] = { 24, 0, 0 }, b[3] = { 16, 16, 8 };
		case_torus("seam-2k", "32^3 torus, box 16x16x8 across the x seam "
			   "(x 24..31, 0..7), 8/node, 32x32x16 7pt", 32, 0, 8,
			   "32x32x16:7pt", o, b, false, seam, 1);
	}
	if (sel[5])
		case_pcie16(src);
	/* README's 65,536-task cases, bench_geom's allocations (its 1M cases
	 * stay out: Zoltan2's 49 variants would take too long) */
	if (sel[6])
		case_torus("rand-65k-1", "64^3 torus, bench_geom's 65,536 random "
			   "nodes, 64x32x32 7pt, 1/node", 64, 65536, 1,
			   "64x32x32:7pt", NULL, NULL, true, NULL, 0);
	if (sel[7])
		case_torus("rand-65k-8", "48^3 torus, bench_geom's 8,192 random "
			   "nodes x 8 tasks, 64x32x32 7pt", 48, 8192, 8,
			   "64x32x32:7pt", NULL, NULL, true, NULL, 0);

	printf("\n== topoplace against the best peer run here (lower is better; "
	       "<= 1.000 = at least as good)\n");
	int behind = 0;
	for (int i = 0; i < noutcomes; i++) {
		struct outcome *o = &outcomes[i];
		if (!strcmp(o->name, "pcie16")) {
			bool ok = o->topo_cong <= o->best_cong * (1 + 1e-9);
			behind += !ok;
			printf("  %-11s max congestion %.3f vs %s: %s\n", o->name,
			       o->topo_cong / o->best_cong, o->cong_peer,
			       ok ? "ahead or equal" : "BEHIND");
			continue;
		}
		if (!o->have_peer) {
			printf("  %-11s no peer ran here\n", o->name);
			continue;
		}
		bool h = o->topo_hops <= o->best_hops * (1 + 1e-9);
		bool c = o->topo_cong <= o->best_cong * (1 + 1e-9);
		behind += !h + !c;
		printf("  %-11s avg hops %.3f (%s): %s; max congestion %.3f (%s): %s\n",
		       o->name, o->topo_hops / o->best_hops, o->hops_peer,
		       h ? "ahead or equal" : "BEHIND", o->best_cong > 0 ?
		       o->topo_cong / o->best_cong : 1, o->cong_peer,
		       c ? "ahead or equal" : "BEHIND");
	}
	printf("  %d comparison(s) behind\n", behind);
	return 0;
}
