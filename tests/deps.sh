#!/bin/sh
# Runtime dependencies of the SPANK plugin: every library it NEEDs
# must be one a Debian 12 compute node with slurmd and slurm-client has,
# that is a shared library of a package in their dependency closure
# (Depends and Pre-Depends, recursively; no Recommends).  libslurm and
# libmetis are not there: srun and slurmstepd provide Slurm's functions, and
# METIS is loaded with dlopen() when a hierarchical mapping needs it.
# usage: tests/deps.sh [PLUGIN...]      (default build/topoplace.so)
# prints "deps: N passed, M failed"
[ $# -gt 0 ] || set -- "${BUILD:-build}/topoplace.so"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in slurmd slurm-client; do
	if ! installed "$p"; then
		msg="deps: $p is not installed (sh contrib/install-deps.sh slurm)"
		if [ -n "$TOPOPLACE_REQUIRE_SLURM_TESTS" ]; then
			echo "FAIL $msg"; echo "deps: 0 passed, 1 failed"; exit 1
		fi
		echo "SKIP $msg"; echo "deps: 0 passed, 0 failed"; exit 0
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-deps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# The closure: real package names only ("<debconf-2.0>" is virtual; its
# providers are listed too).  Packages of it that are not installed (the
# other side of an alternative) provide nothing here.
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances slurmd slurm-client 2>/dev/null |
	grep -v '^[ <]' | sort -u >"$tmp/closure"
if ! grep -qx libhwloc15 "$tmp/closure" || ! grep -qx libc6 "$tmp/closure"; then
	no "dependency closure of slurmd slurm-client" "apt-cache gave no closure (apt-get update?)"
	echo "deps: $pass passed, $fail failed"; exit 1
fi
ok "closure of slurmd slurm-client: $(wc -l <"$tmp/closure") packages"
while read -r p; do
	installed "$p" || continue
	dpkg -L "$p" 2>/dev/null | grep -E '/lib[^/]*\.so(\.[0-9]+)*$' |
		sed 's|.*/||' | sed "s|\$| $p|"
done <"$tmp/closure" | sort -u >"$tmp/provided"

for so in "$@"; do
	if [ ! -f "$so" ]; then
		no "$so" "no such file"
		continue
	fi
	readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
	[ -s "$tmp/needed" ] || { no "$so NEEDED" "readelf found none"; continue; }
	while read -r lib; do
		by=$(awk -v l="$lib" '$1 == l { print $2; exit }' "$tmp/provided")
		if [ -n "$by" ]; then
			ok "$so needs $lib (from $by)"
		else
			no "$so needs $lib" "no package of slurmd's or slurm-client's closure provides it"
		fi
	done <"$tmp/needed"
	for bad in libslurm libmetis; do
		if grep -q "^$bad" "$tmp/needed"; then
			no "$so needs no $bad" "$(grep "^$bad" "$tmp/needed" | paste -sd' ')"
		else
			ok "$so needs no $bad"
		fi
	done
done
echo "deps: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
