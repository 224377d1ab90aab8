/* tests/slurm/mpi.sh: where does each rank run, with which CPUs and GPUs?
 * Every rank passes a token around the ring (so MPI really works between
 * the nodes), then prints one line:
 *   RANK r SIZE n HOST h CPUS list CVD devices SHARED k
 * where k is the size of its MPI_COMM_TYPE_SHARED communicator: the ranks
 * MPI knows to share its node.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void allowed_cpus(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");
	snprintf(out, len, "?");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *p = line + 18;
			while (*p == ' ' || *p == '\t')
				p++;
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, len, "%s", p);
		}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	int rank, size, token;
	char host[256], cpus[256];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	token = rank;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0,
			     (rank + size - 1) % size, 0, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
	if (token != (rank + size - 1) % size) {
		fprintf(stderr, "rank %d: token %d\n", rank, token);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	gethostname(host, sizeof host);
	host[sizeof host - 1] = '\0';
	allowed_cpus(cpus, sizeof cpus);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	MPI_Comm node;
	int shared = 0;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &shared);
	MPI_Comm_free(&node);
	printf("RANK %d SIZE %d HOST %s CPUS %s CVD %s SHARED %d\n", rank, size,
	       host, cpus, cvd ? cvd : "-", shared);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
