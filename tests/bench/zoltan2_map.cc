// zoltan2_map — Zoltan2's geometric task mapper (Deveci et al.), the
// geometric-mapping paper's own code, as a peer for bench_peers (issue 13).
//
//   zoltan2_map IN OUT
//
// IN (text, whitespace separated):
//   pdim nprocs tdim ntasks nadj ranks_per_node
//   the machine's extents (pdim values; every dimension wraps)
//   nprocs rows of pdim processor coordinates (one row per task slot: a
//   node with k slots is listed k times, consecutively)
//   ntasks rows of tdim task coordinates
//   xadj (ntasks + 1 values), adj (nadj values), weights (nadj values)
// OUT: ntasks lines, the processor (slot) of every task.
//
// Zoltan2 13.2 (Debian's libtrilinos-zoltan2-dev) spreads its rotation search
// over MPI ranks: one process computes permutation 0 only, and the machine
// axis permutation it computes is not applied.  The search is done here
// instead: every permutation of the task axes times every permutation of the
// machine axes (36 for 3-D onto 3-D) is one call of
// coordinateTaskMapperInterface on the permuted coordinates (its own torus
// seam shift included), each scored by hop-bytes on the torus, the best kept
// (ties: the first) — the "best rotation" of the measurements.
#include <Teuchos_DefaultComm.hpp>
#include <Zoltan2_TaskMapping.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

static double torus_hops(const std::vector<std::vector<double>> &pc, int a,
			 int b, const std::vector<int> &ext)
{
	double h = 0;
	for (size_t d = 0; d < ext.size(); d++) {
		double x = pc[d][a] - pc[d][b];
		if (x < 0)
			x = -x;
		h += std::min(x, ext[d] - x);
	}
	return h;
}

int main(int argc, char **argv)
{
	Tpetra::ScopeGuard scope(&argc, &argv);
	if (argc != 3) {
		std::fprintf(stderr, "usage: zoltan2_map IN OUT\n");
		return 2;
	}
	FILE *in = std::fopen(argv[1], "r");
	int pd, np, td, nt, na, rpn;
	if (!in || std::fscanf(in, "%d %d %d %d %d %d", &pd, &np, &td, &nt, &na,
			       &rpn) != 6) {
		std::fprintf(stderr, "zoltan2_map: %s: bad header\n", argv[1]);
		return 2;
	}
	std::vector<int> ext(pd);
	for (int d = 0; d < pd; d++)
		if (std::fscanf(in, "%d", &ext[d]) != 1)
			return 2;
	std::vector<std::vector<double>> pc(pd, std::vector<double>(np));
	std::vector<std::vector<double>> tc(td, std::vector<double>(nt));
	for (int i = 0; i < np; i++)
		for (int d = 0; d < pd; d++)
			if (std::fscanf(in, "%lf", &pc[d][i]) != 1)
				return 2;
	for (int i = 0; i < nt; i++)
		for (int d = 0; d < td; d++)
			if (std::fscanf(in, "%lf", &tc[d][i]) != 1)
				return 2;
	std::vector<int> xadj(nt + 1), adj(na);
	std::vector<double> w(na);
	for (int i = 0; i <= nt; i++)
		if (std::fscanf(in, "%d", &xadj[i]) != 1)
			return 2;
	for (int i = 0; i < na; i++)
		if (std::fscanf(in, "%d", &adj[i]) != 1)
			return 2;
	for (int i = 0; i < na; i++)
		if (std::fscanf(in, "%lf", &w[i]) != 1)
			return 2;
	std::fclose(in);

	auto comm = Tpetra::getDefaultComm();
	Kokkos::View<int *, Kokkos::HostSpace> none;
	std::vector<int> tperm(td), pperm(pd), best(nt), p2tx(np + 1), p2ta(nt);
	double best_cost = -1;
	for (int i = 0; i < td; i++)
		tperm[i] = i;
	do {
		for (int i = 0; i < pd; i++)
			pperm[i] = i;
		do {
			std::vector<double *> pp(pd), tp(td);
			std::vector<int> dims(pd);
			for (int d = 0; d < pd; d++) {
				pp[d] = pc[pperm[d]].data();
				dims[d] = ext[pperm[d]];
			}
			for (int d = 0; d < td; d++)
				tp[d] = tc[tperm[d]].data();
			Zoltan2::coordinateTaskMapperInterface<int, double, double>(
				comm, pd, np, pp.data(), td, nt, tp.data(), xadj.data(),
				adj.data(), w.data(), p2tx.data(), p2ta.data(), -1, none,
				dims.data(), rpn, false);
			std::vector<int> t2p(nt);
			for (int p = 0; p < np; p++)
				for (int k = p2tx[p]; k < p2tx[p + 1]; k++)
					t2p[p2ta[k]] = p;
			double cost = 0;
			for (int t = 0; t < nt; t++)
				for (int k = xadj[t]; k < xadj[t + 1]; k++)
					if (adj[k] > t)
						cost += w[k] * torus_hops(pc, t2p[t],
									  t2p[adj[k]], ext);
			if (best_cost < 0 || cost < best_cost) {
				best_cost = cost;
				best = t2p;
			}
		} while (std::next_permutation(pperm.begin(), pperm.end()));
	} while (std::next_permutation(tperm.begin(), tperm.end()));

	FILE *out = std::fopen(argv[2], "w");
	if (!out)
		return 2;
	for (int t = 0; t < nt; t++)
		std::fprintf(out, "%d\n", best[t]);
	return std::fclose(out) ? 2 : 0;
}
