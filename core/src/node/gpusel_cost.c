/* topoplace — the cost of an assignment of GPUs to a node's tasks: the
 * load of every link of the node (traffic between the tasks' GPUs on
 * their routes, traffic to other nodes on the way to each GPU's network
 * card), the largest congestion, the bandwidth-weighted costs, the GPUs
 * off their task's socket; and the order in which tp_gpusel prefers
 * costs. */
#include <string.h>

#include "node/node_internal.h"
#include "node/node_place.h"

/* Task p's traffic to other nodes (the diagonal of c), a share per GPU, on
 * the route from its GPU a to a's network card; returns the weighted cost
 * added.  Nothing on nodes without a card. */
static double add_remote_traffic(const struct gsel *sel, int32_t p, int a,
				 double *load)
{
	const tp_node *n = sel->n;
	double bytes = sel->c[(size_t)p * sel->nt + p];
	if (n->nnics == 0 || bytes <= 0)
		return 0;
	double x = bytes / sel->gpt, bw = 0;
	for (int r = n->nic_route_off[a]; r < n->nic_route_off[a + 1]; r++) {
		load[n->nic_route[r]] += x;
		double b = n->link[n->nic_route[r]].bw;
		if (bw == 0 || b < bw)
			bw = b;
	}
	return bw > 0 ? x / bw : 0;
}

/* Adds the traffic between task p's GPU a and its neighbours' GPUs (and to
 * other nodes, through a's network card) to load; returns the
 * bandwidth-weighted cost of the traffic inside the node (ns) and writes
 * that of the traffic to the card to *remote_w. */
double tp__gpusel_add_gpu_traffic(const struct gsel *sel, const int *gpus,
				  const bool *mapped, int32_t p, int a, double *load,
				  double *remote_w)
{
	const tp_node *n = sel->n;
	int32_t nt = sel->nt;
	int gpt = sel->gpt;
	double wcost = 0;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t q = 0; q < nt; q++) {
		double w = sel->c[(size_t)p * nt + q];
		if (q == p || w <= 0 || !mapped[q])
			continue;
		for (int k = 0; k < gpt; k++) {
			int b = gpus[(size_t)q * gpt + k];
			if (b < 0)
				continue;
			double x = w * share;
			int pp = a * n->ngpus + b;
			for (int r = n->route_off[pp]; r < n->route_off[pp + 1]; r++)
				load[n->route[r]] += x;
			if (n->pbw[pp] > 0)
				wcost += x / n->pbw[pp];
		}
	}
	*remote_w = add_remote_traffic(sel, p, a, load);
	return wcost;
}

double tp__gpusel_max_cong(const tp_node *n, const double *load, int *arg)
{
	double m = 0;
	if (arg)
		*arg = -1;
	for (int l = 0; l < n->nlinks; l++) {
		double x = load[l] / n->link[l].bw;
		if (x > m) {
			m = x;
			if (arg)
				*arg = l;
		}
	}
	return m;
}

/* The cost of the assignment gpus (task-major); load: nlinks scratch. */
void tp__gpusel_evaluate(const struct gsel *sel, const int *gpus, double *load,
			 tp_gpusel_cost *cost)
{
	const tp_node *n = sel->n;
	const double *c = sel->c;
	const int *pkg = sel->pkg;
	int32_t nt = sel->nt;
	int gpt = sel->gpt;
	memset(load, 0, sizeof(double) * (size_t)n->nlinks);
	double w = 0, total = 0;
	double share = 1.0 / ((double)gpt * gpt);
	for (int32_t p = 0; p < nt; p++)
		for (int32_t q = p + 1; q < nt; q++) {
			double b = c[(size_t)p * nt + q];
			if (b <= 0)
				continue;
			total += b;
			for (int i = 0; i < gpt; i++)
				for (int k = 0; k < gpt; k++) {
					int x = gpus[(size_t)p * gpt + i];
					int y = gpus[(size_t)q * gpt + k];
					int pp = x * n->ngpus + y;
					for (int r = n->route_off[pp]; r < n->route_off[pp + 1]; r++)
						load[n->route[r]] += b * share;
					if (n->pbw[pp] > 0)
						w += b * share / n->pbw[pp];
				}
		}
	double rw = 0;
	for (int32_t p = 0; p < nt; p++)
		for (int i = 0; i < gpt; i++)
			rw += add_remote_traffic(sel, p, gpus[(size_t)p * gpt + i],
						 load);
	cost->nic_weighted_ms = rw / 1e6;
	cost->socket_misses = 0;
	for (int32_t p = 0; pkg && p < nt; p++)
		for (int i = 0; i < gpt; i++)
			cost->socket_misses += pkg[p] >= 0 &&
				n->gpu[gpus[(size_t)p * gpt + i]].package >= 0 &&
				n->gpu[gpus[(size_t)p * gpt + i]].package != pkg[p];
	int arg;
	cost->max_congestion_ms = tp__gpusel_max_cong(n, load, &arg) / 1e6;
	cost->max_link = arg;
	cost->weighted_ms = w / 1e6;
	cost->total_bytes = total;
}

/* a better than b: congestion, then the weighted cost inside the node, then
 * GPUs away from their task's socket, then the weighted cost of the way to
 * the network cards. */
bool tp__gpusel_cost_lt(const tp_gpusel_cost *a, const tp_gpusel_cost *b)
{
	if (tp__node_lt(a->max_congestion_ms, b->max_congestion_ms))
		return true;
	if (tp__node_lt(b->max_congestion_ms, a->max_congestion_ms))
		return false;
	if (tp__node_lt(a->weighted_ms, b->weighted_ms))
		return true;
	if (tp__node_lt(b->weighted_ms, a->weighted_ms))
		return false;
	if (a->socket_misses != b->socket_misses)
		return a->socket_misses < b->socket_misses;
	return tp__node_lt(a->nic_weighted_ms, b->nic_weighted_ms);
}
