/* topoplace benchmark: one training step's communication, for SimGrid SMPI
 * (tests/bench/simgrid/train.py runs it).
 *
 *   train_step TP CP EP PP DP LAYERS MICRO TP_BYTES PP_BYTES DP_BYTES EP_BYTES
 *
 * Ranks as Megatron numbers them, order tp-cp-ep-dp-pp (the first varies
 * fastest): rank = tp + TP (cp + CP (ep + EP (dp + DP pp))).  A group of
 * one kind is the ranks that differ in that coordinate alone; its ring is
 * its ranks in group-rank order, as NCCL's ring inside one group.  One
 * step, GPipe-style (all forwards, then all backwards), no computation:
 *   - each microbatch, forward: a stage receives the activations from the
 *     stage before (PP_BYTES), runs its LAYERS layers, sends them on; each
 *     layer a TP all-reduce (TP_BYTES), a CP ring pass (TP_BYTES / CP a
 *     hop: the K/V blocks of ring attention) and an EP all-to-all
 *     (EP_BYTES) where those groups have more than one rank;
 *   - backward the same in reverse order, gradients to the stage before;
 *   - then the DP gradient all-reduce (DP_BYTES); with EP > 1 two, as
 *     Megatron's DDP runs an MoE model's: the dense parameters' over the
 *     data-parallel group (ep and dp varying, ring in ep-fastest order),
 *     then the experts' over the expert-data-parallel group (dp varying,
 *     ep fixed), DP_BYTES / 2 each.
 * Every all-reduce is the ring algorithm written out with MPI_Sendrecv
 * (reduce-scatter, then all-gather: 2 (n - 1) steps of bytes / n), so that
 * it is the ring and not SMPI's choice of algorithm; the all-to-all is the
 * pairwise exchange (n - 1 steps of bytes / n).  Buffers are
 * SMPI_SHARED_MALLOC: nothing is copied, only timed.  Rank 0 prints
 * "step_us T": from a common start (after a barrier) to the last rank's
 * end. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { D_TP, D_CP, D_EP, D_DP, D_PP, ND };

/* One rank's state: no globals, since SMPI runs the ranks as threads of
 * one process (smpi/privatization:no). */
struct rk {
	int size[ND], coord[ND];
	char *buf, *rbuf;
};

/* The world rank of this rank's group member at coordinate c of dim d. */
static int peer(const struct rk *k, int d, int c)
{
	int x[ND], r = 0;
	for (int i = 0; i < ND; i++)
		x[i] = k->coord[i];
	x[d] = ((c % k->size[d]) + k->size[d]) % k->size[d];
	for (int i = ND - 1; i >= 0; i--)
		r = r * k->size[i] + x[i];
	return r;
}

/* The world rank at group position g of the group over dims d (fastest)
 * and e (e < 0: d alone). */
static int peer2(const struct rk *k, int d, int e, int g)
{
	int nd = k->size[d], ne = e >= 0 ? k->size[e] : 1;
	g = ((g % (nd * ne)) + nd * ne) % (nd * ne);
	struct rk t = *k;
	t.coord[d] = g % nd;
	if (e >= 0)
		t.coord[e] = g / nd;
	return peer(&t, d, t.coord[d]);
}

/* The ring all-reduce over the group of dims d (fastest) and e (-1: d
 * alone), its ring in group-rank order. */
static void ring_allreduce2(const struct rk *k, int d, int e, long bytes, int tag)
{
	int n = k->size[d] * (e >= 0 ? k->size[e] : 1);
	if (n < 2 || bytes <= 0)
		return;
	int g = k->coord[d] + (e >= 0 ? k->size[d] * k->coord[e] : 0);
	int next = peer2(k, d, e, g + 1), prev = peer2(k, d, e, g - 1);
	int chunk = (int)(bytes / n > 0 ? bytes / n : 1);
	for (int s = 0; s < 2 * (n - 1); s++)
		MPI_Sendrecv(k->buf, chunk, MPI_BYTE, next, tag, k->rbuf, chunk, MPI_BYTE,
			     prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void ring_allreduce(const struct rk *k, int d, long bytes, int tag)
{
	ring_allreduce2(k, d, -1, bytes, tag);
}

/* CP: each rank passes its K/V block around the ring (n - 1 hops). */
static void ring_pass(const struct rk *k, int d, long bytes, int tag)
{
	int n = k->size[d];
	if (n < 2 || bytes <= 0)
		return;
	int next = peer(k, d, k->coord[d] + 1), prev = peer(k, d, k->coord[d] - 1);
	int chunk = (int)(bytes / n > 0 ? bytes / n : 1);
	for (int s = 0; s < n - 1; s++)
		MPI_Sendrecv(k->buf, chunk, MPI_BYTE, next, tag, k->rbuf, chunk, MPI_BYTE,
			     prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void all_to_all(const struct rk *k, int d, long bytes, int tag)
{
	int n = k->size[d];
	if (n < 2 || bytes <= 0)
		return;
	int chunk = (int)(bytes / n > 0 ? bytes / n : 1);
	for (int j = 1; j < n; j++)
		MPI_Sendrecv(k->buf, chunk, MPI_BYTE, peer(k, d, k->coord[d] + j), tag,
			     k->rbuf, chunk, MPI_BYTE, peer(k, d, k->coord[d] - j), tag,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void layer(const struct rk *k, int layers, long tp_bytes, long ep_bytes)
{
	for (int l = 0; l < layers; l++) {
		ring_allreduce(k, D_TP, tp_bytes, 1);
		ring_pass(k, D_CP, tp_bytes, 2);
		all_to_all(k, D_EP, ep_bytes, 3);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int nranks, me;
	struct rk st, *k = &st;
	int *size = st.size, *coord = st.coord;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 12) {
		if (me == 0)
			fprintf(stderr, "usage: train_step TP CP EP PP DP LAYERS MICRO "
				"TP_BYTES PP_BYTES DP_BYTES EP_BYTES\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	size[D_TP] = atoi(argv[1]);
	size[D_CP] = atoi(argv[2]);
	size[D_EP] = atoi(argv[3]);
	size[D_PP] = atoi(argv[4]);
	size[D_DP] = atoi(argv[5]);
	int layers = atoi(argv[6]), micro = atoi(argv[7]);
	long tp_bytes = atol(argv[8]), pp_bytes = atol(argv[9]);
	long dp_bytes = atol(argv[10]), ep_bytes = atol(argv[11]);
	long world = 1;
	for (int i = 0; i < ND; i++) {
		if (size[i] < 1) {
			if (me == 0)
				fprintf(stderr, "train_step: every group size must be >= 1\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		world *= size[i];
	}
	if (world != nranks) {
		if (me == 0)
			fprintf(stderr, "train_step: tp x cp x ep x pp x dp = %ld, but %d "
				"ranks\n", world, nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int i = 0, r = me; i < ND; i++) {
		coord[i] = r % size[i];
		r /= size[i];
	}
	long most = tp_bytes > pp_bytes ? tp_bytes : pp_bytes;
	most = most > dp_bytes ? most : dp_bytes;
	most = most > ep_bytes ? most : ep_bytes;
	st.buf = SMPI_SHARED_MALLOC((size_t)most + 1);
	st.rbuf = SMPI_SHARED_MALLOC((size_t)most + 1);

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	int stage = coord[D_PP], last = size[D_PP] - 1;
	int up = stage > 0 ? peer(k, D_PP, stage - 1) : -1;
	int down = stage < last ? peer(k, D_PP, stage + 1) : -1;
	for (int m = 0; m < micro; m++) {
		if (up >= 0)
			MPI_Recv(st.rbuf, (int)pp_bytes, MPI_BYTE, up, 10, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		layer(k, layers, tp_bytes, ep_bytes);
		if (down >= 0)
			MPI_Send(st.buf, (int)pp_bytes, MPI_BYTE, down, 10, MPI_COMM_WORLD);
	}
	for (int m = 0; m < micro; m++) {
		if (down >= 0)
			MPI_Recv(st.rbuf, (int)pp_bytes, MPI_BYTE, down, 11, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		layer(k, layers, tp_bytes, ep_bytes);
		if (up >= 0)
			MPI_Send(st.buf, (int)pp_bytes, MPI_BYTE, up, 11, MPI_COMM_WORLD);
	}
	if (size[D_EP] > 1) {
		ring_allreduce2(k, D_EP, D_DP, dp_bytes / 2, 12);
		ring_allreduce(k, D_DP, dp_bytes / 2, 13);
	} else {
		ring_allreduce(k, D_DP, dp_bytes, 12);
	}
	double t1 = MPI_Wtime() - t0, latest = 0;
	MPI_Reduce(&t1, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("step_us %.3f\n", latest * 1e6);
	SMPI_SHARED_FREE(st.buf);
	SMPI_SHARED_FREE(st.rbuf);
	MPI_Finalize();
	return 0;
}
