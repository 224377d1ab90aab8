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
 * (/run/slurm/conf/slurm.conf), else /etc/slurm/slurm.conf. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
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
