#!/bin/sh
# The library's ABI against the committed record of it, as hwloc checks its
# own:
#   core/libtopoplace.symbols  every symbol libtopoplace.so exports
#                              (nm -D --defined-only), sorted
#   core/libtopoplace.layout   size, alignment and field offsets of every
#                              public structure a caller allocates or passes
#                              by value, and the values of the public codes
#                              (tests/abi/layout.c prints them)
# usage: tests/abi/check.sh [--update] [BUILD]   (prints "abi: N passed, M failed")
#
# When this fails, the ABI changed.  If the change is meant:
#   - make abi-update rewrites both files from the build; commit them with
#     the change, so that the review sees the ABI change as a diff;
#   - a symbol removed or renamed, a signature changed, a field moved,
#     resized or removed, a structure that grew (callers allocate them: an
#     old caller's copy is too small), a code or flag that changed value:
#     the change is incompatible, and SONAME (Makefile; the Debian package
#     libtopoplace1, debian/*.install, packaging/rpm/topoplace.spec) must
#     take the next number, so that old programs are not run against it;
#   - a symbol or a code added: compatible, the SONAME stays.
# A new public structure is added to tests/abi/layout.c, a new field to its
# structure's list there (the check below finds structures it lacks).
update=
[ "$1" = --update ] && { update=1; shift; }
BUILD=${1:-build}
CC=${CC:-cc}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SYMBOLS=$REPO/core/libtopoplace.symbols
LAYOUT=$REPO/core/libtopoplace.layout
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# The exported symbols; a sanitizer build adds its own __-names.
nm -D --defined-only "$BUILD/libtopoplace.so" | awk '{ print $3 }' |
	grep -v '^_init$\|^_fini$\|^__' | LC_ALL=C sort >"$tmp/symbols" || exit 1
# The layout, printed by a program built against the public headers only.
"$CC" -std=c11 -Wall -Wextra -I"$REPO/core/include" -o "$tmp/layout" \
	"$REPO/tests/abi/layout.c" 2>"$tmp/cc.log" &&
	"$tmp/layout" >"$tmp/layout.out" || { cat "$tmp/cc.log"; exit 1; }

header() {
	echo "# $1 (tests/abi/check.sh; \`make abi-update\` rewrites it)."
	echo "# Read tests/abi/check.sh before changing it: an incompatible"
	echo "# change needs a new SONAME."
}
if [ -n "$update" ]; then
	{ header "Every symbol libtopoplace.so exports"; cat "$tmp/symbols"; } >"$SYMBOLS"
	if grep -q '^skip' "$tmp/layout.out"; then
		echo "abi-update: $(cat "$tmp/layout.out"); $LAYOUT not rewritten" >&2
	else
		{ header "The layout of the public structures and the codes' values"
		  cat "$tmp/layout.out"; } >"$LAYOUT"
	fi
	echo "abi-update: wrote $SYMBOLS ($(wc -l <"$tmp/symbols") symbols) and $LAYOUT"
	exit 0
fi

grep -v '^#' "$SYMBOLS" >"$tmp/symbols.want"
if diff -u "$tmp/symbols.want" "$tmp/symbols" >"$tmp/symbols.diff"; then
	ok "libtopoplace.so exports the $(wc -l <"$tmp/symbols") symbols of core/libtopoplace.symbols"
else
	no "exported symbols differ from core/libtopoplace.symbols (- recorded, + built)" \
		"$(grep '^[-+][^-+]' "$tmp/symbols.diff" | head -20 | paste -sd' ')"
fi

if grep -q '^skip' "$tmp/layout.out"; then
	ok "structure layout: $(cat "$tmp/layout.out")"
elif grep -v '^#' "$LAYOUT" | diff -u - "$tmp/layout.out" >"$tmp/layout.diff"; then
	ok "structure layout and codes as core/libtopoplace.layout"
else
	no "structure layout or codes differ from core/libtopoplace.layout (- recorded, + built)" \
		"$(grep '^[-+][^-+]' "$tmp/layout.diff" | head -20 | paste -sd' ')"
fi

# Every structure the public headers define is one layout.c prints.
sed -n 's/^typedef struct \([a-z_0-9]*\) {.*/\1/p' "$REPO"/core/include/topoplace/*.h |
	LC_ALL=C sort -u >"$tmp/structs.public"
sed -n 's/^[	 ]*STRUCT(\([a-z_0-9]*\));.*/\1/p' "$REPO/tests/abi/layout.c" |
	LC_ALL=C sort -u >"$tmp/structs.listed"
missing=$(LC_ALL=C comm -23 "$tmp/structs.public" "$tmp/structs.listed")
if [ -z "$missing" ]; then
	ok "tests/abi/layout.c lists every public structure"
else
	no "tests/abi/layout.c lists every public structure" "missing: $(echo $missing)"
fi

echo "abi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
