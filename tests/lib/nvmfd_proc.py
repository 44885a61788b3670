# SPDX-License-Identifier: MIT
"""nvmfd_proc.py - start and stop nvmfd from the Python tests (as
nvmfd_proc.sh does for the shell tests).

  sys.path.insert(0, <tests/lib>); from nvmfd_proc import wait_log, start, stop

control() sends one request to nvmfd's control socket (--control) and
returns its JSON reply.
"""
import json
import re
import socket
import subprocess
import time

LISTENING = r"listening on 127\.0\.0\.1:(\d+)"


def wait_log(path, pattern, proc, tries=100):
    """The first match of @pattern in the file @path, polled every 0.1 s
    for @tries rounds, or None; stops early (one last look) once @proc has
    exited."""
    pat = re.compile(pattern)
    for _ in range(tries):
        with open(path) as f:
            m = pat.search(f.read())
        if m:
            return m
        if proc is not None and proc.poll() is not None:
            with open(path) as f:
                return pat.search(f.read())
        time.sleep(0.1)
    return None


def start(argv, logpath, ready=LISTENING, tries=100, cwd=None):
    """Run @argv with stdout and stderr to @logpath and wait for @ready in
    the log. Return (proc, match), or (None, None) when it exited or never
    got ready (then it is killed and reaped)."""
    log = open(logpath, "w")
    proc = subprocess.Popen(argv, stdout=log, stderr=log, cwd=cwd)
    log.close()
    m = wait_log(logpath, ready, proc, tries)
    if not m or proc.poll() is not None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        return None, None
    return proc, m


def recv_line(sock, size=65536):
    """Read from @sock until a newline or EOF; return the bytes read
    (nvmfd's control replies are one line each)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(size)
        if not chunk:
            break
        data += chunk
    return data


def control(path, req, timeout=10):
    """Send @req (a dict, e.g. {"cmd": "stats"}) as one JSON line to the
    control socket @path; return the decoded one-line reply. Raises
    OSError (no socket, timeout) or ValueError (not JSON)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall((json.dumps(req) + "\n").encode())
        return json.loads(recv_line(s))
    finally:
        s.close()


def stop(proc, timeout=60):
    """SIGTERM, SIGKILL after @timeout s; return the exit status."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
