#!/bin/sh
# One training step's communication simulated with SimGrid SMPI: TP
# all-reduce per layer, PP send/receive, DP gradient all-reduce, EP
# all-to-all (rings written out in train_step.c), on a rail-optimised fat
# tree with NVLink nodes and on NVL72 racks (Slurm blocks) over a tree, in
# fragmented allocations drawn from a seed chosen at run time (printed):
# what a busy cluster leaves (or --draw runs: free runs anywhere).
# Slurm 26.05's own layout, a Kueue-like rank-by-domain order and
# topoplace's (the hint without bytes=, as users write it, and with the
# bench's true volumes), each case's simulated step time and the medians.
# A benchmark, run by tests/bench/run.sh (make bench); not a test.
#   sh tests/bench/simgrid-train.sh [--cases N] [--seed S] [--net rail,nvl] [--nvl-cards] [--draw busy|runs] [--keep DIR]
# TOPOPLACE names the CLI (default $BUILD/topoplace, BUILD default build).
# Skipped, with one line, when smpicc, smpirun or python3 is missing.  See
# tests/bench/simgrid/train.py.
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
	echo "simgrid-train: skipped, missing:$missing (sh contrib/install-deps.sh bench)"
	exit 0
fi
if [ ! -x "$tp" ]; then
	echo "simgrid-train: $tp not built (make BUILD=${BUILD:-build} all, or set TOPOPLACE)" >&2
	exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-train.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! smpicc -O2 -o "$dir/train_step" "$here/simgrid/train_step.c" >"$dir/cc.log" 2>&1; then
	echo "simgrid-train: smpicc failed:" >&2
	cat "$dir/cc.log" >&2
	exit 1
fi
python3 "$here/simgrid/train.py" --topoplace "$tp" --exe "$dir/train_step" "$@"
