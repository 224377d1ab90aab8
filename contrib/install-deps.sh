#!/bin/sh
# Install the Debian packages topoplace needs, only those missing.
#   install-deps.sh          build and test dependencies
#   install-deps.sh bench    also the benchmark baselines (Scotch; Zoltan2 from Debian's
#                            Trilinos, about 15 MB, for bench_peers) and mesh tools (gmsh, METIS programs)
#   install-deps.sh slurm    also the daemons of the test cluster
#   install-deps.sh fuzz     also clang and its libFuzzer runtime (make fuzz,
#                            make fuzz-smoke, which make check runs)
#   install-deps.sh doc      the man page checkers (groff, mandoc) of tests/doc.sh
set -e
pkgs="gcc make pkg-config libslurm-dev libhwloc-dev libjson-c-dev libmetis-dev check valgrind scotch"
case "$1" in
bench) pkgs="scotch time gmsh gmsh-doc metis g++ libopenmpi-dev libtrilinos-zoltan2-dev
	libtrilinos-teuchos-dev libtrilinos-tpetra-dev libtrilinos-xpetra-dev
	libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libtrilinos-zoltan-dev
	libtrilinos-epetra-dev" ;;
slurm) pkgs="slurmctld slurmd slurm-client munge" ;;
fuzz) pkgs="clang libclang-rt-14-dev" ;;
doc) pkgs="groff-base mandoc" ;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
