#!/bin/bash
# topoplace — integration tests of the SPANK plugin on a real Slurm 22.05
# cluster (tests/slurm/cluster.sh: 8 nodes on this host, a 2x2x2 torus).
#
#   sh tests/slurm/run.sh        (make check runs it through `make slurm-tests`)
#
# Needs root.  Without root it prints that it was SKIPPED and exits 0, unless
# TOPOPLACE_REQUIRE_SLURM_TESTS=1 (CI), where a skip is a failure.  Jobs run
# as the unprivileged user tpuser, so the plugin's privilege handling is real.
# One line per check, then "slurm: N passed, M failed"; exit 1 on failure.
# The cluster is always stopped (trap).
#
# Environment: BUILD (build directory, default build), TP_SLURM_DIR and the
# other knobs of cluster.sh, TP_KEEP_LOGS=1 keeps nothing from being removed.
# TP_INSTALLED=1 tests the installed packages instead of BUILD: the plugin
# of slurm-topoplace, named in place by plugstack.conf, and /usr/bin/topoplace
# (make check-packages).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
PLUGIN=$B/topoplace.so
CLI=$B/topoplace
if [ -n "${TP_INSTALLED:-}" ]; then
	PLUGIN=$(dpkg -L slurm-topoplace 2>/dev/null | grep '/topoplace/topoplace\.so$' | head -1)
	CLI=$(command -v topoplace || true)
	export TP_PLUGIN_INPLACE=1
	[ -n "$PLUGIN" ] && [ "$CLI" = /usr/bin/topoplace ] || {
		echo "slurm: TP_INSTALLED=1: slurm-topoplace or topoplace is not installed"
		echo "slurm: 0 passed, 1 failed"
		exit 1
	}
	echo "slurm: testing the installed $PLUGIN and $CLI"
fi
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
DIR=$TP_SLURM_DIR
TPUSER=${TP_USER:-tpuser}
export TP_USER=$TPUSER TP_NNODES=8 TP_CPUS=8 TP_GPUS=4 TP_DIMS=2x2x2
export TP_PLUGIN=$PLUGIN
CONF=$DIR/etc/topoplace.conf
T0=$(date +%s)

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1${TP_TIMES:+ [$(( $(date +%s) - T0 ))s]}"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }
summary() { echo "slurm: took $(( $(date +%s) - T0 )) s"; echo "slurm: $pass passed, $fail failed"; }

skip() {
	echo "slurm: SKIPPED: $*"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "slurm: TOPOPLACE_REQUIRE_SLURM_TESTS=1: skipping counts as a failure"
		echo "slurm: 0 passed, 1 failed"
		exit 1
	fi
	exit 0
}

[ "$(id -u)" = 0 ] || skip "the Slurm integration tests need root (unshare, mount, mknod, a test user)"
for b in unshare setpriv useradd; do
	command -v "$b" >/dev/null || skip "missing $b"
done
if [ -z "${TP_SLURM_PREFIX:-}" ] && ! sh "$REPO/contrib/install-deps.sh" slurm; then
	skip "the Slurm packages are missing and cannot be installed"
fi
if [ ! -r "$PLUGIN" ] || [ ! -x "$CLI" ]; then
	echo "slurm: $PLUGIN or $CLI not built (make BUILD=$BUILD all)"
	echo "slurm: 0 passed, 1 failed"
	exit 1
fi

# One test cluster per host: a second run (another checkout) waits here.
exec 9>/tmp/topoplace-slurm.lock
flock 9

# A cluster left running by hand or by a killed run: stop it first.
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop
trap 'bash "$HERE/cluster.sh" stop >/dev/null 2>&1' EXIT
if ! bash "$HERE/cluster.sh" start; then
	tail -5 "$DIR"/log/*.log 2>/dev/null
	echo "slurm: the test cluster did not start"
	echo "slurm: 0 passed, 1 failed"
	exit 1
fi
# shellcheck disable=SC1091
. "$DIR/env.sh"
# Slurm's own order, as the release under test lays tasks out: what every
# expected mapping is judged against, as the plugin judges it
SLURM_ORDER=(--slurm-conf "$SLURM_CONF" --slurm-version "$(scontrol --version | awk '{print $2}')")
H=$DIR/home/$TPUSER
W=$H/t
rm -rf "$W"
mkdir -p "$W"
chown "$TPUSER:" "$W"
PRIV=$DIR/private          # root-only files
rm -rf "$PRIV"
mkdir -p "$PRIV"
chmod 0755 "$PRIV"

# ------------------------------------------------------------- helpers

# as_user CMD: run a shell command as the test user in the work directory,
# with a clean environment.
as_user() {
	setpriv --reuid="$TPUSER" --regid="$TPUSER" --init-groups \
		env -i PATH=${TP_SLURM_PREFIX:+$TP_SLURM_PREFIX/bin:}/usr/local/bin:/usr/bin:/bin HOME="$H" USER="$TPUSER" \
		LOGNAME="$TPUSER" SLURM_CONF="$SLURM_CONF" LANG=C \
		bash -c "cd '$W' && $1"
}

# script NAME BODY: an executable job script owned by the user.
script() {
	{ echo "#!/bin/bash"; printf '%s\n' "$2"; } > "$W/$1.sh"
	chown "$TPUSER:" "$W/$1.sh"
	chmod 0755 "$W/$1.sh"
}

# The body that prints what the tests look at.  MAP: node of every rank.
SHOW='echo "NL=$SLURM_JOB_NODELIST"
echo "TPN=$SLURM_TASKS_PER_NODE"
echo "HF=${SLURM_HOSTFILE:-}"
echo "TPENV=$(env | grep -c "^TOPOPLACE_HOSTFILE=")"
echo "DIST=${SLURM_DISTRIBUTION:-}"
if [ -n "${SLURM_HOSTFILE:-}" ]; then
	echo "HFDIR=$(stat -c %U:%a "$(dirname "$SLURM_HOSTFILE")")"
fi
ranks() { srun -l "$@" hostname | sort -n | awk "{print \$2}" | paste -sd" "; }'

declare -A JOB
# submit NAME SBATCH_ARGS...: the script NAME.sh, output NAME.out/.err
submit() {
	local name=$1 j
	shift
	for _ in 1 2 3; do   # a busy controller may refuse for a moment
		j=$(as_user "sbatch --parsable -o $name.out -e $name.err $* ./$name.sh" 2>"$W/$name.sbatch-err")
		[ -n "$j" ] && break
		sleep 1
	done
	JOB[$name]=$j
	[ -n "$j" ] || echo "     (sbatch for $name failed: $(cat "$W/$name.sbatch-err"))"
}

# Until the queue is empty; a failing squeue (busy controller) is no answer.
wait_jobs() {
	local i q
	for ((i = 0; i < 1200; i++)); do
		if q=$(squeue -h -o %i 2>/dev/null) && [ -z "$q" ]; then
			return 0
		fi
		sleep 0.1
	done
	echo "     (jobs still queued after 120 s:)"; squeue
	return 1
}

val() { sed -n "s/^$1=//p" "$2" | head -1; }

# expected KIND NL ARGS...: the mapping the topoplace command computes
expected() {
	"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$1" "${@:2}" --format hostfile 2>/dev/null | paste -sd' '
}

hosts() { scontrol show hostnames "$1" | paste -sd' '; }

# block NL TPN: Slurm's default order for a tasks-per-node spec
block() { expected "$1" --tasks-per-node "$2" --stencil "$3" --policy block; }

check_eq() {  # check_eq NAME EXPECTED ACTUAL [context lines...]
	if [ -n "$2" ] && [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "expected: [$2]" "got:      [$3]" "${@:4}"; fi
}

count_lines() { grep -c -- "$1" "$2" 2>/dev/null || true; }

# ------------------------------------------------- does the cluster work?
if ! timeout 60 srun -N8 -n8 true 2>"$W/warmup.err"; then
	bad "0 the test cluster runs a job (srun -N8 true)" "$(cat "$W/warmup.err")"
	tail -3 "$DIR"/log/slurmctld.log
	summary
	exit 1
fi

# ------------------------------------------------------ is the plugin there?
if ! as_user "srun --help" 2>/dev/null | grep -q -- '--topo-stencil'; then
	bad "0 plugin loaded by srun (--topo-stencil in srun --help)" \
		"plugstack: $(cat "$DIR/etc/plugstack.conf")"
	summary
	exit 1
fi
ok "0 plugin loaded (srun, sbatch and salloc know --topo-stencil)"

# ------------------------------------------------------------ batch jobs
S3=4x4x4:7pt:periodic=all
script t1a "$SHOW
echo \"MAP=\$(ranks)\"
echo \"MAP32=\$(ranks -n32 --topo-stencil=4x4x2)\"
echo \"CYC=\$(ranks -m cyclic)\""
submit t1a -N8 --ntasks-per-node=8 --topo-stencil=$S3 --topo-report

script t1b "$SHOW
echo \"MAP=\$(ranks)\""
submit t1b -N3 -n10 --topo-stencil=5x2:5pt --topo-report

# test 3: a JSON graph with task coordinates, owned by the user, mode 600,
# given by a relative path (the batch step resolves it from the submit dir)
python3 - "$W/grid.json" <<'EOF'
import json, sys
n = 4
edges, coords = [], []
for y in range(n):
    for x in range(n):
        t = y * n + x
        coords.append([x, y])
        if x + 1 < n: edges.append([t, t + 1, 1000])
        if y + 1 < n: edges.append([t, t + n, 500])
json.dump({"tasks": n * n, "edges": edges, "coords": coords}, open(sys.argv[1], "w"))
EOF
chown "$TPUSER:" "$W/grid.json"
chmod 0600 "$W/grid.json"
script t3 "$SHOW
echo \"MAP=\$(ranks)\""
submit t3 -N4 --ntasks-per-node=4 --topo-graph=grid.json

# test 5: fail open
for n in t5a t5b t5c; do script $n "$SHOW
echo \"MAP=\$(ranks)\""; done
submit t5a -N2 --ntasks-per-node=2 --topo-stencil=4xfoo
submit t5b -N2 --ntasks-per-node=2 --topo-graph="$W/does-not-exist.json"
# a valid graph that root could read: only the user's privileges stop it
python3 - "$PRIV/secret.json" <<'EOF'
import json, sys
json.dump({"tasks": 4, "edges": [[0, 3, 100], [1, 2, 100]],
           "coords": [[0], [3], [1], [2]]}, open(sys.argv[1], "w"))
EOF
chmod 0600 "$PRIV/secret.json"
submit t5c -N2 --ntasks-per-node=2 --topo-graph="$PRIV/secret.json"

# test 6: --topo-policy=none and no hints: untouched (environment, order, GPUs)
for n in t6a t6b; do script $n "$SHOW
echo \"MAP=\$(ranks)\"
echo \"GPU=\$(srun bash -c 'echo \$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES' | sort -u | paste -sd' ')\""; done
submit t6a -N2 --ntasks-per-node=2 --gpus-per-node=4 --topo-stencil=2x2 --topo-policy=none --topo-report
submit t6b -N2 --ntasks-per-node=2 --gpus-per-node=4

wait_jobs

# ---- 1: sbatch --topo-stencil, plain srun inside follows the mapping
f=$W/t1a.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --stencil $S3)
check_eq "1a sbatch --topo-stencil=$S3 (8 nodes x 8): srun ranks = topoplace map" \
	"$exp" "$(val MAP "$f")" "stderr: $(head -3 "$W/t1a.err" 2>/dev/null)"
blk=$(block "$nl" "$tpn" $S3)
if [ -n "$exp" ] && [ "$exp" != "$blk" ]; then
	ok "1a the mapping differs from Slurm's block order (the plugin did something)"
else
	bad "1a the mapping differs from Slurm's block order" "block: [$blk]"
fi
# (the srun -n32 and srun -m cyclic of the script report on their own)
if [ "$(count_lines "^topoplace: policy auto (.*): 64 tasks on 8 nodes in .* ms; hop-bytes .* -> .*, max congestion .* -> .*" "$W/t1a.err")" = 1 ] &&
	[ "$(count_lines "^topoplace:   policy auto, metric hop-bytes, time budget 300 ms" "$W/t1a.err")" -ge 1 ] &&
	[ "$(count_lines "^topoplace:   \* " "$W/t1a.err")" -ge 1 ]; then
	ok "1a --topo-report: one summary line and the candidate list (one kept) in the job's stderr"
else
	bad "1a --topo-report: one summary line in the job's stderr" "stderr: $(cat "$W/t1a.err")"
fi
exp=$(expected "$nl" --ntasks 32 --stencil 4x4x2)
check_eq "1a srun -n32 --topo-stencil=4x4x2 inside the job: its own mapping" "$exp" "$(val MAP32 "$f")"
hf=$(val HF "$f")
if [ "$(val HFDIR "$f")" = "$TPUSER:700" ] && [ -n "$hf" ] && [ ! -e "$hf" ] && [ ! -e "$(dirname "$hf")" ]; then
	ok "1a SLURM_HOSTFILE private to the job ($TPUSER, 0700) and removed at its end"
else
	bad "1a SLURM_HOSTFILE private and removed" "HF=$hf HFDIR=$(val HFDIR "$f")" "$(ls -ld "$(dirname "$hf")" 2>&1)"
fi

f=$W/t1b.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --stencil 5x2:5pt)
check_eq "1b heterogeneous slots (sbatch -N3 -n10: $tpn): srun ranks = topoplace map" \
	"$exp" "$(val MAP "$f")" "stderr: $(head -3 "$W/t1b.err" 2>/dev/null)"

# ---- 3: --topo-graph, a user-owned mode-600 JSON file
f=$W/t3.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --graph "$W/grid.json")
check_eq "3a sbatch --topo-graph=grid.json (relative, $TPUSER's, mode 600): ranks = topoplace map" \
	"$exp" "$(val MAP "$f")" "stderr: $(head -3 "$W/t3.err" 2>/dev/null)"

# ---- 5: fail open
for t in t5a:"--topo-stencil=4xfoo":"4xfoo" \
	 t5b:"missing --topo-graph file":"No such file" \
	 t5c:"root-only (0600) --topo-graph file":"Permission denied"; do
	name=${t%%:*}; rest=${t#*:}; what=${rest%%:*}; key=${rest#*:}
	f=$W/$name.out
	nl=$(val NL "$f"); tpn=$(val TPN "$f")
	blk=$(block "$nl" "$tpn" 2x2)
	nerr=$(count_lines '^topoplace: error: .*'"$key"'.*Slurm.s placement is kept' "$W/$name.err")
	logged=$(grep -l "\[${JOB[$name]}.batch\].*topoplace: error" "$DIR"/log/slurmd-*.log 2>/dev/null | wc -l)
	if [ "$(val MAP "$f")" = "$blk" ] && [ -n "$blk" ] && [ -z "$(val HF "$f")" ] &&
		[ "$nerr" = 1 ] && [ "$(count_lines topoplace "$W/$name.err")" = 1 ] && [ "$logged" -ge 1 ]; then
		ok "5 $what: job runs in Slurm's order, one error line (job stderr + slurmd log)"
	else
		bad "5 $what: job runs in Slurm's order, one error line" \
			"map [$(val MAP "$f")] block [$blk] HF [$(val HF "$f")] in slurmd log: $logged" \
			"stderr: $(cat "$W/$name.err")"
	fi
done

# ---- 6: untouched
for t in t6a:"--topo-policy=none --topo-report":1 t6b:"no hints":0; do
	name=${t%%:*}; rest=${t#*:}; what=${rest%%:*}; nlines=${rest#*:}
	f=$W/$name.out
	nl=$(val NL "$f"); tpn=$(val TPN "$f")
	blk=$(block "$nl" "$tpn" 2x2)
	if [ "$(val MAP "$f")" = "$blk" ] && [ -n "$blk" ] && [ -z "$(val HF "$f")" ] &&
		[ "$(val TPENV "$f")" = 0 ] && [ -z "$(val DIST "$f")" ] &&
		[ "$(val GPU "$f")" = "0:0,1,2,3 1:0,1,2,3" ] &&
		[ "$(count_lines topoplace "$W/$name.err")" = "$nlines" ]; then
		ok "6 $what: Slurm's order, environment and GPUs untouched ($nlines report line)"
	else
		bad "6 $what: untouched" "map [$(val MAP "$f")] block [$blk] HF [$(val HF "$f")] TOPOPLACE_ vars $(val TPENV "$f") GPU [$(val GPU "$f")]" \
			"stderr: $(cat "$W/$name.err")"
	fi
done

# ---- 7b: -m cyclic in a job the plugin placed: the user's order wins
f=$W/t1a.out
nodes=$(hosts "$(val NL "$f")")
cyc=""
read -r -a nodearr <<< "$nodes"
if [ "${#nodearr[@]}" = 8 ]; then
	for ((r = 0; r < 64; r++)); do cyc="$cyc${cyc:+ }${nodearr[r % 8]}"; done
fi
check_eq "7b srun -m cyclic inside a placed sbatch job: Slurm's cyclic order" "$cyc" "$(val CYC "$f")"

# ---- 20: srun's own layout options in placed jobs, sbatch and salloc:
# every step runs (srun 23.11 and later refuse -N beside a hostfile, so
# placement steps aside for it, with one --topo-report line)
printf '0-63 hostname\n' > "$W/mp.conf"
# an option newer than 22.05 that takes a value, written with a space: the
# plugin built for the release knows it, so the step is placed, silently
NEWOPT=""
ver=${SLURM_ORDER[3]}
[ "$(printf '%s\n23.11\n' "$ver" | sort -V | head -1)" = 23.11 ] && NEWOPT="run tw --treewidth 2 hostname"
chown "$TPUSER:" "$W/mp.conf"
script t20 "run() {
	local name=\$1; shift
	srun \"\$@\" > \$name.o 2> \$name.e
	echo \"R_\$name=\$? \$(wc -l < \$name.o) \$(sort -u \$name.o | wc -l) \$(grep -c topoplace \$name.e)\"
}
cd t20-\$SLURM_JOB_ID.d 2>/dev/null || { mkdir -p t20-\$SLURM_JOB_ID.d && cd t20-\$SLURM_JOB_ID.d; }
run nplain -N8 hostname
run ntopo -N8 --topo-stencil=$S3 --topo-report hostname
run nsmall -N4 -n16 hostname
run n -n16 hostname
run tpn -n32 --ntasks-per-node=4 hostname
run tpnt -n32 --ntasks-per-node=4 --topo-stencil=4x4x2 hostname
run m -m cyclic hostname
run w -w node[1-2] -N2 -n4 hostname
run x -x node1 -N7 -n14 hostname
run r -r 1 -N2 -n4 hostname
run mp --multi-prog ../mp.conf
$NEWOPT
grep -h topoplace ntopo.e | sed 's/^/NTOPO_LINE=/'"
submit t20 -N8 --ntasks-per-node=8 --topo-stencil=$S3
as_user "salloc -N8 --ntasks-per-node=8 --topo-stencil=$S3 ./t20.sh > t20s.out 2> t20s.err"
wait_jobs
# name, then what each srun must give: rc, tasks, nodes, topoplace lines
T20_WANT="nplain 0 64 8 0
ntopo 0 64 8 1
nsmall 0 16 4 0
n 0 16 8 0
tpn 0 32 8 0
tpnt 0 32 8 0
m 0 64 8 0
w 0 4 2 0
x 0 14 7 0
r 0 4 2 0
mp 0 64 8 0${NEWOPT:+
tw 0 64 8 0}"
for out in t20 t20s; do
	f=$W/$out.out
	[ "$out" = t20 ] && how="sbatch" || how="salloc"
	while read -r name want; do
		check_eq "20 $how, srun $(sed -n "s/^run $name //p" "$W/t20.sh"): runs (rc tasks nodes report-lines)" \
			"$want" "$(val "R_$name" "$f")" "stderr: $(cat "$W/t20-"*".d/$name.e" 2>/dev/null | head -3)"
	done <<< "$T20_WANT"
	check_eq "20 $how, srun -N8 --topo-stencil: the one line says why it steps aside" \
		"topoplace: -N 8 given: srun follows no hostfile with -N, so Slurm's placement is kept (leave -N out to have the tasks placed)" \
		"$(val NTOPO_LINE "$f")"
done

# ---- 21: the baseline is the order Slurm itself uses (26.05 lays tasks
# out leaf switch by leaf switch; TP_LEAVES=interleaved makes that differ
# from the hostlist's order)
script t21 "$SHOW
srun -l hostname | sort -n | awk '{print \$2}' > t21.slurm
echo \"SLURM=\$(paste -sd' ' t21.slurm)\"
srun --topo-stencil=16x1 --topo-report hostname > /dev/null"
as_user "salloc -N8 --ntasks-per-node=2 ./t21.sh > t21.out 2> t21.err"
f=$W/t21.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
check_eq "21 Slurm's own order (no hints) = topoplace's model of it (${SLURM_ORDER[*]})" \
	"$(block "$nl" "$tpn" 16x1)" "$(val SLURM "$f")"
real=$("$CLI" eval --config "$CONF" --nodes "$nl" --tasks-per-node "$tpn" --hostfile "$W/t21.slurm" \
	--stencil 16x1 --format json 2>/dev/null | python3 -c 'import json,sys; print("%g" % json.load(sys.stdin)["metrics"]["hop_bytes"])')
said=$(sed -n 's/^topoplace: policy .* hop-bytes \([0-9.e+]*\) -> .*(Slurm.s default order -> topoplace)$/\1/p' "$W/t21.err")
kept=$(count_lines "^topoplace: policy .*: Slurm's order kept: " "$W/t21.err")
if [ -n "$real" ] && { [ "$said" = "$real" ] || [ "$kept" = 1 ]; }; then
	ok "21 --topo-report measures against the order Slurm really uses (its hop-bytes $real)"
else
	bad "21 --topo-report's baseline = Slurm's real order" "Slurm's order scores [$real], the report says [$said] kept [$kept]" \
		"stderr: $(head -3 "$W/t21.err")"
fi

# ------------------------------------------------------- salloc + srun
# ---- 2: srun --topo-stencil inside salloc
script t2 "$SHOW
echo \"MAP=\$(ranks --topo-stencil=$S3 --topo-report)\"
echo \"MAP32=\$(ranks -n 32 --topo-stencil 4x4x2)\""
as_user "salloc -N8 --ntasks-per-node=8 ./t2.sh > t2.out 2> t2.err"
f=$W/t2.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --stencil $S3)
check_eq "2a srun --topo-stencil=$S3 inside salloc -N8 (64 tasks): ranks = topoplace map" \
	"$exp" "$(val MAP "$f")" "stderr: $(grep topoplace "$W/t2.err" | head -3)"
exp=$(expected "$nl" --ntasks 32 --stencil 4x4x2)
check_eq "2b srun -n 32 --topo-stencil 4x4x2 inside salloc (srun's own -n): ranks = topoplace map" \
	"$exp" "$(val MAP32 "$f")"
if [ "$(count_lines '^topoplace: policy auto (.*): 64 tasks on 8 nodes' "$W/t2.err")" = 1 ]; then
	ok "2a --topo-report line on srun's stderr"
else
	bad "2a --topo-report line on srun's stderr" "stderr: $(cat "$W/t2.err")"
fi

script t2c "$SHOW
echo \"MAP=\$(ranks --topo-stencil=5x2:5pt)\""
as_user "salloc -N3 -n10 ./t2c.sh > t2c.out 2> t2c.err"
f=$W/t2c.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --stencil 5x2:5pt)
check_eq "2c heterogeneous salloc -N3 -n10 ($tpn): srun ranks = topoplace map" "$exp" "$(val MAP "$f")"

# ---- 2d: srun --topo-parallel (a training job's layout) inside salloc: the
# ranks are what `topoplace map --parallel` gives; a layout that does not
# fit the step is one line, and Slurm's order stays
script t2d "$SHOW
echo \"MAP=\$(ranks --topo-parallel=tp=4,pp=2,cp=2 --topo-report)\"
echo \"BAD=\$(ranks --topo-parallel=tp=3)\""
as_user "salloc -N8 --ntasks-per-node=8 ./t2d.sh > t2d.out 2> t2d.err"
f=$W/t2d.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --parallel tp=4,pp=2,cp=2)
check_eq "2d srun --topo-parallel=tp=4,pp=2,cp=2 inside salloc (64 tasks): ranks = topoplace map --parallel" \
	"$exp" "$(val MAP "$f")" "stderr: $(grep topoplace "$W/t2d.err" | head -3)"
check_eq "2e srun --topo-parallel=tp=3 (does not divide 64 tasks): Slurm's order" \
	"$(block "$nl" "$tpn" 8x8)" "$(val BAD "$f")"
if [ "$(count_lines '^topoplace: error: --topo-parallel: tp x cp x ep x pp = 3 does not divide the 64 tasks' "$W/t2d.err")" = 1 ] &&
	[ "$(count_lines '^topoplace: policy auto' "$W/t2d.err")" = 1 ]; then
	ok "2e --topo-parallel: the report of the first srun, one error line for the second"
else
	bad "2e --topo-parallel lines" "stderr: $(cat "$W/t2d.err")"
fi

# ---- 3b: --topo-graph with srun (local context: read as the user anyway)
script t3b "$SHOW
echo \"MAP=\$(ranks --topo-graph=$W/grid.json)\"
echo \"SECRET=\$(ranks --topo-graph=$PRIV/secret.json -n4 2>&1 >/dev/null | grep -c 'topoplace: error: .*Permission denied')\""
as_user "salloc -N4 --ntasks-per-node=4 ./t3b.sh > t3b.out 2> t3b.err"
f=$W/t3b.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
exp=$(expected "$nl" --tasks-per-node "$tpn" --graph "$W/grid.json")
check_eq "3b srun --topo-graph=FILE inside salloc: ranks = topoplace map" "$exp" "$(val MAP "$f")"
check_eq "5 srun --topo-graph=root-only file: one error line, job runs" "1" "$(val SECRET "$f")"

# ---- 4: CUDA_VISIBLE_DEVICES per task
script t4 'gpus() { srun "$@" bash -c "echo \$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -u | paste -sd" "; }
echo "SPLIT=$(gpus --topo-stencil=2x2)"
echo "PLAIN=$(gpus)"
echo "PERTASK=$(gpus --topo-stencil=2x2 --gpus-per-task=1 --ntasks-per-node=2)"
echo "PERTASK0=$(gpus --gpus-per-task=1 --ntasks-per-node=2)"'
as_user "salloc -N2 --ntasks-per-node=2 --gpus-per-node=4 ./t4.sh > t4.out 2> t4.err"
f=$W/t4.out
check_eq "4a --gpus-per-node=4, 2 tasks per node: GPUs split in local-rank order" "0:0,1 1:2,3" "$(val SPLIT "$f")"
check_eq "4b the same srun without a hint: Slurm's CUDA_VISIBLE_DEVICES untouched" "0:0,1,2,3 1:0,1,2,3" "$(val PLAIN "$f")"
check_eq "4c --gpus-per-task=1 (Slurm binds per task): Slurm's binding kept" "$(val PERTASK0 "$f")" "$(val PERTASK "$f")"
script t4d 'echo "SPLIT=$(srun --topo-stencil=4x2 bash -c "echo \$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -u | paste -sd" ")"'
as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=2 ./t4d.sh > t4d.out 2> t4d.err"
check_eq "4d --gpus-per-node=2, 4 tasks per node: neighbouring ranks share a GPU" "0:0 1:0 2:1 3:1" "$(val SPLIT "$W/t4d.out")"

# ---- 7a: -w from the user wins
script t7 'nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | tac | paste -sd,)
echo "USER=$(srun -l -n8 -w "$nodes" hostname | sort -n | awk "{print \$2}" | paste -sd" ")"
echo "TOPO=$(srun -l -n8 -w "$nodes" --topo-stencil=2x2x2 --topo-report hostname | sort -n | awk "{print \$2}" | paste -sd" ")"'
as_user "salloc -N4 --ntasks-per-node=2 ./t7.sh > t7.out 2> t7.err"
f=$W/t7.out
if [ -n "$(val USER "$f")" ] && [ "$(val USER "$f")" = "$(val TOPO "$f")" ] &&
	grep -q '^topoplace: -w given by the user: the user.s placement wins' "$W/t7.err"; then
	ok "7a srun -w NODES --topo-stencil: the user's -w wins, the report line says so"
else
	bad "7a srun -w wins" "without hint [$(val USER "$f")] with hint [$(val TOPO "$f")]" "stderr: $(cat "$W/t7.err")"
fi

# ---- 4e-4g: --topo-gpu-matrix: each task's GPUs from MAGC on the node model
# (topoplace.conf: NodeTopology=nvl4.xml, GpuLinks=nvl4.links: NVLink pairs
# 0-1 and 2-3).  Heavy pairs (0,2) (1,3) on node A, (4,6) (5,7) on node B:
# local-rank order puts every heavy pair across the PCIe/socket link.
cp "$REPO/tests/cli/data/gpu-pairs8.json" "$W/gm8.json"
echo '{"tasks": 6, "traffic": [[0, 2, 1e9], [1, 3, 1e9]]}' > "$W/gm6.json"
chown "$TPUSER:" "$W/gm8.json" "$W/gm6.json"
chmod 0600 "$W/gm8.json" "$W/gm6.json"
script t4e 'g() { srun "$@" bash -c "echo \$SLURM_PROCID:\$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -n | paste -sd" "; }
echo "NL=$SLURM_JOB_NODELIST"
echo "TPN=$SLURM_TASKS_PER_NODE"
echo "SEL=$(g --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm8.json --topo-report)"
echo "SEL0=$(g --topo-gpu-matrix=gm8.json)"
echo "BAD=$(g --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm6.json)"'
as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=4 ./t4e.sh > t4e.out 2> t4e.err"
f=$W/t4e.out
# PROCID:LOCALID:GPUS -> "ok" when every heavy pair sits on an NVLink pair
nvpairs() {
	python3 -c '
import sys
g = {int(t.split(":")[0]): t.split(":")[2] for t in sys.argv[1].split()}
nv = ({"0", "1"}, {"2", "3"})
ok = len(g) == 8 and all({g[a], g[b]} in nv
                         for a, b in ((0, 2), (1, 3), (4, 6), (5, 7)))
print("ok" if ok else "no")' "$1" 2>/dev/null
}
# topoplace map's PROCID:LOCALID:GPUS (4 tasks per node) for the step whose
# NL= and TPN= are in file $1; more map arguments after it
map_gpus() {
	local out=$1
	shift
	"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$(val NL "$out")" \
		--tasks-per-node "$(val TPN "$out")" "$@" --format json 2>/dev/null |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join("%d:%d:%s" % (t, t % 4, ",".join(map(str, g)))
               for t, g in enumerate(d["gpus"])))' 2>/dev/null
}
exp=$(map_gpus "$f" --stencil 8x1 --policy block --gpu-matrix "$W/gm8.json")
sel=$(val SEL "$f")
if [ "$(nvpairs "$sel")" = ok ] && [ "$sel" = "$exp" ] &&
	[ "$(count_lines '^topoplace: node[0-9]*: GPU selection applied (magc, 4 tasks, 1 GPU per task, step GPUs 0,1,2,3): max GPU-link congestion 200\(\.01\)\{0,1\} -> 10 ms' "$W/t4e.err")" = 2 ]; then
	ok "4e --topo-gpu-matrix: heavy pairs on NVLink pairs, = topoplace map --gpu-matrix, one report line per node"
else
	bad "4e --topo-gpu-matrix" "expected: [$exp]" "got:      [$sel]" "stderr: $(cat "$W/t4e.err")"
fi
if [ "$(nvpairs "$(val SEL0 "$f")")" = ok ]; then
	ok "4f --topo-gpu-matrix alone (no CPU pattern): heavy pairs on NVLink pairs"
else
	bad "4f --topo-gpu-matrix alone" "got: [$(val SEL0 "$f")]"
fi
lr="0:0:0 1:1:1 2:2:2 3:3:3 4:0:0 5:1:1 6:2:2 7:3:3"
if [ "$(val BAD "$f")" = "$lr" ] &&
	[ "$(count_lines '^topoplace: error: .*gm6.json.*6 tasks.*Slurm.s placement is kept' "$W/t4e.err")" = 1 ] &&
	[ "$(count_lines '^topoplace: error' "$W/t4e.err")" = 1 ]; then
	ok "4g --topo-gpu-matrix with the wrong task count: local-rank split, one error line"
else
	bad "4g --topo-gpu-matrix wrong task count" "expected: [$lr]" "got:      [$(val BAD "$f")]" "stderr: $(cat "$W/t4e.err")"
fi

# ---- 4h: the option given to sbatch reaches every srun's tasks
script t4h 'echo "SEL=$(srun bash -c "echo \$SLURM_PROCID:\$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -n | paste -sd" ")"'
submit t4h -N2 --ntasks-per-node=4 --gpus-per-node=4 --topo-gpu-matrix=gm8.json
wait_jobs
if [ "$(nvpairs "$(val SEL "$W/t4h.out")")" = ok ] && [ "$(count_lines topoplace "$W/t4h.err")" = 0 ]; then
	ok "4h sbatch --topo-gpu-matrix=FILE (relative): the script's srun tasks get the selection, silently"
else
	bad "4h sbatch --topo-gpu-matrix" "got: [$(val SEL "$W/t4h.out")]" "stderr: $(cat "$W/t4h.err")"
fi

# ---- 4i: MAGC phase 1 in the plugin: the GPU matrix counts for the nodes.
# Heavy pairs (0,4) (1,5) (2,6) (3,7): Slurm's block order puts every pair
# on two nodes; with --topo-gpu-matrix alone each pair shares a node (and,
# with a stencil along the pairs' other direction, still does)
echo '{"tasks": 8, "traffic": [[0, 4, 1e9], [1, 5, 1e9], [2, 6, 1e9], [3, 7, 1e9]]}' > "$W/gmx.json"
chown "$TPUSER:" "$W/gmx.json"
chmod 0600 "$W/gmx.json"
script t4i 'n() { srun "$@" bash -c "echo \$SLURM_PROCID:\$(hostname)" | sort -n | paste -sd" "; }
echo "PLAIN=$(n)"
echo "GM=$(n --topo-gpu-matrix=gmx.json --topo-report)"
echo "BOTH=$(n --topo-stencil=8x1 --topo-gpu-matrix=gmx.json)"'
as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=4 ./t4i.sh > t4i.out 2> t4i.err"
f=$W/t4i.out
# "yes" when every heavy pair runs on one node
paired() {
	echo "$1" | tr ' ' '\n' | awk -F: '{ h[$1] = $2 } END { ok = NR == 8; for (i = 0; i < 4; i++) if (h[i] != h[i + 4]) ok = 0; print ok ? "yes" : "no" }'
}
if [ "$(paired "$(val PLAIN "$f")")" = no ] && [ "$(paired "$(val GM "$f")")" = yes ] &&
	[ "$(paired "$(val BOTH "$f")")" = yes ] &&
	[ "$(count_lines '^topoplace: policy auto (.*): 8 tasks on 2 nodes' "$W/t4i.err")" = 1 ] &&
	grep -q '^topoplace:   [ *] block  *GPU links' "$W/t4i.err"; then
	ok "4i --topo-gpu-matrix places the nodes too (MAGC phase 1): heavy GPU pairs share a node, alone or added to a stencil"
else
	bad "4i GPU matrix in the node placement" "plain [$(val PLAIN "$f")]" "matrix [$(val GM "$f")]" "both [$(val BOTH "$f")]" "stderr: $(cat "$W/t4i.err")"
fi

# The remaining tests change the site configuration; nothing else runs now.
wait_jobs
ARGS0="policy=auto time_budget_ms=300 max_file_bytes=1048576 cpu_bind=no"

# ---- 0b: an unknown plugstack argument is the admin's business: one line in
# the slurmd log (from the batch step), none in the user's output, and the
# plugin keeps working
TP_PLUGSTACK_ARGS="$ARGS0 bogus=1" bash "$HERE/cluster.sh" plugstack on
script t0b "$SHOW
echo \"MAP=\$(ranks --topo-stencil=2x2x2)\""
submit t0b -N4 --ntasks-per-node=2
wait_jobs
f=$W/t0b.out
exp=$(expected "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" --stencil 2x2x2)
logged=$(grep -h "\[${JOB[t0b]}.batch\].*topoplace: unknown plugstack argument 'bogus=1' (ignored)" "$DIR"/log/slurmd-*.log 2>/dev/null | wc -l)
if [ "$(val MAP "$f")" = "$exp" ] && [ -n "$exp" ] && [ "$logged" = 1 ] &&
	[ "$(count_lines plugstack "$W/t0b.err")" = 0 ]; then
	ok "0b unknown plugstack argument: one line in the slurmd log, none for the user, placement still works"
else
	bad "0b unknown plugstack argument" "expected [$exp] got [$(val MAP "$f")] logged $logged" "stderr: $(cat "$W/t0b.err")"
fi

# ---- 6c: a site default that needs no pattern applies to jobs without hints
TP_PLUGSTACK_ARGS="policy=cyclic" bash "$HERE/cluster.sh" plugstack on
for n in t6c t6d; do script $n "$SHOW
echo \"MAP=\$(ranks)\""; done
as_user "salloc -N4 --ntasks-per-node=2 ./t6c.sh > t6c.out 2> t6c.err"
submit t6d -N4 --ntasks-per-node=2
wait_jobs
for name in t6c t6d; do
	f=$W/$name.out
	exp=$(expected "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" --policy cyclic)
	if [ "$(val MAP "$f")" = "$exp" ] && [ -n "$exp" ] && [ "$(count_lines topoplace "$W/$name.err")" = 0 ]; then
		ok "6c plugstack policy=cyclic, job without hints ($([ $name = t6c ] && echo salloc+srun || echo sbatch)): cyclic order, silently"
	else
		bad "6c plugstack policy=cyclic, job without hints ($name)" "expected [$exp] got [$(val MAP "$f")]" "stderr: $(cat "$W/$name.err")"
	fi
done

# ---- 5d: a node missing from topoplace.conf
cp "$CONF" "$CONF.saved"
printf 'Network=torus Dims=2x2x2 Wrap=yes\nNodeName=node[1-7] CoordOrder=x-major\n' > "$CONF"
TP_PLUGSTACK_ARGS="$ARGS0" bash "$HERE/cluster.sh" plugstack on
script t5d "$SHOW
echo \"MAP=\$(ranks --topo-stencil=2x2)\""
as_user "salloc -w node[7-8] -N2 --ntasks-per-node=2 ./t5d.sh > t5d.out 2> t5d.err"
mv -f "$CONF.saved" "$CONF"
f=$W/t5d.out
blk=$(block "$(val NL "$f")" "$(val TPN "$f")" 2x2)
if [ "$(val MAP "$f")" = "$blk" ] && [ -n "$blk" ] &&
	[ "$(count_lines '^topoplace: error: .*node8.*Slurm.s placement is kept' "$W/t5d.err")" = 1 ]; then
	ok "5 node unknown to topoplace.conf: Slurm's order, one error line"
else
	bad "5 node unknown to topoplace.conf" "block [$blk] got [$(val MAP "$f")]" "stderr: $(cat "$W/t5d.err")"
fi

# ---- 9: each task bound to the cores chosen for it (phase 2, then its
# cores next to its GPUs).  node7 and node8 get a model this host can hold:
# duo.xml, 2 sockets x 1 core (CPUs 0 and 1), GPU0 on socket 1 and GPU1 on
# socket 0; node1-6 keep nvl4.xml (16 cores, more than this host has).  The
# site default cpu_bind=yes applies.  Neither the plugstack line nor
# topoplace.conf sets a time budget here: the plugin's default, 1000 ms.
cp "$CONF" "$CONF.saved"
install -m 0644 "$REPO/tests/data/nodes/duo.xml" "$DIR/etc/nodes/duo.xml"
cat > "$CONF" <<EOF
Network=torus Dims=2x2x2 Wrap=yes
NodeName=node[1-6] CoordOrder=x-major NodeTopology=nodes/nvl4.xml GpuLinks=nodes/nvl4.links
NodeName=node[7-8] CoordOrder=x-major Offset=6 NodeTopology=nodes/duo.xml
EOF
TP_PLUGSTACK_ARGS="policy=auto max_file_bytes=1048576" bash "$HERE/cluster.sh" plugstack on
echo '{"tasks": 4, "traffic": [[0, 1, 1e6], [2, 3, 1e6]]}' > "$W/gm4.json"
chown "$TPUSER:" "$W/gm4.json"
chmod 0600 "$W/gm4.json"
# RANK:NODE:CPUS the task may run on:TOPOPLACE_CPUS:GPUS
script t9 'b() { srun "$@" bash -c "echo \$SLURM_PROCID:\$(hostname):\$(sed -n \"s/^Cpus_allowed_list:[[:space:]]*//p\" /proc/self/status):\${TOPOPLACE_CPUS:-}:\${CUDA_VISIBLE_DEVICES:-}" | sort -n | paste -sd" "; }
echo "NL=$SLURM_JOB_NODELIST"
echo "TPN=$SLURM_TASKS_PER_NODE"
echo "CPU=$(b --topo-stencil=4x1 --topo-report)"
echo "GPU=$(b --topo-stencil=4x1 --topo-gpu-matrix=gm4.json --topo-report)"
echo "OFF=$(b --topo-stencil=4x1 --topo-cpu-bind=no)"
echo "NONE=$(b --topo-stencil=4x1 --cpu-bind=none 2>/dev/null)"
echo "BADV=$(b --topo-stencil=4x1 --topo-cpu-bind=maybe)"'
as_user "salloc -w node[7-8] -N2 --ntasks-per-node=2 --gpus-per-node=2 ./t9.sh > t9.out 2> t9.err"
f=$W/t9.out
# what `topoplace map` chooses for the same tasks: RANK:NODE:CPUS:CPUS:GPUS
want() {
	"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" \
		--stencil 4x1 "$@" --format tasks 2>/dev/null |
		sed -n 's/^rank \([0-9]*\)=\([^ ]*\) cpus=\([^ ]*\)\( gpus=\([^ ]*\)\)\{0,1\}.*/\1:\2:\3:\3:\5/p' | paste -sd' '
}
f4() { tr ' ' '\n' | cut -d: -f1-4 | paste -sd' '; }
exp=$(want | f4)
got=$(val CPU "$f" | f4)
if [ "$got" = "$exp" ] && [ -n "$exp" ] &&
	[ "$(echo "$got" | tr ' ' '\n' | cut -d: -f2,3 | sort -u | wc -l)" = 4 ] &&
	[ "$(count_lines '^topoplace: node[78]: CPUs bound (duo.xml, 2 tasks x 1 core of step cores 0-1, largest inter-socket message 1 bytes)' "$W/t9.err")" = 2 ]; then
	ok "9a --topo-stencil on nodes with a node model: every task bound to its own core, = topoplace map's cpus, one report line per node"
else
	bad "9a CPU binding" "expected: [$exp]" "got:      [$got]" "stderr: $(cat "$W/t9.err")"
fi
if [ "$(count_lines "^topoplace:   policy auto, metric [a-z-]*, time budget 1000 ms (the default inside a launch: no time_budget_ms= or TimeBudgetMs=)" "$W/t9.err")" -ge 1 ]; then
	ok "9a no time_budget_ms= and no TimeBudgetMs=: --topo-report shows the plugin's 1000 ms default"
else
	bad "9a default time budget" "stderr: $(grep 'time budget' "$W/t9.err")"
fi
exp=$(want --gpu-matrix "$W/gm4.json")
got=$(val GPU "$f")
# the task on CPU 1 (socket 1) must have GPU0 (socket 1), and the other way
near=$(echo "$got" | tr ' ' '\n' | awk -F: '{ if (($3 == 1) != ($5 == 0)) bad = 1 } END { print bad ? "no" : "yes" }')
if [ "$got" = "$exp" ] && [ -n "$exp" ] && [ "$near" = yes ]; then
	ok "9b --topo-gpu-matrix too: each task's core on its GPU's socket, = topoplace map's cpus and gpus"
else
	bad "9b CPU binding with GPUs" "expected: [$exp]" "got:      [$got]" "stderr: $(cat "$W/t9.err")"
fi
unbound=$(val OFF "$f" | tr ' ' '\n' | cut -d: -f3,4 | sort -u | paste -sd' ')
check_eq "9c --topo-cpu-bind=no: Slurm's binding (none here) kept" "0-1:" "$unbound"
unbound=$(val NONE "$f" | tr ' ' '\n' | cut -d: -f3,4 | sort -u | paste -sd' ')
check_eq "9d --cpu-bind=none: Slurm's binding (none here) kept" "0-1:" "$unbound"
unbound=$(val BADV "$f" | tr ' ' '\n' | cut -d: -f3,4 | sort -u | paste -sd' ')
if [ "$unbound" = "0-1:" ] &&
	[ "$(count_lines '^topoplace: error: --topo-cpu-bind=maybe: yes or no is needed' "$W/t9.err")" = 1 ]; then
	ok "9e --topo-cpu-bind=maybe: one error line, tasks run unbound"
else
	bad "9e --topo-cpu-bind=maybe" "got: [$unbound]" "stderr: $(cat "$W/t9.err")"
fi

# ---- 9f: a model with CPUs this host does not have (nvl4: 16 cores, the
# step's cores 0-3 are CPUs 0-3): every task of both nodes hits the same
# reason; it is said once for the step (not an error: the user asked for no
# binding), an error with --topo-cpu-bind=yes, and the job runs
script t9f 'echo "B=$(srun --topo-stencil=8x1 bash -c "sed -n \"s/^Cpus_allowed_list:[[:space:]]*//p\" /proc/self/status" | sort -u | paste -sd" ")"
echo "Y=$(srun --topo-stencil=8x1 --topo-cpu-bind=yes true && echo ran)"'
as_user "salloc -w node[1-2] -N2 --ntasks-per-node=4 ./t9f.sh > t9f.out 2> t9f.err"
if [ "$(val B "$W/t9f.out")" = "0-1" ] && [ "$(val Y "$W/t9f.out")" = ran ] &&
	[ "$(count_lines "^topoplace: CPU binding: node1: CPU list .* of nvl4.xml is not within this step's CPUs here (0-1); Slurm's CPU binding kept" "$W/t9f.err")" = 1 ] &&
	[ "$(count_lines "^topoplace: error: CPU binding: node1: CPU list .* of nvl4.xml is not within this step's CPUs here (0-1); Slurm's CPU binding kept" "$W/t9f.err")" = 1 ] &&
	[ "$(count_lines "CPU binding" "$W/t9f.err")" = 2 ]; then
	ok "9f node model with CPUs the node lacks: one line a step (8 tasks, 2 nodes), an error only with --topo-cpu-bind=yes; Slurm's binding kept"
else
	bad "9f node model with CPUs the node lacks" "got: [$(val B "$W/t9f.out")]" "stderr: $(cat "$W/t9f.err")"
fi

# ---- 9g: sbatch --topo-stencil: the script's srun binds its tasks
script t9g 'echo "B=$(srun bash -c "echo \$SLURM_PROCID:\$(sed -n \"s/^Cpus_allowed_list:[[:space:]]*//p\" /proc/self/status)" | sort -n | paste -sd" ")"'
submit t9g -w "node[7-8]" -N2 --ntasks-per-node=2 --topo-stencil=4x1
wait_jobs
b=$(val B "$W/t9g.out")
if [ -n "$b" ] && [ "$(echo "$b" | tr ' ' '\n' | cut -d: -f2 | sort | paste -sd' ')" = "0 0 1 1" ]; then
	ok "9g sbatch --topo-stencil: the script's srun tasks each bound to one core"
else
	bad "9g sbatch --topo-stencil binding" "got: [$b]" "stderr: $(cat "$W/t9g.err" 2>/dev/null)"
fi
mv -f "$CONF.saved" "$CONF"
TP_PLUGSTACK_ARGS="$ARGS0" bash "$HERE/cluster.sh" plugstack on

# ---- 10: the plugin computes exactly what `topoplace map` computes.  Every
# policy x every kind of hint x a torus and a tree: each task's node, CPUs
# and GPUs.  Every node gets duo.xml (2 sockets x 1 core, 2 GPUs), which
# this host can hold, so the CPU binding is real.
cp "$CONF" "$CONF.saved"
python3 - "$W" <<'PY'
import json, sys, random
w = sys.argv[1]
n = 4
edges, coords = [], []
for y in range(n):
    for x in range(n):
        t = y * n + x
        coords.append([x, y])
        if x + 1 < n: edges.append([t, t + 1, 3000])
        if y + 1 < n: edges.append([t, t + n, 1000])
json.dump({"tasks": 16, "edges": edges, "coords": coords}, open(w + "/g16c.json", "w"))
r = random.Random(5)
ring = [[i, (i + 1) % 16, 2000] for i in range(16)]
chords = [[i, (i + 5) % 16, r.randint(100, 900)] for i in range(0, 16, 3)]
json.dump({"tasks": 16, "edges": ring + chords}, open(w + "/g16n.json", "w"))
json.dump({"tasks": 16, "traffic": [[i, i + 8, 1e9] for i in range(8)]},
          open(w + "/m16.json", "w"))
PY
chown "$TPUSER:" "$W"/g16c.json "$W"/g16n.json "$W"/m16.json
POLICIES="auto geometric graph zorder cyclic random modcolor block none"
script t10 "t() { srun \"\$@\" bash -c 'echo \$SLURM_PROCID:\$(hostname):\${TOPOPLACE_CPUS:-}:\${CUDA_VISIBLE_DEVICES:-}' | sort -n | paste -sd' '; }
echo \"NL=\$SLURM_JOB_NODELIST\"
echo \"TPN=\$SLURM_TASKS_PER_NODE\"
for p in $POLICIES; do
	echo \"S_\$p=\$(t --topo-policy=\$p --topo-stencil=4x4)\"
	echo \"GC_\$p=\$(t --topo-policy=\$p --topo-graph=g16c.json)\"
	echo \"GN_\$p=\$(t --topo-policy=\$p --topo-graph=g16n.json)\"
	echo \"M_\$p=\$(t --topo-policy=\$p --topo-gpu-matrix=m16.json)\"
	echo \"SM_\$p=\$(t --topo-policy=\$p --topo-stencil=4x4 --topo-gpu-matrix=m16.json)\"
done"
# what `topoplace map` gives for one case, as JSON in FILE; a map that fails
# (modcolor off a dragonfly) is Slurm's block order.  The plugstack's
# budget (time_budget_ms=300) is an input like the others: the command
# gets it too (a budget selects the launch's stages and predictions)
cli_json() {  # FILE NL TPN POLICY ARGS...
	"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$2" --tasks-per-node "$3" --policy "$4" "${@:5}" \
		--time-budget 300 --format json >"$1" 2>/dev/null ||
		"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$2" --tasks-per-node "$3" --policy block "${@:5}" \
			--time-budget 300 --format json >"$1" 2>/dev/null
}
# every FILE.json of a directory as "FILE=RANK:NODE:CPUS:GPUS ..." (one
# python start for all: it is slow on some machines)
cli_tasks_all() {
	python3 - "$1" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(path))
    cpus = d.get("cpus") or [None] * d["ntasks"]
    gpus = d.get("gpus") or [[] for _ in range(d["ntasks"])]
    print("%s=%s" % (os.path.basename(path)[:-5],
          " ".join("%d:%s:%s:%s" % (t, h, cpus[t] or "", ",".join(map(str, gpus[t])))
                   for t, h in enumerate(d["mapping"]))))
PY
}
for cfg in torus tree; do
	install -m 0644 "$REPO/tests/data/nodes/duo.xml" "$DIR/etc/nodes/duo.xml"
	if [ $cfg = torus ]; then
		printf 'Network=torus Dims=2x2x2 Wrap=yes\nNodeName=node[1-8] CoordOrder=x-major NodeTopology=nodes/duo.xml\n' > "$CONF"
	else
		printf 'Network=tree TopologyFile=%s\nNodeName=node[1-8] NodeTopology=nodes/duo.xml\n' "$DIR/etc/topology.conf" > "$CONF"
	fi
	TP_PLUGSTACK_ARGS="policy=auto time_budget_ms=300 max_file_bytes=1048576" bash "$HERE/cluster.sh" plugstack on
	as_user "salloc -N8 --ntasks-per-node=2 --gpus-per-node=2 ./t10.sh > t10-$cfg.out 2> t10-$cfg.err"
	f=$W/t10-$cfg.out
	nl=$(val NL "$f"); tpn=$(val TPN "$f")
	nbad=0 ncase=0 first=""
	rm -rf "$W/exp10"
	mkdir -p "$W/exp10"
	for p in $POLICIES; do
		for kind in S GC GN M SM; do
			case $kind in
			S) args="--stencil 4x4" ;;
			GC) args="--graph $W/g16c.json" ;;
			GN) args="--graph $W/g16n.json" ;;
			M) args="--gpu-matrix $W/m16.json" ;;
			SM) args="--stencil 4x4 --gpu-matrix $W/m16.json" ;;
			esac
			# shellcheck disable=SC2086
			cli_json "$W/exp10/${kind}_$p.json" "$nl" "$tpn" "$p" $args
		done
	done
	cli_tasks_all "$W/exp10" > "$W/exp10.txt"
	for p in $POLICIES; do
		for kind in S GC GN M SM; do
			exp=$(val "${kind}_$p" "$W/exp10.txt")
			got=$(val "${kind}_$p" "$f")
			if [ $p = none ]; then
				# none leaves everything to Slurm: its order, no binding,
				# Slurm's GPUs
				exp=$(echo "$exp" | tr ' ' '\n' | cut -d: -f1,2 | sed 's/$/::0,1/' | paste -sd' ')
			fi
			ncase=$((ncase + 1))
			if [ -z "$got" ] || [ "$got" != "$exp" ]; then
				nbad=$((nbad + 1))
				[ -z "$first" ] && first="$p $kind: expected [$exp] got [$got]"
			fi
		done
	done
	if [ "$nbad" = 0 ] && [ "$ncase" = 45 ]; then
		ok "10 $cfg: 9 policies x 5 hint kinds: every task's node, CPUs and GPUs = topoplace map's"
	else
		bad "10 $cfg: plugin = topoplace map" "$nbad of $ncase cases differ" "$first" "stderr: $(grep -v '^salloc' "$W/t10-$cfg.err" | head -5)"
	fi
done

# ---- 10b: an irregular mesh graph (no coordinates) on fragmented nodes of
# the tree: whatever the policy, never worse than Slurm's order
python3 - "$W/mesh.json" <<'PY'
import json, sys, random
# the part adjacency of a 2-D mesh cut into 24 irregular parts, numbered
# as a partitioner would (nearby parts, nearby numbers)
r = random.Random(11)
pts = sorted(((r.random(), r.random()) for _ in range(24)), key=lambda p: (int(p[1] * 4), p[0]))
edges = []
for i in range(24):
    d = sorted(range(24), key=lambda j: (pts[i][0] - pts[j][0]) ** 2 + (pts[i][1] - pts[j][1]) ** 2)
    for j in d[1:5]:
        if i < j: edges.append([i, j, r.randint(50, 500)])
json.dump({"tasks": 24, "edges": edges}, open(sys.argv[1], "w"))
PY
chown "$TPUSER:" "$W/mesh.json"
script t10b 'echo "NL=$SLURM_JOB_NODELIST"
echo "TPN=$SLURM_TASKS_PER_NODE"
for p in auto graph geometric cyclic random zorder; do
	srun --topo-policy=$p --topo-graph=mesh.json --topo-cpu-bind=no bash -c "echo \$SLURM_PROCID:\$(hostname)" | sort -n | cut -d: -f2 > mesh-$p.hosts
done'
as_user "salloc -w node1,node3,node6,node8 -N4 --ntasks-per-node=6 ./t10b.sh > t10b.out 2> t10b.err"
nl=$(val NL "$W/t10b.out"); tpn=$(val TPN "$W/t10b.out")
for p in auto graph geometric cyclic random zorder; do
	"$CLI" eval "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$nl" --tasks-per-node "$tpn" --graph "$W/mesh.json" \
		--hostfile "$W/mesh-$p.hosts" --format json > "$W/mesh-$p.eval" 2> "$W/mesh-$p.eval.err"
done
worse=$(python3 - "$W" <<'PY'
import json, sys
out = []
for p in "auto graph geometric cyclic random zorder".split():
    try:
        d = json.load(open("%s/mesh-%s.eval" % (sys.argv[1], p)))
        if d["metrics"]["hop_bytes"] > d["block_metrics"]["hop_bytes"]:
            out.append("%s:%g>%g" % (p, d["metrics"]["hop_bytes"], d["block_metrics"]["hop_bytes"]))
    except Exception as e:
        out.append("%s:%s" % (p, e))
print(" ".join(out))
PY
)
if [ -z "$worse" ] && [ -s "$W/mesh-auto.hosts" ]; then
	ok "10b mesh graph on fragmented tree nodes (node1,3,6,8): every policy through the plugin <= Slurm's order"
else
	bad "10b mesh graph on fragmented tree nodes" "$worse" "stderr: $(head -5 "$W/t10b.err")"
fi
mv -f "$CONF.saved" "$CONF"
TP_PLUGSTACK_ARGS="$ARGS0" bash "$HERE/cluster.sh" plugstack on

# ---- 14: hostile input and faults
# S1: SLURM_NTASKS set by the user (sbatch without -n) beyond Slurm's slots
script t14a "$SHOW
echo \"MAP=\$(ranks)\""
submit t14a -N2 --topo-stencil=10000000x1 --export=ALL,SLURM_NTASKS=10000000
# S2: escape sequences in an option reach no log raw
script t14b "$SHOW"
submit t14b -N1 "--topo-stencil=$(printf '2x1:bytes=\033[31mRED')"
# S3: a TMPDIR with a newline and an escape sequence (the hostfile's
# directory is made in it): the slurmd log's line for the job is one line,
# escaped
script t14s3 "$SHOW"
as_user "d=\$'$H/t14s3\\n\\e[31mFORGED'; mkdir -p \"\$d\" && TMPDIR=\$d sbatch --parsable -o t14s3.out -e t14s3.err -N3 -n10 --topo-stencil=5x2:5pt --topo-report ./t14s3.sh > t14s3.jobid"
# a relative --topo-graph, then cd elsewhere: taken from the submit directory
script t14c "cd /tmp
echo \"MAP=\$(srun -l hostname | sort -n | awk '{print \$2}' | paste -sd' ')\"
echo \"NL=\$SLURM_JOB_NODELIST\"
echo \"TPN=\$SLURM_TASKS_PER_NODE\""
submit t14c -N4 --ntasks-per-node=4 --topo-graph=grid.json
wait_jobs
f=$W/t14a.out
if [ -z "$(val HF "$f")" ] && [ "$(count_lines '^topoplace: error: SLURM_NTASKS: 10000000 tasks, but SLURM_TASKS_PER_NODE gives the nodes 2 task slots' "$W/t14a.err")" = 1 ]; then
	ok "14 S1 SLURM_NTASKS=10000000 from the user: bounded by Slurm's slots, one line, no hostfile"
else
	bad "14 S1 SLURM_NTASKS from the user" "HF [$(val HF "$f")]" "stderr: $(head -3 "$W/t14a.err")"
fi
raw=$(grep -c "$(printf '\033')" "$W/t14b.err" "$DIR"/log/slurmd-*.log 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')
if [ "$raw" = 0 ] && grep -q 'bytes=\(\\x1b\|?\)\[31mRED' "$W/t14b.err"; then
	ok "14 S2 an escape sequence in --topo-stencil: shown escaped, raw nowhere (job stderr, slurmd logs)"
else
	bad "14 S2 escape sequences" "raw ESC in $raw files" "stderr: $(cat -v "$W/t14b.err" | head -3)"
fi
j=$(cat "$W/t14s3.jobid" 2>/dev/null)
l=$(grep -h "topoplace: job $j: " "$DIR"/log/slurmd-*.log 2>/dev/null)
if [ -n "$j" ] && [ "$(printf '%s\n' "$l" | grep -c .)" = 1 ] &&
	printf '%s\n' "$l" | grep -q "SLURM_HOSTFILE=$H/t14s3\\\\x0a\\\\x1b\\[31mFORGED/[^ ]*/hostfile$" &&
	! grep -q '^\[31mFORGED\|^FORGED' "$DIR"/log/slurmd-*.log; then
	ok "14 S3 a TMPDIR with a newline and an escape sequence: the slurmd log's line is one line, escaped (\\x0a, \\x1b)"
else
	bad "14 S3 TMPDIR in the slurmd log" "job [$j] line [$(printf '%s' "$l" | cat -v)]" "stderr: $(head -3 "$W/t14s3.err" 2>/dev/null)"
fi
f=$W/t14c.out
exp=$(expected "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" --graph "$W/grid.json")
check_eq "14 relative --topo-graph, then cd in the script: the srun still finds it (submit directory)" "$exp" "$(val MAP "$f")" "stderr: $(head -3 "$W/t14c.err")"

# srun stopping during its option parsing leaves no private directory;
# a nested srun in a task of a placed step runs; a TMPDIR that cannot be
# written falls back to /tmp
script t14d 'for bad in "--bogus-option" "--mem=xyz" "-n 0"; do
	srun --topo-stencil=2x2 $bad true 2>/dev/null
done
echo "LEFT=$(find /tmp -maxdepth 1 -name "topoplace.job${SLURM_JOB_ID}.srun.*" | wc -l)"
echo "NESTED=$(srun -n2 --topo-stencil=2x1 bash -c "srun -n1 --overlap -N1 hostname >/dev/null 2>&1 && echo y || echo n" | sort -u | paste -sd" ")"
echo "TMP=$(TMPDIR=/nonexistent srun -n4 --topo-stencil=2x2 --topo-report true 2>&1 | grep -c "topoplace: policy auto")"'
as_user "salloc -N2 --ntasks-per-node=2 ./t14d.sh > t14d.out 2> t14d.err"
f=$W/t14d.out
check_eq "14 srun that stops in option parsing (bad option, --mem=xyz, -n 0): no private directory left" "0" "$(val LEFT "$f")"
check_eq "14 nested srun in a task of a placed step runs (SLURM_DISTRIBUTION reset)" "y" "$(val NESTED "$f")" "stderr: $(head -3 "$W/t14d.err")"
check_eq "14 TMPDIR that does not exist: the placement falls back to /tmp" "1" "$(val TMP "$f")" "stderr: $(head -3 "$W/t14d.err")"

# an unreadable GPU matrix: one line (srun says it; its tasks do not
# repeat it); a later heterogeneous component's options: one line; -n 6 on
# nodes holding 8, 8 and 1 CPUs: no node above its CPUs
script t14f 'echo "GM=$(srun -n2 --gpus-per-node=2 --topo-gpu-matrix='"$PRIV"'/secret.json true 2>&1 | grep -c topoplace)"
echo "HET=$(srun -n1 true : -n1 --topo-stencil=1x1 true 2>&1 | grep -c "topoplace: a heterogeneous step is placed by Slurm")"
echo "CPN=$SLURM_JOB_CPUS_PER_NODE"
echo "NL=$SLURM_JOB_NODELIST"
echo "CYC=$(srun -n6 --overlap --topo-policy=cyclic -l hostname | sort -n | awk "{print \$2}" | paste -sd" ")"'
as_user "salloc -N3 -n17 --ntasks-per-node=8 ./t14f.sh > t14f.out 2> t14f.err"
f=$W/t14f.out
check_eq "14 an unreadable --topo-gpu-matrix: one line, not one per side" "1" "$(val GM "$f")" "stderr: $(head -3 "$W/t14f.err")"
check_eq "14 a later heterogeneous component's --topo-* options: one line says they are ignored" "1" "$(val HET "$f")"
over=$(python3 - "$(val CPN "$f")" "$(hosts "$(val NL "$f")")" "$(val CYC "$f")" <<'PY'
import re, sys
cpn = []
for item in sys.argv[1].split(","):
    m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item)
    cpn += [int(m.group(1))] * int(m.group(2) or 1)
nodes = sys.argv[2].split()
got = sys.argv[3].split()
bad = [n for n, c in zip(nodes, cpn) if got.count(n) > c]
print("ok" if len(got) == 6 and not bad else "over: %s (cpus %s, got %s)" % (bad, cpn, got))
PY
)
check_eq "14 srun -n6 --topo-policy=cyclic on nodes with $(val CPN "$f") CPUs: no node gets more tasks than CPUs" "ok" "$over" "stderr: $(head -3 "$W/t14f.err")"

# small steps are not pinned by a site default: with plugstack policy=cyclic,
# a 1-task step gets Slurm's choice, a full step the cyclic order
TP_PLUGSTACK_ARGS="policy=cyclic" bash "$HERE/cluster.sh" plugstack on
script t14e 'echo "ONE=$(srun -n1 printenv SLURM_DISTRIBUTION; echo)"
echo "FULL=$(srun -l hostname | sort -n | awk "{print \$2}" | paste -sd" ")"
echo "NL=$SLURM_JOB_NODELIST"'
as_user "salloc -N4 --ntasks-per-node=2 ./t14e.sh > t14e.out 2> t14e.err"
f=$W/t14e.out
cyc=$(expected "$(val NL "$f")" --tasks-per-node 2 --policy cyclic)
if [ "$(val ONE "$f")" != arbitrary ] && [ "$(val FULL "$f")" = "$cyc" ] && [ -n "$cyc" ]; then
	ok "14 site policy=cyclic: a 1-task step is Slurm's to place, a full step gets the cyclic order"
else
	bad "14 site default on small steps" "ONE [$(val ONE "$f")] FULL [$(val FULL "$f")] cyclic [$cyc]" "stderr: $(head -3 "$W/t14e.err")"
fi
TP_PLUGSTACK_ARGS="$ARGS0" bash "$HERE/cluster.sh" plugstack on

# ---- 15: --topo-report=svg: the picture `topoplace map --format svg` draws
# for the same inputs, byte for byte, written as the user next to the job's
# output (sbatch: the submit directory; srun: its own directory).  Where the
# user cannot write: one line, the job runs, nothing written as root.  An
# unknown value: one line, the text report.
script t15a "$SHOW
echo \"MAP=\$(ranks)\""
submit t15a -N8 --ntasks-per-node=8 --topo-stencil=$S3 --topo-report=svg
RO=$W/readonly
mkdir -p "$RO"
chmod 0755 "$RO"          # root's: the user cannot write in it
script t15b "$SHOW"
j15b=$(as_user "cd '$RO' && sbatch --parsable -o '$W/t15b.out' -e '$W/t15b.err' -N2 --ntasks-per-node=2 --topo-stencil=2x2 --topo-report=svg '$W/t15b.sh'")
script t15c "$SHOW
srun --topo-stencil=$S3 --topo-report=svg true
echo \"PNG=\$(srun --topo-stencil=$S3 --topo-report=png true 2>&1 | grep -c 'topoplace: --topo-report=png: unknown value')\"
echo \"JOB=\$SLURM_JOB_ID\""
as_user "salloc -N8 --ntasks-per-node=8 ./t15c.sh > t15c.out 2> t15c.err"
wait_jobs
f=$W/t15a.out
pic=$W/topoplace-${JOB[t15a]}.svg
"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" \
	--stencil $S3 --format svg --output "$W/t15a.want.svg" 2>/dev/null
if [ -s "$pic" ] && cmp -s "$pic" "$W/t15a.want.svg" &&
   [ "$(stat -c %U:%a "$pic")" = "$TPUSER:600" ] &&
   [ "$(count_lines "^topoplace: picture: $pic\$" "$W/t15a.err")" = 1 ] &&
   python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$pic"; then
	ok "15a sbatch --topo-report=svg: the picture of topoplace map --format svg, byte for byte, the user's (0600), in the submit directory"
else
	bad "15a sbatch --topo-report=svg" "$(ls -l "$pic" 2>&1)" \
		"cmp: $(cmp "$pic" "$W/t15a.want.svg" 2>&1)" "stderr: $(head -5 "$W/t15a.err")"
fi
if [ -z "$(ls -A "$RO")" ] && [ -n "$(val NL "$W/t15b.out")" ] &&
   [ "$(count_lines "^topoplace: --topo-report=svg: cannot write in $RO/: Permission denied" "$W/t15b.err")" = 1 ]; then
	ok "15b submit directory the user cannot write: one line, the job runs, nothing written (not as root either)"
else
	bad "15b unwritable submit directory" "job ${j15b:-?}, left: $(ls -A "$RO")" "stderr: $(head -5 "$W/t15b.err")"
fi
f=$W/t15c.out
pic=$W/topoplace-$(val JOB "$f").srun.svg
"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$(val NL "$f")" --tasks-per-node "$(val TPN "$f")" \
	--stencil $S3 --format svg --output "$W/t15c.want.svg" 2>/dev/null
if [ -s "$pic" ] && cmp -s "$pic" "$W/t15c.want.svg" &&
   [ "$(stat -c %U "$pic")" = "$TPUSER" ]; then
	ok "15c srun --topo-report=svg inside salloc: the same picture, in srun's directory"
else
	bad "15c srun --topo-report=svg" "$(ls -l "$pic" 2>&1)" "cmp: $(cmp "$pic" "$W/t15c.want.svg" 2>&1)" \
		"stderr: $(grep topoplace "$W/t15c.err" | head -5)"
fi
check_eq "15d --topo-report=png: one line says the value is unknown" "1" "$(val PNG "$f")" \
	"stderr: $(head -5 "$W/t15c.err")"
# ---- 16: AMD nodes.  gres.conf Flags=amd_gpu_env: Slurm gives the tasks
# ROCR_VISIBLE_DEVICES only (as with AutoDetect=rsmi); the nodes are the
# example mi250x (8 GCDs, xGMI links from its rocm-smi text).  Heavy pairs
# (0,2) (1,3) on GCDs 0-3: local-rank order puts each over one xGMI link,
# MAGC puts each on one MI250X package (GCDs 0-1, 2-3: 4 links).
wait_jobs
bash "$HERE/cluster.sh" stop >/dev/null 2>&1
if TP_GPUS=8 TP_NODE_MODEL=mi250x TP_GPU_ENV=amd bash "$HERE/cluster.sh" start >/dev/null 2>&1; then
	echo '{"tasks": 4, "traffic": [[0, 2, 1e9], [1, 3, 1e9]]}' > "$W/gm4.json"
	chown "$TPUSER:" "$W/gm4.json"
	script t16 'g() { srun "$@" bash -c "echo \$SLURM_PROCID:\${ROCR_VISIBLE_DEVICES:-}:\${CUDA_VISIBLE_DEVICES:-none}" | sort -n | paste -sd" "; }
echo "PLAIN=$(g)"
echo "SPLIT=$(g --topo-stencil=4x1)"
echo "SEL=$(g --topo-stencil=4x1 --topo-policy=block --topo-gpu-matrix=gm4.json --topo-report)"'
	as_user "salloc -N1 --ntasks-per-node=4 --gpus-per-node=4 ./t16.sh > t16.out 2> t16.err"
	f=$W/t16.out
	check_eq "16a AMD: Slurm's ROCR_VISIBLE_DEVICES untouched without a hint" \
		"0:0,1,2,3:none 1:0,1,2,3:none 2:0,1,2,3:none 3:0,1,2,3:none" "$(val PLAIN "$f")" "stderr: $(head -3 "$W/t16.err")"
	check_eq "16b AMD: ROCR_VISIBLE_DEVICES split in local-rank order, CUDA_VISIBLE_DEVICES not invented" \
		"0:0:none 1:1:none 2:2:none 3:3:none" "$(val SPLIT "$f")" "stderr: $(head -3 "$W/t16.err")"
	sel=$(val SEL "$f")
	pairs=$(python3 -c '
import sys
g = {int(t.split(":")[0]): t.split(":")[1] for t in sys.argv[1].split()}
pk = ({"0", "1"}, {"2", "3"})
print("ok" if len(g) == 4 and {g[0], g[2]} in pk and {g[1], g[3]} in pk else "no")' "$sel" 2>/dev/null)
	if [ "$pairs" = ok ] && [ "$(count_lines '^topoplace: node[0-9]*: GPU selection applied (magc, 4 tasks, 1 GPU per task, step GPUs 0,1,2,3): max GPU-link congestion 20 -> 5 ms' "$W/t16.err")" = 1 ]; then
		ok "16c AMD: --topo-gpu-matrix puts each heavy pair on one MI250X package (xGMI x4), 20 -> 5 ms"
	else
		bad "16c AMD --topo-gpu-matrix" "got: [$sel]" "stderr: $(cat "$W/t16.err")"
	fi
else
	bad "16 AMD cluster (8 GPUs, mi250x, amd_gpu_env) did not start" "$(tail -3 "$DIR"/log/*.log 2>/dev/null)"
fi

# ---- 17: node models found on the node.  topoplace.conf names no
# NodeTopology=; hwloc sees every node as the example nvl4 (HWLOC_XMLFILE in
# slurmd's environment, as lstopo --input would) and a stand-in NVML
# (tests/standin, built by the tests) answers with its NVLink pairs 0-1 and
# 2-3.  The step's tasks must get the same GPUs as with the pinned model (4e),
# and slurmstepd must have cached the model, root's, in the node's own
# node_cache=.
wait_jobs
bash "$HERE/cluster.sh" stop >/dev/null 2>&1
SI=$B/standin
NV4=$REPO/conf/examples/nodes/nvl4
if [ ! -r "$SI/libnvidia-ml.so.1" ]; then
	bad "17 detected node models" "no stand-in NVML in $SI (make BUILD=$BUILD standin)"
elif TP_GPUS=4 TP_NODE_MODEL= \
	TP_SLURMD_ENV="HWLOC_XMLFILE=$NV4.xml LD_LIBRARY_PATH=$SI TOPOPLACE_STANDIN_NVML=$REPO/tests/standin/nvl4.nvml" \
	bash "$HERE/cluster.sh" start >/dev/null 2>&1; then
	grep -q NodeTopology "$CONF" && bad "17 topoplace.conf has no NodeTopology=" "$(cat "$CONF")"
	cp "$REPO/tests/cli/data/gpu-pairs8.json" "$W/gm8.json"
	chown "$TPUSER:" "$W/gm8.json"
	script t17 'g() { srun "$@" bash -c "echo \$SLURM_PROCID:\$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -n | paste -sd" "; }
echo "NL=$SLURM_JOB_NODELIST"
echo "TPN=$SLURM_TASKS_PER_NODE"
echo "SEL=$(g --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm8.json --topo-report)"
echo "SEL2=$(g --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm8.json)"'
	as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=4 ./t17.sh > t17.out 2> t17.err"
	f=$W/t17.out
	exp=$(map_gpus "$f" --stencil 8x1 --policy block --gpu-matrix "$W/gm8.json" \
		--node-topology "$NV4.xml" --gpu-links "$NV4.links")
	sel=$(val SEL "$f")
	if [ "$(nvpairs "$sel")" = ok ] && [ "$sel" = "$exp" ] &&
		[ "$(count_lines '^topoplace: node[0-9]*: GPU selection applied (magc, 4 tasks, 1 GPU per task, step GPUs 0,1,2,3): max GPU-link congestion 200\(\.01\)\{0,1\} -> 10 ms' "$W/t17.err")" = 2 ]; then
		ok "17a no NodeTopology=: the model found on the node (hwloc + NVML) gives the pinned model's GPUs"
	else
		bad "17a detected model" "expected: [$exp]" "got:      [$sel]" "stderr: $(cat "$W/t17.err")"
	fi
	check_eq "17b the second step reads the cache: the same GPUs" "$sel" "$(val SEL2 "$f")"
	cache=$(ls "$DIR"/state/*/cache/node-*.xml 2>/dev/null | head -1)
	if [ -n "$cache" ] && [ "$(stat -c '%U %a' "$cache")" = "root 644" ] &&
		grep -q 'name="NVLinkBandwidth"' "$cache" &&
		grep -q '^<!-- topoplace node cache: complete; hwloc, NVML -->$' "$cache" &&
		[ "$("$CLI" node-info "$cache" | grep -c 'NV4')" -ge 1 ]; then
		ok "17c slurmstepd cached the node's model: root's, 0644, one hwloc XML with the NVLinks, recorded complete (hwloc, NVML)"
	else
		bad "17c the node's cache" "$(ls -l "$DIR"/state/*/cache/ 2>&1 | head -8)"
	fi
	# a cache directory others may write is neither read nor written
	for d in "$DIR"/state/*/cache; do rm -f "$d"/node-*.xml; chmod 1777 "$d"; done
	script t17d 'echo "SEL=$(srun --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm8.json bash -c "echo \$SLURM_PROCID:\$SLURM_LOCALID:\$CUDA_VISIBLE_DEVICES" | sort -n | paste -sd" ")"'
	as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=4 ./t17d.sh > t17d.out 2> t17d.err"
	left=$(find "$DIR"/state/*/cache -type f 2>/dev/null | wc -l)
	if [ "$(val SEL "$W/t17d.out")" = "$sel" ] && [ "$left" = 0 ]; then
		ok "17d a cache directory others may write: not used, the node detected again, the same GPUs"
	else
		bad "17d untrusted cache directory" "got: [$(val SEL "$W/t17d.out")] files: $left" "stderr: $(head -5 "$W/t17d.err")"
	fi
	for d in "$DIR"/state/*/cache; do chmod 0755 "$d"; done
else
	bad "17 cluster with detected node models did not start" "$(tail -3 "$DIR"/log/*.log 2>/dev/null)"
fi

# ---- 17e: NVML installed but not ready (the stand-in without its
# description, as before the driver is up): the steps run, slurmstepd
# caches hwloc's part marked partial, and each step asks NVML again; the
# report names the part missing.  CPU binding on: nvl4's CPUs are not all
# this host's, so the CPU line of --topo-report names the model.
wait_jobs
bash "$HERE/cluster.sh" stop >/dev/null 2>&1
if [ -r "$SI/libnvidia-ml.so.1" ] && TP_GPUS=4 TP_NODE_MODEL= \
	TP_PLUGSTACK_ARGS="policy=auto time_budget_ms=300 max_file_bytes=1048576" \
	TP_SLURMD_ENV="HWLOC_XMLFILE=$NV4.xml LD_LIBRARY_PATH=$SI" \
	bash "$HERE/cluster.sh" start >/dev/null 2>&1; then
	for d in "$DIR"/state/*/cache; do rm -f "$d"/node-*.xml; done
	script t17e 'for i in 1 2; do srun --topo-stencil=8x1 --topo-policy=block --topo-gpu-matrix=gm8.json --topo-report true; done; echo RAN=yes'
	as_user "salloc -N2 --ntasks-per-node=4 --gpus-per-node=4 ./t17e.sh > t17e.out 2> t17e.err"
	cache=$(ls "$DIR"/state/*/cache/node-*.xml 2>/dev/null | head -1)
	if [ "$(val RAN "$W/t17e.out")" = yes ] && [ -n "$cache" ] &&
		grep -q '^<!-- topoplace node cache: partial; hwloc; NVML not ready -->$' "$cache" &&
		! grep -q 'name="NVLinkBandwidth"' "$cache" &&
		[ "$(count_lines "^topoplace: .*detected (cached: hwloc; NVML not ready)" "$W/t17e.err")" -ge 2 ]; then
		ok "17e NVML not ready: the steps run, the cache holds hwloc's part marked partial, the report says \"detected (cached: hwloc; NVML not ready)\""
	else
		bad "17e NVML not ready" "cache: $(grep -m1 'topoplace node cache' "$cache" 2>/dev/null)" "stderr: $(head -8 "$W/t17e.err")"
	fi
else
	bad "17e cluster with an NVML not ready did not start" "$(tail -3 "$DIR"/log/*.log 2>/dev/null)"
fi

# ---- nothing left behind
wait_jobs
left=$(find /tmp "$H" -maxdepth 1 -name 'topoplace.job*' 2>/dev/null | head -5)
if [ -z "$left" ]; then
	ok "no private hostfile directories left behind"
else
	bad "no private hostfile directories left behind" "$left"
fi

summary
[ "$fail" -eq 0 ]
