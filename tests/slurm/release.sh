#!/bin/bash
# topoplace — Slurm source releases for the tests, built once and cached.
#
#   release.sh list                 the releases found: VERSION TARBALL, one a line
#   release.sh tarball VERSION      the tarball's path
#   release.sh headers VERSION      configure only; prints a prefix whose
#                                   include/slurm/ has the release's headers
#   release.sh build VERSION        configure, make, make install of what the
#                                   cluster suite runs (below); prints the
#                                   prefix (bin/, sbin/, lib/slurm/, include/)
#   release.sh source VERSION       the unpacked source tree (src/common/
#                                   slurm_opt.c: srun's option table)
#
# The tarballs are SchedMD's releases, unmodified, in TP_SLURM_TARBALLS
# (default: ../shared/slurm beside the checkout; its SHA256SUMS is checked).
# Each build is cached under TP_SLURM_CACHE (default /var/cache/topoplace-
# slurm), in a folder named by the release and its tarball's checksum, so a
# changed tarball is built again and two checkouts share one build.  A
# finished build is marked by a file written last: a killed build is redone.
#
# A build is not the whole of Slurm: recipe "lite2" makes and installs the
# daemons (slurmctld, slurmd, slurmstepd), the commands the tests run
# (srun, sbatch, salloc, scontrol, sinfo, squeue, scancel), the libraries,
# headers and plugins, leaving out what no test loads: slurmdbd and its
# storage, slurmrestd, the accounting commands, the burst buffer, job
# submit, CLI filter and node feature plugins, the data_parser plugins of
# earlier API versions (topology.yaml is read through the current one),
# the man pages and the testsuite; compiled at -O0 without debug symbols,
# shared objects only.
# Measured on 26.05.3: 157 s of CPU (a full build: 455 s), 84 MB installed
# (520 MB).
# Its cache folder ends in "-lite2"; a full build of the same tarball
# (the folder without a suffix, made by an earlier recipe) is a superset
# and is used when it is there.
#
# Exit status 3, with one line on stderr, when no tarball is there: the
# caller skips (a machine without ../shared) or, under
# TOPOPLACE_REQUIRE_SLURM_TESTS=1, fails.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TARBALLS=${TP_SLURM_TARBALLS:-$REPO/../shared/slurm}
CACHE=${TP_SLURM_CACHE:-/var/cache/topoplace-slurm}
JOBS=${TP_SLURM_JOBS:-$(nproc 2>/dev/null || echo 2)}

die() { echo "release.sh: $*" >&2; exit 1; }

no_tarballs() {
	echo "release.sh: no Slurm source release in $TARBALLS; put slurm-X.Y.Z.tar.xz (or .tar.bz2) there, or set TP_SLURM_TARBALLS=DIR" >&2
	exit 3
}

tarball() {  # tarball VERSION -> path
	local f
	for f in "$TARBALLS/slurm-$1.tar.xz" "$TARBALLS/slurm-$1.tar.bz2" "$TARBALLS/slurm-$1.tar.gz"; do
		[ -r "$f" ] && { echo "$f"; return 0; }
	done
	no_tarballs
}

checksum() {  # checksum TARBALL -> sha256, checked against SHA256SUMS when listed
	local sum want
	sum=$(sha256sum "$1" | awk '{print $1}')
	if [ -r "$TARBALLS/SHA256SUMS" ]; then
		want=$(awk -v f="$(basename "$1")" '$2 == f || $2 == "*" f {print $1}' "$TARBALLS/SHA256SUMS")
		[ -z "$want" ] || [ "$want" = "$sum" ] ||
			die "$1: checksum $sum, SHA256SUMS says $want"
	fi
	echo "$sum"
}

# The build recipe's version, in the cache folder's name: a change to
# configure_in or prune_build gets a new one, so that a build made the old
# way is never taken for a new one.
RECIPE=lite2

key() {  # key VERSION -> the cache folder's name (without the recipe)
	local t; t=$(tarball "$1")
	echo "$1-$(checksum "$t" | cut -c1-16)"
}

unpack() {  # unpack VERSION DEST -> DEST/slurm-VERSION
	local t; t=$(tarball "$1")
	mkdir -p "$2"
	[ -f "$2/slurm-$1/configure" ] || tar -C "$2" -xf "$t"
	[ -f "$2/slurm-$1/configure" ] || die "$t: no slurm-$1/configure inside"
}

configure_in() {  # configure_in SRC PREFIX
	local pmix=""
	for p in /usr/lib/x86_64-linux-gnu/pmix2 /usr/lib/aarch64-linux-gnu/pmix2 /usr/lib/*/pmix2; do
		[ -d "$p" ] && { pmix="--with-pmix=$p"; break; }
	done
	# shellcheck disable=SC2086  # $3: more flags, word-split on purpose
	(cd "$1" && ./configure --prefix="$2" --sysconfdir="$2/etc" $pmix \
		--disable-slurmrestd --disable-sview --disable-x11 --without-rpath ${3:-} \
		> config.out 2>&1) || { tail -20 "$1/config.out" >&2; die "configure failed in $1"; }
}

# One build of a kind at a time per cache folder (two checkouts, one host).
locked() {  # locked NAME CMD...
	mkdir -p "$CACHE"
	exec 8>"$CACHE/.$1.lock"
	flock 8
	shift
	"$@"
}

do_headers() {
	local k d
	k=$(key "$1"); d=$CACHE/$k-headers
	if [ ! -f "$d/.done" ]; then
		rm -rf "$d"; mkdir -p "$d/src"
		unpack "$1" "$d/src"
		configure_in "$d/src/slurm-$1" "$d"
		mkdir -p "$d/include/slurm"
		cp "$d/src/slurm-$1"/slurm/*.h "$d/include/slurm/"
		[ -f "$d/include/slurm/slurm_version.h" ] || die "$1: configure made no slurm_version.h"
		touch "$d/.done"
	fi
	echo "$d"
}

# prune_build SRC: after configure, narrow the generated Makefiles' SUBDIRS
# to what the tests run.  A later ":=" in a Makefile overrides automake's
# "=", and the recursive targets (all, install, clean) read SUBDIRS when
# they run, so every one of them sees the narrowed list.
prune_build() {
	local src=$1 cur
	narrow() {  # narrow DIR FUNC LIST: SUBDIRS := $(FUNC LIST,$(SUBDIRS))
		[ -f "$src/$1/Makefile" ] || return 0
		printf '\n# release.sh %s: only what the tests run\nSUBDIRS := $(%s %s,$(SUBDIRS))\n' \
			"$RECIPE" "$2" "$3" >> "$src/$1/Makefile"
	}
	narrow . filter-out "testsuite doc contribs"
	narrow src filter "api bcast common conmgr curl interfaces plugins stepmgr \
		slurmctld slurmd srun sbatch salloc scontrol sinfo squeue scancel"
	narrow src/plugins filter-out "burst_buffer cli_filter job_submit node_features site_factor"
	narrow src/plugins/accounting_storage filter-out "mysql slurmdbd"
	narrow src/plugins/jobcomp filter-out "elasticsearch kafka lua mysql script"
	# the data_parser of this release's API (SLURM_DATA_PARSER_VERSION:
	# vAGE.REVISION.CURRENT); the others serve older clients of slurmrestd
	cur=$(awk '$1 == "API_AGE:" {a = $2} $1 == "API_REVISION:" {r = $2}
		$1 == "API_CURRENT:" {c = $2} END {printf "v%s.%s.%s", a, r, c}' "$src/META")
	if [ -d "$src/src/plugins/data_parser/$cur" ]; then
		narrow src/plugins/data_parser filter "$cur"
	fi
}

do_build() {
	local k d
	k=$(key "$1")
	# a full build by the recipe before (no suffix) holds all this one does
	if [ -f "$CACHE/$k/.done" ] && [ -x "$CACHE/$k/sbin/slurmctld" ]; then
		echo "$CACHE/$k"; return 0
	fi
	d=$CACHE/$k-$RECIPE
	if [ ! -f "$d/.done" ]; then
		sh "$REPO/contrib/install-deps.sh" slurm-src >&2 ||
			die "the packages a Slurm build needs are missing (contrib/install-deps.sh slurm-src)"
		rm -rf "$d"; mkdir -p "$d/src"
		unpack "$1" "$d/src"
		echo "release.sh: building Slurm $1 into $d (about 6 minutes on 2 cores)" >&2
		# -O0 without debug symbols: the tests need working daemons, not
		# fast or debuggable ones, and -O1 -ggdb3 takes 4 times as long a
		# file; no static archives (libtool compiles every file twice)
		configure_in "$d/src/slurm-$1" "$d" "--disable-debug --disable-optimizations --disable-static CFLAGS=-O0"
		prune_build "$d/src/slurm-$1"
		(cd "$d/src/slurm-$1" && make -j"$JOBS" > make.out 2>&1 && make install > install.out 2>&1) ||
			{ tail -30 "$d/src/slurm-$1/make.out" >&2; die "Slurm $1 did not build (see $d/src/slurm-$1/make.out)"; }
		# the build tree is 1 GB of objects; keep the sources for reading
		(cd "$d/src/slurm-$1" && make clean > /dev/null 2>&1) || true
		touch "$d/.done"
	fi
	echo "$d"
}

do_source() {
	local k d
	k=$(key "$1"); d=$CACHE/$k-source
	if [ ! -f "$d/.done" ]; then
		rm -rf "$d"; unpack "$1" "$d"; touch "$d/.done"
	fi
	echo "$d/slurm-$1"
}

case "${1:-}" in
list)
	found=0
	for f in "$TARBALLS"/slurm-*.tar.*; do
		[ -r "$f" ] || continue
		v=$(basename "$f"); v=${v#slurm-}; v=${v%.tar.*}
		echo "$v $f"; found=1
	done | sort -V
	ls "$TARBALLS"/slurm-*.tar.* > /dev/null 2>&1 || no_tarballs ;;
tarball) tarball "${2:?VERSION}" ;;
headers) tarball "${2:?VERSION}" > /dev/null; locked "headers-$2" do_headers "$2" ;;
build) tarball "${2:?VERSION}" > /dev/null; locked "build-$2" do_build "$2" ;;
source) tarball "${2:?VERSION}" > /dev/null; locked "source-$2" do_source "$2" ;;
*) echo "usage: $0 list | tarball V | headers V | build V | source V" >&2; exit 2 ;;
esac
