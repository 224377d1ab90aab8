#!/bin/sh
# The node model cached from inside a cgroup cpuset of one CPU describes the
# whole node, as the plugin's root hook stores it inside slurmstepd under
# ConstrainCores=yes: a child cgroup gets cpuset.cpus of one CPU, a shell
# moves itself into it and runs `topoplace node-info --cache DIR`; the cache
# is then read outside and must describe every CPU of the machine.
# cgroup v2 (a child of this process's cgroup with the cpuset controller),
# else cgroup v1's cpuset hierarchy, as Slurm's task/cgroup uses either.
#
# usage: tests/cli/cpuset.sh path/to/topoplace
# Needs root and a cpuset controller; otherwise one "skip" line.
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 path/to/topoplace" >&2
	exit 2
fi
case $1 in
/*) T=$1 ;;
*) T=$(pwd)/$1 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
	echo "skip cpuset: not root (a cgroup cpuset needs root)"
	exit 0
fi
ncpu=$(getconf _NPROCESSORS_ONLN)
online=$(cat /sys/devices/system/cpu/online)
first=${online%%[,-]*}

cg=
v2=/sys/fs/cgroup
if [ -f "$v2/cgroup.controllers" ] && grep -qw cpuset "$v2/cgroup.controllers"; then
	# a child of the root: the root alone is exempt from v2's "no internal
	# processes" rule, so it may hand cpuset to a child while processes
	# sit in it
	parent=$v2
	if grep -qw cpuset "$parent/cgroup.subtree_control" 2>/dev/null ||
	   echo +cpuset >"$parent/cgroup.subtree_control" 2>/dev/null; then
		cg=$parent/topoplace-test-$$
		kind=v2
	fi
fi
if [ -z "$cg" ] && [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
	cg=/sys/fs/cgroup/cpuset/topoplace-test-$$
	kind=v1
fi
if [ -z "$cg" ]; then
	echo "skip cpuset: no cgroup cpuset controller (v2 or v1)"
	exit 0
fi
if [ "$ncpu" -lt 2 ]; then
	echo "skip cpuset: one CPU (a one-CPU cpuset restricts nothing)"
	exit 0
fi

# hwloc's pci component leaks 1016 bytes in libpciaccess on every live
# load (hwloc 2.9; valgrind: under hwloc_topology_load), in a frame LSan
# cannot unwind to suppress: leaks are not what this test is about
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-cpuset.XXXXXX") || exit 1
chmod 755 "$tmp"
cleanup() {
	[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

mkdir "$cg" || { echo "skip cpuset: cannot make $cg"; exit 0; }
if [ $kind = v1 ]; then
	cat "$(dirname "$cg")/cpuset.mems" >"$cg/cpuset.mems"
fi
echo "$first" >"$cg/cpuset.cpus"

# inside: the shell joins the cgroup, then runs the detection
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$T' node-info --cache '$tmp/cache'" \
	>"$tmp/in" 2>"$tmp/err"
rc=$?
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec nproc" >"$tmp/nproc" 2>/dev/null
if [ "$(cat "$tmp/nproc")" = 1 ]; then
	ok "cpuset ($kind): a process of the cgroup runs on one CPU"
else no "cpuset ($kind)" "nproc inside is $(cat "$tmp/nproc")"; fi
# the shell that wrote cgroup.procs has exited: the cgroup is empty again
pus_in=$(sed -n '1s/.* \([0-9]*\) PUs.*/\1/p' "$tmp/in")
if [ $rc -eq 0 ] && [ "$pus_in" = "$ncpu" ]; then
	ok "node-info inside a one-CPU cpuset: all $ncpu PUs"
else no "node-info inside a one-CPU cpuset" "rc $rc: $(head -1 "$tmp/in") $(head -c 300 "$tmp/err")"; fi

# outside: the cache is read, and it is the whole node
"$T" node-info --cache "$tmp/cache" >"$tmp/out" 2>"$tmp/err"
rc=$?
head1=$(head -1 "$tmp/out")
pus=$(echo "$head1" | sed -n 's/.* \([0-9]*\) PUs.*/\1/p')
case $head1 in
*"(cached in $tmp/cache/"*) cached=1 ;;
*) cached=0 ;;
esac
if [ $rc -eq 0 ] && [ $cached = 1 ] && [ "$pus" = "$ncpu" ]; then
	ok "the cache, read outside: every CPU of the node ($ncpu PUs)"
else no "the cache, read outside" "rc $rc, cached $cached: $head1"; fi
# hwloc's own reading of the cache file (no INCLUDE_DISALLOWED): the same
if command -v lstopo-no-graphics >/dev/null 2>&1; then
	n=$(lstopo-no-graphics --input "$tmp"/cache/node-*.xml --only pu 2>/dev/null | wc -l)
	if [ "$n" = "$ncpu" ]; then
		ok "lstopo reads the cache: $ncpu PUs allowed"
	else no "lstopo reads the cache" "$n PUs"; fi
fi

echo "cpuset: $pass passed, $fail failed"
[ $fail -eq 0 ]
