#!/bin/bash
# topoplace — the plugin's table of srun's options (plugin/srun_args.c)
# against the srun of every Slurm release that tests/slurm/release.sh finds.
#
#   sh tests/slurm/options.sh                 every release
#   sh tests/slurm/options.sh --list FILE|V   a release's srun options, one a
#                                             line: NAME ARG LETTER (ARG:
#                                             required, optional or no;
#                                             LETTER: - for none); FILE is a
#                                             slurm_opt.c, V a release
#
# srun's options are the entries of src/common/slurm_opt.c's common_options[]
# that srun takes: slurm_option_table_create() adds those with a set_func or
# a set_func_srun (and a name) to srun's getopt_long table, and a letter to
# its short options.  For each release: that list, from its source
# (release.sh source); then srun_args.c itself, compiled against the
# release's headers (release.sh headers: configure only, about a minute the
# first time), says what the plugin built for that release takes.  The two
# must be the same options with the same argument (required, optional,
# none) and short letter; the plugin's own --topo-* options must be
# dispatch.c's.  Then, with the release's options (and the plugin's) in
# glibc's getopt_long, every abbreviation of every option and every short
# letter must resolve in the plugin's scan as it does in srun: the same
# option, or none (unknown, ambiguous), taking the next word or not.  Last,
# a few command lines with options that come and go between releases.
#
# 22.05 has no source here: the table was copied from 22.05.8's slurm_opt.c.
# Against the default headers (Debian 12's libslurm-dev, 22.05.8) the table
# must still have those 131 options, and pass the checks that need no source.
#
# One line per release, then "options: N passed, M failed"; exit 1 on
# failure.  Without any tarball: one line, exit 0 (exit 1 under
# TOPOPLACE_REQUIRE_SLURM_TESTS=1, as in CI).
#
# Environment: CC, and release.sh's TP_SLURM_TARBALLS, TP_SLURM_CACHE.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CC=${CC:-cc}
# srun's options in 22.05.8's slurm_opt.c (SchedMD's tag slurm-22-05-8-1)
COUNT_2205=131

# srun's options in a slurm_opt.c, sorted: NAME ARG LETTER VAL.  Exits 1,
# with a line on stderr, on anything it does not understand, rather than
# miss an option.
srun_options() {
	awk '
function fail(msg) { print "options.sh: " FILENAME ":" FNR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
/^static (const )?slurm_cli_opt_t slurm_opt_[A-Za-z0-9_]+ = \{/ {
	var = $0; sub(/^static (const )?slurm_cli_opt_t /, "", var); sub(/ .*/, "", var)
	instruct = 1; skip = 0; name = "?"; arg = ""; val = ""; srun = 0
	next
}
# a build option inside an entry (x11: WITH_SLURM_X11): taken as on
instruct && /^#[ \t]*if/ { next }
instruct && /^#[ \t]*(else|elif)/ { skip = 1; next }
instruct && /^#[ \t]*endif/ { skip = 0; next }
instruct && /^#/ { fail(var ": preprocessor line") }
instruct && skip { next }
instruct && /^[ \t]*\.name[ \t]*=/ {
	if ($0 ~ /=[ \t]*NULL/) name = ""
	else if (match($0, /"[^"]*"/)) name = substr($0, RSTART + 1, RLENGTH - 2)
	else fail(var ": name")
	next
}
instruct && /^[ \t]*\.has_arg[ \t]*=/ {
	if ($0 ~ /required_argument/) arg = "required"
	else if ($0 ~ /optional_argument/) arg = "optional"
	else if ($0 ~ /no_argument/) arg = "no"
	else fail(var ": has_arg")
	next
}
instruct && /^[ \t]*\.val[ \t]*=/ {
	v = $0; sub(/^[ \t]*\.val[ \t]*=[ \t]*/, "", v); sub(/[ \t]*,.*/, "", v); val = v
	next
}
instruct && /^[ \t]*\.set_func(_srun)?[ \t]*=/ { srun = 1; next }
instruct && /^\};/ {
	instruct = 0
	if (name == "?" || arg == "" || val == "") fail(var ": no name, has_arg or val")
	nm[var] = name; ar[var] = arg; vl[var] = val; sr[var] = srun
	next
}
/common_options\[\][ \t]*=/ { inlist = 1; next }
inlist && /^[ \t]*&slurm_opt_[A-Za-z0-9_]+[ \t]*,/ {
	v = $0; sub(/^[ \t]*&/, "", v); sub(/[ \t]*,.*/, "", v)
	if (!(v in nm)) fail(v ": listed, not defined")
	if (nm[v] == "" || !sr[v]) next
	if (nm[v] !~ /^[a-z0-9][a-z0-9_-]*$/) fail(v ": option name " nm[v])
	l = vl[v] ~ /^\047.\047$/ ? substr(vl[v], 2, 1) : "-"
	print nm[v], ar[v], l, vl[v]; n++
	next
}
inlist && /^[ \t]*NULL/ { inlist = 0; done = 1; next }
inlist && !/^[ \t]*(\/\*.*\*\/)?[ \t]*$/ { fail("in common_options[]: " $0) }
END {
	if (bad) exit 1
	if (!done || n < 50) { print "options.sh: " FILENAME ": no common_options[] table" > "/dev/stderr"; exit 1 }
}' "$1" | sort
}

# The plugin's own options, as dispatch.c gives them to SPANK: NAME ARG.
topo_options() {
	tr '\n\t' '  ' < "$REPO/plugin/dispatch.c" |
		grep -o '{ *"topo-[a-z-]*"[^}]*}' |
		sed -E 's/^\{ *"([^"]+)".*,[[:space:]]*([012]),[[:space:]]*TPK_OPT_.*/\1 \2/' |
		awk 'NF == 2 && $2 ~ /^[012]$/ { print $1, $2 == 0 ? "no" : $2 == 1 ? "required" : "optional", "-" }' |
		sort
}

if [ "${1:-}" = --list ]; then
	f=${2:?usage: options.sh --list FILE|VERSION}
	[ -f "$f" ] || f=$(bash "$HERE/release.sh" source "$f")/src/common/slurm_opt.c || exit 1
	srun_options "$f" | awk '{ print $1, $2, $3 }'
	exit "${PIPESTATUS[0]}"
fi

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do [ -z "$l" ] || echo "$l" | sed 's/^/     /'; done; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-options.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

bash "$HERE/release.sh" list >"$tmp/list" 2>"$tmp/err"
rc=$?
if [ "$rc" = 3 ]; then
	echo "options: skipped: no Slurm source release; set TP_SLURM_TARBALLS=DIR, a folder with slurm-X.Y.Z.tar.xz"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "options: TOPOPLACE_REQUIRE_SLURM_TESTS=1: skipping counts as a failure"
		echo "options: 0 passed, 1 failed"; exit 1
	fi
	exit 0
elif [ "$rc" != 0 ] || [ ! -s "$tmp/list" ]; then
	cat "$tmp/err"
	echo "options: release.sh list failed (exit $rc)"
	echo "options: 0 passed, 1 failed"
	exit 1
fi

topo_options >"$tmp/topo"
[ "$(wc -l <"$tmp/topo")" -ge 1 ] || {
	echo "options: no --topo-* option found in plugin/dispatch.c"
	echo "options: 0 passed, 1 failed"
	exit 1
}

# The plugin's view: srun_args.c itself, against one release's headers.
cat >"$tmp/check.c" <<'EOF'
#include "srun_args.c"

static const char *const arg_name[] = { "no", "required", "optional" };

/* the table, as the plugin built for this release has it */
static int table(void)
{
	const unsigned rel = SLURM_VERSION_NUMBER;
	printf("release %u.%02u.%u\n", rel >> 16, (rel >> 8) & 255, rel & 255);
	for (size_t i = 0; i < N_SRUN_OPTS; i++)
		if (in_release(&srun_opts[i]))
			printf("%s %s %c\n", srun_opts[i].name,
			       arg_name[srun_opts[i].has_arg],
			       srun_opts[i].letter ? srun_opts[i].letter : '-');
	return 0;
}

static struct option longopts[512];
static char shorts[256] = "+";
static int n_long, checked, wrong;

static void mismatch(const char *what, const char *getopt_says,
		     const char *plugin_says)
{
	if (wrong++ < 3)
		printf("%s: srun's getopt_long %s, the plugin %s\n", what,
		       getopt_says, plugin_says);
}

/* The release's options (NAME ARG LETTER VAL lines) as srun's getopt
 * table, then the plugin's --topo-* as SPANK adds them. */
static int load(const char *path)
{
	FILE *f = fopen(path, "r");
	char name[128], arg[16], letter[8], val[128];
	char vals[512][128];
	if (!f)
		return -1;
	while (n_long < 500 &&
	       fscanf(f, "%127s %15s %7s %127s", name, arg, letter, val) == 4) {
		struct option *o = &longopts[n_long];
		o->name = strdup(name);
		o->has_arg = !strcmp(arg, "required") ? required_argument
			     : !strcmp(arg, "optional") ? optional_argument
			     : no_argument;
		/* getopt_long takes a prefix shared only by options of one
		 * val (aliases: cpu-bind, cpu_bind) as that option */
		int k = 0;
		while (k < n_long && strcmp(vals[k], val))
			k++;
		snprintf(vals[n_long], sizeof vals[0], "%s", val);
		o->val = 1000 + k;
		if (strcmp(letter, "-")) {
			size_t n = strlen(shorts);
			snprintf(shorts + n, sizeof shorts - n, "%s%s", letter,
				 o->has_arg == required_argument ? ":"
				 : o->has_arg == optional_argument ? "::" : "");
		}
		n_long++;
	}
	fclose(f);
	for (size_t i = 0; i < N_SRUN_OPTS && n_long < 510; i++)
		if (!strncmp(srun_opts[i].name, "topo-", 5))
			longopts[n_long++] = (struct option){
				srun_opts[i].name, srun_opts[i].has_arg, NULL,
				2000 + (int)i };
	return n_long;
}

/* Every abbreviation of every option, and every short letter: what srun's
 * getopt_long makes of "--abbrev word" against what the scan makes of it. */
static int resolve(const char *path)
{
	if (load(path) < 1)
		return 2;
	char word[] = "word", buf[160], said[200], ours[200];
	for (int i = 0; i < n_long; i++) {
		size_t full = strlen(longopts[i].name);
		for (size_t len = 1; len <= full; len++) {
			bool seen = false;
			for (int j = 0; j < i && !seen; j++)
				seen = !strncmp(longopts[j].name, longopts[i].name, len);
			if (seen)
				continue;
			snprintf(buf, sizeof buf, "--%.*s", (int)len,
				 longopts[i].name);
			char *argv[] = { "srun", buf, word, NULL };
			int idx = -1;
			optind = 0;
			opterr = 0;
			int c = getopt_long(3, argv, shorts, longopts, &idx);
			const struct srun_opt *o = resolve_long(buf + 2, len);
			checked++;
			if (c == '?' || idx < 0)
				snprintf(said, sizeof said, "knows no %s", buf);
			else
				snprintf(said, sizeof said, "takes %s as --%s%s",
					 buf, longopts[idx].name,
					 optind == 3 ? " with the next word" : "");
			if (!o)
				snprintf(ours, sizeof ours, "knows no %s", buf);
			else
				snprintf(ours, sizeof ours, "takes %s as --%s%s",
					 buf, o->name, o->has_arg == REQ
					 ? " with the next word" : "");
			if (strcmp(said, ours))
				mismatch(buf, said, ours);
		}
	}
	/* "-c word" and "-cX word" tell required, optional and no argument */
	for (int c = 33; c < 127; c++) {
		if (c == '-' || c == ':' || c == '?' || c == '+' || c == ';')
			continue;
		char sep[4] = { '-', (char)c, 0 }, glued[4] = { '-', (char)c, 'X', 0 };
		char *argv1[] = { "srun", sep, word, NULL };
		char *argv2[] = { "srun", glued, word, NULL };
		optind = 0;
		opterr = 0;
		int r = getopt_long(3, argv1, shorts, longopts, NULL);
		const char *a1 = optarg;
		optind = 0;
		getopt_long(3, argv2, shorts, longopts, NULL);
		const char *a2 = optarg;
		const char *says = r != c ? "none" : a1 ? "required"
				   : a2 ? "optional" : "no";
		const struct srun_opt *o = find_short((char)c);
		const char *plugin = o ? arg_name[o->has_arg] : "none";
		checked++;
		if (strcmp(says, plugin)) {
			snprintf(said, sizeof said, "-%c: %s argument", c, says);
			snprintf(ours, sizeof ours, "%s argument", plugin);
			mismatch(sep, said, ours);
		}
	}
	if (wrong > 3)
		printf("(%d such in all)\n", wrong);
	printf("checked %d\n", checked);
	return wrong ? 1 : 0;
}

/* Command lines with options that come and go. */
static struct tpk_srun_args scan(const char *line)
{
	static char buf[512];
	static char *argv[32];
	snprintf(buf, sizeof buf, "%s", line);
	int argc = 0;
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	struct tpk_srun_args a;
	tpk_scan_srun_args(argc, argv, 0, &a);
	return a;
}

static void expect(const char *line, const char *ambiguous, int64_t ntasks)
{
	struct tpk_srun_args a = scan(line);
	checked++;
	if (strcmp(a.ambiguous, ambiguous) || a.ntasks != ntasks) {
		printf("%s: the scan finds -n %lld, %s%s; srun's would be "
		       "-n %lld, %s%s\n", line, (long long)a.ntasks,
		       a.ambiguous[0] ? "ambiguous " : "no ambiguity",
		       a.ambiguous, (long long)ntasks,
		       ambiguous[0] ? "ambiguous " : "no ambiguity", ambiguous);
		wrong++;
	}
	tpk_srun_args_free(&a);
}

static int lines(void)
{
	const unsigned rel = SLURM_VERSION_NUMBER;
	/* 23.02's --tres-per-task: with '=' every release places */
	const char *tres = rel >= REL(23, 2, 0) ? "" : "--tres-per-task";
	expect("srun --tres-per-task gres/gpu:1 -n 2 ./app -n 5", tres, 2);
	expect("srun --tres-per-task=gres/gpu:1 -n 2 ./app -n 5", "", 2);
	/* 24.11's --oom-kill-step: an optional value, so never the
	 * command's; unknown, the command could be its value */
	bool oom = rel >= REL(24, 11, 0);
	expect("srun --oom-kill-step ./app -n 5", oom ? "" : "--oom-kill-step",
	       oom ? 0 : 5);
	expect("srun --oom-kill-step=1 -n 2 ./app", "", 2);
	/* 26.05's --ignore-signals (a value) and --parsable (a flag) */
	bool r26 = rel >= REL(26, 5, 0);
	expect("srun --ignore-signals SIGINT -n 2 ./app",
	       r26 ? "" : "--ignore-signals", 2);
	expect("srun --parsable ./app -n 5", r26 ? "" : "--parsable",
	       r26 ? 0 : 5);
	/* --power went in 24.05: another plugin's from then on */
	expect("srun --power level -n 2 ./app",
	       rel >= REL(24, 5, 0) ? "--power" : "", 2);
	printf("checked %d\n", checked);
	return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "table"))
		return table();
	if (argc == 3 && !strcmp(argv[1], "resolve"))
		return resolve(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "lines"))
		return lines();
	fprintf(stderr, "usage: check table | resolve LIST | lines\n");
	return 2;
}
EOF

# build_check NAME CPPFLAGS...: $tmp/NAME, or its errors in $tmp/NAME.err
build_check() {
	local out=$tmp/$1
	shift
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-prototypes \
		"$@" -I"$REPO/plugin" -I"$REPO/frontend" -I"$REPO/core/include" \
		-o "$out" "$tmp/check.c" "$REPO/frontend/hints.c" \
		"$REPO/frontend/lists.c" >"$out.err" 2>&1
}

# run_checks BIN LIST: the abbreviations and the command lines; how many
# in $abbrev and $cmdlines, what went wrong in $tmp/wrong
run_checks() {
	: >"$tmp/wrong"
	"$1" resolve "$2" >"$tmp/out" 2>&1 || cat "$tmp/out" >>"$tmp/wrong"
	abbrev=$(sed -n 's/^checked //p' "$tmp/out")
	"$1" lines >"$tmp/out" 2>&1 || cat "$tmp/out" >>"$tmp/wrong"
	cmdlines=$(sed -n 's/^checked //p' "$tmp/out")
	sed -i '/^checked /d' "$tmp/wrong"
	[ ! -s "$tmp/wrong" ]
}

# compare RELEASE_LIST PLUGIN_LIST: missing, extra and wrong options, one
# line; empty when they match
compare() {
	awk 'NR == FNR { want[$1] = $2 " " $3; next }
	{ if ($1 in have) dup = dup " --" $1; have[$1] = $2 " " $3 }
	function show(n, v,  p) { split(v, p, " "); return "--" n " (" p[1] (p[2] != "-" ? ", -" p[2] : "") ")" }
	END {
		for (n in want) if (!(n in have)) miss = miss " " show(n, want[n])
		for (n in have) if (!(n in want)) extra = extra " " show(n, have[n])
		for (n in want) if ((n in have) && want[n] != have[n])
			diff = diff " " show(n, have[n]) " for " show(n, want[n])
		s = ""
		if (miss != "") s = s "; missing" miss
		if (extra != "") s = s "; extra" extra
		if (diff != "") s = s "; wrong" diff
		if (dup != "") s = s "; twice" dup
		print substr(s, 3)
	}' "$1" "$2"
}

while read -r v _; do
	what="options $v"
	if ! src=$(bash "$HERE/release.sh" source "$v" 2>"$tmp/err"); then
		bad "$what: no source (release.sh source $v)" "$(tail -3 "$tmp/err")"
		continue
	fi
	if ! srun_options "$src/src/common/slurm_opt.c" >"$tmp/release" 2>"$tmp/err"; then
		bad "$what: cannot read srun's options in $src/src/common/slurm_opt.c" "$(cat "$tmp/err")"
		continue
	fi
	if ! prefix=$(bash "$HERE/release.sh" headers "$v" 2>"$tmp/err"); then
		bad "$what: no headers (release.sh headers $v)" "$(tail -3 "$tmp/err")"
		continue
	fi
	if ! build_check "check-$v" -isystem "$prefix/include"; then
		bad "$what: srun_args.c does not build against $prefix/include" "$(head -20 "$tmp/check-$v.err")"
		continue
	fi
	"$tmp/check-$v" table >"$tmp/table"
	got=$(sed -n 's/^release //p' "$tmp/table")
	if [ "$got" != "$v" ]; then
		bad "$what: the headers in $prefix/include are Slurm ${got:-unknown}"
		continue
	fi
	sed -i '/^release /d' "$tmp/table"
	n=$(wc -l <"$tmp/release")
	awk '{ print $1, $2, $3 }' "$tmp/release" | cat - "$tmp/topo" | sort >"$tmp/want"
	sort "$tmp/table" >"$tmp/have"
	diffs=$(compare "$tmp/want" "$tmp/have")
	run_checks "$tmp/check-$v" "$tmp/release"
	if [ -n "$diffs" ] || [ -s "$tmp/wrong" ]; then
		bad "$what: ${diffs:-the table matches, the scan does not}" "$(cat "$tmp/wrong")"
	else
		ok "$what: $n options match; $abbrev abbreviations and letters as srun's getopt_long; $cmdlines command lines"
	fi
done <"$tmp/list"

# 22.05: the default headers, where they are 22.05's.
what="options 22.05"
if ! printf '#include <slurm/slurm_version.h>\n' | "$CC" -E -x c - >/dev/null 2>&1; then
	echo "skip $what: no Slurm headers on the default include path"
elif ! build_check check-default; then
	bad "$what: srun_args.c does not build against the default headers" "$(head -20 "$tmp/check-default.err")"
else
	"$tmp/check-default" table >"$tmp/table"
	got=$(sed -n 's/^release //p' "$tmp/table")
	sed -i '/^release /d' "$tmp/table"
	case $got in
	22.05.*)
		what="options $got"
		grep -v '^topo-' "$tmp/table" | awk '{ print $1, $2, $3, "v_" $1 }' >"$tmp/own"
		n=$(wc -l <"$tmp/own")
		sort "$tmp/table" >"$tmp/have"
		diffs=$(grep '^topo-' "$tmp/have" | compare "$tmp/topo" -)
		run_checks "$tmp/check-default" "$tmp/own"
		[ "$n" = "$COUNT_2205" ] || diffs="$n options, 22.05.8 has $COUNT_2205${diffs:+; $diffs}"
		if [ -n "$diffs" ] || [ -s "$tmp/wrong" ]; then
			bad "$what (the default headers; no source): ${diffs:-the table holds, the scan does not}" \
				"$(cat "$tmp/wrong")"
		else
			ok "$what (the default headers; no source): $n options, as 22.05.8's; $abbrev abbreviations and letters as getopt_long over them; $cmdlines command lines"
		fi ;;
	*) echo "skip $what: the default headers are Slurm ${got:-unknown}" ;;
	esac
fi

echo "options: $pass passed, $fail failed"
[ "$fail" = 0 ]
