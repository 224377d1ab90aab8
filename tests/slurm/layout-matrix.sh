#!/bin/bash
# topoplace — Slurm's own task layout against topoplace's model of it, on a
# real Slurm cluster, over a generated matrix of cases:
#
#   topology kind (tree, block, ring, torus3d, flat, flat {alpha_step_rank})
#   x tasks a node (1, 2, 3) x an even or uneven -n (8t, 8t+3)
#   x distribution (srun's default, -m block, -m cyclic, -m plane=2, and
#     --mem=0, which leaves the choice to slurmctld's block)
#   x the slurm.conf flags that change the order: none,
#     TopologyParam=SwitchAsNodeRank, TopologyParam=BlockAsNodeRank,
#     SelectTypeParameters=CR_NO_DIST_TOPO_BLOCK
#   plus 4-node allocations of the ring and the torus (a ring segment that
#   wraps, a torus box that wraps).
#
# Each case is a plain `srun -l -n N [-m D] hostname` (topoplace stepping
# aside): the node of every rank must be the one `topoplace map --policy
# block --distribution D` computes with the job's slurm.conf, release and
# partition.  For srun's default distribution and --mem=0, the plugin's
# --topo-report must also name the same "Slurm's order" as the command (the
# plugin hands the core the same facts).
#
#   sh tests/slurm/layout-matrix.sh [VERSION]    (default 26.05.3;
#                                                 make slurm-layout-tests)
#
# One cluster start per slurm.conf variant (4), one allocation per
# partition, every srun of a partition inside it.  Needs root and the
# release (tests/slurm/release.sh build VERSION, cached; TP_LAYOUT_PREFIX=DIR:
# that installed build instead).  Before 25.05 (no topology.yaml): the
# default partition on topology.conf's tree, leaves interleaved, with and
# without SwitchAsNodeRank (48 cases).  Without them one line and exit 0
# (TOPOPLACE_REQUIRE_SLURM_TESTS=1: a failure).  TP_LAYOUT_ONLY="plain
# switchrank blockrank nodist": those variants only.  One line per failed
# case (the passes counted), then "slurm-layout: N passed, M failed (C cases
# in S s)".
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
V=${1:-26.05.3}
DATA=$HERE/layout
T0=$(date +%s)

pass=0 fail=0 cases=0
ok() { pass=$((pass + 1)); [ -z "${TP_LAYOUT_VERBOSE:-}" ] || echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }
summary() {
	echo "slurm-layout: $pass passed, $fail failed ($cases cases in $(($(date +%s) - T0)) s)"
}
skip() {
	echo "slurm-layout: SKIPPED: $*"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "slurm-layout: 0 passed, 1 failed"; exit 1
	fi
	exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (unshare, mount, a test user)"
if ! bash "$HERE/release.sh" tarball "$V" > /dev/null 2>&1; then
	skip "no Slurm $V source tarball"
fi
# before 25.05 Slurm reads no topology.yaml: topology.conf's tree alone
# (leaves interleaved), the default partition
OLD=0
case $V in 2[0-4].*|25.0[0-4].*) OLD=1 ;; esac
prefix=${TP_LAYOUT_PREFIX:-$(bash "$HERE/release.sh" build "$V")} && [ -x "$prefix/sbin/slurmctld" ] || {
	echo "slurm-layout: Slurm $V did not build"; echo "slurm-layout: 0 passed, 1 failed"; exit 1; }
B=build-slurm-$V
if ! make -C "$REPO" -s BUILD="$B" SLURM_PREFIX="$prefix" all > "$REPO/$B.log" 2>&1; then
	tail -20 "$REPO/$B.log"
	echo "slurm-layout: the plugin did not build against Slurm $V"
	echo "slurm-layout: 0 passed, 1 failed"; exit 1
fi
CLI=$REPO/$B/topoplace
export TP_SLURM_PREFIX=$prefix TP_PLUGIN=$REPO/$B/topoplace.so TP_NNODES=8 TP_CPUS=8 TP_GPUS=4
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
DIR=$TP_SLURM_DIR
TPUSER=${TP_USER:-tpuser}
export TP_USER=$TPUSER
export TP_PARTITIONS="ptree:tree pblock:block pring:ring ptorus:torus pnone:none palpha:alpha"
[ "$OLD" = 0 ] || export TP_PARTITIONS="" TP_LEAVES=interleaved

exec 9>/tmp/topoplace-slurm.lock
flock 9
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop >/dev/null 2>&1
trap 'bash "$HERE/cluster.sh" stop >/dev/null 2>&1' EXIT
WORK=$(mktemp -d /tmp/topoplace-layout.XXXXXX)
chmod 0755 "$WORK"
trap 'bash "$HERE/cluster.sh" stop >/dev/null 2>&1; rm -rf "$WORK"' EXIT

as_user() {
	setpriv --reuid="$TPUSER" --regid="$TPUSER" --init-groups \
		env -i PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin" HOME="$DIR/home/$TPUSER" \
		USER="$TPUSER" SLURM_CONF="$DIR/etc/slurm.conf" LANG=C \
		bash -c "cd '$DIR/home/$TPUSER' && $1"
}

# The job: every case of one allocation, one srun each ("N:DIST", DIST
# "default" for none); the plugin's report for the default distribution.
cat > "$WORK/job.sh" <<'JOB'
#!/bin/bash
out=$1; shift
echo "NL=$SLURM_JOB_NODELIST" > "$out/facts"
echo "PART=$SLURM_JOB_PARTITION" >> "$out/facts"
for c in "$@"; do
	n=${c%%:*} d=${c#*:}
	if [ "$d" = default ]; then
		srun -l -n "$n" --topo-policy=none hostname > "$out/$n.$d.out" 2> "$out/$n.$d.err"
		srun -n "$n" --topo-policy=block --topo-report true 2> "$out/$n.$d.report" > /dev/null
	elif [ "$d" = mem0 ]; then
		# --mem=0: srun leaves the distribution to slurmctld: block
		srun -l -n "$n" --mem=0 --topo-policy=none hostname > "$out/$n.$d.out" 2> "$out/$n.$d.err"
		srun -n "$n" --mem=0 --topo-policy=block --topo-report true 2> "$out/$n.$d.report" > /dev/null
	else
		srun -l -n "$n" -m "$d" --topo-policy=none hostname > "$out/$n.$d.out" 2> "$out/$n.$d.err"
	fi
done
JOB
chmod 0755 "$WORK/job.sh"

# start VARIANT: the cluster with that slurm.conf variant
start() {
	local yaml=$WORK/topology.yaml
	unset TP_TOPOLOGY_PARAM TP_SELECT_PARAMS
	cp "$DATA/matrix.yaml" "$yaml"
	case $1 in
	switchrank) export TP_TOPOLOGY_PARAM=SwitchAsNodeRank ;;
	blockrank)
		export TP_TOPOLOGY_PARAM=BlockAsNodeRank
		# the node table follows the cluster default: the blocks; node4
		# in none (rank 0, before every block)
		sed -i 's/cluster_default: true/cluster_default: false/;
			/^- topology: block/{n;s/cluster_default: false/cluster_default: true/};
			s/nodes: node\[1-4\]/nodes: node[1-3]/' "$yaml" ;;
	nodist) export TP_SELECT_PARAMS=CR_Core,CR_NO_DIST_TOPO_BLOCK ;;
	esac
	if [ "$OLD" = 1 ]; then unset TP_TOPOLOGY_YAML; else export TP_TOPOLOGY_YAML=$yaml; fi
	bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop >/dev/null 2>&1
	if ! bash "$HERE/cluster.sh" start > "$WORK/start-$1" 2>&1; then
		bad "$1: the cluster starts" "$(tail -5 "$WORK/start-$1")" \
			"$(grep -i -m3 'topolog\|error\|fatal' "$DIR/log/slurmctld.log" 2>/dev/null)"
		return 1
	fi
}

nodes_of() {  # nodes_of SRUN_L_OUTPUT: the nodes of ranks 0, 1, ...
	sed -n 's/^ *\([0-9][0-9]*\): *\(.*\)$/\1 \2/p' "$1" | sort -n | awk '{print $2}' | paste -sd' '
}

# matrix VARIANT PARTITION NODES "SALLOC_ARGS" "COUNTS": every count of
# COUNTS with every distribution, in one allocation of NODES nodes
matrix() {
	local variant=$1 part=$2 nn=$3 alloc=$4 counts=$5
	local tag="$variant/$part${alloc:+ $alloc}"
	local out=$WORK/$variant-$part-$nn
	local specs=() n d
	mkdir -p "$out"; chown "$TPUSER:" "$out"
	for n in $counts; do
		for d in $DISTS; do specs+=("$n:$d"); done
	done
	as_user "timeout 600 salloc -Q -N$nn --exclusive -p $part $alloc $WORK/job.sh $out ${specs[*]}" \
		> "$out/salloc.out" 2>&1
	local nl p
	nl=$(sed -n 's/^NL=//p' "$out/facts" 2>/dev/null)
	p=$(sed -n 's/^PART=//p' "$out/facts" 2>/dev/null)
	if [ -z "$nl" ]; then
		cases=$((cases + ${#specs[@]}))
		bad "$tag: the allocation ran" "$(tail -3 "$out/salloc.out")"
		return
	fi
	for c in "${specs[@]}"; do
		n=${c%%:*} d=${c#*:}
		cases=$((cases + 1))
		local name="$tag -n $n -m $d" got want dopt=()
		case $d in default) ;; mem0) dopt=(--distribution block) ;; *) dopt=(--distribution "$d") ;; esac
		got=$(nodes_of "$out/$n.$d.out")
		"$CLI" map --config "$DIR/etc/topoplace.conf" --slurm-conf "$DIR/etc/slurm.conf" \
			--slurm-version "$V" --partition "$p" --nodes "$nl" --ntasks "$n" \
			"${dopt[@]}" --policy block --format hostfile \
			> "$out/$n.$d.map" 2> "$out/$n.$d.mapnotes"
		want=$(paste -sd' ' "$out/$n.$d.map")
		if [ -n "$got" ] && [ "$got" = "$want" ]; then
			ok "$name: $got"
		else
			bad "$name: srun's layout is topoplace's model" "srun: [$got]" \
				"map:  [$want]" "$(grep -m1 "Slurm's order" "$out/$n.$d.mapnotes")" \
				"$(head -2 "$out/$n.$d.err")"
		fi
		[ "$d" = default ] || [ "$d" = mem0 ] || continue
		# the plugin's report names the same baseline as the command
		local rep cli
		rep=$(grep -m1 "^topoplace: note: Slurm's order:" "$out/$n.$d.report")
		cli=$(grep -m1 "^topoplace: note: Slurm's order:" "$out/$n.$d.mapnotes")
		if [ -n "$rep" ] && [ "$rep" = "$cli" ]; then
			ok "$name: --topo-report's Slurm's order"
		else
			bad "$name: --topo-report's Slurm's order is the command's" \
				"report: [$rep]" "map:    [$cli]" "$(head -3 "$out/$n.$d.report")"
		fi
	done
}

DISTS="default block cyclic plane=2"
EVEN_UNEVEN="8 11 16 19 24 27"   # 1, 2, 3 tasks a node, even and uneven
SMALL="4 5 8 9"                  # 4 nodes: 1 and 2 tasks a node
want() { case " ${TP_LAYOUT_ONLY:-plain switchrank blockrank nodist} " in *" $1 "*) return 0 ;; esac; return 1; }

if [ "$OLD" = 1 ]; then
	# topology.conf's tree: the node order and the distributions only
	for variant in plain switchrank; do
		[ $variant = plain ] && DISTS="default block cyclic plane=2 mem0"
		[ $variant = plain ] || DISTS="default block cyclic plane=2"
		if want $variant && start $variant; then matrix $variant tp 8 "" "$EVEN_UNEVEN"; fi
	done
	summary
	[ "$fail" = 0 ]
	exit
fi
if want plain && start plain; then
	# and --mem=0 (slurmctld's block) on every kind
	DISTS="default block cyclic plane=2 mem0"
	for p in ptree pblock pring ptorus pnone palpha; do
		matrix plain "$p" 8 "" "$EVEN_UNEVEN"
	done
	DISTS="default block cyclic plane=2"
	# a ring segment that wraps (start after the gap), a torus box that wraps
	matrix plain pring 4 "-w node[1,2,7,8]" "$SMALL"
	matrix plain ptorus 4 "-w node[1,4,5,8]" "$SMALL"
fi
if want switchrank && start switchrank; then
	for p in ptree ptorus pnone palpha; do matrix switchrank "$p" 8 "" "$EVEN_UNEVEN"; done
fi
if want blockrank && start blockrank; then
	for p in pring pnone; do matrix blockrank "$p" 8 "" "$EVEN_UNEVEN"; done
	# node4, in no block, is not the block topology's to allocate
	matrix blockrank pblock 7 "" "7 10 14 17 21 24"
fi
if want nodist && start nodist; then
	for p in ptree ptorus pring; do matrix nodist "$p" 8 "" "$EVEN_UNEVEN"; done
fi
summary
[ "$fail" = 0 ]
