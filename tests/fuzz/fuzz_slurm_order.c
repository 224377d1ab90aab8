/* Slurm's own order of an allocation (slurm_order.c): the input is the
 * topology.conf beside a slurm.conf of topology/tree or topology/block
 * (by the input's size), for Slurm 26.05.  The order must be a permutation
 * of the allocation, said in one line. */
#include "fuzz.h"
#include <sys/stat.h>

#include <topoplace/conf.h>
#include "slurm/slurm_conf.h"

static char dir[64];

static void remove_dir(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/slurm.conf", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/topology.conf", dir);
	unlink(path);
	rmdir(dir);
}

static void write_file(const char *name, const void *data, size_t size)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static tp_conf *c;
	static tp_alloc *a;
	if (!c) {
		if (tp_conf_load_string("Network=mesh Dims=4x4\n"
					"NodeName=n[1-15],login CoordOrder=x-major\n",
					"fuzz.conf", &c, NULL) ||
		    tp_alloc_from_hostlist(tp_conf_machine(c), "n[1-12],login", 1,
					   "fuzz", &a, NULL))
			abort();
		snprintf(dir, sizeof dir, "/tmp/tp-fuzz-order-%d", (int)getpid());
		if (mkdir(dir, 0700) != 0 || atexit(remove_dir) != 0)
			abort();
	}
	static const char *const conf[2] = {
		"TopologyPlugin=topology/tree\n", "TopologyPlugin=topology/block\n",
	};
	write_file("slurm.conf", conf[size % 2], strlen(conf[size % 2]));
	write_file("topology.conf", data, size);
	char slurm_conf[128], how[TP_ERROR_MSG_MAX];
	snprintf(slurm_conf, sizeof slurm_conf, "%s/slurm.conf", dir);
	int32_t n = tp_alloc_nnodes(a), order[16], seen[16] = { 0 };
	tp__slurm_order(slurm_conf, NULL, (26u << 16) + (5u << 8), a, order, how);
	for (int32_t k = 0; k < n; k++) {
		if (order[k] < 0 || order[k] >= n || seen[order[k]]++)
			abort();   /* not a permutation */
	}
	if (strchr(how, '\n'))
		abort();
	return 0;
}
