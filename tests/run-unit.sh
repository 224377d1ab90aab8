#!/bin/sh
# Run every Check unit-test binary; print one summary line at the end.
# usage: run-unit.sh [--valgrind] BIN...
vg=""
if [ "$1" = "--valgrind" ]; then
	vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
	export CK_FORK=no
	shift
fi
pass=0; fail=0; failed=""
for t in "$@"; do
	out=$($vg "$t" 2>&1); rc=$?
	echo "$out" | grep -E '^[0-9]+%:|Failure|Error' || true
	n=$(echo "$out" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' | tail -1)
	if [ -n "$n" ]; then
		c=$(echo "$n" | cut -d' ' -f1)
		f=$(( $(echo "$n" | cut -d' ' -f2) + $(echo "$n" | cut -d' ' -f3) ))
		pass=$(( pass + c - f )); fail=$(( fail + f ))
	fi
	if [ $rc -ne 0 ]; then
		[ -z "$n" ] && fail=$(( fail + 1 ))
		failed="$failed $(basename "$t")"
		echo "$out" | tail -20
	fi
done
echo "unit: $pass passed, $fail failed"
[ -z "$failed" ] || { echo "unit: failing binaries:$failed"; exit 1; }
