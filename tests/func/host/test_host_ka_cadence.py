#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_host_ka_cadence.py - the host library's Keep Alive cadence does not
depend on the previous Keep Alive's round trip (issue 14: at 1024
controllers x 4 queues on two CPUs, admin round trips of 2-3.5 s made the
interval the target saw KATO/2 + round trip, and controllers that only sent
Keep Alives while waiting to disconnect expired).

  test_host_ka_cadence.py NVMF_PERF NVMFD

A TCP proxy between nvmf-perf and nvmfd passes every connection through
and, on the admin connection, holds the target's CapsuleResp to the first
Keep Alive (opcode 18h, matched by CID) - and everything behind it - until
the host has sent a second Keep Alive. The assertion is about order, not
time: a host that waits for a Keep Alive's completion before scheduling
the next can never send the second one while the first is unanswered (the
proxy gives up after 30 s; the run then fails on the count). nvmf-perf
must then finish cleanly and nvmfd must not have expired the controller.
Exit: 0 pass, 1 fail.
"""
import os
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
from tcpproxy import (QueueProxy, close_both, perf_through_proxy, pump_raw,  # noqa: E402
                      read_pdu)

NQN = "nqn.2026-12.io.nvmfd:ka-cadence"
CAPSULE_CMD = 0x04
CAPSULE_RESP = 0x05
KEEP_ALIVE = 0x18
HOLD_LIMIT_S = 30


class Proxy(QueueProxy):
    def __init__(self, upstream):
        self.ka_cids = []  # CIDs of the admin queue's Keep Alives, in order
        self.seen_while_held = None  # Keep Alives sent when the first's response left
        super().__init__(upstream)

    def pumps(self, idx):
        if idx == 0:  # the admin queue
            return self.pump_h2t_admin, self.pump_t2h_admin
        return pump_raw, pump_raw

    def pump_h2t_admin(self, src, dst):
        """Host -> target on the admin queue: note each Keep Alive's CID."""
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if pdu[0] == CAPSULE_CMD and len(pdu) >= 12 and pdu[8] == KEEP_ALIVE:
                    with self.cv:
                        self.ka_cids.append(struct.unpack_from("<H", pdu, 10)[0])
                        self.cv.notify_all()
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)

    def pump_t2h_admin(self, src, dst):
        """Target -> host on the admin queue: hold the first Keep Alive's
        response until a second Keep Alive was sent."""
        held = False
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if not held and pdu[0] == CAPSULE_RESP and len(pdu) >= 24:
                    cid = struct.unpack_from("<H", pdu, 8 + 12)[0]
                    with self.cv:
                        first = self.ka_cids[0] if self.ka_cids else None
                    if cid == first:
                        held = True
                        deadline = time.monotonic() + HOLD_LIMIT_S
                        with self.cv:
                            while len(self.ka_cids) < 2 and time.monotonic() < deadline:
                                self.cv.wait(0.2)
                            self.seen_while_held = len(self.ka_cids)
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)


def main():
    # default KATO 5 s: a Keep Alive every 2.5 s, so a 9 s run sends three
    run = perf_through_proxy(sys.argv[1], sys.argv[2], NQN, Proxy, 9, 1, "nvmfd-kac-")
    if not run:
        return 1
    r, log, proxy, work = run
    out = r.stdout
    ok = True
    if not proxy.ka_cids:
        print("FAIL: the host sent no Keep Alive in a 9 s run (KATO 5 s)")
        ok = False
    elif proxy.seen_while_held is None or proxy.seen_while_held < 2:
        print("FAIL: the host sent no second Keep Alive while the first was unanswered "
              "(it waits for the completion before scheduling the next)")
        ok = False
    if r.returncode != 0:
        print("FAIL: nvmf-perf exit %d:\n%s" % (r.returncode, out))
        ok = False
    if re.search(r"keep-alive failed", out):
        print("FAIL: the host reported a failed keep-alive:\n%s" % out)
        ok = False
    if re.search(r"keep-alive timer .* expired", log):
        print("FAIL: nvmfd expired a keep-alive:\n%s" % log)
        ok = False
    if ok:
        print("PASS: %d Keep Alives sent while the first one's response was held; %d in "
              "the run; no expiry" % (proxy.seen_while_held, len(proxy.ka_cids)))
        subprocess.run(["rm", "-rf", work])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
