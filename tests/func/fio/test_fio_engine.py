#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_fio_engine.py - fio with libnvmfd-fio.so against a spawned nvmfd.

  test_fio_engine.py ENGINE NVMFD [CASE...]

Starts nvmfd (8 MiB RAM namespace, 512-byte LBAs) on 127.0.0.1 port 0 (the
port is read from its log) and runs fio (from PATH) with
ioengine=external:ENGINE:

  enghelp     fio --enghelp=ENGINE lists every engine option.
  crc32c      randwrite 8 MiB, verify=crc32c verify_fatal=1, reaping up to
              16 I/Os at once (so batch_send corks the socket): exit 0,
              all 8 MiB written and read back.
  md5         randrw bsrange=4k-64k over 2 I/O queues, verify=md5
              verify_fatal=1, fsync=4: exit 0, flushes counted.
  trim        write 0xa5 everywhere; randtrim the first 4 MiB (DSM); read
              the first half back expecting zeroes (the RAM backend
              deallocates to zeroes): exit 0; the second half expecting
              zeroes must fail verification (the check is not vacuous).
  beyond-end  ns_size=16M on the 8 MiB namespace, reads from 7 MiB on: fio
              exits non-zero with an I/O error and the engine's error
              detail LBA_RANGE (the target's LBA Out of Range).
  refuse      options that cannot be honoured stop the job before I/O:
              exec=foo, io_cpu without exec, affinity_scope with
              exec=bound, busy_poll with idle_poll_us, bs not a multiple
              of the LBA size, an inactive ns=.
  exec        numjobs=2 with exec=bound io_cpu=rr, exec=unbound
              io_cpu=least-loaded, idle_poll_us, busy_poll, rx/tx budgets,
              hdgst/ddgst: every run exits 0 with the I/O done.
  affinity    thread=1 numjobs=2 runs, read from /proc while they do I/O:
              exec=bound io_cpu=rr cpus=0-1 puts one job thread on CPU 0
              and one on CPU 1 (Cpus_allowed_list "0" and "1"; with one
              CPU, both on "0"); exec=unbound affinity_scope=cpu
              affinity_strict=1 cpus=L gives each job thread a one-CPU
              set; exec=unbound affinity_scope=cpu (not strict): after
              every fio thread is moved onto the second CPU from outside,
              the job thread moves back into its unit and is widened to
              cpus= again ("0-1"; regression: it stayed on its unit); and
              exec=none leaves the threads alone.
  leaks       (ASan build only, else a no-op) LeakSanitizer on in fio:
              no leak stack may contain an engine frame, for jobs forked
              after setup() ran in fio's main process, for thread=1 jobs
              and for create_serialize=0 (fio's own leaks are not ours).
              Regression: setup() used to leave a calloc'd job state in the
              main process, which never calls cleanup() for forked jobs.
  examples    every examples/fio/*.fio job file, with runtime=1,
              ramp_time=0 and size=4m, runs to exit 0 with err=0 for every
              job (NVMFD_FIO_ENGINE, TRADDR, TRSVCID, SUBNQN set).
  killed      a time_based 60 s randrw job; once fio reports IOPS the
              target is killed (SIGKILL): fio must exit non-zero well
              before the 60 s (bounded wait), logging "queue 1 failed:
              REASON" once, and every failed I/O's detail has a reason.

Every fio run is bounded (TIMEOUT); no case depends on timing. When ENGINE
is built with ASan (an ASan build of the tree), the sanitizer runtimes are
preloaded into fio. Exit: 0 pass, 1 fail, 77 skip (no fio).
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NQN = "nqn.2026-11.io.nvmfd:fio-test"
TIMEOUT = 300  # bound of every fio run (a hang, not a speed), s
failures = []


def fail(case, msg):
    failures.append("%s: %s" % (case, msg))
    print("FAIL %s: %s" % (case, msg), flush=True)


def fio_env(engine):
    """Preload the sanitizer runtimes an ASan/UBSan engine links with."""
    env = dict(os.environ)
    out = subprocess.run(["ldd", engine], stdout=subprocess.PIPE, text=True).stdout
    pre = [m.group(1) for m in re.finditer(r"(/\S*lib(?:asan|ubsan)\.so\S*)", out)]
    if pre:
        env["LD_PRELOAD"] = " ".join(pre)
        # fio's own allocations are not ours to account
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:verify_asan_link_order=0"
    return env


class Target:
    def __init__(self, nvmfd, workdir, name, size="8M"):
        self.logpath = os.path.join(workdir, name + ".log")
        log = open(self.logpath, "w")
        self.proc = subprocess.Popen([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:" + size,
                                      "--allow-any-host", "--log-level", "info"],
                                     stdout=log, stderr=log)
        log.close()
        self.port = 0
        pat = re.compile(r"listening on 127\.0\.0\.1:(\d+)")
        deadline = time.monotonic() + 120  # a bound for a hang only
        while time.monotonic() < deadline:
            with open(self.logpath) as f:
                m = pat.search(f.read())
            if m and int(m.group(1)):
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("nvmfd did not start, see " + self.logpath)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Fio:
    def __init__(self, engine, port, workdir):
        self.engine = engine
        self.workdir = workdir  # fio's cwd: it may leave verify state files
        self.env = fio_env(engine)
        self.base = ["--ioengine=external:" + engine, "--traddr=127.0.0.1",
                     "--trsvcid=%d" % port, "--subnqn=" + NQN]

    def run(self, name, args, json_out=True):
        cmd = ["fio", "--name=" + name] + self.base + args
        if json_out:
            cmd.append("--output-format=json")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT, env=self.env, cwd=self.workdir)
        js = None
        if json_out and p.returncode == 0:
            try:
                js = json.loads(p.stdout[p.stdout.index("{"):])
            except ValueError:
                js = None
        return p.returncode, js, p.stdout + p.stderr


def job(js, i=0):
    return js["jobs"][i] if js and js.get("jobs") else None


def case_enghelp(fio):
    p = subprocess.run(["fio", "--enghelp=" + fio.engine], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT, env=fio.env,
                       cwd=fio.workdir)
    for opt in ["traddr", "trsvcid", "subnqn", "hostnqn", "ns", "hdgst", "ddgst", "io_queues",
                "io_queue_size", "keep_alive_ms", "timeout_ms", "disable_sqflow", "exec",
                "affinity_scope", "affinity_strict", "io_cpu", "cpus", "idle_poll_us",
                "busy_poll", "rx_budget", "tx_budget", "ns_size", "batch_send"]:
        if not re.search(r"^%s\s+:" % opt, p.stdout, re.M):
            fail("enghelp", "option %s missing from --enghelp:\n%s" % (opt, p.stdout))


def case_crc32c(fio):
    rc, js, out = fio.run("crc32c", ["--rw=randwrite", "--bs=4k", "--size=8M", "--iodepth=16",
                                     "--iodepth_batch_submit=4", "--iodepth_batch_complete_min=1",
                                     "--iodepth_batch_complete_max=16",
                                     "--verify=crc32c", "--verify_fatal=1", "--do_verify=1"])
    j = job(js)
    if rc != 0 or not j:
        return fail("crc32c", "rc %d:\n%s" % (rc, out))
    if j["error"] != 0 or j["write"]["io_bytes"] != 8 << 20 or j["read"]["io_bytes"] != 8 << 20:
        fail("crc32c", "error %d, wrote %d, read %d bytes (want 8 MiB each)" %
             (j["error"], j["write"]["io_bytes"], j["read"]["io_bytes"]))


def case_md5(fio):
    rc, js, out = fio.run("md5", ["--rw=randrw", "--bsrange=4k-64k", "--size=8M", "--iodepth=8",
                                  "--io_queues=2", "--verify=md5", "--verify_fatal=1",
                                  "--fsync=4"])
    j = job(js)
    if rc != 0 or not j:
        return fail("md5", "rc %d:\n%s" % (rc, out))
    if j["error"] != 0 or j["write"]["io_bytes"] == 0 or j["read"]["io_bytes"] == 0:
        fail("md5", "error %d, wrote %d, read %d" % (j["error"], j["write"]["io_bytes"],
                                                       j["read"]["io_bytes"]))
    if j["sync"]["total_ios"] == 0:
        fail("md5", "fsync=4 issued no flush")


def case_trim(fio):
    rc, js, out = fio.run("fill", ["--rw=write", "--bs=64k", "--size=8M", "--iodepth=4",
                                   "--verify=pattern", "--verify_pattern=0xa5", "--do_verify=0"])
    if rc != 0:
        return fail("trim", "fill: rc %d:\n%s" % (rc, out))
    rc, js, out = fio.run("trim", ["--rw=randtrim", "--bs=16k", "--size=4M", "--iodepth=4"])
    j = job(js)
    if rc != 0 or not j:
        return fail("trim", "randtrim: rc %d:\n%s" % (rc, out))
    if j["trim"]["io_bytes"] != 4 << 20:
        fail("trim", "trimmed %d bytes, want 4 MiB" % j["trim"]["io_bytes"])
    zero = ["--rw=read", "--bs=16k", "--size=4M", "--verify=pattern", "--verify_pattern=0x00",
            "--verify_fatal=1", "--verify_only=1"]
    rc, js, out = fio.run("zero-trimmed", zero)
    if rc != 0:
        fail("trim", "trimmed half does not read back as zeroes: rc %d:\n%s" % (rc, out))
    rc, js, out = fio.run("zero-kept", zero + ["--offset=4M"], json_out=False)
    if rc == 0 or "verify" not in out:
        fail("trim", "untrimmed half passed a zero-pattern check (rc %d):\n%s" % (rc, out))


def case_beyond_end(fio):
    t0 = time.monotonic()
    rc, js, out = fio.run("beyond", ["--rw=read", "--bs=4k", "--ns_size=16M", "--offset=7M",
                                     "--iodepth=8"], json_out=False)
    if rc == 0:
        return fail("beyond-end", "fio exited 0 reading past the namespace end:\n%s" % out)
    if "LBA_RANGE" not in out or "Input/output error" not in out:
        fail("beyond-end", "no I/O error with LBA_RANGE detail:\n%s" % out)
    if time.monotonic() - t0 > TIMEOUT / 2:
        fail("beyond-end", "took %.0f s" % (time.monotonic() - t0))


def case_refuse(fio):
    cases = [
        (["--exec=foo"], "exec=foo: bound, unbound or none"),
        (["--io_cpu=rr"], "need exec=bound or exec=unbound"),
        (["--exec=bound", "--affinity_scope=cache"], "need exec=unbound"),
        (["--busy_poll=1", "--idle_poll_us=10"], "exclude each other"),
        (["--bs=1000"], "not a multiple of namespace 1's LBA size 512"),
        (["--ns=7"], "namespace 7 is not active"),
        # 2^32 + 1 once wrapped to namespace 1 and ran
        (["--ns=4294967297"], "ns=4294967297: expected a namespace ID 1..4294967294"),
        (["--ns=-1"], "ns=-1: expected a namespace ID"),
        (["--ns_size=1000"], "ns_size=1000: not a multiple"),
    ]
    for args, msg in cases:
        rc, js, out = fio.run("refuse", ["--rw=read", "--size=1M"] + args, json_out=False)
        if rc == 0 or msg not in out:
            fail("refuse", "%s: rc %d, want non-zero and '%s':\n%s" % (args, rc, msg, out))


def case_exec(fio):
    runs = [
        ["--exec=bound", "--io_cpu=rr"],
        ["--exec=unbound", "--io_cpu=least-loaded", "--affinity_scope=system"],
        ["--exec=unbound", "--affinity_strict=1", "--cpus=0"],
        ["--idle_poll_us=50"],
        ["--busy_poll=1"],
        ["--rx_budget=8k", "--tx_budget=8k", "--hdgst=1", "--ddgst=1", "--io_queues=2"],
        ["--keep_alive_ms=0", "--disable_sqflow=1", "--batch_send=0",
         "--iodepth_batch_complete_max=8"],
    ]
    for args in runs:
        rc, js, out = fio.run("exec", ["--rw=randrw", "--bs=4k", "--size=2M", "--iodepth=8",
                                       "--numjobs=2", "--offset_increment=2M", "--group_reporting=1",
                                       "--verify=crc32c", "--verify_fatal=1"] + args)
        j = job(js)
        if rc != 0 or not j or j["error"] != 0 or j["write"]["io_bytes"] == 0:
            fail("exec", "%s: rc %d:\n%s" % (args, rc, out))


def wait_for_io(p):
    """Read fio's output (--eta=always --eta-newline=1) until an eta line
    shows reads done, at most TIMEOUT / 2 s. Return (output, seen)."""
    out = b""
    t0 = time.monotonic()
    while time.monotonic() - t0 < TIMEOUT / 2 and not re.search(rb"\[r=[1-9]", out):
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            out += chunk
    return out, bool(re.search(rb"\[r=[1-9]", out))


def run_and_sample(fio, name, args, sample):
    """Run a time_based fio job; once its eta line shows I/O, call
    sample(pid) and stop fio (SIGTERM). Return (sample result, output) or
    (None, output) if fio never showed I/O within the bound."""
    cmd = ["fio", "--name=" + name] + fio.base + args + ["--time_based", "--runtime=60",
                                                        "--eta=always", "--eta-newline=1"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=fio.env,
                         cwd=fio.workdir)
    out, res = b"", None
    try:
        out, seen = wait_for_io(p)
        if seen:
            res = sample(p.pid)
        p.send_signal(signal.SIGTERM)
        rest, _ = p.communicate(timeout=TIMEOUT / 2)
        out += rest
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return res, out.decode(errors="replace")


def task_cpus(pid):
    """Cpus_allowed_list of every thread of @pid."""
    lists = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                m = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            lists.append(m.group(1))
    return lists


def case_affinity(fio):
    allowed = sorted(os.sched_getaffinity(0))
    two = [str(c) for c in allowed[:2]]
    base = ["--rw=randread", "--bs=4k", "--iodepth=4", "--size=4M", "--thread=1",
            "--numjobs=2"]
    want = two if len(two) == 2 else [two[0], two[0]]
    for args in (["--exec=bound", "--io_cpu=rr", "--cpus=" + ",".join(two)],
                 ["--exec=unbound", "--affinity_scope=cpu", "--affinity_strict=1",
                  "--cpus=" + ",".join(two)]):
        lists, out = run_and_sample(fio, "affinity", base + args, task_cpus)
        if lists is None:
            fail("affinity", "%s: fio never showed I/O:\n%s" % (args, out))
            continue
        single = sorted(l for l in lists if l in two)
        if single != sorted(want):
            fail("affinity", "%s: thread CPU lists %s, want two job threads on %s" %
                 (args, lists, want))
    if len(allowed) > 1:
        # non-strict unbound: a job thread woken outside its unit (here: all
        # of fio's threads moved onto the second CPU from outside) is moved
        # back into the unit and widened again to cpus= (regression: it used
        # to stay narrowed to the unit); the other threads stay where put
        wide = "%d-%d" % (allowed[0], allowed[1]) if allowed[1] == allowed[0] + 1 \
            else ",".join(two)  # how /proc writes the two CPUs

        def move_and_watch(pid):
            for tid in os.listdir("/proc/%d/task" % pid):
                try:
                    os.sched_setaffinity(int(tid), {allowed[1]})
                except OSError:
                    pass
            for _ in range(100):  # bounded: the job thread wakes per I/O batch
                lists = task_cpus(pid)
                if wide in lists:
                    return lists
                time.sleep(0.1)
            return task_cpus(pid)
        args = ["--exec=unbound", "--affinity_scope=cpu", "--cpus=" + ",".join(two)]
        lists, out = run_and_sample(fio, "affinity", base[:-1] + ["--numjobs=1"] + args,
                                    move_and_watch)
        if lists is None or wide not in lists or two[0] in lists:
            fail("affinity", "%s: after a move to CPU %s, thread CPU lists %s; want the job "
                 "thread back on %s" % (args, two[1], lists, wide))
        lists, out = run_and_sample(fio, "affinity", base, task_cpus)
        if lists is None or any(l in two for l in lists):
            fail("affinity", "exec=none: a thread was pinned: %s\n%s" % (lists, out))


def case_leaks(fio):
    if "LD_PRELOAD" not in fio.env:
        print("leaks: engine not built with ASan, nothing to check")
        return
    env = dict(fio.env, ASAN_OPTIONS="detect_leaks=1:exitcode=0:verify_asan_link_order=0")
    eng = os.path.basename(fio.engine)
    two = ["--numjobs=2", "--offset_increment=2M"]
    for extra in (two, ["--thread=1"] + two, ["--create_serialize=0"]):
        cmd = ["fio", "--name=leaks"] + fio.base + ["--rw=randrw", "--bs=4k", "--size=2M",
                                                     "--iodepth=8", "--verify=crc32c"] + extra
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=TIMEOUT, env=env, cwd=fio.workdir)
        if p.returncode != 0:
            fail("leaks", "%s: rc %d:\n%s" % (extra, p.returncode, p.stdout))
            continue
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", p.stdout):
            if not re.match(r"(?:Direct|Indirect) leak of", block):
                continue
            block = block.split("\n\n")[0]
            if eng in block or "nvmfd_fio.c" in block or "/src/host/" in block:
                fail("leaks", "%s: the engine leaks:\n%s" % (extra, block))


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                        "examples", "fio")


def case_examples(fio, port, workdir):
    files = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".fio"))
    if len(files) < 5:
        return fail("examples", "expected 5 job files in %s, found %s" % (EXAMPLES, files))
    env = dict(fio.env, NVMFD_FIO_ENGINE=fio.engine, TRADDR="127.0.0.1", TRSVCID=str(port),
               SUBNQN=NQN)
    for f in files:
        with open(os.path.join(EXAMPLES, f)) as fh:
            text = fh.read()
        text = re.sub(r"(?m)^runtime=\d+", "runtime=1", text)
        text = re.sub(r"(?m)^ramp_time=\d+", "ramp_time=0", text)
        text = re.sub(r"(?m)^size=\w+", "size=4m", text)
        short = os.path.join(workdir, f)
        with open(short, "w") as fh:
            fh.write(text)
        p = subprocess.run(["fio", "--output-format=json", short], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, env=env,
                           cwd=workdir)
        try:
            js = json.loads(p.stdout[p.stdout.index("{"):])
        except ValueError:
            js = None
        if p.returncode != 0 or not js:
            fail("examples", "%s: rc %d:\n%s%s" % (f, p.returncode, p.stdout, p.stderr))
            continue
        for j in js["jobs"]:
            ios = sum(j[d]["total_ios"] for d in ("read", "write", "trim"))
            if j["error"] != 0 or ios == 0:
                fail("examples", "%s: job %s error %d, %d I/Os" % (f, j["jobname"], j["error"],
                                                                  ios))


def case_killed(nvmfd, workdir, engine):
    tgt = Target(nvmfd, workdir, "killed")
    fio = Fio(engine, tgt.port, workdir)
    cmd = ["fio", "--name=killed"] + fio.base + ["--rw=randrw", "--bs=4k", "--iodepth=16",
                                                  "--time_based", "--runtime=60",
                                                  "--eta=always", "--eta-newline=1"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=fio.env,
                         cwd=fio.workdir)
    out = b""
    try:
        out, seen = wait_for_io(p)
        if not seen:
            return fail("killed", "fio never reported I/O:\n%s" % out.decode(errors="replace"))
        tgt.stop()
        rest, _ = p.communicate(timeout=TIMEOUT / 2)
        out += rest
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return fail("killed", "fio still running %d s after the target was killed" % (TIMEOUT / 2))
    finally:
        tgt.stop()
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.decode(errors="replace")
    if p.returncode == 0:
        fail("killed", "fio exited 0 after losing the target:\n%s" % text)
    # the reason is logged whether the failure shows in a poll (outstanding
    # commands fail) or in a submission (-ENOTCONN): regression, the latter
    # used to print only "the command was not submitted"
    if not re.search(r"nvmfd: killed: queue 1 failed: \S", text) or "err=" not in text:
        fail("killed", "no queue failure with its reason / job error reported:\n%s" % text)
    if "the command was not submitted" in text:
        fail("killed", "an I/O error without its reason:\n%s" % text)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    engine, nvmfd = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    ldd = subprocess.run(["ldd", engine], stdout=subprocess.PIPE, text=True).stdout
    if "libtsan" in ldd:
        # fio itself is not instrumented: the ThreadSanitizer runtime cannot
        # be loaded into it (static TLS), and preloading it crashes fio.
        # The host library the engine uses is covered by the TSan suite.
        print("SKIP: fio cannot load a ThreadSanitizer-built engine")
        sys.exit(77)
    want = set(sys.argv[3:])
    if want == {"leaks"} and not re.search(r"lib(?:asan|ubsan)\.so", ldd):
        # the leak check needs the ASan engine; elsewhere it has nothing
        # to assert, so it is a skip, not a pass
        print("SKIP: leaks: the engine is not built with ASan")
        return 77
    if not shutil.which("fio"):
        print("SKIP: no fio on PATH")
        return 77
    workdir = tempfile.mkdtemp(prefix="nvmfd-fio-")
    tgt = Target(nvmfd, workdir, "nvmfd")
    fio = Fio(engine, tgt.port, workdir)
    try:
        for name, fn in [("enghelp", case_enghelp), ("crc32c", case_crc32c), ("md5", case_md5),
                         ("trim", case_trim), ("beyond-end", case_beyond_end),
                         ("refuse", case_refuse), ("exec", case_exec),
                         ("affinity", case_affinity), ("leaks", case_leaks)]:
            if not want or name in want:
                print("case", name, flush=True)
                fn(fio)
        if not want or "examples" in want:
            print("case examples", flush=True)
            case_examples(fio, tgt.port, workdir)
    finally:
        tgt.stop()
    if not want or "killed" in want:
        print("case killed", flush=True)
        case_killed(nvmfd, workdir, engine)
    if failures:
        print("%d failure(s); logs in %s" % (len(failures), workdir))
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print("all cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
