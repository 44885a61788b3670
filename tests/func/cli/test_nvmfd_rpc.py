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
  sighup        SIGHUP reloads the -c file: an added namespace and host, a new
                subsystem with its namespace and port link (then its deletion) are
                applied; a broken file changes nothing.
  live          nvmf_create_subsystem / add_listener (port 0 reports the bound
                port; an existing address links the subsystem) / add_ns serve
                verified I/O; referrals on every port; the discovery log shows
                both; resize-ns; save_config keeps it all; delete-subsystem
                with a host running I/O (nvmfd survives, the file is released
                for reuse); remove-listener closes the port; 20 failing
                requests change nothing; 4 concurrent clients create and
                delete subsystems and listeners.
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
NVMFD_DISC = "nqn.2014-08.org.nvmexpress.discovery"
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
        r = c.call("rpc_get_methods")["result"]
        check(all(m in r for m in ("nvmf_create_subsystem", "nvmf_delete_subsystem",
                                   "nvmf_subsystem_add_listener", "nvmf_subsystem_remove_listener",
                                   "nvmf_discovery_add_referral", "nvmfd_subsystem_resize_ns")),
              "rpc_get_methods lists the live subsystem/listener/referral/resize methods")
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

        # --- subsystems, listeners, referrals, resize ---------------------
        N2 = "nqn.2026-11.io.nvmfd:rpc2"
        addr = lambda svc, fam=None, tt="TCP", ta="127.0.0.1": dict(
            {"trtype": tt, "traddr": ta, "trsvcid": str(svc)}, **({"adrfam": fam} if fam else {}))
        before2 = c.call("nvmf_get_subsystems")["result"]
        refs0 = c.call("nvmf_discovery_get_referrals")["result"]
        busy = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        bport = busy.getsockname()[1]
        bad2 = [
            ("nvmf_create_subsystem", {"nqn": NQN}, -17),
            ("nvmf_create_subsystem", {"nqn": "not-an-nqn"}, -32602),
            ("nvmf_create_subsystem", {"nqn": N2, "max_namespaces": 7}, -32602),
            ("nvmf_create_subsystem", {"nqn": N2, "serial_number": "x" * 21}, -32602),
            ("nvmf_create_subsystem", {"nqn": N2, "ana_reporting": True}, -32602),
            ("nvmf_create_subsystem", {"nqn": N2, "min_cntlid": 10, "max_cntlid": 5}, -32602),
            ("nvmf_create_subsystem", {"nqn": N2, "bogus": 1}, -32602),
            ("nvmf_delete_subsystem", {"nqn": N2}, -19),
            ("nvmf_subsystem_add_listener", {"nqn": NQN, "listen_address": addr(0, tt="RDMA")},
             -32602),
            ("nvmf_subsystem_add_listener", {"nqn": NQN, "listen_address": addr(bport)}, -98),
            ("nvmf_subsystem_add_listener", {"nqn": NQN, "listen_address": addr(port)}, -17),
            ("nvmf_subsystem_add_listener", {"nqn": NQN, "listen_address": addr(0, "IPv6")},
             -32602),
            ("nvmf_subsystem_add_listener", {"nqn": N2, "listen_address": addr(0)}, -19),
            ("nvmf_subsystem_remove_listener", {"nqn": NQN, "listen_address": addr(1)}, -2),
            ("nvmf_discovery_add_referral", {"address": addr(4420, ta="10.0.0.1"),
                                             "portid": 99}, -2),
            ("nvmf_discovery_add_referral", {"address": addr(4420, ta="10.0.0.1"),
                                             "secure_channel": True}, -32602),
            ("nvmf_discovery_remove_referral", {"address": addr(4420, ta="10.0.0.1")}, -2),
            ("nvmfd_subsystem_resize_ns", {"nqn": NQN, "nsid": 1, "size": 1000}, -32602),
            ("nvmfd_subsystem_resize_ns", {"nqn": NQN, "nsid": 1}, -32602),
            ("nvmfd_subsystem_resize_ns", {"nqn": NQN, "nsid": 9, "size": "8M"}, -2),
        ]
        for method, params, code in bad2:
            r = c.call(method, params)
            check("error" in r and r["error"]["code"] == code,
                  "atomicity: %s %s -> %s" % (method, json.dumps(params)[:90], r.get("error")))
        busy.close()
        check(c.call("nvmf_get_subsystems")["result"] == before2 and
              c.call("nvmf_discovery_get_referrals")["result"] == refs0,
              "atomicity: subsystems, listeners and referrals unchanged after %d failed "
              "requests" % len(bad2))

        rc, out, err = nvmfctl("create-subsystem", N2, "serial=SN-RPC2", "allow_any_host=yes")
        check(rc == 0, "nvmfctl create-subsystem: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("add-listener", N2, "127.0.0.1:0")
        m = re.match(r"127\.0\.0\.1:(\d+)$", out.strip())
        p2 = int(m.group(1)) if m else 0
        check(rc == 0 and p2 not in (0, port), "add-listener port 0 reports the bound port: "
              "rc %d %r %r" % (rc, out, err))
        rc, out, err = nvmfctl("add-listener", N2, "127.0.0.1:%d" % port)
        check(rc == 0 and out.strip() == "127.0.0.1:%d" % port,
              "add-listener on the existing port links it: rc %d %r %r" % (rc, out, err))
        img2 = os.path.join(work, "sub2.img")
        rc, out, err = nvmfctl("add-ns", N2, "file:%s,size=4M" % img2)
        check(rc == 0 and out.strip() == "1", "add-ns on the new subsystem: %r" % err)
        sub2 = c.call("nvmf_get_subsystems", {"nqn": N2})["result"][0]
        check(sub2["serial_number"] == "SN-RPC2" and sub2["allow_any_host"] and
              sorted(int(a["trsvcid"]) for a in sub2["listen_addresses"]) ==
              sorted([port, p2]), "get_subsystems shows the new subsystem: %s" % sub2)
        trid2 = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (p2, N2)
        p = subprocess.run([perf, "-r", trid2, "-w", "randrw", "--verify", "-t", "1", "-q",
                            "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 0, "new subsystem on the new listener serves verified I/O: rc "
              "%d %s" % (p.returncode, p.stderr.strip()[-300:]))
        rc, out, err = nvmfctl("add-referral", "10.0.0.5:4420")
        rc2, out2, err2 = nvmfctl("get-referrals")
        check(rc == 0 and rc2 == 0 and out2.count("10.0.0.5:4420 on port") == 2,
              "add-referral on every port: %r %r" % (err, out2))
        p = subprocess.run([perf, "discover", "-r", "traddr:127.0.0.1 trsvcid:%d" % p2],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        check(p.returncode == 0 and p.stdout.count("subnqn:  " + N2) == 2 and
              "traddr:  10.0.0.5" in p.stdout and ("trsvcid: %d" % p2) in p.stdout,
              "discovery log on the new port: the subsystem on both ports, the referral: %s"
              % p.stdout[-600:])
        rc, out, err = nvmfctl("resize-ns", NQN, "1", "8M")
        sub1 = c.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]
        check(rc == 0 and out.strip() == str(8 << 20) and
              [n["bdev_name"] for n in sub1["namespaces"] if n["nsid"] == 1] == ["ram:8M"],
              "resize-ns 8M: rc %d %r %r" % (rc, out, err))
        savep = os.path.join(work, "live.json")
        r = c.call("save_config", {"filename": savep})
        p = subprocess.run([nvmfd, "-c", savep, "--print-config"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        ok = p.returncode == 0
        if ok:
            d = json.loads(p.stdout)
            s2 = [s for s in d["subsystems"] if s["nqn"] == N2]
            pp = [q for q in d["ports"] if q["addr"]["trsvcid"] == str(p2)]
            ok = (len(s2) == 1 and s2[0]["namespaces"][0]["device"]["path"] == img2 and
                  len(pp) == 1 and pp[0]["subsystems"] == [N2] and
                  pp[0]["referrals"][0]["addr"]["traddr"] == "10.0.0.5" and
                  any(s["namespaces"][0]["device"]["path"] == "ram:8M"
                      for s in d["subsystems"] if s["nqn"] == NQN))
        check(ok, "save_config holds the new subsystem, listener, referral and size: %s" %
              (p.stderr.strip() or p.stdout[:300]))

        # unlink N2 from the shared port while a host of N2 uses it there:
        # that host's controller goes, the port stays for NQN
        trid2s = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%d subnqn:%s" % (port, N2)
        bg = subprocess.Popen([perf, "-r", trid2s, "-w", "randrw", "--verify", "-t", "5", "-q",
                               "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        rc, out, err = nvmfctl("remove-listener", N2, "127.0.0.1:%d" % port)
        bg.communicate(timeout=TIMEOUT)
        p = subprocess.run([perf, "-r", trid, "-w", "randread", "-t", "1"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        sub2 = c.call("nvmf_get_subsystems", {"nqn": N2})["result"][0]
        check(rc == 0 and bg.returncode != 0 and p.returncode == 0 and
              [int(a["trsvcid"]) for a in sub2["listen_addresses"]] == [p2],
              "remove-listener of one of a port's subsystems: its host dropped (rc %d), the "
              "port serves the other (rc %d), listeners now %s" %
              (bg.returncode, p.returncode, sub2["listen_addresses"]))

        # delete the subsystem while a host runs verified I/O on it
        bg = subprocess.Popen([perf, "-r", trid2, "-w", "randrw", "--verify", "-t", "5", "-q",
                               "8"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        rc, out, err = nvmfctl("delete-subsystem", N2)
        out_bg, err_bg = bg.communicate(timeout=TIMEOUT)
        subs = [s["nqn"] for s in c.call("nvmf_get_subsystems")["result"]]
        check(rc == 0 and N2 not in subs and tgt.poll() is None and bg.returncode != 0,
              "delete-subsystem with a host doing I/O: rc %d, host rc %d (%s), nvmfd alive" %
              (rc, bg.returncode, err_bg.strip()[-200:]))
        # its file is released once the I/O drained: another namespace may take it
        ok = False
        for _ in range(50):
            r = c.call("nvmf_subsystem_add_ns", {"nqn": NQN, "namespace": {
                "bdev_name": "file:" + img2, "nsid": 30}})
            if "result" in r:
                ok = True
                break
            time.sleep(0.1)
        check(ok and c.call("nvmf_subsystem_remove_ns", {"nqn": NQN, "nsid": 30}).get("result"),
              "the deleted subsystem's file is released: %s" % r)
        # the listener p2 serves no subsystem now; the discovery NQN removes it
        rc, out, err = nvmfctl("remove-listener", NVMFD_DISC, "127.0.0.1:%d" % p2)
        refused = False
        try:
            socket.create_connection(("127.0.0.1", p2), timeout=5).close()
        except OSError:
            refused = True
        check(rc == 0 and refused, "remove-listener closes the port: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("remove-referral", "10.0.0.5:4420")
        check(rc == 0 and c.call("nvmf_discovery_get_referrals")["result"] == refs0,
              "remove-referral: rc %d %r" % (rc, err))
        rc, out, err = nvmfctl("resize-ns", NQN, "1", "4M")
        check(rc == 0 and c.call("nvmf_get_subsystems")["result"] == before2,
              "back to the state before: %r" % err)

        # concurrent clients creating and deleting their own subsystems and
        # listeners (on the shared port and a new one)
        errors2 = []

        def worker2(k):
            try:
                cl = Client(sock)
                nq = "nqn.2026-11.io.nvmfd:conc%d" % k
                for i in range(3):
                    steps = [("nvmf_create_subsystem", {"nqn": nq, "allow_any_host": True}),
                             ("nvmf_subsystem_add_ns", {"nqn": nq, "namespace": {
                                 "bdev_name": "ram:1M"}}),
                             ("nvmf_subsystem_add_listener", {"nqn": nq,
                                                              "listen_address": addr(port)}),
                             ("nvmf_subsystem_add_listener", {"nqn": nq,
                                                              "listen_address": addr(0)})]
                    for method, params in steps:
                        r = cl.call(method, params)
                        if "result" not in r:
                            errors2.append("%s %d: %s" % (method, k, r))
                    lp = r["result"]["trsvcid"] if "result" in r else "1"
                    for method, params in [
                            ("nvmf_subsystem_remove_listener",
                             {"nqn": nq, "listen_address": addr(lp)}),
                            ("nvmf_delete_subsystem", {"nqn": nq})]:
                        r = cl.call(method, params)
                        if "result" not in r:
                            errors2.append("%s %d: %s" % (method, k, r))
                cl.close()
            except Exception as e:  # noqa: BLE001 - reported as a failure
                errors2.append("client %d: %r" % (k, e))

        threads = [threading.Thread(target=worker2, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        check(not errors2 and c.call("nvmf_get_subsystems")["result"] == before2,
              "concurrent: 4 clients x 3 create/listen/delete rounds, state restored: %s" %
              errors2[:3])

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
        def reload_with(cfg_obj):
            """Write cfg_obj to the -c file, SIGHUP, wait (<= 30 s) for the
            reload's summary line; (match or None, log offset before it)."""
            with open(cfgp, "w") as f:
                json.dump(cfg_obj, f)
            start = len(open(logp).read())
            tgt.send_signal(signal.SIGHUP)
            for _ in range(300):
                found = re.search(r"reload .*: (\d+) change\(s\) applied, (\d+) failed, "
                                  r"(\d+) not applicable", open(logp).read()[start:])
                if found:
                    return found, start
                time.sleep(0.1)
            return None, start

        rc, out, err = nvmfctl("save-config")
        d = json.load(open(cfgp))
        d["subsystems"][0]["namespaces"].append(
            {"device": {"path": "ram:1M"}, "enable": 1, "nsid": 7})
        rh = "nqn.2014-08.org.nvmexpress:uuid:7e7e7e7e-0000-0000-0000-000000000007"
        d["subsystems"][0]["allowed_hosts"].append(rh)
        d["hosts"].append({"nqn": rh})
        later = "nqn.2026-11.io.nvmfd:later"
        d["subsystems"].append({"nqn": later, "attr": {"allow_any_host": "1"},
                                "allowed_hosts": [],
                                "namespaces": [{"device": {"path": "ram:2M"}, "enable": 1,
                                                "nsid": 1}]})
        d["ports"][0]["subsystems"].append(later)
        m, nlog = reload_with(d)
        c2 = Client(sock)
        sub = c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]
        # namespace 7, the host, the new subsystem, its namespace, its link
        lat = c2.call("nvmf_get_subsystems", {"nqn": later}).get("result", [{}])[0]
        check(m is not None and m.groups() == ("5", "0", "0") and
              7 in [n["nsid"] for n in sub["namespaces"]] and
              rh in [h["nqn"] for h in sub["hosts"]] and
              [n["nsid"] for n in lat.get("namespaces", [])] == [1] and
              len(lat.get("listen_addresses", [])) == 1,
              "sighup: namespace 7, a host, a new subsystem with its namespace and "
              "listener applied: %s; %s" %
              (m.group(0) if m else open(logp).read()[nlog:][-500:], lat))
        # and gone from the file again: deleted
        d["subsystems"] = [x for x in d["subsystems"] if x["nqn"] != later]
        d["ports"][0]["subsystems"].remove(later)
        m, nlog = reload_with(d)
        gone = c2.call("nvmf_get_subsystems", {"nqn": later})
        check(m is not None and m.groups() == ("1", "0", "0") and "error" in gone and
              c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0] == sub,
              "sighup: a subsystem gone from the file is deleted, the others untouched: "
              "%s %s" % (m.group(0) if m else open(logp).read()[nlog:][-500:], gone))
        # hosts and keys added over the socket are kept by a reload of a
        # file that does not mention them; the file's own changes apply
        key_a = "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:"
        key_b = "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:"
        kdir = os.path.join(work, "keys")
        os.mkdir(kdir)
        with open(os.path.join(kdir, "k.key"), "w") as f:
            f.write(key_a + "\n")
        os.chmod(os.path.join(kdir, "k.key"), 0o600)
        def saved_hosts():
            """hosts[] of the running config (save_config to a side file:
            without a filename it would write the -c file)."""
            side = os.path.join(work, "side.json")
            c2.call("save_config", {"filename": side})
            return json.load(open(side)).get("hosts", [])

        hr = "nqn.2014-08.org.nvmexpress:uuid:7e7e7e7e-0000-0000-0000-0000000000a1"
        hk = "nqn.2014-08.org.nvmexpress:uuid:7e7e7e7e-0000-0000-0000-0000000000a2"
        rc1, out1, err1 = nvmfctl("add-host", NQN, hr)
        # nvmfctl add-host with keys: a relative @FILE (made absolute) and a
        # controller key on standard input; never echoed
        p = subprocess.run([ctl, "-s", sock, "add-host", NQN, hk, "dhchap_key=@keys/k.key",
                            "dhchap_ctrlr_key=-"], input=key_b + "\n", cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT)
        hk_dh = [h for h in saved_hosts() if h["nqn"] == hk]
        check(rc1 == 0 and p.returncode == 0 and key_b not in p.stdout + p.stderr and
              hk_dh and hk_dh[0].get("dhchap", {}).get("key") ==
              "@" + os.path.join(work, "keys", "k.key") and
              hk_dh[0]["dhchap"].get("ctrl_key") == key_b,
              "nvmfctl add-host with dhchap_key=@FILE dhchap_ctrlr_key=-: rc %d %d %r %s" %
              (rc1, p.returncode, p.stderr, hk_dh))
        # usage errors: unknown key name, ctrlr key alone, two from stdin
        bad = [nvmfctl("add-host", NQN, hk, "key=" + key_a), nvmfctl("add-host", NQN, hk, key_a),
               nvmfctl("add-host", NQN, hk, "dhchap_ctrlr_key=" + key_b),
               nvmfctl("add-host", NQN, hk, "dhchap_key=-", "dhchap_ctrlr_key=-")]
        check(all(r[0] == 2 for r in bad) and
              all(key_a not in r[2] and key_b not in r[2] for r in bad),
              "nvmfctl add-host key usage errors exit 2 without the secret: %s" %
              [(r[0], r[2][:80]) for r in bad])
        # an inline secret, refused by nvmfd (the host has other keys): the
        # message does not carry it
        rc3, out3, err3 = nvmfctl("add-host", NQN, hk, "dhchap_key=" + key_b)
        check(rc3 == 1 and "already allowed" in err3 and key_b not in out3 + err3,
              "nvmfctl add-host inline key refused: rc %d %r" % (rc3, err3))
        # the file unchanged (d): both hosts and the keys stay, logged
        m, nlog = reload_with(d)
        after = c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]
        ahosts = [h["nqn"] for h in after["hosts"]]
        hk_dh = [h for h in saved_hosts() if h["nqn"] == hk]
        tail = open(logp).read()[nlog:]
        check(m is not None and hr in ahosts and hk in ahosts and hk_dh and
              hk_dh[0].get("dhchap", {}).get("key", "").startswith("@") and
              ("host %s kept: not in the file" % hr) in tail and
              ("host %s is not in the file" % hk) in tail,
              "sighup keeps hosts and keys added over the socket: %s %s; %s" %
              (ahosts, hk_dh, tail[-600:]))
        # the file drops rh (its own host): removed; the socket's hosts stay
        d["subsystems"][0]["allowed_hosts"].remove(rh)
        m, nlog = reload_with(d)
        ahosts = [h["nqn"] for h in
                  c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]["hosts"]]
        check(m is not None and rh not in ahosts and hr in ahosts and hk in ahosts,
              "sighup applies the file's own removal only: %s" % ahosts)
        # save_config to the -c file, then the file drops hr: now it is the file's
        rc, out, err = nvmfctl("save-config")
        d = json.load(open(cfgp))
        d["subsystems"][0]["allowed_hosts"].remove(hr)
        m, nlog = reload_with(d)
        ahosts = [h["nqn"] for h in
                  c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]["hosts"]]
        check(rc == 0 and m is not None and hr not in ahosts and hk in ahosts,
              "sighup after save-config: the file's removal of a saved host applies: %s" %
              ahosts)
        sub = c2.call("nvmf_get_subsystems", {"nqn": NQN})["result"][0]
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
