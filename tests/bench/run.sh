#!/bin/sh
# Run topoplace's benchmarks and print the machine they ran on.
#   sh tests/bench/run.sh [bench_geom options...]
# BUILD (default: build) names the build directory; BENCH_GEOM overrides the
# mapping benchmark's path.  Options (--quick, --no-scotch, --case NAME, ...)
# are passed to bench_geom.  Other bench binaries in $BUILD/bench/ (bench_gpu,
# bench_graph, bench_hier: auto under the budget on switch trees and
# dragonflies, bench_scale: the machine-scale table, time budget against the
# full search; BENCH_SCALE_ARGS are passed to it, e.g. --quick) and other
# scripts tests/bench/*.sh (not make-meshes.sh, which bench_graph calls) run after it; tests/slurm/bench-latency.sh runs too
# when it exists and we are root (it needs the test cluster).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
geom=${BENCH_GEOM:-$build/bench/bench_geom}

echo "== machine"
echo "cpus:   $(nproc) online"
model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)
echo "cpu:    ${model:-unknown}"
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
echo "memory: $mem"
echo "kernel: $(uname -sr)"
if [ -r /etc/os-release ]; then
	. /etc/os-release
	echo "os:     ${PRETTY_NAME:-unknown}"
fi
echo "cc:     $(${CC:-cc} --version 2>/dev/null | head -1)"
rev=$(git -C "$root" describe --always --dirty 2>/dev/null)
[ -n "$rev" ] && echo "source: $rev"
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min; timings assume an idle machine)"
if command -v scotch_gmap >/dev/null 2>&1; then
	v=$(dpkg-query -W -f='${Version}' scotch 2>/dev/null)
	echo "scotch: ${v:-installed} ($(command -v scotch_gmap))"
else
	echo "scotch: not installed (Scotch columns will fail; use --no-scotch)"
fi
if [ -x "$build/bench-tools/zoltan2_map" ]; then
	v=$(dpkg-query -W -f='${Version}' libtrilinos-zoltan2-dev 2>/dev/null)
	echo "zoltan2: ${v:-installed} ($build/bench-tools/zoltan2_map)"
else
	echo "zoltan2: driver not built (bench_peers' Zoltan2 rows say not run)"
fi
echo

fail=0
if [ ! -x "$geom" ]; then
	echo "run.sh: $geom not built (make BUILD=${BUILD:-build} bench)" >&2
	exit 1
fi
echo "== bench_geom $*"
"$geom" "$@" || fail=1

for b in "$build"/bench/*; do
	[ -f "$b" ] && [ -x "$b" ] || continue
	[ "$b" = "$geom" ] && continue
	[ "$(basename "$b")" = bench_geom ] && continue
	echo
	echo "== $(basename "$b")"
	case "$(basename "$b")" in
	bench_scale) "$b" ${BENCH_SCALE_ARGS:-} || fail=1 ;;
	*) "$b" || fail=1 ;;
	esac
done
for s in "$here"/*.sh; do
	[ -f "$s" ] || continue
	case "$(basename "$s")" in run.sh | make-meshes.sh) continue ;; esac
	echo
	echo "== $(basename "$s")"
	sh "$s" || fail=1
done
lat="$root/tests/slurm/bench-latency.sh"
if [ -f "$lat" ]; then
	echo
	if [ "$(id -u)" = 0 ]; then
		echo "== slurm/bench-latency.sh"
		sh "$lat" || fail=1
	else
		echo "== slurm/bench-latency.sh skipped (needs root)"
	fi
fi
exit $fail
