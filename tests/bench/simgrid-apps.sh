#!/bin/sh
# Real MPI applications simulated with SimGrid SMPI: each application of
# ../shared/apps (LULESH 2.0, ...) built with smpicxx and the trace library,
# placed by Slurm's order, Scotch, topoplace with the hint its user would
# write and topoplace with the captured pattern, on tori, 2:1 and 4:1 fat
# trees and a dragonfly; allocations from a seed drawn at run time (printed).
# A benchmark, run by tests/bench/run.sh (make bench); not a test.
#   sh tests/bench/simgrid-apps.sh [--cases N] [--seed S] [--net torus,ft4,ft2,df]
#                                  [--site full|slurm] [--jobs N] [--keep DIR]
# TOPOPLACE names the CLI (default $BUILD/topoplace, BUILD default build);
# TOPOPLACE_APPS the folder of the application tarballs (../shared/apps).
# Skipped, with one line, when smpicxx, smpirun or python3 is missing, or
# the applications are not there.  See tests/bench/simgrid/apps.py.
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
