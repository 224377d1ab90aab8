/* topoplace benchmark: one neighbour exchange, timed under SimGrid SMPI.
 *
 * Why: tests/bench/simgrid.sh checks topoplace's predicted exchange time
 * (topoplace eval's "predicted" JSON) and its placement policies against a
 * flow-level network simulation.  This program is the application that
 * SimGrid runs: no computation, only the exchange.
 *
 *   smpirun ... ./exchange GRAPH [WARMUP ITERS]
 *
 * GRAPH is a plain text communication graph: first line N (the task count,
 * which must equal the number of ranks), then lines "i j bytes", one per
 * undirected edge; each edge is a message of `bytes` from i to j and one from
 * j to i.  Every iteration posts all receives (MPI_Irecv), then all sends
 * (MPI_Isend) and waits for them all (MPI_Waitall).  Every rank starts an
 * iteration at the same simulated instant (after a barrier, the ranks
 * agree on a start START_AFTER past the latest of them, and each sleeps
 * until it: SimGrid's clock is one for all), and the iteration's time runs
 * from there to the last rank's end (MPI_Reduce MAX): the exchange alone,
 * without the barrier's skew (ranks leave a barrier one route latency
 * apart or more, which on a torus added up to 4 us to a 25 us exchange).
 * Rank 0 prints "exchange_us X", the median
 * over the ITERS timed iterations (after WARMUP untimed ones), in
 * microseconds of simulated time.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msg {
	int peer;
	long bytes;
};

/* seconds from the latest rank's barrier exit to the common start: far
 * longer than the MPI_Allreduce that agrees on it */
#define START_AFTER 1e-3

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: exchange GRAPH [WARMUP ITERS]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int warmup = argc > 2 ? atoi(argv[2]) : 1;
	int iters = argc > 3 ? atoi(argv[3]) : 3;
	if (iters < 1)
		iters = 1;

	/* Every rank reads the file and keeps its own edges. */
	FILE *f = fopen(argv[1], "r");
	long n = -1;
	if (!f || fscanf(f, "%ld", &n) != 1 || n != size) {
		fprintf(stderr, "exchange: %s: %s (task count %ld, ranks %d)\n",
			argv[1], f ? "bad header" : "cannot open", n, size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	struct msg *m = NULL;
	int nm = 0, cap = 0;
	long i, j, b;
	while (fscanf(f, "%ld %ld %ld", &i, &j, &b) == 3) {
		if (i < 0 || j < 0 || i >= n || j >= n || i == j || b <= 0)
			continue;
		if (i != rank && j != rank)
			continue;
		if (nm == cap) {
			cap = cap ? 2 * cap : 16;
			m = realloc(m, sizeof *m * (size_t)cap);
		}
		m[nm].peer = (int)(i == rank ? j : i);
		m[nm].bytes = b;
		nm++;
	}
	fclose(f);

	/* Real buffers; shared between the simulated ranks to save memory
	 * (their content does not matter). */
	char **sbuf = malloc(sizeof(char *) * (size_t)(nm ? nm : 1));
	char **rbuf = malloc(sizeof(char *) * (size_t)(nm ? nm : 1));
	for (int k = 0; k < nm; k++) {
		sbuf[k] = SMPI_SHARED_MALLOC((size_t)m[k].bytes);
		rbuf[k] = SMPI_SHARED_MALLOC((size_t)m[k].bytes);
	}
	MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(2 * nm + 1));
	double *t = malloc(sizeof(double) * (size_t)(warmup + iters));

	for (int it = 0; it < warmup + iters; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double out = MPI_Wtime(), latest = 0;
		MPI_Allreduce(&out, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		double t0 = latest + START_AFTER, now = MPI_Wtime();
		if (now >= t0) {
			fprintf(stderr, "exchange: rank %d missed the common start "
				"by %g us\n", rank, (now - t0) * 1e6);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		/* SMPI's simulated sleep (smpi_helpers.h): computing instead
		 * would share the host's one core among a node's ranks */
		double wait = t0 - now;
		struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
		nanosleep(&ts, NULL);
		for (int k = 0; k < nm; k++)
			MPI_Irecv(rbuf[k], (int)m[k].bytes, MPI_BYTE, m[k].peer, 0,
				  MPI_COMM_WORLD, &req[k]);
		for (int k = 0; k < nm; k++)
			MPI_Isend(sbuf[k], (int)m[k].bytes, MPI_BYTE, m[k].peer, 0,
				  MPI_COMM_WORLD, &req[nm + k]);
		MPI_Waitall(2 * nm, req, MPI_STATUSES_IGNORE);
		double t1 = MPI_Wtime(), last = 0;
		MPI_Reduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		t[it] = last - t0;
	}
	if (rank == 0) {
		qsort(t + warmup, (size_t)iters, sizeof(double), cmp_d);
		double med = iters % 2 ? t[warmup + iters / 2]
				       : (t[warmup + iters / 2 - 1] + t[warmup + iters / 2]) / 2;
		printf("exchange_us %.3f\n", med * 1e6);
	}
	for (int k = 0; k < nm; k++) {
		SMPI_SHARED_FREE(sbuf[k]);
		SMPI_SHARED_FREE(rbuf[k]);
	}
	free(sbuf);
	free(rbuf);
	free(req);
	free(t);
	free(m);
	MPI_Finalize();
	return 0;
}
