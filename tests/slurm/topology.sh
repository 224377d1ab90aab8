#!/bin/bash
# topoplace — Slurm's own topology as the network, on a real Slurm 26.05
# cluster: the cluster has only topology.yaml (no topology.conf,
# no TopologyPlugin=), topoplace.conf names no network (a policy and the
# node models), and srun --topo-stencil ... --topo-report must be placed on
# the topology of the job's partition, named in the report, and the same
# as `topoplace map` computes from the same files.
#
#   sh tests/slurm/topology.sh [VERSION]      (default 26.05.3;
#                                              make slurm-topology-tests)
#
# Four clusters in turn, each with the topology.yaml of
# tests/slurm/topology/: a tree (plus a block topology bound to a second
# partition with Topology=), blocks with gaps (a short block and an empty
# one, as NVIDIA's topograph writes for GB200 racks), and a 4x2x1 torus3d
# with a ring partition; and a skeleton (switches and blocks without
# nodes) whose nodes slurm.conf's NodeName=... Topology= places, checked
# against slurmctld's own view (scontrol show topology); the same skeleton
# with two nodes only slurmctld places (scontrol update ... Topology=, as a
# dynamic node's slurmd -Z --conf does), which the plugin and map
# --slurm-live take from slurmctld's live view; and topology.conf with
# NodeName=... Topology=default:leaf2 (25.11 and later).  Each srun is
# also run with --topo-policy=none: Slurm's own layout must be the
# baseline topoplace models (topoplace map --policy block with the same
# files).
# Needs root and the release (tests/slurm/release.sh build VERSION, cached);
# without them one line and exit 0 (TOPOPLACE_REQUIRE_SLURM_TESTS=1: a
# failure).  One line per check, then "slurm-topology: N passed, M failed".
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
V=${1:-26.05.3}
DATA=$HERE/topology

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "     $l"; done; }
summary() { echo "slurm-topology: $pass passed, $fail failed"; }
skip() {
	echo "slurm-topology: SKIPPED: $*"
	if [ "${TOPOPLACE_REQUIRE_SLURM_TESTS:-0}" = 1 ]; then
		echo "slurm-topology: 0 passed, 1 failed"; exit 1
	fi
	exit 0
}

[ "$(id -u)" = 0 ] || skip "needs root (unshare, mount, a test user)"
if ! bash "$HERE/release.sh" tarball "$V" > /dev/null 2>&1; then
	# no tarball is not a failure, as for on-release.sh, but under
	# TOPOPLACE_REQUIRE_SLURM_TESTS=1 (CI) it is
	skip "no Slurm $V source tarball (TP_SLURM_TARBALLS=DIR with slurm-$V.tar.xz runs it)"
fi
prefix=$(bash "$HERE/release.sh" build "$V") && [ -x "$prefix/sbin/slurmctld" ] || {
	echo "slurm-topology: Slurm $V did not build"; echo "slurm-topology: 0 passed, 1 failed"; exit 1; }
B=build-slurm-$V
if ! make -C "$REPO" -s BUILD="$B" SLURM_PREFIX="$prefix" all > "$REPO/$B.log" 2>&1; then
	tail -20 "$REPO/$B.log"
	echo "slurm-topology: the plugin did not build against Slurm $V"
	echo "slurm-topology: 0 passed, 1 failed"; exit 1
fi
CLI=$REPO/$B/topoplace
export TP_SLURM_PREFIX=$prefix TP_PLUGIN=$REPO/$B/topoplace.so TP_NNODES=8 TP_CPUS=8 TP_GPUS=4
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
DIR=$TP_SLURM_DIR
TPUSER=${TP_USER:-tpuser}
export TP_USER=$TPUSER TP_TOPOPLACE_CONF=$DATA/topoplace.conf

exec 9>/tmp/topoplace-slurm.lock
flock 9
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop
trap 'bash "$HERE/cluster.sh" stop >/dev/null 2>&1' EXIT

as_user() {
	setpriv --reuid="$TPUSER" --regid="$TPUSER" --init-groups \
		env -i PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin" HOME="$DIR/home/$TPUSER" \
		USER="$TPUSER" SLURM_CONF="$DIR/etc/slurm.conf" LANG=C \
		bash -c "cd '$DIR/home/$TPUSER' && $1"
}

# start NAME PARTITIONS: a cluster with tests/slurm/topology/NAME.yaml
# (TP_TOPOLOGY_ONLY="NAME ...": only those)
start() {
	case " ${TP_TOPOLOGY_ONLY:-$1} " in *" $1 "*) ;; *) return 1 ;; esac
	bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop >/dev/null 2>&1
	export TP_TOPOLOGY_YAML=$DATA/$1.yaml TP_PARTITIONS=$2
	if ! bash "$HERE/cluster.sh" start > "/tmp/topoplace-topology-$1.start" 2>&1; then
		bad "$1: the cluster starts on topology.yaml alone" \
			"$(tail -5 "/tmp/topoplace-topology-$1.start")" \
			"$(grep -i -m3 'topolog\|error\|fatal' "$DIR/log/slurmctld.log" 2>/dev/null)"
		return 1
	fi
	if [ -e "$DIR/etc/topology.conf" ] || grep -q '^TopologyPlugin' "$DIR/etc/slurm.conf"; then
		bad "$1: only topology.yaml describes the network" "$(ls "$DIR/etc")"
		return 1
	fi
	return 0
}

# placed NAME TOPOLOGY KIND "SALLOC_ARGS" "SRUN_ARGS": one srun in a fresh
# allocation, placed on TOPOLOGY (its kind: tree, block, torus)
placed() {
	local name=$1 topo=$2 kind=$3 alloc=$4 args=$5
	local h=$DIR/home/$TPUSER
	cat > "$h/job.sh" <<'JOB'
#!/bin/bash
echo "NL=$SLURM_JOB_NODELIST" >&2
echo "TPN=$SLURM_TASKS_PER_NODE" >&2
echo "PART=$SLURM_JOB_PARTITION" >&2
srun "$@" --topo-report bash -c 'echo $SLURM_PROCID $(hostname)'
# Slurm's own layout of the same step, topoplace stepping aside
srun "$@" --topo-policy=none bash -c 'echo $SLURM_PROCID $(hostname)' > "$SLURM_JOB_ID.plain"
echo "PLAIN=$SLURM_JOB_ID.plain" >&2
JOB
	chown "$TPUSER:" "$h/job.sh"
	chmod 0755 "$h/job.sh"
	as_user "timeout 120 salloc -Q $alloc ./job.sh $args > $name.out 2> $name.err"
	local rc=$? got want
	local out=$h/$name.out err=$h/$name.err
	got=$(sort -n "$out" 2>/dev/null | awk '{print $2}' | paste -sd' ')
	if [ $rc != 0 ] || ! grep -q "^topoplace: note: network: Slurm's topology $topo ($kind) of ${TOPO_FILE:-$DIR/etc/topology.yaml}" "$err" ||
		! grep -q "^topoplace: policy " "$err"; then
		bad "$name: srun $args ($alloc) is placed on topology $topo ($kind), named in the report" \
			"rc $rc" "$(cat "$err")"
		return
	fi
	ok "$name: srun $args ($alloc) is placed on topology $topo ($kind), named in the report"
	# the same mapping as the command computes from the same files and the
	# plugstack's budget (cluster.sh: time_budget_ms=300)
	want=$("$CLI" map ${MAP_EXTRA:-} --time-budget 300 --config "$DIR/etc/topoplace.conf" --slurm-conf "$DIR/etc/slurm.conf" \
		--slurm-version "$V" --partition "$(sed -n 's/^PART=//p' "$err")" \
		--nodes "$(sed -n 's/^NL=//p' "$err")" --tasks-per-node "$(sed -n 's/^TPN=//p' "$err")" \
		--stencil "$(printf '%s\n' $args | sed -n 's/^--topo-stencil=//p')" \
		--format hostfile 2>/dev/null | paste -sd' ')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "$name: the tasks' nodes are those topoplace map computes"
	else
		bad "$name: the tasks' nodes are those topoplace map computes" \
			"srun: [$got]" "map:  [$want]"
	fi
	# the baseline: Slurm's own layout is the one topoplace models
	local plain slurm
	plain=$(sort -n "$h/$(sed -n 's/^PLAIN=//p' "$err")" 2>/dev/null | awk '{print $2}' | paste -sd' ')
	slurm=$("$CLI" map ${MAP_EXTRA:-} --config "$DIR/etc/topoplace.conf" --slurm-conf "$DIR/etc/slurm.conf" \
		--slurm-version "$V" --partition "$(sed -n 's/^PART=//p' "$err")" \
		--nodes "$(sed -n 's/^NL=//p' "$err")" --tasks-per-node "$(sed -n 's/^TPN=//p' "$err")" \
		--stencil "$(printf '%s\n' $args | sed -n 's/^--topo-stencil=//p')" --policy block \
		--format hostfile 2>/dev/null | paste -sd' ')
	if [ -n "$plain" ] && [ "$plain" = "$slurm" ]; then
		ok "$name: Slurm's own layout is the baseline topoplace models ($plain)"
	else
		bad "$name: Slurm's own layout is the baseline topoplace models" \
			"slurm:    [$plain]" "modelled: [$slurm]"
	fi
}

# ------------------------------------------------------------------ tree
if start tree "nvl:nvl"; then
	placed tree-default fabric tree "-N8 -n16" "--topo-stencil=4x4"
	placed tree-partition nvl block "-p nvl -N4 -n8" "--topo-stencil=4x2"
fi
# ----------------------------------------------------- blocks with gaps
if start block-gaps ""; then
	placed block-gaps racks block "-N4 -n8" "--topo-stencil=4x2"
fi
# --------------------------------------------------------------- torus3d
if start torus3d "ring:ring"; then
	placed torus3d pod torus3d "-N8 -n8" "--topo-stencil=4x2:periodic=all"
	placed torus3d-part pod torus3d "-w node[1,4,5,8] -N4 -n4" "--topo-stencil=2x2"
	placed ring ring ring "-p ring -w node[1,2,7,8] -N4 -n4" "--topo-stencil=4x1:periodic=all"
fi
# ------------------------------------------- a skeleton, nodes join later
# topology.yaml has switches and blocks without nodes; slurm.conf's
# NodeName=... Topology= places them (leaf3 made by slurmctld on the way)
export TP_NODE_TOPOLOGY="1,3=fabric:leaf1,nvl:nvl1 2,4=fabric:leaf2,nvl:nvl1 5,7=fabric:spine:leaf3,nvl:nvl2 6,8=fabric:leaf2,nvl:nvl2"
if start skeleton "nvl:nvl"; then
	# slurmctld's own view of the joined nodes, as topoplace reads them
	live=$(PATH="$prefix/bin:$PATH" SLURM_CONF="$DIR/etc/slurm.conf" scontrol show topology fabric 2>&1 |
		sed -n 's/^SwitchName=\(leaf[0-9]\) .*Nodes=\([^ ]*\).*/\1=\2/p' | sort | paste -sd' ')
	if [ "$live" = "leaf1=node[1,3] leaf2=node[2,4,6,8] leaf3=node[5,7]" ]; then
		ok "skeleton: slurmctld puts the joined nodes where topoplace does ($live)"
	else
		bad "skeleton: slurmctld puts the joined nodes where topoplace does" \
			"scontrol show topology: [$live]"
	fi
	if "$CLI" check-config --slurm-conf "$DIR/etc/slurm.conf" "$DIR/etc/topoplace.conf" \
		> /tmp/topoplace-topology-skeleton.check 2>&1 &&
		grep -q "placed by slurm.conf's Topology=: 8 nodes" /tmp/topoplace-topology-skeleton.check; then
		ok "skeleton: check-config passes and says slurm.conf's Topology= placed 8 nodes"
	else
		bad "skeleton: check-config passes and says slurm.conf's Topology= placed 8 nodes" \
			"$(cat /tmp/topoplace-topology-skeleton.check)"
	fi
	placed skeleton-tree fabric tree "-N8 -n16" "--topo-stencil=4x4"
	placed skeleton-block nvl block "-p nvl -N8 -n8" "--topo-stencil=4x2"
fi
# ------------------------------------ nodes only slurmctld places (live)
# node7 and node8 have no Topology= in slurm.conf and are in no switch or
# block of topology.yaml; `scontrol update NodeName=... Topology=` puts
# them in leaf3 and nvl2 at run time, as a dynamic node's slurmd -Z --conf
# "Topology=..." does: only slurmctld knows their place.  The plugin asks
# it (slurm_load_topo in srun), the command too (map --slurm-live runs
# scontrol show topology), and both place the job across them.
export TP_NODE_TOPOLOGY="1,3=fabric:leaf1,nvl:nvl1 2,4=fabric:leaf2,nvl:nvl1 5,6=fabric:spine:leaf3,nvl:nvl2"
if start skeleton "nvl:nvl"; then
	SC="env SLURM_CONF=$DIR/etc/slurm.conf $prefix/bin/scontrol"
	$SC update NodeName=node[7-8] Topology=fabric:leaf3,nvl:nvl2 > /tmp/topoplace-topology-live.upd 2>&1
	live=$($SC show topology fabric 2>&1 | sed -n 's/^SwitchName=\(leaf3\) .*Nodes=\([^ ]*\).*/\1=\2/p')
	if [ "$live" = "leaf3=node[5-8]" ]; then
		ok "live: slurmctld has node7 and node8 in leaf3, which no file says ($live)"
	else
		bad "live: slurmctld has node7 and node8 in leaf3, which no file says" \
			"[$live]" "$(cat /tmp/topoplace-topology-live.upd)"
	fi
	m=("$CLI" map --config "$DIR/etc/topoplace.conf" --slurm-conf "$DIR/etc/slurm.conf"
	   --slurm-version "$V" --nodes "node[1-8]" --tasks-per-node 2 --stencil 4x4 --format hostfile)
	# the files alone do not place node7: one line that names it
	if ! "${m[@]}" > /tmp/topoplace-topology-live.map 2>&1 &&
		grep -q "unknown node 'node7'" /tmp/topoplace-topology-live.map; then
		ok "live: without slurmctld's view node7 has no place, said by name"
	else
		bad "live: without slurmctld's view node7 has no place, said by name" \
			"$(cat /tmp/topoplace-topology-live.map)"
	fi
	# garbage as the view (a line cut short): one warning, nothing taken
	printf 'SwitchName=leaf3 Level=0 LinkSpeed=1 Nodes=node[5-\n' > /tmp/topoplace-topology-live.bad
	if ! "${m[@]}" --slurm-live=/tmp/topoplace-topology-live.bad > /tmp/topoplace-topology-live.map 2>&1 &&
		grep -q "topology-live.bad:1: .*malformed hostlist.*topoplace takes no node's place" \
			/tmp/topoplace-topology-live.map &&
		grep -q "unknown node 'node7'" /tmp/topoplace-topology-live.map; then
		ok "live: a view that is not Slurm's lines places nothing, with one warning"
	else
		bad "live: a view that is not Slurm's lines places nothing, with one warning" \
			"$(cat /tmp/topoplace-topology-live.map)"
	fi
	export SLURM_CONF=$DIR/etc/slurm.conf TOPOPLACE_SCONTROL=$prefix/bin/scontrol
	want=$("${m[@]}" --slurm-live 2>/dev/null | paste -sd' ')
	case " $want " in
	*" node7 "*" node8 "*|*" node8 "*" node7 "*) ok "live: map --slurm-live places the job across node7 and node8 ($want)" ;;
	*) bad "live: map --slurm-live places the job across node7 and node8" \
		"$("${m[@]}" --slurm-live 2>&1)" ;;
	esac
	MAP_EXTRA=--slurm-live placed skeleton-live fabric tree "-N8 -n16" "--topo-stencil=4x4"
	if grep -q "unknown node\|not read" "$DIR/home/$TPUSER/skeleton-live.err"; then
		bad "live: the plugin took node7's place from slurmctld" \
			"$(cat "$DIR/home/$TPUSER/skeleton-live.err")"
	else
		ok "live: the plugin took node7's place from slurmctld"
	fi
	unset SLURM_CONF TOPOPLACE_SCONTROL
	# a view the plugin must not trust (SLURM_TOPO_LEN cuts Slurm's lines
	# short): not read; the step runs with Slurm's placement and one line
	# names the node without a place, another says why
	as_user "SLURM_TOPO_LEN=20 timeout 120 salloc -Q -N8 srun -n8 --topo-stencil=4x2 --topo-report hostname > topo-len.out 2> topo-len.err"
	rc=$?
	e=$DIR/home/$TPUSER/topo-len.err
	if [ $rc = 0 ] && [ "$(wc -l < "$DIR/home/$TPUSER/topo-len.out")" = 8 ] &&
		grep -q "^topoplace: error: SLURM_JOB_NODELIST: unknown node 'node[78]'; Slurm's placement is kept" "$e" &&
		grep -q "^topoplace: slurmctld's topology not read: SLURM_TOPO_LEN is set" "$e"; then
		ok "live: with SLURM_TOPO_LEN the view is not read; Slurm's placement, the node named"
	else
		bad "live: with SLURM_TOPO_LEN the view is not read; Slurm's placement, the node named" \
			"rc $rc" "$(cat "$e")"
	fi
fi
unset TP_NODE_TOPOLOGY
# ----------------------------- topology.conf, nodes moved by Topology=
# slurmctld loads topology.conf as the topology "default", and slurm.conf's
# NodeName=... Topology=default:UNIT moves nodes in it as in topology.yaml
# (Slurm 25.11 and later): node1 and node2 leave leaf1 for leaf2.
case " ${TP_TOPOLOGY_ONLY:-conf} " in *" conf "*)
	bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop >/dev/null 2>&1
	unset TP_TOPOLOGY_YAML
	export TP_NODE_TOPOLOGY="1,2=default:leaf2" TP_PARTITIONS=""
	if bash "$HERE/cluster.sh" start > /tmp/topoplace-topology-conf.start 2>&1; then
		live=$(env SLURM_CONF="$DIR/etc/slurm.conf" "$prefix/bin/scontrol" show topology 2>&1 |
			sed -n 's/^SwitchName=\(leaf[0-9]\) .*Nodes=\([^ ]*\).*/\1=\2/p' | sort | paste -sd' ')
		if [ "$live" = "leaf1=node[3-4] leaf2=node[1-2,5-8]" ]; then
			ok "conf: slurmctld moves node1 and node2 to leaf2 of topology.conf ($live)"
		else
			bad "conf: slurmctld moves node1 and node2 to leaf2 of topology.conf" "[$live]"
		fi
		if "$CLI" check-config --slurm-conf "$DIR/etc/slurm.conf" "$DIR/etc/topoplace.conf" \
			> /tmp/topoplace-topology-conf.check 2>&1 &&
			grep -q "placed by slurm.conf's Topology=: 2 nodes" /tmp/topoplace-topology-conf.check; then
			ok "conf: check-config says slurm.conf's Topology= placed 2 nodes"
		else
			bad "conf: check-config says slurm.conf's Topology= placed 2 nodes" \
				"$(cat /tmp/topoplace-topology-conf.check)"
		fi
		TOPO_FILE=$DIR/etc/topology.conf placed conf-joined default tree "-N8 -n16" "--topo-stencil=4x4"
		TOPO_FILE=$DIR/etc/topology.conf placed conf-joined-cyclic default tree "-N8 -n8" "--topo-stencil=4x2"
	else
		bad "conf: the cluster starts with topology.conf and Topology=default:leaf2" \
			"$(tail -5 /tmp/topoplace-topology-conf.start)" \
			"$(grep -i -m3 'topolog\|error\|fatal' "$DIR/log/slurmctld.log" 2>/dev/null)"
	fi
	unset TP_NODE_TOPOLOGY
	;;
esac
summary
[ "$fail" = 0 ]
