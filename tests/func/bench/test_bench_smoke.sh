#!/bin/bash
# nvmf-bench end to end: the 2-cell smoke scenario (2 s per cell, repeat
# 1) produces every output file with sane values, and no process it
# started survives it - neither after a normal run nor after SIGTERM in
# the middle of a run. The bench runs in a session of its own, so every
# process it ever started (whatever its process group) carries that
# session id and can be looked for afterwards.
set -u
: "${NVMF_BENCH:?}" "${BENCH_TESTDIR:?}"
. "$BENCH_TESTDIR/lib.sh"

command -v setsid > /dev/null || { echo "SKIP: no setsid"; exit 77; }

# run_in_session OUT ARGS...: start the bench as a session leader in the
# background; its pid (= session id) is written to $tmp/sid.
run_in_session() {
	setsid -w sh -c 'echo $$ > "$0"; exec "$@"' "$tmp/sid" "$NVMF_BENCH" "$@" &
	bgpid=$!
	for _ in $(seq 100); do [ -s "$tmp/sid" ] && break; sleep 0.05; done
	sid=$(cat "$tmp/sid")
}

# leftovers SID: processes still in the session
leftovers() {
	ps -e -o sid= -o pid= -o comm= | awk -v s="$1" '$1 == s'
}


ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# cgdir FILE: the cgroup directory nvmf-bench said it uses (stderr), or ""
cgdir() { sed -n 's/^nvmf-bench: isolation: cpuset cgroups (v[12]) under \(.*\)$/\1/p' "$1"; }

# 1. normal run
out=$tmp/run1
run_in_session -o "$out" --no-progress "$BENCH_TESTDIR/smoke.json" 2>"$tmp/run1.err"
wait $bgpid
rc=$?
[ $rc -eq 0 ] && ok "smoke run exit 0" || bad "smoke run exit $rc"
left=$(leftovers "$sid")
[ -z "$left" ] && ok "no stray process after the run" || bad "stray processes: $left"
for f in report.md cells.csv cells.json raw/smoke/bound/rep1/perf-0.json raw/smoke/bound/rep1/nvmfd.log \
	raw/smoke/bound/rep1/stats.json raw/smoke/unbound-hog/rep1/contention.log; do
	[ -s "$out/$f" ] && ok "$f written" || bad "$f missing or empty"
done
if command -v gnuplot > /dev/null; then
	for f in smoke-bars.png smoke-latency.png; do
		[ -s "$out/plots/$f" ] && ok "plots/$f written" || bad "plots/$f missing"
	done
fi
csv=$out/cells.csv
[ "$(grep -c '^smoke,' "$csv")" -eq 2 ] && ok "2 cells in cells.csv" || bad "cells.csv rows: $(cat "$csv")"
# regression: a series with a comma ("hdr,data") shifted every later column
python3 - "$csv" <<'EOF_PY' && ok "cells.csv: every row has the header's fields; a series with a comma is one field" || bad "cells.csv fields: $(cat "$csv")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
bad = [len(r) for r in rows[1:] if len(r) != len(rows[0])]
series = [r[rows[0].index("series")] for r in rows[1:]]
sys.exit(1 if bad or "unbound, hog" not in series else 0)
EOF_PY
for cell in bound unbound-hog; do
	iops=$(col "$csv" $cell iops)
	ge "$iops" 1 && ok "$cell: iops $iops > 0" || bad "$cell: iops '$iops'"
	[ "$(col "$csv" $cell runs_ok)" = 1 ] && ok "$cell: 1 run ok" || bad "$cell: runs_ok $(col "$csv" $cell runs_ok)"
	prev=0
	for p in lat_min p50 p90 p99 p99.9 p99.99 lat_max; do
		v=$(col "$csv" $cell $p)
		ge "$v" "$prev" && ge "$v" 0.001 || bad "$cell: $p=$v not >= previous percentile $prev"
		prev=$v
	done
	ok "$cell: latency percentiles monotone, max $prev us"
	avg=$(col "$csv" $cell lat_avg)
	ge "$avg" "$(col "$csv" $cell lat_min)" && ge "$(col "$csv" $cell lat_max)" "$avg" &&
		ok "$cell: min <= avg $avg <= max" || bad "$cell: avg $avg outside min..max"
	cpu=$(col "$csv" $cell target_cpu)
	ge "$cpu" 0.1 && ok "$cell: target CPU $cpu %" || bad "$cell: target_cpu '$cpu'"
	ev=$(col "$csv" $cell cq_events_s)
	cpe=$(col "$csv" $cell compl_per_event)
	ge "$ev" 1 && ge "$cpe" 1 && ok "$cell: $ev completion events/s, $cpe per event" ||
		bad "$cell: cq_events_s '$ev' compl_per_event '$cpe'"
done
# the host's mode: bound unless the cell's extra_args name one (nvmf-perf's
# own default is auto)
python3 - "$out/raw/smoke" <<'EOF_PY' && ok "host exec: bound by default, the cell's own otherwise" || bad "host exec"
import json, sys
for cell, want in (("bound", "bound"), ("unbound-hog", "unbound")):
    d = json.load(open("%s/%s/rep1/perf-0.json" % (sys.argv[1], cell)))
    if d["config"]["exec"] != want:
        print("  %s: nvmf-perf config.exec %s, want %s" % (cell, d["config"]["exec"], want))
        sys.exit(1)
EOF_PY
[ "$(col "$csv" bound ratio)" = "1.0000" ] && ok "baseline ratio 1" || bad "baseline ratio $(col "$csv" bound ratio)"
ge "$(col "$csv" unbound-hog ratio)" 0.0001 && ok "ratio of unbound-hog" || bad "no ratio for unbound-hog"
grep -q '^| bound | 1/1 |' "$out/report.md" && grep -q '^| unbound-hog | 1/1 |' "$out/report.md" &&
	ok "report.md has both rows" || bad "report.md rows missing"
grep -q 'hog on CPUs' "$out/report.md" && ok "report.md records the contention" || bad "contention not recorded"
grep -q '"runs_ok":1' "$out/cells.json" || grep -q '"runs_ok": 1' "$out/cells.json" &&
	ok "cells.json has runs" || bad "cells.json lacks runs_ok"
grep -q -- '--exec unbound' "$out/cells.json" && ok "cells.json records the target flags" ||
	bad "cells.json lacks the target command"

[ -e "/tmp/nvmf-bench.$sid" ] && bad "socket directory /tmp/nvmf-bench.$sid left after the run" ||
	ok "socket directory removed after the run"
# isolation: cpuset cgroups where writable, else affinity only; the report says which
grep -q '^nvmf-bench: isolation: ' "$tmp/run1.err" && ok "stderr: $(grep '^nvmf-bench: isolation' "$tmp/run1.err")" ||
	bad "no isolation line on stderr"
grep -q '^- isolation: \(cpuset cgroups (v[12]) under\|affinity only (\)' "$out/report.md" &&
	ok "report.md says the isolation" || bad "report.md lacks the isolation line"
grep -q '(cpuset cgroups (v[12]))$\|(affinity only)$' "$out/report.md" && ok "report.md: isolation per cell" ||
	bad "report.md lacks the isolation per cell"
cg=$(cgdir "$tmp/run1.err")
if [ -n "$cg" ]; then
	[ -e "$cg" ] && bad "cgroup $cg left after the run" || ok "cgroup $cg removed after the run"
fi
# target syscalls: perf stat where it can count them (the report says which), else not counted
if grep -q '^- target syscalls per I/O: `perf stat' "$out/report.md"; then
	v=$(col "$csv" bound target_syscalls_io)
	ge "$v" 0.01 && ok "perf stat: $v target syscalls per I/O" || bad "perf stat mode: target_syscalls_io '$v'"
	[ -s "$out/raw/smoke/bound/rep1/target-syscalls.csv" ] && ok "target-syscalls.csv kept" ||
		bad "no raw/.../target-syscalls.csv"
else
	grep -q '^- target syscalls per I/O: not counted' "$out/report.md" && ok "report: syscalls not counted" ||
		bad "report.md lacks the target syscalls line"
fi
# --syscalls strace (opt-in): the per-syscall table and a count per I/O
if command -v strace >/dev/null; then
	"$NVMF_BENCH" -o "$tmp/st" --no-progress --no-plots --syscalls strace --cells bound "$BENCH_TESTDIR/smoke.json" \
		2>"$tmp/st.err"; rc=$?
	v=$(col "$tmp/st/cells.csv" bound target_syscalls_io)
	[ $rc -eq 0 ] && ge "$v" 0.01 && grep -q ' total$' "$tmp/st/raw/smoke/bound/rep1/target-strace.txt" &&
		grep -q 'strace slows the target' "$tmp/st/report.md" && ok "--syscalls strace: $v per I/O, table kept" ||
		bad "--syscalls strace: exit $rc, '$v': $(tail -3 "$tmp/st.err")"
fi

# 2. SIGTERM in the middle of a run: exit 143, partial report, no stray
out=$tmp/run2
rm -f "$tmp/sid"
run_in_session -o "$out" --no-progress --no-plots -d 5 "$BENCH_TESTDIR/smoke.json" 2>"$tmp/run2.err"
# wait until a run is under way (nvmfd and nvmf-perf started), then stop
for _ in $(seq 200); do
	leftovers "$sid" | grep -q 'nvmf-perf' && break
	sleep 0.05
done
cg=$(cgdir "$tmp/run2.err")
if [ -n "$cg" ]; then
	# the target and the initiator run in their roles' cpuset cgroups
	for pair in nvmfd:target nvmf-perf:initiator; do
		p=$(leftovers "$sid" | awk -v c="${pair%%:*}" '$3 == c { print $2; exit }')
		grep -q "nvmf-bench.$sid/${pair#*:}\$" "/proc/$p/cgroup" 2>/dev/null &&
			ok "${pair%%:*} is in the cgroup ${pair#*:}" ||
			bad "${pair%%:*} ($p) not in $cg/${pair#*:}: $(cat "/proc/$p/cgroup" 2>&1)"
	done
	# the smoke cells use the default sets: lower half of the online CPUs for the target
	n=$(getconf _NPROCESSORS_ONLN); h=$((n / 2 > 0 ? n / 2 : 1))
	want=$([ "$h" -eq 1 ] && echo 0 || echo "0-$((h - 1))")
	[ "$(cat "$cg/target/cpuset.cpus")" = "$want" ] && ok "cgroup target: cpuset.cpus $want" ||
		bad "cgroup target: cpuset.cpus '$(cat "$cg/target/cpuset.cpus")', want '$want'"
fi
kill -TERM "$sid"
wait $bgpid
rc=$?
[ $rc -eq 143 ] && ok "SIGTERM: exit 143" || bad "SIGTERM: exit $rc"
left=$(leftovers "$sid")
[ -z "$left" ] && ok "no stray process after SIGTERM" || bad "stray processes after SIGTERM: $left"
grep -q 'interrupted' "$out/report.md" && ok "report.md marks the run interrupted" || bad "no interrupted mark"
grep -q 'gnuplot' "$tmp/run2.err" && bad "--no-plots warned about gnuplot: $(grep gnuplot "$tmp/run2.err")" ||
	ok "--no-plots: no gnuplot warning"
[ -e "/tmp/nvmf-bench.$sid" ] && bad "socket directory left after SIGTERM" || ok "socket directory removed after SIGTERM"
if [ -n "$cg" ]; then
	[ -e "$cg" ] && bad "cgroup $cg left after SIGTERM" || ok "cgroup $cg removed after SIGTERM"
fi

# 3. SIGKILL in the middle of a run: its socket directory stays behind (the
# control socket of the nvmfd it ran) and the next nvmf-bench removes it
out=$tmp/run3
rm -f "$tmp/sid"
run_in_session -o "$out" --no-progress --no-plots -d 5 "$BENCH_TESTDIR/smoke.json" 2>"$tmp/run3.err"
for _ in $(seq 200); do
	leftovers "$sid" | grep -q 'nvmf-perf' && break
	sleep 0.05
done
ls /tmp/nvmf-bench."$sid"/*.sock >/dev/null 2>&1 && ok "run 3 has its control socket in /tmp/nvmf-bench.$sid/" ||
	bad "no control socket in /tmp/nvmf-bench.$sid/: $(ls -la "/tmp/nvmf-bench.$sid" 2>&1)"
[ "$(stat -c %a "/tmp/nvmf-bench.$sid" 2>/dev/null)" = 700 ] && ok "socket directory is private (0700)" ||
	bad "socket directory mode $(stat -c %a "/tmp/nvmf-bench.$sid" 2>&1)"
kill -KILL "$sid" 2>/dev/null
wait $bgpid
# its children die with it (PR_SET_PDEATHSIG); make sure before going on
for _ in $(seq 100); do [ -z "$(leftovers "$sid")" ] && break; sleep 0.05; done
for p in $(leftovers "$sid" | awk '{ print $2 }'); do kill -KILL "$p" 2>/dev/null; done
[ -d "/tmp/nvmf-bench.$sid" ] || bad "SIGKILL: socket directory already gone (nothing to clean)"
cg=$(cgdir "$tmp/run3.err")
[ -z "$cg" ] || [ -d "$cg" ] || bad "SIGKILL: cgroup $cg already gone (nothing to clean)"
"$NVMF_BENCH" --dry-run "$BENCH_TESTDIR/smoke.json" >/dev/null 2>&1
[ -e "/tmp/nvmf-bench.$sid" ] && bad "stale socket directory /tmp/nvmf-bench.$sid not removed" ||
	ok "next nvmf-bench removed the stale socket directory"
if [ -n "$cg" ]; then
	[ -e "$cg" ] && bad "stale cgroup $cg not removed" || ok "next nvmf-bench removed the stale cgroup $cg"
fi

# regression: an argument list that does not fit is refused, never run cut
# short (the target's was not checked, the initiator's only by its last
# argument)
long=$(printf 'y%.0s' $(seq 17000))
cat >"$tmp/ovf.json" <<J
{"name": "ovf", "duration": 1, "warmup": 0, "repeat": 1,
 "defaults": {"target": {"backend": "null", "backend_size": "64M"}},
 "cells": [{"name": "p", "perf": {"extra_args": ["--x$long"]}},
           {"name": "t", "target": {"extra_args": ["--x$long"]}}]}
J
"$NVMF_BENCH" --no-progress --no-plots --syscalls off -o "$tmp/ovf" "$tmp/ovf.json" >"$tmp/ovf.out" 2>&1
grep -q 'ovf/p run 1: nvmf-perf argument list too long' "$tmp/ovf.out" &&
	grep -q 'ovf/t run 1: nvmfd argument list too long' "$tmp/ovf.out" &&
	ok "argument lists too long: refused with a reason" || bad "argument list overflow: $(tail -4 "$tmp/ovf.out")"

exit $fail
