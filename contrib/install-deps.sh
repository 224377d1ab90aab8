#!/bin/sh
# Install the Debian 12 packages topoplace needs, only those missing.
#   install-deps.sh [GROUP...]          (default: build)
#   install-deps.sh --list [GROUP...]   print the packages, install nothing
# Groups:
#   build    compiler and libraries: make, make run, make install, make deb's
#            build step
#   test     the unit-test framework and valgrind (make unit, make valgrind),
#            scotch (gmtst: the metrics parity test), and librsvg2-bin:
#            the renderer the picture tests
#            (tests/cli/svg.sh) use
#   slurm    the daemons of the test cluster (tests/slurm) and what
#            tests/deps.sh compares the plugin with
#   fuzz     clang and its libFuzzer runtime (make fuzz, make fuzz-smoke)
#   package  Debian packaging tools and rpm (make deb, rpmspec checks)
#   bench    the benchmark baselines (Scotch; Zoltan2 from Debian's Trilinos,
#            about 15 MB, for bench_peers) and mesh tools (gmsh, METIS
#            programs)
#   doc      the man page checkers (groff, mandoc) of tests/doc.sh
#   mpi      Open MPI 4.1 and MPICH 4.0 side by side (the trace library,
#            tests/slurm/mpi.sh) and lstopo (a node's own hwloc XML)
#   slurm-src  what building a Slurm release from its source tarball needs
#            (tests/slurm/release.sh: munge, PMIx for srun --mpi=pmix)
#   check    build test slurm slurm-src fuzz package doc mpi: everything
#            make check and make check-packages use
set -e
group() {
	case "$1" in
	build) echo gcc make pkg-config libc6-dev libslurm-dev libhwloc-dev libjson-c-dev libyaml-dev libmetis-dev ;;
	# libudev-dev: hwloc.pc's Libs.private, for the static link of tests/install.sh
	test) echo check valgrind libudev-dev librsvg2-bin scotch ;;
	slurm) echo slurmctld slurmd slurm-client munge ;;
	fuzz) echo clang libclang-rt-14-dev ;;
	package) echo debhelper dpkg-dev fakeroot rpm ;;
	bench) echo scotch time gmsh gmsh-doc metis g++ openmpi-bin libopenmpi-dev libtrilinos-zoltan2-dev libsimgrid-dev python3 \
		libtrilinos-teuchos-dev libtrilinos-tpetra-dev libtrilinos-xpetra-dev \
		libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libtrilinos-zoltan-dev \
		libtrilinos-epetra-dev ;;
	doc) echo groff-base mandoc ;;
	mpi) echo openmpi-bin libopenmpi-dev mpich libmpich-dev hwloc-nox ;;
	slurm-src) echo gcc make libc6-dev libmunge-dev libpmix-dev libhwloc-dev libjson-c-dev \
		munge xz-utils python3 ;;
	check) for g in build test slurm slurm-src fuzz package doc mpi; do group $g; done ;;
	*) echo "install-deps: unknown group '$1' (build, test, slurm, slurm-src, fuzz, package, doc, mpi, bench, check)" >&2
	   return 2 ;;
	esac
}
list=0
if [ "$1" = --list ]; then list=1; shift; fi
[ $# -gt 0 ] || set -- build
pkgs=""
for g in "$@"; do
	pkgs="$pkgs $(group "$g")" || exit 2
done
if [ $list = 1 ]; then
	echo $pkgs
	exit 0
fi
missing=""
for p in $pkgs; do
	case " $missing " in *" $p "*) continue ;; esac
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
