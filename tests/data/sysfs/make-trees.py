#!/usr/bin/env python3
"""Build the sysfs trees and the hwloc topology the inventory tests read.

Usage:
  tests/data/sysfs/make-trees.py            rebuild the hand-built trees
  tests/data/sysfs/make-trees.py --copy-this-machine DIR
                                            copy this machine's network and
                                            cpufreq files into DIR/sys

Trees (each holds a "sys" directory laid out as the Linux kernel lays out
/sys, with the kernel's value formats: "4: ACTIVE", "5: LinkUp",
"400 Gb/sec (4X NDR)"; Documentation/ABI/stable/sysfs-class-infiniband):
  hgx-ndr8/           8-GPU server: mlx5_0..mlx5_7 InfiniBand NDR 400 Gb/s,
                      one port each, firmware 28.39.1002, plus eno1 (25 GbE);
                      intel_pstate, governor "performance", turbo on
  hgx-ndr8-port-down/ as hgx-ndr8, mlx5_3 port 1 DOWN / Polling
  hgx-ndr8-quarter/   as hgx-ndr8, mlx5_5 port 1 at 100 Gb/sec (1X NDR)
  hgx-roce8/          8 RoCE ports (link layer Ethernet, 200 Gb/sec (4X HDR),
                      netdevs ens*np0 at 200000 Mb/s), firmware 22.36.1010,
                      acpi-cpufreq: cpufreq/boost 1, governors mixed
                      (2 performance, 2 schedutil)
and hgx-8gpu.xml: an hwloc XML (version 2) topology of that server: two
packages / NUMA nodes, per package four PCIe switches each holding one GPU
and one NIC (the PCI bus ids of the trees), and eno1 on its own root port.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

NICS = ["18", "40", "4f", "5e", "9a", "c0", "ce", "dc"]   # PCI buses of mlx5_0..7
GPUS = ["1b", "43", "52", "61", "9d", "c3", "d1", "df"]   # PCI buses of GPU 0..7


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def link(path, target):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def pci_dir(bus):
    """sys/devices path of the PCI function on @bus, below its root port."""
    root = "%02x" % (int(bus, 16) - 3)
    return "devices/pci0000:%s/0000:%s:01.0/0000:%s:00.0" % (root, root, bus)


def cpus(sys_dir, governors, driver):
    for i, g in enumerate(governors):
        write(os.path.join(sys_dir, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % i), g)
        write(os.path.join(sys_dir, "devices/system/cpu/cpu%d/cpufreq/scaling_driver" % i), driver)
    write(os.path.join(sys_dir, "devices/system/cpu/online"), "0-%d" % (len(governors) - 1))


def netdev(sys_dir, devpath, name, operstate, carrier, speed):
    d = os.path.join(sys_dir, devpath, "net", name)
    write(os.path.join(d, "operstate"), operstate)
    if carrier is not None:
        write(os.path.join(d, "carrier"), carrier)
    write(os.path.join(d, "speed"), speed)
    link(os.path.join(d, "device"), "../../../" + os.path.basename(devpath))
    link(os.path.join(sys_dir, "class/net", name), "../../" + devpath + "/net/" + name)


# the kernel's port counters (drivers/infiniband/core/sysfs.c) and mlx5's
# hw_counters (drivers/infiniband/hw/mlx5/counters.c), with base values
COUNTERS = ("VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
            "local_link_integrity_errors", "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors",
            "port_rcv_packets", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
            "port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards", "port_xmit_packets",
            "port_xmit_wait", "symbol_error")
HW_COUNTERS = ("duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "out_of_buffer",
               "out_of_sequence", "packet_seq_err", "rnr_nak_retry_err", "roce_adp_retrans", "rx_icrc_encapsulated")


def counters(port, i, faults):
    """Write port/counters and port/hw_counters: traffic counts by NIC index,
    errors 0 (a link that came up once: link_downed 1 is a boot's count,
    kept 0 here), plus @faults {name: added}."""
    for c in COUNTERS:
        v = 0
        if c in ("port_rcv_data", "port_xmit_data"):
            v = 1000000000 * (i + 1)
        elif c in ("port_rcv_packets", "port_xmit_packets"):
            v = 250000 * (i + 1)
        write(os.path.join(port, "counters", c), str(v + faults.get(c, 0)))
    for c in HW_COUNTERS:
        write(os.path.join(port, "hw_counters", c), "10" if c == "lifespan" else str(faults.get(c, 0)))


def tree(name, link_layer="InfiniBand", rate="400 Gb/sec (4X NDR)", fw="28.39.1002",
         down=None, slow=None, governors=("performance",) * 4, turbo=("intel_pstate", "0"), faults=None):
    top = os.path.join(HERE, name)
    shutil.rmtree(top, ignore_errors=True)
    sys_dir = os.path.join(top, "sys")
    for i, bus in enumerate(NICS):
        dev = "mlx5_%d" % i
        pd = pci_dir(bus)
        write(os.path.join(sys_dir, pd, "numa_node"), "0" if i < 4 else "1")
        write(os.path.join(sys_dir, pd, "vendor"), "0x15b3")
        ib = os.path.join(sys_dir, pd, "infiniband", dev)
        write(os.path.join(ib, "fw_ver"), fw)
        write(os.path.join(ib, "node_type"), "1: CA")
        link(os.path.join(ib, "device"), "../../../0000:%s:00.0" % bus)
        port = os.path.join(ib, "ports/1")
        if i == down:
            write(os.path.join(port, "state"), "1: DOWN")
            write(os.path.join(port, "phys_state"), "2: Polling")
            write(os.path.join(port, "rate"), "10 Gb/sec (4X SDR)")
        else:
            write(os.path.join(port, "state"), "4: ACTIVE")
            write(os.path.join(port, "phys_state"), "5: LinkUp")
            write(os.path.join(port, "rate"), "100 Gb/sec (1X NDR)" if i == slow else rate)
        write(os.path.join(port, "link_layer"), link_layer)
        counters(port, i, (faults or {}).get(i, {}))
        link(os.path.join(sys_dir, "class/infiniband", dev), "../../%s/infiniband/%s" % (pd, dev))
        if link_layer == "Ethernet":
            netdev(sys_dir, pd, "ens%dnp0" % (i + 1), "up", "1", "200000")
        else:
            netdev(sys_dir, pd, "ibp%ds0" % int(bus, 16), "down" if i == down else "up",
                   "0" if i == down else "1", "-1" if i == down else "400000")
    # a plain Ethernet port and the loopback interface (virtual: not listed)
    eno = "devices/pci0000:00/0000:00:1c.0/0000:01:00.0"
    write(os.path.join(sys_dir, eno, "numa_node"), "0")
    netdev(sys_dir, eno, "eno1", "up", "1", "25000")
    write(os.path.join(sys_dir, "devices/virtual/net/lo/operstate"), "unknown")
    link(os.path.join(sys_dir, "class/net/lo"), "../../devices/virtual/net/lo")
    cpus(sys_dir, governors, "intel_pstate" if turbo[0] == "intel_pstate" else "acpi-cpufreq")
    if turbo[0] == "intel_pstate":
        write(os.path.join(sys_dir, "devices/system/cpu/intel_pstate/no_turbo"), turbo[1])
    else:
        write(os.path.join(sys_dir, "devices/system/cpu/cpufreq/boost"), turbo[1])


def topology():
    """hwloc XML v2 of the 8-GPU, 8-NIC server of the trees."""
    gp = [100]

    def nid():
        gp[0] += 1
        return 'gp_index="%d" id="obj%d"' % (gp[0], gp[0])

    def downstream(bus, port_busid, pci_type, vendor, device):
        """A switch downstream port on @port_busid with one device on @bus."""
        out.append('            <object type="Bridge" %s bridge_type="1-1" depth="3" bridge_pci="0000:[%02x-%02x]" '
                   'pci_busid="0000:%s" pci_type="0604 [1000:c030] [1000:a064] b0 00" pci_link_speed="31.507692">'
                   % (nid(), bus, bus, port_busid))
        out.append('              <object type="PCIDev" %s pci_busid="0000:%02x:00.0" pci_type="%s" '
                   'pci_link_speed="31.507692"><info name="PCIVendor" value="%s"/>'
                   '<info name="PCIDevice" value="%s"/></object>' % (nid(), bus, pci_type, vendor, device))
        out.append('            </object>')

    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
           '<topology version="2.0">',
           '  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" '
           'allowed_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" '
           'allowed_nodeset="0x00000003" gp_index="1" id="obj1">']
    for p in range(2):
        cs = "0x%08x" % (3 << (2 * p))
        ns = "0x%08x" % (1 << p)
        sets = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (cs, cs, ns, ns)
        out.append('    <object type="Package" os_index="%d" %s %s>' % (p, sets, nid()))
        out.append('      <info name="CPUModel" value="Intel(R) Xeon(R) Platinum 8480C"/>')
        out.append('      <object type="NUMANode" os_index="%d" %s %s local_memory="1099511627776"/>' % (p, sets, nid()))
        for c in range(2):
            pu = 2 * p + c
            s1 = "0x%08x" % (1 << pu)
            one = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (s1, s1, ns, ns)
            out.append('      <object type="Core" os_index="%d" %s %s>' % (pu, one, nid()))
            out.append('        <object type="PU" os_index="%d" %s %s/>' % (pu, one, nid()))
            out.append('      </object>')
        if p == 0:
            out.append('      <object type="Bridge" %s bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">' % nid())
            out.append('        <object type="Bridge" %s bridge_type="1-1" depth="1" bridge_pci="0000:[01-01]" '
                       'pci_busid="0000:00:1c.0" pci_type="0604 [8086:1bbc] [0000:0000] 11 00" pci_link_speed="3.938462">' % nid())
            out.append('          <object type="PCIDev" %s pci_busid="0000:01:00.0" pci_type="0200 [8086:1593] [8086:0002] 02 00" '
                       'pci_link_speed="7.876923"><info name="PCIVendor" value="Intel Corporation"/>'
                       '<info name="PCIDevice" value="Ethernet Controller E810-C for SFP"/></object>' % nid())
            out.append('        </object>')
            out.append('      </object>')
        for k in range(4 * p, 4 * p + 4):
            n, g = int(NICS[k], 16), int(GPUS[k], 16)
            out.append('      <object type="Bridge" %s bridge_type="0-1" depth="0" bridge_pci="0000:[%02x-%02x]">' % (nid(), n - 3, g))
            out.append('        <object type="Bridge" %s bridge_type="1-1" depth="1" bridge_pci="0000:[%02x-%02x]" '
                       'pci_busid="0000:%02x:01.0" pci_type="0604 [8086:352a] [0000:0000] 04 00" pci_link_speed="31.507692">'
                       % (nid(), n - 2, g, n - 3))
            out.append('          <object type="Bridge" %s bridge_type="1-1" depth="2" bridge_pci="0000:[%02x-%02x]" '
                       'pci_busid="0000:%02x:00.0" pci_type="0604 [1000:c030] [1000:a064] b0 00" pci_link_speed="31.507692">'
                       % (nid(), n - 1, g, n - 2))
            downstream(n, "%02x:00.0" % (n - 1), "0207 [15b3:1021] [15b3:0041] 00 00",
                       "Mellanox Technologies", "MT2910 Family [ConnectX-7]")
            downstream(g, "%02x:01.0" % (n - 1), "0302 [10de:2330] [10de:16c1] a1 00",
                       "NVIDIA Corporation", "GH100 [H100 SXM5 80GB]")
            out.append('          </object>')
            out.append('        </object>')
            out.append('      </object>')
        out.append('    </object>')
    out.append('  </object>')
    out.append('</topology>')
    write(os.path.join(HERE, "hgx-8gpu.xml"), "\n".join(out))


def copy_this_machine(dest):
    """Copy /sys/class/net, /sys/class/infiniband and cpufreq files (values
    and links as they are) into DEST/sys: what ch_sysfs.c reads."""
    sys_dir = os.path.join(dest, "sys")
    shutil.rmtree(sys_dir, ignore_errors=True)

    def copy_file(p):
        try:
            with open(p) as f:
                text = f.read().rstrip("\n")
        except OSError:
            return  # unreadable here (e.g. carrier or speed of a down link)
        write(os.path.join(dest, p.lstrip("/")), text)

    def copy_link(p):
        if os.path.islink(p):
            link(os.path.join(dest, p.lstrip("/")), os.readlink(p))

    for cls in ("/sys/class/net", "/sys/class/infiniband"):
        if not os.path.isdir(cls):
            continue
        for name in sorted(os.listdir(cls)):
            p = os.path.join(cls, name)
            copy_link(p)
            real = os.path.realpath(p)
            for f in ("operstate", "carrier", "speed", "fw_ver"):
                copy_file(os.path.join(real, f))
            copy_link(os.path.join(real, "device"))
            if os.path.exists(os.path.join(real, "device")):
                dev = os.path.realpath(os.path.join(real, "device"))
                while dev != "/sys/devices" and not os.path.exists(os.path.join(dev, "numa_node")):
                    dev = os.path.dirname(dev)
                copy_file(os.path.join(dev, "numa_node"))
            ports = os.path.join(real, "ports")
            for port in sorted(os.listdir(ports)) if os.path.isdir(ports) else []:
                for f in ("state", "phys_state", "rate", "link_layer"):
                    copy_file(os.path.join(ports, port, f))
    cpu = "/sys/devices/system/cpu"
    copy_file(os.path.join(cpu, "online"))
    for name in sorted(os.listdir(cpu)):
        if name.startswith("cpu") and name[3:].isdigit():
            os.makedirs(os.path.join(dest, cpu.lstrip("/"), name), exist_ok=True)
            copy_file(os.path.join(cpu, name, "cpufreq/scaling_governor"))
    copy_file(os.path.join(cpu, "intel_pstate/no_turbo"))
    copy_file(os.path.join(cpu, "cpufreq/boost"))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--copy-this-machine":
        copy_this_machine(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    tree("hgx-ndr8")
    tree("hgx-ndr8-port-down", down=3)
    tree("hgx-ndr8-quarter", slow=5)
    tree("hgx-roce8", link_layer="Ethernet", rate="200 Gb/sec (4X HDR)", fw="22.36.1010",
         governors=("performance", "performance", "schedutil", "schedutil"), turbo=("boost", "1"))
    # hgx-ndr8 after a run on which mlx5_2's link flapped (2 downs, 5 error
    # recoveries, symbol and receive errors) and mlx5_6 saw receive errors
    # only: the end of a run that started as hgx-ndr8
    tree("hgx-ndr8-flapping", faults={
        2: {"link_downed": 2, "link_error_recovery": 5, "symbol_error": 1800, "port_rcv_errors": 240,
            "port_rcv_data": 500000000, "port_xmit_data": 500000000},
        6: {"port_rcv_errors": 12, "port_rcv_data": 800000000}})
    topology()
