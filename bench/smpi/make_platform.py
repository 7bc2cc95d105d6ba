#!/usr/bin/env python3
"""Write a SimGrid platform (and an SMPI hostfile) for a cluster like seed 000's testbed.

Seed 000 (ZCCL) ran one MPI process per node on nodes joined by Intel Omni-Path, 100 Gbit/s.
Modelled here as N hosts, each with its own full-duplex 100 Gbit/s link (SPLITDUPLEX: sending
and receiving do not share the link) into one non-blocking switch (a FATPIPE backbone: every
flow through it gets up to the link rate, none is slowed by the others). Latency end to end is
about 1 us: 0.5 us per host link, none in the switch. Every host has the same CPU speed
(--speed); zcoll-bench's compute is charged at that speed (see run_scale.sh and README.md).

  make_platform.py --nodes 64 --out platform.xml --hostfile hosts.txt

Several ranks per node (--ranks-per-node R): each host gets R cores (SimGrid multicore host:
R computations at once, each at the host speed) and the hostfile lists it as node-i:R, so
ranks i*R .. i*R+R-1 share node i (block mapping). Messages between two ranks of one host take
the host's loopback link (--loopback-bw, --loopback-lat: shared memory), the others share the
host's one network link.
"""

import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, required=True, help="number of hosts (one MPI rank each)")
    ap.add_argument("--bw", default="100Gbps", help="host link bandwidth, SimGrid units (default 100Gbps)")
    ap.add_argument("--lat", default="0.5us", help="latency of each host link (default 0.5us; two per route)")
    ap.add_argument("--speed", default="1Gf", help="host CPU speed in flop/s, SimGrid units (default 1Gf); "
                    "pass the same value to --cfg=smpi/host-speed")
    ap.add_argument("--ranks-per-node", type=int, default=1, help="MPI ranks (and cores) per host (default 1)")
    ap.add_argument("--loopback-bw", default="12GBps",
                    help="bandwidth between two ranks of one host (shared memory; default 12GBps, about one "
                         "core's memcpy here)")
    ap.add_argument("--loopback-lat", default="0.3us", help="latency between two ranks of one host (default 0.3us)")
    ap.add_argument("--out", required=True, help="platform XML to write")
    ap.add_argument("--hostfile", help="also write an SMPI hostfile (one host name per line)")
    a = ap.parse_args()
    if a.nodes < 1 or a.ranks_per_node < 1:
        sys.exit("make_platform.py: --nodes and --ranks-per-node must be at least 1")
    multi = a.ranks_per_node > 1
    cores = (f' core="{a.ranks_per_node}" loopback_bw="{a.loopback_bw}" loopback_lat="{a.loopback_lat}"'
             if multi else "")
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {a.nodes} hosts, {a.bw} full-duplex links of {a.lat} each into one non-blocking switch
     (FATPIPE backbone), host speed {a.speed}: seed 000's Omni-Path 100 Gbit/s cluster, {a.ranks_per_node} rank(s) per
     node{f" (one core each; loopback {a.loopback_bw}, {a.loopback_lat} between ranks of a node)" if multi else ""}.
     Written by bench/smpi/make_platform.py. -->
<platform version="4.1">
  <cluster id="opa" prefix="node-" suffix="" radical="0-{a.nodes - 1}" speed="{a.speed}"
           bw="{a.bw}" lat="{a.lat}" sharing_policy="SPLITDUPLEX"{cores}
           bb_bw="{a.bw}" bb_lat="0us" bb_sharing_policy="FATPIPE"/>
</platform>
"""
    with open(a.out, "w") as f:
        f.write(xml)
    if a.hostfile:
        with open(a.hostfile, "w") as f:
            suffix = f":{a.ranks_per_node}" if multi else ""
            f.write("".join(f"node-{i}{suffix}\n" for i in range(a.nodes)))


if __name__ == "__main__":
    main()
