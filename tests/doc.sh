#!/bin/sh
# Documentation tests: the man pages name everything the programs accept,
# and they format without warnings.
#
#   sh tests/doc.sh [path/to/topoplace]      (make doc-tests)
#
# Checks:
#   - every long option of `topoplace help map|eval|check-config|node-info`
#     and every command of `topoplace --help` is in doc/topoplace.1;
#   - every option of the plugin (the spank_option table of
#     plugin/dispatch.c) and every plugstack argument (the KEY("...")
#     checks of plugin/site.c) is in doc/topoplace-spank.8;
#   - every key topoplace.conf accepts (core/src/conf/*.c, with the
#     keys each kind of network declares in its kind_NAME.c) is in
#     doc/topoplace.conf.5 as "Key=";
#   - every policy (core/src/util/names.c POLICIES) is in all three pages;
#   - each page formats without a warning: groff -ww, and mandoc -Tlint when
#     mandoc is installed; its .TH version is the one in version.h;
#   - every relative link of README.md and doc/*.md leads to a file, and
#     README.md stays short.
# The pages are compared as rendered text (one very long line per
# paragraph, no hyphenation), so roff escapes do not matter.
# Prints one line per check, then "doc: N passed, M failed"; exit 1 on failure.
REPO=$(cd "$(dirname "$0")/.." && pwd)
CLI=${1:-$REPO/build/topoplace}
DOC=$REPO/doc
README_MAX_LINES=200
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-doc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }

if ! command -v groff >/dev/null 2>&1; then
	no "groff is installed (Debian: groff-base; contrib/install-deps.sh doc)"
	echo "doc: $pass passed, $fail failed"
	exit 1
fi
if [ ! -x "$CLI" ]; then
	no "$CLI is built (make all)"
	echo "doc: $pass passed, $fail failed"
	exit 1
fi

# render PAGE: the page as plain text, without line breaks inside a
# paragraph or hyphenation.
render() {
	groff -t -man -Tascii -P-cbou -rLL=2000n -rcR=0 "$1" 2>/dev/null | tr -s ' '
}
for p in topoplace.1 topoplace-spank.8 topoplace.conf.5; do
	render "$DOC/$p" > "$tmp/$p.txt"
done

# has FILE WORD: WORD appears in FILE, not as part of a longer option/key.
has() {
	grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|$)" "$1"
}
# has_key FILE KEY=: KEY= appears (not as the tail of a longer key).
has_key() {
	grep -qE -- "(^|[^A-Za-z0-9_])$2" "$1"
}

# check_all WHAT PAGE CHECKER MIN ITEMS...: every item in the page.
check_all() {
	what=$1 page=$2 checker=$3 min=$4
	shift 4
	missing=""
	for item in "$@"; do
		$checker "$tmp/$page.txt" "$item" || missing="$missing $item"
	done
	if [ "$#" -lt "$min" ]; then
		no "$what: found only $# in the source (expected at least $min): did the source change shape?" "found: $*"
	elif [ -z "$missing" ]; then
		ok "$what: all $# in doc/$page"
	else
		no "$what: missing from doc/$page:$missing"
	fi
}

# ---- topoplace(1): the command's options and commands
opts=$(for c in map eval check-config node-info; do "$CLI" help "$c"; done |
	grep -E -- '^ {2,6}(-[a-zA-Z], )?--[a-z]' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
# shellcheck disable=SC2086
check_all "topoplace help map/eval/check-config/node-info long options" \
	topoplace.1 has 20 $opts
cmds=$("$CLI" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
# shellcheck disable=SC2086
check_all "topoplace --help commands" topoplace.1 has 5 $cmds

# ---- topoplace-spank(8): the plugin's options and plugstack arguments
spank=$(sed -n '/struct spank_option opts\[\]/,/SPANK_OPTIONS_TABLE_END/p' \
	"$REPO/plugin/dispatch.c" | sed -n 's/^[[:space:]]*{ *"\([a-z][a-z-]*\)".*/--\1/p')
# shellcheck disable=SC2086
check_all "plugin options (dispatch.c spank_option table)" topoplace-spank.8 has 6 $spank
args=$(grep -oE 'KEY\("[a-z_]+"\)' "$REPO/plugin/site.c" | sed 's/KEY("\(.*\)")/\1=/')
# shellcheck disable=SC2086
check_all "plugstack arguments (site.c)" topoplace-spank.8 has_key 6 $args

# ---- every policy tp_policy_parse accepts (the POLICIES table of
# core/src/util/names.c) in the three pages that list them
pols=$(sed -n '/POLICIES\[\] = {/,/^};/p' "$REPO/core/src/util/names.c" |
	grep -oE '\{ *"[a-z]+", TP_POLICY_' | sed 's/{ *"\([a-z]*\)".*/\1/')
for page in topoplace.1 topoplace-spank.8 topoplace.conf.5; do
	# shellcheck disable=SC2086
	check_all "policies (names.c POLICIES)" $page has 10 $pols
done

# ---- topoplace.conf(5): every key the reader accepts.  conf/ compares a
# token's key with strcasecmp(<key>, "Name"); a table of { "Name", ... }
# entries are found too: each kind of network declares its own keys in a
# struct tp__conf_key table of its core/src/conf/kind_NAME.c (conf_kind.h).
keys=$( { grep -hoE 'strcasecmp\(([a-z]+|[a-z]+->key|[a-z]+(->|\.)toks\[[a-z]+\]\.key|toks\[[a-z]+\]\.key), "[A-Za-z]+"\)' \
		"$REPO"/core/src/conf/*.c | sed 's/.*"\([A-Za-z]*\)")$/\1/'
	  grep -hoE '^[[:space:]]*\{ *"[A-Z][A-Za-z]+"' "$REPO"/core/src/conf/*.c |
		sed 's/.*"\([A-Za-z]*\)"$/\1/'
	} | sort -u | sed 's/$/=/')
# shellcheck disable=SC2086
check_all "topoplace.conf keys (conf/*.c, with the kinds)" topoplace.conf.5 has_key 20 $keys

# ---- the pages format cleanly.  groff runs with -rcR=0 (paginated): with
# continuous rendering groff 1.22.4's tbl warns "table text block will not
# fit on one page" about tables without text blocks.
V=$(sed -n 's/^#define TOPOPLACE_VERSION "\(.*\)"/\1/p' "$REPO/core/include/topoplace/version.h")
have_mandoc=$(command -v mandoc 2>/dev/null)
for p in topoplace.1 topoplace-spank.8 topoplace.conf.5; do
	groff -t -man -Tutf8 -ww -rcR=0 "$DOC/$p" >/dev/null 2>"$tmp/groff.err"
	if [ ! -s "$tmp/groff.err" ]; then
		ok "$p: groff -ww: no warnings"
	else
		no "$p: groff -ww warns" "$(head -5 "$tmp/groff.err")"
	fi
	if [ -n "$have_mandoc" ]; then
		if mandoc -Tlint -W warning "$DOC/$p" >"$tmp/mandoc.err" 2>&1; then
			ok "$p: mandoc -Tlint: no warnings"
		else
			no "$p: mandoc -Tlint warns" "$(head -5 "$tmp/mandoc.err")"
		fi
	fi
	th=$(sed -n 's/^\.TH .*"topoplace \([0-9][0-9.]*\)".*/\1/p' "$DOC/$p")
	if [ -n "$V" ] && [ "$th" = "$V" ]; then
		ok "$p: .TH says topoplace $V"
	else
		no "$p: .TH version [$th] is not version.h's [$V]"
	fi
done
[ -n "$have_mandoc" ] || echo "note: mandoc not installed: mandoc -Tlint skipped (contrib/install-deps.sh doc)"

# ---- Markdown: relative links lead somewhere; README stays short
bad=""
for md in "$REPO/README.md" "$DOC"/*.md; do
	[ -e "$md" ] || continue
	dir=$(dirname "$md")
	for target in $(grep -oE '\]\([^)#][^)]*\)' "$md" | sed 's/^](\(.*\))$/\1/; s/#.*//'); do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		[ -e "$dir/$target" ] || bad="$bad ${md#"$REPO"/}->$target"
	done
done
if [ -z "$bad" ]; then
	ok "relative links of README.md and doc/*.md lead to files"
else
	no "broken relative links:$bad"
fi
n=$(wc -l < "$REPO/README.md")
if [ "$n" -le "$README_MAX_LINES" ]; then
	ok "README.md is $n lines (at most $README_MAX_LINES; details go to doc/)"
else
	no "README.md is $n lines, more than $README_MAX_LINES: move details to doc/"
fi

echo "doc: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
