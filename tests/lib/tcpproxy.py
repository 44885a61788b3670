# SPDX-License-Identifier: MIT
"""tcpproxy.py - pieces of the test TCP proxies that sit between a host and
nvmfd (tests/func/host, tests/scale): exact reads, whole PDUs, pumps,
closing, starting the nvmfd behind the proxy, and the listening proxy that
hands each connection, by its order, to the pumps a test chooses."""
import os
import re
import socket
import struct
import subprocess
import tempfile
import threading
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


def start_nvmfd(nvmfd, nqn, log_path, extra=(), ns="ram:16M", limit_s=120):
    """nvmfd on 127.0.0.1:0 exporting ns (default ram:16M) as nqn to any
    host, logging to log_path; Return: (Popen, bound port), or (None,
    None) when it exited or did not listen within limit_s (then killed).
    The bound only catches a hang: the wait ends at the "listening on"
    line, so a loaded machine only makes it longer."""
    with open(log_path, "w") as log:
        tgt = subprocess.Popen([nvmfd, "-l", "127.0.0.1:0", "-s", nqn, "-n", ns,
                                "--allow-any-host"] + list(extra), stdout=log, stderr=log)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(log_path).read())
        if m:
            return tgt, int(m.group(1))
        if tgt.poll() is not None:
            break
        time.sleep(0.05)
    tgt.kill()
    tgt.wait()
    return None, None


def perf_randread(perf, port, nqn, secs, queues):
    """nvmf-perf, 4 KiB random reads at QD 4 on `queues` I/O queues for
    `secs` seconds against 127.0.0.1:port; Return: CompletedProcess with
    stdout and stderr together (text), after at most 120 s."""
    trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, nqn)
    return subprocess.run([perf, "-r", trid, "-q", "4", "-o", "4096", "-w", "randread",
                           "-t", str(secs), "-P", str(queues)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)

def perf_through_proxy(perf, nvmfd, nqn, make_proxy, secs, queues, prefix):
    """Start nvmfd (log level info) in a fresh temporary directory, put
    make_proxy(nvmfd's port) in front of it, run perf_randread() through the
    proxy for `secs` s on `queues` queues, then stop nvmfd.
    Return: (CompletedProcess, nvmfd's log text, the proxy, the directory),
    or None when nvmfd did not start (FAIL printed)."""
    work = tempfile.mkdtemp(prefix=prefix)
    log_path = os.path.join(work, "nvmfd.log")
    tgt, port = start_nvmfd(nvmfd, nqn, log_path, ["--log-level", "info"])
    if not tgt:
        print("FAIL: nvmfd did not start")
        return None
    proxy = make_proxy(port)
    r = perf_randread(perf, proxy.port, nqn, secs, queues)
    tgt.terminate()
    tgt.wait(timeout=30)
    return r, open(log_path).read(), proxy, work


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


class QueueProxy:
    """Listens on 127.0.0.1:0 (self.port) and connects every accepted host
    connection to upstream (nvmfd's port). The idx-th connection (0 = the
    first, for one controller the admin queue) is pumped by the pair
    self.pumps(idx) returns: (host->target, target->host), each called as
    pump(src, dst) on its own thread. Subclasses override pumps(); self.cv
    guards the subclass's counters."""

    def __init__(self, upstream, backlog=16, nodelay=False):
        self.upstream = upstream
        self.nodelay = nodelay  # TCP_NODELAY on both sockets of every connection
        self.cv = threading.Condition()
        self.nconn = 0
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(backlog)
        self.port = self.lsock.getsockname()[1]
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def pumps(self, idx):
        """(host->target, target->host) pumps of connection idx."""
        return pump_raw, pump_raw

    def accept_loop(self):
        while True:
            try:
                hs, _ = self.lsock.accept()
            except OSError:
                return
            ts = socket.create_connection(("127.0.0.1", self.upstream))
            if self.nodelay:
                for s in (hs, ts):
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.cv:
                idx = self.nconn
                self.nconn += 1
            h2t, t2h = self.pumps(idx)
            threading.Thread(target=h2t, args=(hs, ts), daemon=True).start()
            threading.Thread(target=t2h, args=(ts, hs), daemon=True).start()

    def close(self):
        """Stop accepting (connections already pumped run on)."""
        self.lsock.close()
