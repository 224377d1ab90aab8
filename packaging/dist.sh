#!/bin/sh
# The source tarball, topoplace-VERSION.tar.gz in $BUILD: the tracked files
# and the new ones git does not ignore (without git: the tree minus build
# outputs), under topoplace-VERSION/.  rpmbuild -ta takes it as it is.
set -e
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
mkdir -p "$B"
out=$B/topoplace-$V.tar.gz
cd "$REPO"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read --transform "s|^|topoplace-$V/|" \
			--owner=0 --group=0 --sort=name -czf "$out" 2>/dev/null
else
	tar --exclude='./build*' --transform "s|^\./|topoplace-$V/|" --owner=0 --group=0 \
		-czf "$out" .
fi
echo "$out"
