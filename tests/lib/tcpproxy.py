# SPDX-License-Identifier: MIT
"""tcpproxy.py - pieces of the test TCP proxies that sit between a host and
nvmfd (tests/func/host, tests/scale): exact reads, pumps, closing."""
import socket


def recv_exact(s, n):
    """n bytes from s, or None at EOF."""
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


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
