#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rpc_trigger.py - lets the interop guest ask for live changes of nvmfd.

  rpc_trigger.py NVMFCTL SOCKET NQN PORTFILE

Listens on 127.0.0.1 (a free port, written to PORTFILE; the guest reaches
it as 10.0.2.2) and serves one line per connection:
  add           nvmfctl -s SOCKET add-ns NQN ram:32M  -> answers the NSID
  remove NSID   nvmfctl -s SOCKET remove-ns NQN NSID  -> answers "ok"
anything else, or a failing nvmfctl, answers "error: ...". Every request
and answer is printed (the host script keeps it as trigger.log). Runs until
killed.
"""
import socket
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    ctl, sock, nqn, portfile = sys.argv[1:5]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    with open(portfile, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    print("trigger listening on 127.0.0.1:%d" % srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        with conn:
            conn.settimeout(20)
            try:
                line = conn.makefile().readline().strip()
            except OSError:
                continue
            words = line.split()
            if words == ["add"]:
                args = ["add-ns", nqn, "ram:32M"]
            elif len(words) == 2 and words[0] == "remove" and words[1].isdigit():
                args = ["remove-ns", nqn, words[1]]
            else:
                args = None
            if args is None:
                answer = "error: unknown request '%s'" % line[:64]
            else:
                p = subprocess.run([ctl, "-s", sock] + args, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=30)
                if p.returncode != 0:
                    answer = "error: " + p.stderr.strip().replace("\n", " ")
                else:
                    answer = p.stdout.strip() if args[0] == "add-ns" else "ok"
            print("%r -> %r" % (line, answer), flush=True)
            try:
                conn.sendall((answer + "\n").encode())
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main())
