#!/bin/bash
# topoplace — the SPANK plugin built against the headers of every Slurm
# release that tests/slurm/release.sh finds (../shared/slurm: 23.11 to
# 26.05), as a site running that release builds it.
#
#   sh tests/slurm/releases.sh          (make release-tests)
#
# For each release: its headers (release.sh headers: configure only, about a
# minute the first time, cached after), then the plugin alone, no tests:
#   make BUILD=build-releases SLURM_PREFIX=<headers> DEVELOPER=1 build-releases/topoplace.so
# and three checks: it builds without a warning; its dynamic symbols are
# exactly what topoplace.lds exports (plugin_name, plugin_type,
# plugin_version and the slurm_spank_* hooks of plugin/*.c); it
# records the release, as "Slurm V" (strings) and in plugin_version, the
# number Slurm compares with its own before loading it.  One BUILD for all
# releases: the core is compiled once, and each release after the first
# also checks that the plugin's objects are rebuilt when SLURM_PREFIX
# changes (an object of the release before would show its number).
#
# One line per release, then "releases: N passed, M failed"; exit 1 on
# failure.  Without any tarball (release.sh exits 3): its line, exit 0
# (exit 1 under TOPOPLACE_REQUIRE_SLURM_TESTS=1, as in CI).
#
# Environment: TP_RELEASES_BUILD (default build-releases), TP_JOBS (make
# -j, default the number of CPUs), and release.sh's TP_SLURM_TARBALLS,
# TP_SLURM_CACHE.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RB=${TP_RELEASES_BUILD:-build-releases}
JOBS=${TP_JOBS:-$(nproc 2>/dev/null || echo 2)}
SO=$RB/topoplace.so

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-releases.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

bash "$HERE/release.sh" list >"$tmp/list" 2>"$tmp/err"
rc=$?
if [ "$rc" = 3 ]; then
	cat "$tmp/err"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "releases: TOPOPLACE_REQUIRE_SLURM_TESTS=1: skipping counts as a failure"
		echo "releases: 0 passed, 1 failed"; exit 1
	fi
	exit 0
elif [ "$rc" != 0 ] || [ ! -s "$tmp/list" ]; then
	cat "$tmp/err"
	echo "releases: release.sh list failed (exit $rc)"
	echo "releases: 0 passed, 1 failed"
	exit 1
fi

# A tarball SHA256SUMS lists but the folder lacks (a partial copy): a
# release that would silently go untested; a failure under
# TOPOPLACE_REQUIRE_SLURM_TESTS=1, else a note.
TARBALLS=${TP_SLURM_TARBALLS:-$REPO/../shared/slurm}
if [ -r "$TARBALLS/SHA256SUMS" ]; then
	for f in $(awk '{sub(/^\*/, "", $2); print $2}' "$TARBALLS/SHA256SUMS"); do
		[ -r "$TARBALLS/$f" ] && continue
		if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
			bad "$TARBALLS/$f: listed in SHA256SUMS, missing (TOPOPLACE_REQUIRE_SLURM_TESTS=1)"
		else
			echo "note $TARBALLS/$f: listed in SHA256SUMS, missing; that release is not tested"
		fi
	done
fi

# What the plugin must export: SPANK_PLUGIN()'s data and every hook defined.
cd "$REPO" || exit 1
{ printf '%s\n' plugin_name plugin_type plugin_version
  sed -n 's/^int \(slurm_spank_[a-z_]*\)(.*/\1/p' plugin/*.c; } | sort -u >"$tmp/want"

# The plugin's plugin_version, as 6 hex digits (little-endian file).
plugin_version() {
	local a
	a=$(nm -D --defined-only "$1" | awk '$3 == "plugin_version" {print $1}')
	[ -n "$a" ] || return 0
	objdump -s --start-address=0x"$a" --stop-address=$((0x$a + 4)) "$1" |
		awk '/^Contents of section/ { sec = $4; next }
		     sec !~ /^\.debug/ && /^ [0-9a-f]+ [0-9a-f]+ / { b = $2
			printf "%s%s%s\n", substr(b, 5, 2), substr(b, 3, 2), substr(b, 1, 2); exit }'
}

while read -r v _; do
	what="release $v"
	if ! prefix=$(bash "$HERE/release.sh" headers "$v" 2>"$tmp/err"); then
		bad "$what: no headers (release.sh headers $v)" "$(tail -3 "$tmp/err")"
		continue
	fi
	# a make of its own: not the -j or jobserver of a make that runs this
	if ! env -u MAKEFLAGS -u MFLAGS make --no-print-directory -j"$JOBS" BUILD="$RB" \
		SLURM_PREFIX="$prefix" DEVELOPER=1 "$SO" >"$tmp/make" 2>&1; then
		bad "$what: the plugin does not build against $prefix/include" \
			"$(grep -m5 -E 'error:|\*\*\*' "$tmp/make")"
		continue
	fi
	if grep -qi 'warning' "$tmp/make"; then
		bad "$what: warnings" "$(grep -i -m5 'warning' "$tmp/make")"
		continue
	fi
	nm -D --defined-only "$SO" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/got"
	if ! cmp -s "$tmp/want" "$tmp/got"; then
		bad "$what: dynamic symbols differ from topoplace.lds's (< wanted, > defined)" \
			"$(diff "$tmp/want" "$tmp/got" | grep '^[<>]' | tr '\n' ' ')"
		continue
	fi
	IFS=. read -r major minor micro <<<"$v"
	num=$(printf '%02x%02x%02x' "$((10#$major))" "$((10#$minor))" "$((10#$micro))")
	pv=$(plugin_version "$SO")
	if [ "$pv" != "$num" ]; then
		bad "$what: plugin_version 0x${pv:-?}, expected 0x$num"
		continue
	fi
	if ! strings -a "$SO" | grep -qx "Slurm $v"; then
		bad "$what: no \"Slurm $v\" in the plugin" \
			"$(strings -a "$SO" | grep -m3 '^Slurm [0-9]')"
		continue
	fi
	ok "$what: plugin built against $v's headers"
done <"$tmp/list"

echo "releases: $pass passed, $fail failed"
[ "$fail" = 0 ]
