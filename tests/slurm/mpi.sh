#!/bin/bash
# topoplace — MPI on the test cluster (tests/slurm/cluster.sh: 8 nodes on
# this host), with Debian's Open MPI 4.1 and MPICH 4.0 side by side:
#
#   trace   a 3-D halo program under libtopoplace-trace (both MPIs): the
#           graph equals its stencil, and topoplace recognises it
#   launch  a job placed by that trace (sbatch --topo-graph): under srun
#           --mpi=pmix, srun --mpi=pmi2, mpirun and mpiexec (the last two
#           with `topoplace bind`), rank r runs on the node the mapping
#           gives, with the CPUs and GPUs topoplace map gives it; the
#           launchers' daemons raise no topoplace line
#   any order  plain mpirun and mpiexec in their own order, with topoplace
#           bind: no two ranks of a node share a CPU or GPU, one line says
#           the placement was not followed
#   formats topoplace map --format rankfile / mpich read by the real
#           mpirun --rankfile and mpiexec -f
#
#   sh tests/slurm/mpi.sh     (make slurm-tests runs it after run.sh)
#
# Needs root, like run.sh (SKIPPED otherwise, a failure with
# TOPOPLACE_REQUIRE_SLURM_TESTS=1).  Every node gets tests/data/nodes/
# duo.xml (2 sockets x 1 core, 2 GPUs), which this host can hold, so CPU
# binding is real.  Open MPI 4.1.4's TCP transport sometimes dies in
# MPI_Init on its own (about 1 run in 30 here): an Open MPI launch that
# fails is run once more, and the test says so.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
DIR=$TP_SLURM_DIR
TPUSER=${TP_USER:-tpuser}
export TP_USER=$TPUSER TP_NNODES=8 TP_CPUS=8 TP_GPUS=2 TP_DIMS=2x2x2 TP_NODE_MODEL=
export TP_PLUGIN=$B/topoplace.so
export TP_PLUGSTACK_ARGS="policy=auto time_budget_ms=300 max_file_bytes=1048576"
CONF=$DIR/etc/topoplace.conf
T0=$(date +%s)

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1${TP_TIMES:+ [$(( $(date +%s) - T0 ))s]}"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }
summary() { echo "mpi: took $(( $(date +%s) - T0 )) s"; echo "mpi: $pass passed, $fail failed"; }
skip() {
	echo "mpi: SKIPPED: $*"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "mpi: TOPOPLACE_REQUIRE_SLURM_TESTS=1: skipping counts as a failure"
		echo "mpi: 0 passed, 1 failed"
		exit 1
	fi
	exit 0
}
[ "$(id -u)" = 0 ] || skip "the MPI cluster tests need root (as run.sh)"
[ -n "${TP_SLURM_PREFIX:-}" ] || sh "$REPO/contrib/install-deps.sh" slurm >/dev/null ||
	skip "the Slurm packages are missing"
sh "$REPO/contrib/install-deps.sh" mpi >/dev/null || skip "Open MPI and MPICH are missing and cannot be installed"
for f in topoplace.so topoplace trace/openmpi/libtopoplace-trace.so trace/mpich/libtopoplace-trace.so; do
	if [ ! -r "$B/$f" ]; then
		echo "mpi: $B/$f not built (make BUILD=$BUILD all, with MPI installed)"
		echo "mpi: 0 passed, 1 failed"
		exit 1
	fi
done

exec 9>/tmp/topoplace-slurm.lock
flock 9
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop
trap 'bash "$HERE/cluster.sh" stop >/dev/null 2>&1' EXIT
if ! bash "$HERE/cluster.sh" start; then
	echo "mpi: the test cluster did not start"
	echo "mpi: 0 passed, 1 failed"
	exit 1
fi
# shellcheck disable=SC1091
. "$DIR/env.sh"
# Slurm's own order, as the release under test lays tasks out: what every
# expected mapping is judged against, as the plugin judges it
SLURM_ORDER=(--slurm-conf "$SLURM_CONF" --slurm-version "$(scontrol --version | awk '{print $2}')")
mkdir -p "$DIR/etc/nodes"
chmod 0755 "$DIR/etc/nodes"
install -m 0644 "$REPO/tests/data/nodes/duo.xml" "$DIR/etc/nodes/duo.xml"
printf 'Network=torus Dims=2x2x2 Wrap=yes\nNodeName=node[1-8] CoordOrder=x-major NodeTopology=nodes/duo.xml\n' > "$CONF"
chmod 0644 "$CONF"
H=$DIR/home/$TPUSER
W=$H/mpi
rm -rf "$W"
mkdir -p "$W"
# what the jobs run, where the user can read it
install -m 0755 "$B/topoplace" "$DIR/lib/topoplace"
# the library the command links, where it looks ($ORIGIN, its SONAME)
install -m 0755 "$B/libtopoplace.so" "$DIR/lib/libtopoplace.so.1"
install -m 0755 "$B/trace/openmpi/libtopoplace-trace.so" "$W/trace-openmpi.so"
install -m 0755 "$B/trace/mpich/libtopoplace-trace.so" "$W/trace-mpich.so"
cp "$HERE"/mpi/*.c "$W/"
chown -R "$TPUSER:" "$W"
CLI=$DIR/lib/topoplace

as_user() {
	setpriv --reuid="$TPUSER" --regid="$TPUSER" --init-groups \
		env -i PATH=${TP_SLURM_PREFIX:+$TP_SLURM_PREFIX/bin:}/usr/local/bin:/usr/bin:/bin HOME="$H" USER="$TPUSER" \
		LOGNAME="$TPUSER" SLURM_CONF="$SLURM_CONF" LANG=C \
		bash -c "cd '$W' && $1"
}
script() {
	{ echo "#!/bin/bash"; printf '%s\n' "$2"; } > "$W/$1.sh"
	chown "$TPUSER:" "$W/$1.sh"
	chmod 0755 "$W/$1.sh"
}
wait_jobs() {
	local i q
	for ((i = 0; i < 1800; i++)); do
		if q=$(squeue -h -o %i 2>/dev/null) && [ -z "$q" ]; then return 0; fi
		sleep 0.1
	done
	echo "     (jobs still queued after 180 s)"; squeue
	return 1
}
val() { sed -n "s/^$1=//p" "$2" | head -1; }
# RANK r ... HOST h CPUS c CVD g lines -> "r:h:c:g ..." in rank order
ranks() { awk '$1 == "RANK" {print $2 ":" $6 ":" $8 ":" $10}' "$1" 2>/dev/null | sort -n | paste -sd' '; }
# ranks that share a host and do not all know it (their SHARED counts
# against the ranks on that host): "" when every rank knows its neighbours
not_local() {
	awk '$1 == "RANK" {h[$2] = $6; k[$2] = $12; n[$6]++}
	     END {for (r in h) if (k[r] != n[h[r]]) printf "rank %s on %s: shared %s of %d; ", r, h[r], k[r], n[h[r]]}' "$1" 2>/dev/null
}
# retried launches, said by the job's output
retried() { grep -h '^RETRIED ' "$@" 2>/dev/null | sed 's/^/     note: /'; }

# In the job scripts: L NAME CMD... runs an MPI launch into NAME.txt; an
# Open MPI launch that fails is run up to twice more (and says so): its
# PMIx start-up under srun has segfaulted twice in a row on a loaded CI
# machine, and passed on the next run.
# A launch that hangs (a launcher waiting for a proxy that never came) is
# stopped after 120 s: its checks fail, the suite goes on.
LAUNCH='L() {
	local name=$1 try; shift
	timeout 120 "$@" > $name.txt 2> $name.stderr && return 0
	case "$*" in *ompi*|*openmpi*) ;; *) return 1 ;; esac
	for try in 2 3; do
		echo "RETRIED $name: $(grep -v "^$" $name.stderr | head -1)"
		timeout 120 "$@" > $name.txt 2> $name.stderr && return 0
	done
	return 1
}'

# ------------------------------------------------------------ build
if ! as_user "mpicc.openmpi -O1 -o ring-ompi ring.c && mpicc.openmpi -O1 -o halo-ompi halo3d.c &&
	mpicc.mpich -O1 -o ring-mpich ring.c && mpicc.mpich -O1 -o halo-mpich halo3d.c" > "$W/build.log" 2>&1; then
	bad "0 the MPI test programs build (mpicc.openmpi, mpicc.mpich)" "$(tail -5 "$W/build.log")"
	summary
	exit 1
fi
ok "0 ring.c and halo3d.c built with mpicc.openmpi and mpicc.mpich"

# ------------------------------------------------------------ trace
# a 3x2x2 halo exchange (periodic along x), 2 iterations, both MPIs
script tr "$LAUNCH
L tr-ompi srun --mpi=pmix --export=ALL,LD_PRELOAD=$W/trace-openmpi.so,TOPOPLACE_TRACE=$W/trace-ompi.json ./halo-ompi 3 2 2 x 2
L tr-mpich srun --mpi=pmi2 --export=ALL,LD_PRELOAD=$W/trace-mpich.so,TOPOPLACE_TRACE=$W/trace-mpich.json ./halo-mpich 3 2 2 x 2
L tr-coll-ompi srun --mpi=pmix --export=ALL,LD_PRELOAD=$W/trace-openmpi.so,TOPOPLACE_TRACE=$W/trace-coll-ompi.json ./halo-ompi 3 2 2 x 2 coll
L tr-coll-mpich srun --mpi=pmi2 --export=ALL,LD_PRELOAD=$W/trace-mpich.so,TOPOPLACE_TRACE=$W/trace-coll-mpich.json ./halo-mpich 3 2 2 x 2 coll"
as_user "salloc -N6 --ntasks-per-node=2 ./tr.sh > tr.out 2> tr.err"
# the stencil the program runs: x faces 100 doubles, y 200, z 300, each
# sent both ways twice; periodic x
cmp_trace() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
X, Y, Z = 3, 2, 2
want = {}
for z in range(Z):
    for y in range(Y):
        for x in range(X):
            t = x + X * (y + Y * z)
            for axis, (dx, dy, dz), per in ((0, (1, 0, 0), 100), (1, (0, 1, 0), 200), (2, (0, 0, 1), 300)):
                for s in (1, -1):
                    nx, ny, nz = x + s * dx, y + s * dy, z + s * dz
                    if axis == 0: nx %= X
                    if not (0 <= ny < Y and 0 <= nz < Z): continue
                    u = nx + X * (ny + Y * nz)
                    want[(t, u)] = want.get((t, u), 0) + 2 * per * 8
got = {}
for u, v, b in d["edges"]:
    got[(u, v)] = got.get((u, v), 0) + b
cart = d.get("cart", {})
# two iterations, one message a pair each: the bytes add up 2 exchanges
ok = (d["tasks"] == 12 and d["directed"] is True and got == want and
      d.get("exchanges") == 2 and
      cart.get("dims") == [2, 2, 3] and cart.get("periods") == [False, False, True] and
      cart.get("stencil") == "3x2x2")
print("ok" if ok else "differs: %d edges, want %d; cart %s" % (len(got), len(want), cart))
PY
}
for m in ompi mpich; do
	r=$(cmp_trace "$W/trace-$m.json" 2>&1)
	if [ "$r" = ok ]; then
		ok "trace $m: the halo program's graph (PMPI) = its 3x2x2 stencil, both directions, 2 exchanges, with MPI_Cart_create's dims"
	else
		bad "trace $m: graph = stencil" "$r" "$(cat "$W/tr-$m.stderr" 2>/dev/null | head -3)"
	fi
done
# the same with an all-reduce, an all-to-all and an all-gather after it:
# their messages are the collectives' rounds (the edges' fourth element),
# as the trace library expands them (recursive doubling over 12 ranks: 8
# in the doubling, 4 folded in and out; Bruck's all-to-all of small
# blocks: to r + 1, 2, 4, 8; Bruck's all-gather on 12 ranks: to r - 1, 2,
# 4, 8); the halo's sends are none
cmp_rounds() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
P, pof2 = 12, 8
want = {}
def add(u, v, n=1):
    want[(u, v)] = want.get((u, v), 0) + n
for r in range(P):
    if r >= pof2:
        add(r, r - pof2)
    else:
        for m in (1, 2, 4):
            add(r, r ^ m)
        if r + pof2 < P:
            add(r, r + pof2)
    for k in (1, 2, 4, 8):      # Bruck's all-to-all of 4-byte blocks
        add(r, (r + k) % P)
    for k in (1, 2, 4, 8):      # Bruck's all-gather of an int
        add(r, (r - k) % P)
got = {}
for e in d["edges"]:
    if len(e) == 4:
        got[(e[0], e[1])] = got.get((e[0], e[1]), 0) + e[3]
print("ok" if got == want else "rounds differ: %d pairs, want %d; e.g. %s" % (
    len(got), len(want), sorted(set(got.items()) ^ set(want.items()))[:4]))
PY
}
for m in ompi mpich; do
	r=$(cmp_rounds "$W/trace-coll-$m.json" 2>&1)
	if [ "$r" = ok ]; then
		ok "trace $m: an all-reduce, an all-to-all and an all-gather are the edges' rounds (recursive doubling, Bruck, Bruck), the halo none"
	else
		bad "trace $m: collectives' rounds" "$r" "$(cat "$W/tr-coll-$m.stderr" 2>/dev/null | head -3)"
	fi
done
retried "$W/tr.out"
SPEC=3x2x2:7pt:periodic=x:bytes=3200:weights=1,2,3
"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes 'node[1-6]' --tasks-per-node 2 --graph "$W/trace-ompi.json" \
	--format json > "$W/tr-map.json" 2> "$W/tr-map.err"
"$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes 'node[1-6]' --tasks-per-node 2 --stencil "$SPEC" \
	--format json > "$W/st-map.json" 2>/dev/null
r=$(python3 - "$W/tr-map.json" "$W/st-map.json" "$SPEC" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
note = "trace-ompi.json: a regular 7-point stencil, mapped as --stencil " + sys.argv[3]
print("ok" if a["mapping"] == b["mapping"] and any(n.endswith(note) for n in a["notes"])
      else "mapping %s vs %s, notes %s" % (a["mapping"], b["mapping"], a["notes"]))
PY
)
if [ "$r" = ok ] && cmp -s "$W/trace-ompi.json" "$W/trace-mpich.json"; then
	ok "trace: recognised as --stencil $SPEC and mapped as that stencil (both MPIs' traces identical)"
else
	bad "trace recognised" "$r" "$(cat "$W/tr-map.err")"
fi

# ------------------------------------------------------------ launchers
# the trace places a job of 12 ranks on 6 nodes; every launcher follows,
# and each rank gets the CPU and GPU topoplace map gives it
script la "$LAUNCH
echo \"NL=\$SLURM_JOB_NODELIST\"
echo \"TPN=\$SLURM_TASKS_PER_NODE\"
L la-pmix srun --mpi=pmix ./ring-ompi
L la-pmi2 srun --mpi=pmi2 ./ring-mpich
L la-mpirun mpirun.openmpi --map-by seq --hostfile \"\$TOPOPLACE_HOSTFILE\" $CLI bind -- ./ring-ompi
L la-mpiexec mpiexec.mpich $CLI bind -- ./ring-mpich
L la-srunbind srun --mpi=pmix $CLI bind -- ./ring-ompi
# the user's own files, which nothing topoplace exports may change
scontrol show hostnames \"\$SLURM_JOB_NODELIST\" > nodes.txt
awk '{print \"rank \" 2*(NR-1) \"=\" \$1 \" slot=0\"; print \"rank \" 2*(NR-1)+1 \"=\" \$1 \" slot=1\"}' nodes.txt > own.rankfile
awk '{print \$1 \" slots=2\"}' nodes.txt > own.hosts
L la-ownrf mpirun.openmpi --rankfile own.rankfile ./ring-ompi
L la-ownhf mpirun.openmpi --hostfile own.hosts -np 12 ./ring-ompi
L la-plain mpirun.openmpi ./ring-ompi
echo \"HYDRA=\${HYDRA_LAUNCHER_EXEC:-}\"
cat la-*.stderr >&2"
as_user "sbatch --parsable -o la.out -e la.err -N6 --ntasks-per-node=2 --gpus-per-node=2 --topo-graph=trace-ompi.json ./la.sh" > "$W/la.jobid" 2>&1
wait_jobs
f=$W/la.out
nl=$(val NL "$f"); tpn=$(val TPN "$f")
# tasks_of ARGS...: "rank:node:cpus:gpus ..." of topoplace map's tasks
# format for the traced job's nodes and pattern
tasks_of() {
	"$CLI" map --config "$CONF" --nodes "$nl" --tasks-per-node "$tpn" --graph "$W/trace-ompi.json" \
		"$@" --format tasks 2>/dev/null |
		sed -n 's/^rank \([0-9]*\)=\([^ ]*\) cpus=\([^ ]*\) gpus=\(.*\)/\1:\2:\3:\4/p' | paste -sd' '
}
exp=$(tasks_of "${SLURM_ORDER[@]}")
blk=$("$CLI" map "${SLURM_ORDER[@]}" --config "$CONF" --nodes "$nl" --tasks-per-node "$tpn" --graph "$W/trace-ompi.json" \
	--policy block 2>/dev/null | paste -sd' ')
nodes_of() { echo "$1" | tr ' ' '\n' | cut -d: -f2 | paste -sd' '; }
if [ -n "$exp" ] && [ "$(nodes_of "$exp")" != "$blk" ]; then
	ok "launch: the traced job's mapping differs from Slurm's block order"
else
	bad "launch: a mapping that differs from block order" "map [$exp] block [$blk]"
fi
# Hydra starts one proxy per run of ranks: a mapping where a node's ranks
# are not one run is not given to it (its ranks would not share memory)
runs_ok=$(echo "$exp" | tr ' ' '\n' | cut -d: -f2 | uniq | sort | uniq -d)
# Hydra's own order then: each node's ranks one block, in the hostlist's
# order (not Slurm's step layout); topoplace bind takes it
# (TOPOPLACE_MPIEXEC=blocks)
blk_tasks=$(tasks_of --policy block)
if [ -z "$runs_ok" ]; then
	[ -n "$(val HYDRA "$f")" ] && ok "launch: each node's ranks are one run: mpiexec is given the placement" ||
		bad "launch: HYDRA_LAUNCHER_EXEC exported for a one-run-per-node mapping" "$(val HYDRA "$f")"
else
	[ -z "$(val HYDRA "$f")" ] && ok "launch: a node holds ranks apart: mpiexec keeps Slurm's order (nothing exported)" ||
		bad "launch: nothing exported for Hydra when a node's ranks are apart" "$(val HYDRA "$f")"
fi
ver=${SLURM_ORDER[3]}
pmi2_old=$([ "$(printf '%s\n24.05\n' "$ver" | sort -V | head -1)" = 24.05 ] && echo 0 || echo 1)
slurm_tasks=$(tasks_of "${SLURM_ORDER[@]}" --policy block)
for t in pmix:"srun --mpi=pmix (Open MPI)" pmi2:"srun --mpi=pmi2 (MPICH)" \
	 mpirun:"mpirun --map-by seq --hostfile \$TOPOPLACE_HOSTFILE + topoplace bind (Open MPI)" \
	 mpiexec:"mpiexec + topoplace bind (MPICH Hydra)" \
	 srunbind:"srun --mpi=pmix + topoplace bind (a no-op under srun)"; do
	name=${t%%:*}; what=${t#*:}
	got=$(ranks "$W/la-$name.txt")
	exp_saved=$exp
	if [ "$name" = mpiexec ] && [ -n "$runs_ok" ]; then
		exp=$blk_tasks; what="$what, Hydra's own order"
	fi
	if [ "$name" = pmi2 ] && [ "$pmi2_old" = 1 ]; then
		# srun's PMI-2 before 24.05 would tell MPICH each rank of a
		# placed step is alone: the step keeps Slurm's order
		exp=$slurm_tasks; what="$what before Slurm 24.05, Slurm's order"
	fi
	nl_bad=$(not_local "$W/la-$name.txt")
	if [ -s "$W/la-$name.txt" ] && [ -z "$nl_bad" ]; then
		ok "launch $what: ranks that share a node are local to each other (MPI_COMM_TYPE_SHARED)"
	else
		bad "launch $what: local ranks" "$nl_bad" "$(head -3 "$W/la-$name.stderr" 2>/dev/null)"
	fi
	if [ -n "$exp" ] && [ "$(nodes_of "$got")" = "$(nodes_of "$exp")" ]; then
		ok "launch $what: rank r runs on the node the mapping gives"
	else
		bad "launch $what: ranks on the mapping's nodes" "expected: [$(nodes_of "$exp")]" "got:      [$(nodes_of "$got")]" \
			"$(head -3 "$W/la-$name.stderr" 2>/dev/null)"
	fi
	if [ -n "$exp" ] && [ "$got" = "$exp" ]; then
		ok "launch $what: each rank's CPU and GPU = topoplace map's"
	else
		bad "launch $what: CPUs and GPUs" "expected: [$exp]" "got:      [$got]"
	fi
	exp=$exp_saved
done
# the user's own rankfile and slots= hostfile in the placed job
hosts=$(paste -sd' ' "$W/nodes.txt" 2>/dev/null)
pairs=$(for h in $hosts; do printf '%s %s ' "$h" "$h"; done | sed 's/ $//')
for t in ownrf:"mpirun --rankfile (the user's own)" ownhf:"mpirun --hostfile with slots= (the user's own)" \
	 plain:"plain mpirun (Open MPI's own order)"; do
	name=${t%%:*}; what=${t#*:}
	got=$(ranks "$W/la-$name.txt" | tr ' ' '\n' | cut -d: -f2 | paste -sd' ')
	if [ -n "$pairs" ] && [ "$got" = "$pairs" ] && [ -z "$(not_local "$W/la-$name.txt")" ]; then
		ok "launch $what in a placed job: ranks where the user's file says, local to each other"
	else
		bad "launch $what in a placed job" "expected: [$pairs]" "got:      [$got]" \
			"$(grep -v '^$' "$W/la-$name.stderr" 2>/dev/null | head -3)"
	fi
done
retried "$f"
n=$(grep -c topoplace "$W/la.err" 2>/dev/null)
if [ "$n" = 0 ] && [ -s "$W/la.jobid" ]; then
	ok "launch: mpirun's and mpiexec's daemons (srun steps of other task counts): no topoplace line"
else
	bad "launch: quiet daemons" "$(grep topoplace "$W/la.err" | head -3)"
fi

# ------------------------------------------------------------ any order
# launchers that do not follow the placement, with topoplace bind: a plain
# mpirun (Open MPI's own order) and an mpiexec left in Hydra's own order
# (the batch step's HYDRA_* settings removed).  Each rank binds by its
# launcher's local rank: no two ranks of a node share a CPU or a GPU, and
# one line a launch says that the placement was not followed.
script lp "$LAUNCH
L lp-mpirun mpirun.openmpi $CLI bind -- ./ring-ompi
L lp-mpiexec env -u HYDRA_HOST_FILE -u HYDRA_RMK -u HYDRA_LAUNCHER -u HYDRA_LAUNCHER_EXEC -u TOPOPLACE_MPIEXEC mpiexec.mpich $CLI bind -- ./ring-mpich"
as_user "sbatch --parsable -o lp.out -e lp.err -N6 --ntasks-per-node=2 --gpus-per-node=2 --topo-graph=trace-ompi.json ./lp.sh" > "$W/lp.jobid" 2>&1
wait_jobs
# "host:cpu" and "host:gpu" items that two ranks hold, and ranks without
# a single CPU or GPU of their own
shared() {
	awk '$1 == "RANK" {
		n++
		split($8, c, ","); for (i in c) { k = split(c[i], r, "-"); lo = r[1]; hi = k > 1 ? r[2] : r[1]
			for (x = lo; x <= hi; x++) if (cpu[$6 ":" x]++) printf "cpu %s:%d ", $6, x }
		if ($10 == "" || $10 ~ /,/) printf "rank %s has GPUs [%s] ", $2, $10
		split($10, g, ","); for (i in g) if (gpu[$6 ":" g[i]]++) printf "gpu %s:%s ", $6, g[i]
	} END { if (n != 12) printf "%d ranks, not 12", n }' "$1" 2>/dev/null
}
for t in mpirun:"plain mpirun + topoplace bind (Open MPI's own order)" \
	 mpiexec:"plain mpiexec + topoplace bind (Hydra's own order)"; do
	name=${t%%:*}; what=${t#*:}
	sh_=$(shared "$W/lp-$name.txt")
	if [ -s "$W/lp-$name.txt" ] && [ -z "$sh_" ]; then
		ok "launch $what: every rank of a node has its own CPU and GPU (0 shared)"
	else
		bad "launch $what: 0 shared" "$sh_" "$(ranks "$W/lp-$name.txt")" "$(grep -v '^$' "$W/lp-$name.stderr" 2>/dev/null | head -3)"
	fi
	n=$(grep -c "^topoplace bind: note: the launcher did not follow the job's placement" "$W/lp-$name.stderr" 2>/dev/null)
	e=$(grep -c "^topoplace bind: error" "$W/lp-$name.stderr" 2>/dev/null)
	# one line a launch where the ranks share the mark (bind.c,
	# first_to_say); where one cannot (no launch name, the mark's
	# directory unreachable) each node's local rank 0 says it: at most
	# one a node (6 nodes).  Hydra's launch gave 6 once in four runs
	if [ "$n" -ge 1 ] && [ "$n" -le 6 ] && [ "$e" = 0 ]; then
		ok "launch $what: the placement was not followed, and how to follow it, said ($n line(s), at most one a node)"
	else
		bad "launch $what: one 'not followed' line" "$n such lines, $e errors" "$(grep topoplace "$W/lp-$name.stderr" 2>/dev/null | head -3)"
	fi
done
retried "$W/lp.out"

# ------------------------------------------------------------ formats
# the real launchers read topoplace map's rankfile and MPICH host file.
# Open MPI checks a rankfile's socket:core against the node it runs on:
# the model is this host's own topology here (duo.xml's two sockets are
# not this host's)
lstopo-no-graphics --of xml "$W/host.xml" 2>/dev/null || hwloc-ls --of xml "$W/host.xml"
chown "$TPUSER:" "$W/host.xml"
script fm "$LAUNCH
echo \"NL=\$SLURM_JOB_NODELIST\"
$CLI map --config $CONF --nodes \$SLURM_JOB_NODELIST --tasks-per-node 2 --stencil 2x2:weights=1,5 --policy cyclic --node-topology host.xml --format rankfile > rf.txt
$CLI map --config $CONF --nodes \$SLURM_JOB_NODELIST --tasks-per-node 2 --stencil 2x2:weights=1,5 --policy cyclic --node-topology host.xml --format tasks > rf-tasks.txt
$CLI map --config $CONF --nodes \$SLURM_JOB_NODELIST --tasks-per-node 2 --stencil 2x2:weights=1,5 --policy cyclic --format mpich > hf.mpich
L fm-rankfile mpirun.openmpi --rankfile rf.txt ./ring-ompi
L fm-mpich env HYDRA_RMK=user HYDRA_LAUNCHER=slurm HYDRA_LAUNCHER_EXEC=$DIR/lib/topoplace-hydra-srun mpiexec.mpich -f hf.mpich -n 4 ./ring-mpich"
as_user "salloc -N2 --ntasks-per-node=2 ./fm.sh > fm.out 2> fm.err"
nl=$(val NL "$W/fm.out")
a=$(scontrol show hostnames "$nl" | sed -n 1p); b=$(scontrol show hostnames "$nl" | sed -n 2p)
# cyclic: node a, b, a, b; each node's two ranks on its two cores
want=$(sed -n 's/^rank \([0-9]*\)=\([^ ]*\) cpus=\([^ ]*\).*/\1:\2:\3/p' "$W/rf-tasks.txt" | paste -sd' ')
got=$(ranks "$W/fm-rankfile.txt" | tr ' ' '\n' | cut -d: -f1-3 | paste -sd' ')
if [ "$got" = "$want" ] && [ "$(echo "$want" | cut -d' ' -f1,3 | tr ' ' '\n' | cut -d: -f2 | paste -sd' ')" = "$a $a" ] &&
	[ "$(grep -c "^rank [0-9]*=node[0-9]* slot=0:[01]$" "$W/rf.txt")" = 4 ]; then
	ok "format rankfile: mpirun --rankfile puts each rank on its host and cores (slot=S:C, the model's sockets and cores)"
else
	bad "format rankfile with mpirun" "expected [$want] got [$got]" "$(cat "$W/rf.txt" 2>/dev/null | paste -sd'|')" "$(head -3 "$W/fm-rankfile.stderr")"
fi
want="0:$a 1:$b 2:$a 3:$b"
got=$(ranks "$W/fm-mpich.txt" | tr ' ' '\n' | cut -d: -f1-2 | paste -sd' ')
if [ "$got" = "$want" ] && [ "$(paste -sd' ' "$W/hf.mpich")" = "$a:1 $b:1 $a:1 $b:1" ]; then
	ok "format mpich: mpiexec -f (with topoplace-hydra-srun) runs rank r on its run's host"
else
	bad "format mpich with mpiexec" "expected [$want] got [$got]" "$(paste -sd' ' "$W/hf.mpich")" "$(head -3 "$W/fm-mpich.stderr")"
fi
retried "$W/fm.out"

summary
[ "$fail" -eq 0 ]
