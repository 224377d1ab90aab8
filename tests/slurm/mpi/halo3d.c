/* tests/slurm/mpi.sh: a 3-D halo exchange on an X x Y x Z grid of ranks
 * (x fastest, as topoplace numbers a stencil), periodic along the axes
 * named in argv[4] ("x", "xz", "" ...).  Each iteration sends every face
 * neighbour CX, CY or CZ doubles, then a barrier (no payload).  With
 * "coll" last, one all-reduce of a double, one all-to-all of an int and
 * one all-gather of an int follow (the trace library's rounds).
 *   halo3d X Y Z PERIODIC ITERS [coll]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CX = 100, CY = 200, CZ = 300 };

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc < 6) {
		fprintf(stderr, "usage: halo3d X Y Z PERIODIC ITERS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* MPI numbers the last dimension fastest: (z, y, x) */
	int dims[3] = { atoi(argv[3]), atoi(argv[2]), atoi(argv[1]) };
	int periods[3] = { strchr(argv[4], 'z') != NULL, strchr(argv[4], 'y') != NULL,
			   strchr(argv[4], 'x') != NULL };
	int iters = atoi(argv[5]), count[3] = { CZ, CY, CX };
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
	double *out = calloc(CZ, sizeof *out), *in = calloc(CZ, sizeof *in);
	for (int it = 0; it < iters; it++) {
		for (int d = 0; d < 3; d++) {
			int lo, hi;
			MPI_Cart_shift(cart, d, 1, &lo, &hi);
			MPI_Sendrecv(out, count[d], MPI_DOUBLE, hi, d, in, count[d],
				     MPI_DOUBLE, lo, d, cart, MPI_STATUS_IGNORE);
			MPI_Sendrecv(out, count[d], MPI_DOUBLE, lo, 10 + d, in,
				     count[d], MPI_DOUBLE, hi, 10 + d, cart,
				     MPI_STATUS_IGNORE);
		}
		MPI_Barrier(cart);
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 6 && !strcmp(argv[6], "coll")) {
		double x = rank, sum = 0;
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		int *a = calloc((size_t)size, sizeof *a), *b = calloc((size_t)size, sizeof *b);
		MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
		MPI_Allgather(&rank, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
		free(a);
		free(b);
	}
	if (rank == 0)
		printf("HALO done\n");
	free(out);
	free(in);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return 0;
}
