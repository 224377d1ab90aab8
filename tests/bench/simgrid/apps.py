#!/usr/bin/env python3
"""topoplace benchmark: real MPI applications in SimGrid SMPI.

What and why
  simgrid.sh judges placements on a synthetic exchange.  This one runs real
  applications' own communication: the unmodified source of each one in
  APPS below (LULESH 2.0: a 26-neighbour halo on a cube of ranks; miniAMR:
  adaptive mesh refinement whose neighbourhoods move with the mesh;
  fftMPI: 3-D FFTs whose pencils are remapped inside rows and columns of
  ranks), built
  with smpicc/smpicxx, computation off, so the simulated time is the
  communication alone.  For each network and each allocation it simulates
  the application placed by:
    slurm    Slurm's order (the hostlist's, block);
    scotch   scotch_gmap of the captured graph onto the allocation;
    hint     topoplace map with the hint a user would write (APPS' "hint":
             no sizes, no weights; none for an FFT, whose user has no
             stencil to give);
    trace    topoplace map with the pattern captured by libtopoplace-trace
             (contrib/trace, linked into the application and run inside
             SMPI as a user runs it on a cluster).
  topoplace runs with its defaults (policy auto, no time budget, the
  command's default) and the config a site has: Slurm's topology plus the
  fabric keys an admin knows (bandwidths, uplinks, routing, hop latency);
  no simulator knob (--site=slurm: Slurm's files alone, no fabric keys).
  SMPI runs the collectives as MPICH does (--coll: Open MPI's, or SMPI's
  own default), the algorithms the trace library records.

Sources: tests/bench/apps.sources pins each application (URL, commit, the
SHA-256 of `git archive --format=tar` of that commit).  The tar comes from
$TOPOPLACE_APPS/NAME.tar[.xz] (default ../shared/apps), else the cache
($TOPOPLACE_APPS_CACHE, default /var/cache/topoplace-apps), else git: the
URL, or a local clone named by $TOPOPLACE_GIT_<NAME> (e.g.
TOPOPLACE_GIT_MINIAMR=/path/to/miniAMR/.git), then cached.  A tar whose
hash differs from the pin is refused with one line.

Held-out seeds: the allocations come from a seed drawn at run time unless
--seed is given; it is printed so that a run can be repeated.  Seeds below
1000 are the development set; report figures from drawn seeds.  Every
application runs on the same allocations.

  apps.py --topoplace PATH [--cases N] [--seed S] [--net torus,ft2,ft4,df]
          [--app lulesh,miniamr,fftmpi] [--jobs N] [--iters N] [--size S]
          [--site full|slurm] [--coll mpich|ompi|smpi] [--map-timeout S]
          [--keep DIR]
--keep DIR keeps the work and each case's results.json; started again with
the same DIR and --seed, a run skips the simulations it has.
"""

import argparse
import hashlib
import io
import json
import lzma
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
SOURCES = os.path.join(ROOT, "tests", "bench", "apps.sources")
CACHE = os.environ.get("TOPOPLACE_APPS_CACHE", "/var/cache/topoplace-apps")


def cube(p):
    """The largest cube of ranks that fits p."""
    k = round(p ** (1 / 3))
    return (k - 1 if k ** 3 > p else k) ** 3


def side(p):
    return round(p ** (1 / 3))


def lulesh_time_us(out, a):
    """LULESH prints its elapsed time with 5 digits; its grind time per
    domain (elapsed / (s^3 iterations)) has 8: read that."""
    m = re.search(r"Grind time \(us/z/c\)\s*=\s*([0-9.eE+-]+) \(per dom\)", out)
    if not m:
        return None
    return float(m.group(1)) * a.size ** 3 * a.iters


def fftmpi_time_us(out, a):
    """fftMPI's test3d: the time of its forward and backward 3-D FFTs
    (MPI_Wtime, the simulated clock), in seconds with 6 digits."""
    m = re.search(r"^Time for 3d FFTs = ([0-9.eE+-]+) secs", out, re.M)
    return float(m.group(1)) * 1e6 if m else None


def miniamr_time_us(out, a):
    """miniAMR's summary line: the time of its timestep loop (MPI_Wtime,
    the simulated clock), in seconds with 6 decimals."""
    m = re.search(r"^Summary: .* time ([0-9.eE+-]+) ", out, re.M)
    return float(m.group(1)) * 1e6 if m else None


# An application: how to build it under SMPI (compiler, sources under its
# tar's prefix, flags), its ranks for P slots, its run line, the hint its
# user would write for P ranks, how to read its simulated communication
# time (us) from its output, and its default size and iterations.  Where
# its source comes from: tests/bench/apps.sources.
APPS = {
    "lulesh": {
        "cc": "smpicxx",
        "sources": ["lulesh.cc", "lulesh-comm.cc", "lulesh-viz.cc",
                    "lulesh-util.cc", "lulesh-init.cc"],
        # no OpenMP; global variables: SMPI's privatization stays on
        "flags": ["-O2", "-DUSE_MPI=1", "-w"],
        "ranks": cube,
        "args": lambda a, p: ["-s", str(a.size), "-i", str(a.iters)],
        # LULESH decomposes a cube of ranks, col fastest, 26 neighbours
        "hint": lambda p: "%dx%dx%d:27pt" % ((side(p),) * 3),
        "time": lulesh_time_us,
        "size": 8, "iters": 5,     # -s 8 -i 5: one 512-rank run ~ minutes
    },
    # Adaptive mesh refinement: blocks of --size^3 cells on an npx x npy x
    # npz grid of ranks (numbered by recursive bisection, not row-major),
    # face exchanges between neighbouring blocks of one or two levels,
    # refinement around a sphere moving through the mesh, RCB load balance
    # that moves blocks between ranks, checksums (Allreduce) and
    # Alltoall in the load balance.  The pattern is the union over time of
    # neighbourhoods that change.  20 variables (default 40) and at most 40
    # blocks a rank keep 512 ranks in one process near 1.4 GB.
    "miniamr": {
        "cc": "smpicc",
        "sources": ["ref/block.c", "ref/check_sum.c", "ref/comm_block.c",
                    "ref/comm.c", "ref/comm_parent.c", "ref/comm_refine.c",
                    "ref/comm_util.c", "ref/driver.c", "ref/init.c",
                    "ref/main.c", "ref/move.c", "ref/pack.c", "ref/plot.c",
                    "ref/profile.c", "ref/rcb.c", "ref/refine.c",
                    "ref/sfc.c", "ref/stencil.c", "ref/util.c"],
        "flags": ["-O2", "-w", "-Iref"],
        "libs": ["-lm"],
        "ranks": cube,
        "args": lambda a, p: [
            "--npx", str(side(p)), "--npy", str(side(p)), "--npz", str(side(p)),
            "--nx", str(a.size), "--ny", str(a.size), "--nz", str(a.size),
            "--num_vars", "20", "--max_blocks", "40", "--num_refine", "2",
            # one level a refinement step: two would make 64 blocks of one
            "--block_change", "1",
            "--num_tsteps", str(a.iters), "--stages_per_ts", "4",
            "--refine_freq", "2", "--report_perf", "4",
            "--num_objects", "1", "--object", "2", "0",
            "0.2", "0.2", "0.2", "0.06", "0.06", "0.06",
            "0.25", "0.25", "0.25", "0.0", "0.0", "0.0"],
        # what its user writes from --npx/--npy/--npz: the grid's faces
        "hint": lambda p: "%dx%dx%d:7pt" % ((side(p),) * 3),
        "time": miniamr_time_us,
        "size": 4, "iters": 4,     # 512 ranks: ~3 min, 1.4 GB
    },
    # 3-D FFTs of a size^3 complex grid (fftMPI's test3d, KISS FFT built
    # in), forward and back: bricks remapped to x, y and z pencils on a
    # 2-D grid of ranks it chooses (16 x 32 for 512) and back, each remap
    # point to point inside a row or a column of that grid.  -r: the
    # remaps alone (the 1-D FFTs are computation, off anyway).  Its user
    # has no hint to give: the trace is the only pattern.
    "fftmpi": {
        "cc": "smpicxx",
        "sources": ["test/test3d.cpp", "src/fft3d.cpp", "src/remap3d.cpp",
                    "src/memory.cpp", "src/error.cpp"],
        "flags": ["-O2", "-w", "-DFFT_KISS", "-DFFT_DOUBLE", "-Isrc"],
        "ranks": lambda p: p,
        "args": lambda a, p: ["-g", str(a.size), str(a.size), str(a.size),
                              "-n", str(a.iters), "-r"],
        "hint": None,
        "time": fftmpi_time_us,
        "size": 256, "iters": 2,   # 512 ranks: ~20 s, 1 GB
    },
}


def sh(argv, cwd=None, env=None, timeout=1800, stdin=None):
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout,
                       input=stdin)
    return p.returncode, p.stdout, p.stderr


def read_sources(path=SOURCES):
    """apps.sources: name prefix commit sha256 url, one line each."""
    out = {}
    with open(path) as f:
        for n, ln in enumerate(f, 1):
            ln = ln.split("#", 1)[0].split()
            if not ln:
                continue
            if len(ln) != 5 or not re.fullmatch(r"[0-9a-f]{40}", ln[2]) or \
                    not re.fullmatch(r"[0-9a-f]{64}", ln[3]):
                raise ValueError("%s:%d: want: name prefix commit sha256 url"
                                 % (path, n))
            out[ln[0]] = dict(zip(("prefix", "commit", "sha256", "url"),
                                  ln[1:]))
    return out


class SourceError(Exception):
    pass


def _tar_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return lzma.decompress(data) if path.endswith(".xz") else data


def _git_archive(src, pin):
    """The tar of pin's commit from src: a local git directory or clone
    (TOPOPLACE_GIT_<NAME>) read in place, or a URL fetched at that commit
    into a scratch repository."""
    arch = ["archive", "--format=tar", "--prefix=%s/" % pin["prefix"],
            pin["commit"]]
    if os.path.isdir(src):
        gd = src if os.path.isdir(os.path.join(src, "objects")) else \
            os.path.join(src, ".git")
        p = subprocess.run(["git", "--git-dir", gd] + arch,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode:
            raise SourceError("git archive in %s: %s" % (
                src, p.stderr.decode().strip()[:200]))
        return p.stdout
    with tempfile.TemporaryDirectory(prefix="topoplace-git.") as d:
        for argv in (["git", "init", "-q", "--bare", d],
                     ["git", "--git-dir", d, "fetch", "-q", "--depth", "1",
                      src, pin["commit"]]):
            rc, out, err = sh(argv, timeout=600)
            if rc:
                raise SourceError("git fetch %s %s: %s" % (
                    src, pin["commit"],
                    (err.strip().splitlines() or ["exit %d" % rc])[0][:200]))
        p = subprocess.run(["git", "--git-dir", d] + arch,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode:
            raise SourceError("git archive %s: %s" % (
                src, p.stderr.decode().strip()[:200]))
        return p.stdout


def fetch_source(app, pins, work):
    """The verified tar of app's pinned commit, unpacked under work; the
    path of its top folder and where the tar came from.  Raises
    SourceError with one line when it cannot be had or does not match."""
    pin = pins.get(app)
    if not pin:
        raise SourceError("%s: not in %s" % (app, SOURCES))
    data, where = None, None
    for ext in (".tar.xz", ".tar"):
        tb = os.path.join(APPS_DIR, app + ext)
        if os.path.exists(tb):
            data, where = _tar_bytes(tb), tb
            if hashlib.sha256(data).hexdigest() != pin["sha256"]:
                raise SourceError("%s: SHA-256 %s, %s pins %s" % (
                    tb, hashlib.sha256(data).hexdigest(), SOURCES,
                    pin["sha256"]))
            break
    cached = os.path.join(CACHE, "%s-%s.tar" % (app, pin["commit"]))
    if data is None and os.path.exists(cached):
        data, where = _tar_bytes(cached), cached
        if hashlib.sha256(data).hexdigest() != pin["sha256"]:
            print("apps: %s does not match its pin, made again" % cached,
                  file=sys.stderr)
            data = None
    if data is None:
        src = os.environ.get("TOPOPLACE_GIT_" + app.upper(), pin["url"])
        data = _git_archive(src, pin)
        where = "%s at %s" % (src, pin["commit"][:12])
        got = hashlib.sha256(data).hexdigest()
        if got != pin["sha256"]:
            raise SourceError("%s: git archive's SHA-256 %s, %s pins %s" % (
                where, got, SOURCES, pin["sha256"]))
        try:    # cache it; a cache that cannot be written is no error
            os.makedirs(CACHE, exist_ok=True)
            tmp = "%s.%d" % (cached, os.getpid())
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, cached)
            where += ", cached in " + cached
        except OSError:
            pass
    d = os.path.join(work, "src-" + app)
    os.makedirs(d, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        t.extractall(d, filter="data")
    return os.path.join(d, pin["prefix"]), where


def build(app, pins, work):
    """Fetch and build app with the SMPI compiler and the trace library;
    the binary's path and where its source came from, or raise."""
    spec = APPS[app]
    src, where = fetch_source(app, pins, work)
    d = os.path.dirname(src)
    trace = os.path.join(d, "trace.o")
    rc, out, err = sh(["smpicc", "-O2", "-c", "-o", trace,
                       os.path.join(ROOT, "contrib", "trace", "trace.c")])
    if rc:
        raise RuntimeError("smpicc trace.c: " + err.strip()[-300:])
    exe = os.path.join(d, app)
    rc, out, err = sh([spec["cc"]] + spec["flags"] + ["-o", exe] +
                      spec["sources"] + [trace] + spec.get("libs", []),
                      cwd=src)
    if rc:
        raise RuntimeError("%s %s: %s" % (spec["cc"], app, err.strip()[-300:]))
    return exe, where


# The collectives' algorithms SMPI runs (smpi/coll-selector): the trace
# library records each collective as MPICH expands it (contrib/trace), and
# a cluster runs MPICH's or Open MPI's choices, not SMPI's own default,
# which runs an all-reduce as a binomial reduce and then a broadcast.  On
# miniAMR's torus seed 580666 (checksums' all-reduces most of its time) the
# trace's map ran 1.073x Slurm's order under SMPI's default, 0.885x under
# MPICH's algorithms and 0.956x under Open MPI's.
# SMPI's MPICH selector sets up a communicator's node-aware (SMP) parts at
# its first all-reduce, broadcast or reduce, and its barrier is not node-
# aware: LULESH's first collective after its barrier is the all-reduce in
# its timed loop, and the set-up (3.3 ms for 512 ranks on the 16^3 torus)
# was all but 80 us of the time measured.  MPICH sets that up when the
# communicator is made, and its barrier is node-aware too
# (MPIR_CVAR_ENABLE_SMP_BARRIER): SMPI's mpich_smp barrier is, so the
# set-up is paid at the barrier, before the timer, as on a cluster.
# miniAMR's first collective is a broadcast before its timer, its only
# barrier after it: its times are the same either way.
# --coll: whose algorithms, and SMPI's settings for them.
COLL = {"mpich": ("MPICH", ["smpi/coll-selector:mpich",
                           "smpi/barrier:mpich_smp"]),
        "ompi": ("Open MPI", ["smpi/coll-selector:ompi"]),
        "smpi": ("SMPI", ["smpi/coll-selector:default"])}


def coll_cfg(coll="mpich"):
    """The collectives' selection, as smpirun takes it."""
    return ["--cfg=" + x for x in COLL[coll][1]]


def smpi_cfg(coll="mpich"):
    return coll_cfg(coll) + ["--cfg=smpi/simulate-computation:no",
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
            "-hostfile", hosts_file, "-quiet"] + smpi_cfg(a.coll) + [exe] + \
        APPS[a.app]["args"](a, nranks)
    rc, out, err = sh(argv, cwd=cwd, env=env)
    t = APPS[a.app]["time"](out, a)
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
    # [a, b, bytes] or [a, b, bytes, rounds]: Scotch weighs the bytes
    return j["tasks"], [(int(e[0]), int(e[1]), float(e[2])) for e in j["edges"]]


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
    """Map and simulate one allocation; c.res gets each column's (us, map
    s) or a one-line note.  Results go to the case's results.json as they
    come, so that a run with --keep DIR started again with the same seed
    skips what it has (a 512-rank case costs minutes)."""
    d = os.path.join(work, c.name)
    os.makedirs(d, exist_ok=True)
    saved = os.path.join(d, "results.json")
    params = {"app": a.app, "size": a.size, "iters": a.iters,
              "site": a.site, "coll": coll_cfg(a.coll), "hosts": c.hostlist,
              "tpn": c.tpn}
    try:
        with open(saved) as f:
            j = json.load(f)
        if j.get("params") == params:
            c.res.update({k: tuple(v) for k, v in j["res"].items()})
    except (OSError, ValueError, KeyError, TypeError):
        pass

    def save():
        with open(saved + ".tmp", "w") as f:
            json.dump({"params": params, "res": {
                k: v for k, v in c.res.items() if isinstance(v, tuple)}}, f)
        os.replace(saved + ".tmp", saved)
    conf = site_conf(c.net, a.site, d)
    maps = {}
    hf = os.path.join(d, "slurm.hosts")
    with open(hf, "w") as f:
        f.writelines(h + "\n" for h in c.hosts for _ in range(c.tpn))
    maps["slurm"] = (hf, None)
    hint = APPS[a.app]["hint"]
    pats = [("trace", ["-g", trace])]
    if hint:
        pats.insert(0, ("hint", ["-s", hint(nranks)]))
    for col, pat in pats:
        if col in c.res:
            continue
        hf = os.path.join(d, col + ".hosts")
        t0 = time.time()
        try:
            rc, out, err = sh([a.topoplace, "map", "-c", conf, "-w",
                               c.hostlist, "-N", str(c.tpn), "-o", hf] + pat,
                              timeout=a.map_timeout)
        except subprocess.TimeoutExpired:
            c.res[col] = "map timed out after %d s (--map-timeout)" % (
                a.map_timeout)
            continue
        secs = time.time() - t0
        if rc:
            c.res[col] = "map failed: " + err.strip()[:150]
            continue
        maps[col] = (hf, secs)
    if a.scotch and "scotch" not in c.res:
        try:
            n, edges = read_trace(trace)
            hf, secs = scotch_hosts(edges, n, c.alloc, c.hosts, c.tpn,
                                    c.net.scotch_arch, d)
            maps["scotch"] = (hf, secs)
        except Exception as e:  # noqa: BLE001
            c.res["scotch"] = str(e)
    for col, (hf, secs) in maps.items():
        if col in c.res:
            continue
        try:
            c.res[col] = (simulate(a, exe, c.net, hf, nranks, d), secs)
            save()
        except Exception as e:  # noqa: BLE001
            c.res[col] = str(e)
    print("apps: %s %s done" % (a.app, c.name), file=sys.stderr, flush=True)
    return c


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2 if v else None


def run_app(a, nets, shape, pins, work):
    """Build, capture and simulate one application (a.app) on every
    network; print its table.  False when it was skipped."""
    spec = APPS[a.app]
    a.size = a.size_arg or spec["size"]
    a.iters = a.iters_arg or spec["iters"]
    work = os.path.join(work, a.app)
    os.makedirs(work, exist_ok=True)
    t_all = time.time()
    try:
        exe, where = build(a.app, pins, work)
    except (SourceError, RuntimeError) as e:
        print("apps: %s skipped: %s" % (a.app, e))
        return False
    print("\napp:       %s (%s), size %d, %d iterations, computation off, "
          "built in %.0f s" % (a.app, where, a.size, a.iters,
                               time.time() - t_all))
    # capture once per rank count: the bytes do not depend on the placement
    traces = {}
    cases = []
    for k, net in nets.items():
        nn, tpn = shape[k]
        p = spec["ranks"](nn * tpn)
        nn = (p + tpn - 1) // tpn
        if p not in traces:
            c0 = Case(net, 0, nn, tpn)
            d = os.path.join(work, "trace-%d" % p)
            os.makedirs(d, exist_ok=True)
            hf = os.path.join(d, "hosts")
            with open(hf, "w") as f:
                f.writelines(h + "\n" for h in c0.hosts for _ in range(tpn))
            tr = os.path.join(d, "trace.json")
            # a kept capture of the same run line is reused (--keep)
            line = os.path.join(d, "run-line")
            want = " ".join(spec["args"](a, p))
            t0 = time.time()
            try:
                with open(line) as f:
                    have = f.read() if os.path.exists(tr) else None
            except OSError:
                have = None
            if have != want:
                try:
                    simulate(a, exe, net, hf, p, d, trace=tr)
                except RuntimeError as e:
                    print("apps: %s: capture on %d ranks: %s" % (a.app, p, e))
                    return False
                with open(line, "w") as f:
                    f.write(want)
            traces[p] = tr
            print("capture:   %d ranks, %s, hint %s" % (
                p, "kept" if have == want else
                "%.0f s (one simulation)" % (time.time() - t0),
                spec["hint"](p) if spec["hint"] else "none"), flush=True)
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
        want = [x for x in cols if (x != "scotch" or a.scotch) and
                (x != "hint" or spec["hint"])]
        ok = [c for c in cs if all(isinstance(c.res.get(x), tuple) for x in want)]
        for c in cs:
            for x in cols:
                if isinstance(c.res.get(x), str):
                    notes.append("%s %s: %s" % (c.name, x, c.res[x]))
        g = {x: geomean([c.res[x][0] for c in ok]) if ok and x in want
             else None for x in cols}

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
    print("%s: %d cases, %.0f s (%d jobs); map s: the slowest trace "
          "mapping's wall time" % (a.app, len(cases), time.time() - t_all,
                                   a.jobs), flush=True)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topoplace", required=True)
    ap.add_argument("--app", default=",".join(APPS),
                    help="applications, comma-separated (default: %s)"
                    % ",".join(APPS))
    ap.add_argument("--net", default="torus,ft4,ft2,df")
    ap.add_argument("--cases", type=int, default=30,
                    help="allocations a network (default 30)")
    ap.add_argument("--seed", type=int, default=None,
                    help="first seed (default: drawn, >= 1000)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--iters", dest="iters_arg", type=int, default=None,
                    help="iterations (LULESH -i, miniAMR timesteps, fftMPI -n)")
    ap.add_argument("--size", dest="size_arg", type=int, default=None,
                    help="LULESH -s, miniAMR block cells a side, fftMPI grid "
                    "points a side")
    ap.add_argument("--site", default="full", choices=("full", "slurm"))
    ap.add_argument("--coll", default="mpich", choices=sorted(COLL),
                    help="the collectives' algorithms SMPI runs: MPICH's "
                    "(default: what the trace records), Open MPI's, or "
                    "SMPI's own default")
    ap.add_argument("--no-scotch", dest="scotch", action="store_false")
    ap.add_argument("--map-timeout", type=int, default=1800,
                    help="seconds one topoplace map may take (default 1800)")
    ap.add_argument("--keep", metavar="DIR")
    a = ap.parse_args()
    apps = a.app.split(",")
    for x in apps:
        if x not in APPS:
            ap.error("--app %s: not one of %s" % (x, ",".join(APPS)))
    makers = {"torus": lambda: platforms.torus(work),
              "ft4": lambda: platforms.fat_tree(work, 8),
              "ft2": lambda: platforms.fat_tree(work, 16),
              "df": lambda: platforms.dragonfly(work)}
    for k in a.net.split(","):
        if k not in makers:
            ap.error("--net %s: not one of %s" % (k, ",".join(makers)))
    try:
        pins = read_sources()
    except (OSError, ValueError) as e:
        print("apps: %s" % e, file=sys.stderr)
        return 1
    if a.scotch and not shutil.which("scotch_gmap"):
        a.scotch = False
    for t in ("smpicc", "smpicxx", "smpirun"):
        if not shutil.which(t):
            print("apps: skipped, %s missing (sh contrib/install-deps.sh bench)" % t)
            return 0
    drawn = a.seed is None
    if drawn:
        a.seed = 1000 + random.SystemRandom().randrange(1000000)
    work = a.keep or tempfile.mkdtemp(prefix="topoplace-apps.")
    os.makedirs(work, exist_ok=True)
    platforms.set_model("")
    # nodes x tasks a node for each network, as simgrid.sh's cases
    shape = {"torus": (512, 1), "ft4": (128, 4), "ft2": (128, 4),
             "df": (54, 4)}
    nets = {k: makers[k]() for k in a.net.split(",")}
    print("seeds:     %d..%d (%s; repeat with --seed %d)" % (
        a.seed, a.seed + a.cases - 1,
        "drawn at run time" if drawn else "given", a.seed))
    print("site:      %s (no simulator knob)" % (
        "Slurm's topology + bandwidths, uplinks, routing, hop latency"
        if a.site == "full" else "Slurm's topology alone"))
    who, cfg = COLL[a.coll]
    print("coll:      %s's algorithms (%s)" % (who, " ".join(cfg)))
    for app in apps:
        a.app = app
        run_app(a, nets, shape, pins, work)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
