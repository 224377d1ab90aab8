#!/bin/bash
# topoplace — a real multi-node Slurm 22.05 cluster on ONE Linux host, for the
# plugin's integration tests.  Needs root (unshare, mount --bind, mknod).
#
#   cluster.sh start    install missing packages, write every config, start
#                       munged, slurmctld and N slurmd, wait until all idle
#   cluster.sh stop     stop everything it started, by PID
#   cluster.sh status   what runs, and sinfo
#   cluster.sh env      the line to source: export SLURM_CONF=...
#   cluster.sh plugstack on|off   plugin in plugstack.conf or not (no restart)
#
# Layout (all under $TP_SLURM_DIR, default /tmp/topoplace-slurm):
#   1 slurmctld, hostname "tpctl" (own UTS namespace), 127.0.0.1:$TP_CTLD_PORT
#   N slurmd "node1".."nodeN", each in its own mount + UTS namespace with its
#     own hostname, its own munged and its own /etc/hosts; NodeAddr 127.0.0.1X
#     (127.0.1.X from node 90 on), one TCP port per node.  Loopback only.
#   fake GPUs: TP_GPUS char devices per node (clones of /dev/null) in gres.conf
#   topology.conf: leaf switches of 4 nodes under one spine (topology/tree)
#   topoplace.conf: the N nodes as a torus (8 nodes: 2x2x2), x-major order;
#     with TP_NODE_MODEL (default nvl4 for 4 GPUs per node) every node has
#     NodeTopology=/GpuLinks= of conf/examples/nodes/MODEL.xml/.links (copied
#     to $TP_SLURM_DIR/etc/nodes), e.g. nvl4: 2 sockets, 4 GPUs in NVLink
#     pairs 0-1 and 2-3
#   plugstack.conf: the plugin (when built; copied to $TP_SLURM_DIR/lib) with
#     the site arguments below
#   an unprivileged user $TP_USER (created if missing) for the test jobs
#
# Knobs (environment):
#   TP_SLURM_DIR=/tmp/topoplace-slurm  TP_NNODES=8  TP_CPUS=8  TP_GPUS=4
#   TP_DIMS (torus shape; default 2x2x2 for 8 nodes, 2x2 for 4, else N)
#   TP_CTLD_PORT=17817  TP_NODE_PORT_BASE=17820
#   TP_PLUGIN=<repo>/build-slurm/topoplace.so  (empty: no plugin)
#   TP_PLUGIN_INPLACE=1  plugstack.conf names TP_PLUGIN itself instead of a
#     copy (an installed plugin: /usr/lib/<triplet>/topoplace/topoplace.so)
#   TP_PLUGSTACK_ARGS="policy=auto time_budget_ms=300 max_file_bytes=1048576
#     cpu_bind=no" (the example node models have more CPUs than this host, so
#     binding tasks to their cores is switched on only where a test gives the
#     nodes a model this host can hold)
#   TP_USER=tpuser  TP_NODE_MODEL=nvl4 (empty: no NodeTopology=)
#   TP_GPU_ENV=amd: gres.conf Flags=amd_gpu_env, so that Slurm gives the
#     tasks ROCR_VISIBLE_DEVICES only, as on AMD nodes with AutoDetect=rsmi
#   TP_SLURM_PREFIX=DIR: the Slurm installed in DIR (tests/slurm/release.sh
#     build VERSION) instead of Debian's packages: its bin/ and sbin/ first
#     on PATH, here and in env.sh
#   TP_LEAVES=interleaved: topology.conf's leaves take every other node
#     (node[1,3,5,7], node[2,4,6,8], ...) instead of runs of 4, so that
#     Slurm 26.05's topology-ordered task layout differs from the hostlist's
#   TP_TOPOLOGY_YAML=FILE: Slurm's topology is FILE as etc/topology.yaml
#     (Slurm 25.05 and later), with no topology.conf and no TopologyPlugin=
#   TP_SELECT_PARAMS=CR_Core: SelectTypeParameters= (e.g. with
#     CR_NO_DIST_TOPO_BLOCK); TP_TOPOLOGY_PARAM: TopologyParam= (e.g.
#     BlockAsNodeRank, SwitchAsNodeRank; empty: none)
#   TP_NODE_TOPOLOGY="I,J,...=TOPO:UNIT ...": one NodeName= line a node,
#     nodes I, J, ... with Topology=TOPO:UNIT (Slurm 25.11 and later: where
#     a node joins a skeleton topology.yaml)
#   TP_PARTITIONS="NAME:TOPOLOGY ...": more partitions of all the nodes,
#     each with Topology= (topology.yaml's topology names)
#   TP_TOPOPLACE_CONF=FILE: topoplace.conf is FILE (@MODEL@ becomes the
#     node model's NodeTopology= GpuLinks=) instead of the torus
#   TP_SLURMD_ENV="NAME=VALUE ...": more environment for every slurmd (and
#     so slurmstepd), e.g. HWLOC_XMLFILE= to make each node look like a GPU
#     node to hwloc, and a stand-in vendor library on LD_LIBRARY_PATH
#   every node caches its detected model (plugstack node_cache=) in
#     $DIR/cache, which is $DIR/state/NODE/cache on that node: a disk of
#     its own, as on a real cluster
#
# The host's own hostname, /etc/hosts and services are never changed.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
NNODES=${TP_NNODES:-8}
CPUS=${TP_CPUS:-8}
GPUS=${TP_GPUS:-4}
CTLD_PORT=${TP_CTLD_PORT:-17817}
NODE_PORT_BASE=${TP_NODE_PORT_BASE:-17820}
PLUGIN=${TP_PLUGIN-$REPO/build-slurm/topoplace.so}
PLUGIN_INPLACE=${TP_PLUGIN_INPLACE:-}
PLUGSTACK_ARGS=${TP_PLUGSTACK_ARGS-policy=auto time_budget_ms=300 max_file_bytes=1048576 cpu_bind=no}
TPUSER=${TP_USER:-tpuser}
NODE_MODEL=${TP_NODE_MODEL-$([ "$GPUS" = 4 ] && echo nvl4 || true)}
GPU_FLAGS=$([ "${TP_GPU_ENV:-}" = amd ] && echo " Flags=amd_gpu_env" || true)

SLURM_PREFIX=${TP_SLURM_PREFIX:-}
LEAVES=${TP_LEAVES:-runs}
TOPOLOGY_YAML=${TP_TOPOLOGY_YAML:-}
PARTITIONS=${TP_PARTITIONS:-}
TOPOPLACE_CONF=${TP_TOPOPLACE_CONF:-}
NODE_TOPOLOGY=${TP_NODE_TOPOLOGY:-}
if [ -n "$SLURM_PREFIX" ]; then
	export PATH="$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH"
fi

die() { echo "cluster.sh: $*" >&2; exit 1; }
log() { echo "cluster.sh: $*" >&2; }

default_dims() {
	case "$1" in
	8) echo 2x2x2 ;; 4) echo 2x2 ;; 16) echo 4x2x2 ;; 27) echo 3x3x3 ;;
	32) echo 4x4x2 ;; 64) echo 4x4x4 ;; *) echo "$1" ;;
	esac
}
DIMS=${TP_DIMS:-$(default_dims "$NNODES")}

node_addr() {  # node_addr I -> loopback address of node I
	if [ "$1" -lt 90 ]; then echo "127.0.0.$((10 + $1))"; else echo "127.0.1.$(($1 - 89))"; fi
}

# A PID that runs (zombies count as dead: this VM's init reaps orphans late).
running() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]
}
alive() { [ -f "$1" ] && running "$(cat "$1")"; }

port_busy() { command -v ss >/dev/null && ss -ltnH "sport = :$1" 2>/dev/null | grep -q . ; }

ensure_user() {
	if ! getent passwd "$TPUSER" >/dev/null; then
		useradd --system --user-group --no-create-home --home-dir "$DIR/home/$TPUSER" \
			--shell /bin/bash "$TPUSER" || die "cannot create user $TPUSER"
		log "created user $TPUSER"
	fi
	mkdir -p "$DIR/home/$TPUSER"
	chown "$TPUSER:" "$DIR/home/$TPUSER"
	chmod 0755 "$DIR/home/$TPUSER"
}

# plugstack.conf with the plugin (on) or empty (off); slurmstepd and srun
# read it for every step, so this needs no restart.
write_plugstack() {
	local so=$DIR/lib/topoplace.so
	[ -n "$PLUGIN_INPLACE" ] && so=$PLUGIN
	if [ "$1" = on ] && [ -r "$so" ]; then
		echo "optional $so conf=$DIR/etc/topoplace.conf node_cache=$DIR/cache $PLUGSTACK_ARGS"
	else
		echo "# topoplace plugin off"
	fi > "$DIR/etc/plugstack.conf.new"
	chmod 0644 "$DIR/etc/plugstack.conf.new"
	mv -f "$DIR/etc/plugstack.conf.new" "$DIR/etc/plugstack.conf"
}

# The NodeName= lines: one for all nodes, or with TP_NODE_TOPOLOGY one a
# node, each with its Topology=.
node_lines() {
	local i v spec
	local attrs="CPUs=$CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=1000 Gres=gpu:$GPUS State=UNKNOWN"
	if [ -z "$NODE_TOPOLOGY" ]; then
		echo "NodeName=$1 NodeHostname=$1 NodeAddr=$2 Port=$3 $attrs"
		return
	fi
	for ((i = 1; i <= NNODES; i++)); do
		v=""
		for spec in $NODE_TOPOLOGY; do
			case ",${spec%%=*}," in *",$i,"*) v=${spec#*=} ;; esac
		done
		echo "NodeName=node$i NodeHostname=node$i NodeAddr=$(node_addr "$i") Port=$((NODE_PORT_BASE + i)) $attrs${v:+ Topology=$v}"
	done
}

gen_conf() {
	local i last=$NNODES nodes addrs ports
	mkdir -p "$DIR"/{etc,bin,dev,munge,run/munge,state/ctld,log,home,tmpfs,cache}
	chmod 0755 "$DIR" "$DIR/etc" "$DIR/bin" "$DIR/dev" "$DIR/run" "$DIR/home"
	chmod 1777 "$DIR/tmpfs"
	nodes="node[1-$last]"
	addrs=""
	for ((i = 1; i <= NNODES; i++)); do addrs="$addrs${addrs:+,}$(node_addr "$i")"; done
	ports="[$((NODE_PORT_BASE + 1))-$((NODE_PORT_BASE + NNODES))]"
	cat > "$DIR/etc/slurm.conf" <<EOF
# generated by tests/slurm/cluster.sh -- one host, loopback only
ClusterName=topoplace
SlurmctldHost=tpctl(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/run/munge/munge.socket.2
StateSaveLocation=$DIR/state/ctld
SlurmdSpoolDir=$DIR/state/%n/spool
SlurmctldPidFile=$DIR/state/ctld/slurmctld.pid
SlurmdPidFile=$DIR/state/%n/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=${TP_SELECT_PARAMS:-CR_Core}
$([ -z "${TP_TOPOLOGY_PARAM:-}" ] || echo "TopologyParam=$TP_TOPOLOGY_PARAM")
GresTypes=gpu
$([ -n "$TOPOLOGY_YAML" ] || echo TopologyPlugin=topology/tree)
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
MessageTimeout=20
PlugStackConfig=$DIR/etc/plugstack.conf
TmpFS=$DIR/tmpfs
$(node_lines "$nodes" "$addrs" "$ports")
PartitionName=tp Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
$(for p in $PARTITIONS; do echo "PartitionName=${p%%:*} Nodes=$nodes MaxTime=INFINITE State=UP OverSubscribe=NO Topology=${p#*:}"; done)
EOF
	# fake GPUs: character devices with /dev/null's numbers (1,3)
	for ((i = 0; i < GPUS; i++)); do
		[ -e "$DIR/dev/nvidia$i" ] || mknod -m 0666 "$DIR/dev/nvidia$i" c 1 3
	done
	{
		echo "AutoDetect=off"
		if [ "$GPUS" -gt 0 ]; then
			echo "NodeName=$nodes Name=gpu File=$DIR/dev/nvidia[0-$((GPUS - 1))]$GPU_FLAGS"
		fi
	} > "$DIR/etc/gres.conf"
	# Slurm's own view: leaf switches of 4 nodes under one spine (runs
	# node[1-4], ...; interleaved: every nleaf-th node, node[1,3,5,7], ...)
	{
		local nleaf=$(((NNODES + 3) / 4)) l a b k list
		for ((l = 1; l <= nleaf; l++)); do
			if [ "$LEAVES" = interleaved ]; then
				list=""
				for ((k = l; k <= NNODES; k += nleaf)); do list="$list${list:+,}$k"; done
				echo "SwitchName=leaf$l Nodes=node[$list]"
			else
				a=$(((l - 1) * 4 + 1)); b=$((l * 4)); [ $b -gt "$NNODES" ] && b=$NNODES
				echo "SwitchName=leaf$l Nodes=node[$a-$b]"
			fi
		done
		[ "$nleaf" -gt 1 ] && echo "SwitchName=spine Switches=leaf[1-$nleaf]"
	} > "$DIR/etc/topology.conf"
	rm -f "$DIR/etc/topology.yaml"
	if [ -n "$TOPOLOGY_YAML" ]; then
		rm -f "$DIR/etc/topology.conf"
		install -m 0644 "$TOPOLOGY_YAML" "$DIR/etc/topology.yaml"
	fi
	# topoplace's view: the nodes as a torus, node1 at the origin, x fastest
	# and inside each node (the plugin's GPU selection): an example model
	local model="" ex
	rm -rf "$DIR/etc/nodes"
	if [ -n "$NODE_MODEL" ]; then
		ex=$REPO/conf/examples/nodes/$NODE_MODEL
		[ -r "$ex.xml" ] || die "TP_NODE_MODEL=$NODE_MODEL: no $ex.xml"
		mkdir -p "$DIR/etc/nodes"; chmod 0755 "$DIR/etc/nodes"
		install -m 0644 "$ex.xml" "$DIR/etc/nodes/$NODE_MODEL.xml"
		model=" NodeTopology=nodes/$NODE_MODEL.xml"
		if [ -r "$ex.links" ]; then
			install -m 0644 "$ex.links" "$DIR/etc/nodes/$NODE_MODEL.links"
			model="$model GpuLinks=nodes/$NODE_MODEL.links"
		fi
	fi
	if [ -n "$TOPOPLACE_CONF" ]; then
		sed "s|@MODEL@|$model|" "$TOPOPLACE_CONF" > "$DIR/etc/topoplace.conf"
	else
		cat > "$DIR/etc/topoplace.conf" <<EOF
# generated by tests/slurm/cluster.sh: $NNODES nodes as a $DIMS torus
Network=torus Dims=$DIMS Wrap=yes
NodeName=node[1-$last] CoordOrder=x-major$model
EOF
	fi
	# the plugin is copied next to the configs: srun loads it as the job's
	# user, who may not be able to read the build tree
	mkdir -p "$DIR/lib"; chmod 0755 "$DIR/lib"
	rm -f "$DIR/lib/topoplace.so"
	rm -f "$DIR/lib/topoplace-hydra-srun"
	if [ -n "$PLUGIN" ] && [ -r "$PLUGIN" ] && [ -z "$PLUGIN_INPLACE" ]; then
		install -m 0755 "$PLUGIN" "$DIR/lib/topoplace.so"
		# its helper for MPICH's mpiexec, next to it as make install does
		install -m 0755 "$REPO/contrib/topoplace-hydra-srun" "$DIR/lib/"
	fi
	write_plugstack on
	chmod 0644 "$DIR"/etc/*.conf
	# /etc/hosts seen inside the nodes: nodeX -> its address, tpctl -> 127.0.0.1
	{
		cat /etc/hosts
		echo "127.0.0.1 tpctl"
		for ((i = 1; i <= NNODES; i++)); do echo "$(node_addr "$i") node$i"; done
	} > "$DIR/etc/hosts"
	{
		echo "export SLURM_CONF=$DIR/etc/slurm.conf"
		[ -z "$SLURM_PREFIX" ] || echo "export PATH=\"$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:\$PATH\""
	} > "$DIR/env.sh"
	# TP_SLURMD_ENV for node-run.sh, one exported assignment per word
	local kv
	for kv in ${TP_SLURMD_ENV:-}; do printf 'export %q\n' "$kv"; done > "$DIR/etc/slurmd.env"

	# runs INSIDE `unshare --mount --uts --propagation private`
	cat > "$DIR/bin/node-run.sh" <<'EOF'
#!/bin/sh
set -e
N=$1; DIR=$2
hostname "$N"
mkdir -p "$DIR/state/$N/munge" "$DIR/state/$N/spool"
chown munge:munge "$DIR/state/$N/munge"
chmod 0755 "$DIR/state/$N/munge"
# a private munge socket dir, so a private munged (no "credential replayed")
mount --bind "$DIR/state/$N/munge" "$DIR/run/munge"
mount --bind "$DIR/etc/hosts" /etc/hosts
# a TmpFS of its own (slurm.conf TmpFS=$DIR/tmpfs): mpi/pmix keeps each
# step's server directory there under a name that is the same on every
# node, which a real cluster's nodes each have on their own disk
mkdir -p "$DIR/state/$N/tmp"
chmod 1777 "$DIR/state/$N/tmp"
mount --bind "$DIR/state/$N/tmp" "$DIR/tmpfs"
# the node's own cache of its detected model (plugstack node_cache=)
mkdir -p "$DIR/state/$N/cache"
chmod 0755 "$DIR/state/$N/cache"
mount --bind "$DIR/state/$N/cache" "$DIR/cache"
[ ! -r "$DIR/etc/slurmd.env" ] || . "$DIR/etc/slurmd.env"
setpriv --reuid=munge --regid=munge --init-groups munged -F \
	--key-file="$DIR/munge/munge.key" --socket="$DIR/run/munge/munge.socket.2" \
	--pid-file="$DIR/run/munge/munged.pid" --seed-file="$DIR/state/$N/munge/seed" \
	> "$DIR/log/munged-$N.log" 2>&1 &
echo $! > "$DIR/state/$N/munged.pid"
i=0
while [ ! -S "$DIR/run/munge/munge.socket.2" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
exec slurmd -D -N "$N" -f "$DIR/etc/slurm.conf"
EOF
	chmod 0755 "$DIR/bin/node-run.sh"
}

cmd_start() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	[ "$NNODES" -ge 1 ] && [ "$NNODES" -le 200 ] || die "TP_NNODES must be 1..200"
	if [ -n "$SLURM_PREFIX" ]; then
		[ -x "$SLURM_PREFIX/sbin/slurmctld" ] || die "TP_SLURM_PREFIX=$SLURM_PREFIX: no sbin/slurmctld"
		command -v munged >/dev/null || sh "$REPO/contrib/install-deps.sh" slurm >&2 ||
			die "cannot install munge"
	else
		sh "$REPO/contrib/install-deps.sh" slurm >&2 || die "cannot install the Slurm packages"
	fi
	local b
	for b in slurmctld slurmd munged mungekey setpriv unshare scontrol sinfo useradd; do
		command -v "$b" >/dev/null || die "missing $b"
	done
	alive "$DIR/ctld.pid" && die "already running (cluster.sh stop first)"
	for f in "$DIR"/node*.pid "$DIR/munged-host.pid"; do
		alive "$f" && die "stale daemon from $f still runs (cluster.sh stop first)"
	done
	local p
	for p in "$CTLD_PORT" $(seq $((NODE_PORT_BASE + 1)) $((NODE_PORT_BASE + NNODES))); do
		port_busy "$p" && die "port $p busy"
	done
	if [ -n "$PLUGIN" ] && [ ! -r "$PLUGIN" ]; then
		log "warning: plugin $PLUGIN not built; plugstack.conf will list it as optional"
	fi
	# On any failure from here on, tear down what was started.
	# shellcheck disable=SC2154
	trap 'rc=$?; if [ $rc -ne 0 ]; then log "start failed, stopping"; cmd_stop; fi' EXIT
	local t0 i ns
	t0=$(date +%s%N)
	rm -rf "$DIR/state" "$DIR/log"
	gen_conf
	ensure_user
	export SLURM_CONF="$DIR/etc/slurm.conf"

	[ -s "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key" --force
	chown -R munge:munge "$DIR/munge" "$DIR/run/munge"
	chmod 0700 "$DIR/munge"; chmod 0400 "$DIR/munge/munge.key"; chmod 0755 "$DIR/run/munge"
	rm -f "$DIR/run/munge/munge.socket.2"*
	setpriv --reuid=munge --regid=munge --init-groups munged -F \
		--key-file="$DIR/munge/munge.key" --socket="$DIR/run/munge/munge.socket.2" \
		--pid-file="$DIR/run/munge/munged.pid" --seed-file="$DIR/munge/seed-host" \
		> "$DIR/log/munged-host.log" 2>&1 &
	echo $! > "$DIR/munged-host.pid"
	for ((i = 0; i < 200; i++)); do [ -S "$DIR/run/munge/munge.socket.2" ] && break; sleep 0.05; done
	[ -S "$DIR/run/munge/munge.socket.2" ] || die "munged did not start (see $DIR/log/munged-host.log)"

	# slurmctld insists that its hostname equals SlurmctldHost
	unshare --uts sh -c "hostname tpctl; exec slurmctld -D -f $SLURM_CONF" \
		> "$DIR/log/slurmctld.out" 2>&1 &
	echo $! > "$DIR/ctld.pid"
	for ((i = 0; i < 200; i++)); do
		scontrol ping 2>/dev/null | grep -q 'is UP' && break
		running "$(cat "$DIR/ctld.pid")" || break
		sleep 0.05
	done
	scontrol ping 2>/dev/null | grep -q 'is UP' ||
		die "slurmctld not up (see $DIR/log/slurmctld.log, $DIR/log/slurmctld.out)"

	for ((i = 1; i <= NNODES; i++)); do
		unshare --mount --uts --propagation private "$DIR/bin/node-run.sh" "node$i" "$DIR" \
			> "$DIR/log/node$i.out" 2>&1 &
		echo $! > "$DIR/node$i.pid"
	done
	local self; self=$(readlink /proc/self/ns/uts)
	for ((i = 1; i <= NNODES; i++)); do
		local k
		for ((k = 0; k < 100; k++)); do
			ns=$(readlink "/proc/$(cat "$DIR/node$i.pid")/ns/uts" 2>/dev/null) ||
				die "node$i died (see $DIR/log/node$i.out)"
			[ "$ns" != "$self" ] && break
			sleep 0.02
		done
		[ "$ns" != "$self" ] || die "node$i not in its own UTS namespace"
		echo "$ns" > "$DIR/node$i.utsns"
	done
	local idle=0
	for ((i = 0; i < 600; i++)); do
		idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
		[ "$idle" -ge "$NNODES" ] && break
		sleep 0.05
	done
	[ "$idle" -ge "$NNODES" ] || { sinfo -N >&2 || true; die "only $idle/$NNODES nodes idle"; }
	trap - EXIT
	log "up: $NNODES nodes ($DIMS torus) idle in $((($(date +%s%N) - t0) / 1000000)) ms; source $DIR/env.sh"
}

kill_pidfile() {  # kill_pidfile FILE: TERM, then KILL after 5 s
	local f=$1 p j
	[ -f "$f" ] || return 0
	p=$(cat "$f")
	if [ -n "$p" ] && running "$p"; then
		kill -TERM "$p" 2>/dev/null || true
		for ((j = 0; j < 100; j++)); do running "$p" || break; sleep 0.05; done
		running "$p" && kill -KILL "$p" 2>/dev/null || true
	fi
	rm -f "$f"
}

cmd_stop() {
	export SLURM_CONF="$DIR/etc/slurm.conf"
	local i p ns f self jobs
	self=$(readlink /proc/self/ns/uts)
	if alive "$DIR/ctld.pid"; then
		jobs=$(squeue -h -o %i 2>/dev/null || true)
		# shellcheck disable=SC2086
		[ -n "$jobs" ] && scancel $jobs 2>/dev/null || true
		for ((i = 0; i < 60; i++)); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.05; done
	fi
	for f in "$DIR"/node*.pid; do
		[ -f "$f" ] || continue
		i=$(basename "$f" .pid); i=${i#node}
		ns=$(cat "$DIR/node$i.utsns" 2>/dev/null || true)
		kill_pidfile "$DIR/node$i.pid"                # slurmd
		kill_pidfile "$DIR/state/node$i/munged.pid"   # the node's munged
		# whatever still lives in that node's UTS namespace: slurmstepd, tasks
		if [ -n "$ns" ] && [ "$ns" != "$self" ]; then
			for p in /proc/[0-9]*; do
				[ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$ns" ] &&
					kill -KILL "${p#/proc/}" 2>/dev/null || true
			done
		fi
		rm -f "$DIR/node$i.utsns"
	done
	kill_pidfile "$DIR/ctld.pid"
	kill_pidfile "$DIR/munged-host.pid"
	log "stopped"
}

cmd_status() {
	local f any=1
	for f in "$DIR"/munged-host.pid "$DIR"/ctld.pid "$DIR"/node*.pid; do
		[ -f "$f" ] || continue
		if alive "$f"; then
			echo "$(basename "$f" .pid): pid $(cat "$f") running"; any=0
		else
			echo "$(basename "$f" .pid): dead"
		fi
	done
	[ $any = 0 ] && SLURM_CONF="$DIR/etc/slurm.conf" sinfo -N 2>/dev/null || true
	return $any
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) echo "export SLURM_CONF=$DIR/etc/slurm.conf" ;;
plugstack)
	case "${2:-}" in on|off) write_plugstack "$2" ;; *) die "usage: $0 plugstack on|off" ;; esac ;;
*) echo "usage: $0 start|stop|status|env|plugstack on|off" >&2; exit 2 ;;
esac
