#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_nvmfd_real.py - defects found by running nvmfd, nvmf-perf and
nvmf-bench as a new user would (issue 13, item 7, and item 6).

  test_nvmfd_real.py NVMFD NVMF_PERF NVMF_BENCH

Checks, each a regression test of a defect seen:
  enospc        a file namespace of 8 MiB on a 1 MiB tmpfs (private mount
                namespace; skipped when mounting is not allowed): nvmfd warns
                at start that the file is sparse beyond the free space;
                nvmf-perf -w write --json exits 1, every queue's and the
                total's iops agree (the total used to be over the main
                thread's 1 s wake-up), errors > 0 and named (Capacity
                Exceeded); nvmfd logs the failed write with ENOSPC. With two
                -r, the errors of each controller are those of its queues
                and the total's are their sum (JSON and text, whose table
                has both the stdev_us and the errors column).
  exclusive     a second nvmfd exporting the same file exits 1 naming the
                path as in use; two 'readonly' exporters share a file.
  signals       SIGUSR1 writes a stats line and nvmfd keeps running; SIGHUP
                is logged and nvmfd keeps running (it used to die with exit
                129/138 leaving the control socket behind); SIGTERM exits 0
                and removes the socket.
  config-port   with -l 127.0.0.1:0 the control socket's config reports the
                bound port, not "0".
  max-io-size   --max-io-size 64M is a usage error naming the 32M bound.
  null-config   a config file holding null: "expected an object, got null".
  versions      nvmf-perf -V and nvmf-bench -V print a version, exit 0.
  bench-dry     nvmf-bench -n -c 'zzz*' exits 2 (as the real run does).
  nvmetcli-full a config with every attribute 'nvmetcli save' writes loads;
                ANA settings it cannot apply give one WARN line each;
                attr.firmware and attr.ieee_oui are kept.
Exit: 0 pass, 1 fail.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NQN = "nqn.2026-11.io.nvmfd:real"
TIMEOUT = 60


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from nvmfd_proc import control as ctl, stop, wait_log  # noqa: E402
from nvmfd_proc import start as start_log  # noqa: E402


def start(argv, logpath):
    proc, m = start_log(argv, logpath)
    return proc, int(m.group(1)) if m else 0


def main():
    if len(sys.argv) != 4:
        print("usage: test_nvmfd_real.py NVMFD NVMF_PERF NVMF_BENCH")
        return 1
    nvmfd, perf, bench = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="nvmfd-real.")
    fails = []

    def check(cond, what):
        print(("PASS: " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    base = [nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "--allow-any-host", "--log-level", "info"]

    # enospc: the mount lives in a private mount namespace of the shell
    # that execs nvmfd, so nothing is left mounted whatever happens
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=1m tmpfs '%s'" % mnt],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        print("SKIP: enospc (cannot mount a tmpfs in a private mount namespace)")
    else:
        logp = os.path.join(work, "enospc.log")
        cmd = "mount -t tmpfs -o size=1m tmpfs '%s' && exec %s" % (
            mnt, " ".join("'%s'" % a for a in base + ["-n", "file:%s/ns.img,size=8M" % mnt]))
        proc, port = start(["unshare", "-m", "--propagation", "private", "sh", "-c", cmd], logp)
        check(proc is not None, "enospc: nvmfd started on a 1 MiB tmpfs")
        if proc:
            try:
                with open(logp) as f:
                    log = f.read()
                check(re.search(r"ns\.img: namespace of 8388608 bytes is sparse .* writes to "
                                r"the other \d+ bytes fail with ENOSPC", log) is not None,
                      "enospc: sparse-file warning at start")
                trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, NQN)
                p = subprocess.run([perf, "-r", trid, "-w", "write", "-o", "64k", "-q", "4",
                                    "-P", "2", "-t", "5", "--json"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
                ok = p.returncode == 1
                what = "rc %d" % p.returncode
                if ok:
                    d = json.loads(p.stdout)
                    tot = d["total"]
                    qs = d["queues"]
                    qerr = sum(q["errors"] for q in qs)
                    # rates: total = sum of queue ios over the longest window
                    longest = max(q["seconds"] for q in qs)
                    # named as the report names queues: q1, q2
                    ok = (tot["errors"] > 0 and tot["errors"] == qerr and
                          re.match(r"queue [12]: write at LBA \d+ ", tot["error"] or "") and
                          tot["error"] and "CAP_EXCEEDED" in tot["error"].upper().replace(
                              " ", "_") and abs(tot["seconds"] - longest) < 1e-9 and
                          tot["seconds"] < 4)
                    what += " errors %d (queues %d) error %r seconds %.4f longest %.4f" % (
                        tot["errors"], qerr, tot["error"], tot["seconds"], longest)
                check(ok, "enospc: nvmf-perf json error accounting: " + what +
                      " " + p.stderr.strip()[-300:])
                p = subprocess.run([perf, "-r", trid, "-w", "write", "-o", "64k", "-q", "4",
                                    "-t", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=TIMEOUT)
                m = re.search(r"^errors: (\d+) I/Os failed; first: (.*)$", p.stdout, re.M)
                q1 = re.search(r"^q1\s+([\d.]+)\s", p.stdout, re.M)
                tl = re.search(r"^total\s+([\d.]+)\s", p.stdout, re.M)
                check(p.returncode == 1 and m is not None and int(m.group(1)) > 0 and
                      q1 is not None and tl is not None and q1.group(1) == tl.group(1),
                      "enospc: text report names the errors, q1 and total IOPS agree: %r" %
                      p.stdout[-600:])
                # several -r (two controllers of the subsystem in one
                # process): errors per queue, per controller, summed in total
                p = subprocess.run([perf, "-r", trid, "-r", trid, "-w", "write", "-o", "64k",
                                    "-q", "4", "-P", "2", "-t", "5", "--json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=TIMEOUT)
                ok = p.returncode == 1
                what = "rc %d" % p.returncode
                if ok:
                    d = json.loads(p.stdout)
                    tot, cs, qs = d["total"], d["controllers"], d["queues"]
                    cerr = [sum(q["errors"] for q in qs if q["ctrl"] == c["ctrl"]) for c in cs]
                    ok = (len(cs) == 2 and len(qs) == 4 and tot["errors"] > 0 and
                          [c["total"]["errors"] for c in cs] == cerr and
                          tot["errors"] == sum(cerr) and tot["error"] and
                          all(c["dhchap_queues"] == 0 for c in cs) and
                          abs(tot["seconds"] - max(q["seconds"] for q in qs)) < 1e-9)
                    what += " errors %d controllers %r queues %r" % (
                        tot["errors"], [c["total"]["errors"] for c in cs], cerr)
                check(ok, "enospc: two -r: errors per controller and in total: " + what +
                      " " + p.stderr.strip()[-300:])
                p = subprocess.run([perf, "-r", trid, "-r", trid, "-w", "write", "-o", "64k",
                                    "-q", "4", "-t", "5"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
                hdr = re.search(r"^queue .*\bmax_us\s+stdev_us\s+p50\b.*\bivcsw\s+errors$",
                                p.stdout, re.M)
                rows = re.findall(r"^(c1q1|c2q1|ctrl1|ctrl2|total)\s.*\s(\d+)$", p.stdout, re.M)
                m = re.search(r"^errors: (\d+) I/Os failed; first: ", p.stdout, re.M)
                tl = dict(rows)
                check(p.returncode == 1 and hdr is not None and len(rows) == 5 and m is not None
                      and int(tl["total"]) == int(m.group(1)) > 0 and
                      int(tl["total"]) == int(tl["ctrl1"]) + int(tl["ctrl2"]) and
                      int(tl["ctrl1"]) == int(tl["c1q1"]) and int(tl["ctrl2"]) == int(tl["c2q1"]),
                      "enospc: two -r text report: stdev_us and errors columns, errors of "
                      "ctrl1 + ctrl2 = total: %r" % p.stdout[-1500:])
                m = wait_log(logp, r"ns\.img: write of \d+ bytes at offset \d+ failed: No space "
                             r"left on device", None, tries=20)
                check(m is not None, "enospc: nvmfd logs the failed write")
            finally:
                check(stop(proc) == 0, "enospc: nvmfd exits 0 on SIGTERM")

    # exclusive access
    img = os.path.join(work, "shared.img")
    with open(img, "wb") as f:
        f.truncate(1 << 20)
    a, _ = start(base + ["-n", "file:" + img], os.path.join(work, "excl-a.log"))
    check(a is not None, "exclusive: first exporter started")
    if a:
        try:
            p = subprocess.run(base + ["-n", "file:" + img], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
            check(p.returncode == 1 and ("%s is in use: another process exports it" % img) in
                  p.stderr, "exclusive: second exporter refused: rc %d %r" %
                  (p.returncode, p.stderr.strip()[-300:]))
            p = subprocess.run(base + ["-n", "file:%s,readonly" % img], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
            check(p.returncode == 1, "exclusive: read-only exporter refused while a writer "
                  "holds it: rc %d" % p.returncode)
        finally:
            stop(a)
    r1, _ = start(base + ["-n", "file:%s,readonly" % img], os.path.join(work, "ro1.log"))
    r2, _ = start(base + ["-n", "file:%s,readonly" % img], os.path.join(work, "ro2.log"))
    check(r1 is not None and r2 is not None, "exclusive: two readonly exporters share a file")
    for r in (r1, r2):
        if r:
            stop(r)

    # signals and the control socket's config
    sock = os.path.join(work, "ctl.sock")
    logp = os.path.join(work, "sig.log")
    proc, port = start(base + ["-n", "ram:1M", "--control", sock], logp)
    check(proc is not None, "signals: nvmfd started")
    if proc:
        try:
            cfg = ctl(sock, {"cmd": "config"})
            svc = [p["addr"]["trsvcid"] for p in cfg["ports"]]
            check(svc == [str(port)], "config-port: config reports trsvcid %s (bound %d)" %
                  (svc, port))
            proc.send_signal(signal.SIGUSR1)
            m = wait_log(logp, r"SIGUSR1 received: statistics follow\n.*\{", proc, tries=50)
            check(m is not None and proc.poll() is None, "signals: SIGUSR1 dumps stats")
            proc.send_signal(signal.SIGHUP)
            m = wait_log(logp, r"SIGHUP received", proc, tries=50)
            check(m is not None and proc.poll() is None, "signals: SIGHUP logged, still running")
            check(ctl(sock, {"cmd": "stats"}) is not None, "signals: control socket answers")
        finally:
            rc = stop(proc)
        check(rc == 0 and not os.path.exists(sock),
              "signals: SIGTERM exits 0 (rc %d), socket removed" % rc)

    # usage errors
    p = subprocess.run([nvmfd, "--max-io-size", "64M"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    check(p.returncode == 2 and "--max-io-size '64M': out of range 4096..33554432" in p.stderr,
          "max-io-size 64M: rc %d %r" % (p.returncode, p.stderr.strip()))
    nullcfg = os.path.join(work, "null.json")
    with open(nullcfg, "w") as f:
        f.write("null\n")
    p = subprocess.run([nvmfd, "-c", nullcfg], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=TIMEOUT)
    check(p.returncode == 2 and "expected an object, got null" in p.stderr,
          "null-config: rc %d %r" % (p.returncode, p.stderr.strip()))
    for exe, name in ((perf, "nvmf-perf"), (bench, "nvmf-bench")):
        for flag in ("-V", "--version"):
            p = subprocess.run([exe, flag], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=TIMEOUT)
            check(p.returncode == 0 and re.match(r"^%s \S+\n$" % name, p.stdout) is not None,
                  "versions: %s %s: rc %d %r" % (name, flag, p.returncode, p.stdout))
    p = subprocess.run([bench, "-n", "-c", "zzz*"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    check(p.returncode == 2 and "no cell to run" in p.stderr,
          "bench-dry: -n -c 'zzz*' rc %d %r" % (p.returncode, p.stderr.strip()))

    # a complete config as 'nvmetcli save' writes it from a Linux 6.x
    # configfs: every attribute loads; the two that nvmfd cannot apply
    # (ANA group 2 inaccessible, a namespace in group 2) give one WARN each
    full = {
        "hosts": [{"nqn": "nqn.2014-08.org.nvmexpress:uuid:h1"}],
        "ports": [{
            "addr": {"adrfam": "ipv4", "traddr": "127.0.0.1", "treq": "not specified",
                     "trsvcid": "0", "trtype": "tcp", "tsas": "none"},
            "ana_groups": [{"ana": {"state": "optimized"}, "grpid": 1},
                           {"ana": {"state": "inaccessible"}, "grpid": 2}],
            "param": {"inline_data_size": "16384", "max_queue_size": "128", "pi_enable": "0"},
            "portid": 1,
            "referrals": [{"addr": {"adrfam": "ipv4", "traddr": "127.0.0.2",
                                    "treq": "not specified", "trsvcid": "4420",
                                    "trtype": "tcp", "tsas": "none"},
                           "enable": 1, "name": "ref1", "portid": 2}],
            "subsystems": [NQN]}],
        "subsystems": [{
            "allowed_hosts": ["nqn.2014-08.org.nvmexpress:uuid:h1"],
            "attr": {"allow_any_host": "0", "cntlid_max": "65519", "cntlid_min": "1",
                     "firmware": "6.1.0", "ieee_oui": "0x001b21", "model": "Linux",
                     "pi_enable": "0", "qid_max": "128", "serial": "a1b2c3d4e5f6",
                     "version": "1.3"},
            "namespaces": [{"ana_grpid": 2,
                            "device": {"nguid": "00000000-0000-0000-0000-000000000000",
                                       "path": img,
                                       "uuid": "d592cdf3-5d1c-44e0-8412-3fcf7d99df27"},
                            "enable": 1, "nsid": 1}],
            "nqn": NQN}]}
    fullp = os.path.join(work, "nvmetcli-full.json")
    with open(fullp, "w") as f:
        json.dump(full, f, indent=2)
    p = subprocess.run([nvmfd, "-c", fullp, "--print-config"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    warns = [l for l in p.stderr.splitlines() if "WARN" in l]
    ok = p.returncode == 0 and len(warns) == 2 and \
        "ports[0].ana_groups[1]: ANA is not supported: group 2 state 'inaccessible'" in \
        p.stderr and "namespaces[0].ana_grpid: ANA is not supported: group 2" in p.stderr
    if ok:
        attr = json.loads(p.stdout)["subsystems"][0]["attr"]
        ok = attr.get("firmware") == "6.1.0" and attr.get("ieee_oui") == "0x001b21"
    check(ok, "nvmetcli-full: loads, 2 WARN lines, firmware/ieee_oui kept: rc %d %r" %
          (p.returncode, p.stderr.strip()[-400:]))

    if fails:
        print("%d check(s) failed; logs in %s" % (len(fails), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
