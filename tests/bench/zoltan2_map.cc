// zoltan2_map — Zoltan2's geometric task mapper (Deveci et al., "Exploiting
// geometric partitioning in task mapping for parallel computers", IPDPS 2015),
// the paper's own code in Debian's Trilinos 13.2, as a peer for bench_peers.
//
//   zoltan2_map IN OUT
//
// IN (text, whitespace separated):
//   pdim nprocs tdim ntasks nadj ranks_per_node
//   the machine's extents (pdim values; every dimension wraps)
//   nprocs rows of pdim processor coordinates (integers, one row per rank:
//   a node with k ranks is listed k times, consecutively, as a block
//   distribution of ranks over nodes)
//   ntasks rows of tdim task coordinates
//   xadj (ntasks + 1 values), adj (nadj values), weights (nadj values)
// OUT: ntasks lines, the processor (rank) of every task.
// stdout: one line, the rotation kept and the time per rotation.
//
// How Zoltan2 is run (Geom+R+S of the paper, which is what Zoltan2 computes
// when the mapping runs on at least 49 MPI ranks):
// - S: the machine coordinates go through Zoltan2's own torus shift
//   (CoordinateTaskMapper::shiftMachineCoordinates: the largest gap of
//   every dimension becomes the wrap-around).
// - R: every MPI rank r of Zoltan2 computes one variant, the best is
//   reduced.  One process only computes r = 0, which in Zoltan2 13.2 cuts
//   both task and machine coordinates along their longest extent at every
//   level; on a random sparse allocation the two sides then cut different
//   axes and the mapping is poor (4.6 average hops instead of 2.85 on
//   bench_peers' t24-1).  So every rank's variant is computed here, one after
//   the other, by CoordinateCommunicationModel::getMapping(r, ...): the
//   tdim! x pdim! rotations of the paper (task axis order x machine axis
//   order, bisection to single ranks) plus Zoltan2 13.2's tdim! + pdim! + 1
//   longest-extent variants, 49 for 3-D onto 3-D.  Zoltan2 13.2 computes the
//   machine axis order of a rank but no longer applies it (the line is
//   commented out in getMapping); it is applied here, to the coordinates, as
//   the paper and the older code did, so that the paper's 36 rotations are
//   really 36.
// - The variant kept is the one with the fewest hop-bytes on the torus
//   (shortest way round every dimension), ties to the lower rank; Zoltan2
//   itself would judge its shifted coordinates without wrap-around, which
//   can only keep a variant as good or worse on the torus.
#include <Teuchos_DefaultComm.hpp>
#include <Zoltan2_TaskMapping.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef Tpetra::MultiVector<double, int, int> mvector_t;
typedef Zoltan2::XpetraMultiVectorAdapter<mvector_t> adapter_t;
typedef Zoltan2::CoordinateTaskMapper<adapter_t, int> mapper_t;
typedef Tpetra::Map<>::node_type node_t;
typedef Zoltan2::CoordinateCommunicationModel<double, double, int, node_t> model_t;

// 4 axes at most: 4! x 4! + 4! + 4! + 1 = 625 variants already
static const int MAX_DIM = 4;

struct input {
	const char *path;
	FILE *f;
	long item;      // items read so far, for the error line
};

[[noreturn]] static void bad(const input &in, const char *what)
{
	std::fprintf(stderr, "zoltan2_map: %s: item %ld: %s\n", in.path,
		     in.item + 1, what);
	std::exit(2);
}

static double read_num(input &in, const char *what)
{
	double v;
	if (std::fscanf(in.f, "%lf", &v) != 1 || !std::isfinite(v)) {
		char msg[160];
		std::snprintf(msg, sizeof msg, "%s: missing or not a number",
			      what);
		bad(in, msg);
	}
	in.item++;
	return v;
}

// an integer in [lo, hi]
static int read_int(input &in, const char *what, long lo, long hi)
{
	double v = read_num(in, what);
	if (v != std::floor(v) || v < lo || v > hi) {
		in.item--;
		char msg[160];
		std::snprintf(msg, sizeof msg, "%s: %g is not an integer in "
			      "%ld..%ld", what, v, lo, hi);
		bad(in, msg);
	}
	return (int)v;
}

static int factorial(int n)
{
	return n <= 1 ? 1 : n * factorial(n - 1);
}

static double torus_hop_bytes(const std::vector<std::vector<double>> &pc,
			      const std::vector<int> &ext,
			      const std::vector<int> &xadj,
			      const std::vector<int> &adj,
			      const std::vector<double> &w,
			      const std::vector<int> &t2p)
{
	double cost = 0;
	for (size_t t = 0; t + 1 < xadj.size(); t++)
		for (int k = xadj[t]; k < xadj[t + 1]; k++)
			for (size_t d = 0; d < ext.size(); d++) {
				double x = std::fabs(pc[d][t2p[t]] -
						     pc[d][t2p[adj[k]]]);
				cost += w[k] * std::min(x, ext[d] - x);
			}
	return cost;
}

// The machine axis order rank r of Zoltan2 13.2 computes (getMapping's
// decoding of myRank % permutations), 0 where it cuts the longest extent.
static int machine_order_of_rank(int r, int task_perms, int proc_perms)
{
	if (r == 0)
		return 0;
	r--;
	if (r < task_perms)
		return 0;
	r -= task_perms;
	if (r < proc_perms)
		return r;
	r -= proc_perms;
	return r % proc_perms;
}

int main(int argc, char **argv)
{
	Tpetra::ScopeGuard scope(&argc, &argv);
	if (argc != 3) {
		std::fprintf(stderr, "usage: zoltan2_map IN OUT\n");
		return 2;
	}
	input in = { argv[1], std::fopen(argv[1], "r"), 0 };
	if (!in.f) {
		std::perror(argv[1]);
		return 2;
	}
	int pd = read_int(in, "pdim", 1, MAX_DIM);
	int np = read_int(in, "nprocs", 1, 1 << 24);
	int td = read_int(in, "tdim", 1, MAX_DIM);
	int nt = read_int(in, "ntasks", 1, 1 << 24);
	int na = read_int(in, "nadj", 0, 1 << 28);
	int rpn = read_int(in, "ranks_per_node", 1, np);
	std::vector<int> ext(pd);
	for (int d = 0; d < pd; d++)
		ext[d] = read_int(in, "machine extent", 1, 1 << 20);
	std::vector<std::vector<double>> pc(pd, std::vector<double>(np));
	std::vector<std::vector<double>> tc(td, std::vector<double>(nt));
	for (int i = 0; i < np; i++)
		for (int d = 0; d < pd; d++)
			pc[d][i] = read_int(in, "processor coordinate", 0,
					    ext[d] - 1);
	for (int i = 0; i < nt; i++)
		for (int d = 0; d < td; d++)
			tc[d][i] = read_num(in, "task coordinate");
	std::vector<int> xadj(nt + 1), adj(na);
	std::vector<double> w(na);
	for (int i = 0; i <= nt; i++)
		xadj[i] = read_int(in, "xadj (0 first, then not decreasing)",
				   i ? xadj[i - 1] : 0, i ? na : 0);
	if (xadj[nt] != na)
		bad(in, "xadj: the last value is not nadj");
	for (int i = 0; i < na; i++)
		adj[i] = read_int(in, "adj", 0, nt - 1);
	for (int i = 0; i < na; i++)
		if ((w[i] = read_num(in, "weight")) < 0)
			bad(in, "weight: negative");
	char extra;
	if (std::fscanf(in.f, " %c", &extra) == 1)
		bad(in, "more values than the header announces");
	std::fclose(in.f);

	auto comm = Tpetra::getDefaultComm();
	Teuchos::RCP<const Zoltan2::Environment> env =
		Teuchos::rcp(new Zoltan2::Environment(comm));
	Kokkos::View<int *, Kokkos::HostSpace> none;
	std::vector<double *> pp(pd), tp(td);
	for (int d = 0; d < pd; d++)
		pp[d] = pc[d].data();
	for (int d = 0; d < td; d++)
		tp[d] = tc[d].data();

	// Zoltan2's torus shift is a member of the mapper, which maps once
	// (rank 0's variant, thrown away) when it is built.
	Teuchos::ArrayRCP<int> rx(xadj.data(), 0, nt + 1, false);
	Teuchos::ArrayRCP<int> ra(adj.data(), 0, na, false);
	mapper_t shifter(env.getRawPtr(), comm.getRawPtr(), pd, np, pp.data(),
			 td, nt, tp.data(), rx, ra, w.data(), -1, none,
			 ext.data(), rpn, false, false);
	bool wrap[MAX_DIM] = { true, true, true, true };
	double **shifted = shifter.shiftMachineCoordinates(pd, ext.data(), wrap,
							   np, pp.data());

	int task_perms = factorial(td), proc_perms = factorial(pd);
	int variants = task_perms * proc_perms + task_perms + proc_perms + 1;
	std::vector<int> best;
	double best_cost = -1, total_ms = 0;
	int best_rank = -1;
	for (int r = 0; r < variants; r++) {
		int order[MAX_DIM];
		Zoltan2::ithPermutation<int>(
			pd, machine_order_of_rank(r, task_perms, proc_perms), order);
		std::vector<double *> ordered(pd);
		for (int d = 0; d < pd; d++)
			ordered[d] = shifted[order[d]];
		model_t model(pd, ordered.data(), td, tp.data(), np, nt, NULL,
			      NULL);
		model.num_ranks_per_node = rpn;
		model.divide_to_prime_first = false;
		model.setPartArraySize(-1);  // bisection down to single ranks
		model.setPartArray(none);
		Teuchos::ArrayRCP<int> p2tx, p2ta, t2p;
		auto t0 = std::chrono::steady_clock::now();
		model.getMapping(r, env, p2tx, p2ta, t2p, comm);
		total_ms += std::chrono::duration<double, std::milli>(
				    std::chrono::steady_clock::now() - t0).count();
		std::vector<int> map(t2p.begin(), t2p.end());
		double cost = torus_hop_bytes(pc, ext, xadj, adj, w, map);
		if (best_cost < 0 || cost < best_cost) {
			best_cost = cost;
			best = map;
			best_rank = r;
		}
	}
	for (int d = 0; d < pd; d++)
		delete[] shifted[d];
	delete[] shifted;

	FILE *out = std::fopen(argv[2], "w");
	if (!out) {
		std::perror(argv[2]);
		return 2;
	}
	for (int t = 0; t < nt; t++)
		std::fprintf(out, "%d\n", best[t]);
	if (std::fclose(out)) {
		std::perror(argv[2]);
		return 2;
	}
	std::printf("zoltan2_map: %d variants, kept rank %d's, %.0f ms per "
		    "variant\n", variants, best_rank, total_ms / variants);
	return 0;
}
