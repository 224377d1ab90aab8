/* topoplace SPANK plugin — the Slurm that loaded the plugin: its release
 * and the slurm.conf it runs with, which decide the order Slurm itself
 * lays tasks out in (the baseline of every placement).
 *
 * The release is the one the plugin was built for: a SPANK plugin is built
 * per release (the packages pin it).  slurm.conf is the site's slurm_conf=
 * when given, else the process's SLURM_CONF (srun's is the user's own, which
 * srun itself reads; slurmstepd's is slurmd's, never the job's), else the
 * default the loading Slurm was built with (its default_slurm_config_file,
 * a plain string) when it can be read, else a configless node's copy
 * (/run/slurm/conf/slurm.conf), else /etc/slurm/slurm.conf.
 *
 * slurmctld's live view of a topology (nodes that joined at run time) is
 * read through the process's own libslurm, found with dlsym so that the
 * plugin loads wherever the functions are absent (slurmstepd, releases
 * without them), with the signatures of the release that runs: the API
 * number (slurm_api_version, 43 from 25.05) says which. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm_version.h>

#include "tpk.h"

unsigned tpk_slurm_version(void)
{
	return SLURM_VERSION_NUMBER;
}

static const char *readable(const char *path)
{
	return path && access(path, R_OK) == 0 ? path : NULL;
}

static const char *built_in_default(void)
{
	char *const *def = dlsym(RTLD_DEFAULT, "default_slurm_config_file");
	return def && *def && (*def)[0] == '/' ? *def : NULL;
}

void tpk_slurm_conf_path(const struct tpk_site *site, char *out, size_t len)
{
	const char *path = site->slurm_conf[0] ? site->slurm_conf : NULL;
	const char *env = getenv("SLURM_CONF");
	if (!path && env && env[0] == '/')
		path = env;
	if (!path)
		path = readable(built_in_default());
	if (!path)   /* configless: slurmd's copy of the controller's */
		path = readable("/run/slurm/conf/slurm.conf");
	snprintf(out, len, "%s", path ? path : "/etc/slurm/slurm.conf");
}

/* slurm_api_version()'s major number of Slurm 25.05, whose slurm_load_topo
 * takes a topology name and slurm_print_topo_info_msg a unit. */
#define API_25_05 43
/* More than any cluster's topology prints. */
#define LIVE_MAX_BYTES ((size_t)64 << 20)

char *tpk_slurm_topology_text(const char *topology, size_t *len, char *why,
			      size_t wlen)
{
	*len = 0;
	if (getenv("SLURM_TOPO_LEN")) {
		/* slurm_print_topo_info_msg cuts every line to its length */
		snprintf(why, wlen, "SLURM_TOPO_LEN is set (it cuts Slurm's lines)");
		return NULL;
	}
	long (*api)(void);
	void (*free_msg)(void *);
	void *load = dlsym(RTLD_DEFAULT, "slurm_load_topo");
	void *print = dlsym(RTLD_DEFAULT, "slurm_print_topo_info_msg");
	*(void **)&api = dlsym(RTLD_DEFAULT, "slurm_api_version");
	*(void **)&free_msg = dlsym(RTLD_DEFAULT, "slurm_free_topo_info_msg");
	if (!load || !print || !api || !free_msg) {
		snprintf(why, wlen, "no slurm_load_topo in this process");
		return NULL;
	}
	bool named = (api() >> 16) >= API_25_05;
	void *msg = NULL;
	int rc;
	if (named) {
		int (*load2)(void **, char *);
		*(void **)&load2 = load;
		rc = load2(&msg, (char *)topology);
	} else {
		int (*load1)(void **);
		*(void **)&load1 = load;
		rc = load1(&msg);
	}
	if (rc != 0 || !msg) {
		snprintf(why, wlen, "slurm_load_topo failed");
		if (msg)
			free_msg(msg);
		return NULL;
	}
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (f) {
		if (named) {
			void (*print5)(FILE *, void *, char *, char *, int);
			*(void **)&print5 = print;
			print5(f, msg, NULL, NULL, 0);
		} else {
			void (*print4)(FILE *, void *, char *, int);
			*(void **)&print4 = print;
			print4(f, msg, NULL, 0);
		}
		fclose(f);
	}
	free_msg(msg);
	if (!f || !text || n > LIVE_MAX_BYTES) {
		snprintf(why, wlen, "%s", f ? "no text, or too much" : "out of memory");
		free(text);
		return NULL;
	}
	*len = n;
	return text;
}
