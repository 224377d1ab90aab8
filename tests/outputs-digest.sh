#!/bin/sh
# A digest of what topoplace decides and prints on a fixed set of cases, one
# line a case: "NAME SHA256".  Run it on two builds and diff the lines to show
# that a change which must not change behaviour (a move of code between
# files, a faster equivalent) leaves every mapping, report and message as it
# was.  The cases cover each network kind, each hint kind, the policies,
# check-config, eval and bad input; allocations are drawn from fixed seeds.
#   sh tests/outputs-digest.sh [BUILD]          (default: build)
#   DIGEST_KEEP=DIR keeps every output under DIR, to diff a changed case.
# Timing fields ("ms", "seconds") are dropped from the JSON reports; the
# rest must be byte-identical.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
tp="$build/topoplace"
[ -x "$tp" ] || { echo "outputs-digest: $tp not built (make)" >&2; exit 2; }
work=${DIGEST_KEEP:-}
if [ -z "$work" ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
else
	mkdir -p "$work"
fi

python3 - "$work" <<'EOF'
# The networks and allocations, from fixed seeds.
import os, random, sys, json
d = sys.argv[1]
w = lambda p, s: open(os.path.join(d, p), "w").write(s)
rng = random.Random(4711)
w("torus.conf", "Network=torus\nDims=16x16x16\nNodeName=t[0-4095] CoordOrder=x-major\n")
w("torus.nodes", ",".join("t%d" % n for n in sorted(rng.sample(range(4096), 512))))
w("mesh.conf", "Network=mesh\nDims=8x8x8\nNodeName=m[0-511] CoordOrder=x-major\n")
w("mesh.nodes", ",".join("m%d" % n for n in sorted(rng.sample(range(512), 96))))
topo = "SwitchName=spine Switches=leaf[00-15]\n" + "".join(
    "SwitchName=leaf%02d Nodes=ft[%d-%d]\n" % (l, 32 * l, 32 * l + 31) for l in range(16))
w("topology.conf", topo)
w("tree.conf", "Network=tree\nTopologyFile=topology.conf\nLevelBandwidth=25\n")
w("tree-site.conf", "Network=tree\nTopologyFile=topology.conf\nLevelBandwidth=10\n"
  "LevelUplinks=16\nHopLatency=1us\nUplinkRouting=dmodk\n")
w("tree.nodes", ",".join("ft%d" % n for n in sorted(rng.sample(range(512), 128))))
w("rail.conf", "Network=tree\nTopologyFile=topology.conf\nRails=4 LevelUplinks=8 "
  "LevelBandwidth=50\nNodeBandwidth=50GB/s IntraNodeBandwidth=450GB/s\n")
w("rail.nodes", ",".join("ft%d" % n for n in sorted(rng.sample(range(512), 32))))
blocks = "".join("BlockName=nvl%d Nodes=gb[%d-%d]\n" % (b, 18 * b, 18 * b + 17)
                 for b in range(8)) + "BlockSizes=18\n"
w("blocks.conf", blocks)
w("fabric.conf", "SwitchName=leaf0 Nodes=gb[0-71]\nSwitchName=leaf1 Nodes=gb[72-143]\n"
  "SwitchName=spine Switches=leaf[0-1]\n")
w("block.conf", "Network=block\nTopologyFile=blocks.conf\nTreeTopologyFile=fabric.conf\n"
  "BlockBandwidth=1800 NetworkBandwidth=200\nIntraNodeBandwidth=900GB/s\n")
w("block-cards.conf", "Network=block\nTopologyFile=blocks.conf\nTreeTopologyFile=fabric.conf\n"
  "BlockBandwidth=1800 NetworkBandwidth=200\nNetworkCards=4\n")
al = []
for b in rng.sample(range(8), 6):
    al += rng.sample(range(18 * b, 18 * b + 18), rng.randint(11, 16))
w("block.nodes", ",".join("gb%d" % n for n in sorted(al)[:64]))
w("df.conf", "Network=dragonfly\nGroups=9\nRoutersPerGroup=8\nNodesPerRouter=4\n"
  "LinksPerGroupPair=1\nRouting=direct\nNodeName=df[0-287] CoordOrder=x-major\n")
w("df.nodes", ",".join("df%d" % n for n in sorted(rng.sample(range(288), 128))))
# a LULESH-like trace (unequal faces, edges, corners; all-reduce partners)
s, edges = 4, {}
for r in range(s ** 3):
    x, y, z = r % s, r // s % s, r // s // s
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                k = abs(dx) + abs(dy) + abs(dz)
                X, Y, Z = x + dx, y + dy, z + dz
                if k and 0 <= X < s and 0 <= Y < s and 0 <= Z < s:
                    t = X + s * (Y + s * Z)
                    if t > r:
                        edges[(r, t)] = int((65536, 1024, 16)[k - 1] * rng.uniform(0.9, 1.1))
    m = 1
    while m < s ** 3:
        if r ^ m > r:
            edges[(r, r ^ m)] = edges.get((r, r ^ m), 0) + 24
        m <<= 1
w("trace.json", json.dumps({"tasks": s ** 3, "exchanges": 2,
                            "edges": [[a, b, c] for (a, b), c in sorted(edges.items())]}))
# the same with the all-reduce's rounds (a trace's fourth element), where
# they are most of the exchange: the lane stage weighs long routes
w("trace-rounds.json", json.dumps({"tasks": s ** 3, "exchanges": 2, "edges": [
    [a, b, c] + ([40] if (a ^ b) & ((a ^ b) - 1) == 0 else [])
    for (a, b), c in sorted(edges.items())]}))
w("torus-site.conf", "Network=torus\nDims=16x16x16\nHopLatency=1us\n"
  "NodeName=t[0-4095] CoordOrder=x-major\n")
w("torus64.nodes", ",".join("t%d" % n for n in sorted(random.Random(4712).sample(range(4096), 64))))
w("slurm.conf", "ClusterName=c\nTopologyPlugin=topology/tree\nNodeName=ft[0-511] CPUs=8\n"
  "PartitionName=p Nodes=ALL Default=YES\n")
w("bad.conf", "Network=torus\nDims=4x4\nNodeName=t[0-15] CoordOrder=x-major\nBogus=1\n")
w("bad-tree.conf", "Network=tree\nTopologyFile=missing.conf\n")
EOF

# run NAME ARGS...: the command's stdout, stderr and exit status, timings out
run() {
	name=$1
	shift
	set +e
	(cd "$work" && "$tp" "$@") >"$work/$name.out" 2>"$work/$name.err"
	echo "exit $?" >>"$work/$name.err"
	set -e
	sed -E 's/"([a-z_]*_)?(ms|seconds|elapsed)": *[0-9.e+-]+,? *//g' \
		"$work/$name.out" >"$work/$name.norm"
	printf '%s %s\n' "$name" \
		"$(cat "$work/$name.norm" "$work/$name.err" | sha256sum | cut -c1-16)"
}

T="--threads 1"
for pol in auto geometric graph hierarchical block zorder; do
	run torus-$pol map -c torus.conf -w @torus.nodes -s 8x8x8:7pt -p $pol $T
done
run torus-json map -c torus.conf -w @torus.nodes -s 8x8x8:27pt:bytes=65536 -f json $T
run torus-periodic map -c torus.conf -w @torus.nodes -s 8x8x8:7pt:periodic=all $T
run torus-trace map -c torus.conf -w @torus.nodes -g trace.json -N 8 $T
run torus-rounds map -c torus-site.conf -w @torus64.nodes -g trace-rounds.json -N 1 -f json $T
run mesh-auto map -c mesh.conf -w @mesh.nodes -s 12x8:5pt -N 1 $T
run mesh-json map -c mesh.conf -w @mesh.nodes -g trace.json -f json $T
for c in tree tree-site; do
	run $c-stencil map -c $c.conf -w @tree.nodes -s 8x8x8:27pt -N 4 $T
	run $c-bytes map -c $c.conf -w @tree.nodes -s 8x8x8:27pt:bytes=65536 -N 4 -f json $T
	run $c-trace map -c $c.conf -w @tree.nodes -g trace.json -N 4 $T
	run $c-check check-config $c.conf
done
run tree-congestion map -c tree.conf -w @tree.nodes -s 8x8x8:7pt -N 4 -m congestion $T
run tree-rankfile map -c tree.conf -w @tree.nodes -s 8x8x8:7pt -N 4 -f rankfile $T
run tree-mpich map -c tree.conf -w @tree.nodes -s 8x8x8:7pt -N 4 -f mpich $T
run rail-par map -c rail.conf -w @rail.nodes --parallel tp=4,pp=4 -N 4 -f json $T
run rail-check check-config rail.conf
for c in block block-cards; do
	run $c-par map -c $c.conf -w @block.nodes --parallel tp=4,pp=4,ep=2 -N 4 -f json $T
	run $c-mega map -c $c.conf -w @block.nodes \
		--parallel tp=2,pp=2,order=tp-cp-ep-dp-pp,bytes=tp:64,dp:8 -N 4 $T
	run $c-stencil map -c $c.conf -w @block.nodes -s 16x16:5pt -N 4 $T
	run $c-check check-config $c.conf
done
run df-auto map -c df.conf -w @df.nodes -s 16x8x4:7pt -N 4 -f json $T
run df-trace map -c df.conf -w @df.nodes -g trace.json -N 2 $T
run df-check check-config df.conf
printf '# Slurm\x27s own topology\n' >"$work/slurm-tp.conf"
run slurm-map map -c slurm-tp.conf --slurm-conf slurm.conf -w @tree.nodes -s 8x8x8:7pt -N 4 \
	--slurm-version 26.05 -f json $T
run slurm-check check-config --slurm-conf slurm.conf slurm-tp.conf
run torus-eval map -c torus.conf -w @torus.nodes -s 8x8x8:7pt -p zorder -o zorder.hosts $T
run torus-eval2 eval -c torus.conf -w @torus.nodes -H zorder.hosts -s 8x8x8:7pt -f json
run bad-conf check-config bad.conf
run bad-tree check-config bad-tree.conf
run bad-map map -c bad.conf -w t[0-3] -s 2x2
run bad-parallel map -c rail.conf -w @rail.nodes --parallel tp=3,pp=0 -N 4
for f in "$root"/tests/data/slurm-topology/real/*.conf \
	"$root"/tests/data/slurm-topology/real/*.yaml; do
	[ -f "$f" ] || continue
	b=$(basename "$f")
	cp "$f" "$work/$b"
	case "$b" in
	*.yaml) printf 'ClusterName=c\nNodeName=n[0-3] CPUs=1\n' >"$work/$b.slurm" ;;
	*) printf 'ClusterName=c\nTopologyPlugin=topology/tree\nNodeName=n[0-3] CPUs=1\n' \
		>"$work/$b.slurm" ;;
	esac
	printf 'Network=tree\nTopologyFile=%s\n' "$b" >"$work/$b.tp.conf"
	run "real-$b" check-config "$b.tp.conf"
done
