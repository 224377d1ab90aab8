#!/bin/bash
# topoplace — launch latency the SPANK plugin adds to srun, on the test
# cluster (tests/slurm/cluster.sh).  One allocation of 8 nodes x 8 tasks; in
# it, srun -n64 runs RUNS times in each mode, the modes interleaved:
#   off       plugstack.conf without the plugin
#   loaded    the plugin loaded, no hint
#   stencil   --topo-stencil=4x4x4:7pt:periodic=all (geometric mapping)
#   graph     --topo-graph=FILE (the same 4x4x4 stencil as JSON with coords)
#   hostfile  no plugin, the same mapping given as SLURM_HOSTFILE by hand:
#             what Slurm's arbitrary distribution itself costs
# Prints the median wall time of each mode and the difference to "off".
# Target: < 50 ms added (median) for stencil hints.
#
# Needs root.  Environment: BUILD (default build), RUNS (default 15).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"   # make runs it with sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$REPO/$BUILD ;; esac
RUNS=${RUNS:-15}
export TP_SLURM_DIR=${TP_SLURM_DIR:-/tmp/topoplace-slurm}
export TP_NNODES=8 TP_CPUS=8 TP_GPUS=4 TP_DIMS=2x2x2 TP_PLUGIN=$B/topoplace.so
DIR=$TP_SLURM_DIR

if [ "$(id -u)" != 0 ]; then
	echo "bench-latency: SKIPPED (needs root to run the test cluster)"
	exit 0
fi
[ -r "$TP_PLUGIN" ] || { echo "bench-latency: $TP_PLUGIN not built"; exit 1; }
# one test cluster per host: wait for the lock before touching it
exec 9>/tmp/topoplace-slurm.lock; flock 9   # one test cluster per host
bash "$HERE/cluster.sh" status >/dev/null 2>&1 && bash "$HERE/cluster.sh" stop
trap 'bash "$HERE/cluster.sh" plugstack on >/dev/null 2>&1; bash "$HERE/cluster.sh" stop >/dev/null 2>&1' EXIT
bash "$HERE/cluster.sh" start || exit 1
# shellcheck disable=SC1091
. "$DIR/env.sh"
W=$DIR/bench
rm -rf "$W"; mkdir -p "$W"
python3 - "$W/stencil.json" <<'EOF'
import json, sys
n = 4
edges, coords = [], []
idx = lambda x, y, z: x + n * (y + n * z)
for z in range(n):
    for y in range(n):
        for x in range(n):
            coords.append([x, y, z])
            for dx, dy, dz in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
                u, v = idx(x, y, z), idx((x + dx) % n, (y + dy) % n, (z + dz) % n)
                edges.append([u, v, 1])
json.dump({"tasks": n ** 3, "edges": edges, "coords": coords}, open(sys.argv[1], "w"))
EOF

"$B/topoplace" map --config "$DIR/etc/topoplace.conf" --nodes 'node[1-8]' \
	--tasks-per-node 8 --stencil 4x4x4:7pt:periodic=all --format hostfile > "$W/hostfile" || exit 1

cat > "$W/inner.sh" <<EOF
#!/bin/bash
# runs inside the allocation
cd "$W"
t() { local a b; a=\$(date +%s%N); srun -n64 "\$@" true; b=\$(date +%s%N); echo \$(( (b - a) / 1000 )); }
for m in off loaded stencil graph; do   # warm-up
	bash "$HERE/cluster.sh" plugstack \$([ \$m = off ] && echo off || echo on)
	t >/dev/null
done
for ((i = 0; i < $RUNS; i++)); do
	bash "$HERE/cluster.sh" plugstack off
	echo "off \$(t)"
	bash "$HERE/cluster.sh" plugstack on
	echo "loaded \$(t)"
	echo "stencil \$(t --topo-stencil=4x4x4:7pt:periodic=all)"
	echo "graph \$(t --topo-graph=$W/stencil.json)"
	bash "$HERE/cluster.sh" plugstack off
	echo "hostfile \$(SLURM_HOSTFILE=$W/hostfile t)"
	bash "$HERE/cluster.sh" plugstack on
done
# the plugin's own time, from its report line
for ((i = 0; i < $RUNS; i++)); do
	srun -n64 --topo-stencil=4x4x4:7pt:periodic=all --topo-report true 2>&1 |
		sed -n 's/.* in \([0-9.]*\) ms.*/self \1/p'
done
EOF
chmod 0755 "$W/inner.sh"
salloc -Q -N8 --ntasks-per-node=8 "$W/inner.sh" > "$W/times.txt" 2> "$W/err.txt" || {
	echo "bench-latency: the benchmark job failed:"; cat "$W/err.txt"; exit 1; }

python3 - "$W/times.txt" "$RUNS" <<'EOF'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    t.setdefault(k, []).append(float(v) / (1000.0 if k != "self" else 1.0))
med = {k: statistics.median(v) for k, v in t.items()}
print(f"srun -n64 on 8 nodes x 8 tasks, median of {sys.argv[2]} runs per mode (ms)")
print(f"{'mode':<44}{'median':>9}{'min':>9}{'max':>9}{'added':>9}")
names = {"off": "no plugin",
         "hostfile": "no plugin, SLURM_HOSTFILE by hand",
         "loaded": "plugin loaded, no hint",
         "stencil": "--topo-stencil=4x4x4:7pt:periodic=all",
         "graph": "--topo-graph=FILE (4x4x4 with coords)"}
for k in ("off", "hostfile", "loaded", "stencil", "graph"):
    if k not in t:
        continue
    add = "" if k == "off" else f"{med[k] - med['off']:+9.1f}"
    print(f"{names[k]:<44}{med[k]:9.1f}{min(t[k]):9.1f}{max(t[k]):9.1f}{add}")
if "self" in med:
    print(f"{'mapping time inside srun (--topo-report)':<44}{med['self']:9.1f}")
added = med.get("stencil", 0) - med.get("off", 0)
print(f"target: < 50 ms added for stencil hints: {'met' if added < 50 else 'NOT met'} ({added:+.1f} ms)")
EOF
