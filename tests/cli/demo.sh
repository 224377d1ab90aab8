#!/bin/sh
# topoplace demo (what `make run` runs).
#
# usage: tests/cli/demo.sh path/to/topoplace
#
# On the example 24x24x24 torus (conf/examples/torus3d.conf) a job gets 512
# nodes scattered over the machine (a reproducible pseudo-random pick, listed
# in name order as Slurm lists them).  Two stencil jobs are mapped and
# compared with Slurm's default block order and with Slurm's own torus
# (Z-order) order; the hostfile of the second job is written to
# ./topoplace-demo.hostfile.
set -e

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 path/to/topoplace" >&2
	exit 2
fi
T=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CONF=$ROOT/conf/examples/torus3d.conf
OUT=./topoplace-demo.hostfile
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topoplace-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 512 distinct nodes of nid00000..nid13823 (Park-Miller generator, seed 2024),
# in name order.
NODES=$(awk 'BEGIN {
	x = 2024; c = 0
	while (c < 512) {
		x = (x * 16807) % 2147483647
		i = x % 13824
		if (!(i in u)) { u[i] = 1; c++ }
	}
	sep = ""
	for (i = 0; i < 13824; i++)
		if (i in u) { printf "%snid%05d", sep, i; sep = "," }
	print ""
}')

# summary FILE: one line from a map --format json report.
summary() {
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m, b, s = d["metrics"], d["block_metrics"], d["search"] or {}
print("  %s: %.3f hops per byte vs %.3f for block (%.1fx fewer hop-bytes), "
      "busiest link %.0f vs %.0f bytes" %
      (d["policy"], m["avg_hop_bytes"], b["avg_hop_bytes"],
       b["hop_bytes"] / m["hop_bytes"] if m["hop_bytes"] else float("inf"),
       m["max_congestion_bytes"], b["max_congestion_bytes"]))
if s:
    print("  search: %d of %d variants scored, best \"%s\", %.0f ms in all%s" %
          (s["variants_scored"], s["variants_total"], s["best_desc"],
           d["elapsed_ms"], " (time budget hit)" if s["budget_hit"] else ""))
EOF
	fi
}

echo "== topoplace demo =="
printf 'machine:    %s: ' "conf/examples/torus3d.conf"
"$T" check-config "$CONF" | sed '2,$s/^/            /'
echo "allocation: 512 nodes scattered over the torus, as Slurm lists them:"
echo "            $(echo "$NODES" | cut -d, -f1-6),... (--nodes takes the whole list)"
echo

echo "-- job 1: 512 ranks, 3-D 7-point stencil 8x8x8, 1 rank per node"
"$T" map --config "$CONF" --nodes "$NODES" --ntasks 512 --stencil 8x8x8:7pt \
	--compare --format json --output "$tmp/job1.json" 2>&1
summary "$tmp/job1.json"
echo

echo "-- job 2: 4096 ranks, 3-D 7-point stencil 16x16x16, 8 ranks per node"
"$T" map --config "$CONF" --nodes "$NODES" --tasks-per-node 8 \
	--stencil 16x16x16:7pt --compare --format json --output "$tmp/job2.json" 2>&1
summary "$tmp/job2.json"
"$T" map --config "$CONF" --nodes "$NODES" --tasks-per-node 8 \
	--stencil 16x16x16:7pt --output "$OUT"
echo
echo "hostfile of job 2 ($(wc -l <"$OUT" | tr -d ' ') lines, one node per rank) written to $OUT"
echo "run it with:  SLURM_HOSTFILE=$OUT srun --distribution=arbitrary -n 4096 ./app"
echo
echo "-- topoplace eval --hostfile $OUT (scores any hostfile against block order)"
"$T" eval --config "$CONF" --nodes "$NODES" --hostfile "$OUT" --stencil 16x16x16:7pt |
	sed 's/^/  /'
echo
echo "(columns: avg-hops/byte = average network hops per byte, 1.0 is ideal;"
echo " hop-bytes = bytes x hops summed, and relative to block; max-dil = longest"
echo " hop count of any pair; max-congestion = bytes on the busiest link;"
echo " intra-node = fraction of bytes that never leave a node)"
