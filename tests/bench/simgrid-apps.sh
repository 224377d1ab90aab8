#!/bin/sh
# Real MPI applications simulated with SimGrid SMPI: LULESH 2.0 (a 26-
# neighbour halo on a cube of ranks), miniAMR (adaptive mesh refinement:
# face exchanges between blocks that refine, coarsen and move between
# ranks) and fftMPI (3-D FFTs: pencils remapped inside rows and columns of
# ranks), each built with smpicc/smpicxx and the trace library, placed by
# Slurm's order, Scotch, topoplace with the hint its user would write and
# topoplace with the captured pattern, on tori, 2:1 and 4:1 fat trees and a
# dragonfly; allocations from a seed drawn at run time (printed).
# A benchmark, run by tests/bench/run.sh (make bench); not a test.
#   sh tests/bench/simgrid-apps.sh [--app lulesh,miniamr,fftmpi] [--cases N] [--seed S]
#        [--net torus,ft4,ft2,df] [--site full|slurm] [--coll mpich|ompi|smpi]
#        [--jobs N] [--keep DIR]
# TOPOPLACE names the CLI (default $BUILD/topoplace, BUILD default build).
# Where the applications come from: tests/bench/apps.sources pins each one
# (its git URL, a commit, the SHA-256 of `git archive --format=tar` of it);
# the project holds none of their code.  The tar is read from
# $TOPOPLACE_APPS/NAME.tar[.xz] (default ../shared/apps), else from the
# cache $TOPOPLACE_APPS_CACHE (default /var/cache/topoplace-apps), else
# made from git at the pinned commit (the URL, or a local clone named by
# TOPOPLACE_GIT_<NAME>, e.g. TOPOPLACE_GIT_MINIAMR) and cached; it is used
# only when its hash matches.
# Cost: a case is 4 simulations (3 without Scotch) and 3 maps.  One 512-rank
# simulation takes about a minute (LULESH) to 3 minutes and 1.4 GB
# (miniAMR) on a free core; miniAMR's captured graph (23,000 edges at 512
# ranks, its small all-to-all as Bruck's rounds) takes topoplace map about
# 0.5 s on a 4:1 tree and 1.5 s on the torus (two CPUs).  --cases 1 --app
# miniamr took 20 minutes with --jobs 2 on two shared cores; the default 30
# cases a network is for a night.
# Skipped, with one line, when smpicxx, smpirun or python3 is missing; an
# application whose source cannot be had is skipped with one line.
# See tests/bench/simgrid/apps.py.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
tp=${TOPOPLACE:-$build/topoplace}

missing=
for t in smpicc smpicxx smpirun python3; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
	echo "simgrid-apps: skipped, missing:$missing (sh contrib/install-deps.sh bench)"
	exit 0
fi
if [ ! -x "$tp" ]; then
	echo "simgrid-apps: $tp not built (make BUILD=${BUILD:-build} all, or set TOPOPLACE)" >&2
	exit 1
fi
exec python3 "$here/simgrid/apps.py" --topoplace "$tp" "$@"
