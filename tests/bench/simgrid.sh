#!/bin/sh
# Placements simulated with SimGrid SMPI: checks topoplace's predicted
# exchange time against a flow-level simulation of the same exchange on the
# same network (fat trees 4:1 and 2:1, a 16^3 torus, a dragonfly), and
# reports each policy's simulated time against Slurm's block order and
# Scotch.  A benchmark, run by tests/bench/run.sh (make bench); not a test.
#   sh tests/bench/simgrid.sh [--quick] [--no-scotch] [--jobs N] [--keep DIR]
#                             [--case PREFIX] [--network-model MODEL] [--first-seed N]
#                             [--cases N] [--site | --told-nothing] [--bandwidth GB/s] [--periodic]
#                             [--sim-cache DIR] [--conf-add "KEY=V ..."]
# TOPOPLACE names the CLI (default $BUILD/topoplace, BUILD default build).
# Skipped, with one line, when smpicc, smpirun or python3 is missing; without
# scotch_gmap the Scotch column is left out.  See tests/bench/simgrid/run.py.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
tp=${TOPOPLACE:-$build/topoplace}

missing=
for t in smpicc smpirun python3; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
	echo "simgrid: skipped, missing:$missing (sh contrib/install-deps.sh bench)"
	exit 0
fi
if [ ! -x "$tp" ]; then
	echo "simgrid: $tp not built (make BUILD=${BUILD:-build} all, or set TOPOPLACE)" >&2
	exit 1
fi
scotch=
if ! command -v scotch_gmap >/dev/null 2>&1; then
	echo "simgrid: scotch_gmap missing, running without the Scotch column"
	scotch=--no-scotch
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-simgrid.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! smpicc -O2 -o "$dir/exchange" "$here/simgrid/exchange.c" >"$dir/cc.log" 2>&1; then
	echo "simgrid: smpicc failed:" >&2
	cat "$dir/cc.log" >&2
	exit 1
fi
python3 "$here/simgrid/run.py" --topoplace "$tp" --exchange "$dir/exchange" \
	$scotch "$@"
