#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_perf_auto.py - nvmf-perf --exec auto against a spawned nvmfd.

  test_perf_auto.py NVMF_PERF NVMFD

  auto-verify  --exec auto -P 2 -w randrw --verify --json: exit 0, blocks
               verified, no error; config.exec "auto" with the knobs'
               defaults; every queue has exec.auto (mode bound/moved/
               unbound, counters, time in the modes at most the run) and
               allowed_cpus matching the mode (bound = at home: every
               --cpus CPU by default, home_cpus); the text report
               has an "auto:" line per queue. The same checks on a run
               without --exec (auto-default: the default mode).
  auto-home    --auto-home bound: home_cpus is the io_cpu, a queue at home
               is pinned there; --auto-home bad: exit 2; config.auto.home.
  auto-knobs   --auto-bound: every queue ends bound on its io_cpu with no
               move; --auto-freeze: no move, no poll change;
               --auto-no-poll: no poll change; the knobs are echoed in
               config.auto. --auto-* with --exec bound or unbound, or
               with --threads and no --exec (bound is the default there),
               and --auto-starve-ms 0: exit 2. Without --exec a run is
               auto (config.exec "auto": the default since session 30).
  auto-fixed   --exec auto --idle-poll-us 50 and --busy-poll: the given
               polling is kept (no poll change by the controller).
  auto-hog     a real hog: a SCHED_FIFO busy loop pinned to the
               io_cpu of queue 2 (nvmfd on another CPU), started just
               before nvmf-perf and stopped when it exits: that queue
               thread gets no CPU there, so the monitor must see a
               starvation and move it, and its I/O keeps flowing (exit
               0, verified). The hog is bounded (the kernel's RT
               throttling leaves 5 % to others, and it ends after 8 s
               at most; until session 30 it ran a fixed 2 s, which a
               slow start under ThreadSanitizer could outlast before the
               queues did I/O); with --auto-home bound (pinned there, so the
               monitor must act); then with the default unbound home:
               exit 0 and every queue's I/O verified. Skipped when SCHED_FIFO
               is not permitted, with fewer than 2 CPUs, or with
               NVMFD_NO_RT_HOG=1.
Exit: 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TIMEOUT = 90
HOG_MAX_S = 8.0  # the auto-hog cases' hog ends then if nobody stops it first
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_perf_cli import NQN, run, start_nvmfd  # noqa: E402


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpulist(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def check_auto_queues(d, fails, name, run_s):
    cpus = cpulist(d["config"]["cpus"])
    for q in d["queues"]:
        e = q["exec"]
        a = e.get("auto")
        if a is None:
            fails.append("%s: q%d has no exec.auto" % (name, q["qid"]))
            continue
        for k in ("mode", "cpu", "poll_us", "moves", "poll_changes", "starvations",
                  "last_reason", "time_ms", "poll_time_ms", "hold_ms", "poll_hold_ms",
                  "max_wait_ms", "move_errors", "home_cpus", "poll_blips", "poll_cause"):
            if k not in a:
                fails.append("%s: q%d exec.auto.%s missing" % (name, q["qid"], k))
        if a["mode"] not in ("bound", "moved", "unbound"):
            fails.append("%s: q%d mode %r" % (name, q["qid"], a["mode"]))
        tsum = sum(a["time_ms"].values())
        # the monitor samples from the start of the run to its end (how
        # many ticks it got is the machine's business: no lower bound)
        if tsum > run_s * 1000 + 2000:
            fails.append("%s: q%d time in modes %d ms for a %d s run" % (name, q["qid"], tsum, run_s))
        allowed = cpulist(e["allowed_cpus"])
        home = cpulist(a.get("home_cpus", ""))
        want = {e["io_cpu"]} if d["config"]["auto"]["home"] == "bound" else cpus
        if home != want:
            fails.append("%s: q%d home %s, expected %s" % (name, q["qid"], a.get("home_cpus"),
                                                           sorted(want)))
        if a["mode"] == "bound" and allowed != home:
            fails.append("%s: q%d at home %s but allowed %s" % (name, q["qid"], a.get("home_cpus"),
                                                               e["allowed_cpus"]))
        if a["mode"] == "moved" and (len(allowed) != 1 or a["cpu"] not in allowed):
            fails.append("%s: q%d moved to %d but allowed %s" % (name, q["qid"], a["cpu"],
                                                                 e["allowed_cpus"]))
        if a["mode"] == "unbound" and allowed != cpus:
            fails.append("%s: q%d unbound but allowed %s" % (name, q["qid"], e["allowed_cpus"]))
        if a["move_errors"]:
            fails.append("%s: q%d move errors %d" % (name, q["qid"], a["move_errors"]))


def verify_run(perf, trid, name, fails, extra, seconds=2, queues=2, exec_args=("--exec", "auto")):
    rc, out, err = run(perf, ["-r", trid, "-t", str(seconds), "-P", str(queues), "-q", "4",
                              "-w", "randrw", "--verify", "--json"] + list(exec_args) + extra)
    if rc != 0:
        fails.append("%s: exit %d: %s" % (name, rc, err.strip()[-400:]))
        return None
    d = json.loads(out)
    if d["total"]["verified_blocks"] <= 0 or d["total"]["errors"]:
        fails.append("%s: verified %d errors %d" % (name, d["total"]["verified_blocks"],
                                                    d["total"]["errors"]))
    if d["config"]["exec"] != "auto":
        fails.append("%s: config.exec %s" % (name, d["config"]["exec"]))
    check_auto_queues(d, fails, name, seconds)
    return d


def hog_cmd(cpu, secs):
    """A python SCHED_FIFO busy loop pinned to @cpu for @secs; exits 77 if
    SCHED_FIFO is not permitted (before it spins)."""
    code = ("import os, sys, time\n"
            "os.sched_setaffinity(0, {%d})\n"
            "try:\n"
            "    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))\n"
            "except (PermissionError, OSError):\n"
            "    sys.exit(77)\n"
            "end = time.monotonic() + %f\n"
            "while time.monotonic() < end:\n"
            "    pass\n" % (cpu, secs))
    return [sys.executable, "-c", code]


def main():
    if len(sys.argv) != 3:
        print("usage: test_perf_auto.py NVMF_PERF NVMFD")
        return 1
    perf, nvmfd = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="nvmfd-perf-auto.")
    cpus = sorted(os.sched_getaffinity(0))
    # nvmfd on the first CPU only, so that a hog on another one starves
    # the host's queue thread and not the target's worker
    tgt, port = start_nvmfd(nvmfd, "127.0.0.1", os.path.join(work, "nvmfd.log"),
                            ["--cpus", str(cpus[0])] if len(cpus) > 1 else [])
    if not tgt:
        print("FAIL: nvmfd did not start")
        return 1
    trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, NQN)
    fails = []
    try:
        # auto-verify
        d = verify_run(perf, trid, "auto-verify", fails, [])
        # no --exec: auto is the default
        verify_run(perf, trid, "auto-default", fails, [], exec_args=[])
        if d:
            k = d["config"].get("auto", {})
            if k != {"starve_ms": 50, "bound": False, "no_poll": False, "freeze": False,
                     "home": "unbound", "tick_ms": 100}:
                fails.append("auto-verify: config.auto %r" % k)

        # auto-home
        d = verify_run(perf, trid, "auto-home", fails, ["--auto-home", "bound", "--auto-bound"])
        if d:
            if d["config"]["auto"]["home"] != "bound":
                fails.append("auto-home: config.auto %r" % d["config"]["auto"])
            for q in d["queues"]:
                e = q["exec"]
                if cpulist(e["allowed_cpus"]) != {e["io_cpu"]}:
                    fails.append("auto-home: q%d allowed %s, io_cpu %d" % (q["qid"],
                                                                          e["allowed_cpus"],
                                                                          e["io_cpu"]))
        rc, out, err = run(perf, ["-r", trid, "-t", "1", "--exec", "auto", "--auto-home", "pinned"])
        if rc != 2 or "--auto-home" not in err:
            fails.append("auto-home: bad value exited %d: %s" % (rc, err.strip()[-200:]))
        rc, out, err = run(perf, ["-r", trid, "-t", "1", "-P", "2", "--exec", "auto"])
        if rc != 0 or len(re.findall(r"^q\d+ +auto: mode (bound|moved|unbound),", out, re.M)) != 2:
            fails.append("auto-verify: text report (exit %d): %s" % (rc, out[-600:]))

        # auto-knobs
        d = verify_run(perf, trid, "auto-bound", fails, ["--auto-bound"])
        if d:
            for q in d["queues"]:
                a = q["exec"]["auto"]
                if a["mode"] != "bound" or a["moves"]:
                    fails.append("auto-bound: q%d mode %s moves %d" % (q["qid"], a["mode"],
                                                                       a["moves"]))
            if not d["config"]["auto"]["bound"]:
                fails.append("auto-bound: config.auto.bound false")
        d = verify_run(perf, trid, "auto-freeze", fails, ["--auto-freeze"])
        if d:
            for q in d["queues"]:
                a = q["exec"]["auto"]
                if a["moves"] or a["poll_changes"] or a["mode"] != "bound":
                    fails.append("auto-freeze: q%d changed %r" % (q["qid"], a))
        d = verify_run(perf, trid, "auto-no-poll", fails,
                       ["--auto-no-poll", "--auto-starve-ms", "200", "-q", "1"])
        if d:
            if d["config"]["auto"]["starve_ms"] != 200 or not d["config"]["auto"]["no_poll"]:
                fails.append("auto-no-poll: config.auto %r" % d["config"]["auto"])
            for q in d["queues"]:
                if q["exec"]["auto"]["poll_changes"] or q["exec"]["auto"]["poll_us"]:
                    fails.append("auto-no-poll: q%d polled" % q["qid"])
        # without --exec the mode is auto (the knobs apply), but bound
        # with --threads (they are refused)
        for args in (["--exec", "bound", "--auto-bound"], ["--threads", "1", "--auto-home", "bound"],
                     ["--exec", "unbound", "--auto-no-poll"],
                     ["--exec", "auto", "--auto-starve-ms", "0"],
                     ["--exec", "bound", "--auto-freeze"]):
            rc, out, err = run(perf, ["-r", trid, "-t", "1"] + args)
            if rc != 2:
                fails.append("auto-usage: %s exited %d" % (args, rc))

        # auto-fixed
        for extra in (["--idle-poll-us", "50"], ["--busy-poll"]):
            d = verify_run(perf, trid, "auto-fixed %s" % extra[0], fails, extra, seconds=1)
            if d:
                for q in d["queues"]:
                    if q["exec"]["auto"]["poll_changes"]:
                        fails.append("auto-fixed %s: q%d poll changed" % (extra[0], q["qid"]))

        # auto-hog
        if len(cpus) < 2:
            print("SKIP auto-hog: fewer than 2 CPUs")
        elif os.environ.get("NVMFD_NO_RT_HOG") == "1":
            print("SKIP auto-hog: NVMFD_NO_RT_HOG=1")
        else:
            # -P 2 rr: queue 2's io_cpu is the second CPU of the list
            victim = cpus[1]
            # the hog first: queue 2's thread pins itself to a CPU that
            # does not run it, so it makes no pass from its start (before
            # any contention rule's 1 s hold could have moved it)
            # it spins until nvmf-perf is done (stopped then; 8 s at most):
            # a hog of fixed length could end before a slow start (under
            # ThreadSanitizer, on a loaded machine) reached its I/O
            h = subprocess.Popen(hog_cmd(victim, HOG_MAX_S))
            time.sleep(0.3)
            if h.poll() == 77:
                h.wait()
                print("SKIP auto-hog: SCHED_FIFO not permitted")
                return report(fails)
            # --auto-home bound: the thread is pinned to the hogged CPU,
            # so only the monitor can rescue it (with the default unbound
            # home the scheduler may move it first: checked below)
            p = subprocess.Popen([perf, "-r", trid, "-t", "3", "-P", "2", "-q", "4",
                                  "-w", "randrw", "--verify", "--json", "--exec", "auto",
                                  "--auto-home", "bound"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, err = p.communicate(timeout=TIMEOUT)
            stop(h)  # the hog
            if h.returncode == 77:
                print("SKIP auto-hog: SCHED_FIFO not permitted")
            elif p.returncode != 0:
                fails.append("auto-hog: exit %d: %s" % (p.returncode, err.strip()[-400:]))
            else:
                d = json.loads(out)
                q2 = d["queues"][1]
                a = q2["exec"]["auto"]
                print("auto-hog: q2 io_cpu %d: %r" % (q2["exec"]["io_cpu"], a))
                if q2["exec"]["io_cpu"] != victim:
                    fails.append("auto-hog: q2 io_cpu %d, hog on %d" % (q2["exec"]["io_cpu"],
                                                                      victim))
                if a["starvations"] < 1 or a["moves"] < 1:
                    fails.append("auto-hog: q2 not rescued: %r" % a)
                if a["time_ms"]["moved"] + a["time_ms"]["unbound"] <= 0:
                    fails.append("auto-hog: q2 never away from io_cpu")
                if q2["ios"] <= 0 or d["total"]["errors"] or d["total"]["verified_blocks"] <= 0:
                    fails.append("auto-hog: I/O ios %d errors %d verified %d" % (
                        q2["ios"], d["total"]["errors"], d["total"]["verified_blocks"]))
                if "starved" not in err:
                    fails.append("auto-hog: no log line naming the starvation: %s" % err[-400:])
            # the default unbound home under the same hog: rescued by the
            # scheduler or by the monitor, the I/O of every queue verifies
            h = subprocess.Popen(hog_cmd(victim, HOG_MAX_S))
            time.sleep(0.3)
            rc, out, err = run(perf, ["-r", trid, "-t", "3", "-P", "2", "-q", "4", "-w",
                                      "randrw", "--verify", "--json", "--exec", "auto"])
            stop(h)  # the hog
            if h.returncode != 77:
                if rc != 0:
                    fails.append("auto-hog-home: exit %d: %s" % (rc, err.strip()[-400:]))
                else:
                    d = json.loads(out)
                    q2 = d["queues"][1]
                    print("auto-hog-home: q2 %r" % q2["exec"]["auto"])
                    if q2["ios"] <= 0 or d["total"]["errors"] or d["total"]["verified_blocks"] <= 0:
                        fails.append("auto-hog-home: I/O ios %d errors %d verified %d" % (
                            q2["ios"], d["total"]["errors"], d["total"]["verified_blocks"]))
    finally:
        stop(tgt)
    return report(fails)


def report(fails):
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print("PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
