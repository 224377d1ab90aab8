#!/bin/sh
# bench_peers' Zoltan2 driver rejects bad input with one line naming the
# file and the item, and maps a tiny good input (run by run.sh; skipped
# when the driver is not built).
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
case "$build" in /*) ;; *) build="$here/../../$build" ;; esac
z2="$build/bench-tools/zoltan2_map"
if [ ! -x "$z2" ]; then
	echo "zoltan2-input: skipped ($z2 not built)"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
# a 4-ring machine of 2 nodes x 1 rank, 2 tasks talking to each other
good='1 2 1 2 2 1
4
0
3
0
1
0 1 2
1 0
5 5'
expect_bad() {  # name, expected fragment, input
	printf '%s\n' "$3" > "$dir/in"
	if "$z2" "$dir/in" "$dir/out" > "$dir/log" 2>&1; then
		echo "FAIL $1: accepted"; fail=1; return
	fi
	lines=$(grep -c . "$dir/log")
	if [ "$lines" != 1 ] || ! grep -q "$2" "$dir/log"; then
		echo "FAIL $1: wanted one line with '$2', got:"; cat "$dir/log"; fail=1
		return
	fi
	echo "ok   $1: $(cat "$dir/log")"
}
printf '%s\n' "$good" > "$dir/in"
if "$z2" "$dir/in" "$dir/out" > "$dir/log" 2>&1 &&
   [ "$(sort "$dir/out" | tr '\n' ' ')" = "0 1 " ]; then
	echo "ok   good input mapped"
else
	echo "FAIL good input:"; cat "$dir/log"; fail=1
fi
expect_bad header "item 1: pdim: missing or not a number" "x"
expect_bad dims "pdim: 9 is not an integer in 1..4" "9 2 1 2 2 1"
expect_bad coord "item 8: processor coordinate: 4 is not an integer in 0..3" \
	"$(printf '%s\n' "$good" | sed '3s/.*/4/')"
expect_bad adj "adj: 2 is not an integer in 0..1" \
	"$(printf '%s\n' "$good" | sed '8s/.*/2 0/')"
expect_bad xadj "xadj" "$(printf '%s\n' "$good" | sed '7s/.*/0 2 1/')"
expect_bad short "item 18: weight: missing" "$(printf '%s\n' "$good" | sed '9s/.*/5/')"
expect_bad extra "more values than the header" "$good
7"
exit $fail
