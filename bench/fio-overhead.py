#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fio-overhead.py - what fio + libnvmfd-fio.so costs against nvmf-perf on
the same target: 4 KiB random reads at QD32 on one I/O queue.

  bench/fio-overhead.py [--pairs N] [--seconds S] [--exec bound|none] [--reap-one]

Starts build/bin/nvmfd (256 MiB RAM namespace) on 127.0.0.1 port 0 and runs
N pairs (default 5) of S-second runs (default 5), alternating the order
every pair (perf-fio, fio-perf, ...) so that a drift in machine load hits
both sides alike. --exec bound (default) pins both host threads the same
way (nvmf-perf --exec bound --io-cpu rr; the engine's exec=bound io_cpu=rr:
queue / job 0 on the first CPU); --exec none leaves fio's job thread
unpinned (nvmf-perf stays bound: it has no unpinned mode). fio reaps up
to 32 completions per getevents (iodepth_batch_complete_max=32, as
nvmf-perf's poll takes all there are, and so that the engine's batch_send
applies); --reap-one keeps fio's default of one.

For every run: IOPS, and the host CPU time per I/O in microseconds (user +
system of the whole host process tree from wait4(), divided by the I/Os
done; it includes start-up: the connect, fio's option parsing and fork).
Then the medians, the fio/perf ratios of the medians and the range of the
per-pair ratios, and the load average before and after.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NQN = "nqn.2026-11.io.nvmfd:fio-bench"


def run(cmd, timeout):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        sys.exit("fio-overhead: %s failed (%d):\n%s%s" % (cmd[0], p.returncode, out, err))
    return out


def cpu_of(cmd, timeout):
    """Run @cmd; return (stdout, user+system seconds of it and its children)."""
    before = os.times()
    out = run(cmd, timeout)
    after = os.times()
    cpu = (after.children_user - before.children_user) + \
          (after.children_system - before.children_system)
    return out, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--exec", choices=["bound", "none"], default="bound")
    ap.add_argument("--reap-one", dest="reap_all", action="store_false",
                    help="leave fio's iodepth_batch_complete_max at its default of 1")
    a = ap.parse_args()
    nvmfd = os.path.join(ROOT, "build", "bin", "nvmfd")
    perf = os.path.join(ROOT, "build", "bin", "nvmf-perf")
    engine = os.path.join(ROOT, "build", "tools", "fio", "libnvmfd-fio.so")
    for f in (nvmfd, perf, engine):
        if not os.path.exists(f):
            sys.exit("fio-overhead: %s missing (scripts/build.sh)" % f)
    work = tempfile.mkdtemp(prefix="fio-overhead-")
    logpath = os.path.join(work, "nvmfd.log")
    with open(logpath, "w") as log:
        tgt = subprocess.Popen([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:256M",
                                "--allow-any-host", "--log-level", "info"],
                               stdout=log, stderr=log)
    try:
        port = 0
        for _ in range(100):
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", open(logpath).read())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.1)
        if not port:
            sys.exit("fio-overhead: nvmfd did not start:\n" + open(logpath).read())
        bound = 60 + a.seconds
        perf_cmd = [perf, "-r", "traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, NQN), "-q", "32",
                    "-o", "4096", "-w", "randread", "-t", str(a.seconds), "--exec", "bound",
                    "--io-cpu", "rr", "--json"]
        fio_cmd = ["fio", "--name=randread", "--ioengine=external:" + engine,
                   "--traddr=127.0.0.1", "--trsvcid=%d" % port, "--subnqn=" + NQN,
                   "--rw=randread", "--bs=4k", "--iodepth=32", "--time_based",
                   "--runtime=%d" % a.seconds, "--output-format=json"]
        if a.exec == "bound":
            fio_cmd += ["--exec=bound", "--io_cpu=rr"]
        if a.reap_all:
            fio_cmd += ["--iodepth_batch_complete_max=32"]

        def run_perf():
            out, cpu = cpu_of(perf_cmd, bound)
            t = json.loads(out)["total"]
            return t["iops"], cpu / t["ios"] * 1e6

        def run_fio():
            out, cpu = cpu_of(fio_cmd, bound)
            j = json.loads(out[out.index("{"):])["jobs"][0]["read"]
            return j["iops"], cpu / j["total_ios"] * 1e6

        print("perf: " + " ".join(perf_cmd))
        print("fio:  " + " ".join(fio_cmd))
        print("load before: " + " ".join(open("/proc/loadavg").read().split()[:3]))
        P, F = [], []
        for i in range(a.pairs):
            if i % 2 == 0:
                p = run_perf()
                f = run_fio()
            else:
                f = run_fio()
                p = run_perf()
            P.append(p)
            F.append(f)
            print("pair %d: nvmf-perf %6.0f IOPS %5.1f us/IO   fio %6.0f IOPS %5.1f us/IO" %
                  (i + 1, p[0], p[1], f[0], f[1]), flush=True)
        print("load after: " + " ".join(open("/proc/loadavg").read().split()[:3]))
        mp, mf = statistics.median(x[0] for x in P), statistics.median(x[0] for x in F)
        cp, cf = statistics.median(x[1] for x in P), statistics.median(x[1] for x in F)
        r = [f[0] / p[0] for p, f in zip(P, F)]
        print("median IOPS: nvmf-perf %.0f, fio %.0f; fio/perf %.3f "
              "(per pair: median %.3f, min %.3f, max %.3f)" %
              (mp, mf, mf / mp, statistics.median(r), min(r), max(r)))
        print("median host CPU per I/O: nvmf-perf %.1f us, fio %.1f us; fio/perf %.2f" %
              (cp, cf, cf / cp))
    finally:
        tgt.kill()
        tgt.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
