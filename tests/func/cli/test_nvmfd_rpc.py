#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_nvmfd_rpc.py - nvmfd's JSON-RPC control socket and nvmfctl.

  test_nvmfd_rpc.py NVMFD NVMFCTL NVMF_PERF

Starts nvmfd from a config file (-c) with --control on 127.0.0.1 port 0 and
checks:
  round-trips   nvmfctl methods/version/get-subsystems/add-ns/add-host/
                remove-host/remove-ns/save-config/stats, and the raw JSON-RPC
                replies (jsonrpc, id, result/error codes); the old
                {"cmd":"stats"} request still answers.
  live-ns       a namespace added over RPC serves I/O at once (nvmf-perf
                --ns N -w randrw --verify exits 0); once removed nvmf-perf
                finds no namespace N (exit 2).
  atomicity     failing requests (bad spec, NSID in use, a file another
                nvmfd exports, bad host NQN, unknown subsystem, unknown
                params key, save_config into a missing directory) answer an
                error and change nothing: nvmf_get_subsystems and the saved
                file are byte-identical before and after.
  save-config   without a filename it replaces the -c file atomically, mode
                0600, and the file loads again (nvmfd --print-config) with
                the added namespace and host.
  concurrent    8 clients on persistent connections, interleaved, plus one
                idle connection held open: every request is answered with its
                own id, and the host lists end as the clients left them.
  sighup        SIGHUP reloads the -c file: an added namespace and host are
                applied, a new subsystem is reported as needing a restart; a
                broken file changes nothing.
  nvmfctl       exit 1 with nvmfd's message for a refused request, 2 for a
                usage error, 3 with a hint when the socket is absent; --json
                prints parseable JSON.
Exit: 0 pass, 1 fail.
"""
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

NQN = "nqn.2026-11.io.nvmfd:rpc"
TIMEOUT = 60


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(20)
        self.s.connect(path)
        self.f = self.s.makefile("rw")
        self.next_id = 1

    def call(self, method, params=None, rid=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        req = {"jsonrpc": "2.0", "method": method, "id": rid}
        if params is not None:
            req["params"] = params
        self.f.write(json.dumps(req) + "\n")
        self.f.flush()
        return json.loads(self.f.readline())

    def close(self):
        self.f.close()
        self.s.close()


def main():
    if len(sys.argv) != 4:
        print("usage: test_nvmfd_rpc.py NVMFD NVMFCTL NVMF_PERF")
        return 1
    nvmfd, ctl, perf = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="nvmfd-rpc.")
    sock = os.path.join(work, "ctl.sock")
    fails = []

    def check(cond, what):
        print(("PASS: " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    def nvmfctl(*args, cwd=None):
        p = subprocess.run([ctl, "-s", sock] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, cwd=cwd)
        return p.returncode, p.stdout, p.stderr

    # the -c file: one subsystem, one RAM namespace, any host
    cfgp = os.path.join(work, "nvmfd.json")
    p = subprocess.run([nvmfd, "-l", "127.0.0.1:0", "-s", NQN, "-n", "ram:4M",
                        "--allow-any-host", "--print-config"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    with open(cfgp, "w") as f:
        f.write(p.stdout)
    logp = os.path.join(work, "nvmfd.log")
    log = open(logp, "w")
    tgt = subprocess.Popen([nvmfd, "-c", cfgp, "--control", sock, "--log-level", "info"],
                           stdout=log, stderr=log)
    log.close()
    port = 0
    for _ in range(100):
        with open(logp) as f:
            text = f.read()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
        if m and "control socket at" in text:
            port = int(m.group(1))
            break
        if tgt.poll() is not None:
            break
        time.sleep(0.1)
    if not port:
        print("FAIL: nvmfd did not start: " + open(logp).read())
        return 1
    trid = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, NQN)
    img = os.path.join(work, "ns2.img")
    other = None
    try:
        c = Client(sock)
        # --- round trips -------------------------------------------------
        r = c.call("rpc_get_methods", rid="a")
        check(r.get("jsonrpc") == "2.0" and r.get("id") == "a" and
              "nvmf_subsystem_add_ns" in r.get("result", []), "rpc_get_methods: %s" % r)
        r = c.call("nvmfd_get_version")
        check(r["result"]["version"].startswith("nvmfd ") and r["result"]["api_version"] == 1,
              "nvmfd_get_version: %s" % r)
        r = c.call("no_such_method")
        check(r["error"]["code"] == -32601, "unknown method: %s" % r)
        r = c.call("nvmf_create_subsystem", {"nqn": "nqn.2026-11.io.nvmfd:x"})
        check(r["error"]["code"] == -32601 and "not implemented yet" in r["error"]["message"],
              "nvmf_create_subsystem says not implemented: %s" % r)
        c.f.write("{broken\n")
        c.f.flush()
        r = json.loads(c.f.readline())
        check(r["error"]["code"] == -32700 and r["id"] is None, "parse error: %s" % r)
        rc, out, err = nvmfctl("get-subsystems")
        check(rc == 0 and NQN in out and "ns 1     ram:4M" in out and
              ("listen   IPv4 127.0.0.1:%d" % port) in out,
              "nvmfctl get-subsystems: rc %d %r %r" % (rc, out, err))
        before = c.call("nvmf_get_subsystems")["result"]
        saved_before = open(cfgp).read()

        # --- atomicity ---------------------------------------------------
        with open(img, "wb") as f:
            f.truncate(2 << 20)
        # another nvmfd holds the file: the add must fail and change nothing
        olog = open(os.path.join(work, "other.log"), "w")
        other = subprocess.Popen([nvmfd, "-l", "127.0.0.1:0", "-s", "nqn.2026-11.io.nvmfd:o",
                                  "-n", "file:" + img, "--allow-any-host"], stdout=olog,
                                 stderr=olog)
        olog.close()
        for _ in range(100):
            if "listening on" in open(os.path.join(work, "other.log")).read():
                break
            time.sleep(0.1)
        bad = [
            ("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {"bdev_name": "tape:1M"}},
             -32602),
            ("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {"bdev_name": "ram:1M",
                                                                 "nsid": 1}}, -17),
            ("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {"bdev_name": "file:" + img}},
             -16),
            ("nvmf_subsystem_add_ns", {"nqn": "nqn.2026-11.io.nvmfd:none",
                                       "namespace": {"bdev_name": "ram:1M"}}, -19),
            ("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {"bdev_name": "ram:1M"},
                                       "bogus": 1}, -32602),
            ("nvmf_subsystem_add_host", {"nqn": NQN, "host": "not-an-nqn"}, -32602),
            ("nvmf_subsystem_remove_host", {"nqn": NQN, "host": "nqn.2014-08.org.x:absent"},
             -2),
            ("nvmf_subsystem_remove_ns", {"nqn": NQN, "nsid": 9}, -2),
            ("save_config", {"filename": os.path.join(work, "no", "dir", "x.json")}, -2),
        ]
        for method, params, code in bad:
            r = c.call(method, params)
            check("error" in r and r["error"]["code"] == code,
                  "atomicity: %s %s -> %s" % (method, json.dumps(params)[:80], r.get("error")))
        after = c.call("nvmf_get_subsystems")["result"]
        check(after == before, "atomicity: subsystems unchanged after 9 failed requests")
        check(open(cfgp).read() == saved_before, "atomicity: config file untouched")
        other.terminate()
        other.wait()
        other = None

        # --- live namespace and hosts -----------------------------------
        rc, out, err = nvmfctl("add-ns", NQN, "file:" + img)
        check(rc == 0 and out.strip() == "2", "nvmfctl add-ns: rc %d %r %r" % (rc, out, err))
        p = subprocess.run([perf, "-r", trid, "--ns", "2", "-w", "randrw", "--verify", "-t",
                            "1", "-q", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=TIMEOUT)
        check(p.returncode == 0, "live-ns: I/O on the added namespace: rc %d %s" %
              (p.returncode, p.stderr.strip()[-300:]))
        # namespaces added and removed while a host runs verified I/O on
        # namespace 1: the I/O is undisturbed (and, under TSan, race-free)
        bg = subprocess.Popen([perf, "-r", trid, "--ns", "1", "-w", "randrw", "--verify",
                               "-t", "3", "-q", "8", "-P", "2"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        cycles_ok = True
        for k in range(10):
            r = c.call("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {
                "bdev_name": "ram:1M", "nsid": 20 + k}})
            r2 = c.call("nvmf_subsystem_remove_ns", {"nqn": NQN, "nsid": 20 + k})
            cycles_ok &= r.get("result") == 20 + k and r2.get("result") is True
        out_bg, err_bg = bg.communicate(timeout=TIMEOUT)
        check(cycles_ok and bg.returncode == 0,
              "live-ns: 10 add/remove cycles during verified I/O: rc %d %s" %
              (bg.returncode, err_bg.strip()[-300:]))
        # disable / enable namespace 1: hosts see it go and come back
        rc, out, err = nvmfctl("enable-ns", NQN, "1", "no")
        p = subprocess.run([perf, "-r", trid, "--ns", "1", "-w", "randread", "-t", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(rc == 0 and p.returncode == 2 and "namespace 1 not found" in p.stderr,
              "enable-ns no: namespace 1 inactive: rc %d/%d %r" % (rc, p.returncode, err))
        rc, out, err = nvmfctl("enable-ns", NQN, "1", "yes")
        p = subprocess.run([perf, "-r", trid, "--ns", "1", "-w", "randread", "-t", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(rc == 0 and p.returncode == 0, "enable-ns yes: namespace 1 back: rc %d/%d" %
              (rc, p.returncode))
        host = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555"
        rc, out, err = nvmfctl("add-host", NQN, host)
        check(rc == 0 and out == "", "nvmfctl add-host: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("add-host", NQN, host)
        check(rc == 1 and "already allowed" in err, "nvmfctl add-host twice: rc %d %r" %
              (rc, err))

        # --- save-config to the -c file ---------------------------------
        rc, out, err = nvmfctl("save-config")
        st = os.stat(cfgp)
        check(rc == 0 and ("saved to %s" % cfgp) in out and stat.S_IMODE(st.st_mode) == 0o600,
              "save-config: rc %d %r mode %o" % (rc, out + err, stat.S_IMODE(st.st_mode)))
        p = subprocess.run([nvmfd, "-c", cfgp, "--print-config"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        ok = p.returncode == 0
        if ok:
            d = json.loads(p.stdout)
            s = d["subsystems"][0]
            ok = (img in [n["device"]["path"] for n in s["namespaces"]] and
                  host in s["allowed_hosts"] and
                  d["ports"][0]["addr"]["trsvcid"] == str(port))
        check(ok, "save-config: the saved file loads with the new namespace and host: %s" %
              p.stderr.strip())
        leftovers = [n for n in os.listdir(work) if ".tmp." in n]
        check(not leftovers, "save-config: no temporary file left: %s" % leftovers)
        rc, out, err = nvmfctl("--json", "save-config", "rel.json", cwd=work)
        check(rc == 0 and json.loads(out)["filename"] == os.path.join(work, "rel.json") and
              os.path.exists(os.path.join(work, "rel.json")),
              "save-config relative path made absolute: rc %d %r" % (rc, out))

        rc, out, err = nvmfctl("remove-host", NQN, host)
        check(rc == 0, "nvmfctl remove-host: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("remove-ns", NQN, "2")
        check(rc == 0, "nvmfctl remove-ns: rc %d %r" % (rc, err))
        p = subprocess.run([perf, "-r", trid, "--ns", "2", "-w", "randread", "-t", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 2 and "namespace 2 not found" in p.stderr,
              "live-ns: removed namespace gone for hosts: rc %d %r" % (p.returncode,
                                                                        p.stderr.strip()))

        # --- the old protocol ---------------------------------------------
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(sock)
        s.sendall(b'{"cmd":"stats"}\n')
        line = s.makefile().readline()
        s.close()
        check(line.startswith("{") and '"error"' not in line, "old {\"cmd\":\"stats\"} answers")

        # --- concurrent clients ------------------------------------------
        idle = Client(sock)  # held open, never used: must not block others
        errors = []

        def worker(k):
            try:
                cl = Client(sock)
                h = "nqn.2014-08.org.nvmexpress:uuid:c0c0c0c0-0000-0000-0000-%012d" % k
                for i in range(25):
                    rid = "w%d-%d" % (k, i)
                    if i % 5 == 0:
                        r = cl.call("nvmf_subsystem_add_host", {"nqn": NQN, "host": h}, rid)
                    elif i % 5 == 1:
                        r = cl.call("nvmf_subsystem_remove_host", {"nqn": NQN, "host": h}, rid)
                    else:
                        r = cl.call("nvmf_get_subsystems", {"nqn": NQN}, rid)
                    if r.get("id") != rid or "result" not in r:
                        errors.append("%s: %s" % (rid, r))
                        break
                # leave the worker's host allowed when k is even
                if k % 2 == 0:
                    cl.call("nvmf_subsystem_add_host", {"nqn": NQN, "host": h})
                cl.close()
            except Exception as e:  # noqa: BLE001 - reported as a failure
                errors.append("client %d: %r" % (k, e))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        hosts = [h["nqn"] for h in
                 c.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]["hosts"]]
        want = ["nqn.2014-08.org.nvmexpress:uuid:c0c0c0c0-0000-0000-0000-%012d" % k
                for k in range(0, 8, 2)]
        check(not errors and sorted(hosts) == sorted(want),
              "concurrent: 8 clients x 25 requests answered in order; hosts %s; %s" %
              (hosts, errors[:3]))
        idle.close()
        c.close()

        # --- SIGHUP reload ------------------------------------------------
        rc, out, err = nvmfctl("save-config")
        d = json.load(open(cfgp))
        d["subsystems"][0]["namespaces"].append(
            {"device": {"path": "ram:1M"}, "enable": 1, "nsid": 7})
        rh = "nqn.2014-08.org.nvmexpress:uuid:7e7e7e7e-0000-0000-0000-000000000007"
        d["subsystems"][0]["allowed_hosts"].append(rh)
        d["hosts"].append({"nqn": rh})
        d["subsystems"].append({"nqn": "nqn.2026-11.io.nvmfd:later", "attr": {},
                                "allowed_hosts": [], "namespaces": []})
        with open(cfgp, "w") as f:
            json.dump(d, f)
        nlog = len(open(logp).read())
        tgt.send_signal(signal.SIGHUP)
        m = None
        for _ in range(100):
            m = re.search(r"reload .*: (\d+) change\(s\) applied, (\d+) failed, (\d+) not "
                          r"applicable", open(logp).read()[nlog:])
            if m:
                break
            time.sleep(0.1)
        c2 = Client(sock)
        sub = c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]
        check(m is not None and m.groups() == ("2", "0", "1") and
              7 in [n["nsid"] for n in sub["namespaces"]] and
              rh in [h["nqn"] for h in sub["hosts"]] and
              "subsystem nqn.2026-11.io.nvmfd:later is new: not applied" in open(logp).read(),
              "sighup: namespace 7 and a host applied, the new subsystem reported: %s" %
              (m.group(0) if m else open(logp).read()[nlog:][-500:]))
        with open(cfgp, "w") as f:
            f.write("{ not json")
        nlog = len(open(logp).read())
        tgt.send_signal(signal.SIGHUP)
        m = None
        for _ in range(100):
            m = re.search(r"reload: .*nothing changed", open(logp).read()[nlog:])
            if m:
                break
            time.sleep(0.1)
        check(m is not None and c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0] ==
              sub and tgt.poll() is None, "sighup: a broken file changes nothing")
        c2.close()

        # --- nvmfctl errors ----------------------------------------------
        rc, out, err = nvmfctl("remove-ns", NQN, "77")
        check(rc == 1 and "has no namespace 77" in err, "nvmfctl refused: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("remove-ns", NQN)
        check(rc == 2 and "wrong number of arguments" in err, "nvmfctl usage: rc %d %r" %
              (rc, err))
        p = subprocess.run([ctl, "-s", os.path.join(work, "absent.sock"), "stats"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 3 and "is nvmfd running with --control" in p.stderr,
              "nvmfctl absent socket: rc %d %r" % (p.returncode, p.stderr))
        rc, out, err = nvmfctl("--json", "stats")
        try:
            json.loads(out)
            ok = rc == 0
        except ValueError:
            ok = False
        check(ok, "nvmfctl --json stats parses: rc %d" % rc)
        check(tgt.poll() is None, "nvmfd still running")
    finally:
        if other:
            other.terminate()
            other.wait()
        tgt.terminate()
        try:
            tgt.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            tgt.kill()
            tgt.wait()
    check(tgt.returncode == 0, "nvmfd exits 0 on SIGTERM (rc %d)" % tgt.returncode)
    if fails:
        print("%d check(s) failed; logs in %s" % (len(fails), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
