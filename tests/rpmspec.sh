#!/bin/sh
# The RPM spec (packaging/rpm/topoplace.spec), checked on Debian with Debian's
# rpm: it parses, its version is version.h's, a source RPM builds from make
# dist's tarball, and a binary build (dependencies not checked: Debian has
# no RPM database of them) installs exactly the files its %files lists name.
# usage: BUILD=build sh tests/rpmspec.sh       prints "rpm: N passed, M failed"
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
SPEC=$REPO/packaging/rpm/topoplace.spec
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }
finish() { echo "rpm: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

if ! command -v rpmbuild >/dev/null || ! command -v rpmspec >/dev/null; then
	msg="rpm is not installed (sh contrib/install-deps.sh package)"
	[ -n "$TOPOPLACE_REQUIRE_SLURM_TESTS" ] && { no rpm "$msg"; finish; }
	echo "rpm: SKIPPED: $msg"
	exit 0
fi
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-rpm.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mm=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null | sed -E 's/^([0-9]+:)?([0-9]+\.[0-9]+).*/\2/')
mm=${mm:-22.05}
# rpmspec and rpmbuild with the build tree in $tmp and the Slurm release
spec() { rpmspec --define "_topdir $tmp/top" --define "slurm_mm $mm" "$@"; }
build() { rpmbuild --define "_topdir $tmp/top" --define "slurm_mm $mm" "$@"; }

if spec --parse "$SPEC" >"$tmp/parsed" 2>"$tmp/err"; then
	ok "rpmspec --parse"
else
	no "rpmspec --parse" "$(head -3 "$tmp/err")"
	finish
fi
sv=$(spec -q --srpm --qf '%{VERSION}' "$SPEC" 2>/dev/null)
if [ "$sv" = "$V" ]; then ok "spec Version $sv is version.h's"; else no "spec Version" "$sv, version.h says $V"; fi
names=$(spec -q --qf '%{NAME}\n' "$SPEC" 2>/dev/null | sort | paste -sd' ')
if [ "$names" = "slurm-topoplace topoplace topoplace-devel topoplace-libs" ]; then
	ok "packages: $names"
else
	no "package names" "$names"
fi
req=$(spec -q --requires -P slurm-topoplace "$SPEC" 2>/dev/null | paste -sd' ')
case "$req" in
*"slurm >= $mm"*"slurm < $mm.999"*) ok "slurm-topoplace requires Slurm $mm only" ;;
*) no "slurm-topoplace requires" "$req" ;;
esac

tarball=$B/topoplace-$V.tar.gz
[ -f "$tarball" ] || BUILD=$B sh "$REPO/packaging/dist.sh" >/dev/null
mkdir -p "$tmp/top/SOURCES"
cp "$tarball" "$tmp/top/SOURCES/"
if build --nodeps -bs "$SPEC" >"$tmp/bs.log" 2>&1 &&
	ls "$tmp"/top/SRPMS/topoplace-"$V"-1*.src.rpm >/dev/null 2>&1; then
	ok "rpmbuild -bs: $(basename "$(ls "$tmp"/top/SRPMS/*.src.rpm)")"
else
	no "rpmbuild -bs" "$(tail -3 "$tmp/bs.log")"
fi
# A binary build: %build, %install and the %files lists (no %check: make
# check ran the tests; no debuginfo: Debian's rpm has no such macros).
if build --nodeps --nocheck --define 'debug_package %{nil}' \
	-bb "$SPEC" >"$tmp/bb.log" 2>&1; then
	n=$(ls "$tmp"/top/RPMS/*/*.rpm 2>/dev/null | wc -l)
	if [ "$n" -eq 4 ]; then ok "rpmbuild -bb: 4 binary packages"; else no "rpmbuild -bb" "$n packages"; fi
	p=$(ls "$tmp"/top/RPMS/*/slurm-topoplace-*.rpm 2>/dev/null)
	if rpm -qlp "$p" 2>/dev/null | grep -q '/topoplace/topoplace\.so$' &&
		rpm -qlp "$p" 2>/dev/null | grep -q '/etc/slurm/plugstack.conf.d/topoplace.conf$' &&
		rpm -qp --configfiles "$p" 2>/dev/null | grep -q 'plugstack.conf.d/topoplace.conf'; then
		ok "slurm-topoplace.rpm: the plugin and its plugstack snippet (a config file)"
	else
		no "slurm-topoplace.rpm contents" "$(rpm -qlp "$p" 2>&1 | head -5)"
	fi
else
	no "rpmbuild -bb" "$(grep -E 'error|Error' "$tmp/bb.log" | head -5)"
fi
finish
