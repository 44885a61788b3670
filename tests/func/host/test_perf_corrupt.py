#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_perf_corrupt.py - corrupted C2HData must not pass nvmf-perf.

  test_perf_corrupt.py NVMF_PERF NVMFD

Starts nvmfd (1 MiB RAM namespace, so that nearly every read hits a block
written earlier in the run) and a TCP proxy between nvmf-perf and nvmfd.
The proxy forwards host->target bytes untouched and re-frames the
target->host stream PDU by PDU (common header: type at byte 0, flags at 1,
hlen at 2, pdo at 3, plen u32 LE at 4). After the first SKIP C2HData PDUs
it flips one byte in the DATA of every later C2HData PDU.

  A  no digests: nvmf-perf --verify -w randrw exits 1 and prints a
     mismatch naming the LBA.
  B  --digest hdr,data: the data digest catches it: nvmf-perf exits
     non-zero, the read completes with DATA_XFER_ERROR (how the host
     library reports a data digest error) and no verify mismatch is reported (the data never reached
     the verifier), and the corrupted PDUs carried DDGST.
  C  control: the same proxy without corruption: exit 0, the proxy saw
     C2HData PDUs and changed none.
The corrupting runs are 60 s long and end at the first corrupted read
nvmf-perf detects; the control run is 1 s, repeated 2..16 s long while
the proxy saw no more than SKIP C2HData PDUs (a loaded machine).
Exit: 0 pass, 1 fail, 77 skip.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
from tcpproxy import QueueProxy, close_both, pump_raw, recv_exact, start_nvmfd  # noqa: E402

C2H_DATA = 0x07
F_DDGST = 0x02
SKIP = 64
NQN = "nqn.2026-11.io.nvmfd:perf-corrupt"
# nvmf-perf's verify report: "verify failed: LBA N gen G: ... (corrupted data)"
VERIFY_FAIL = re.compile(r"verify failed|mismatch", re.I)


class Proxy(QueueProxy):
    """The shared listening proxy (TCP_NODELAY on every socket): host->target
    bytes pass untouched, the target->host stream is re-framed PDU by PDU
    and, with corrupt, C2HData after the first SKIP is changed."""

    def __init__(self, upstream_port, corrupt):
        self.corrupt = corrupt
        self.c2h_seen = 0
        self.corrupted = 0
        self.corrupted_ddgst = 0
        self.bad_frames = 0
        super().__init__(upstream_port, backlog=64, nodelay=True)

    def pumps(self, idx):
        return pump_raw, self.pump_pdus

    def pump_pdus(self, src, dst):
        try:
            while True:
                ch = recv_exact(src, 8)
                if ch is None:
                    break
                ptype, flags, hlen, pdo = ch[0], ch[1], ch[2], ch[3]
                plen = struct.unpack_from("<I", ch, 4)[0]
                if plen < 8 or plen < hlen or plen > (16 << 20):
                    with self.cv:
                        self.bad_frames += 1
                    break
                rest = recv_exact(src, plen - 8)
                if rest is None:
                    break
                pdu = bytearray(ch + rest)
                if ptype == C2H_DATA:
                    dlen = plen - pdo - (4 if flags & F_DDGST else 0)
                    with self.cv:
                        self.c2h_seen += 1
                        hit = self.corrupt and self.c2h_seen > SKIP and pdo >= hlen and dlen > 0
                        if hit:
                            self.corrupted += 1
                            if flags & F_DDGST:
                                self.corrupted_ddgst += 1
                    if hit:
                        # a byte inside the first logical block of the data
                        pdu[pdo + min(100, dlen - 1)] ^= 0x5A
                dst.sendall(pdu)
        except OSError:
            pass
        close_both(src, dst)


def main():
    if len(sys.argv) != 3:
        print("usage: test_perf_corrupt.py NVMF_PERF NVMFD")
        return 1
    perf, nvmfd = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nvmfd-perf-corrupt.")
    tgt, port = start_nvmfd(nvmfd, NQN, os.path.join(work, "nvmfd.log"), ns="ram:1M")
    if tgt is None:
        print("FAIL: nvmfd did not start")
        return 1
    fails = 0

    def run(name, corrupt, extra, secs):
        """One nvmf-perf run of secs through a fresh proxy. The corrupting
        runs end at the first corrupted read they detect, so they are
        given a long time (a loaded machine passes few PDUs a second)."""
        nonlocal fails
        px = Proxy(port, corrupt)
        trid = ("trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s"
                % (px.port, NQN))
        cmd = [perf, "-r", trid, "-t", str(secs), "-q", "8", "-w", "randrw", "--verify",
               "--timeout", "30000"] + extra
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=secs + 180)
            rc, out = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            rc, out = "timeout", str(e.stdout) + str(e.stderr)
        px.close()
        with px.cv:
            seen, cor, cord, bad = px.c2h_seen, px.corrupted, px.corrupted_ddgst, px.bad_frames
        print("%s: rc=%s c2h=%d corrupted=%d (ddgst %d) bad_frames=%d"
              % (name, rc, seen, cor, cord, bad))
        with open(os.path.join(work, name + ".out"), "w") as f:
            f.write(out)
        ok = True

        def check(cond, what):
            nonlocal ok
            if not cond:
                print("FAIL: %s: %s" % (name, what))
                ok = False
        check(bad == 0, "proxy saw %d malformed frames from the target" % bad)
        if seen <= SKIP and not corrupt and secs < 16:
            # too few PDUs for the check (not an error): the caller runs
            # again, longer
            return None
        check(seen > SKIP, "only %d C2HData PDUs seen" % seen)
        return rc, out, cor, cord, check, lambda: ok

    # C: control; a loaded machine may pass no more than SKIP C2HData PDUs
    # in 1 s: then again 2, 4, 8, 16 s long
    for secs in (1, 2, 4, 8, 16):
        res = run("control", False, [], secs)
        if res is not None:
            break
    rc, out, cor, _, check, ok = res
    check(rc == 0, "exit %s, want 0:\n%s" % (rc, out))
    check(cor == 0, "corrupted %d" % cor)
    check(not VERIFY_FAIL.search(out), "mismatch reported:\n" + out)
    fails += not ok()

    # A: no digests -> verify mismatch naming the LBA, exit 1
    rc, out, cor, cord, check, ok = run("verify", True, [], 60)
    check(cor > 0, "nothing corrupted")
    check(cord == 0, "DDGST set without --digest")
    check(rc == 1, "exit %s, want 1:\n%s" % (rc, out))
    check(VERIFY_FAIL.search(out) is not None, "no mismatch message:\n" + out)
    check(re.search(r"verify failed: LBA \d+ gen \d+:", out) is not None,
          "mismatch message does not name an LBA:\n" + out)
    fails += not ok()

    # B: data digest catches it before the verifier
    rc, out, cor, cord, check, ok = run("ddgst", True, ["--digest", "hdr,data"], 60)
    check(cor > 0, "nothing corrupted")
    check(cord == cor, "corrupted PDUs without DDGST: %d of %d" % (cor - cord, cor))
    check(rc not in (0, "timeout"), "exit %s, want non-zero:\n%s" % (rc, out))
    check(re.search(r"completed with status DATA_XFER_ERROR", out) is not None,
          "no data digest / transfer error reported:\n" + out)
    check(not VERIFY_FAIL.search(out),
          "corrupted data reached the verifier despite the data digest:\n" + out)
    fails += not ok()

    # the target survived all of it
    check_alive = tgt.poll() is None
    if not check_alive:
        print("FAIL: nvmfd exited with %s" % tgt.returncode)
        fails += 1
    tgt.terminate()
    try:
        trc = tgt.wait(timeout=20)
    except subprocess.TimeoutExpired:
        tgt.kill()
        trc = "hung"
    if check_alive and trc != 0:
        print("FAIL: nvmfd exit %s after SIGTERM" % trc)
        fails += 1
    if fails:
        print("outputs kept in", work)
        with open(os.path.join(work, "nvmfd.log")) as f:
            print("nvmfd log tail:\n" + "".join(f.readlines()[-20:]))
        return 1
    for n in os.listdir(work):
        os.unlink(os.path.join(work, n))
    os.rmdir(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
