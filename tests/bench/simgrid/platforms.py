"""topoplace benchmark: the simulated networks, written twice.

Why: tests/bench/simgrid.sh compares topoplace's model of a network with a
SimGrid simulation of it, so every network is written both as a SimGrid
platform (XML, version 4.1) and as the topoplace config that describes the
same machine, with the same node names in the same order (node index i is
host i of the platform and name i of the config's hostlist).

  fat tree   SimGrid FAT_TREE cluster "2;32,16;1,K;1,1": 16 leaf switches
             of 32 nodes, K spine switches, one cable from every leaf to
             every spine (K=8: 4:1 tapered, K=16: 2:1).  Hosts ft0..ft511,
             node i under leaf i/32 (FatTreeZone numbers processing nodes
             by position, leaf-major).  Routing d-mod-k on the destination.
             topoplace: Network=tree with a Slurm topology.conf.
  torus      SimGrid TORUS cluster 16,16,16, hosts t0..t4095, host id =
             x + 16*(y + 16*z), dimension-order routing x first.
             topoplace: Network=torus, NodeName=t[0-4095] CoordOrder=x-major
             (the first dimension fastest: the same order).  One known
             difference: on a tie (8 hops either way round a ring of 16)
             SimGrid goes the negative way from position 8 to 0, topoplace
             the positive way; distances agree, a link load may not.
  dragonfly  topoplace's dragonfly (core/src/net/dragonfly.c): G groups of A
             routers, P nodes a router, L global links a group pair, global
             link k of groups g,h at router gw(g,h,k) = ((h-g-1 mod G)*L+k)
             mod A, direct (minimal) routing, lowest k on ties.  SimGrid's
             DragonflyZone is wired differently, so the platform is a Full
             zone with an explicit route for every ordered host pair: node
             up link, local hop, global hop, local hop, node down link.
             Hosts df0..df(G*A*P-1), node i at router i/P, router r =
             (a = r mod A, g = r / A) as CoordOrder=x-major places them.

Every link: 25 GB/s, 0.1 us; a node's tasks talk through its loopback
(100 GB/s, 0 us).  The config describes the same fabric for topoplace's
predicted time (LevelBandwidth, HopLatency, ... ), as the simulator
presents it (set_model): SimGrid shares a link among flows in inverse
proportion to their route's latency (its flow model's TCP RTT
unfairness: FlowSharing=rtt), and SMPI's default network model scales a
64 KiB message's latency by 11.6436 and its bandwidth by 0.940694
(smpi's factors for messages of 65472 bytes and more).
"""

import os

BW = 25            # GB/s per cable
LAT_US = 0.1       # per link
LOOP_BW = 100      # GB/s inside a node

# What topoplace's config says of every link (set_model)
TOPO_BW = BW
TOPO_LAT_US = LAT_US


SIM_KNOBS = True   # the configs describe the simulator (set_model)
TOLD_NOTHING = False  # the configs give the structure alone (set_model)


def set_model(network_model, site=False, bw=None, told_nothing=False):
    """The fabric as SimGrid's network model presents it to 64 KiB
    messages: SMPI's default model (None or "SMPI") applies its factors,
    CM02 none.  site: the configs say only what an admin knows (the
    links' bandwidth and latency, no FlowSharing=rtt, no SMPI factors).
    told_nothing: the configs give the structure alone, as Slurm's files
    do (no bandwidth, uplinks, routing or latency: topoplace's defaults).
    bw: every cable's GB/s (default 25)."""
    global TOPO_BW, TOPO_LAT_US, BW, SIM_KNOBS, TOLD_NOTHING
    if bw:
        BW = bw
    site = site or told_nothing
    TOLD_NOTHING = told_nothing
    smpi = network_model in (None, "", "SMPI") and not site
    SIM_KNOBS = not site
    TOPO_BW = BW * (0.940694 if smpi else 1.0)
    TOPO_LAT_US = LAT_US * (11.6436 if smpi else 1.0)


def _told(conf, *keys):
    """conf without the lines of these keys when told nothing."""
    if not TOLD_NOTHING:
        return conf
    return "".join(l + "\n" for l in conf.splitlines()
                   if l.split("=", 1)[0] not in keys)


CONF_ADD = ""  # more keys for every topoplace config (--conf-add)


def _fabric_keys():
    add = "".join(k + "\n" for k in CONF_ADD.split())
    if TOLD_NOTHING:
        return add
    return add + ("HopLatency=%gus\n"
            "IntraNodeBandwidth=%d     # GB/s, tasks of one node\n"
            "%s") % (TOPO_LAT_US, LOOP_BW,
                     "FlowSharing=rtt\n" if SIM_KNOBS else "")

XML_HEAD = ("<?xml version='1.0'?>\n"
            "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n")


class Network:
    """One machine: names, platform file, topoplace config."""

    def __init__(self, key, label, kind, nodes, platform, conf, scotch_arch):
        self.key = key              # short id (ft4, ft2, torus, df)
        self.label = label          # for the tables
        self.kind = kind            # tree, torus, dragonfly
        self.nodes = nodes          # node names, index order
        self.platform = platform    # SimGrid XML path
        self.conf = conf            # topoplace.conf path
        self.scotch_arch = scotch_arch  # Scotch target after "sub N ..."
        self.dropped = []           # config keys this topoplace lacks

    def hostlist(self, idx):
        """Slurm hostlist of the nodes idx (sorted), prefix + ranges."""
        prefix = self.nodes[0].rstrip("0123456789")
        nums = sorted(int(self.nodes[i][len(prefix):]) for i in idx)
        runs, start, prev = [], None, None
        for n in nums:
            if start is None:
                start = prev = n
            elif n == prev + 1:
                prev = n
            else:
                runs.append((start, prev))
                start = prev = n
        if start is not None:
            runs.append((start, prev))
        return prefix + "[" + ",".join(
            str(a) if a == b else "%d-%d" % (a, b) for a, b in runs) + "]"


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def crossbar(net):
    """net's nodes on one crossbar: each node's own link (the bandwidth
    and latency of every cable), nothing between the nodes.  Written
    beside net's platform; its path."""
    prefix = net.nodes[0].rstrip("0123456789")
    assert net.nodes == ["%s%d" % (prefix, i) for i in range(len(net.nodes))]
    path = os.path.join(os.path.dirname(net.platform), "crossbar.xml")
    _write(path, XML_HEAD + (
        "  <cluster id=\"%s-crossbar\" prefix=\"%s\" radical=\"0-%d\" "
        "suffix=\"\" speed=\"1Gf\" bw=\"%dGBps\" lat=\"%gus\" "
        "sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"%dGBps\" "
        "loopback_lat=\"0us\"/>\n</platform>\n") % (
            net.key, prefix, len(net.nodes) - 1, BW, LAT_US, LOOP_BW))
    return path


def fat_tree(outdir, uplinks):
    """16 leaves x 32 nodes, `uplinks` spines: taper 32/uplinks : 1."""
    taper = 32 // uplinks
    key = "ft%d" % taper
    d = os.path.join(outdir, key)
    os.makedirs(d, exist_ok=True)
    n = 512
    names = ["ft%d" % i for i in range(n)]
    xml = XML_HEAD + (
        "  <cluster id=\"%s\" topology=\"FAT_TREE\" "
        "topo_parameters=\"2;32,16;1,%d;1,1\" prefix=\"ft\" radical=\"0-%d\" "
        "suffix=\"\" speed=\"1Gf\" bw=\"%dGBps\" lat=\"%gus\" "
        "sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"%dGBps\" "
        "loopback_lat=\"0us\"/>\n</platform>\n") % (
            key, uplinks, n - 1, BW, LAT_US, LOOP_BW)
    _write(os.path.join(d, "platform.xml"), xml)
    topo = "SwitchName=spine Switches=leaf[00-15]\n" + "".join(
        "SwitchName=leaf%02d Nodes=ft[%d-%d]\n" % (l, 32 * l, 32 * l + 31)
        for l in range(16))
    _write(os.path.join(d, "topology.conf"), topo)
    conf = ("Network=tree\n"
            "TopologyFile=topology.conf\n"
            "LevelBandwidth=%g          # GB/s per cable (all levels)\n"
            "LevelUplinks=%d            # cables from each leaf switch upward\n"
            "UplinkRouting=dmodk\n") % (TOPO_BW, uplinks) + _fabric_keys()
    conf = _told(conf, "LevelBandwidth", "LevelUplinks", "UplinkRouting")
    _write(os.path.join(d, "topoplace.conf"), conf)
    # Scotch: 2 hops (node links) on a leaf, 4 across leaves
    return Network(key, "fat tree %d:1" % taper, "tree", names,
                   os.path.join(d, "platform.xml"),
                   os.path.join(d, "topoplace.conf"), "tleaf\t2\t16\t4\t32\t2")


def torus(outdir, t=16):
    """t x t x t torus, one node a router, x-major ids."""
    key = "torus"
    d = os.path.join(outdir, key)
    os.makedirs(d, exist_ok=True)
    n = t * t * t
    names = ["t%d" % i for i in range(n)]
    xml = XML_HEAD + (
        "  <cluster id=\"torus\" topology=\"TORUS\" topo_parameters=\"%d,%d,%d\" "
        "prefix=\"t\" radical=\"0-%d\" suffix=\"\" speed=\"1Gf\" bw=\"%dGBps\" "
        "lat=\"%gus\" sharing_policy=\"SPLITDUPLEX\" loopback_bw=\"%dGBps\" "
        "loopback_lat=\"0us\"/>\n</platform>\n") % (
            t, t, t, n - 1, BW, LAT_US, LOOP_BW)
    _write(os.path.join(d, "platform.xml"), xml)
    conf = ("Network=torus\n"
            "Dims=%dx%dx%d\n"
            "LinkBandwidth=%g           # GB/s per link\n"
            # SimGrid's torus hosts are its routers: no port of their
            # own, they send on their six links at once
            "NodeBandwidth=%g\n") % (t, t, t, TOPO_BW, 6 * TOPO_BW) + _fabric_keys() + (
            "NodeName=t[0-%d] CoordOrder=x-major\n" % (n - 1))
    conf = _told(conf, "LinkBandwidth", "NodeBandwidth")
    _write(os.path.join(d, "topoplace.conf"), conf)
    return Network(key, "torus %dx%dx%d" % (t, t, t), "torus", names,
                   os.path.join(d, "platform.xml"),
                   os.path.join(d, "topoplace.conf"),
                   "torus3D\t%d\t%d\t%d" % (t, t, t))


def _gw(G, A, L, g, h, k):
    return (((h - g - 1) % G) * L + k) % A


def _best_k(G, A, L, a, g, b, h):
    """topoplace's direct route: cheapest global link, lowest k on ties."""
    best, bk = 4, 0
    for k in range(min(L, 2 * A)):
        if best <= 1:
            break
        c = (a != _gw(G, A, L, g, h, k)) + 1 + (b != _gw(G, A, L, h, g, k))
        if c < best:
            best, bk = c, k
    return bk


def dragonfly(outdir, G=9, A=4, P=4, L=2):
    key = "df"
    d = os.path.join(outdir, key)
    os.makedirs(d, exist_ok=True)
    n = G * A * P
    names = ["df%d" % i for i in range(n)]
    lk = "latency=\"%gus\" bandwidth=\"%dGBps\"" % (LAT_US, BW)
    out = [XML_HEAD, "  <zone id=\"df\" routing=\"Full\">\n"]
    for i in range(n):
        out.append("    <host id=\"df%d\" speed=\"1Gf\"/>\n" % i)
    for i in range(n):
        out.append("    <link id=\"up%d\" %s/>\n" % (i, lk))
        out.append("    <link id=\"dn%d\" %s/>\n" % (i, lk))
        out.append("    <link id=\"lo%d\" bandwidth=\"%dGBps\" latency=\"0us\" "
                   "sharing_policy=\"FATPIPE\"/>\n" % (i, LOOP_BW))
    for g in range(G):
        for x in range(A):
            for y in range(A):
                if x != y:
                    out.append("    <link id=\"g%d_r%d_r%d\" %s/>\n" % (g, x, y, lk))
    for g in range(G):
        for h in range(G):
            if g != h:
                for k in range(L):
                    out.append("    <link id=\"g%d_g%d_%d\" %s/>\n" % (g, h, k, lk))
    for s in range(n):
        rs = s // P
        a, g = rs % A, rs // A
        for t in range(n):
            if s == t:
                out.append("    <route src=\"df%d\" dst=\"df%d\" symmetrical=\"NO\">"
                           "<link_ctn id=\"lo%d\"/></route>\n" % (s, s, s))
                continue
            rt = t // P
            b, h = rt % A, rt // A
            links = ["up%d" % s]
            if g == h:
                if a != b:
                    links.append("g%d_r%d_r%d" % (g, a, b))
            else:
                k = _best_k(G, A, L, a, g, b, h)
                x, y = _gw(G, A, L, g, h, k), _gw(G, A, L, h, g, k)
                if a != x:
                    links.append("g%d_r%d_r%d" % (g, a, x))
                links.append("g%d_g%d_%d" % (g, h, k))
                if y != b:
                    links.append("g%d_r%d_r%d" % (h, y, b))
            links.append("dn%d" % t)
            out.append("    <route src=\"df%d\" dst=\"df%d\" symmetrical=\"NO\">%s</route>\n"
                       % (s, t, "".join("<link_ctn id=\"%s\"/>" % l for l in links)))
    out.append("  </zone>\n</platform>\n")
    _write(os.path.join(d, "platform.xml"), "".join(out))
    conf = ("Network=dragonfly\n"
            "Groups=%d\n"
            "RoutersPerGroup=%d\n"
            "NodesPerRouter=%d\n"
            "LinksPerGroupPair=%d\n"
            "Routing=direct\n"
            "LocalBandwidth=%g          # GB/s, router-router in a group\n"
            "GlobalBandwidth=%g         # GB/s, between groups\n"
            "NodeBandwidth=%g           # GB/s, node-router\n") % (
                G, A, P, L, TOPO_BW, TOPO_BW, TOPO_BW) + _fabric_keys() + (
            "NodeName=df[0-%d] CoordOrder=x-major\n" % (n - 1))
    conf = _told(conf, "LocalBandwidth", "GlobalBandwidth", "NodeBandwidth")
    _write(os.path.join(d, "topoplace.conf"), conf)
    # Scotch has no dragonfly target: a tree of groups, routers, nodes
    # (hops counting node links: 5 across groups, 3 in a group, 2 on a router)
    return Network(key, "dragonfly %dx%dx%d L=%d" % (G, A, P, L), "dragonfly",
                   names, os.path.join(d, "platform.xml"),
                   os.path.join(d, "topoplace.conf"),
                   "tleaf\t3\t%d\t5\t%d\t3\t%d\t2" % (G, A, P))
