#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_perf_rate.py - nvmf-perf --rate (open loop) and the latency
standard deviation, against a spawned nvmfd.

  test_perf_rate.py NVMF_PERF NVMFD

  rate-usage   --rate 0, --rate x, --rate 100000001: exit 2 naming --rate.
  rate-open    --rate 200 -t 2 -P 2 --json: exit 0, config.rate_iops 200,
               ios at most the 400 arrivals the schedule has (a closed
               loop at -q 4 would not stop there), queued_arrivals and
               max_send_lag_us reported, latency_us.stdev >= 0 per queue
               and in total.
  rate-stall   the coordinated-omission check: an open-loop run at 500
               IOPS while nvmfd is stopped (SIGSTOP) for 0.6 s. Arrivals
               due during the stall are timed from their intended send
               time, so at least a tenth of all I/Os show >= 100 ms: p90
               >= 100 ms, and some arrivals found every -q slot busy.
  stdev-text   the text report has a stdev_us column.
  multi-r      two -r (two controllers of the same subsystem) -P 2 --json:
               config.controllers 2, 4 queues tagged ctrl 1/2, per-
               controller totals that add up to the total, the total's
               min/max the extremes of the controllers' and its p50
               between theirs (a merged histogram, not an average); the
               text report has ctrl1/ctrl2 lines; --rate 200 over both
               stays within the 400 arrivals of 2 s.
  multi-usage  discover with two -r, a bad second -r: exit 2.
Exit: 0 pass, 1 fail.
"""
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_perf_cli import NQN, TIMEOUT, run, start_nvmfd  # noqa: E402


def run_stall(perf, args, tgt, stall_s):
    """Run with stderr on a pty; after the first progress line stop nvmfd
    for @stall_s seconds. Return (rc, stdout, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([perf] + args, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + TIMEOUT
    stalled = False
    while time.monotonic() < deadline and proc.poll() is None:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        if not stalled and b"IOPS" in err:
            tgt.send_signal(signal.SIGSTOP)
            time.sleep(stall_s)
            tgt.send_signal(signal.SIGCONT)
            stalled = True
    out = proc.communicate(timeout=TIMEOUT)[0]
    os.close(master)
    return proc.returncode, out, err.decode(errors="replace"), stalled


def main():
    if len(sys.argv) != 3:
        print("usage: test_perf_rate.py NVMF_PERF NVMFD")
        return 1
    perf, nvmfd = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nvmfd-perf-rate.")
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
        for bad in ("0", "x", "100000001", "-5"):
            rc, out, err = run(perf, ["-r", trid, "--rate", bad, "-t", "1"])
            check(rc == 2 and "--rate: 1 .. 100000000 I/Os per second" in err,
                  "rate-usage --rate %s: rc %d %r" % (bad, rc, err.strip()))

        rc, out, err = run(perf, ["-r", trid, "--rate", "200", "-t", "2", "-P", "2", "-q", "4",
                                  "--json"])
        ok = rc == 0
        what = "rc %d %s" % (rc, err.strip()[-200:])
        if ok:
            d = json.loads(out)
            tot = d["total"]
            ok = (d["config"]["rate_iops"] == 200 and 0 < tot["ios"] <= 400 and
                  tot["queued_arrivals"] >= 0 and tot["max_send_lag_us"] >= 0 and
                  tot["latency_us"]["stdev"] >= 0 and
                  all(q["latency_us"]["stdev"] >= 0 for q in d["queues"]) and
                  sum(q["ios"] for q in d["queues"]) == tot["ios"])
            what = "ios %d (schedule: 400), stdev %.1f us, queued %d" % (
                tot["ios"], tot["latency_us"]["stdev"], tot["queued_arrivals"])
        check(ok, "rate-open: " + what)

        rc, out, err, stalled = run_stall(perf, ["-r", trid, "--rate", "500", "-t", "4", "-q", "4",
                                                 "--json"], tgt, 0.6)
        ok = rc == 0 and stalled
        what = "rc %d stalled %s %s" % (rc, stalled, err.strip()[-200:])
        if ok:
            tot = json.loads(out)["total"]
            ok = tot["latency_us"]["p90"] >= 100000 and tot["queued_arrivals"] > 0
            what = "p50 %.0f us, p90 %.0f us, max %.0f us, queued arrivals %d" % (
                tot["latency_us"]["p50"], tot["latency_us"]["p90"], tot["latency_us"]["max"],
                tot["queued_arrivals"])
        check(ok, "rate-stall (0.6 s SIGSTOP of nvmfd): " + what)

        rc, out, err = run(perf, ["-r", trid, "-t", "1", "-q", "2"])
        check(rc == 0 and re.search(r"^queue .* max_us\s+stdev_us\s+p50", out, re.M) is not None,
              "stdev-text: rc %d" % rc)
        rc, out, err = run(perf, ["-r", trid, "-r", trid, "-P", "2", "-q", "4", "-t", "1",
                                  "--json"])
        ok = rc == 0
        what = "rc %d %s" % (rc, err.strip()[-200:])
        if ok:
            d = json.loads(out)
            tot, cs = d["total"], d["controllers"]
            ok = (d["config"]["controllers"] == 2 and len(d["queues"]) == 4 and
                  sorted(q["ctrl"] for q in d["queues"]) == [1, 1, 2, 2] and len(cs) == 2 and
                  sum(c["total"]["ios"] for c in cs) == tot["ios"] > 0 and
                  all(c["total"]["ios"] == sum(q["ios"] for q in d["queues"] if q["ctrl"] == c["ctrl"])
                      for c in cs) and
                  tot["latency_us"]["max"] == max(c["total"]["latency_us"]["max"] for c in cs) and
                  tot["latency_us"]["min"] == min(c["total"]["latency_us"]["min"] for c in cs) and
                  min(c["total"]["latency_us"]["p50"] for c in cs) <= tot["latency_us"]["p50"] <=
                  max(c["total"]["latency_us"]["p50"] for c in cs))
            what = "ios %s = %d, p50 %s -> %.1f" % (
                [c["total"]["ios"] for c in cs], tot["ios"],
                [c["total"]["latency_us"]["p50"] for c in cs], tot["latency_us"]["p50"])
        check(ok, "multi-r json: " + what)
        rc, out, err = run(perf, ["-r", trid, "-r", trid, "-q", "2", "-t", "1"])
        check(rc == 0 and re.search(r"^ctrl1\s+\d", out, re.M) and re.search(r"^ctrl2\s+\d", out, re.M)
              and re.search(r"^c2q1\s+\d", out, re.M) and re.search(r"^total\s+\d", out, re.M),
              "multi-r text: rc %d" % rc)
        rc, out, err = run(perf, ["-r", trid, "-r", trid, "--rate", "200", "-t", "2", "-q", "4",
                                  "--json"])
        ok = rc == 0 and 0 < json.loads(out)["total"]["ios"] <= 400
        check(ok, "multi-r --rate 200: rc %d ios %s" % (rc, json.loads(out)["total"]["ios"] if rc == 0 else "-"))
        rc, out, err = run(perf, ["discover", "-r", trid, "-r", trid])
        check(rc == 2 and "discover takes one -r" in err, "multi-usage discover: rc %d %r" % (rc, err.strip()))
        rc, out, err = run(perf, ["-r", trid, "-r", "traddr:127.0.0.1 trsvcid:%d" % port, "-t", "1"])
        check(rc == 2 and "-r #2: subnqn of an NVM subsystem is required" in err,
              "multi-usage second -r: rc %d %r" % (rc, err.strip()))
        check(tgt.poll() is None, "nvmfd still running")
    finally:
        tgt.send_signal(signal.SIGCONT)
        tgt.terminate()
        tgt.wait()
    if fails:
        print("%d check(s) failed; nvmfd log in %s" % (len(fails), work))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
