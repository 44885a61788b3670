#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_host_ka_during_connect.py - the host library keeps the admin queue
alive while an I/O queue is still connecting (issue 14: a KATO shorter than
a slow connect used to expire, because keep-alive started only after every
I/O queue was connected and the connects held the admin lock).

  test_host_ka_during_connect.py NVMF_PERF NVMFD

A TCP proxy between nvmf-perf and nvmfd passes the first connection (the
admin queue) through, and holds the target's first bytes on the second
connection (I/O queue 1: its ICResp) until it has seen two Keep Alive
capsules (opcode 18h) go from the host to the target on the admin
connection. The assertion is about order, not time: the ICResp is released
only after two keep-alives, so nvmf-perf can finish only if keep-alive runs
during the connect; if none comes, the proxy gives up after 30 s and the
host's 10 s ICResp wait fails the run. Then nvmfd must not have expired the
controller's keep-alive.
Exit: 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
from tcpproxy import (QueueProxy, close_both, perf_through_proxy, pump_raw,  # noqa: E402
                      read_pdu)

NQN = "nqn.2026-12.io.nvmfd:ka-connect"
CAPSULE_CMD = 0x04
KEEP_ALIVE = 0x18
HOLD_LIMIT_S = 30


class Proxy(QueueProxy):
    def __init__(self, upstream):
        self.keepalives = 0
        self.held_until_ka = None  # keep-alives seen when the ICResp left
        super().__init__(upstream)

    def pumps(self, idx):
        # admin queue (0): count Keep Alives; I/O queue 1: hold its ICResp
        return (self.pump_h2t_admin if idx == 0 else pump_raw,
                self.pump_t2h_held if idx == 1 else pump_raw)

    def pump_h2t_admin(self, src, dst):
        """Forward the admin queue's host->target PDUs, counting Keep Alive."""
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if pdu[0] == CAPSULE_CMD and len(pdu) >= 9 and pdu[8] == KEEP_ALIVE:
                    with self.cv:
                        self.keepalives += 1
                        self.cv.notify_all()
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)

    def pump_t2h_held(self, src, dst):
        """I/O queue 1: hold the target's bytes (its ICResp) until two
        keep-alives passed on the admin queue."""
        deadline = time.monotonic() + HOLD_LIMIT_S
        with self.cv:
            while self.keepalives < 2 and time.monotonic() < deadline:
                self.cv.wait(0.2)
            self.held_until_ka = self.keepalives
        pump_raw(src, dst)


def main():
    # default KATO (5 s: keep-alive every 2.5 s); one I/O queue
    run = perf_through_proxy(sys.argv[1], sys.argv[2], NQN, Proxy, 1, 1, "nvmfd-ka-")
    if not run:
        return 1
    r, log, proxy, work = run
    out = r.stdout
    ok = True
    if proxy.held_until_ka is None or proxy.held_until_ka < 2:
        print("FAIL: the I/O queue's ICResp was released after %s keep-alives (want 2)"
              % proxy.held_until_ka)
        ok = False
    if r.returncode != 0:
        print("FAIL: nvmf-perf exit %d:\n%s" % (r.returncode, out))
        ok = False
    if re.search(r"keep.?alive|KATO", log, re.I) and re.search(r"expir", log, re.I):
        print("FAIL: nvmfd expired a keep-alive:\n%s" % log)
        ok = False
    if ok:
        print("PASS: %d keep-alives went out while I/O queue 1 was connecting; the run "
              "completed" % proxy.held_until_ka)
        subprocess.run(["rm", "-rf", work])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
