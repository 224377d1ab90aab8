#!/bin/bash
# topoplace — the whole cluster suite (run.sh, mpi.sh) on a Slurm release
# built from its source tarball, not Debian's 22.05.
#
#   sh tests/slurm/on-release.sh [VERSION]     (default 26.05.3;
#                                               make slurm-tests-release)
#
# The release is built once and cached (tests/slurm/release.sh build: about
# 10 minutes on 2 cores the first time), the plugin and the command are
# built against its headers into build-slurm-VERSION, and the test cluster
# runs that release's daemons with topology.conf's leaves interleaved
# (TP_LEAVES=interleaved), so that 26.05's topology-ordered task layout
# differs from the hostlist's and every check judged against Slurm's own
# order checks topoplace's model of it.
#
# Without the tarball (a machine without ../shared) it says in one line how
# to point it at one, and exits 0.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
V=${1:-26.05.3}

if ! bash "$HERE/release.sh" tarball "$V" > /dev/null 2>&1; then
	echo "slurm $V: SKIPPED: no source tarball (TP_SLURM_TARBALLS=DIR with slurm-$V.tar.xz runs it)"
	exit 0
fi
prefix=$(bash "$HERE/release.sh" build "$V")
rc=$?
if [ $rc != 0 ] || [ ! -x "$prefix/sbin/slurmctld" ]; then
	echo "slurm $V: the release did not build"
	echo "slurm: 0 passed, 1 failed"
	exit 1
fi
B=build-slurm-$V
if ! make -C "$REPO" -s BUILD="$B" SLURM_PREFIX="$prefix" all standin > "$REPO/$B.log" 2>&1; then
	tail -20 "$REPO/$B.log"
	echo "slurm $V: the plugin did not build against its headers"
	echo "slurm: 0 passed, 1 failed"
	exit 1
fi
echo "slurm $V: the cluster suite on $prefix, plugin $B/topoplace.so"
export TP_SLURM_PREFIX=$prefix TP_LEAVES=interleaved BUILD=$B
status=0
bash "$HERE/run.sh" || status=1
bash "$HERE/mpi.sh" || status=1
exit $status
