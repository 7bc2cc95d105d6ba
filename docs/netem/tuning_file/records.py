#!/usr/bin/env python3
"""Lists the records of ZCOLL_TUNING_FILE files (src/coll/tuning_file.cc): each record's key
and the link figures it was learned on (the first 32 bytes of the model's state: intra-node
and inter-node latency in s and s per byte, as doubles). Stops at the first damaged header.
    docs/netem/tuning_file/records.py FILE..."""
import struct
import sys

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    print(path)
    at = 0
    while at + 32 <= len(data) and data[at:at + 8] == b"zcollTUN":
        key, n, _ = struct.unpack("<QQQ", data[at + 8:at + 32])
        alpha_in, beta_in, alpha_out, beta_out = struct.unpack("<dddd", data[at + 32:at + 64])
        gbps = lambda beta: 8 / beta / 1e9 if beta > 0 else 0.0
        print(f"  key {key:016x}: intra-node {alpha_in * 1e6:.1f} us, {gbps(beta_in):.2f} Gbit/s; "
              f"network {alpha_out * 1e6:.1f} us, {gbps(beta_out):.2f} Gbit/s")
        at += 32 + n
