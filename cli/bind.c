/* topoplace command — bind: what the SPANK plugin's task_init does for an
 * srun task, for a rank that a launcher started (mpirun's orted, Hydra's
 * proxy), whose Slurm task is the launcher's daemon:
 *
 *   mpirun topoplace bind -- ./app args      (likewise mpiexec, srun)
 *
 * It finds its rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
 * SLURM_PROCID), the job's placement (the hostfile the batch step wrote:
 * TOPOPLACE_HOSTFILE, else SLURM_HOSTFILE; under an mpiexec that was not
 * given it, Hydra's own blocks: hydra_blocks; the pattern from the job's
 * --topo-* options, which sbatch leaves in the environment), its node's
 * share (the CPUs its launcher may use: the parent's affinity; the GPUs:
 * SLURM_STEP_GPUS / SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES), asks the core
 * for the node's placement (tp_job_place_node, exactly as task.c does, so
 * every rank of the node computes the same answer) and applies its part
 * (CPU affinity, CUDA_VISIBLE_DEVICES), then execs the program.  Its part
 * is its launcher's local rank (local_rank) when the launcher says it, so
 * that a launcher that did not follow the placement (a plain mpirun) still
 * gives every rank of a node its own cores and GPUs; one line says that the
 * placement was not followed (say_moved).  It fails
 * open: any problem is one line and the program runs unbound.  A rank that
 * is a Slurm task itself (srun: its parent is slurmstepd) is the plugin's,
 * and left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"

#define BIND_MAX_TASKS (1 << 24)
#define DEFAULT_CONF "/etc/slurm/topoplace.conf"

struct bind {
	bool verbose;
	long rank;
	char node[256];
	char **names;            /* the hostfile: node of every rank */
	int32_t ntasks;
	int32_t *mine;           /* ranks on this node, ascending */
	int32_t nmine, local;    /* ... and this rank's index among them */
	long lrank, lsize;       /* the launcher's local rank and count (-1:
				    not said) */
	const char *lfrom;       /* the variable that said it */
	bool moved;              /* the launcher's order is not the placement's */
	char moved_msg[TPK_LINE_MAX];
	char short_msg[TPK_LINE_MAX];   /* the ranks share CPUs or GPUs */
	struct tpk_hints hints;
	char *graph_path, *gm_path;
	const char *hf;          /* the placement's file */
	int allowed[TPK_MAX_GPUS], visible[TPK_MAX_GPUS], ngpus;
	const char *cvd;
	tp_node_share share;
	tp_job *job;
	char msg[TPK_LINE_MAX];  /* why it runs unbound */
	char done[TPK_LINE_MAX]; /* what it applied (-v) */
};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && v[0] ? v : NULL;
}

static const char *env_get(const char *name)
{
	return getenv(name);
}

static int why(struct bind *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int why(struct bind *b, const char *fmt, ...)
{
	char raw[TPK_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	tpk_line(b->msg, sizeof b->msg, "topoplace bind: error: %s; the rank "
		 "runs unbound", raw);
	return -1;
}

static long env_rank(const char **which)
{
	static const char *const names[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					     "PMIX_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = env(names[i]);
		char *end;
		if (!v)
			continue;
		errno = 0;
		long r = strtol(v, &end, 10);
		*which = names[i];
		return errno || *end || r < 0 ? -2 : r;
	}
	return -1;
}

/* The launch's size where the launcher says it (0: unknown). */
static long env_size(void)
{
	static const char *const names[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (env(names[i]))
			return (long)tpk_parse_pos(env(names[i]));
	return 0;
}

/* A count from the environment: >= 0, or -1 when unset or not a number. */
static long env_count(const char *name)
{
	const char *v = env(name);
	char *end;
	if (!v || v[0] < '0' || v[0] > '9')
		return -1;
	errno = 0;
	long n = strtol(v, &end, 10);
	return errno || *end || n > BIND_MAX_TASKS ? -1 : n;
}

/* Where the launcher started this rank on its node: its local rank and the
 * count of its ranks there, from the variables of the launcher that gave
 * the rank (which: OMPI_COMM_WORLD_RANK, PMI_RANK, ...):
 *   Open MPI 4.1 and 5 (PRRTE)  OMPI_COMM_WORLD_LOCAL_RANK, _LOCAL_SIZE
 *   MPICH's Hydra               MPI_LOCALRANKID, MPI_LOCALNRANKS
 *   PMIx launchers that say it  PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE (Cray
 *                               PALS; Open MPI's mpirun sets PMIX_RANK only)
 *   a Slurm task                SLURM_LOCALID, and SLURM_STEP_TASKS_PER_NODE
 *                               at SLURM_NODEID
 * Slurm's are the launcher daemon's under mpirun and mpiexec (orted's and
 * the proxy's step: one task a node), so they count only when the rank is
 * that Slurm task: SLURM_PROCID is the rank and the step has the launch's
 * size.  -1: not said. */
static void local_rank(struct bind *b, const char *which, long size)
{
	static const char *const pairs[][3] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		  "OMPI_COMM_WORLD_LOCAL_SIZE" },
		{ "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS" },
		{ "PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE" },
	};
	b->lrank = b->lsize = -1;
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		if (!strcmp(which, pairs[i][0]) && env_count(pairs[i][1]) >= 0) {
			b->lrank = env_count(pairs[i][1]);
			b->lsize = env_count(pairs[i][2]);
			b->lfrom = pairs[i][1];
			break;
		}
	long sid = env_count("SLURM_LOCALID"), steps = env_count("SLURM_STEP_NUM_TASKS");
	if (b->lrank < 0 && sid >= 0 && env_count("SLURM_PROCID") == b->rank &&
	    (size ? steps == size : steps >= 0)) {
		const char *tpn = env("SLURM_STEP_TASKS_PER_NODE");
		b->lrank = sid;
		b->lsize = (long)tpk_tasks_on_node(tpn ? tpn : env("SLURM_TASKS_PER_NODE"),
						   env_count("SLURM_NODEID"));
		b->lfrom = "SLURM_LOCALID";
	}
	if (b->lsize >= 0 && b->lrank >= b->lsize)
		b->lrank = b->lsize = -1;   /* not a place: as if not said */
}

static void short_hostname(char *out, size_t len)
{
	out[0] = '\0';
	if (gethostname(out, len) != 0)
		return;
	out[len - 1] = '\0';
	char *dot = strchr(out, '.');
	if (dot)
		*dot = '\0';
}

/* The hostfile: one node name per line, '#' comments.  Its own loop: the
 * core's line loop (tp__each_line) is hidden in the shared library. */
static int read_hostfile(struct bind *b, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return why(b, "%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, room = 0;
	ssize_t len;
	int rc = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' ' ||
				   line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (b->ntasks >= BIND_MAX_TASKS) {
			rc = why(b, "%s: more than %d ranks", path, BIND_MAX_TASKS);
			break;
		}
		if ((size_t)b->ntasks == room) {
			room = room ? room * 2 : 64;
			char **n = realloc(b->names, room * sizeof *n);
			if (!n) {
				rc = why(b, "out of memory");
				break;
			}
			b->names = n;
		}
		if (!(b->names[b->ntasks] = strdup(line))) {
			rc = why(b, "out of memory");
			break;
		}
		b->ntasks++;
	}
	free(line);
	fclose(f);
	if (!rc && !b->ntasks)
		rc = why(b, "%s: no ranks in it", path);
	return rc;
}

/* This node's ranks, and where this rank stands among them: its place in
 * the placement, or, when its launcher put it elsewhere (another node,
 * another local rank, another count of ranks here), its launcher's local
 * rank among the node's ranks.  Every rank of the node then takes the same
 * list (the placement's ranks of this node, cut or filled up with the other
 * ranks in order) and its own slot of the node's one answer, so no two of
 * them get the same cores or GPUs.  A rank whose launcher does not say its
 * local rank can only follow the placement. */
static int node_ranks(struct bind *b)
{
	if (b->rank >= b->ntasks)
		return why(b, "rank %ld, but the job's placement has %ld ranks",
			   b->rank, (long)b->ntasks);
	if (!(b->mine = malloc(sizeof *b->mine * (size_t)b->ntasks)))
		return why(b, "out of memory");
	int32_t placed = -1;
	for (int32_t t = 0; t < b->ntasks; t++)
		if (!strcmp(b->names[t], b->node)) {
			if (t == b->rank)
				placed = b->nmine;
			b->mine[b->nmine++] = t;
		}
	if (placed >= 0 && (b->lrank < 0 || (b->lrank == placed &&
					     (b->lsize < 0 || b->lsize == b->nmine)))) {
		b->local = placed;
		return 0;
	}
	if (b->lrank < 0)
		return why(b, "rank %ld is placed on %.64s but runs on %.64s "
			   "(the launcher did not follow the placement, and says "
			   "no local rank)", b->rank, b->names[b->rank], b->node);
	long n = b->lsize >= 0 ? b->lsize : b->nmine;
	if (n <= b->lrank || n > b->ntasks)
		return why(b, "%s=%ld, but %ld ranks run on %.64s", b->lfrom,
			   b->lrank, n, b->node);
	int32_t here = b->nmine;
	/* fill up with the ranks placed elsewhere, in rank order */
	for (int32_t t = 0; t < b->ntasks && b->nmine < n; t++)
		if (strcmp(b->names[t], b->node))
			b->mine[b->nmine++] = t;
	b->nmine = (int32_t)n;
	b->local = (int32_t)b->lrank;
	b->moved = true;
	if (placed >= 0)
		tpk_line(b->moved_msg, sizeof b->moved_msg, "rank %ld is local rank "
			 "%ld of %ld on %.64s, placed as %ld of %ld", b->rank, b->lrank,
			 n, b->node, (long)placed, (long)here);
	else
		tpk_line(b->moved_msg, sizeof b->moved_msg, "rank %ld runs on %.64s, "
			 "placed on %.64s", b->rank, b->node, b->names[b->rank]);
	return 0;
}

/* mpiexec that the batch step did not give the placement (a node's ranks
 * would not be one run: TOPOPLACE_MPIEXEC=blocks) runs Hydra's own order,
 * each node's ranks one block, and says where this rank stands in it. */
static int hydra_blocks(struct bind *b, long size)
{
	const char *lid_s = env("MPI_LOCALRANKID");
	long lid = !lid_s ? -1 : !strcmp(lid_s, "0") ? 0
		   : tpk_parse_pos(lid_s) ? (long)tpk_parse_pos(lid_s) : -1;
	long ln = (long)tpk_parse_pos(env("MPI_LOCALNRANKS"));
	if (!size || size > BIND_MAX_TASKS || ln < 1 || lid < 0 || lid >= ln ||
	    b->rank < lid || b->rank - lid + ln > size)
		return why(b, "mpiexec's MPI_LOCALRANKID, MPI_LOCALNRANKS and "
			   "PMI_SIZE do not say where rank %ld stands", b->rank);
	if (!(b->mine = malloc(sizeof *b->mine * (size_t)ln)))
		return why(b, "out of memory");
	b->ntasks = (int32_t)size;
	for (long k = 0; k < ln; k++)
		b->mine[k] = (int32_t)(b->rank - lid + k);
	b->nmine = (int32_t)ln;
	b->local = (int32_t)lid;
	return 0;
}

/* A relative file option means a file in the submit directory. */
static char *option_path(const char *opt)
{
	const char *base = env("SLURM_SUBMIT_DIR");
	if (opt[0] == '/' || !base)
		return strdup(opt);
	size_t n = strlen(base) + strlen(opt) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", base, opt);
	return p;
}

static int count_list(const char *s)
{
	int n = s && s[0] ? 1 : 0;
	for (; s && *s; s++)
		n += *s == ',';
	return n;
}

/* The GPUs this node's ranks share: Slurm's numbers, and how the ranks
 * see them.  None when the launcher's task already got a part of them. */
static void gpu_share(struct bind *b)
{
	const char *step = env("SLURM_STEP_GPUS");
	if (!step)
		step = env("SLURM_JOB_GPUS");
	b->cvd = env("CUDA_VISIBLE_DEVICES");
	if (!b->cvd || (step && count_list(step) > count_list(b->cvd)))
		return;
	int nvis = tpk_parse_gpu_list(b->cvd, b->visible, TPK_MAX_GPUS);
	int nal = tpk_parse_gpu_list(step ? step : b->cvd, b->allowed,
				     TPK_MAX_GPUS);
	if (nvis <= 0 || nal != nvis)
		return;
	b->ngpus = nal;
	b->share.gpus = b->allowed;
	b->share.ngpus = nal;
	b->share.want_gpus = true;
}

static bool want_cpus(const struct bind *b)
{
	/* not SLURM_CPU_BIND_TYPE: that is the launcher daemon's (none) */
	const char *site = env("TOPOPLACE_CPU_BIND");
	return !(site && !strcmp(site, "no")) &&
	       !(b->hints.cpu_bind && strcmp(b->hints.cpu_bind, "yes")) &&
	       tpk_hints_pattern(&b->hints);
}

static int make_job(struct bind *b)
{
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf_path = env("TOPOPLACE_CONF") ? env("TOPOPLACE_CONF") : DEFAULT_CONF;
	q.ntasks = b->ntasks;
	q.max_tasks = BIND_MAX_TASKS;
	if (b->hints.graph) {
		b->graph_path = option_path(b->hints.graph);
		q.graph.name = b->graph_path;
	} else {
		q.stencil = b->hints.stencil;
	}
	if (b->hints.gpu_matrix) {
		b->gm_path = option_path(b->hints.gpu_matrix);
		q.gpu_matrix.name = b->gm_path;
	}
	q.what.stencil = "--topo-stencil";
	tp_error err;
	tp_error_clear(&err);
	if ((b->hints.parallel
	     ? tp_job_create_parallel(&q, NULL, b->hints.parallel,
				      "--topo-parallel", &b->job, &err)
	     : tp_job_create(&q, &b->job, &err)) < 0) {
		b->job = NULL;
		return why(b, "%s", err.msg);
	}
	return 0;
}

/* CUDA_VISIBLE_DEVICES of the chosen GPUs (Slurm's numbers), as the rank
 * sees them. */
static int set_gpus(struct bind *b, const int *gpus, int n)
{
	char list[1024];
	size_t used = 0;
	list[0] = '\0';
	for (int k = 0; k < n; k++) {
		int pos = -1;
		for (int q = 0; q < b->ngpus && pos < 0; q++)
			if (b->allowed[q] == gpus[k])
				pos = q;
		if (pos < 0)
			return why(b, "GPU %d is not one of this node's", gpus[k]);
		int w = snprintf(list + used, sizeof list - used, "%s%d",
				 used ? "," : "", b->visible[pos]);
		if (w < 0 || (size_t)w >= sizeof list - used)
			return why(b, "GPU list too long");
		used += (size_t)w;
	}
	if (!n)
		return 0;
	/* Slurm sets GPU_DEVICE_ORDINAL to the same list: keep them equal */
	const char *ord = env("GPU_DEVICE_ORDINAL");
	if (ord && b->cvd && !strcmp(ord, b->cvd))
		setenv("GPU_DEVICE_ORDINAL", list, 1);
	setenv("CUDA_VISIBLE_DEVICES", list, 1);
	size_t d = strlen(b->done);
	snprintf(b->done + d, sizeof b->done - d, " GPUs %s", list);
	return 0;
}

static int bind_cpus(struct bind *b, const tp_node_placement *p)
{
	cpu_set_t ok, set, both;
	if (!tpk_usable_cpus(&ok))
		return why(b, "cannot read the CPUs this node's ranks may use");
	for (int32_t t = 0; t < p->ntasks; t++) {
		/* every rank checks the node's whole answer: all or none */
		if (!tpk_cpu_list_set(p->cpus[t], &set))
			return why(b, "CPU list %s of %s", p->cpus[t], p->model);
		CPU_AND(&both, &set, &ok);
		if (!CPU_EQUAL(&both, &set))
			return why(b, "%s: CPU list %s of %s is not within the CPUs "
				   "the launcher may use here", b->node, p->cpus[t],
				   p->model);
	}
	tpk_cpu_list_set(p->cpus[b->local], &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		return why(b, "cannot bind to CPUs %s: %s", p->cpus[b->local],
			   strerror(errno));
	setenv("TOPOPLACE_CPUS", p->cpus[b->local], 1);
	size_t d = strlen(b->done);
	snprintf(b->done + d, sizeof b->done - d, " CPUs %s", p->cpus[b->local]);
	return 0;
}

static int apply(struct bind *b)
{
	int rc = 0;
	if (!b->job) {   /* no pattern: the GPUs in local-rank order */
		int mine[TPK_MAX_GPUS];
		int n = tp_gpus_split_local_rank(b->allowed, b->ngpus, b->local,
						 b->nmine, mine, TPK_MAX_GPUS);
		return n < 0 ? why(b, "cannot split the GPUs") : set_gpus(b, mine, n);
	}
	tp_node_placement p;
	tp_error err;
	tp_error_clear(&err);
	if (tp_job_place_node(b->job, &b->share, &p, &err) < 0)
		return why(b, "%s", err.msg);
	if (b->share.want_gpus && p.gpu_error)
		rc = why(b, "--topo-gpu-matrix: %s", p.gpu_note);
	else if (b->share.want_gpus && p.gpus_set)
		rc = set_gpus(b, p.gpus + p.gpu_start[b->local],
			      p.gpu_start[b->local + 1] - p.gpu_start[b->local]);
	if (!rc && b->share.want_cpus) {
		if (p.cpus_set)
			rc = bind_cpus(b, &p);
		else if (p.cpu_error)
			rc = why(b, "CPU binding: %s", p.cpu_note);
		else if (b->nmine > 1)   /* fewer cores than ranks, say */
			tpk_line(b->short_msg, sizeof b->short_msg, "%s: the %ld "
				 "ranks of %.64s share its CPUs", p.cpu_note,
				 (long)b->nmine, b->node);
	}
	tp_node_placement_free(&p);
	return rc;
}

/* Fewer GPUs than ranks: neighbouring ranks share one. */
static void short_gpus(struct bind *b)
{
	size_t d = strlen(b->short_msg);
	if (!b->share.want_gpus || b->ngpus >= b->nmine)
		return;
	if (d)   /* one line: the CPUs' already */
		snprintf(b->short_msg + d, sizeof b->short_msg - d, ", and its %d "
			 "GPUs", b->ngpus);
	else
		tpk_line(b->short_msg, sizeof b->short_msg, "%ld ranks on %.64s, "
			 "which has %d GPUs for them: ranks share GPUs",
			 (long)b->nmine, b->node, b->ngpus);
}

/* Is this rank a Slurm task itself (srun --mpi=...)?  Then the plugin
 * gave it its CPUs and GPUs already. */
static bool slurm_task(void)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%ld/comm", (long)getppid());
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool yes = fgets(comm, sizeof comm, f) && !strncmp(comm, "slurmstepd", 10);
	fclose(f);
	return yes;
}

/* Whether this rank says that the launcher did not follow the placement:
 * one line a launch.  The first rank that finds it creates a mark in the
 * job's directory (the hostfile's, the user's own), named by the launch
 * (its PMIx namespace, else the launcher's Slurm step); where there is no
 * such name or directory, a node's local rank 0 and the rank 0 say it. */
static bool first_to_say(const struct bind *b)
{
	char key[160] = "", path[4096];
	const char *ns = env("PMIX_NAMESPACE");
	long job = env_count("SLURM_JOB_ID"), step = env_count("SLURM_STEP_ID");
	/* the namespace first: mpirun's own node's ranks are children of
	 * mpirun (the batch step), the others' of orted (another step) */
	if (ns && strlen(ns) < 64 && strspn(ns, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@") == strlen(ns) && ns[0] != '.')
		snprintf(key, sizeof key, "%s", ns);
	else if (job >= 0 && step >= 0)
		snprintf(key, sizeof key, "%ld.%ld", job, step);
	const char *slash = b->hf ? strrchr(b->hf, '/') : NULL;
	if (key[0] && slash &&
	    snprintf(path, sizeof path, "%.*s/bind-moved.%s", (int)(slash - b->hf),
		     b->hf, key) < (int)sizeof path) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			      O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return true;
		}
		if (errno == EEXIST)
			return false;
	}
	return b->lrank == 0 || b->rank == 0;
}

static void say_moved(const struct bind *b)
{
	if (!b->moved || !first_to_say(b))
		return;
	const char *how = !strcmp(b->lfrom, "OMPI_COMM_WORLD_LOCAL_RANK")
		? "mpirun --map-by seq --hostfile \"$TOPOPLACE_HOSTFILE\""
		: !strcmp(b->lfrom, "MPI_LOCALRANKID")
		? "mpiexec with the HYDRA_* variables the batch step exports, or "
		  "srun --mpi=pmi2 (see topoplace(1), bind)"
		: "srun";
	fprintf(stderr, "topoplace bind: note: the launcher did not follow the "
		"job's placement (%s): each rank is bound by its local rank (%s); "
		"to follow the placement: %s\n", b->moved_msg, b->lfrom, how);
}

/* A node with fewer CPUs or GPUs than its ranks: they share them, and the
 * node's local rank 0 says so. */
static void say_short(const struct bind *b)
{
	if (b->local != 0 || !b->short_msg[0])
		return;
	fprintf(stderr, "topoplace bind: note: %s\n", b->short_msg);
}

/* Everything up to the exec; problems land in b->msg. */
static void bind_rank(struct bind *b)
{
	tpk_hints_from_env(&b->hints, env_get);
	if (!b->hints.seen || tpk_hints_policy_none(&b->hints) ||
	    env("TOPOPLACE_CPUS") || slurm_task())
		return;   /* nothing asked, or the plugin placed this task */
	const char *which = NULL, *hf = env("TOPOPLACE_HOSTFILE");
	if (!hf)
		hf = env("SLURM_HOSTFILE");
	b->hf = hf;
	if ((b->rank = env_rank(&which)) < 0) {
		if (b->rank == -1)
			why(b, "no rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, "
			    "SLURM_PROCID)");
		else
			why(b, "%s: not a rank", which);
		return;
	}
	if (!hf) {
		why(b, "the job was not placed (no TOPOPLACE_HOSTFILE)");
		return;
	}
	short_hostname(b->node, sizeof b->node);
	long size = env_size();
	const char *mpiexec = env("TOPOPLACE_MPIEXEC");
	if (!strcmp(which, "PMI_RANK") && mpiexec && !strcmp(mpiexec, "blocks")) {
		if (hydra_blocks(b, size) < 0)
			return;
	} else {
		if (read_hostfile(b, hf) < 0)
			return;
		if (size && size != b->ntasks) {
			why(b, "%ld ranks, but the job's placement is for %ld", size,
			    (long)b->ntasks);
			return;
		}
		local_rank(b, which, size);
		if (node_ranks(b) < 0)
			return;
	}
	gpu_share(b);
	b->share.want_cpus = want_cpus(b);
	if (!b->share.want_cpus && !b->share.want_gpus)
		return;
	b->share.node = b->node;
	b->share.tasks = b->mine;
	b->share.ntasks = b->nmine;
	if (tpk_hints_pattern(&b->hints) && make_job(b) < 0)
		return;
	int rc = apply(b);
	short_gpus(b);
	say_moved(b);
	say_short(b);
	if (rc == 0 && b->verbose && b->done[0])
		fprintf(stderr, "topoplace bind: rank %ld on %s:%s\n", b->rank,
			b->node, b->done);
}

static void bind_free(struct bind *b)
{
	/* Hydra's blocks count the ranks without naming them */
	for (int32_t t = 0; b->names && t < b->ntasks; t++)
		free(b->names[t]);
	free(b->names);
	free(b->mine);
	free(b->graph_path);
	free(b->gm_path);
	tp_job_destroy(b->job);
	tpk_hints_free(&b->hints);
}

int cli_cmd_bind(int argc, char **argv)
{
	struct bind b;
	memset(&b, 0, sizeof b);
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			b.verbose = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_help("bind", stdout);
			return cli_finish_stdout();
		} else {
			return cli_usage_error("bind: unknown option '%s'", argv[i]);
		}
	}
	if (i >= argc)
		return cli_usage_error("bind: missing PROGRAM (topoplace bind -- "
				       "PROGRAM [ARGS...])");
	bind_rank(&b);
	if (b.msg[0])   /* one line, then the program runs unbound */
		fprintf(stderr, "%s\n", b.msg);
	bind_free(&b);
	fflush(NULL);
	execvp(argv[i], argv + i);
	fprintf(stderr, "topoplace bind: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
