#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_host_ka_bringup.py - the host library keeps a controller alive
while its admin bring-up commands are unanswered (issue 14: in a 1024 x 4
long run, controllers still connecting expired while every connected one
survived: keep-alive started only after CC.EN, and the bring-up's Identify
and Set Features waits held the admin lock the keep-alive thread needs, so
while one bring-up command was unanswered the target saw nothing at all
from the controller; a round trip over KATO + grace expired it).

  test_host_ka_bringup.py NVMF_PERF NVMFD

A TCP proxy between nvmf-perf and nvmfd holds, on the admin connection,
the target's response to three bring-up commands until the host has sent
another command on the admin queue after the held one:
  - Property Get CAP (the first command after Connect, before CC.EN): the
    host must send a Property Get (a Fabrics command, valid before the
    controller is enabled; a Keep Alive would be a Command Sequence Error);
  - Identify Controller and Set Features (Number of Queues), after CSTS.RDY:
    the host must send a Keep Alive.
The assertion is about order, not time: a host that sends nothing while it
waits for a bring-up response never releases the hold (the proxy gives up
after HOLD_LIMIT_S; the host's 10 s command timeout fails the connect).
Then nvmf-perf must finish cleanly and nvmfd must not have expired the
controller.
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

NQN = "nqn.2026-12.io.nvmfd:ka-bringup"
CAPSULE_CMD = 0x04
CAPSULE_RESP = 0x05
OPC_FABRICS = 0x7F
OPC_IDENTIFY = 0x06
OPC_SET_FEATURES = 0x09
OPC_KEEP_ALIVE = 0x18
FCTYPE_PROP_GET = 0x04
FEAT_NUM_QUEUES = 0x07
REG_CAP = 0x00
HOLD_LIMIT_S = 15


def watched(sqe):
    """The bring-up command this SQE is, as a name, or None."""
    opc = sqe[0]
    cdw10 = struct.unpack_from("<I", sqe, 40)[0]
    if opc == OPC_FABRICS and sqe[4] == FCTYPE_PROP_GET and \
            struct.unpack_from("<I", sqe, 44)[0] == REG_CAP:
        return "Property Get CAP"
    if opc == OPC_IDENTIFY and cdw10 & 0xFF == 1:
        return "Identify Controller"
    if opc == OPC_SET_FEATURES and cdw10 & 0xFF == FEAT_NUM_QUEUES:
        return "Set Features (Number of Queues)"
    return None


class Proxy(QueueProxy):
    def __init__(self, upstream):
        self.sent = []  # opcodes of the admin queue's commands, in order
        self.pending = {}  # cid -> (name, len(self.sent) when it was sent)
        self.holds = []  # (name, opcodes the host sent while it was held)
        self.closed = False  # the host closed the admin connection
        super().__init__(upstream)

    def pumps(self, idx):
        if idx == 0:  # the admin queue
            return self.pump_h2t_admin, self.pump_t2h_admin
        return pump_raw, pump_raw

    def pump_h2t_admin(self, src, dst):
        """Host -> target on the admin queue: note every command."""
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if pdu[0] == CAPSULE_CMD and len(pdu) >= 8 + 64:
                    sqe = pdu[8:8 + 64]
                    with self.cv:
                        name = watched(sqe)
                        if name and not any(n == name for n, _ in self.holds):
                            self.pending[struct.unpack_from("<H", sqe, 2)[0]] = \
                                (name, len(self.sent) + 1)
                        self.sent.append(sqe[0])
                        self.cv.notify_all()
                dst.sendall(pdu)
        except OSError:
            pass
        with self.cv:
            self.closed = True
            self.cv.notify_all()
        close_both(src, dst)

    def pump_t2h_admin(self, src, dst):
        """Target -> host on the admin queue: hold the response to each
        watched command until the host sent another command after it."""
        try:
            while True:
                pdu = read_pdu(src)
                if pdu is None:
                    break
                if pdu[0] == CAPSULE_RESP and len(pdu) >= 8 + 16:
                    cid = struct.unpack_from("<H", pdu, 8 + 12)[0]
                    with self.cv:
                        w = self.pending.pop(cid, None)
                        if w:
                            name, at = w
                            deadline = time.monotonic() + HOLD_LIMIT_S
                            while len(self.sent) <= at and not self.closed and \
                                    time.monotonic() < deadline:
                                self.cv.wait(0.2)
                            self.holds.append((name, list(self.sent[at:])))
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)


def main():
    run = perf_through_proxy(sys.argv[1], sys.argv[2], NQN, Proxy, 1, 1, "nvmfd-kab-")
    if not run:
        return 1
    r, log, proxy, work = run
    out = r.stdout
    ok = True
    expect = {"Property Get CAP": OPC_FABRICS, "Identify Controller": OPC_KEEP_ALIVE,
              "Set Features (Number of Queues)": OPC_KEEP_ALIVE}
    with proxy.cv:
        holds = dict(proxy.holds)
    for name, opc in expect.items():
        if name not in holds:
            print("FAIL: the host never got to %s" % name)
            ok = False
        elif not holds[name]:
            print("FAIL: the host sent nothing on the admin queue while the response to "
                  "%s was held (the target would have seen a silent controller)" % name)
            ok = False
        elif holds[name][0] != opc:
            print("FAIL: while %s was held the host sent opcode 0x%02x, expected 0x%02x"
                  % (name, holds[name][0], opc))
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
        print("PASS: " + "; ".join("%s held until opcode 0x%02x" % (n, holds[n][0])
                                   for n in expect))
        subprocess.run(["rm", "-rf", work])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
