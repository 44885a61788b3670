#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_nvmfd_edges.py - defects found by driving nvmfd, nvmfctl and
nvmf-perf as a new user trying to break them.

  test_nvmfd_edges.py NVMFD NVMFCTL NVMF_PERF

Checks, each a regression test of a defect seen:
  ram-rpc       nvmfd refuses at start RAM namespaces that together exceed
                the machine's memory, but nvmf_subsystem_add_ns and
                nvmfd_subsystem_resize_ns took them (the mapping reserves
                nothing, so hosts' writes would later run the machine out of
                memory): both now answer -ENOMEM naming both sizes, and the
                subsystem is unchanged.
  secret-link   a DH-HMAC-CHAP key or PSK file given as a symbolic link
                (secret files are opened with O_NOFOLLOW) was refused as "Too
                many levels of symbolic links"; nvmfd (--dhchap-key, --psk)
                and nvmf-perf (--dhchap-secret, --psk) now say it is a
                symbolic link, exit 2; the file itself still loads.
  dhchap-any    --dhchap-key on a subsystem with --allow-any-host was
                silently never asked for (such a subsystem does not
                authenticate, as nvmet): nvmfd now logs one WARN naming the
                subsystem and host, and none for a subsystem that lists the
                host without allowing any.
  ctl-idle      16 control connections that never send anything held every
                slot for ever: nvmfctl then failed until nvmfd restarted.
                While the idle ones are younger than 5 s a 17th is still
                refused ("too many control connections"); after that it
                takes the slot of the one idle longest (which sees EOF) and
                is answered, and a client that kept talking keeps its slot.
  ctl-burst     the control socket listened with a backlog of 8 and took
                one connection per poll pass: a burst of non-blocking
                connects failed with EAGAIN. Now 100 at once connect, every
                one is answered or refused with the reason, and nvmfctl
                retries a refusal ("too many control connections") until
                --timeout, so 48 at once all exit 0 (ctl-idle: one started
                while 16 idle clients hold every slot is answered once the
                oldest is 5 s idle).
  hup-globals   SIGHUP after the file's top-level "nvmfd" settings (exec,
                stats_interval, ...) changed: "0 change(s) applied, 0
                failed, 0 not applicable": they were silently not applied.
                Now one WARN names them as needing a restart, counted as
                not applicable.
  err-len       a configuration error naming a host NQN and a key file
                was cut at 256 bytes ("... e.g. from 'nvme gen-dhchap-"):
                the message is whole now (512 bytes).
  save-link     nvmfd -c LINK (a symbolic link to the config file):
                save_config without a file name replaced the link with a
                regular file and left the file it named stale; now the
                named file is replaced (atomically, mode 0600) and the link
                stays a link to it.
  rel-path      nvmfctl add-ns NQN file:REL,size=.. from another directory
                created REL in nvmfd's working directory (and saved it
                relative): nvmfctl now sends the path made absolute from its
                own directory, and nvmf_subsystem_add_ns refuses a relative
                file: or bdev: path (-32602) instead of guessing.
  ns-size       a null namespace of 8 EiB or more (nvmfd -n null:16000000T,
                resize-ns to 16000000T or 2^64-512 bytes) was taken and the
                reply printed a negative size; the size must fit a file
                offset (at most 2^63-1 bytes): refused at start (exit 2)
                and over RPC (-32602); 8388607T still works. add-ns
                ram:513 said only "Invalid argument": now it names the
                block size, as nvmfd -n does.
  config-once   nvmfd -c FILE read FILE twice (once to load it, again
                when the control service started, as the base SIGHUP
                reloads compare with): a file changed in between was
                taken as applied. Now it is read once: -c FIFO, written
                once, starts and answers on its control socket (it hung in
                the second open), and a SIGHUP after the FIFO is written
                with the same config applies no change.
Exit: 0 pass, 1 fail.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

NQN = "nqn.2026-11.io.nvmfd:edges"
TIMEOUT = 60


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from nvmfd_proc import recv_line, stop, wait_log  # noqa: E402
from nvmfd_proc import start as start_log  # noqa: E402


def start(argv, logpath, ready=r"listening on 127\.0\.0\.1:(\d+)"):
    return start_log(argv, logpath, ready, tries=200)[0]


def mem_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) << 10
    return 0


def main():
    if len(sys.argv) != 4:
        print("usage: test_nvmfd_edges.py NVMFD NVMFCTL NVMF_PERF")
        return 1
    nvmfd, nvmfctl, perf = (os.path.abspath(a) for a in sys.argv[1:4])
    work = tempfile.mkdtemp(prefix="nvmfd-edges.")
    fails = []

    def check(cond, what):
        print(("PASS: " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    def ctl(sock, *args):
        p = subprocess.run([nvmfctl, "-s", sock] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr

    base = [nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "--allow-any-host", "--log-level", "info"]
    procs = []
    try:
        # --- ram-rpc ----------------------------------------------------
        sock = os.path.join(work, "ram.sock")
        tgt = start(base + ["-n", "ram:4M", "--control", sock],
                    os.path.join(work, "ram.log"), r"control socket at")
        check(tgt is not None, "ram-rpc: nvmfd starts")
        if tgt:
            procs.append(tgt)
            # twice the machine's memory, in whole GiB
            big = "%dG" % (2 * mem_total() // (1 << 30) + 2)
            _, before, _ = ctl(sock, "--json", "get-subsystems", NQN)
            rc, out, err = ctl(sock, "add-ns", NQN, "ram:" + big)
            check(rc == 1 and "machine has" in err and "code -12" in err,
                  "ram-rpc: add-ns ram:%s refused: rc %d %s" % (big, rc, err.strip()))
            rc, out, err = ctl(sock, "resize-ns", NQN, "1", big)
            check(rc == 1 and "code -12" in err,
                  "ram-rpc: resize-ns 1 %s refused: rc %d %s" % (big, rc, err.strip()))
            _, after, _ = ctl(sock, "--json", "get-subsystems", NQN)
            check(before and before == after, "ram-rpc: the subsystem is unchanged")
            # what fits still works: grow and shrink the namespace
            rc, out, err = ctl(sock, "resize-ns", NQN, "1", "8M")
            check(rc == 0 and out.strip() == str(8 << 20),
                  "ram-rpc: resize-ns 1 8M still works: rc %d %s%s" % (rc, out, err))
            rc, out, err = ctl(sock, "add-ns", NQN, "ram:4M")
            check(rc == 0 and out.strip() == "2",
                  "ram-rpc: add-ns ram:4M still works: rc %d %s%s" % (rc, out, err))
            check(stop(tgt) == 0, "ram-rpc: nvmfd exits 0")
        # --- secret-link --------------------------------------------------
        # the public example secrets of examples/security
        keys = {"dhchap": "DHHC-1:01:2Og2dLuwcPJAJOiwDwc6LlKQ3uyig1W3J1wNCT2lrPRBMAPp:",
                "psk": "NVMeTLSkey-1:01:9+nXzjNMxHtv7HObDQRekZjdhhmeTbAEHNIEAokb90sDI5zm:"}
        host = "nqn.2014-08.org.nvmexpress:uuid:7c9a8d36-2b1e-4f0a-9e55-0d5ec0de00ed"
        for kind, secret in keys.items():
            real = os.path.join(work, kind + ".key")
            link = os.path.join(work, kind + "-link.key")
            with open(os.open(real, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(secret + "\n")
            os.symlink(real, link)
            if kind == "dhchap":
                tflags = ["-s", NQN, "-n", "ram:1M", "--dhchap-key", host + "=@%s"]
                pflags = ["--dhchap-secret", "@%s"]
            else:
                tflags = ["--tls", "-s", NQN, "-n", "ram:1M", "--allow-host", host,
                          "--psk", host + "=@%s"]
                pflags = ["--tls", "--psk", "@%s"]
            for path, good in ((link, False), (real, True)):
                argv = [nvmfd, "-l", "127.0.0.1:0"] + [a.replace("%s", path) for a in tflags]
                p = subprocess.run(argv + ["--print-config"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
                if good:
                    check(p.returncode == 0, "secret-link: nvmfd loads the %s file itself: "
                          "rc %d %s" % (kind, p.returncode, p.stderr.strip()))
                else:
                    check(p.returncode == 2 and "symbolic link" in p.stderr and
                          "levels" not in p.stderr,
                          "secret-link: nvmfd names the %s symlink: rc %d %s"
                          % (kind, p.returncode, p.stderr.strip()))
            # nvmf-perf refuses while parsing options, before any connect
            argv = [perf, "-r", "traddr:127.0.0.1 trsvcid:9 subnqn:" + NQN, "-t", "1"]
            p = subprocess.run(argv + [a.replace("%s", link) for a in pflags],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=TIMEOUT)
            check(p.returncode == 2 and "symbolic link" in p.stderr,
                  "secret-link: nvmf-perf names the %s symlink: rc %d %s"
                  % (kind, p.returncode, p.stderr.strip()))
        # --- dhchap-any ---------------------------------------------------
        hk = os.path.join(work, "dhchap.key")
        logp = os.path.join(work, "any.log")
        any_nqn = NQN + "-any"
        tgt = start([nvmfd, "-l", "127.0.0.1:0", "--log-level", "info",
                     "-s", any_nqn, "-n", "ram:1M", "--dhchap-key", host + "=@" + hk,
                     "--allow-any-host",
                     "-s", NQN, "-n", "ram:1M", "--dhchap-key", host + "=@" + hk], logp)
        check(tgt is not None, "dhchap-any: nvmfd starts")
        if tgt:
            procs.append(tgt)
            stop(tgt)
            with open(logp) as f:
                warns = [l for l in f if "WARN" in l and "DH-HMAC-CHAP key is not used" in l]
            check(len(warns) == 1 and any_nqn + " allows any host" in warns[0] and
                  host in warns[0], "dhchap-any: one WARN for the allow-any subsystem: %s"
                  % warns)
        # --- affinity-unused ----------------------------------------------
        # --affinity-scope/--affinity-strict shape unbound pools only: with
        # bound or auto they are named as ignored; with unbound, no WARN;
        # without --exec (the default auto) the WARN says how to get unbound
        for mode, want, text in (("bound", 1, "exec mode bound"), ("auto", 1, "exec mode auto"),
                                 ("unbound", 0, ""),
                                 (None, 1, "exec mode auto (the default; give --exec unbound)")):
            logp = os.path.join(work, "aff-%s.log" % mode)
            tgt = start(base + ["-n", "ram:1M"] + (["--exec", mode] if mode else []) +
                        ["--affinity-scope", "cpu", "--affinity-strict"], logp)
            check(tgt is not None, "affinity-unused: nvmfd --exec %s starts" % mode)
            if tgt:
                procs.append(tgt)
                stop(tgt)
                with open(logp) as f:
                    warns = [l for l in f if "WARN" in l and "--affinity-scope" in l]
                check(len(warns) == want and (not want or warns[0].rstrip().endswith(text)),
                      "affinity-unused: %d WARN with --exec %s: %s" % (want, mode, warns))
        # --- ctl-idle -----------------------------------------------------
        sock = os.path.join(work, "idle.sock")
        tgt = start(base + ["-n", "ram:1M", "--control", sock],
                    os.path.join(work, "idle.log"), r"control socket at")
        check(tgt is not None, "ctl-idle: nvmfd starts")
        if tgt:
            procs.append(tgt)

            def conn():
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.connect(sock)  # blocking: waits while the backlog is full
                c.settimeout(10)
                return c

            ver = (json.dumps({"jsonrpc": "2.0", "method": "nvmfd_get_version", "id": 1})
                   + "\n").encode()

            def ask(c):
                c.sendall(ver)
                return recv_line(c, 4096)

            talker = conn()
            check(b'"result"' in ask(talker), "ctl-idle: a talking client is answered")
            t0 = time.monotonic()
            idle = [conn() for _ in range(15)]
            time.sleep(0.3)
            # every slot taken, none idle long: refused
            late = conn()
            data = b""
            try:
                # the refusal comes at accept: read it (sending first could
                # meet the closed socket, EPIPE, before the line is read)
                while True:
                    chunk = late.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            late.close()
            if time.monotonic() - t0 < 4:
                check(b"too many control connections" in data,
                      "ctl-idle: a 17th client is refused while the others are fresh: %r"
                      % data)
            else:
                print("SKIP: ctl-idle: the machine took 4 s to open 16 connections")
            # nvmfctl meanwhile retries while it is refused, and gets the
            # slot of the idle one once it is 5 s old
            waiter = subprocess.Popen([nvmfctl, "-s", sock, "-t", "30", "version"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
            # the talker stays active, the idle ones age past 5 s
            for _ in range(6):
                time.sleep(1)
                ask(talker)
            wout, werr = waiter.communicate(timeout=TIMEOUT)
            check(waiter.returncode == 0 and "nvmfd" in wout,
                  "ctl-idle: nvmfctl started while all slots were taken retries and is "
                  "answered: rc %d %r" % (waiter.returncode, (wout + werr).strip()))
            c = conn()
            got = ask(c)
            check(b'"result"' in got, "ctl-idle: after 5 s a new client gets a slot: %r" % got)
            idle[0].settimeout(5)
            try:
                eof = idle[0].recv(10) == b""
            except OSError:
                eof = False
            check(eof, "ctl-idle: the client idle longest was closed")
            check(b'"result"' in ask(talker), "ctl-idle: the talking client kept its slot")
            for x in idle + [c, talker]:
                x.close()
            check(stop(tgt) == 0, "ctl-idle: nvmfd exits 0")
        # --- hup-globals, hup-default: SIGHUP after an nvmfd -c FILE start --
        def hup_reload(name, print_args, edit=None):
            """FILE = nvmfd --print-config of @print_args; nvmfd -c FILE runs,
            edit(dict) rewrites FILE if given, then SIGHUP. Return (printed
            config, the "reload" log match, the log) or None if nvmfd did
            not start; nvmfd is stopped (and checked to exit 0)."""
            cfgp = os.path.join(work, name + ".json")
            p = subprocess.run([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:1M",
                                "--allow-any-host"] + print_args + ["--print-config"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=TIMEOUT)
            check(p.returncode == 0, "%s: --print-config: rc %d" % (name, p.returncode))
            with open(cfgp, "w") as f:
                f.write(p.stdout)
            logp = os.path.join(work, name + ".log")
            # "control socket at" comes once nvmfd has read the file as the
            # base of its reloads (after "listening on"): edit it only then
            tgt = start([nvmfd, "-c", cfgp, "--control", os.path.join(work, name + ".sock")],
                        logp, r"control socket at")
            check(tgt is not None, "%s: nvmfd -c starts" % name)
            if not tgt:
                return None
            procs.append(tgt)
            if edit:
                d = json.loads(p.stdout)
                edit(d)
                with open(cfgp, "w") as f:
                    json.dump(d, f)
            tgt.send_signal(signal.SIGHUP)
            m = wait_log(logp, r"reload \S+: .*", tgt)
            with open(logp) as f:
                text = f.read()
            check(stop(tgt) == 0, "%s: nvmfd exits 0" % name)
            return p.stdout, m, text

        def hup_edit_globals(d):
            d.setdefault("nvmfd", {}).setdefault("exec", {})["net"] = "uring"
            d["nvmfd"]["stats_interval"] = 7

        # bound: the edit adds net uring, which auto does not take
        r = hup_reload("hup-globals", ["--exec", "bound"], hup_edit_globals)
        if r:
            _, m, text = r
            check(m and "nvmfd settings changed (exec, stats_interval): they are read at "
                  "start, restart to apply: not applied" in text and
                  "1 not applicable while running" in m.group(0),
                  "hup-globals: a changed exec.net and stats_interval are reported as needing "
                  "a restart (they were silently ignored): %r" % (m.group(0) if m else text))
        # a file that does not name the exec mode (as --print-config writes
        # a defaulted one): a SIGHUP with the file unchanged reports no
        # changed nvmfd settings (the reload baseline was resolved to the
        # default as each reload is)
        r = hup_reload("hup-default", [])
        if r:
            printed, m, text = r
            check('"mode"' not in printed,
                  "hup-default: --print-config of the default names no exec mode")
            check(m and "nvmfd settings changed" not in text and
                  "exec mode auto (the default" in text and
                  "0 not applicable while running" in m.group(0),
                  "hup-default: an unchanged file without exec mode reloads without a "
                  "change: %r" % (m.group(0) if m else text))
        # --- err-len ------------------------------------------------------
        # a bad key file of a long host NQN: the whole message, not cut
        longhost = "nqn.2014-08.org.nvmexpress:uuid:" + "7c9a8d36-2b1e-4f0a-9e55-0d5ec0de0001"
        badkey = os.path.join(work, "a-key-file-with-a-rather-long-name-for-the-test.key")
        with open(badkey, "w") as f:
            f.write("DHHC-1:00:not-a-secret: \n")
        os.chmod(badkey, 0o600)
        p = subprocess.run([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:1M",
                            "--dhchap-key", longhost + "=@" + badkey], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        check(p.returncode == 2 and badkey in p.stderr and
              "e.g. from 'nvme gen-dhchap-key') (see nvmfd --help)" in p.stderr,
              "err-len: the bad key message is whole: rc %d %r" % (p.returncode, p.stderr))
        # --- ctl-burst ----------------------------------------------------
        sock = os.path.join(work, "burst.sock")
        tgt = start(base + ["-n", "ram:1M", "--control", sock],
                    os.path.join(work, "burst.log"), r"control socket at")
        check(tgt is not None, "ctl-burst: nvmfd starts")
        if tgt:
            procs.append(tgt)
            conns, errs = [], []
            for _ in range(100):
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.setblocking(False)
                try:
                    c.connect(sock)
                    conns.append(c)
                except OSError as e:
                    errs.append(e.strerror)
                    c.close()
            check(len(conns) == 100, "ctl-burst: 100 non-blocking connects at once all "
                  "succeed (the backlog was 8): %d, errors %s" % (len(conns), sorted(set(errs))))
            answered = refused = 0
            other = []
            for i, c in enumerate(conns):
                c.setblocking(True)
                c.settimeout(20)
                try:
                    c.sendall((json.dumps({"jsonrpc": "2.0", "method": "nvmfd_get_version",
                                           "id": i}) + "\n").encode())
                except OSError:
                    pass  # refused and closed already: its line is still there
                data = b""
                try:
                    while not data.endswith(b"\n"):
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                except OSError as e:
                    data += str(e).encode()
                c.close()
                if b'"result"' in data:
                    answered += 1
                elif b"too many control connections" in data:
                    refused += 1
                else:
                    other.append(data[:100])
            check(answered >= 16 and answered + refused == len(conns) and not other,
                  "ctl-burst: every client answered (%d) or refused with the reason (%d): "
                  "others %r" % (answered, refused, other[:3]))
            # nvmfctl retries a refusal: a burst of them all succeed
            ps = [subprocess.Popen([nvmfctl, "-s", sock, "stats"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True) for _ in range(48)]
            res = [(p.wait(timeout=TIMEOUT), p.stderr.read().strip()) for p in ps]
            bad = [r for r in res if r[0] != 0]
            check(not bad, "ctl-burst: 48 nvmfctl at once all exit 0: failures %r" % bad[:3])
            check(stop(tgt) == 0, "ctl-burst: nvmfd exits 0")
        # --- save-link ----------------------------------------------------
        sock = os.path.join(work, "link.sock")
        realdir = os.path.join(work, "managed")
        os.mkdir(realdir)
        realcfg = os.path.join(realdir, "nvmfd.json")
        p = subprocess.run(base + ["-n", "ram:1M", "--print-config"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        with open(realcfg, "w") as f:
            f.write(p.stdout)
        link = os.path.join(work, "nvmfd.json")
        os.symlink(realcfg, link)
        tgt = start([nvmfd, "-c", link, "--control", sock], os.path.join(work, "link.log"),
                    r"control socket at")
        check(tgt is not None, "save-link: nvmfd starts from a linked config")
        if tgt:
            procs.append(tgt)
            rc, out, err = ctl(sock, "add-ns", NQN, "ram:2M")
            check(rc == 0, "save-link: add-ns: rc %d %s" % (rc, err))
            rc, out, err = ctl(sock, "save-config")
            check(rc == 0, "save-link: save-config: rc %d %s" % (rc, err))
            check(os.path.islink(link) and os.readlink(link) == realcfg,
                  "save-link: the link is still a link to the managed file")
            with open(realcfg) as f:
                saved = json.load(f)
            paths = [n["device"]["path"] for s_ in saved["subsystems"] for n in s_["namespaces"]]
            check("ram:2M" in paths, "save-link: the managed file has the new namespace: %s"
                  % paths)
            check(os.stat(realcfg).st_mode & 0o777 == 0o600, "save-link: mode 0600")
            check(not [x for x in os.listdir(realdir) if ".tmp." in x] and
                  not [x for x in os.listdir(work) if ".tmp." in x],
                  "save-link: no temporary file left")
            check(stop(tgt) == 0, "save-link: nvmfd exits 0")
        # --- rel-path -----------------------------------------------------
        sock = os.path.join(work, "rel.sock")
        tdir = os.path.join(work, "nvmfd-cwd")
        cdir = os.path.join(work, "caller-cwd")
        os.mkdir(tdir)
        os.mkdir(cdir)
        tgt, _ = start_log(base + ["-n", "ram:1M", "--control", sock],
                           os.path.join(work, "rel.log"), r"control socket at", 200, tdir)
        check(tgt is not None, "rel-path: nvmfd starts")
        if tgt:
            procs.append(tgt)
            p = subprocess.run([nvmfctl, "-s", sock, "add-ns", NQN, "file:rel.img,size=1M"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=TIMEOUT, cwd=cdir)
            check(p.returncode == 0 and os.path.exists(os.path.join(cdir, "rel.img")) and
                  not os.path.exists(os.path.join(tdir, "rel.img")),
                  "rel-path: nvmfctl add-ns file:rel.img lands in the caller's directory: "
                  "rc %d %s" % (p.returncode, p.stderr.strip()))
            rc, out, err = ctl(sock, "get-subsystems", NQN)
            check(os.path.join(cdir, "rel.img") in out,
                  "rel-path: the namespace is recorded with its absolute path: %s" % out)
            rc, out, err = ctl(sock, "call", "nvmf_subsystem_add_ns", json.dumps(
                {"nqn": NQN, "namespace": {"bdev_name": "file:other.img,size=1M"}}))
            check(rc == 1 and "absolute path" in err and "-32602" in err and
                  not os.path.exists(os.path.join(tdir, "other.img")),
                  "rel-path: a relative path sent raw is refused: rc %d %s" % (rc, err.strip()))
            check(stop(tgt) == 0, "rel-path: nvmfd exits 0")
        # --- ns-size ------------------------------------------------------
        p = subprocess.run(base + ["-n", "null:16000000T", "--print-config"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 2 and "largest file offset" in p.stderr,
              "ns-size: -n null:16000000T is refused: rc %d %s" % (p.returncode,
                                                                  p.stderr.strip()))
        sock = os.path.join(work, "size.sock")
        tgt = start(base + ["-n", "null:1G", "--control", sock],
                    os.path.join(work, "size.log"), r"control socket at")
        check(tgt is not None, "ns-size: nvmfd starts")
        if tgt:
            procs.append(tgt)
            for v in ("16000000T", "8388608T", str((1 << 64) - 512)):
                rc, out, err = ctl(sock, "resize-ns", NQN, "1", v)
                check(rc == 1 and "-32602" in err and not out.startswith("-"),
                      "ns-size: resize-ns 1 %s refused: rc %d %s%s" % (v, rc, out, err.strip()))
            rc, out, err = ctl(sock, "resize-ns", NQN, "1", "8388607T")
            check(rc == 0 and out.strip() == str(8388607 << 40),
                  "ns-size: resize-ns 1 8388607T: rc %d %s%s" % (rc, out, err.strip()))
            rc, out, err = ctl(sock, "add-ns", NQN, "null:9000000T")
            check(rc == 1 and "largest file offset" in err,
                  "ns-size: add-ns null:9000000T refused: rc %d %s" % (rc, err.strip()))
            rc, out, err = ctl(sock, "add-ns", NQN, "ram:513")
            check(rc == 1 and "not a multiple of the 512-byte block size" in err,
                  "ns-size: add-ns ram:513 names the block size: rc %d %s" % (rc, err.strip()))
            check(stop(tgt) == 0, "ns-size: nvmfd exits 0")
        # --- config-once ------------------------------------------------
        sock = os.path.join(work, "once.sock")
        fifo = os.path.join(work, "once.json")
        os.mkfifo(fifo, 0o600)
        conf = {"ports": [{"portid": 1, "addr": {"trtype": "tcp", "adrfam": "ipv4",
                                                  "traddr": "127.0.0.1", "trsvcid": "0"},
                           "subsystems": [NQN]}],
                "subsystems": [{"nqn": NQN, "allowed_hosts": [],
                                "attr": {"allow_any_host": "1"},
                                "namespaces": [{"nsid": 1, "enable": 1, "device": {
                                    "path": "ram:4M"}}]}],
                "hosts": []}
        text = json.dumps(conf).encode()

        def feed():
            # blocks until nvmfd opens the FIFO; one reader per write
            fd = os.open(fifo, os.O_WRONLY)
            os.write(fd, text)
            os.close(fd)

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        tgt = start([nvmfd, "-c", fifo, "--control", sock, "--log-level", "info"],
                    os.path.join(work, "once.log"), r"control socket at")
        check(tgt is not None, "config-once: nvmfd -c FIFO starts (the file read once)")
        if tgt:
            procs.append(tgt)
            rc, out, err = ctl(sock, "get-subsystems", NQN)
            check(rc == 0 and NQN in out, "config-once: control socket answers: rc %d %s%s"
                  % (rc, out, err.strip()))
            t = threading.Thread(target=feed, daemon=True)
            t.start()
            tgt.send_signal(signal.SIGHUP)
            m = wait_log(os.path.join(work, "once.log"), r"(\d+) change\(s\) applied", tgt, 200)
            check(m is not None and m.group(1) == "0",
                  "config-once: SIGHUP with the same file applies 0 changes: %s"
                  % (m.group(0) if m else None))
            check(stop(tgt) == 0, "config-once: nvmfd exits 0")
    finally:
        for p in procs:
            stop(p)
        if fails:
            print("work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%d failure(s)" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
