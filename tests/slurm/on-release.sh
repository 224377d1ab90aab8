#!/bin/bash
# topoplace — the whole cluster suite (run.sh, mpi.sh) on Slurm releases
# built from their source tarballs, not Debian's 22.05.
#
#   sh tests/slurm/on-release.sh [VERSION...]  (default 26.05.3;
#                                               make slurm-tests-release,
#                                               SLURM_TEST_RELEASES)
#
# Each release is built once and cached (tests/slurm/release.sh build:
# about 6 minutes on 2 cores the first time), the plugin and the command
# are built against its headers into build-slurm-VERSION, and the test
# cluster runs that release's daemons with topology.conf's leaves
# interleaved (TP_LEAVES=interleaved), so that 26.05's topology-ordered
# task layout differs from the hostlist's and every check judged against
# Slurm's own order checks topoplace's model of it.  The releases run one
# after the other; the exit status is 1 when any of them failed.
#
# Without a release's tarball (a machine without ../shared) it says in one
# line how to point it at one, and goes on: exit 0, but under
# TOPOPLACE_REQUIRE_SLURM_TESTS=1 (CI) a missing tarball is a failure.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[ $# -gt 0 ] || set -- 26.05.3

on_release() {  # on_release VERSION -> 0 passed, 1 failed
	local V=$1 prefix rc B status=0
	if ! bash "$HERE/release.sh" tarball "$V" > /dev/null 2>&1; then
		echo "slurm $V: SKIPPED: no source tarball (TP_SLURM_TARBALLS=DIR with slurm-$V.tar.xz runs it)"
		if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
			echo "slurm $V: TOPOPLACE_REQUIRE_SLURM_TESTS=1: skipping counts as a failure"
			echo "slurm: 0 passed, 1 failed"
			return 1
		fi
		return 0
	fi
	prefix=$(bash "$HERE/release.sh" build "$V")
	rc=$?
	if [ $rc != 0 ] || [ ! -x "$prefix/sbin/slurmctld" ]; then
		echo "slurm $V: the release did not build"
		echo "slurm: 0 passed, 1 failed"
		return 1
	fi
	B=build-slurm-$V
	if ! make -C "$REPO" -s BUILD="$B" SLURM_PREFIX="$prefix" all standin > "$REPO/$B.log" 2>&1; then
		tail -20 "$REPO/$B.log"
		echo "slurm $V: the plugin did not build against its headers"
		echo "slurm: 0 passed, 1 failed"
		return 1
	fi
	echo "slurm $V: the cluster suite on $prefix, plugin $B/topoplace.so"
	(
		export TP_SLURM_PREFIX=$prefix TP_LEAVES=interleaved BUILD=$B
		s=0
		bash "$HERE/run.sh" || s=1
		bash "$HERE/mpi.sh" || s=1
		exit $s
	) || status=1
	return $status
}

failed=""
for v in "$@"; do
	on_release "$v" || failed="$failed $v"
done
if [ -n "$failed" ]; then
	echo "slurm releases: failed on$failed"
	exit 1
fi
exit 0
