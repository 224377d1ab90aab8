/* topoplace SPANK plugin — the job's environment as the remote contexts
 * read it (spank_getenv), for batch.c and task.c.
 *
 * Below the contexts and the dispatcher alike: dispatch.c calls the
 * contexts, the contexts call this, and nothing here calls back up. */
#include <stdlib.h>

#include <slurm/spank.h>

#include "tpk.h"

char *tpk_job_getenv(spank_t sp, const char *name)
{
	/* spank_getenv wants the buffer's size up front: start at a page,
	 * grow fourfold on ESPANK_NOSPACE, give up at 1 MiB (a job's
	 * variable larger than that is not one topoplace reads) */
	size_t cap = 4096;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		spank_err_t rc = spank_getenv(sp, name, buf, (int)cap);
		if (rc == ESPANK_SUCCESS)
			return buf;
		free(buf);
		if (rc != ESPANK_NOSPACE || cap >= (1u << 20))
			return NULL;
		cap *= 4;
	}
}
