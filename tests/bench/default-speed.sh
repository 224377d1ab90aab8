#!/bin/sh
# How long `topoplace map` takes with its defaults (policy auto, no time
# budget), on the three cases issue 47 sets times for: a 4,096-task
# stencil on a torus, a 512-rank captured application graph (LULESH-like:
# 26 neighbours of unequal bytes and an all-reduce's XOR partners), and a
# 4,096-task irregular mesh graph.  Each runs on one thread (its CPU time)
# and on every CPU (its wall time, and the same hostfile); nodes drawn from
# a seed chosen at run time (printed; --seed S repeats a run).
# A benchmark, run by tests/bench/run.sh (make bench); not a test.
#   sh tests/bench/default-speed.sh [--seed S] [--runs N] [--case NAME,...]
# TOPOPLACE names the CLI (default $BUILD/topoplace, BUILD default build).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
tp=${TOPOPLACE:-$build/topoplace}
if ! command -v python3 >/dev/null 2>&1; then
	echo "default-speed: skipped, python3 missing"
	exit 0
fi
if [ ! -x "$tp" ]; then
	echo "default-speed: $tp not built (make BUILD=${BUILD:-build} all, or set TOPOPLACE)" >&2
	exit 1
fi
meshes=$root/build-bench/meshes
[ -f "$meshes/boolean-4096.json" ] || sh "$here/make-meshes.sh" "$meshes" >/dev/null 2>&1 || true
exec python3 "$here/speed/default_speed.py" --topoplace "$tp" --meshes "$meshes" "$@"
