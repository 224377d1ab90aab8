"""topoplace benchmark: the time of `topoplace map` with its defaults.

Cases (issue 47, point 4: auto without a budget in at most 1 s, 2 s, 5 s):
  torus-4096    a 16x16x16 stencil without sizes (as users write it) on
                4,096 random nodes of a 32^3 torus, one task a node;
  trace-512     a 512-rank graph as libtopoplace-trace writes LULESH's
                (8x8x8 ranks, faces, edges and corners of unequal bytes,
                lighter boundary ranks, an all-reduce's XOR partners,
                "exchanges": 2) on a 2:1 fat tree of 16 leaves x 32 nodes
                without LevelUplinks= (Slurm's files), 128 random nodes x 4;
  mesh-4096     gmsh's boolean demo in 4,096 METIS parts (make-meshes.sh)
                on the 32^3 torus;
  a2a-512       a 512-rank trace of a slab FFT's transposes: every pair of
                ranks, each pair its own bytes (MPI_Alltoallv of uneven
                blocks, 128 KiB +- 10 % each way), on trace-512's tree and nodes;
  pencil-512    a 512-rank trace of a pencil FFT: all to all inside each
                of 16 rows of 32 ranks and each of 32 columns of 16 (each
                pair +- 10 %), on the same tree.
Each is run with --threads 1 (CPU seconds: what a single core costs) and
with a thread per CPU (wall seconds); the two hostfiles must match.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time


def torus_case(d, rng):
    conf = os.path.join(d, "torus.conf")
    with open(conf, "w") as f:
        f.write("Network=torus\nDims=32x32x32\nNodeName=n[0-32767] CoordOrder=x-major\n")
    nodes = sorted(rng.sample(range(32768), 4096))
    return conf, ",".join("n%d" % n for n in nodes), 1


def tree_case(d, rng):
    topo = os.path.join(d, "topology.conf")
    with open(topo, "w") as f:
        f.write("SwitchName=spine Switches=leaf[00-15]\n")
        for l in range(16):
            f.write("SwitchName=leaf%02d Nodes=ft[%d-%d]\n" % (l, 32 * l, 32 * l + 31))
    conf = os.path.join(d, "tree.conf")
    with open(conf, "w") as f:
        f.write("Network=tree\nTopologyFile=topology.conf\nLevelBandwidth=25\n")
    nodes = sorted(rng.sample(range(512), 128))
    return conf, ",".join("ft%d" % n for n in nodes), 4


def write_trace(path, n, edges):
    """A trace file as libtopoplace-trace writes one: n ranks, edges
    [a, b, bytes] summed over a run of two exchanges."""
    with open(path, "w") as f:
        json.dump({"tasks": n, "exchanges": 2, "edges": edges}, f)


def lulesh_like(path, rng, side=8):
    """A trace as libtopoplace-trace writes one of LULESH: bytes per pair
    summed over a run, faces >> edges >> corners, boundary ranks lighter,
    plus recursive-doubling all-reduce partners."""
    n = side ** 3
    face, edge, corner = 3 * 65536, 3 * 1024, 3 * 16
    edges = {}
    for r in range(n):
        x, y, z = r % side, (r // side) % side, r // side // side
        for dz in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    k = abs(dx) + abs(dy) + abs(dz)
                    X, Y, Z = x + dx, y + dy, z + dz
                    if k == 0 or not (0 <= X < side and 0 <= Y < side and 0 <= Z < side):
                        continue
                    s = X + side * (Y + side * Z)
                    if s < r:
                        continue
                    b = (face, edge, corner)[k - 1]
                    b = int(b * rng.uniform(0.9, 1.1))
                    edges[(r, s)] = edges.get((r, s), 0) + b
        m = 1
        while m < n:
            s = r ^ m
            if s > r:
                edges[(r, s)] = edges.get((r, s), 0) + 24
            m <<= 1
    write_trace(path, n, [[a, b, w] for (a, b), w in sorted(edges.items())])


def alltoall(path, rng, n=512):
    """A trace of a slab FFT's transposes: every pair of ranks, each its
    own bytes (MPI_Alltoallv with blocks of uneven sizes), "exchanges": 2
    (forward and back)."""
    write_trace(path, n, [[a, b, int(2 * 2 * 131072 * rng.uniform(0.9, 1.1))]
                          for a in range(n) for b in range(a + 1, n)])


def pencils(path, rng, rows=16, cols=32):
    """A trace of a pencil FFT's transposes on a rows x cols grid of ranks
    (rank = row * cols + col): all to all inside each row and inside each
    column, each pair its own bytes."""
    edges = {}
    n = rows * cols
    for r in range(n):
        i, j = divmod(r, cols)
        for s in [i * cols + k for k in range(cols)] + [k * cols + j for k in range(rows)]:
            if s > r:
                edges[(r, s)] = edges.get((r, s), 0) + int(4 * 65536 * rng.uniform(0.9, 1.1))
    write_trace(path, n, [[a, b, w] for (a, b), w in sorted(edges.items())])


def run(tp, args):
    """(rc, user+sys CPU seconds of the child, wall seconds, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run([tp] + args, capture_output=True, text=True)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, cpu, wall, p.stderr


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topoplace", required=True)
    ap.add_argument("--meshes", required=True)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--case", help="these cases alone (comma-separated names)")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1000, 10 ** 6)
    print("default-speed: seed %d (--seed %d repeats it), %d runs each, %d CPUs, load %s"
          % (seed, seed, a.runs, os.cpu_count(), open("/proc/loadavg").read().split()[0]))
    rng = random.Random(seed)
    d = tempfile.mkdtemp(prefix="topoplace-speed.")
    cases = []
    conf, nodes, tpn = torus_case(d, rng)
    cases.append(("torus-4096", conf, nodes, tpn, ["-s", "16x16x16"], 1.0))
    tconf, tnodes, ttpn = tree_case(d, rng)
    trace = os.path.join(d, "trace.json")
    lulesh_like(trace, rng)
    cases.append(("trace-512", tconf, tnodes, ttpn, ["-g", trace], 2.0))
    mesh = os.path.join(a.meshes, "boolean-4096.json")
    if os.path.exists(mesh):
        cases.append(("mesh-4096", conf, nodes, tpn, ["-g", mesh], 5.0))
    else:
        print("default-speed: mesh-4096 skipped (%s missing: make-meshes.sh)" % mesh)
    a2a = os.path.join(d, "a2a.json")
    alltoall(a2a, rng)
    cases.append(("a2a-512", tconf, tnodes, ttpn, ["-g", a2a], 2.0))
    pen = os.path.join(d, "pencils.json")
    pencils(pen, rng)
    cases.append(("pencil-512", tconf, tnodes, ttpn, ["-g", pen], 2.0))
    print("%-11s %6s %11s %11s %6s %-6s %s" % ("case", "tasks", "CPU 1 thr", "wall all",
                                               "goal", "same", "kept"))
    only = set(a.case.split(",")) if a.case else None
    for name, conf, nodes, tpn, pat, goal in cases:
        if only is not None and name not in only:
            continue
        cpu, wall, same, kept = [], [], True, "?"
        for _ in range(a.runs):
            out1 = os.path.join(d, name + ".1")
            outn = os.path.join(d, name + ".n")
            base = ["map", "-c", conf, "-w", nodes, "-N", str(tpn)] + pat
            rc, c, _, err = run(a.topoplace, base + ["--threads", "1", "-o", out1])
            if rc:
                print("%s: map failed: %s" % (name, err.strip()[:200]))
                break
            rc, _, w, err = run(a.topoplace, base + ["--explain", "-o", outn])
            if rc:
                print("%s: map failed: %s" % (name, err.strip()[:200]))
                break
            cpu.append(c)
            wall.append(w)
            same = same and open(out1).read() == open(outn).read()
            for line in err.splitlines():
                if line.startswith("explain: kept "):
                    kept = line.split("kept ", 1)[1].split(":")[0]
        if not cpu:
            continue
        ntasks = sum(1 for _ in open(out1))
        print("%-11s %6d %9.2f s %9.2f s %4.0f s %-6s %s" % (
            name, ntasks, median(cpu), median(wall), goal, "yes" if same else "NO", kept))
    print("medians of %d runs; goal: issue 47's, wall time on the machine a site runs" % a.runs)


if __name__ == "__main__":
    sys.exit(main())
