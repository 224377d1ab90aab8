/* The plugin's readers of what the user and the admin write
 * (plugin/srun_args.c, site.c): srun's command line as the plugin scans
 * it before srun parses it (words separated by NUL bytes, as
 * /proc/self/cmdline holds them), a memory size, and the plugstack.conf
 * line's arguments.  Checked: the scan's fields are counts and indices
 * within the command line and strings ended within their buffers; a
 * refused site argument says why, in one line once logged (tpk_line). */
#include <limits.h>

#include "fuzz.h"
#include "launch.h"
#include "tpk.h"

#define WORDS 64

static void check_scan(const struct tpk_srun_args *a, int argc)
{
	if (a->ntasks < 0 || a->nodes_min < 0 || a->nodes_max < 0 ||
	    a->ntasks_per_node < 0 || a->cpus_per_task < 0)
		abort();
	if (strnlen(a->layout, sizeof a->layout) >= sizeof a->layout ||
	    strnlen(a->mpi, sizeof a->mpi) >= sizeof a->mpi ||
	    strnlen(a->ambiguous, sizeof a->ambiguous) >= sizeof a->ambiguous)
		abort();
	if (a->ambiguous[0] && (a->ambiguous_at < 1 || a->ambiguous_at >= argc))
		abort();
	if (a->topo_after < 0 || a->topo_after >= argc)
		abort();
}

static void check_site(const char *arg)
{
	struct tpk_site s;
	char err[256];
	tpk_site_defaults(&s);
	err[0] = '\0';
	if (tpk_site_arg(&s, arg, err, sizeof err) != 0) {
		/* the plugin logs it through tpk_line: one printable line */
		char line[TPK_LINE_MAX];
		tpk_line(line, sizeof line, "topoplace: %s", err);
		if (!err[0] || strchr(line, '\n'))
			abort();
	}
	if (strnlen(s.conf_path, sizeof s.conf_path) >= sizeof s.conf_path ||
	    strnlen(s.policy, sizeof s.policy) >= sizeof s.policy ||
	    strnlen(s.slurm_conf, sizeof s.slurm_conf) >= sizeof s.slurm_conf ||
	    strnlen(s.node_cache, sizeof s.node_cache) >= sizeof s.node_cache ||
	    s.max_tasks < 0 || s.max_threads < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* the first byte: how far srun's own getopt got (0: unknown) */
	int known = data[0] % 8;
	char *buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	char *argv[WORDS + 1] = { "srun" };
	int argc = 1;
	for (size_t at = 0; at < size - 1 && argc < WORDS;) {
		argv[argc++] = buf + at;
		at += strlen(buf + at) + 1;
	}
	argv[argc] = NULL;
	struct tpk_srun_args a;
	tpk_scan_srun_args(argc, argv, known < argc ? known : 0, &a);
	check_scan(&a, argc);
	tpk_srun_args_free(&a);
	for (int i = 1; i < argc; i++) {
		(void)tpk_mem_is_zero(argv[i]);
		check_site(argv[i]);
	}
	free(buf);
	return 0;
}
