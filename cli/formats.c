/* topoplace command — map's launcher formats, each exactly as its launcher
 * reads it:
 *
 *   rankfile   Open MPI's rankfile (mpirun --rankfile FILE), one line per
 *              rank: "rank N=HOST slot=SLOTS".  With a node model, SLOTS
 *              names the task's cores as Open MPI 4.1 counts them by
 *              default (logical): "S:a-b" per socket S, cores a..b of that
 *              socket, items joined by ';' ("0:2-3;1:0").  Without one,
 *              the task's index among the ranks of its node (logical core
 *              N, which is what Open MPI's own --bind-to core gives).
 *   mpich      MPICH/Hydra host file (mpiexec -f FILE): "HOST:COUNT" for
 *              every run of consecutive ranks on one host, in rank order.
 *   tasks      topoplace's own per-task list: "rank N=HOST cpus=LIST
 *              gpus=LIST" (the CPUs and GPUs chosen inside the node).
 *
 * The plain hostfile (one host per rank) is map_output.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define OMPI_SLOT_MAX 63   /* Open MPI 4.1 keeps 64 bytes of a slot list */

/* "0-3,8" into a membership array of cap entries; false when malformed. */
static bool cpu_set_from_list(const char *list, bool *in, int cap)
{
	memset(in, 0, (size_t)cap * sizeof *in);
	const char *p = list;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0)
			return false;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return false;
		}
		for (long c = a; c <= b && c < cap; c++)
			in[c] = true;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return true;
}

/* The slot list of a task's CPUs on model n: its cores, as socket-local
 * logical indices, runs "S:a-b" joined by ';'.  -1 when it does not fit. */
static int ompi_slots(const tp_node *n, const char *cpus, char *out,
		      size_t len)
{
	int npus = 1 << 16, ncores = tp_node_ncores(n);   /* OS indices */
	bool *in = calloc((size_t)npus, sizeof *in);
	int *pus = malloc(sizeof *pus * 64);
	int rc = -1;
	size_t used = 0;
	out[0] = '\0';
	if (!in || !pus || !cpu_set_from_list(cpus, in, npus))
		goto done;
	int prev_pkg = -1, run_lo = -1, run_hi = -1, local = 0, last_pkg = -1;
	for (int c = 0; c <= ncores; c++) {
		bool chosen = false;
		int pkg = c < ncores ? tp_node_core_package(n, c) : -2;
		if (c < ncores) {
			local = pkg == last_pkg ? local + 1 : 0;
			last_pkg = pkg;
			int k = tp_node_core_pus(n, c, pus, 64);
			chosen = k > 0 && pus[0] < npus && in[pus[0]];
		}
		/* close the run when it stops here */
		if (run_lo >= 0 && (!chosen || pkg != prev_pkg || local != run_hi + 1)) {
			int w = run_hi > run_lo
				? snprintf(out + used, len - used, "%s%d:%d-%d",
					   used ? ";" : "", prev_pkg, run_lo, run_hi)
				: snprintf(out + used, len - used, "%s%d:%d",
					   used ? ";" : "", prev_pkg, run_lo);
			if (w < 0 || (size_t)w >= len - used)
				goto done;
			used += (size_t)w;
			run_lo = -1;
		}
		if (chosen) {
			if (run_lo < 0)
				run_lo = local;
			run_hi = local;
			prev_pkg = pkg;
		}
	}
	rc = used ? 0 : -1;
done:
	free(in);
	free(pus);
	return rc;
}

/* Index of allocation node name (the allocation's own order). */
static int32_t alloc_index(const tp_job *job, int32_t t)
{
	return tp_job_map(job)[t];
}

static int rankfile_lines(FILE *f, const tp_job *job)
{
	int32_t n = tp_job_ntasks(job), nn = tp_alloc_nnodes(tp_job_alloc(job));
	int *seen = calloc((size_t)nn + 1, sizeof *seen);
	if (!seen)
		return cli_fail("out of memory");
	int rc = 0;
	for (int32_t t = 0; t < n && !rc; t++) {
		int32_t i = alloc_index(job, t);
		const char *cpus = tp_job_task_cpus(job, t);
		const tp_node *model = tp_job_node_model(job, i);
		char slot[OMPI_SLOT_MAX + 1];
		if (cpus && cpus[0] && model) {
			if (ompi_slots(model, cpus, slot, sizeof slot) < 0)
				rc = cli_usage_error("--format rankfile: rank %ld: "
						     "CPUs %s do not fit Open MPI's "
						     "slot list of %d characters",
						     (long)t, cpus, OMPI_SLOT_MAX);
		} else {
			snprintf(slot, sizeof slot, "%d", seen[i]);
		}
		seen[i]++;
		if (!rc && fprintf(f, "rank %ld=%s slot=%s\n", (long)t,
				   tp_job_task_node(job, t), slot) < 0)
			rc = cli_fail("out of memory");
	}
	free(seen);
	return rc;
}

static int mpich_lines(FILE *f, const tp_job *job)
{
	int32_t n = tp_job_ntasks(job);
	for (int32_t t = 0; t < n;) {
		int32_t e = t + 1;
		while (e < n && alloc_index(job, e) == alloc_index(job, t))
			e++;
		if (fprintf(f, "%s:%ld\n", tp_job_task_node(job, t),
			    (long)(e - t)) < 0)
			return cli_fail("out of memory");
		t = e;
	}
	return 0;
}

static int task_lines(FILE *f, const tp_job *job)
{
	for (int32_t t = 0; t < tp_job_ntasks(job); t++) {
		const char *cpus = tp_job_task_cpus(job, t);
		int ng = 0;
		const int *g = tp_job_task_gpus(job, t, &ng);
		if (fprintf(f, "rank %ld=%s cpus=%s", (long)t,
			    tp_job_task_node(job, t), cpus ? cpus : "") < 0)
			return cli_fail("out of memory");
		for (int q = 0; q < ng; q++)
			if (fprintf(f, "%s%d", q ? "," : " gpus=", g[q]) < 0)
				return cli_fail("out of memory");
		if (fputc('\n', f) == EOF)
			return cli_fail("out of memory");
	}
	return 0;
}

int cli_map_launcher_format(const struct cli_map *mp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return cli_fail("out of memory");
	int rc = mp->format == CLI_FORMAT_RANKFILE ? rankfile_lines(f, mp->job)
		 : mp->format == CLI_FORMAT_MPICH ? mpich_lines(f, mp->job)
		 : task_lines(f, mp->job);
	if (fclose(f) != 0 && !rc)
		rc = cli_fail("out of memory");
	if (!rc && mp->output) {
		rc = cli_write_text(buf, len, mp->output);
	} else if (!rc) {
		if (fwrite(buf, 1, len, stdout) != len)
			rc = cli_fail("standard output: write error");
		else
			rc = cli_finish_stdout();
	}
	free(buf);
	return rc;
}
