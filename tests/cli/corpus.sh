#!/bin/bash
# topoplace — every topology file of tests/data/slurm-topology (Slurm's own
# test suite of 26.05, its docs, what topograph, soperator, CycleCloud, slurm-gcp and
# Cluster Toolkit generate, and probes written here) read as a site would
# have it: beside a slurm.conf, with a topoplace.conf that names no network.
# MANIFEST says what the real slurmctld 26.05.3 did with each file
# (tests/slurm/slurmctld-topology.sh); topoplace must do the same:
#
#   slurmctld accepts (or warns)  check-config exits 0 (a skeleton, with no
#                                 node yet, too: its nodes join at run
#                                 time), or says in one line that the
#                                 topology used is flat
#   slurmctld refuses             check-config exits 2 with one line that
#                                 names the file (and line)
#
# except where topoplace deliberately differs, listed below with the reason.
#
#   sh tests/cli/corpus.sh [BUILD]      (make cli-tests runs it)
# One line per file that disagrees, then "corpus: N passed, M failed".
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
B=${1:-build}
case "$B" in /*) ;; *) B=$REPO/$B ;; esac
T=$B/topoplace
D=$REPO/tests/data/slurm-topology
[ -x "$T" ] || { echo "corpus: $T not built"; echo "corpus: 0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-corpus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Where topoplace knowingly parts from slurmctld 26.05 (file: why).
declare -A DIFFERS=(
	# 23.11 reads BlockLevels=; 24.05 and later refuse the key.  topoplace
	# takes the file of any release it supports.
	[invalid/block-levels-2311.conf]=accepts
)

pass=0 fail=0
while read -r path kind verdict note; do
	case "$path" in ''|'#'*) continue ;; esac
	f=$D/$path
	[ -r "$f" ] || { fail=$((fail + 1)); echo "FAIL $path: listed in MANIFEST, missing"; continue; }
	w=$tmp/w
	rm -rf "$w"; mkdir "$w"
	{
		echo "ClusterName=corpus"
		nodes=${f%.*}.nodes
		[ -r "$nodes" ] && grep -v '^#' "$nodes"
		if [ "$kind" = conf ]; then
			first=$(grep -v '^[[:space:]]*#' "$f" | grep -o -m1 -i '^[[:space:]]*[a-z]*name' | tr -d ' \t' | tr A-Z a-z)
			case "$first" in
				blockname) echo "TopologyPlugin=topology/block" ;;
				ringname) echo "TopologyPlugin=topology/ring" ;;
				*) echo "TopologyPlugin=topology/tree" ;;
			esac
		fi
	} > "$w/slurm.conf"
	if [ "$kind" = conf ]; then cp "$f" "$w/topology.conf"; else cp "$f" "$w/topology.yaml"; fi
	: > "$w/topoplace.conf"
	SLURM_CONF=$w/slurm.conf "$T" check-config "$w/topoplace.conf" > "$w/out" 2> "$w/err"
	rc=$?
	errs=$(grep -v '^topoplace: warning: ' "$w/err")
	nerr=$(printf '%s' "$errs" | grep -c . || true)
	want=$verdict
	[ "${DIFFERS[$path]:-}" = accepts ] && want=accept
	why=""
	case "$want" in
	accept|warn)
		if [ $rc != 0 ] && ! printf '%s' "$errs" | grep -q "is flat: Slurm knows no network"; then
			why="slurmctld ${verdict}s it; topoplace: exit $rc: $errs"
		elif [ $rc != 0 ] && [ "$nerr" != 1 ]; then
			why="more than one line: $errs"
		fi ;;
	refuse)
		if [ $rc != 2 ]; then
			why="slurmctld refuses it; topoplace: exit $rc"
		elif [ "$nerr" != 1 ]; then
			why="$nerr lines: $errs"
		elif ! printf '%s' "$errs" | grep -q "$w/topology\.\(conf\|yaml\)\|$w/slurm.conf"; then
			why="the line does not name the file: $errs"
		fi ;;
	esac
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $path ($verdict: $note)"
		echo "     $why" | head -3
	fi
done < "$D/MANIFEST"
echo "corpus: $pass passed, $fail failed"
[ "$fail" = 0 ]
