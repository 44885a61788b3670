#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_perf_cli.py - nvmf-perf's user-facing checks against a spawned nvmfd.

  test_perf_cli.py NVMF_PERF NVMFD

Starts nvmfd (1 MiB RAM namespace, default MDTS = 1 MiB) on 127.0.0.1
port 0 (the port is read from its log) and checks:

  verify-read   -w read/randread --verify: exit 2 with the "--verify needs
                writes in the same run" message, before connecting.
  verify-count  -w randrw --verify --json: exit 0, total verified_blocks > 0
                and a multiple of the blocks per I/O, interrupted false; the
                text report has a "verify: N blocks verified" line. A run
                that verified none (a loaded machine gave it few I/Os) is
                repeated 2, 4 and 8 s long before the check fails.
  mdts          -o 2m: exit 2, "I/O size 2097152 exceeds the controller's
                maximum transfer size 1048576 (MDTS)"; -o 1m runs (exit 0).
  discover      on a port nobody listens on: exit 3 and the hint "no
                discovery controller on PORT (nvmfd listens on 4420 by
                default; pass trsvcid:PORT)"; on nvmfd's port: exit 0; with
                an I/O option (-w read, --exec auto) on nvmfd's port: exit 2
                naming the option, before connecting (no output).
  affinity      --affinity-strict / --affinity-scope with --exec bound or
                auto: exit 0 with one warning that they are ignored; with
                --exec unbound: no warning.
  ipv6          traddr:[::1] (and traddr:::1) against nvmfd -l [::1]:0:
                exit 0 (skipped if ::1 cannot be bound).
  sigint        stderr on a pty (so the 1 s progress line shows the run has
                started), SIGINT after the first progress line: exit 130,
                a JSON report with "interrupted": true and ios > 0, an
                "interrupted by SIGINT" line on stderr.
  sigterm       the same with SIGTERM and the text report: exit 143, a
                "total" line.
Exit: 0 pass, 1 fail, 77 skip.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NQN = "nqn.2026-11.io.nvmfd:perf-cli"
TIMEOUT = 60  # bound of every nvmf-perf run, s


def free_port(family=socket.AF_INET, addr="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind((addr, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_nvmfd(nvmfd, addr, logpath, extra=()):
    """nvmfd on ADDR port 0 (the kernel picks a free port, nvmfd logs it:
    a port chosen here could be taken before nvmfd binds it), subsystem
    NQN with a 1 MiB RAM namespace, @extra appended to its arguments.
    Return (process, port) or (None, 0)."""
    log = open(logpath, "w")
    proc = subprocess.Popen([nvmfd, "-l", "%s:0" % addr, "-s", NQN, "-n", "ram:1M",
                             "--allow-any-host", "--log-level", "info"] + list(extra),
                            stdout=log, stderr=log)
    log.close()
    pat = re.compile(r"listening on %s:(\d+)" % re.escape(addr))
    # the wait ends at the "listening on" line; the bound only catches a hang
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with open(logpath) as f:
            m = pat.search(f.read())
        if m and int(m.group(1)):
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    return None, 0


def run(perf, args):
    p = subprocess.run([perf] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def run_signal(perf, args, sig):
    """Run with stderr on a pty, send @sig after the first progress line."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([perf] + args, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + TIMEOUT
    sent = False
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        if not sent and b"IOPS" in err:
            proc.send_signal(sig)
            sent = True
        if sent and proc.poll() is not None:
            # collect what is left on the pty
            while select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
            break
    if proc.poll() is None:
        proc.kill()
    out = proc.communicate(timeout=TIMEOUT)[0]
    os.close(master)
    return proc.returncode, out, err.decode(errors="replace"), sent


def main():
    if len(sys.argv) != 3:
        print("usage: test_perf_cli.py NVMF_PERF NVMFD")
        return 1
    perf, nvmfd = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nvmfd-perf-cli.")
    tgt, port = start_nvmfd(nvmfd, "127.0.0.1", os.path.join(work, "nvmfd.log"))
    if not tgt:
        print("FAIL: nvmfd did not start")
        return 1
    trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, NQN)
    fails = []

    def check(cond, what):
        print(("PASS: " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    try:
        # 1. --verify without writes
        for pat in ("read", "randread"):
            rc, out, err = run(perf, ["-r", trid, "-w", pat, "--verify", "-t", "1"])
            check(rc == 2 and "--verify needs writes in the same run (-w rw|"
                  "randrw); nvmf-perf cannot verify data written by an earlier run" in err,
                  "verify-read -w %s: rc %d, %r" % (pat, rc, err.strip()))
        # A read is verified only when it hits a block this run wrote
        # before: a run the machine's load gave few I/Os can rightly verify
        # none. So the same run, 1 s, then 2 s, 4 s, 8 s, until one verifies
        # blocks; every run must pass the other checks.
        for secs in (1, 2, 4, 8):
            rc, out, err = run(perf, ["-r", trid, "-w", "randrw", "--verify", "--json", "-t",
                                      str(secs), "-q", "4", "-o", "8k"])
            ok = rc == 0
            if ok:
                d = json.loads(out)
                tot = d["total"]
                nlb = 8192 // d["config"]["lba_size"]
                ok = (tot["verified_blocks"] % nlb == 0 and
                      sum(q["verified_blocks"] for q in d["queues"]) == tot["verified_blocks"]
                      and d["interrupted"] is False)
                what = "-t %d: verified_blocks %d unverified_reads %d ios %d interrupted %s" % (
                    secs, tot["verified_blocks"], tot["unverified_reads"], tot["ios"],
                    d["interrupted"])
                if ok and tot["verified_blocks"] == 0:
                    print("note: " + what + ": none verified, again longer")
                    ok = False
                    continue
            else:
                what = "-t %d: rc %d %s" % (secs, rc, err.strip())
            break
        check(ok, "verify-count json: " + what)
        for secs in (1, 2, 4, 8):
            rc, out, err = run(perf, ["-r", trid, "-w", "randrw", "--verify", "-t", str(secs),
                                      "-q", "4"])
            m = re.search(r"^verify: (\d+) blocks verified", out, re.M)
            if rc == 0 and m and int(m.group(1)) == 0:
                print("note: -t %d: %s, again longer" % (secs, m.group(0)))
                continue
            break
        check(rc == 0 and m and int(m.group(1)) > 0, "verify-count text: -t %d rc %d line %s" %
              (secs, rc, m.group(0) if m else None))

        # 2. -o above MDTS
        rc, out, err = run(perf, ["-r", trid, "-w", "randread", "-o", "2m", "-t", "1", "-q", "1"])
        check(rc == 2 and "I/O size 2097152 exceeds the controller's maximum transfer size "
              "1048576 (MDTS)" in err and out == "", "mdts -o 2m: rc %d, %r" % (rc, err.strip()))
        rc, out, err = run(perf, ["-r", trid, "-w", "randread", "-o", "1m", "-t", "1", "-q", "1"])
        check(rc == 0 and "total" in out, "mdts -o 1m runs: rc %d %s" % (rc, err.strip()))

        # 4. discover: refused port hint, explicit port works
        closed = free_port()
        rc, out, err = run(perf, ["discover", "-r", "traddr:127.0.0.1 trsvcid:%d" % closed])
        check(rc == 3 and ("no discovery controller on %d (nvmfd listens on 4420 by default; "
                           "pass trsvcid:PORT)" % closed) in err,
              "discover refused: rc %d, %r" % (rc, err.strip()))
        rc, out, err = run(perf, ["discover", "-r", "traddr:127.0.0.1 trsvcid:%d" % port])
        check(rc == 0 and "Discovery Log Number of Records" in out,
              "discover trsvcid:%d: rc %d %s" % (port, rc, err.strip()))
        for opt in (["-w", "read"], ["--exec", "auto"]):
            rc, out, err = run(perf, ["discover", "-r", "traddr:127.0.0.1 trsvcid:%d" % port] + opt)
            check(rc == 2 and out == "" and
                  ("%s is for I/O runs, not discover" % opt[0]) in err,
                  "discover %s: rc %d, %r" % (" ".join(opt), rc, err.strip()))

        # 5. --affinity-* shape unbound placement only: a warning otherwise
        warn = "--affinity-scope/--affinity-strict apply to --exec unbound only; ignored"
        for opt, warned in ((["--affinity-strict"], True),
                            (["--exec", "auto", "--affinity-scope", "smt"], True),
                            (["--exec", "unbound", "--affinity-strict"], False)):
            rc, out, err = run(perf, ["-r", trid, "-t", "1", "-q", "1"] + opt)
            check(rc == 0 and (err.count(warn) == 1) == warned and err.count(warn) <= 1,
                  "affinity %s: rc %d, %r" % (" ".join(opt), rc, err.strip()[-300:]))

        # 6. signals: partial report, marked interrupted
        rc, out, err, sent = run_signal(perf, ["-r", trid, "-w", "randrw", "--verify", "--json",
                                               "-t", "50", "-q", "4"], signal.SIGINT)
        ok = sent and rc == 130 and "interrupted by SIGINT" in err
        what = "rc %d sent %s" % (rc, sent)
        if ok:
            d = json.loads(out)
            ok = d["interrupted"] is True and d["total"]["ios"] > 0 and \
                0 < d["total"]["seconds"] < 50
            what += " interrupted %s ios %d seconds %.2f" % (d["interrupted"], d["total"]["ios"],
                                                            d["total"]["seconds"])
        check(ok, "sigint json: " + what + " " + err.strip()[-200:])
        rc, out, err, sent = run_signal(perf, ["-r", trid, "-w", "randread", "-t", "50", "-q",
                                               "4"], signal.SIGTERM)
        check(sent and rc == 143 and "interrupted by SIGTERM" in err and
              re.search(r"^total\s+\d", out, re.M) is not None,
              "sigterm text: rc %d sent %s %s" % (rc, sent, err.strip()[-200:]))
        check(tgt.poll() is None, "nvmfd still running")
    finally:
        tgt.terminate()
        tgt.wait()

    # 5. IPv6 bracketed traddr
    try:
        free_port(socket.AF_INET6, "::1")
        have6 = True
    except OSError:
        have6 = False
        print("SKIP: ipv6 (cannot bind ::1)")
    if have6:
        tgt6, port6 = start_nvmfd(nvmfd, "[::1]", os.path.join(work, "nvmfd6.log"))
        if not tgt6:
            check(False, "nvmfd -l [::1]:0 did not start")
        else:
            try:
                for addr in ("[::1]", "::1"):
                    rc, out, err = run(perf, ["-r", "traddr:%s trsvcid:%d subnqn:%s" %
                                              (addr, port6, NQN), "-t", "1", "-q", "2"])
                    check(rc == 0 and "total" in out,
                          "ipv6 traddr:%s: rc %d %s" % (addr, rc, err.strip()))
            finally:
                tgt6.terminate()
                tgt6.wait()
    if fails:
        print("%d check(s) failed; nvmfd logs in %s" % (len(fails), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
