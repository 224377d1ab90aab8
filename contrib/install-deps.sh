#!/bin/sh
# Install the Debian 12 packages topoplace needs, only those missing.
#   install-deps.sh [GROUP...]          (default: build)
#   install-deps.sh --list [GROUP...]   print the packages, install nothing
# Groups:
#   build    compiler and libraries: make, make run, make install, make deb's
#            build step
#   test     the unit-test framework and valgrind (make unit, make valgrind)
#   slurm    the daemons of the test cluster (tests/slurm) and what
#            tests/deps.sh compares the plugin with
#   fuzz     clang and its libFuzzer runtime (make fuzz, make fuzz-smoke)
#   package  Debian packaging tools and rpm (make deb, rpmspec checks)
#   bench    the benchmark baselines (Scotch) and mesh tools (gmsh, METIS
#            programs)
#   check    build test slurm fuzz package: everything make check and
#            make check-packages use
set -e
group() {
	case "$1" in
	build) echo gcc make pkg-config libc6-dev libslurm-dev libhwloc-dev libjson-c-dev libmetis-dev ;;
	# libudev-dev: hwloc.pc's Libs.private, for the static link of tests/install.sh
	test) echo check valgrind libudev-dev ;;
	slurm) echo slurmctld slurmd slurm-client munge ;;
	fuzz) echo clang libclang-rt-14-dev ;;
	package) echo debhelper dpkg-dev fakeroot rpm ;;
	bench) echo scotch time gmsh gmsh-doc metis ;;
	check) for g in build test slurm fuzz package; do group $g; done ;;
	*) echo "install-deps: unknown group '$1' (build, test, slurm, fuzz, package, bench, check)" >&2
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
