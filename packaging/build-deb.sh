#!/bin/sh
# Build the Debian packages (debian/) from a copy of this source tree, so
# that the checkout stays clean; the .deb files land in $BUILD/deb.
#   BUILD=build DEB_BUILD_OPTIONS=nocheck sh packaging/build-deb.sh
set -e
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
DV=$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)
if [ "$V" != "$DV" ]; then
	echo "build-deb: debian/changelog says $DV, version.h says $V (add a changelog entry)" >&2
	exit 1
fi
out=$B/deb
src=$out/src/topoplace-$V
rm -rf "$out"
mkdir -p "$src"
# The source tarball of make dist, unpacked.
tarball=$(BUILD=$B sh "$REPO/packaging/dist.sh")
tar -xzf "$tarball" -C "$out/src"
cd "$src"
jobs=$(nproc 2>/dev/null || echo 1)
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$jobs"
dpkg-buildpackage -b -us -uc >"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
mv "$out"/src/*.deb "$out/"
ls "$out"/*.deb
