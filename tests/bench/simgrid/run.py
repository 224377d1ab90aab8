#!/usr/bin/env python3
"""topoplace benchmark: placements simulated with SimGrid SMPI.

What and why
  topoplace eval predicts the time of one neighbour exchange for a mapping
  (its JSON "predicted" object).  This benchmark checks that model against
  a flow-level simulation (SimGrid SMPI) of the same exchange on the same
  network, and reports what every placement policy buys in simulated time
  against Slurm's block order and against Scotch.  It is a benchmark, not a
  test: it prints figures and fails only when a tool does.

Set-up (tests/bench/simgrid.sh does it all; run that)
  * platforms.py writes each network twice: a SimGrid platform and the
    topoplace.conf (+ topology.conf) with the same node names in the same
    order.  Config keys this topoplace build does not know yet (the
    predicted-time keys: LevelUplinks, HopLatency, ...) are dropped, and the
    settings block says which.
  * A case is a network, a seeded random set of nodes listed in index order
    (so block = Slurm's default order), tasks per node and a pattern (a
    stencil spec, or a random geometric JSON graph with coordinates).
  * For each policy (block, auto, geometric when the tasks have coordinates,
    hierarchical on trees and dragonflies) `topoplace map ... -p P -t 0`
    writes a hostfile; Scotch (scotch_gmap -b0 -Cd, a `sub` target of the
    allocation inside a target of the whole machine; the dragonfly is
    approximated by a tleaf) gives another, made to honour the slots per node.
  * Every mapping is scored by `topoplace eval -f json` (predicted time) and
    simulated: smpirun runs exchange.c (WARMUP+ITERS exchanges, every rank
    starting at one instant; the median of the last rank's end) with the
    SMPI network model's defaults, TCP's cross-traffic off.
  * Tables: per case, then per network Spearman rank correlation and median
    relative error of predicted against simulated (goals: >= 0.9, <= 15 %),
    then per network and policy the geometric mean of simulated time over
    block's and over Scotch's.

  run.py --topoplace PATH --exchange PATH [--quick] [--no-scotch]
         [--jobs N] [--iters N] [--keep DIR] [--network-model MODEL]
         [--sim-cache DIR]

  --sim-cache DIR keeps each simulated time under a digest of what SMPI
  is given (platform, exchange source, pattern, hostfile, settings): SMPI
  is deterministic, so two builds compared on the same seeds simulate only
  the hostfiles that differ.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import platforms  # noqa: E402

BYTES = 65536
WARMUP = 1

NEW_KEYS = ("LevelUplinks", "UplinkRouting", "Routing", "HopLatency", "IntraNodeBandwidth",
            "FlowSharing",
            "LinkBandwidth", "LocalBandwidth", "GlobalBandwidth",
            "NodeBandwidth")


def sh(argv, cwd=None, timeout=600):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# ---- configs: drop keys this build does not know ----

def settle_conf(tp, net):
    """check-config the network's conf; drop unknown keys one by one."""
    for _ in range(len(NEW_KEYS) + 1):
        rc, out, err = sh([tp, "check-config", net.conf])
        if rc == 0:
            return None
        with open(net.conf) as f:
            lines = f.readlines()
        m = re.search(r"unknown key '([A-Za-z]+)'", err)
        key = m.group(1) if m else None
        if not key:
            # a key this kind of network does not take yet (UplinkRouting=dmodk)
            m = re.search(re.escape(net.conf) + r":(\d+):", err)
            if m and 0 < int(m.group(1)) <= len(lines):
                k = lines[int(m.group(1)) - 1].split("=", 1)[0].strip()
                key = k if k in NEW_KEYS else None
        if not key:
            return "check-config %s: %s" % (net.conf, err.strip()[:300])
        kept = []
        for ln in lines:
            if ln.startswith("NodeName="):
                ln = re.sub(r"\s%s=\S+" % key, "", ln)
            elif ln.split("=", 1)[0].strip() == key:
                continue
            kept.append(ln)
        if kept == lines:
            return "check-config %s: cannot drop %s" % (net.conf, key)
        with open(net.conf, "w") as f:
            f.writelines(kept)
        net.dropped.append(key)
    return "check-config %s: still failing" % net.conf


# ---- patterns ----

def stencil_edges(dims, periodic=False):
    """7pt, x fastest: topoplace's stencil numbering; periodic: every
    axis wraps (extents above 2)."""
    X, Y, Z = dims
    e = []
    for z in range(Z):
        for y in range(Y):
            for x in range(X):
                i = x + X * (y + Y * z)
                if x + 1 < X:
                    e.append((i, i + 1, BYTES))
                elif periodic and X > 2:
                    e.append((i, i - x, BYTES))
                if y + 1 < Y:
                    e.append((i, i + X, BYTES))
                elif periodic and Y > 2:
                    e.append((i, i - X * y, BYTES))
                if z + 1 < Z:
                    e.append((i, i + X * Y, BYTES))
                elif periodic and Z > 2:
                    e.append((i, i - X * Y * z, BYTES))
    return e


def random_geometric(n, seed, k=6):
    """n tasks at random points of the unit cube, each linked to its k
    nearest; bytes 8 KiB..128 KiB, more for closer pairs.  Tasks numbered
    along z, y, x slabs so that block order keeps some locality."""
    rnd = random.Random(seed)
    pts = [(rnd.random(), rnd.random(), rnd.random()) for _ in range(n)]
    pts.sort(key=lambda p: (int(p[2] * 8), int(p[1] * 8), p[0]))
    edges = {}
    for i, p in enumerate(pts):
        d = sorted((sum((a - b) ** 2 for a, b in zip(p, q)), j)
                   for j, q in enumerate(pts) if j != i)[:k]
        for dist2, j in d:
            a, b = min(i, j), max(i, j)
            if (a, b) not in edges:
                r = math.sqrt(dist2)
                by = int(131072 / (1 + 8 * r) / 1024) * 1024
                edges[(a, b)] = max(8192, by) + 1024 * rnd.randrange(8)
    e = [(a, b, w) for (a, b), w in sorted(edges.items())]
    return pts, e


class Case:
    def __init__(self, name, net, nnodes, tpn, seed, stencil=None, dims=None,
                 graph_seed=None, periodic=False):
        self.name, self.net, self.nnodes, self.tpn = name, net, nnodes, tpn
        self.seed, self.stencil, self.dims = seed, stencil, dims
        self.periodic = periodic
        self.graph_seed = graph_seed
        self.ntasks = nnodes * tpn
        rnd = random.Random("%s-%d" % (net.key, seed))
        self.alloc = sorted(rnd.sample(range(len(net.nodes)), nnodes))
        self.hosts = [net.nodes[i] for i in self.alloc]
        self.hostlist = net.hostlist(self.alloc)
        self.policies = ["block", "auto"]
        self.policies.append("geometric")  # stencils and our graphs have coords
        if net.kind in ("tree", "dragonfly"):
            self.policies.append("hierarchical")
        self.res = {}    # policy -> dict(sim=, pred=, note=)
        self.floor = None   # floor_time
        self.errors = []

    def pattern_args(self):
        return ["-s", self.stencil] if self.stencil else ["-g", self.graph_json]


def cases_for(nets, quick, first=0, count=None, periodic=False):
    ft4, ft2, tor, df = nets["ft4"], nets["ft2"], nets["torus"], nets["df"]
    n = {"torus": 10, "ft4": 10, "ft2": 8, "df": 4, "graph": 4}
    if quick:
        n = {"torus": 2, "ft4": 2, "ft2": 1, "df": 2, "graph": 1}
    if count:
        n = {k: count for k in n}
    per = "all" if periodic else "none"
    # told nothing: the hint without sizes, as users write it
    size = "" if platforms.TOLD_NOTHING else ":bytes=%d" % BYTES
    # first: other seeds (the same kinds on allocations the figures in
    # doc/benchmarks.md were not measured on)
    n = {k: range(first, first + v) for k, v in n.items()}
    cs = []
    for s in n["torus"]:
        cs.append(Case("torus-s%d" % s, tor, 512, 1, s,
                       "8x8x8:7pt:periodic=%s%s" % (per, size), (8, 8, 8),
                       periodic=periodic))
    for s in n["ft4"]:
        cs.append(Case("ft4-s%d" % s, ft4, 128, 4, s,
                       "8x8x8:7pt:periodic=%s%s" % (per, size), (8, 8, 8),
                       periodic=periodic))
    for s in n["ft2"]:
        cs.append(Case("ft2-s%d" % s, ft2, 128, 4, s,
                       "8x8x8:7pt:periodic=%s%s" % (per, size), (8, 8, 8),
                       periodic=periodic))
    for s in n["df"]:
        cs.append(Case("df-s%d" % s, df, 48, 4, s,
                       "8x6x4:7pt:periodic=%s%s" % (per, size), (8, 6, 4),
                       periodic=periodic))
    for s in n["graph"]:
        cs.append(Case("rgg-ft4-s%d" % s, ft4, 128, 4, 100 + s,
                       graph_seed=s))
    return cs


# ---- one case ----

def write_graph_files(c, d, periodic=False):
    if c.stencil:
        c.edges = stencil_edges(c.dims, periodic)
    else:
        pts, c.edges = random_geometric(c.ntasks, 1000 + c.graph_seed)
        c.graph_json = os.path.join(d, "graph.json")
        with open(c.graph_json, "w") as f:
            json.dump({"tasks": c.ntasks,
                       "edges": [[a, b, w] for a, b, w in c.edges],
                       "coords": [[round(v, 5) for v in p] for p in pts]}, f)
    c.graph_txt = os.path.join(d, "graph.txt")
    with open(c.graph_txt, "w") as f:
        f.write("%d\n" % c.ntasks)
        f.writelines("%d %d %d\n" % e for e in c.edges)


def floor_tiling(c):
    """The tiling of a stencil's grid into the nodes' tpn tasks whose
    busiest tile sends the fewest bytes (then the fewest in all): tile of
    each task, x fastest.  None where tasks do not fill the nodes."""
    dims = list(c.dims)
    k = c.tpn
    if k < 2 or c.ntasks != math.prod(dims):
        return None
    best = None

    def shapes(d, left, acc):
        if d == len(dims):
            if left == 1:
                yield tuple(acc)
            return
        for x in range(1, left + 1):
            if left % x == 0 and dims[d] % x == 0:
                yield from shapes(d + 1, left // x, acc + [x])

    for sh in shapes(0, k, []):
        ext = [dims[i] // sh[i] for i in range(len(dims))]

        def tile(t):
            at, mul = 0, 1
            for i in range(len(dims)):
                at += (t % dims[i]) // sh[i] * mul
                t //= dims[i]
                mul *= ext[i]
            return at
        of = [tile(t) for t in range(c.ntasks)]
        out = [0] * (c.ntasks // k)
        for a, b, w in c.edges:
            if of[a] != of[b]:
                out[of[a]] += w
                out[of[b]] += w
        key = (max(out), sum(out))
        if best is None or key < best[0]:
            best = (key, of)
    return best[1]


def floor_time(args, c, d):
    """The floor of a stencil case on a tree or a dragonfly: the tiling
    whose busiest node sends least (floor_tiling), simulated on a crossbar
    of the same node links (platforms.crossbar), where only the nodes' own
    links are shared.  No mapping on the network beats its tiling there by
    more than a better tiling could (on an 8x8x8 7-point stencil, 4 a node,
    every way of putting the tasks on nodes leaves one node 16 messages or
    more: the one holding a centre task)."""
    if not c.stencil or c.net.kind not in ("tree", "dragonfly"):
        return None
    of = floor_tiling(c)
    if of is None:
        return None
    hf = os.path.join(d, "floor.hosts")
    with open(hf, "w") as f:
        f.writelines(c.hosts[t] + "\n" for t in of)
    return simulate(args, c, hf, d, "floor", c.net.crossbar)


def scotch_map(c, d):
    """scotch_gmap onto the allocation; a hostfile, or raise."""
    adj = [[] for _ in range(c.ntasks)]
    for a, b, w in c.edges:
        adj[a].append((b, w))
        adj[b].append((a, w))
    grf = os.path.join(d, "scotch.grf")
    with open(grf, "w") as f:
        f.write("0\n%d\t%d\n0\t010\n" % (c.ntasks, 2 * len(c.edges)))
        for i in range(c.ntasks):
            f.write("%d%s\n" % (len(adj[i]), "".join(
                "\t%d\t%d" % (max(1, w // 1024), j) for j, w in adj[i])))
    tgt = os.path.join(d, "scotch.tgt")
    with open(tgt, "w") as f:
        f.write("sub\t%d" % c.nnodes)
        for k, i in enumerate(c.alloc):
            f.write("%s%d" % ("\n" if k % 16 == 0 else " ", i))
        f.write("\n%s\n" % c.net.scotch_arch)
    mp = os.path.join(d, "scotch.map")
    rc, out, err = sh(["scotch_gmap", "-b0", "-Cd", grf, tgt, mp], timeout=300)
    if rc:
        raise RuntimeError("scotch_gmap exit %d: %s" % (rc, err.strip()[:200]))
    part = [None] * c.ntasks
    with open(mp) as f:
        toks = f.read().split()
    for k in range(int(toks[0])):
        part[int(toks[1 + 2 * k])] = int(toks[2 + 2 * k])
    if None in part:
        raise RuntimeError("scotch_gmap: incomplete mapping")
    # honour tpn slots per node: move the surplus to the first free nodes
    load = [0] * c.nnodes
    for p in part:
        load[p] += 1
    moved = 0
    for t in range(c.ntasks - 1, -1, -1):
        if load[part[t]] > c.tpn:
            load[part[t]] -= 1
            q = next(i for i in range(c.nnodes) if load[i] < c.tpn)
            load[q] += 1
            part[t] = q
            moved += 1
    hf = os.path.join(d, "scotch.hosts")
    with open(hf, "w") as f:
        f.writelines(c.hosts[p] + "\n" for p in part)
    return hf, ("overfilled nodes: %d tasks moved" % moved) if moved else ""


def predicted(tp, c, hf):
    rc, out, err = sh([tp, "eval", "-c", c.net.conf, "-w", c.hostlist, "-H", hf,
                       "-N", str(c.tpn), "-f", "json"] + c.pattern_args())
    if rc:
        raise RuntimeError("eval: " + err.strip()[:200])
    j = json.loads(out)
    m = j.get("metrics", {})
    if m.get("nedges") is not None and m["nedges"] != len(c.edges):
        raise RuntimeError("eval counts %s edges, the SMPI graph %d"
                           % (m["nedges"], len(c.edges)))
    p = j.get("predicted")
    if isinstance(p, dict) and p.get("exchange_us") is not None:
        return float(p["exchange_us"]), p.get("block_exchange_us")
    return None, None


def sim_key(args, c, hf, platform):
    """The digest of everything a simulation depends on."""
    h = hashlib.sha256()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exchange.c")
    for path in (platform, src, c.graph_txt, hf):
        with open(path, "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    h.update(" ".join(smpi_cfg(args) + [str(c.ntasks), str(WARMUP),
                                         str(args.iters)]).encode())
    return h.hexdigest()


def simulate(args, c, hf, d, tag, platform=None):
    platform = platform or c.net.platform
    key = sim_key(args, c, hf, platform) if args.sim_cache else None
    cached = os.path.join(args.sim_cache, key) if key else None
    if cached and os.path.exists(cached):
        with open(cached) as f:
            return float(f.read())
    rank_hf = os.path.join(d, tag + ".smpi-hosts")
    shutil.copyfile(hf, rank_hf)
    argv = ["smpirun", "-np", str(c.ntasks), "-platform", platform,
            "-hostfile", rank_hf, "-quiet"] + smpi_cfg(args) + [
            args.exchange, c.graph_txt, str(WARMUP), str(args.iters)]
    rc, out, err = sh(argv, cwd=d, timeout=900)
    m = re.search(r"exchange_us\s+([0-9.eE+-]+)", out)
    if rc or not m:
        raise RuntimeError("smpirun exit %d: %s" % (
            rc, (err.strip().splitlines() or [""])[-1][:200]))
    if cached:
        with open(cached + ".tmp", "w") as f:
            f.write(m.group(1))
        os.replace(cached + ".tmp", cached)
    return float(m.group(1))


def smpi_cfg(args):
    cfg = ["--cfg=smpi/privatization:no",
           "--cfg=smpi/simulate-computation:no",
           "--cfg=smpi/host-speed:1Gf",
           "--cfg=smpi/display-timing:no",
           # TCP acknowledgements (SimGrid's cross-traffic: 5 % of every
           # flow's rate on its reverse route) have no counterpart on an
           # HPC fabric, whose acknowledgements are link-level
           "--cfg=network/crosstraffic:0",
           "--log=root.thres:error"]
    if args.network_model:
        cfg.append("--cfg=network/model:" + args.network_model)
    return cfg


def run_case(args, c, root):
    d = os.path.join(root, c.name)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    try:
        write_graph_files(c, d, c.periodic)
    except Exception as e:  # noqa: BLE001
        c.errors.append("pattern: %s" % e)
        return c
    maps = []
    for p in c.policies:
        hf = os.path.join(d, p + ".hosts")
        rc, out, err = sh([args.topoplace, "map", "-c", c.net.conf,
                           "-w", c.hostlist, "-N", str(c.tpn), "-p", p,
                           "-t", "0", "-o", hf] + c.pattern_args())
        if rc:
            c.res[p] = {"note": "map failed: " + err.strip()[:150]}
            continue
        maps.append((p, hf, ""))
    if args.scotch:
        try:
            hf, note = scotch_map(c, d)
            maps.append(("scotch", hf, note))
        except Exception as e:  # noqa: BLE001
            c.res["scotch"] = {"note": str(e)}
    for p, hf, note in maps:
        r = {"note": note, "sim": None, "pred": None}
        try:
            r["pred"], _ = predicted(args.topoplace, c, hf)
        except Exception as e:  # noqa: BLE001
            r["note"] = (note + "; " if note else "") + str(e)
        try:
            r["sim"] = simulate(args, c, hf, d, p)
        except Exception as e:  # noqa: BLE001
            r["note"] = (r["note"] + "; " if r["note"] else "") + str(e)
        c.res[p] = r
    try:
        c.floor = floor_time(args, c, d)
    except Exception as e:  # noqa: BLE001
        c.errors.append("floor: %s" % e)
    c.secs = time.time() - t0
    print("simgrid: %s done, %.0f s" % (c.name, c.secs), file=sys.stderr,
          flush=True)
    return c


# ---- statistics ----

def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def median(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def fmt(x, f="%.1f", w=9):
    return ("%" + str(w) + "s") % ("n/a" if x is None else f % x)


# ---- main ----

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topoplace", required=True)
    ap.add_argument("--exchange", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-scotch", dest="scotch", action="store_false")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR",
                    help="work in DIR and keep its files")
    ap.add_argument("--sim-cache", metavar="DIR", default=None,
                    help="reuse simulated times of identical inputs kept in DIR")
    ap.add_argument("--network-model", default="",
                    help="SimGrid network/model (default: SMPI's own)")
    ap.add_argument("--first-seed", type=int, default=None,
                    help="number the seeds from N (default: drawn at run "
                    "time, >= 1000, printed; below 1000: the development "
                    "set the model was tuned on)")
    ap.add_argument("--cases", type=int, default=None,
                    help="allocations a network (default: 10, 8, 4; the "
                    "held-out report uses 30)")
    ap.add_argument("--site", action="store_true",
                    help="configs as a site writes them: no FlowSharing=rtt, "
                    "no SMPI factors (the headline)")
    ap.add_argument("--told-nothing", action="store_true",
                    help="configs with the structure alone (Slurm's files: "
                    "no bandwidth, uplinks, routing, latency) and stencil "
                    "hints without sizes")
    ap.add_argument("--bandwidth", type=float, default=None,
                    help="every cable's GB/s (default 25)")
    ap.add_argument("--periodic", action="store_true",
                    help="periodic stencils (every axis wraps)")
    ap.add_argument("--case", action="append", default=[],
                    help="run only cases whose name starts with this")
    ap.add_argument("--conf-add", default="",
                    help="more keys for every topoplace config, e.g. "
                    "\"FlowSharing=rtt EagerLimit=16KiB\" (what a site may "
                    "state of its fabric and MPI library)")
    args = ap.parse_args()
    platforms.CONF_ADD = args.conf_add
    if args.scotch and not shutil.which("scotch_gmap"):
        args.scotch = False
    args.exchange = os.path.abspath(args.exchange)
    if args.sim_cache:
        os.makedirs(args.sim_cache, exist_ok=True)

    root = args.keep or tempfile.mkdtemp(prefix="topoplace-simgrid.")
    os.makedirs(root, exist_ok=True)
    t_all = time.time()
    nets = {}
    if args.first_seed is None:
        args.first_seed = 1000 + random.SystemRandom().randrange(1000000)
    platforms.set_model(args.network_model, args.site, args.bandwidth,
                        args.told_nothing)
    for n in (platforms.fat_tree(root, 8), platforms.fat_tree(root, 16),
              platforms.torus(root), platforms.dragonfly(root)):
        err = settle_conf(args.topoplace, n)
        n.crossbar = platforms.crossbar(n)
        if err:
            print("simgrid: %s" % err, file=sys.stderr)
            return 1
        nets[n.key] = n

    rc, out, err = sh(["smpirun", "-version"])
    sgv = (out or err).strip().splitlines()[0] if (out or err).strip() else "?"
    rc, out, err = sh([args.topoplace, "--version"])
    tpv = out.strip().splitlines()[0] if out.strip() else "?"
    print("simgrid:   %s (SMPI, network model %s)" % (
        sgv, args.network_model or "SMPI default"))
    print("topoplace: %s (%s)" % (tpv, args.topoplace))
    print("settings:  %s; %d warm-up + %d timed exchanges from one start, "
          "median of the last rank's end" % (" ".join(smpi_cfg(args)), WARMUP,
                                              args.iters))
    print("links:     %d GB/s, %g us each; loopback %d GB/s, 0 us; "
          "stencil bytes %d each way" % (platforms.BW, platforms.LAT_US,
                                          platforms.LOOP_BW, BYTES))
    if platforms.TOLD_NOTHING:
        print("topoplace: told nothing of the links (its defaults)")
    else:
        print("topoplace: links %g GB/s, %g us%s" % (
        platforms.TOPO_BW, platforms.TOPO_LAT_US,
        " (as the network model presents 64 KiB messages), FlowSharing=rtt"
        if platforms.SIM_KNOBS else " (what the site knows)"))
    print("scotch:    %s" % ("scotch_gmap -b0 -Cd on a sub target "
                             "(dragonfly: tleaf groups/routers/nodes)"
                             if args.scotch else "not run"))
    for n in nets.values():
        if n.dropped:
            print("note:      %s: this topoplace lacks %s (dropped from its "
                  "config)" % (n.key, ", ".join(n.dropped)))
    print("work dir:  %s%s" % (root, "" if args.keep else " (removed)"))
    sys.stdout.flush()

    print("seeds:     from %d (%s; repeat with --first-seed %d)" % (
        args.first_seed, "drawn at run time" if args.first_seed >= 1000
        else "development set", args.first_seed))
    print("configs:   %s; links %g GB/s; %s stencils" % (
        "told nothing (the structure alone, hints without sizes)"
        if args.told_nothing else
        "as a site writes them (no simulator knob)" if args.site
        else "with the simulator's knobs (FlowSharing=rtt, SMPI factors)",
        platforms.BW, "periodic" if args.periodic else "non-periodic"))
    if args.conf_add:
        print("configs:   and %s (--conf-add)" % args.conf_add)
    cases = cases_for(nets, args.quick, args.first_seed, args.cases,
                      args.periodic)
    if args.case:
        cases = [c for c in cases if any(c.name.startswith(p) for p in args.case)]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        cases = list(ex.map(lambda c: run_case(args, c, root), cases))

    cols = ["block", "auto", "geometric", "hierarchical", "scotch"]
    short = {"block": "block", "auto": "auto", "geometric": "geom",
             "hierarchical": "hier", "scotch": "scotch"}

    print("\n== per case: simulated us (predicted us)")
    print("%-12s %-19s %5s  " % ("case", "network", "tasks") + " ".join(
        "%17s" % short[p] for p in cols) + "  auto/blk auto/sco")
    notes = []
    for c in cases:
        cells = []
        for p in cols:
            r = c.res.get(p)
            if not r:
                cells.append("%17s" % "-")
                continue
            s = fmt(r.get("sim"), "%.1f", 7).strip()
            q = fmt(r.get("pred"), "%.1f", 7).strip()
            cells.append("%17s" % ("%s (%s)" % (s, q)))
            if r.get("note"):
                notes.append("%s %s: %s" % (c.name, p, r["note"]))
        sim = {p: r["sim"] for p, r in c.res.items() if r.get("sim")}
        ab = sim["auto"] / sim["block"] if "auto" in sim and "block" in sim else None
        asc = sim["auto"] / sim["scotch"] if "auto" in sim and "scotch" in sim else None
        print("%-12s %-19s %5d  " % (c.name, c.net.label, c.ntasks) +
              " ".join(cells) + "  %8s %8s" % (fmt(ab, "%.3f", 8).strip(),
                                                fmt(asc, "%.3f", 8).strip()))
        for e in c.errors:
            notes.append("%s: %s" % (c.name, e))
    for n in notes:
        print("  note: " + n)

    print("\n== predicted against simulated, per network (goals: "
          "Spearman >= 0.9, median error <= 15 %)")
    print("%-19s %6s %9s %12s" % ("network", "points", "spearman", "median err"))
    labels = []
    for c in cases:
        if c.net.label not in labels:
            labels.append(c.net.label)
    for lab in labels + ["all"]:
        xs, ys = [], []
        for c in cases:
            if lab != "all" and c.net.label != lab:
                continue
            for r in c.res.values():
                if r.get("sim") and r.get("pred") is not None:
                    xs.append(r["pred"])
                    ys.append(r["sim"])
        rho = spearman(xs, ys)
        err = median([abs(x - y) / y for x, y in zip(xs, ys)])
        print("%-19s %6d %9s %12s" % (lab, len(xs), fmt(rho, "%.3f", 9).strip(),
                                      "n/a" if err is None else "%.1f %%" % (100 * err)))
    if not any(r.get("pred") is not None for c in cases for r in c.res.values()):
        print("(no predicted times: this topoplace's eval JSON has no "
              "\"predicted\" object)")

    print("\n== simulated time per policy: geometric mean of time / block's "
          "and / Scotch's")
    print("%-19s %-7s %5s %9s %9s %10s %10s" % (
        "network", "policy", "cases", "/block", "/scotch", "worst/blk",
        "slower"))
    for lab in labels:
        cs = [c for c in cases if c.net.label == lab]
        for p in cols:
            rb, rs = [], []
            slower = 0
            for c in cs:
                r = c.res.get(p, {})
                b = c.res.get("block", {}).get("sim")
                s = c.res.get("scotch", {}).get("sim")
                if not r.get("sim"):
                    continue
                if b:
                    rb.append(r["sim"] / b)
                    slower += r["sim"] > b * 1.0005
                if s:
                    rs.append(r["sim"] / s)
            if not rb and not rs:
                continue
            print("%-19s %-7s %5d %9s %9s %10s %10s" % (
                lab, short[p], max(len(rb), len(rs)),
                fmt(geomean(rb), "%.3f").strip(), fmt(geomean(rs), "%.3f").strip(),
                fmt(max(rb) if rb else None, "%.3f").strip(),
                "%d/%d" % (slower, len(rb)) if p != "block" else "-"))
    print("(slower: cases where the policy's simulated time exceeds block's "
          "by more than 0.05 %)")
    # how often auto's choice is the fastest of topoplace's own policies in
    # simulation (not only how well the model ranks them)
    print("\n== auto's choice against topoplace's other policies, simulated")
    print("%-19s %5s %14s %12s" % ("network", "cases", "auto fastest", "worst gap"))
    for lab in labels:
        n = best = 0
        gap = 0.0
        for c in cases:
            if c.net.label != lab or not c.res.get("auto", {}).get("sim"):
                continue
            own = [r["sim"] for p, r in c.res.items()
                   if p not in ("scotch",) and r.get("sim")]
            n += 1
            a = c.res["auto"]["sim"]
            best += a <= min(own) * 1.0005
            gap = max(gap, a / min(own) - 1)
        if n:
            print("%-19s %5d %14s %11.1f%%" % (lab, n, "%d/%d" % (best, n),
                                                100 * gap))
    # how far auto and Scotch are from what the nodes' own links allow:
    # floor / Scotch is the least auto / Scotch a tiling reaches there
    print("\n== the floor: the tiling whose busiest node sends least, on a "
          "crossbar of the same node links (stencils on trees and dragonflies)")
    print("%-19s %5s %11s %13s %13s" % ("network", "cases", "auto/floor",
                                         "scotch/floor", "floor/scotch"))
    for lab in labels:
        fa, fs = [], []
        for c in cases:
            if c.net.label != lab or not c.floor:
                continue
            a = c.res.get("auto", {}).get("sim")
            sc = c.res.get("scotch", {}).get("sim")
            if a:
                fa.append(a / c.floor)
            if sc:
                fs.append(sc / c.floor)
        if fa:
            # floor / Scotch is the reciprocal of Scotch / floor's mean
            sf = 1 / geomean(fs) if fs else None
            print("%-19s %5d %11s %13s %13s" % (
                lab, len(fa), fmt(geomean(fa), "%.3f").strip(),
                fmt(geomean(fs) if fs else None, "%.3f").strip(),
                fmt(sf, "%.3f").strip()))
    print("\nsimgrid: %d cases, %.0f s (%d jobs)" % (
        len(cases), time.time() - t_all, args.jobs))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
