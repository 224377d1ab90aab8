/* libtopoplace-trace — record an MPI program's communication pattern as a
 * topoplace graph (the PMPI profiling interface; C and C++ programs).
 *
 *   LD_PRELOAD=/usr/local/lib/topoplace/openmpi/libtopoplace-trace.so \
 *       mpirun ./app             (or srun --export=ALL,LD_PRELOAD=...)
 *
 * Each rank counts the bytes it sends to each peer (world ranks).  At
 * MPI_Finalize rank 0 gathers the counts and writes TOPOPLACE_TRACE (default
 * topoplace-trace.json in its working directory): a JSON graph for
 * topoplace map --graph / sbatch --topo-graph, "directed" (a->b and b->a add
 * up), plus "cart" (dims, periods, and the same grid as a --stencil shape)
 * when the program called MPI_Cart_create.
 *
 * What is counted (doc/mpi.md):
 *   point-to-point  bytes as sent: MPI_Send, Bsend, Ssend, Rsend, Isend,
 *                   Ibsend, Issend, Irsend, Sendrecv, Sendrecv_replace
 *   collectives     expanded as their usual algorithms send them:
 *     Bcast         binomial tree from the root, the whole buffer per edge
 *     Reduce        binomial tree towards the root, the whole buffer per edge
 *     Allreduce     recursive doubling: the whole buffer to rank XOR 2^k;
 *                   ranks beyond the largest power of two first send to
 *                   rank - 2^k and get the result back
 *     Allgather     as MPICH, by the bytes gathered (p blocks): recursive
 *                   doubling below 512 KiB on a power of two of ranks
 *                   (step k: the 2^k blocks so far to rank XOR 2^k),
 *                   Bruck's below 80 KiB on others (step k: 2^k blocks,
 *                   the last what is left, to rank - 2^k), the ring above
 *                   (p - 1 blocks to the next rank)
 *     Alltoall      as MPICH: Bruck's rounds (r + 2^k) for blocks of at most
 *                   256 bytes on 8 ranks or more, each block straight to its
 *                   rank below 32 KiB, pairwise rounds above
 *     Alltoallv     each block straight to its rank, at once
 *     Gather,Scatter linear: each block straight to or from the root
 *     Barrier       nothing (no payload)
 *   TOPOPLACE_TRACE_COLLECTIVES=0 counts point-to-point only.  Other calls
 *   (one-sided, persistent requests, neighbourhood and non-blocking
 *   collectives, intercommunicators) are not counted.
 *
 * Built once per MPI ABI (Open MPI and MPICH differ): make builds
 * build/trace/openmpi/ and build/trace/mpich/ where mpicc.openmpi and
 * mpicc.mpich exist.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nworld = -1, me_world = -1;
static double *sent;            /* bytes to each world rank */
static double *msgs;            /* messages to each world rank */
static double *rounds;          /* of those, sent in collectives' rounds */
static int keyval = MPI_KEYVAL_INVALID;
static int cart_ndims;
static int cart_dims[8], cart_periods[8];
static int collectives = 1;

static int free_table(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	free(val);
	return MPI_SUCCESS;
}

static int ready(void)
{
	int init = 0, fin = 0;
	if (sent)
		return 1;
	if (PMPI_Initialized(&init) != MPI_SUCCESS || !init ||
	    PMPI_Finalized(&fin) != MPI_SUCCESS || fin)
		return 0;
	PMPI_Comm_size(MPI_COMM_WORLD, &nworld);
	PMPI_Comm_rank(MPI_COMM_WORLD, &me_world);
	sent = calloc((size_t)nworld, sizeof *sent);
	msgs = calloc((size_t)nworld, sizeof *msgs);
	rounds = calloc((size_t)nworld, sizeof *rounds);
	if (!msgs || !rounds) {
		free(sent);
		free(msgs);
		free(rounds);
		sent = msgs = rounds = NULL;
		return 0;
	}
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_table, &keyval, NULL);
	const char *c = getenv("TOPOPLACE_TRACE_COLLECTIVES");
	collectives = !(c && !strcmp(c, "0"));
	return sent != NULL;
}

/* comm's rank r as a world rank (-1: not countable). */
static int world_rank(MPI_Comm comm, int r)
{
	if (r < 0)
		return -1;   /* MPI_PROC_NULL and friends */
	if (comm == MPI_COMM_WORLD)
		return r < nworld ? r : -1;
	int inter = 0, flag = 0, size = 0;
	int *tab = NULL;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return -1;
	PMPI_Comm_get_attr(comm, keyval, &tab, &flag);
	if (!flag) {
		MPI_Group g, w;
		PMPI_Comm_size(comm, &size);
		tab = malloc(sizeof *tab * (size_t)size);
		int *idx = malloc(sizeof *idx * (size_t)size);
		if (!tab || !idx) {
			free(tab);
			free(idx);
			return -1;
		}
		for (int i = 0; i < size; i++)
			idx[i] = i;
		PMPI_Comm_group(comm, &g);
		PMPI_Comm_group(MPI_COMM_WORLD, &w);
		PMPI_Group_translate_ranks(g, size, idx, w, tab);
		PMPI_Group_free(&g);
		PMPI_Group_free(&w);
		free(idx);
		PMPI_Comm_set_attr(comm, keyval, tab);
	} else {
		PMPI_Comm_size(comm, &size);
	}
	return r < size && tab[r] >= 0 && tab[r] != MPI_UNDEFINED ? tab[r] : -1;
}

static double type_bytes(int count, MPI_Datatype t)
{
	int size = 0;
	if (count <= 0 || t == MPI_DATATYPE_NULL ||
	    PMPI_Type_size(t, &size) != MPI_SUCCESS)
		return 0;
	return (double)count * size;
}

/* bytes sent to comm's rank dest in n messages; n_rounds of them in a
 * collective's rounds, each waiting for the round before (the latency a
 * placement adds to every one: topoplace's time model counts them apart
 * from the bandwidth of the exchange). */
static void count_msgs(MPI_Comm comm, int dest, double bytes, double n,
		       double n_rounds)
{
	if (bytes <= 0 || !ready())
		return;
	int w = world_rank(comm, dest);
	if (w >= 0 && w != me_world) {
		sent[w] += bytes;
		msgs[w] += n;
		rounds[w] += n_rounds;
	}
}

static void count_send(MPI_Comm comm, int dest, double bytes)
{
	count_msgs(comm, dest, bytes, 1, 0);
}

/* One round of a collective: one message of bytes to dest. */
static void count_round(MPI_Comm comm, int dest, double bytes)
{
	count_msgs(comm, dest, bytes, 1, 1);
}

static int comm_geometry(MPI_Comm comm, int *rank, int *size)
{
	int inter = 0;
	if (!ready() || !collectives ||
	    PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return 0;
	PMPI_Comm_rank(comm, rank);
	PMPI_Comm_size(comm, size);
	return *size > 1;
}

/* ---- point-to-point ---- */

#define SEND_WRAPPER(NAME)                                                   \
	int NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, \
		 MPI_Comm comm)                                                  \
	{                                                                        \
		count_send(comm, dest, type_bytes(count, t));                    \
		return P##NAME(buf, count, t, dest, tag, comm);                  \
	}
SEND_WRAPPER(MPI_Send)
SEND_WRAPPER(MPI_Bsend)
SEND_WRAPPER(MPI_Ssend)
SEND_WRAPPER(MPI_Rsend)

#define ISEND_WRAPPER(NAME)                                                  \
	int NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, \
		 MPI_Comm comm, MPI_Request *req)                                \
	{                                                                        \
		count_send(comm, dest, type_bytes(count, t));                    \
		return P##NAME(buf, count, t, dest, tag, comm, req);             \
	}
ISEND_WRAPPER(MPI_Isend)
ISEND_WRAPPER(MPI_Ibsend)
ISEND_WRAPPER(MPI_Issend)
ISEND_WRAPPER(MPI_Irsend)

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
		 int stag, void *rbuf, int rcount, MPI_Datatype rtype, int src,
		 int rtag, MPI_Comm comm, MPI_Status *status)
{
	count_send(comm, dest, type_bytes(scount, stype));
	return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
			     rtype, src, rtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest,
			 int stag, int src, int rtag, MPI_Comm comm,
			 MPI_Status *status)
{
	count_send(comm, dest, type_bytes(count, t));
	return PMPI_Sendrecv_replace(buf, count, t, dest, stag, src, rtag, comm,
				     status);
}

/* ---- collectives, as their usual algorithms send ---- */

/* Binomial tree rooted at root: the edges this rank sends on (towards the
 * leaves for bcast, towards the root for reduce). */
static void binomial(MPI_Comm comm, int root, double bytes, int to_root)
{
	int r, p;
	if (bytes <= 0 || !comm_geometry(comm, &r, &p))
		return;
	int vr = (r - root + p) % p, mask = 1;
	while (mask < p && !(vr & mask))
		mask <<= 1;
	if (to_root) {           /* reduce: one send, to the parent */
		if (vr)
			count_round(comm, (vr - mask + root) % p, bytes);
		return;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)   /* bcast: to the children */
		if (vr + mask < p)
			count_round(comm, (vr + mask + root) % p, bytes);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	binomial(comm, root, type_bytes(count, t), 0);
	return PMPI_Bcast(buf, count, t, root, comm);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t,
	       MPI_Op op, int root, MPI_Comm comm)
{
	binomial(comm, root, type_bytes(count, t), 1);
	return PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t,
		  MPI_Op op, MPI_Comm comm)
{
	int r, p;
	double bytes = type_bytes(count, t);
	if (bytes > 0 && comm_geometry(comm, &r, &p)) {
		int pof2 = 1;
		while (pof2 * 2 <= p)
			pof2 *= 2;
		if (r >= pof2) {                 /* in, then the result back */
			count_round(comm, r - pof2, bytes);
		} else {
			for (int mask = 1; mask < pof2; mask <<= 1)
				count_round(comm, r ^ mask, bytes);
			if (r + pof2 < p)
				count_round(comm, r + pof2, bytes);
		}
	}
	return PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
}

/* MPICH's all-gather by the bytes gathered, block x p: recursive doubling
 * on a power of two of ranks below 512 KiB, Bruck's below 80 KiB on
 * others, the ring above.  A program's all-gather of a few bytes a rank
 * (fftMPI's extents, eight a run) counted as the ring was p - 1 rounds to
 * the next rank each time, where MPICH sends nine at 512 ranks: 4,088
 * rounds a task, and on a 16^3 torus four fifths of the exchange
 * predicted for Slurm's order. */
#define AG_SHORT 81920
#define AG_LONG 524288

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype,
		  void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	int r, p;
	double block = sbuf == MPI_IN_PLACE ? type_bytes(rcount, rtype)
		       : type_bytes(scount, stype);
	if (block > 0 && comm_geometry(comm, &r, &p)) {
		double total = block * p;
		if (total < AG_LONG && !(p & (p - 1))) {
			/* step k: the 2^k blocks gathered so far */
			for (long k = 1; k < p; k <<= 1)
				count_round(comm, (int)(r ^ k), block * k);
		} else if (total < AG_SHORT) {
			/* step k: 2^k blocks, the last step what is left */
			for (long k = 1; k < p; k <<= 1)
				count_round(comm, (int)((r - k + p) % p),
					    block * (double)(k < p - k ? k : p - k));
		} else {
			/* p - 1 rounds, a block each */
			count_msgs(comm, (r + 1) % p, block * (p - 1), p - 1, p - 1);
		}
	}
	return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

/* MPICH's all-to-all by block size: Bruck's log2 p rounds for blocks of
 * at most 256 bytes on 8 ranks or more (round k: to r + 2^k, the blocks
 * whose index has bit k set), all at once below 32 KiB (a message to
 * each rank, no rounds), pairwise above (a round to each rank). */
#define A2A_SHORT 256
#define A2A_MEDIUM 32768

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		 int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	int r, p;
	double block = sbuf == MPI_IN_PLACE ? type_bytes(rcount, rtype)
		       : type_bytes(scount, stype);
	if (block > 0 && comm_geometry(comm, &r, &p)) {
		if (block <= A2A_SHORT && p >= 8) {
			for (int k = 1; k < p; k <<= 1) {
				int n = 0;
				for (int i = 0; i < p; i++)
					n += (i & k) != 0;
				count_round(comm, (r + k) % p, block * n);
			}
		} else {
			for (int q = 0; q < p; q++)
				if (block < A2A_MEDIUM)
					count_send(comm, q, block);
				else
					count_round(comm, q, block);
		}
	}
	return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

/* MPICH's all-to-allv: every block at once, no rounds. */
int MPI_Alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
		  MPI_Datatype stype, void *rbuf, const int *rcounts,
		  const int *rdispls, MPI_Datatype rtype, MPI_Comm comm)
{
	int r, p;
	if (sbuf != MPI_IN_PLACE && comm_geometry(comm, &r, &p))
		for (int q = 0; q < p; q++)
			count_send(comm, q, type_bytes(scounts[q], stype));
	return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts,
			      rdispls, rtype, comm);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int r, p;
	if (sbuf != MPI_IN_PLACE && comm_geometry(comm, &r, &p) && r != root)
		count_round(comm, root, type_bytes(scount, stype));
	return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int r, p;
	if (comm_geometry(comm, &r, &p) && r == root)
		for (int q = 0; q < p; q++)
			count_round(comm, q, type_bytes(scount, stype));
	return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

/* ---- the Cartesian grid, when the program makes one ---- */

int MPI_Cart_create(MPI_Comm old, int ndims, const int *dims,
		    const int *periods, int reorder, MPI_Comm *cart)
{
	int rc = PMPI_Cart_create(old, ndims, dims, periods, reorder, cart);
	if (rc == MPI_SUCCESS && !cart_ndims && ndims > 0 && ndims <= 8 &&
	    old == MPI_COMM_WORLD) {
		cart_ndims = ndims;
		for (int d = 0; d < ndims; d++) {
			cart_dims[d] = dims[d];
			cart_periods[d] = periods[d] != 0;
		}
	}
	return rc;
}

/* ---- the graph, at MPI_Finalize ---- */

static void write_graph(FILE *f, const int *counts, const double *edges,
			double exchanges)
{
	fprintf(f, "{\n  \"tasks\": %d,\n  \"directed\": true,\n", nworld);
	/* how many exchanges the bytes add up: the messages a pair of ranks
	 * sent, averaged over the pairs by their bytes (topoplace predicts
	 * the time of one exchange from it) */
	if (exchanges >= 1)
		fprintf(f, "  \"exchanges\": %.6g,\n", exchanges);
	fprintf(f, "  \"generator\": \"libtopoplace-trace\",\n");
	fprintf(f, "  \"collectives\": \"%s\",\n", collectives
		? "bcast/reduce binomial tree, allreduce recursive doubling, "
		  "allgather as MPICH (recursive doubling, bruck, ring), "
		  "alltoall as MPICH (bruck, linear, pairwise), "
		  "alltoallv linear, gather/scatter linear"
		: "not counted");
	if (cart_ndims) {
		fprintf(f, "  \"cart\": {\"dims\": [");
		for (int d = 0; d < cart_ndims; d++)
			fprintf(f, "%s%d", d ? ", " : "", cart_dims[d]);
		fprintf(f, "], \"periods\": [");
		for (int d = 0; d < cart_ndims; d++)
			fprintf(f, "%s%s", d ? ", " : "",
				cart_periods[d] ? "true" : "false");
		/* MPI numbers the last dimension fastest, topoplace x */
		fprintf(f, "], \"stencil\": \"");
		for (int d = cart_ndims - 1; d >= 0; d--)
			fprintf(f, "%d%s", cart_dims[d], d ? "x" : "");
		fprintf(f, "\"},\n");
	}
	fprintf(f, "  \"edges\": [");
	long k = 0;
	for (int src = 0; src < nworld; src++)
		for (int i = 0; i < counts[src]; i++, k++) {
			const double *x = &edges[3 * k];
			/* the rounds, where collectives sent some */
			if (x[2] > 0)
				fprintf(f, "%s\n    [%d, %.0f, %.17g, %.0f]", k ? "," : "",
					src, x[0], x[1], x[2]);
			else
				fprintf(f, "%s\n    [%d, %.0f, %.17g]", k ? "," : "",
					src, x[0], x[1]);
		}
	fprintf(f, "\n  ]\n}\n");
}

static void gather_and_write(void)
{
	int n = 0;
	for (int q = 0; q < nworld; q++)
		n += sent[q] > 0;
	/* (peer, bytes, rounds) a peer */
	double *mine = malloc(sizeof *mine * (size_t)(3 * n + 1));
	int *counts = NULL, *displs = NULL;
	double *all = NULL;
	int k = 0, total = 0;
	for (int q = 0; mine && q < nworld; q++)
		if (sent[q] > 0) {
			mine[k++] = q;
			mine[k++] = sent[q];
			mine[k++] = rounds[q];
		}
	if (!mine)
		n = 0;
	if (me_world == 0) {
		counts = calloc((size_t)nworld, sizeof *counts);
		displs = calloc((size_t)nworld, sizeof *displs);
	}
	double mix[2] = { 0, 0 }, sum[2] = { 0, 0 };   /* bytes x messages, bytes */
	for (int q = 0; q < nworld; q++) {
		mix[0] += sent[q] * msgs[q];
		mix[1] += sent[q];
	}
	PMPI_Reduce(mix, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	PMPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (me_world == 0 && counts && displs) {
		for (int q = 0; q < nworld; q++) {
			displs[q] = total;
			total += 3 * counts[q];
			counts[q] *= 3;
		}
		all = malloc(sizeof *all * (size_t)(total + 1));
	}
	PMPI_Gatherv(mine, 3 * n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
		     MPI_COMM_WORLD);
	if (me_world == 0) {
		const char *path = getenv("TOPOPLACE_TRACE");
		if (!path || !path[0])
			path = "topoplace-trace.json";
		FILE *f = all ? fopen(path, "w") : NULL;
		if (f) {
			for (int q = 0; q < nworld; q++)
				counts[q] /= 3;
			write_graph(f, counts, all,
				    sum[1] > 0 ? sum[0] / sum[1] : 0);
		}
		if (!f || fclose(f) != 0)
			fprintf(stderr, "libtopoplace-trace: cannot write %s\n",
				path);
	}
	free(mine);
	free(counts);
	free(displs);
	free(all);
}

int MPI_Finalize(void)
{
	if (ready())
		gather_and_write();
	if (keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_free_keyval(&keyval);
	free(sent);
	free(msgs);
	free(rounds);
	sent = msgs = rounds = NULL;
	return PMPI_Finalize();
}
