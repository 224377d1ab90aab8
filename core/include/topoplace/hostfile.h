/* topoplace — hostfiles: the node of every rank, one name per line, as
 * SLURM_HOSTFILE and launchers' host files expect them.
 */
#ifndef TOPOPLACE_HOSTFILE_H
#define TOPOPLACE_HOSTFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include <topoplace/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hostfile: one node name per line, line t = node of task t (SLURM_HOSTFILE). */
TP_EXPORT int tp_hostfile_write(FILE *f, const tp_alloc *a, const int32_t *map,
		      int32_t ntasks);
/* Write atomically: a temporary file in the same directory, then rename. */
TP_EXPORT int tp_hostfile_write_path(const char *path, const tp_alloc *a,
			   const int32_t *map, int32_t ntasks, tp_error *err);
/* Read a hostfile (one name per line, or comma separated; '#' comments; a
 * regular file of at most 256 MiB, opened without blocking; a NUL byte is
 * an error naming its line) and
 * turn it into a mapping onto a: every name must be in the allocation.  With
 * set_slots the allocation's slots become the per-node task counts found;
 * otherwise no node may get more tasks than its slots.  *ntasks receives the
 * task count; *map_out is malloc'ed. */
TP_EXPORT int tp_hostfile_read(const char *path, tp_alloc *a, bool set_slots,
		     int32_t **map_out, int32_t *ntasks, tp_error *err);

#ifdef __cplusplus
}
#endif
#endif
