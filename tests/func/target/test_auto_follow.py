#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_auto_follow.py - --exec auto's incoming-CPU rule (doc/execution-model.md
§8): a queue whose packets arrive on another CPU of the target's runtime
moves its home there.

  test_auto_follow.py NVMFD NVMF_PERF

nvmfd (--exec auto, every CPU, 127.0.0.1 port 0, ram:16M) and nvmf-perf
-P 2 -q 1 with its queue threads pinned (bound, the first two CPUs): on
loopback a segment is processed on the sender's CPU, so each I/O queue's
SO_INCOMING_CPU is its host thread's CPU. The target places queues round
robin from the admin queue on (admin on the first CPU, I/O queue 1 on the
second, I/O queue 2 on the first), the host from I/O queue 1 on (queue 1
on the first CPU), so each I/O queue starts on the other CPU than its
host thread.

 follow     while the run goes on, every I/O queue's stats show
            exec.home_cpu = its host thread's CPU (from nvmf-perf's
            --json), rehomes >= 1, local_peer true, mode bound at the
            end (beside its local peer contention does not move it; only
            a starvation may), and the log a "home cpu A -> B" line; the
            run (-w randrw --verify) exits 0 with no error.
 no-follow  --auto-no-follow: no queue is re-homed (rehomes 0, home_cpu
            = io_cpu) over the same run.

Stats come from the control socket. Waits are bounded (the rule needs 3
housekeeping ticks of 100 ms; the run lasts 8 s); nothing asserts
on time. Skipped (77) with fewer than 2 CPUs.
Exit: 0 pass, 1 fail, 77 skip.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from nvmfd_proc import control, start, stop  # noqa: E402

NQN = "nqn.2026-12.io.nvmfd:auto-follow"
RUN_S = 8


def io_queues(o, out):
    """Every I/O queue object (qid >= 1, with an exec section) in @o."""
    if isinstance(o, dict):
        if o.get("qid", 0) >= 1 and isinstance(o.get("exec"), dict) and "io_cpu" in o:
            out[o["qid"]] = o
        for v in o.values():
            io_queues(v, out)
    elif isinstance(o, list):
        for v in o:
            io_queues(v, out)
    return out


def run_case(nvmfd, perf, tmp, name, extra, fails):
    """One nvmfd and one nvmf-perf run; return {qid: last stats}, the host
    thread CPU per qid and the nvmfd log text."""
    ctl = os.path.join(tmp, name + ".sock")
    log = os.path.join(tmp, name + ".log")
    proc, m = start([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:16M",
                     "--allow-any-host", "--exec", "auto", "--control", ctl] + extra, log)
    if not proc:
        fails.append("%s: nvmfd did not start (%s)" % (name, log))
        return {}, {}, ""
    seen = {}
    host = {}
    try:
        trid = "trtype:TCP traddr:127.0.0.1 trsvcid:%s subnqn:%s" % (m.group(1), NQN)
        p = subprocess.Popen([perf, "-r", trid, "-P", "2", "-q", "1", "-t", str(RUN_S),
                              "-w", "randrw", "--verify", "--json", "--exec", "bound",
                              "--cpus", "0,1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + RUN_S + 60
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.25)
            try:
                qs = io_queues(control(ctl, {"cmd": "stats"}, timeout=5), {})
            except (OSError, ValueError):
                continue
            seen.update(qs)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        if p.returncode != 0:
            fails.append("%s: nvmf-perf exit %d: %s" % (name, p.returncode, err.strip()[-400:]))
        else:
            try:
                d = json.loads(out)
                for q in d["queues"]:
                    host[q["qid"]] = q["exec"]["io_cpu"]
                    if q.get("errors"):
                        fails.append("%s: host q%d errors %r" % (name, q["qid"], q["errors"]))
            except (ValueError, KeyError) as e:
                fails.append("%s: nvmf-perf --json unreadable: %s" % (name, e))
    finally:
        rc = stop(proc)
        if rc != 0:
            fails.append("%s: nvmfd exit %d" % (name, rc))
    with open(log) as f:
        text = f.read()
    return seen, host, text


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    nvmfd, perf = sys.argv[1], sys.argv[2]
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        print("SKIP: needs CPUs 0 and 1")
        return 77
    fails = []
    with tempfile.TemporaryDirectory(prefix="nvmfd-follow-") as tmp:
        seen, host, log = run_case(nvmfd, perf, tmp, "follow", [], fails)
        if len(seen) != 2:
            fails.append("follow: saw %d I/O queues in the stats, want 2" % len(seen))
        for qid, q in sorted(seen.items()):
            e = q["exec"]
            want = host.get(qid)
            print("follow q%d: io_cpu %d home_cpu %s cpu %s rehomes %s mode %s reason %s; "
                  "host cpu %s" % (qid, q["io_cpu"], e.get("home_cpu"), e.get("cpu"),
                                   e.get("rehomes"), e.get("mode"), e.get("last_reason"), want))
            if want is None:
                continue
            if q["io_cpu"] == want:
                fails.append("follow q%d: started on the host's CPU %d (the round robin "
                             "this test relies on changed?)" % (qid, want))
            if e.get("rehomes", 0) < 1 or e.get("home_cpu") != want:
                fails.append("follow q%d: home_cpu %s rehomes %s, want home %d (where its "
                             "packets arrive)" % (qid, e.get("home_cpu"), e.get("rehomes"), want))
            if e.get("local_peer") is not True:
                fails.append("follow q%d: local_peer %r, want true (a loopback host)" %
                             (qid, e.get("local_peer")))
            # beside its local peer, contention does not move it (a
            # starvation of a loaded machine may)
            if e.get("mode") != "bound" and not e.get("starvations"):
                fails.append("follow q%d: mode %s (reason %s) beside its local peer" %
                             (qid, e.get("mode"), e.get("last_reason")))
        moves = re.findall(r"home cpu (\d+) -> (\d+): its packets arrive there", log)
        if len(moves) < 2:
            fails.append("follow: %d 'home cpu' log lines, want >= 2" % len(moves))

        seen, host, log = run_case(nvmfd, perf, tmp, "no-follow", ["--auto-no-follow"], fails)
        if len(seen) != 2:
            fails.append("no-follow: saw %d I/O queues in the stats, want 2" % len(seen))
        for qid, q in sorted(seen.items()):
            e = q["exec"]
            if e.get("rehomes") != 0 or e.get("home_cpu") != q["io_cpu"]:
                fails.append("no-follow q%d: rehomes %s home_cpu %s io_cpu %d" %
                             (qid, e.get("rehomes"), e.get("home_cpu"), q["io_cpu"]))
        if "its packets arrive there" in log:
            fails.append("no-follow: a 'home cpu' line in the log")
    for f in fails:
        print("FAIL:", f)
    print("PASS" if not fails else "%d failure(s)" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
