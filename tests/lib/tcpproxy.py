# SPDX-License-Identifier: MIT
"""tcpproxy.py - pieces of the test TCP proxies that sit between a host and
nvmfd (tests/func/host, tests/scale): exact reads, whole PDUs, pumps,
closing, and starting the nvmfd behind the proxy."""
import re
import socket
import struct
import subprocess
import time


def recv_exact(s, n):
    """n bytes from s, or None at EOF."""
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def read_pdu(s):
    """One NVMe/TCP PDU (8-byte common header + the rest, by PLEN) from s,
    or None at EOF."""
    ch = recv_exact(s, 8)
    if ch is None:
        return None
    plen = struct.unpack_from("<I", ch, 4)[0]
    rest = recv_exact(s, plen - 8) if plen > 8 else b""
    if rest is None:
        return None
    return ch + rest


def start_nvmfd(nvmfd, nqn, log_path, extra=()):
    """nvmfd on 127.0.0.1:0 exporting ram:16M as nqn to any host, logging to
    log_path; Return: (Popen, bound port), or (None, None) when it did not
    listen within 10 s (then killed)."""
    with open(log_path, "w") as log:
        tgt = subprocess.Popen([nvmfd, "-l", "127.0.0.1:0", "-s", nqn, "-n", "ram:16M",
                                "--allow-any-host"] + list(extra), stdout=log, stderr=log)
    for _ in range(200):
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read())
        if m:
            return tgt, int(m.group(1))
        time.sleep(0.05)
    tgt.kill()
    return None, None


def close_both(a, b):
    """Shut both directions of both sockets down (the pumps then end)."""
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def pump_raw(src, dst):
    """Copy src to dst until EOF or an error, then close both."""
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    close_both(src, dst)
