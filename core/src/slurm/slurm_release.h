/* topoplace — a Slurm release as one number, the way slurm/ compares
 * releases (which files slurmctld reads, how it lays tasks out).
 *
 * The encoding is <slurm/slurm_version.h>'s SLURM_VERSION_NUM: major << 16,
 * minor << 8, micro.  The public <topoplace/job.h> gives front ends the same
 * formula as TP_SLURM_VERSION (tp_job_request.slurm_version); it is written
 * out there because a public header includes no private one, and job/job.c
 * checks at compile time that the two agree.  slurm/ reads it from here, so
 * that Slurm's readers need nothing from the job's header above them. */
#ifndef TOPOPLACE_SLURM_RELEASE_H
#define TOPOPLACE_SLURM_RELEASE_H

#define TP__SLURM_VERSION(a, b, c) \
	(((unsigned)(a) << 16) + ((unsigned)(b) << 8) + (unsigned)(c))
/* The major and minor numbers of one ("26" and "05" of 26.05.3). */
#define TP__SLURM_MAJOR(v) ((unsigned)(v) >> 16)
#define TP__SLURM_MINOR(v) (((unsigned)(v) >> 8) & 0xffu)

#endif
