#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dropproxy.py - a TCP proxy that resets connections at random (soak.sh).

  dropproxy.py UPSTREAM_PORT MEAN_LIFETIME_S PORT_FILE

Listens on 127.0.0.1:0 and writes the bound port to PORT_FILE. Every
accepted connection is forwarded to 127.0.0.1:UPSTREAM_PORT and cut
(both sides shut down, SO_LINGER 0 so the peers see a reset) after an
exponentially distributed lifetime of mean MEAN_LIFETIME_S seconds. Prints
one line per drop on stdout. Runs until killed.
"""
import os
import random
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from tcpproxy import pump_raw  # noqa: E402


def cut(a, b, n):
    print("drop %d" % n, flush=True)
    for s in (a, b):
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    upstream, mean, port_file = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(256)
    with open(port_file, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    n = 0
    while True:
        hs, _ = ls.accept()
        try:
            ts = socket.create_connection(("127.0.0.1", upstream))
        except OSError:
            hs.close()
            continue
        n += 1
        threading.Thread(target=pump_raw, args=(hs, ts), daemon=True).start()
        threading.Thread(target=pump_raw, args=(ts, hs), daemon=True).start()
        t = threading.Timer(random.expovariate(1.0 / mean), cut, args=(hs, ts, n))
        t.daemon = True
        t.start()


if __name__ == "__main__":
    main()
