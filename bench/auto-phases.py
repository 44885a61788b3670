#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""auto-phases.py - issue 10's phase-change scenario: one timeline of
queue-depth switches, contention that comes and goes and nearly idle gaps,
run once per execution mode per round (paired, shuffled order), scored as
bench/phases/auto-phases.json defines, with the placement and polling of
every queue sampled every 200 ms for a mode-over-time plot.

nvmf-bench runs one steady condition per cell; a timeline with phases
needs several nvmf-perf runs against one nvmfd and load started and
stopped in the middle of them, so it is this separate driver (it uses the
same binaries and nvmfd's --control stats).

Usage: bench/auto-phases.py [--bin DIR] [--rounds N] [--scale F] [--seed N]
                            [--modes a,b,...] [--out DIR] [PHASES.json]

  --bin DIR    nvmfd and nvmf-perf (default: build/bin of this tree)
  --rounds N   rounds (default 3); every mode runs the timeline once per round
  --scale F    multiply every phase length by F (default 1.0)
  --seed N     order of the modes in each round (default 1)
  --modes LIST subset of the file's modes (default all)
  --out DIR    results (default results/auto-phases-<UTC time>)
  --report DIR rewrite DIR/summary.md from DIR/results.json of an earlier
               run (the intervals need DIR's rounds and nvmf-bench in --bin)

Writes DIR/summary.md (scores, paired ratios against auto with 95 %
intervals from nvmf-bench --ratio-ci, per-phase IOPS and latency,
machine load), DIR/results.json, DIR/nvmfd-<mode>-r<N>.log,
DIR/timeline-<mode>-r<N>.csv
(t, phase, queue, placement, poll_us, cpu, target CPU % of the last
interval) and, with gnuplot, DIR/mode-over-time.png (the auto run of the
first round: per queue its placement, CPU and idle-poll period, and
nvmfd's CPU). Exit 0, or 2 on a usage or setup error.
"""
import argparse
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

NQN = "nqn.2026-11.io.nvmfd:phases"
PLACE = {"bound": 0, "moved": 1, "unbound": 2}


def control(sock, cmd="stats"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2.0)
    try:
        s.connect(sock)
        s.sendall(json.dumps({"cmd": cmd}).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            b = s.recv(1 << 16)
            if not b:
                break
            buf += b
        return json.loads(buf)
    finally:
        s.close()


def task_cpu_ns(pid):
    """Sum of the threads' time on CPU (schedstat field 1), ns."""
    tot = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                    tot += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return tot


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def psi_some10():
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return float("nan")


class Sampler(threading.Thread):
    """Every 200 ms: each queue's exec section and nvmfd's CPU share."""

    def __init__(self, sock, pid, t0):
        super().__init__(daemon=True)
        self.sock, self.pid, self.t0 = sock, pid, t0
        self.phase = "start"
        self.rows = []
        self.stop = threading.Event()

    def run(self):
        last_t, last_c = time.monotonic(), task_cpu_ns(self.pid)
        while not self.stop.wait(0.2):
            now, c = time.monotonic(), task_cpu_ns(self.pid)
            cpu_pct = 100.0 * (c - last_c) / 1e9 / (now - last_t) if now > last_t else 0.0
            last_t, last_c = now, c
            try:
                st = control(self.sock)
            except (OSError, ValueError):
                continue
            t = now - self.t0
            qs = [q for p in st.get("ports", []) for q in p.get("queues", [])]
            if not qs:
                self.rows.append((t, self.phase, -1, "", 0, -1, cpu_pct))
            for q in qs:
                ex = q.get("exec", {})
                self.rows.append((t, self.phase, q.get("id", -1), ex.get("mode", ""),
                                  ex.get("poll_us", 0), ex.get("cpu", q.get("io_cpu", -1)),
                                  cpu_pct))


def cpuset_last():
    return str(max(os.sched_getaffinity(0)))


def run_timeline(cfg, mode, args, rdir, rnd):
    phases = cfg["phases"]
    tmp = tempfile.mkdtemp(prefix="auto-phases.")
    sock = os.path.join(tmp, "ctl.sock")
    log = open(os.path.join(rdir, f"nvmfd-{mode}-r{rnd}.log"), "w")
    cmd = [os.path.join(args.bin, "nvmfd"), "-l", "127.0.0.1:0", "-s", NQN, "-n",
           cfg["target"]["backend"], "--allow-any-host", "--control", sock,
           "--log-level", "info"] + cfg["modes"][mode]
    nv = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    res = {"mode": mode, "cmd": " ".join(cmd), "phases": [], "errors": []}
    try:
        port = None
        for _ in range(200):
            time.sleep(0.05)
            try:
                port = control(sock)["ports"][0]["trsvcid"]
                break
            except (OSError, ValueError, KeyError, IndexError):
                if nv.poll() is not None:
                    break
        if not port:
            res["errors"].append("nvmfd did not start")
            return res
        trid = f"trtype:TCP traddr:127.0.0.1 trsvcid:{port} subnqn:{NQN}"
        t0 = time.monotonic()
        c0 = task_cpu_ns(nv.pid)
        smp = Sampler(sock, nv.pid, t0)
        smp.start()
        ld = cfg["contention"]
        for ph in phases:
            secs = max(1, int(round(ph["seconds"] * args.scale)))
            smp.phase = ph["name"]
            pcmd = [os.path.join(args.bin, "nvmf-perf"), "-r", trid, "-q", str(ph["qd"]),
                    "-o", cfg["perf"]["io_size"], "-w", cfg["perf"]["pattern"],
                    "-P", str(cfg["perf"]["queues"]), "-t", str(secs), "--json",
                    # the host's mode: the file's (bound, as measured since
                    # session 26; nvmf-perf's default is auto since 30)
                    "--exec", cfg["perf"].get("exec", "bound")]
            if ph.get("rate"):
                pcmd += ["--rate", str(ph["rate"])]
            timers, load = [], {}

            def start_load():
                scmd = ["stress-ng", "--cpu", str(ld["workers"]), "--taskset",
                        cpuset_last() if ld["cpus"] == "last" else ld["cpus"],
                        "--timeout", "0", "-q"]
                load["p"] = subprocess.Popen(scmd, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, start_new_session=True,
                                             preexec_fn=lambda: os.nice(ld["nice"]))

            def stop_load():
                p = load.pop("p", None)
                if p:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait()

            if ph.get("load"):
                a, b = ph["load"]
                timers = [threading.Timer(a * args.scale, start_load),
                          threading.Timer(b * args.scale, stop_load)]
                for t in timers:
                    t.start()
            ts = time.monotonic()
            cp = task_cpu_ns(nv.pid)
            pr = subprocess.run(pcmd, capture_output=True, text=True, timeout=secs + 60)
            for t in timers:
                t.join()
            stop_load()
            out = {"name": ph["name"], "seconds": secs, "qd": ph["qd"],
                   "rate": ph.get("rate", 0), "wall_s": time.monotonic() - ts,
                   "cpu_s": (task_cpu_ns(nv.pid) - cp) / 1e9, "rc": pr.returncode}
            try:
                tot = json.loads(pr.stdout)["total"]
                out.update(ios=tot["ios"], iops=tot["iops"], lat_avg=tot["latency_us"]["avg"],
                           p50=tot["latency_us"]["p50"], p99=tot["latency_us"]["p99"])
            except (ValueError, KeyError, TypeError):
                out.update(ios=0, iops=0, lat_avg=float("nan"), p50=float("nan"),
                           p99=float("nan"))
            if pr.returncode:
                last = pr.stderr.strip().splitlines()
                res["errors"].append(f"{ph['name']}: nvmf-perf exit {pr.returncode}"
                                     + (f": {last[-1]}" if last else ""))
            res["phases"].append(out)
        res["cpu_s"] = (task_cpu_ns(nv.pid) - c0) / 1e9
        res["wall_s"] = time.monotonic() - t0
        smp.stop.set()
        smp.join()
        res["timeline"] = smp.rows
    finally:
        if nv.poll() is None:
            os.killpg(nv.pid, signal.SIGTERM)
            try:
                nv.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(nv.pid, signal.SIGKILL)
                nv.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    io = [p for p in res["phases"] if not p["rate"] and p["ios"]]
    n = sum(p["ios"] for p in io)
    res["lat_w"] = sum(p["ios"] * p["lat_avg"] for p in io) / n if n else float("nan")
    return res


def median(xs):
    xs = sorted(x for x in xs if x == x)
    if not xs:
        return float("nan")
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def plot(rdir, csv, title):
    if not shutil.which("gnuplot"):
        return False
    marks, seen = [], set()
    with open(csv) as f:
        next(f)
        for line in f:
            t, ph = line.split(",")[:2]
            if ph not in seen:
                seen.add(ph)
                marks.append(f"set arrow from {t}, graph 0 to {t}, graph 1 nohead dt 2 lc rgb '#999999'\n"
                             f"set label '{ph}' at {t}, graph 1.04 font ',8'")
    gp = "\n".join(marks) + f"""
set terminal pngcairo size 1200,900
set output '{rdir}/mode-over-time.png'
set datafile separator ','
set multiplot layout 4,1 title '{title}'
set ylabel 'placement'
set yrange [-0.5:2.5]
set ytics ('bound' 0, 'moved' 1, 'unbound' 2)
set key off
plot '{csv}' using 1:(strcol(4) eq 'bound' ? 0 : strcol(4) eq 'moved' ? 1 : strcol(4) eq 'unbound' ? 2 : 1/0):3 with points pt 7 ps 0.6 lc variable
set ylabel 'cpu (unbound: hint)'
set yrange [-0.5:*]
set ytics 1
plot '{csv}' using 1:6:3 with points pt 7 ps 0.6 lc variable
set ylabel 'idle poll (us)'
set yrange [-10:250]
set ytics auto
plot '{csv}' using 1:5:3 with points pt 7 ps 0.6 lc variable
set ylabel 'nvmfd CPU (%)'
set yrange [0:*]
set xlabel 'time (s)'
plot '{csv}' using 1:7 with lines lc rgb '#444444'
unset multiplot
"""
    with open(os.path.join(rdir, "plot.gp"), "w") as f:
        f.write(gp)
    return subprocess.run(["gnuplot", os.path.join(rdir, "plot.gp")]).returncode == 0


def ratio_ci(bench, a, b, seed):
    """Paired ratio a / b over rounds with the 95 % interval nvmf-bench's
    reports use (nvmf-bench --ratio-ci), or None without nvmf-bench."""
    if not os.access(bench, os.X_OK):
        return None
    pr = subprocess.run([bench, "--ratio-ci", "-S", str(seed), ",".join("%.9g" % x for x in a),
                         ",".join("%.9g" % x for x in b)], capture_output=True, text=True)
    if pr.returncode:
        return None
    try:
        return json.loads(pr.stdout)
    except ValueError:
        return None


def timeline_phase_cpu(rdir, mode, rnd):
    """nvmfd CPU-s per phase integrated from a timeline CSV's samples (for
    runs recorded before the phases carried their own cpu_s)."""
    per, prev, seen = {}, 0.0, {}
    try:
        with open(os.path.join(rdir, f"timeline-{mode}-r{rnd}.csv")) as f:
            next(f)
            for line in f:
                c = line.rstrip("\n").split(",")
                seen[float(c[0])] = (c[1], float(c[6]))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    for t in sorted(seen):
        ph, pct = seen[t]
        per[ph] = per.get(ph, 0.0) + pct / 100 * (t - prev)
        prev = t
    return per


def work_scores(rdir, rounds, modes):
    """score_work (bench/phases/auto-phases.json): per round and mode, C_w =
    the CPU-s each I/O phase took scaled to the round's median I/O count of
    that phase (the cost of the same work), the rest of the timeline's CPU
    as measured; score_work = L / median_L + C_w / median_C_w. Also the CPU
    us per I/O of every phase. Sets x["cpu_work"], x["score_work"] and
    p["cpu_us_io"]; returns False when a run has no per-phase CPU."""
    for i, rr in enumerate(rounds):
        runs = {m: rr["runs"][m] for m in modes}
        for m, x in runs.items():
            if any("cpu_s" not in p for p in x["phases"]):
                per = timeline_phase_cpu(rdir, m, i + 1)
                if per is None:
                    return False
                for p in x["phases"]:
                    p["cpu_s"] = per.get(p["name"], 0.0)
        for m, x in runs.items():
            cw = x.get("cpu_s", float("nan")) - sum(p["cpu_s"] for p in x["phases"])
            for j, p in enumerate(x["phases"]):
                med = median([runs[o]["phases"][j]["ios"] for o in modes
                              if len(runs[o]["phases"]) > j])
                if p["rate"] or not p["ios"] or not med:
                    cw += p["cpu_s"]
                    p["cpu_us_io"] = float("nan")
                else:
                    cw += p["cpu_s"] * med / p["ios"]
                    p["cpu_us_io"] = p["cpu_s"] / p["ios"] * 1e6
            x["cpu_work"] = cw
        lm = median([x["lat_w"] for x in runs.values()])
        cm = median([x["cpu_work"] for x in runs.values()])
        for x in runs.values():
            x["score_work"] = x["lat_w"] / lm + x["cpu_work"] / cm
    return True


def ratio_cells(bench, rounds, m, keys, seed):
    """The paired-ratio cells of mode @m against auto for @keys, and the
    first key's interval."""
    cells, first = [], None
    for k in keys:
        a = [rr["runs"][m].get(k, float("nan")) for rr in rounds]
        b = [rr["runs"]["auto"].get(k, float("nan")) for rr in rounds]
        ci = ratio_ci(bench, a, b, seed)
        if not ci:
            cells.append("(nvmf-bench missing)")
        elif not ci["valid"]:
            cells.append("%.2f" % ci["ratio"])
        else:
            cells.append("%.2f [%.2f, %.2f]%s" % (ci["ratio"], ci["lo"], ci["hi"],
                                                  "" if ci["differs"] else " no difference"))
        if first is None:
            first = ci
    return cells, first


def ratio_table(bench, rounds, modes, keys, seed, what):
    """Rows of mode / auto ratios for @keys (the first is the score whose
    per-round ratios end each row), then the win verdict on it."""
    rows, verdict = [], []
    for m in modes:
        if m == "auto":
            continue
        cells, ci = ratio_cells(bench, rounds, m, keys, seed)
        verdict.append((m, ci))
        rs = [rr["runs"][m][keys[0]] / rr["runs"]["auto"][keys[0]] for rr in rounds]
        rows.append("| %s | %s | %s |" % (m, " | ".join(cells), ", ".join("%.2f" % x for x in rs)))
    wins = [m for m, ci in verdict if ci and ci["valid"] and ci["differs"] and ci["lo"] > 1]
    return rows + ["", f"auto wins on {what} (ratio's interval above 1.0 against every other "
                   "mode): " + ("yes" if len(wins) == len(verdict) else
                                "no; shown against: " + (", ".join(wins) or "none"))]


def report(rdir, cfg, bindir):
    """DIR/summary.md (and the plot) from DIR/results.json."""
    with open(os.path.join(rdir, "results.json")) as f:
        res = json.load(f)
    rounds = res["rounds"]
    modes = res.get("modes") or [m for m in cfg["modes"] if m in rounds[0]["runs"]]
    nr = len(rounds)
    load0 = res.get("load0", rounds[0]["load"][0])
    psi0 = res.get("psi0", rounds[0]["psi"][0])
    bench = os.path.join(bindir, "nvmf-bench")
    work = work_scores(rdir, rounds, modes)
    out = [f"# auto-phases: {nr} rounds, scale {res['scale']}, seed {res['seed']}", "",
           f"{res['start']} to {res['end']}; load average {load0:.1f} at the start, PSI cpu "
           f"some avg10 {psi0:.0f} %; before each run: load "
           + ", ".join("%.1f" % x for rr in rounds for x in rr["load"]) + "; PSI "
           + ", ".join("%.0f" % x for rr in rounds for x in rr["psi"]) + ".", "",
           cfg["score"], "",
           "| mode | score (median) | L: weighted latency us (median) | C: nvmfd CPU-s (median) "
           "| failed phases |", "|---|---|---|---|---|"]
    for m in modes:
        xs = [rr["runs"][m] for rr in rounds]
        fails = sum(1 for x in xs for p in x["phases"] if p["rc"])
        out.append("| %s | %.2f | %.0f | %.2f | %d |" % (
            m, median([x["score"] for x in xs]), median([x["lat_w"] for x in xs]),
            median([x.get("cpu_s", float("nan")) for x in xs]), fails))
    if "auto" in modes:
        out += ["", "Paired ratios mode / auto over the rounds (geometric mean, 95 % "
                "expanded-percentile bootstrap interval as in nvmf-bench's reports; an "
                "interval containing 1.0 is no difference; fewer than 5 rounds cannot "
                "reach 95 %). Above 1.0: the mode did worse than auto (score, L, C are "
                "all lower-is-better).", "",
                "| mode | score ratio [95 % CI] | L ratio [95 % CI] | C ratio [95 % CI] "
                "| per round (score) |", "|---|---|---|---|---|"]
        out += ratio_table(bench, rounds, modes, ("score", "lat_w", "cpu_s"), res["seed"],
                           "the score")
        if work and cfg.get("score_work"):
            out += ["", cfg["score_work"], "",
                    "| mode | score_work ratio [95 % CI] | C_w ratio [95 % CI] | per round "
                    "(score_work) |", "|---|---|---|---|"]
            out += ratio_table(bench, rounds, modes, ("score_work", "cpu_work"), res["seed"],
                               "score_work")
    out += ["", "Per phase, median over rounds (IOPS / average latency us):", "",
            "| phase | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for i, ph in enumerate(cfg["phases"]):
        cells = []
        for m in modes:
            ps = [rr["runs"][m]["phases"][i] for rr in rounds if len(rr["runs"][m]["phases"]) > i]
            cells.append("%.0f / %.0f" % (median([p["iops"] for p in ps]),
                                          median([p["lat_avg"] for p in ps])))
        out.append(f"| {ph['name']} | " + " | ".join(cells) + " |")
    if work:
        out += ["", "Per I/O phase, nvmfd CPU us per I/O (median over rounds):", "",
                "| phase | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
        for i, ph in enumerate(cfg["phases"]):
            if ph.get("rate"):
                continue
            cells = []
            for m in modes:
                ps = [rr["runs"][m]["phases"][i] for rr in rounds
                      if len(rr["runs"][m]["phases"]) > i]
                cells.append("%.1f" % median([p.get("cpu_us_io", float("nan")) for p in ps]))
            out.append(f"| {ph['name']} | " + " | ".join(cells) + " |")
    errs = [f"round {i + 1} {m}: {e}" for i, rr in enumerate(rounds)
            for m in modes for e in rr["runs"][m]["errors"] if e]
    if errs:
        out += ["", "Errors:", ""] + [f"- {e}" for e in errs]
    if "auto" in modes and os.path.exists(os.path.join(rdir, "timeline-auto-r1.csv")) and \
            plot(rdir, os.path.join(rdir, "timeline-auto-r1.csv"),
                 "auto, round 1: placement and idle-poll period per queue "
                 "(colour = queue), nvmfd CPU"):
        out += ["", "![mode over time](mode-over-time.png)"]
    with open(os.path.join(rdir, "summary.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=os.path.join(here, "phases", "auto-phases.json"))
    ap.add_argument("--bin", default=os.path.join(here, "..", "build", "bin"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--report", default="", metavar="DIR")
    args = ap.parse_args()
    try:
        with open(args.file) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        print(f"auto-phases: {args.file}: {e}", file=sys.stderr)
        return 2
    if args.report:
        try:
            report(args.report, cfg, args.bin)
        except (OSError, ValueError, KeyError) as e:
            print(f"auto-phases: --report {args.report}: {e}", file=sys.stderr)
            return 2
        return 0
    modes = [m for m in (args.modes.split(",") if args.modes else cfg["modes"])]
    for m in modes:
        if m not in cfg["modes"]:
            print(f"auto-phases: no mode '{m}' in {args.file}", file=sys.stderr)
            return 2
    if args.rounds < 1 or args.scale <= 0:
        print("auto-phases: --rounds >= 1 and --scale > 0", file=sys.stderr)
        return 2
    for exe in ("nvmfd", "nvmf-perf"):
        if not os.access(os.path.join(args.bin, exe), os.X_OK):
            print(f"auto-phases: {args.bin}/{exe} not found", file=sys.stderr)
            return 2
    if not shutil.which("stress-ng"):
        print("auto-phases: stress-ng not found (scripts/install-deps.sh)", file=sys.stderr)
        return 2
    rdir = args.out or time.strftime("results/auto-phases-%Y%m%dT%H%M%SZ", time.gmtime())
    os.makedirs(rdir, exist_ok=True)
    rng = random.Random(args.seed)
    rounds = []
    start = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load0, psi0 = loadavg(), psi_some10()
    for r in range(args.rounds):
        order = modes[:]
        rng.shuffle(order)
        rr = {"order": order, "runs": {}, "load": [], "psi": []}
        for m in order:
            rr["load"].append(loadavg())
            rr["psi"].append(psi_some10())
            print(f"auto-phases: round {r + 1}/{args.rounds}: {m}", file=sys.stderr, flush=True)
            res = run_timeline(cfg, m, args, rdir, r + 1)
            with open(os.path.join(rdir, f"timeline-{m}-r{r + 1}.csv"), "w") as f:
                f.write("t_s,phase,queue,placement,poll_us,cpu,target_cpu_pct\n")
                for row in res.pop("timeline", []):
                    f.write("%.2f,%s,%d,%s,%d,%d,%.1f\n" % row)
            rr["runs"][m] = res
        lm = median([rr["runs"][m]["lat_w"] for m in order])
        cm = median([rr["runs"][m].get("cpu_s", float("nan")) for m in order])
        for m in order:
            x = rr["runs"][m]
            x["score"] = x["lat_w"] / lm + x.get("cpu_s", float("nan")) / cm
        rounds.append(rr)
    end = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with open(os.path.join(rdir, "results.json"), "w") as f:
        json.dump({"file": args.file, "scale": args.scale, "seed": args.seed, "start": start,
                   "end": end, "load0": load0, "psi0": psi0, "modes": modes,
                   "rounds": rounds}, f, indent=1)
    report(rdir, cfg, args.bin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
