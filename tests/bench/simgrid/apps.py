#!/usr/bin/env python3
"""topoplace benchmark: real MPI applications in SimGrid SMPI.

What and why
  simgrid.sh judges placements on a synthetic exchange.  This one runs a
  real application's own communication: the unmodified source from
  ../shared/apps (LULESH 2.0 and any other listed in APPS below whose
  tarball is there), built with smpicxx, computation off, so the simulated
  time is the communication alone.  For each network and each allocation it
  simulates the application placed by:
    slurm    Slurm's order (the hostlist's, block);
    scotch   scotch_gmap of the captured graph onto the allocation;
    hint     topoplace map with the hint a user would write (APPS' "hint":
             no sizes, no weights);
    trace    topoplace map with the pattern captured by libtopoplace-trace
             (contrib/trace, linked into the application and run inside
             SMPI as a user runs it on a cluster).
  topoplace runs with its defaults (policy auto, no time budget, the
  command's default) and the config a site has: Slurm's topology plus the
  fabric keys an admin knows (bandwidths, uplinks, routing, hop latency);
  no simulator knob (--site=slurm: Slurm's files alone, no fabric keys).

Held-out seeds: the allocations come from a seed drawn at run time unless
--seed is given; it is printed so that a run can be repeated.  Seeds below
1000 are the development set; report figures from drawn seeds.

  apps.py --topoplace PATH [--cases N] [--seed S] [--net torus,ft2,ft4,df]
          [--app lulesh] [--jobs N] [--iters N] [--size S] [--site full|slurm]
          [--keep DIR]
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import platforms  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
APPS_DIR = os.environ.get("TOPOPLACE_APPS",
                          os.path.join(ROOT, "..", "shared", "apps"))

# An application: where its source is, how to build and run it under SMPI,
# the hint its user would write for P ranks, and how to read its simulated
# communication time (us) from its output.
APPS = {
    "lulesh": {
        "tarball": "lulesh.tar.xz",
        "sources": ["lulesh.cc", "lulesh-comm.cc", "lulesh-viz.cc",
                    "lulesh-util.cc", "lulesh-init.cc"],
        "subdir": "LULESH",
        "cxxflags": ["-O2", "-DUSE_MPI=1", "-w"],
        "ranks": lambda nodes: round(nodes ** (1 / 3)) ** 3,
        "args": lambda a: ["-s", str(a.size), "-i", str(a.iters)],
        # LULESH decomposes a cube of ranks, col fastest, 26 neighbours
        "hint": lambda p: "%dx%dx%d:27pt" % ((round(p ** (1 / 3)),) * 3),
    },
}


def sh(argv, cwd=None, env=None, timeout=1800):
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def lulesh_time_us(out, a):
    """LULESH prints its elapsed time with 5 digits; its grind time per
    domain (elapsed / (s^3 iterations)) has 8: read that."""
    m = re.search(r"Grind time \(us/z/c\)\s*=\s*([0-9.eE+-]+) \(per dom\)", out)
    if not m:
        return None
    return float(m.group(1)) * a.size ** 3 * a.iters


def build(app, work):
    """Unpack and build app with smpicxx and the trace library; the binary's
    path, or raise."""
    spec = APPS[app]
    tb = os.path.join(APPS_DIR, spec["tarball"])
    if not os.path.exists(tb):
        raise FileNotFoundError(tb)
    d = os.path.join(work, "src-" + app)
    os.makedirs(d, exist_ok=True)
    with tarfile.open(tb) as t:
        t.extractall(d)
    src = os.path.join(d, spec["subdir"])
    trace = os.path.join(d, "trace.o")
    rc, out, err = sh(["smpicc", "-O2", "-c", "-o", trace,
                       os.path.join(ROOT, "contrib", "trace", "trace.c")])
    if rc:
        raise RuntimeError("smpicc trace.c: " + err.strip()[-300:])
    exe = os.path.join(d, app)
    rc, out, err = sh(["smpicxx"] + spec["cxxflags"] + ["-o", exe] +
                      [os.path.join(src, s) for s in spec["sources"]] + [trace])
    if rc:
        raise RuntimeError("smpicxx %s: %s" % (app, err.strip()[-300:]))
    return exe


def smpi_cfg():
    return ["--cfg=smpi/simulate-computation:no",
            "--cfg=smpi/host-speed:1Gf",
            "--cfg=smpi/display-timing:no",
            "--cfg=network/crosstraffic:0",
            "--log=root.thres:error"]


def simulate(a, exe, net, hosts_file, nranks, cwd, trace=None):
    env = dict(os.environ)
    if trace:
        env["TOPOPLACE_TRACE"] = trace
    else:
        env["TOPOPLACE_TRACE"] = os.path.join(cwd, "discard-trace.json")
    argv = ["smpirun", "-np", str(nranks), "-platform", net.platform,
            "-hostfile", hosts_file, "-quiet"] + smpi_cfg() + [exe] + \
        APPS[a.app]["args"](a)
    rc, out, err = sh(argv, cwd=cwd, env=env)
    t = lulesh_time_us(out, a)
    if rc or t is None:
        raise RuntimeError("smpirun exit %d: %s" % (
            rc, (err.strip().splitlines() or out.strip().splitlines() or [""])[-1][:200]))
    return t


def site_conf(net, site, d):
    """The config a site has: full (Slurm's topology and the fabric keys an
    admin knows) or slurm (Slurm's topology alone).  The simulator's own
    knobs (FlowSharing=rtt, SMPI's latency and bandwidth factors) are left
    out in both."""
    out = []
    with open(net.conf) as f:
        for ln in f:
            k = ln.split("=", 1)[0].strip()
            if k == "FlowSharing":
                continue
            if site == "slurm" and k in ("LevelBandwidth", "LevelUplinks",
                                         "UplinkRouting", "HopLatency",
                                         "IntraNodeBandwidth", "LinkBandwidth",
                                         "NodeBandwidth", "LocalBandwidth",
                                         "GlobalBandwidth", "Routing"):
                continue
            if k == "HopLatency":
                ln = "HopLatency=%gus\n" % platforms.LAT_US
            for key in ("LevelBandwidth", "LinkBandwidth", "LocalBandwidth",
                        "GlobalBandwidth"):
                if k == key:
                    ln = "%s=%g\n" % (key, platforms.BW)
            if k == "NodeBandwidth":
                v = float(ln.split("=", 1)[1].split()[0])
                ln = "NodeBandwidth=%g\n" % (v / platforms.TOPO_BW * platforms.BW)
            out.append(ln)
    p = os.path.join(d, "%s-%s.conf" % (net.key, site))
    with open(p, "w") as f:
        f.writelines(out)
    # the tree's topology.conf is named relative to the config
    top = os.path.join(os.path.dirname(net.conf), "topology.conf")
    if os.path.exists(top) and not os.path.exists(os.path.join(d, "topology.conf")):
        shutil.copyfile(top, os.path.join(d, "topology.conf"))
    return p


def scotch_hosts(edges, n, alloc, hosts, tpn, arch, d):
    """scotch_gmap of the graph onto the allocation, slots honoured."""
    adj = [dict() for _ in range(n)]
    for a, b, w in edges:
        if a == b:
            continue
        adj[a][b] = adj[a].get(b, 0) + w
        adj[b][a] = adj[b].get(a, 0) + w
    grf = os.path.join(d, "scotch.grf")
    ne = sum(len(x) for x in adj)
    with open(grf, "w") as f:
        f.write("0\n%d\t%d\n0\t010\n" % (n, ne))
        for i in range(n):
            f.write("%d%s\n" % (len(adj[i]), "".join(
                "\t%d\t%d" % (max(1, int(w) // 1024), j)
                for j, w in sorted(adj[i].items()))))
    tgt = os.path.join(d, "scotch.tgt")
    with open(tgt, "w") as f:
        f.write("sub\t%d" % len(alloc))
        for k, i in enumerate(alloc):
            f.write("%s%d" % ("\n" if k % 16 == 0 else " ", i))
        f.write("\n%s\n" % arch)
    mp = os.path.join(d, "scotch.map")
    t0 = time.time()
    rc, out, err = sh(["scotch_gmap", "-b0", "-Cd", grf, tgt, mp], timeout=600)
    secs = time.time() - t0
    if rc:
        raise RuntimeError("scotch_gmap exit %d: %s" % (rc, err.strip()[:200]))
    part = [None] * n
    toks = open(mp).read().split()
    for k in range(int(toks[0])):
        part[int(toks[1 + 2 * k])] = int(toks[2 + 2 * k])
    load = [0] * len(alloc)
    for p in part:
        load[p] += 1
    for t in range(n - 1, -1, -1):
        if load[part[t]] > tpn:
            load[part[t]] -= 1
            q = next(i for i in range(len(alloc)) if load[i] < tpn)
            load[q] += 1
            part[t] = q
    hf = os.path.join(d, "scotch.hosts")
    with open(hf, "w") as f:
        f.writelines(hosts[p] + "\n" for p in part)
    return hf, secs


def read_trace(path):
    j = json.load(open(path))
    return j["tasks"], [(int(a), int(b), float(w)) for a, b, w in j["edges"]]


class Case:
    def __init__(self, net, seed, nnodes, tpn):
        self.net, self.seed, self.nnodes, self.tpn = net, seed, nnodes, tpn
        rnd = random.Random("%s-app-%d" % (net.key, seed))
        self.alloc = sorted(rnd.sample(range(len(net.nodes)), nnodes))
        self.hosts = [net.nodes[i] for i in self.alloc]
        self.hostlist = net.hostlist(self.alloc)
        self.name = "%s-s%d" % (net.key, seed)
        self.res = {}     # column -> (sim us, map s) or note


def run_case(a, c, exe, trace, nranks, work):
    d = os.path.join(work, c.name)
    os.makedirs(d, exist_ok=True)
    conf = site_conf(c.net, a.site, d)
    maps = {}
    hf = os.path.join(d, "slurm.hosts")
    with open(hf, "w") as f:
        f.writelines(h + "\n" for h in c.hosts for _ in range(c.tpn))
    maps["slurm"] = (hf, None)
    hint = APPS[a.app]["hint"](nranks)
    for col, pat in (("hint", ["-s", hint]), ("trace", ["-g", trace])):
        hf = os.path.join(d, col + ".hosts")
        t0 = time.time()
        rc, out, err = sh([a.topoplace, "map", "-c", conf, "-w", c.hostlist,
                           "-N", str(c.tpn), "-o", hf] + pat)
        secs = time.time() - t0
        if rc:
            c.res[col] = "map failed: " + err.strip()[:150]
            continue
        maps[col] = (hf, secs)
    if a.scotch:
        try:
            n, edges = read_trace(trace)
            hf, secs = scotch_hosts(edges, n, c.alloc, c.hosts, c.tpn,
                                    c.net.scotch_arch, d)
            maps["scotch"] = (hf, secs)
        except Exception as e:  # noqa: BLE001
            c.res["scotch"] = str(e)
    for col, (hf, secs) in maps.items():
        try:
            c.res[col] = (simulate(a, exe, c.net, hf, nranks, d), secs)
        except Exception as e:  # noqa: BLE001
            c.res[col] = str(e)
    print("apps: %s done" % c.name, file=sys.stderr, flush=True)
    return c


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2 if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topoplace", required=True)
    ap.add_argument("--app", default="lulesh", choices=sorted(APPS))
    ap.add_argument("--net", default="torus,ft4,ft2,df")
    ap.add_argument("--cases", type=int, default=30,
                    help="allocations a network (default 30)")
    ap.add_argument("--seed", type=int, default=None,
                    help="first seed (default: drawn, >= 1000)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--site", default="full", choices=("full", "slurm"))
    ap.add_argument("--no-scotch", dest="scotch", action="store_false")
    ap.add_argument("--keep", metavar="DIR")
    a = ap.parse_args()
    if a.scotch and not shutil.which("scotch_gmap"):
        a.scotch = False
    for t in ("smpicc", "smpicxx", "smpirun"):
        if not shutil.which(t):
            print("apps: skipped, %s missing (sh contrib/install-deps.sh bench)" % t)
            return 0
    if a.seed is None:
        a.seed = 1000 + random.SystemRandom().randrange(1000000)
    work = a.keep or tempfile.mkdtemp(prefix="topoplace-apps.")
    os.makedirs(work, exist_ok=True)
    try:
        exe = build(a.app, work)
    except FileNotFoundError as e:
        print("apps: skipped, %s not there (../shared/apps)" % e)
        return 0
    platforms.set_model("")
    nets = {}
    makers = {"torus": lambda: platforms.torus(work),
              "ft4": lambda: platforms.fat_tree(work, 8),
              "ft2": lambda: platforms.fat_tree(work, 16),
              "df": lambda: platforms.dragonfly(work)}
    # nodes x tasks a node for each network, as simgrid.sh's cases
    shape = {"torus": (512, 1), "ft4": (128, 4), "ft2": (128, 4),
             "df": (54, 4)}
    for k in a.net.split(","):
        nets[k] = makers[k]()
    t_all = time.time()
    print("app:       %s (%s), -s %d -i %d, computation off" % (
        a.app, os.path.join(APPS_DIR, APPS[a.app]["tarball"]), a.size, a.iters))
    print("seeds:     %d..%d (drawn at run time; repeat with --seed %d)" % (
        a.seed, a.seed + a.cases - 1, a.seed))
    print("site:      %s (no simulator knob)" % (
        "Slurm's topology + bandwidths, uplinks, routing, hop latency"
        if a.site == "full" else "Slurm's topology alone"))
    # capture once per rank count: the bytes do not depend on the placement
    traces = {}
    cases = []
    for k, net in nets.items():
        nn, tpn = shape[k]
        p = APPS[a.app]["ranks"](nn * tpn)
        nn = (p + tpn - 1) // tpn
        if p not in traces:
            c0 = Case(net, 0, nn, tpn)
            d = os.path.join(work, "trace-%d" % p)
            os.makedirs(d, exist_ok=True)
            hf = os.path.join(d, "hosts")
            with open(hf, "w") as f:
                f.writelines(h + "\n" for h in c0.hosts for _ in range(tpn))
            tr = os.path.join(d, "trace.json")
            simulate(a, exe, net, hf, p, d, trace=tr)
            traces[p] = tr
        for s in range(a.seed, a.seed + a.cases):
            c = Case(net, s, nn, tpn)
            c.nranks, c.trace = p, traces[p]
            cases.append(c)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        cases = list(ex.map(lambda c: run_case(a, c, exe, c.trace, c.nranks,
                                               work), cases))
    cols = ["slurm", "scotch", "hint", "trace"]
    print("\n== %s: simulated communication us (geometric means) per network"
          % a.app)
    print("%-22s %5s %9s %9s %9s %9s  %10s %10s %10s %9s %9s" % (
        "network", "cases", "slurm", "scotch", "hint", "trace",
        "hint/slurm", "trace/slurm", "trace/sco", "trace/hint", "map s"))
    notes = []
    for k, net in nets.items():
        cs = [c for c in cases if c.net is net]
        ok = [c for c in cs if all(isinstance(c.res.get(x), tuple)
                                   for x in cols if x != "scotch" or a.scotch)]
        for c in cs:
            for x in cols:
                if isinstance(c.res.get(x), str):
                    notes.append("%s %s: %s" % (c.name, x, c.res[x]))
        g = {x: geomean([c.res[x][0] for c in ok]) if ok and
             (x != "scotch" or a.scotch) else None for x in cols}

        def r(x, y):
            if not ok or g[x] is None or g[y] is None:
                return "n/a"
            return "%.3f" % geomean([c.res[x][0] / c.res[y][0] for c in ok])
        secs = [c.res["trace"][1] for c in ok]
        print("%-22s %5d %9s %9s %9s %9s  %10s %10s %10s %9s %9s" % (
            net.label, len(ok),
            *["n/a" if g[x] is None else "%.1f" % g[x] for x in cols],
            r("hint", "slurm"), r("trace", "slurm"), r("trace", "scotch"),
            r("trace", "hint"), "%.2f" % max(secs) if secs else "n/a"))
        slower = sum(1 for c in ok if c.res["trace"][0] > c.res["slurm"][0] * 1.0005)
        print("%-22s trace slower than Slurm's order: %d/%d; worst trace/slurm %s"
              % ("", slower, len(ok), "%.3f" % max(
                  c.res["trace"][0] / c.res["slurm"][0] for c in ok) if ok else "n/a"))
    for n in notes:
        print("  note: " + n)
    print("\napps: %d cases, %.0f s (%d jobs); map s: the slowest trace "
          "mapping's wall time" % (len(cases), time.time() - t_all, a.jobs))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
