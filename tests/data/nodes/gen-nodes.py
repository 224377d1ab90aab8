#!/usr/bin/env python3
"""Generate the example node topologies (hwloc XML v2) and their NVLink files.

    python3 tests/data/nodes/gen-nodes.py [EXAMPLES_DIR [TEST_DIR]]

By default the example nodes go to conf/examples/nodes (their one copy:
the packages install it, the tests read it) and the test-only ones (duo,
uneven3) to tests/data/nodes.  Writes, for each node, NAME.xml (check with
`lstopo-no-graphics --input NAME.xml`) and, for nodes with NVLink, a
gres.conf-style NAME.links file.  The output is committed; this script only
documents how it was made.

  dgx8    2 sockets x 8 cores; 8 GPUs, two per PCIe switch, one switch per
          host bridge, two host bridges per socket; every GPU on an NVSwitch
          with 12 NVLinks (like a DGX A100); one InfiniBand card on each
          GPU switch (4 in all).
  nvl4    2 sockets x 8 cores; 4 GPUs, GPU0+GPU1 under a PCIe switch on
          socket 0, GPU2+GPU3 under one on socket 1; NVLink (4 lanes) only
          inside each pair: the two pairs are bridged by PCIe and the
          inter-socket link only; one InfiniBand card, on socket 0's switch.
  pcie16  2 sockets x 12 cores; 16 GPUs on PCIe only (like the MAGC paper's
          cluster A: 8 dual-GPU K80 boards): per socket one host bridge,
          two root ports, each with a PCIe switch holding two boards, each
          board an on-board switch with two GPUs; one InfiniBand card on a
          third root port of socket 0.
Network cards come after the GPUs in each subtree, so the GPUs' bus
numbers are those of the models without them.
  uneven3 3 sockets x 4 cores; 9 GPUs on PCIe only in an uneven tree:
          socket 0 one switch with three GPUs; socket 1 a switch holding a
          dual-GPU board and a single GPU, and a root port with one GPU of
          its own; socket 2 one switch with two GPUs; no network card.
  cpu2    2 sockets x 8 cores x 2 hardware threads, no GPU.
  dgx8r   2 sockets x 8 cores; 8 GPUs, each under a PCIe switch of its own
          with its own InfiniBand card (with its OpenFabrics device mlx5_N),
          two such switches under one switch per host bridge, two host
          bridges per socket (like a DGX H100: one card a rail); and a
          storage card (Ethernet with RoCE, mlx5_4) on a root port of the
          second host bridge, nearest to no GPU.
  duo     2 sockets x 1 core (CPUs 0 and 1: it fits any test machine, so
          the Slurm tests can really bind tasks to it); 2 GPUs whose PCI
          bus order runs against the socket order, as on boards whose
          firmware numbers the second socket's root complex first: GPU0
          (bus 0x20) hangs off socket 1, GPU1 (bus 0xa0) off socket 0.
"""
import os
import sys


def bitmap(bits):
    """hwloc bitmap string: 32-bit hex words, most significant first."""
    v = 0
    for b in bits:
        v |= 1 << b
    words = []
    while True:
        words.append(v & 0xffffffff)
        v >>= 32
        if not v:
            break
    return ",".join("0x%08x" % w for w in reversed(words))


class Gen:
    def __init__(self):
        self.gp = 0
        self.out = []

    def gpi(self):
        self.gp += 1
        return self.gp

    def line(self, depth, s):
        self.out.append("  " * depth + s)


def sets(g, cpus, nodes):
    c = bitmap(cpus)
    n = bitmap(nodes)
    return ('cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s" gp_index="%d"'
            % (c, c, n, n, g.gpi()))


GPU_TYPE = "0302 [10de:20b0] [10de:134f] a1"    # 3D controller, NVIDIA A100
K80_TYPE = "0302 [10de:102d] [10de:106c] a1"    # 3D controller, NVIDIA K80
NIC_TYPE = "0207 [15b3:101b] [15b3:0007] 00"    # InfiniBand, ConnectX-6
ETH_TYPE = "0200 [15b3:101d] [15b3:0016] 00"    # Ethernet, ConnectX-6 Dx
SWITCH_TYPE = "0604 [10b5:8747] [0000:0000] ca"  # PLX PEX 8747
ROOT_TYPE = "0604 [8086:2030] [0000:0000] 04"    # root port
LINK_GEN3 = "15.753846"


def emit_pci(g, depth, node):
    """node: ('gpu', bus, type) | ('bridge', bus, type, secondary, sub, children)
    | ('host', lo, hi, children)."""
    kind = node[0]
    if kind == "gpu" and len(node) > 3:     # a card with its RDMA device
        _, bus, typ, osdev = node
        g.line(depth, '<object type="PCIDev" gp_index="%d" pci_busid="0000:%02x:00.0" '
               'pci_type="%s" pci_link_speed="%s">' % (g.gpi(), bus, typ, LINK_GEN3))
        g.line(depth + 1, '<object type="OSDev" gp_index="%d" name="%s" osdev_type="3"/>'
               % (g.gpi(), osdev))
        g.line(depth, "</object>")
    elif kind == "gpu":
        _, bus, typ = node
        g.line(depth, '<object type="PCIDev" gp_index="%d" pci_busid="0000:%02x:00.0" '
               'pci_type="%s" pci_link_speed="%s"/>' % (g.gpi(), bus, typ, LINK_GEN3))
    elif kind == "bridge":
        _, bus, dev, typ, sec, sub, children = node
        g.line(depth, '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="%d" '
               'bridge_pci="0000:[%02x-%02x]" pci_busid="0000:%02x:%02x.0" pci_type="%s" '
               'pci_link_speed="%s">' % (g.gpi(), node_depth[id(node)], sec, sub, bus, dev,
                                          typ, LINK_GEN3))
        for c in children:
            emit_pci(g, depth + 1, c)
        g.line(depth, "</object>")
    else:
        _, lo, hi, children = node
        g.line(depth, '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" '
               'bridge_pci="0000:[%02x-%02x]">' % (g.gpi(), lo, hi))
        for c in children:
            emit_pci(g, depth + 1, c)
        g.line(depth, "</object>")


node_depth = {}


def set_depths(node, d):
    if node[0] == "bridge":
        node_depth[id(node)] = d
        for c in node[6]:
            set_depths(c, d + 1)
    elif node[0] == "host":
        for c in node[3]:
            set_depths(c, d)


def machine(name, packages, cores, threads, pci_per_package):
    """pci_per_package[p] = list of host-bridge trees under package p."""
    g = Gen()
    npu = packages * cores * threads
    ncore = packages * cores

    def pu_of(p, c, t):      # Linux numbering: first threads, then siblings
        return t * ncore + p * cores + c

    g.out.append('<?xml version="1.0" encoding="UTF-8"?>')
    g.out.append('<!DOCTYPE topology SYSTEM "hwloc2.dtd">')
    g.out.append('<topology version="2.0">')
    g.line(1, '<object type="Machine" os_index="0" %s>' % sets(g, range(npu), range(packages)))
    g.line(2, '<info name="DMIProductName" value="topoplace example node %s"/>' % name)
    for p in range(packages):
        pcpus = [pu_of(p, c, t) for c in range(cores) for t in range(threads)]
        g.line(2, '<object type="Package" os_index="%d" %s>' % (p, sets(g, pcpus, [p])))
        g.line(3, '<object type="NUMANode" os_index="%d" %s local_memory="68719476736">'
               % (p, sets(g, pcpus, [p])))
        g.line(4, '<page_type size="4096" count="16777216"/>')
        g.line(3, '</object>')
        for c in range(cores):
            core = p * cores + c
            ccpus = [pu_of(p, c, t) for t in range(threads)]
            g.line(3, '<object type="Core" os_index="%d" %s>' % (core, sets(g, ccpus, [p])))
            for t in range(threads):
                u = pu_of(p, c, t)
                g.line(4, '<object type="PU" os_index="%d" %s/>' % (u, sets(g, [u], [p])))
            g.line(3, '</object>')
        for hb in pci_per_package[p]:
            set_depths(hb, 1)
            emit_pci(g, 3, hb)
        g.line(2, '</object>')
    g.line(1, '</object>')
    g.out.append('</topology>')
    return "\n".join(g.out) + "\n"


class Bus:
    """Hands out PCI bus numbers depth first, as firmware enumerates them."""

    def __init__(self, first):
        self.next = first

    def take(self):
        b = self.next
        self.next += 1
        return b


def switch_with(bus, parent_bus, dev, children):
    """A PCIe switch below a port on parent_bus: upstream port (on the bus
    the caller gave it), one downstream port per child; children are callables
    taking the Bus allocator and returning their tree."""
    up = bus.take()            # secondary bus of the upstream port
    ds = []
    for i, mk in enumerate(children):
        sec = bus.take()
        child = mk(bus)
        ds.append(("bridge", up, i + 1, SWITCH_TYPE, sec, bus.next - 1, [child]))
    return ("bridge", parent_bus, dev, SWITCH_TYPE, up, bus.next - 1, ds)


def gpu(typ):
    return lambda bus: ("gpu", bus.next - 1, typ)


def root_port(bus, hb_bus, dev, inner):
    sec = bus.take()
    child = inner(bus, sec)
    return ("bridge", hb_bus, dev, ROOT_TYPE, sec, bus.next - 1, [child])


def dgx8():
    pk = [[], []]
    for h, b in enumerate([0x00, 0x40, 0x80, 0xc0]):
        bus = Bus(b + 1)
        root = root_port(bus, b, 1, lambda bus, sec: switch_with(
            bus, sec, 0, [gpu(GPU_TYPE), gpu(GPU_TYPE), gpu(NIC_TYPE)]))
        pk[h // 2].append(("host", b, bus.next - 1, [root]))
    return machine("dgx8", 2, 8, 1, pk)


def dgx8r():
    """DGX H100-like: every GPU shares a PCIe switch with its own card."""
    pk = [[], []]
    nic = [0]

    def card(typ):
        def mk(bus):
            name = "mlx5_%d" % nic[0]
            nic[0] += 1
            return ("gpu", bus.next - 1, typ, name)
        return mk

    def pair(bus):
        return switch_with(bus, bus.next - 1, 0, [gpu(GPU_TYPE), card(NIC_TYPE)])
    for h, b in enumerate([0x00, 0x40, 0x80, 0xc0]):
        bus = Bus(b + 1)
        root = root_port(bus, b, 1, lambda bus, sec: switch_with(
            bus, sec, 0, [pair, pair]))
        roots = [root]
        if h == 1:      # the storage card: RoCE, on a root port of its own
            roots.append(root_port(bus, b, 2, lambda bus, sec: (
                "gpu", sec, ETH_TYPE, "mlx5_%d" % (nic.__setitem__(0, nic[0] + 1)
                                                  or nic[0] - 1))))
        pk[h // 2].append(("host", b, bus.next - 1, roots))
    return machine("dgx8r", 2, 8, 1, pk)


def nvl4():
    pk = [[], []]
    for p, b in enumerate([0x10, 0x90]):
        bus = Bus(b + 1)
        kids = [gpu(GPU_TYPE), gpu(GPU_TYPE)] + ([gpu(NIC_TYPE)] if p == 0 else [])
        root = root_port(bus, b, 1, lambda bus, sec, kids=kids: switch_with(
            bus, sec, 0, kids))
        pk[p].append(("host", b, bus.next - 1, [root]))
    return machine("nvl4", 2, 8, 1, pk)


def pcie16():
    pk = [[], []]

    def board(bus):
        return switch_with(bus, bus.next - 1, 0, [gpu(K80_TYPE), gpu(K80_TYPE)])
    for p, b in enumerate([0x00, 0x80]):
        bus = Bus(b + 1)
        roots = []
        for r in range(2):
            roots.append(root_port(bus, b, 1 + r, lambda bus, sec: switch_with(
                bus, sec, 0, [board, board])))
        if p == 0:
            roots.append(root_port(bus, b, 3, lambda bus, sec: ("gpu", sec, NIC_TYPE)))
        pk[p].append(("host", b, bus.next - 1, roots))
    return machine("pcie16", 2, 12, 1, pk)


def uneven3():
    pk = [[], [], []]

    def board(bus):
        return switch_with(bus, bus.next - 1, 0, [gpu(K80_TYPE), gpu(K80_TYPE)])
    shapes = [
        [lambda bus, sec: switch_with(bus, sec, 0, [gpu(K80_TYPE)] * 3)],
        [lambda bus, sec: switch_with(bus, sec, 0, [board, gpu(K80_TYPE)]),
         lambda bus, sec: ("gpu", sec, K80_TYPE)],
        [lambda bus, sec: switch_with(bus, sec, 0, [gpu(K80_TYPE)] * 2)],
    ]
    for p, b in enumerate([0x00, 0x40, 0x80]):
        bus = Bus(b + 1)
        roots = [root_port(bus, b, 1 + r, mk) for r, mk in enumerate(shapes[p])]
        pk[p].append(("host", b, bus.next - 1, roots))
    return machine("uneven3", 3, 4, 1, pk)


def cpu2():
    return machine("cpu2", 2, 8, 2, [[], []])


def duo():
    pk = [[], []]
    for p, b in enumerate([0xa0, 0x20]):
        bus = Bus(b + 1)
        pk[p].append(("host", b, b + 1, [gpu(GPU_TYPE)(bus)]))
        bus.take()
    return machine("duo", 2, 1, 1, pk)


def links(n, pairs, count, switch=False):
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            if i == j:
                row.append(-1)
            elif switch or (min(i, j), max(i, j)) in pairs:
                row.append(count)
            else:
                row.append(0)
        rows.append(row)
    return rows


def write_links(path, name, rows, what):
    with open(path, "w") as f:
        f.write("# gres.conf for the example node %s: %s\n" % (name, what))
        f.write("# Links= lists the NVLink count to each GPU index (-1: self).\n")
        for i, row in enumerate(rows):
            f.write("Name=gpu Type=a100 File=/dev/nvidia%d Links=%s\n"
                    % (i, ",".join(str(x) for x in row)))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "conf", "examples", "nodes")
    test_out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "tests", "data", "nodes")
    for name, fn, where in [("dgx8", dgx8, out), ("nvl4", nvl4, out), ("pcie16", pcie16, out),
                            ("cpu2", cpu2, out), ("duo", duo, test_out),
                            ("uneven3", uneven3, test_out), ("dgx8r", dgx8r, test_out)]:
        node_depth.clear()
        with open(os.path.join(where, name + ".xml"), "w") as f:
            f.write(fn())
    write_links(os.path.join(out, "dgx8.links"), "dgx8",
                links(8, set(), 12, switch=True), "8 GPUs on NVSwitch, 12 NVLinks each")
    write_links(os.path.join(out, "nvl4.links"), "nvl4",
                links(4, {(0, 1), (2, 3)}, 4), "NVLink pairs 0-1 and 2-3, 4 lanes each")


if __name__ == "__main__":
    main()
