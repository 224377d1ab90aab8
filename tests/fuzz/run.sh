#!/bin/sh
# Run the libFuzzer targets built in BUILD/fuzz/ (make fuzz-build).
#
#   run.sh BUILD SECONDS           every target for SECONDS, its corpus kept
#                                  in BUILD/fuzz/corpus/TARGET between runs
#   run.sh --smoke BUILD SECONDS   the same, shorter, from the seeds alone
#
# Each target first replays its regression inputs (tests/fuzz/regress/TARGET/,
# the reproducers of bugs found so far): any crash, sanitizer report, leak or
# input slower than 10 s fails the run.  Seeds come from the examples and test
# data (see seeds() below) and tests/fuzz/seeds/TARGET/.  A failing input is
# left as BUILD/fuzz/crash-TARGET-*; add it to regress/ with the fix.
smoke=0
if [ "$1" = "--smoke" ]; then smoke=1; shift; fi
if [ $# -ne 2 ]; then
	echo "usage: $0 [--smoke] BUILD SECONDS" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1 seconds=$2
case "$build" in /*) ;; *) build="$root/$build" ;; esac
cd "$root" || exit 1

# The targets: TP_FUZZ_TARGETS (make fuzz and fuzz-smoke pass the
# Makefile's FUZZ_TARGETS, the one list; a target named there and not
# built fails), else every target built in BUILD/fuzz.
targets=${TP_FUZZ_TARGETS:-$(for f in "$build"/fuzz/fuzz_*; do
	case ${f##*/} in *.*) ;; *) [ -f "$f" ] && [ -x "$f" ] && echo "${f##*/fuzz_}" ;; esac
done)}
if [ -z "$targets" ]; then
	echo "fuzz: no target built in $build/fuzz (make fuzz-build)" >&2
	exit 1
fi

# seeds TARGET: the example and test files that are valid (or nearly valid)
# inputs of TARGET.
seeds() {
	case $1 in
	conf) ls conf/examples/*.conf tests/data/conf/*.conf tests/cli/data/*.conf | grep -v big48 ;;
	topology) ls conf/examples/*topology*.conf ;;
	block) ls conf/examples/*topology*.conf ;;
	slurm_order) ls conf/examples/*topology*.conf ;;
	topology_yaml) ls tests/data/slurm-topology/*/*.yaml tests/slurm/topology/*.yaml ;;
	coordfile) ls conf/examples/*.coords tests/data/conf/*.coords ;;
	json_graph) ls tests/data/graphs/*.json tests/cli/data/*.json ;;
	gpu_matrix) ls tests/cli/data/gpu-*.json ;;
	gpu_links) ls conf/examples/nodes/*.links tests/data/nodes/real/*.txt \
		tests/data/nodes/real/*.json tests/cli/data/bad-links-*.txt \
		tests/cli/data/bad-links-*.conf ;;
	node_xml) ls conf/examples/nodes/*.xml tests/data/nodes/*.xml \
		tests/data/nodes/real/*.xml tests/cli/data/*.xml ;;
	esac 2>/dev/null
}

opts="-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1"
fail=0
total_execs=0
for t in $targets; do
	bin="$build/fuzz/fuzz_$t"
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin not built (make fuzz-build)" >&2
		fail=1
		continue
	fi
	log="$build/fuzz/$t.log"
	# 1. the regression inputs, each run once
	reg=$(ls "$here/regress/$t/"* 2>/dev/null)
	nreg=0
	if [ -n "$reg" ]; then
		nreg=$(echo "$reg" | wc -l)
		# shellcheck disable=SC2086
		if ! "$bin" $opts $reg >"$log" 2>&1; then
			echo "FAIL fuzz $t: a regression input fails:"
			grep -E "ERROR|SUMMARY|Running:|Test unit written" "$log" | head -8
			fail=1
			continue
		fi
	fi
	# 2. fuzzing from the corpus (seeds, extra seeds, regression inputs)
	if [ $smoke -eq 1 ]; then
		corpus=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-fuzz.XXXXXX")
	else
		corpus="$build/fuzz/corpus/$t"
		mkdir -p "$corpus"
	fi
	for f in $(seeds $t) "$here/seeds/$t/"* $reg; do
		[ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"
	done
	"$bin" $opts -max_total_time="$seconds" -artifact_prefix="$build/fuzz/crash-$t-" \
		"$corpus" >"$log" 2>&1
	rc=$?
	[ $smoke -eq 1 ] && rm -rf "$corpus"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	total_execs=$((total_execs + ${execs:-0}))
	if [ $rc -ne 0 ]; then
		echo "FAIL fuzz $t after ${execs:-?} runs ($cov):"
		grep -E "ERROR|SUMMARY|Test unit written|runtime error" "$log" | head -8
		fail=1
	else
		echo "ok   fuzz $t: $nreg regression inputs, ${execs:-?} runs in ${seconds} s, $cov"
	fi
done
echo "fuzz: $total_execs runs in all"
exit $fail
