#!/bin/bash
# topoplace — what a real slurmctld says about a topology.conf/topology.yaml.
#
#   slurmctld-topology.sh [-p PREFIX] [-n NODES] [-t SECS] [-T PLUGIN] [-d LEVEL] [-v] FILE...
#   slurmctld-topology.sh -m [options] [DIR]   (re-judge a MANIFEST in place)
#
# For each FILE it writes a throw-away slurm.conf in a temporary folder,
# puts FILE beside it as topology.conf (TopologyPlugin=topology/tree, block
# or ring, from FILE's first key) or as topology.yaml (*.yaml, *.yml), runs
# `slurmctld -D -i -c` in the foreground, waits until it says "Running as
# primary controller" or exits (at most SECS, default 10), stops it and
# prints one line:
#
#   accept FILE                      up, nothing said
#   warn FILE: LINE | LINE ...       up, but error:/warning: lines on the way
#   refuse FILE: LINE                exited before it was up: its fatal line
#                                    (else its last error line)
#   error FILE: WHY                  no verdict (it hung, or did not start)
#
# topoplace's rule is that it accepts, warns about and refuses what
# this slurmctld accepts, warns about and refuses; this script is how the
# corpus in tests/data/slurm-topology got its verdicts (see its MANIFEST).
#
# Nodes: slurm.conf must name every node the topology names, or slurmctld
# would only complain about those.  They come from NODES (-n), else from
# FILE's sibling with the extension .nodes (foo.conf -> foo.nodes), else
# from FILE itself: every Nodes=/nodes: value, expanded and merged with
# Slurm's own hostlist code (scontrol show hostnames / hostlist).  A .nodes
# file holds slurm.conf lines (NodeName=..., PartitionName=...) taken as
# they are but for their addresses, so that a case can name a node
# slurm.conf lacks, or bring partitions.  All nodes get NodeAddr=127.0.0.1,
# so nothing resolves names, and no slurmd is needed: the verdict is
# settled before slurmctld pings anyone.
#
# PREFIX is a Slurm install (sbin/slurmctld, bin/scontrol): -p, else
# TP_SLURM_PREFIX, else `release.sh build 26.05.3` (cached build; exit 3,
# one line, when there is no tarball).  Auth and cred are auth/none and
# cred/none: no munged.  SlurmUser is whoever runs this (root is fine).
# -v prints slurmctld's whole log after each verdict line; -d LEVEL sets
# SlurmctldDebug (default info: the level a site runs at, so the verdict
# is what an admin would see).  -T forces the TopologyPlugin of a
# topology.conf.  -m re-judges every file of DIR/MANIFEST (default
# tests/data/slurm-topology) and rewrites its verdict column.  Exit
# status: 0 when every file got a verdict, 2 when one did not, 1 on bad
# usage.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=${TP_SLURM_VERSION:-26.05.3}
PREFIX=${TP_SLURM_PREFIX:-}
NODES=""
SECS=10
PLUGIN=""
VERBOSE=0
DEBUG=info
MANIFEST=0

usage() {
	sed -n '4,5p' "$0" | sed 's/^# *//' >&2
	exit 1
}

while getopts "p:n:t:T:d:vmh" o; do
	case $o in
	p) PREFIX=$OPTARG ;;
	n) NODES=$OPTARG ;;
	t) SECS=$OPTARG ;;
	T) PLUGIN=$OPTARG ;;
	v) VERBOSE=1 ;;
	d) DEBUG=$OPTARG ;;
	m) MANIFEST=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $MANIFEST = 1 ] || [ $# -gt 0 ] || usage
case $SECS in ''|*[!0-9]*|0) usage ;; esac

if [ -z "$PREFIX" ]; then
	PREFIX=$(bash "$HERE/release.sh" build "$VERSION") || exit $?
fi
CTLD=$PREFIX/sbin/slurmctld
SCONTROL=$PREFIX/bin/scontrol
if [ ! -x "$CTLD" ] || [ ! -x "$SCONTROL" ]; then
	echo "slurmctld-topology.sh: no sbin/slurmctld and bin/scontrol in $PREFIX" >&2
	exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tp-ctld-topo.XXXXXX") || exit 1
PID=""
MAIN=$BASHPID
cleanup() {
	# a forked child that caught a signal before its exec leaves the
	# folder and the daemon to this shell
	[ "$BASHPID" = "$MAIN" ] || return 0
	# only the slurmctld this script started, by its PID
	if [ -n "$PID" ] && kill -0 "$PID" 2> /dev/null; then
		kill -KILL "$PID" 2> /dev/null
		wait "$PID" 2> /dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# A config for scontrol's hostlist code, which wants a ClusterName only.
printf 'ClusterName=tphosts\nSlurmctldHost=localhost\n' > "$WORK/hosts.conf"
hostnames() { SLURM_CONF=$WORK/hosts.conf "$SCONTROL" show hostnames "$1" 2> /dev/null; }
hostlist() { SLURM_CONF=$WORK/hosts.conf "$SCONTROL" show hostlist "$1" 2> /dev/null; }

# The node lists FILE names, one a line, comments dropped: Nodes= of
# topology.conf (keys are case-blind there), nodes: of topology.yaml.
node_exprs() {  # node_exprs FILE yaml|conf
	if [ "$2" = yaml ]; then
		sed -e 's/#.*//' "$1" |
			sed -n -E 's/^[[:space:]-]*nodes[[:space:]]*:[[:space:]]*//p' |
			sed -E -e 's/[[:space:]]+$//' -e "s/^[\"']//" -e "s/[\"']\$//"
	else
		sed -e 's/#.*//' "$1" | grep -o -i -E '(^|[[:space:]])nodes=[^[:space:]]+' |
			sed -E 's/^[[:space:]]*[Nn][Oo][Dd][Ee][Ss]=//'
	fi
}

# slurm.conf's node lines for FILE, on stdout.
node_lines() {  # node_lines FILE yaml|conf
	local side=${1%.*}.nodes e all=""
	[ -z "$NODES" ] || side=$NODES
	if [ -r "$side" ]; then
		# the case's own node lines, their addresses replaced by one that
		# needs no name service (a test's NodeAddr=t14 would only add noise)
		sed -E -e 's/(^|[[:space:]])[Nn][Oo][Dd][Ee]([Aa][Dd][Dd][Rr]|[Hh][Oo][Ss][Tt][Nn][Aa][Mm][Ee])=[^[:space:]]*//g' \
			-e '/^[[:space:]]*[Nn][Oo][Dd][Ee][Nn][Aa][Mm][Ee]=/s/$/ NodeAddr=127.0.0.1/' "$side"
		return
	fi
	while IFS= read -r e; do
		[ -n "$e" ] || continue
		# a list Slurm cannot expand is left for slurmctld to judge
		all="$all$(hostnames "$e" | tr '\n' ',')"
	done < <(node_exprs "$1" "$2")
	all=$(echo "$all" | tr ',' '\n' | grep -v '^$' | sort -u | tr '\n' ',')
	all=${all%,}
	if [ -z "$all" ]; then
		all=tpnode1   # slurmctld wants one node at least
	else
		all=$(hostlist "$all")
	fi
	echo "NodeName=$all NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN"
}

conf_plugin() {  # conf_plugin FILE -> topology/tree|block|ring
	local k
	[ -n "$PLUGIN" ] && { echo "$PLUGIN"; return; }
	k=$(sed -e 's/#.*//' "$1" | grep -o -i -m1 -E '(switchname|blockname|blocksizes|blocklevels|ringname)=' | tr '[:upper:]' '[:lower:]')
	case $k in
	block*) echo topology/block ;;
	ring*) echo topology/ring ;;
	*) echo topology/tree ;;
	esac
}

free_port() {
	local p i
	for ((i = 0; i < 50; i++)); do
		p=$((20000 + RANDOM % 30000))
		if command -v ss > /dev/null; then
			ss -ltnH "sport = :$p" 2> /dev/null | grep -q . && continue
			ss -ltnH "sport = :$((p + 1))" 2> /dev/null | grep -q . && continue
		fi
		echo "$p"; return
	done
	echo 27817
}

# Lines that any start of this throw-away controller prints: not about
# the topology (no http_parser plugins in a build without them).
NOISE='cannot create http_parser context|No cgroup\.conf|No memory enforcing|state file|backup_controller not specified|High latency for 1000 calls'

# The log's messages, without timestamps.
msgs() { sed -E 's/^\[[^]]*\] //' "$1"; }

judge() {  # judge FILE -> one line
	local f=$1 kind d port nodes t up=0 rc=0 log lines fat why
	[ -r "$f" ] || { echo "error $f: cannot read it"; return 2; }
	case $f in *.yaml|*.yml) kind=yaml ;; *) kind=conf ;; esac
	d=$WORK/run; rm -rf "$d"; mkdir -p "$d/state" "$d/spool"
	port=$(free_port)
	nodes=$(node_lines "$f" $kind)
	{
		echo "# written by tests/slurm/slurmctld-topology.sh for $f"
		echo "ClusterName=tpcheck"
		echo "SlurmctldHost=localhost"
		echo "SlurmctldPort=$port"
		echo "SlurmdPort=$((port + 1))"
		echo "SlurmUser=$(id -un)"
		echo "SlurmdUser=$(id -un)"
		echo "AuthType=auth/none"
		echo "CredType=cred/none"
		echo "StateSaveLocation=$d/state"
		echo "SlurmdSpoolDir=$d/spool"
		echo "SlurmctldPidFile=$d/slurmctld.pid"
		echo "SlurmctldDebug=$DEBUG"
		echo "MailProg=/bin/true"
		echo "ProctrackType=proctrack/linuxproc"
		echo "TaskPlugin=task/none"
		echo "MpiDefault=none"
		echo "SwitchType=switch/none"
		echo "SelectType=select/cons_tres"
		echo "ReturnToService=2"
		if [ $kind = conf ]; then
			echo "TopologyPlugin=$(conf_plugin "$f")"
			cp "$f" "$d/topology.conf"
		else
			# topology.yaml beside slurm.conf wins over TopologyPlugin
			cp "$f" "$d/topology.yaml"
		fi
		echo "$nodes"
		# a .nodes file may bring its own partitions
		echo "$nodes" | grep -q -i '^[[:space:]]*PartitionName=' ||
			echo "PartitionName=all Nodes=ALL Default=YES"
	} > "$d/slurm.conf"
	log=$d/log
	: > "$log"   # there before the first poll
	"$CTLD" -D -i -c -f "$d/slurm.conf" > "$log" 2>&1 < /dev/null &
	PID=$!
	# poll: up, or gone, or out of time (0.1 s steps)
	for ((t = 0; t < SECS * 10; t++)); do
		if grep -q 'Running as primary controller' "$log"; then up=1; break; fi
		kill -0 "$PID" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$PID" 2> /dev/null; then
		kill -TERM "$PID" 2> /dev/null
		for ((t = 0; t < 30; t++)); do kill -0 "$PID" 2> /dev/null || break; sleep 0.1; done
		kill -KILL "$PID" 2> /dev/null
		wait "$PID" 2> /dev/null
		rc=0
	else
		wait "$PID" 2> /dev/null; rc=$?
		grep -q 'Running as primary controller' "$log" && up=1
	fi
	PID=""
	# what it said up to being up (the shutdown's lines are not the verdict)
	# (the temporary folder's name left out: the same file, the same line)
	msgs "$log" | sed -e '/Running as primary controller/q' -e "s|$d/||g" > "$d/said"
	# slurmctld's own error:, warning: and fatal: lines (at -d debug, the
	# data parser's "debug: ... WARNING:" notes are not among them)
	lines=$(grep -E '^(error|warning|fatal):' "$d/said" | grep -v -E "$NOISE")
	if [ $up = 1 ]; then
		if [ -n "$lines" ]; then
			echo "warn $f: $(echo "$lines" | paste -s -d'|' | sed 's/|/ | /g')"
		else
			echo "accept $f"
		fi
	elif grep -q -E '^fatal:' "$d/said"; then
		fat=$(grep -E '^fatal:' "$d/said" | head -1)
		why=$(echo "$lines" | grep -v -F -x -- "$fat" | paste -s -d'|' | sed 's/|/ | /g')
		echo "refuse $f: $fat${why:+ (before: $why)}"
	elif [ -n "$lines" ] && [ "$rc" != 0 ]; then
		echo "refuse $f: $(echo "$lines" | tail -1) (exit $rc)"
	elif [ "$rc" != 0 ]; then
		echo "refuse $f: exit $rc, last line: $(tail -1 "$d/said")"
	else
		echo "error $f: slurmctld neither came up nor exited in ${SECS}s"
	fi
	[ $VERBOSE = 1 ] && sed 's/^/  | /' "$log"
	[ $up = 1 ] || [ "$rc" != 0 ] || return 2
	return 0
}

status=0
if [ $MANIFEST = 1 ]; then
	# MANIFEST: "path kind verdict note...", paths relative to its folder;
	# the verdict column is rewritten, the rest kept
	dir=${1:-$HERE/../data/slurm-topology}
	m=$dir/MANIFEST
	[ -r "$m" ] || { echo "slurmctld-topology.sh: no $m" >&2; exit 1; }
	: > "$WORK/manifest"
	while IFS= read -r line; do
		case $line in ''|'#'*) echo "$line" >> "$WORK/manifest"; continue ;; esac
		read -r p k _ note <<< "$line"
		# not $(judge): a subshell would keep slurmctld's PID from the
		# traps of this shell
		judge "$dir/$p" > "$WORK/verdict" || status=2
		cat "$WORK/verdict"
		nv=$(cut -d' ' -f1 "$WORK/verdict")
		echo "$p $k $nv${note:+ $note}" >> "$WORK/manifest"
	done < "$m"
	cp "$WORK/manifest" "$m"
else
	for f in "$@"; do
		judge "$f" || status=2
	done
fi
exit $status
