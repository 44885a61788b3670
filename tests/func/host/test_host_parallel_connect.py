#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_host_parallel_connect.py - the host library connects a controller's
I/O queues in parallel, and a queue whose connect fails is named with the
reason while every queue is torn down (issue 14).

  test_host_parallel_connect.py NVMF_PERF NVMFD

A TCP proxy sits between nvmf-perf (-P 4) and nvmfd; the first connection
(the admin queue) passes through.

1. Parallel: the proxy holds the target's bytes (the ICResp) of every I/O
   connection until all four I/O connections have sent their ICReq. One
   connect at a time can never get there (queue 2 waits for queue 1's
   ICResp, which waits for queue 4's ICReq), so the run passes only if the
   connects overlap. An order, not a time: the proxy gives up after 30 s
   and then the host's ICResp wait fails the run.
2. A failed connect: the proxy closes the connection that carries the
   Fabrics Connect of qid 3 instead of forwarding it. nvmf-perf must fail
   with a message naming I/O queue 3 and a reason, nvmfd must delete the
   controller (every queue closed), and a run through nvmfd afterwards
   still passes.
Exit: 0 pass, 1 fail.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
from tcpproxy import (QueueProxy, close_both, perf_randread, pump_raw, read_pdu,  # noqa: E402
                      start_nvmfd)

NQN = "nqn.2026-12.io.nvmfd:par-connect"
NR_IO = 4
ICREQ = 0x00
CAPSULE_CMD = 0x04
FABRICS = 0x7F
FCTYPE_CONNECT = 0x01
HOLD_LIMIT_S = 30


class Proxy(QueueProxy):
    """mode 'hold': hold I/O connections' target bytes until NR_IO ICReqs;
    mode 'drop': close the connection whose Connect has qid drop_qid."""

    def __init__(self, upstream, mode, drop_qid=0):
        self.mode = mode
        self.drop_qid = drop_qid
        self.icreqs = 0  # ICReqs seen on I/O connections
        self.max_waiting = 0  # most I/O connections waiting for ICResp at once
        self.released = False
        self.dropped = False
        super().__init__(upstream, backlog=64)

    def pumps(self, idx):
        if idx == 0:  # the admin queue passes through
            return pump_raw, pump_raw
        if self.mode == "hold":
            return self.pump_h2t_io, self.pump_t2h_held
        return self.pump_h2t_io, pump_raw

    def pump_h2t_io(self, src, dst):
        """An I/O connection's host->target PDUs: count its ICReq; in drop
        mode close it at the Connect of drop_qid."""
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if pdu[0] == ICREQ:
                    with self.cv:
                        self.icreqs += 1
                        self.max_waiting = max(self.max_waiting, self.icreqs)
                        self.cv.notify_all()
                sqe = pdu[8:72] if pdu[0] == CAPSULE_CMD else b""
                if (self.mode == "drop" and len(sqe) >= 64 and sqe[0] == FABRICS and
                        sqe[4] == FCTYPE_CONNECT):
                    qid = struct.unpack_from("<H", sqe, 42)[0]
                    if qid == self.drop_qid:
                        with self.cv:
                            self.dropped = True
                        break
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)

    def pump_t2h_held(self, src, dst):
        deadline = time.monotonic() + HOLD_LIMIT_S
        with self.cv:
            while self.icreqs < NR_IO and time.monotonic() < deadline:
                self.cv.wait(0.2)
            if self.icreqs >= NR_IO:
                self.released = True
        pump_raw(src, dst)


def perf(perf_bin, port):
    return perf_randread(perf_bin, port, NQN, 1, NR_IO)


def wait_log(path, regex, limit_s=120):
    for _ in range(int(limit_s * 20)):
        if re.search(regex, open(path).read()):
            return True
        time.sleep(0.05)
    return False


def main():
    perf_bin, nvmfd = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nvmfd-parconn-")
    log_path = os.path.join(work, "nvmfd.log")
    tgt, port = start_nvmfd(nvmfd, NQN, log_path)
    if not tgt:
        print("FAIL: nvmfd did not start")
        return 1
    ok = True
    try:
        # 1. parallel
        px = Proxy(port, "hold")
        r = perf(perf_bin, px.port)
        if not px.released:
            print("FAIL: only %d I/O queues sent ICReq before any ICResp (want %d): the "
                  "connects did not overlap" % (px.max_waiting, NR_IO))
            ok = False
        if r.returncode != 0:
            print("FAIL: nvmf-perf through the holding proxy exit %d:\n%s"
                  % (r.returncode, r.stdout))
            ok = False
        # 2. a failing connect, named
        px = Proxy(port, "drop", drop_qid=3)
        nctrl = len(re.findall(r"controller deleted", open(log_path).read()))
        r = perf(perf_bin, px.port)
        if not px.dropped:
            print("FAIL: the proxy never saw the Connect of qid 3")
            ok = False
        if r.returncode == 0:
            print("FAIL: nvmf-perf passed although I/O queue 3 could not connect")
            ok = False
        m = re.search(r"I/O queue 3(?: \(and \d+ more\))?: (.+)", r.stdout)
        if not m or not m.group(1).strip():
            print("FAIL: the error does not name I/O queue 3 and a reason:\n%s" % r.stdout)
            ok = False
        else:
            print("error reported: %s" % m.group(0))
        if not wait_log(log_path, r"(?s)(controller deleted.*){%d}" % (nctrl + 1)):
            print("FAIL: nvmfd did not delete the controller after the failed connect:\n%s"
                  % open(log_path).read())
            ok = False
        # the target still serves
        r = perf(perf_bin, port)
        if r.returncode != 0:
            print("FAIL: a direct run after the failed connect exit %d:\n%s"
                  % (r.returncode, r.stdout))
            ok = False
    finally:
        tgt.terminate()
        tgt.wait(timeout=30)
    if ok:
        print("PASS: %d I/O queues connected at once; a failed connect named its queue"
              % NR_IO)
        subprocess.run(["rm", "-rf", work])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
