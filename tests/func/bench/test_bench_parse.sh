#!/bin/bash
# nvmf-bench scenario validation: every bad file exits 2 with one message
# naming the offending field path; the built-ins validate; the files in
# bench/scenarios are exactly what --write-scenarios produces.
set -u
: "${NVMF_BENCH:?}" "${BENCH_SCENARIOS:?}" "${BENCH_TESTDIR:?}"
. "$BENCH_TESTDIR/lib.sh"

# expect_bad NAME FIELD-TEXT JSON: exit status 2 and FIELD-TEXT on stderr
expect_bad() {
	local name=$1 want=$2 json=$3 rc
	printf '%s\n' "$json" > "$tmp/$name.json"
	"$NVMF_BENCH" --dry-run "$tmp/$name.json" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		bad "$name: exit $rc, want 2 ($(cat "$tmp/err"))"
	elif ! grep -qF -- "$want" "$tmp/err"; then
		bad "$name: message does not name '$want': $(cat "$tmp/err")"
	elif [ "$(wc -l < "$tmp/err")" -ne 1 ]; then
		bad "$name: want one line of error, got: $(cat "$tmp/err")"
	else
		ok "$name -> $(cat "$tmp/err")"
	fi
}

C='"cells": [{"name": "a"}]'
expect_bad not-json 'not valid JSON' '{"name": "x", '
expect_bad not-object '(top level): must be an object' '[1, 2]'
expect_bad no-name 'name: missing' "{ $C }"
expect_bad bad-name 'name: "a b"' "{\"name\": \"a b\", $C}"
expect_bad unknown-top 'colums: unknown field' "{\"name\": \"x\", \"colums\": [], $C}"
expect_bad no-cells 'cells: missing' '{"name": "x"}'
expect_bad empty-cells 'cells: must be a non-empty array' '{"name": "x", "cells": []}'
expect_bad cell-no-name 'cells[0].name: missing' '{"name": "x", "cells": [{}]}'
expect_bad dup-cell 'cells[1].name: "a" is already the name of cells[0]' \
	'{"name": "x", "cells": [{"name": "a"}, {"name": "a"}]}'
expect_bad qd-zero 'cells[1].perf.qd: 0 is out of range 1..1024' \
	'{"name": "x", "cells": [{"name": "a"}, {"name": "b", "perf": {"qd": 0}}]}'
expect_bad qd-string 'cells[0].perf.qd: must be an integer' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"qd": "deep"}}]}'
expect_bad perf-unknown 'cells[0].perf.depth: unknown field' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"depth": 4}}]}'
expect_bad exec-mode 'cells[0].target.exec: "sideways" is not one of: bound, unbound' \
	'{"name": "x", "cells": [{"name": "a", "target": {"exec": "sideways"}}]}'
expect_bad load-workers 'cells[0].contention.workers: -1 is out of range 0..1024' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"kind": "stress-ng", "workers": -1}}]}'
expect_bad load-session 'cells[0].contention.session: "other" is not one of: bench, own' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"kind": "stress-ng", "session": "other"}}]}'
expect_bad cq-pool 'cells[0].target.cq_pool' \
	'{"name": "x", "cells": [{"name": "a", "target": {"cq_pool": "global"}}]}'
expect_bad backend-poll-type 'cells[0].target.backend_poll: must be true or false' \
	'{"name": "x", "cells": [{"name": "a", "target": {"backend_poll": 1}}]}'
expect_bad extra-args 'cells[0].target.extra_args[1]: must be a string' \
	'{"name": "x", "cells": [{"name": "a", "target": {"extra_args": ["--x", 3]}}]}'
expect_bad perf-extra-args 'defaults.perf.extra_args: must be an array of strings' \
	'{"name": "x", "defaults": {"perf": {"extra_args": "--busy-poll"}}, "cells": [{"name": "a"}]}'
expect_bad backend-size 'cells[0].target.backend_size' \
	'{"name": "x", "cells": [{"name": "a", "target": {"backend_size": "12"}}]}'
expect_bad io-size 'defaults.perf.io_size: "4q" is not a size' \
	'{"name": "x", "defaults": {"perf": {"io_size": "4q"}}, "cells": [{"name": "a"}]}'
expect_bad io-size-align 'cells[0].perf.io_size: 1000 is not a multiple of 512' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"io_size": 1000}}]}'
expect_bad queues 'cells[0].perf.queues: "x*ncpu"' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"queues": "x*ncpu"}}]}'
expect_bad pattern 'cells[0].perf.pattern' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"pattern": "sideways"}}]}'
expect_bad digest 'cells[0].perf.digest' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"digest": "crc"}}]}'
expect_bad cpus-offline 'cells[0].contention.cpus: "1023" names a CPU that is not online' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"cpus": "1023"}}]}'
expect_bad cpus-syntax 'cells[0].contention.cpus: "0-" is not a CPU set' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"cpus": "0-"}}]}'
expect_bad load-kind 'cells[0].contention.kind' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"kind": "fire"}}]}'
expect_bad nice 'cells[0].contention.nice: 40 is out of range -20..19' \
	'{"name": "x", "cells": [{"name": "a", "contention": {"nice": 40}}]}'
expect_bad load-pct 'defaults.contention.load_pct: 0 is out of range 1..100' \
	'{"name": "x", "defaults": {"contention": {"load_pct": 0}}, "cells": [{"name": "a"}]}'
expect_bad duration 'cells[0].duration: 0 is out of range' \
	'{"name": "x", "cells": [{"name": "a", "duration": 0}]}'
expect_bad repeat 'repeat: 0 is out of range 1..100' "{\"name\": \"x\", \"repeat\": 0, $C}"
expect_bad quick-key 'quick.repeats: unknown field' "{\"name\": \"x\", \"quick\": {\"repeats\": 1}, $C}"
expect_bad baseline 'baseline: "nope" is not the name of a cell' "{\"name\": \"x\", \"baseline\": \"nope\", $C}"
expect_bad cell-baseline 'cells[0].baseline: "nope" is not the name of a cell' \
	'{"name": "x", "cells": [{"name": "a", "baseline": "nope"}]}'
expect_bad columns 'columns[1]: unknown metric "speed"' "{\"name\": \"x\", \"columns\": [\"iops\", \"speed\"], $C}"
expect_bad pivot 'pivot: 3 is more than the 2 columns' \
	"{\"name\": \"x\", \"columns\": [\"iops\", \"p99\"], \"pivot\": 3, $C}"
expect_bad defaults-key 'defaults.cells: unknown field' "{\"name\": \"x\", \"defaults\": {\"cells\": 1}, $C}"
expect_bad section-type 'cells[0].target: must be an object' \
	'{"name": "x", "cells": [{"name": "a", "target": "bound"}]}'
expect_bad deadline 'cells[0].target.io_work_deadline_us: 10000001 is out of range 0..10000000' \
	'{"name": "x", "cells": [{"name": "a", "target": {"io_work_deadline_us": 10000001}}]}'
# 0 is what nvmfd accepts too (its default deadline, as bench/README says)
echo '{"name": "x", "cells": [{"name": "a", "target": {"io_work_deadline_us": 0}}]}' >"$tmp/dl0.json"
"$NVMF_BENCH" --dry-run "$tmp/dl0.json" >/dev/null 2>"$tmp/err" && ok "io_work_deadline_us 0 accepted" ||
	bad "io_work_deadline_us 0 rejected: $(cat "$tmp/err")"
[ -n "${BENCH_README:-}" ] && { grep -qF '`--io-work-deadline-us` | 0..10000000' "$BENCH_README" &&
	ok "README range 0..10000000" || bad "bench/README io_work_deadline_us range"; }

# the keys of issue 11: CPU sets of every role, the open-loop rate
expect_bad target-cpus-offline 'cells[0].target.cpus: "1023" names a CPU that is not online' \
	'{"name": "x", "cells": [{"name": "a", "target": {"cpus": "1023"}}]}'
expect_bad perf-cpus-syntax 'defaults.perf.cpus: "1-0" is not a CPU set' \
	'{"name": "x", "defaults": {"perf": {"cpus": "1-0"}}, "cells": [{"name": "a"}]}'
expect_bad perf-cpus-type 'cells[0].perf.cpus: must be a string' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"cpus": 1}}]}'
expect_bad rate-negative 'cells[0].perf.rate: -5 is out of range 0..100000000' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"rate": -5}}]}'
expect_bad rate-type 'cells[1].perf.rate: must be an integer' \
	'{"name": "x", "cells": [{"name": "a"}, {"name": "b", "perf": {"rate": "fast"}}]}'
expect_bad rate-big 'defaults.perf.rate: 100000001 is out of range' \
	'{"name": "x", "defaults": {"perf": {"rate": 100000001}}, "cells": [{"name": "a"}]}'
expect_bad one-process-type 'cells[0].perf.one_process: must be true or false' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"one_process": "yes"}}]}'
echo '{"name": "x", "cells": [{"name": "a", "perf": {"rate": 20000, "cpus": "last:1"},
	"target": {"cpus": "first:1"}, "contention": {"kind": "hog", "cpus": "target"}}]}' >"$tmp/iso.json"
"$NVMF_BENCH" --dry-run "$tmp/iso.json" >/dev/null 2>"$tmp/err" && ok "CPU sets and rate accepted" ||
	bad "CPU sets and rate rejected: $(cat "$tmp/err")"
for a in "--full --quick" "--seed -1" "--seed x" "--strict-tries 1" "--strict-tries 11" "--busy-cpus -0.5" "--busy-cpus x"; do
	# shellcheck disable=SC2086
	"$NVMF_BENCH" --dry-run $a "$tmp/iso.json" >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] && ok "bad $a: exit 2" || bad "bad $a: exit $rc"
done
"$NVMF_BENCH" --dry-run --seed 0x2a "$tmp/iso.json" > "$tmp/out" && grep -q 'order seed 42$' "$tmp/out" &&
	ok "--seed 0x2a is 42 in the plan" || bad "--seed not in the plan: $(cat "$tmp/out")"

"$NVMF_BENCH" --dry-run --full "$tmp/iso.json" > "$tmp/out" && grep -q '10 x (30 s + 5 s warmup)' "$tmp/out" &&
	ok "--full plans 10 rounds of 30 s + 5 s" || bad "--full plan: $(cat "$tmp/out")"
"$NVMF_BENCH" --dry-run --full -r 3 "$tmp/iso.json" > "$tmp/out" && grep -q ' 3 x (30 s' "$tmp/out" &&
	ok "--full -r 3: -r wins" || bad "--full -r 3 plan: $(cat "$tmp/out")"

# target.cpu_quota: CPUs worth of time, 0 (no limit) or 0.1 (the kernel's
# 1 ms per 10 ms period) up to the online CPUs
ncpu=$(getconf _NPROCESSORS_ONLN)
expect_bad quota-negative 'cells[0].target.cpu_quota: -0.5 is negative' \
	'{"name": "x", "cells": [{"name": "a", "target": {"cpu_quota": -0.5}}]}'
expect_bad quota-above-cpus "cells[1].target.cpu_quota: $((ncpu + 1)) is more than the $ncpu online CPUs" \
	"{\"name\": \"x\", \"cells\": [{\"name\": \"a\"}, {\"name\": \"b\", \"target\": {\"cpu_quota\": $((ncpu + 1))}}]}"
expect_bad quota-string 'defaults.target.cpu_quota: must be a number (got string)' \
	'{"name": "x", "defaults": {"target": {"cpu_quota": "0.5"}}, "cells": [{"name": "a"}]}'
expect_bad quota-bool 'cells[0].target.cpu_quota: must be a number (got boolean)' \
	'{"name": "x", "cells": [{"name": "a", "target": {"cpu_quota": true}}]}'
expect_bad quota-below-min 'cells[0].target.cpu_quota: 0.05 is below 0.1' \
	'{"name": "x", "cells": [{"name": "a", "target": {"cpu_quota": 0.05}}]}'
# a default for every cell, 0 in a cell lifts it; the plan shows it; SPDK twins keep it
echo "{\"name\": \"x\", \"spdk\": {\"twins\": \"target\"}, \"defaults\": {\"target\": {\"cpu_quota\": 0.5}},
	\"cells\": [{\"name\": \"a\"}, {\"name\": \"b\", \"target\": {\"cpu_quota\": 0}},
	{\"name\": \"c\", \"target\": {\"cpu_quota\": $ncpu}}]}" >"$tmp/quota.json"
mkdir -p "$tmp/fake-spdk-q/build/bin" && touch "$tmp/fake-spdk-q/build/bin/nvmf_tgt" "$tmp/fake-spdk-q/build/bin/spdk_nvme_perf" &&
	chmod +x "$tmp/fake-spdk-q/build/bin/"*
NVMF_BENCH_SPDK="$tmp/fake-spdk-q" "$NVMF_BENCH" --dry-run "$tmp/quota.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && grep -q '^  a  *5 x .*\[target cpu_quota 0.5\]$' "$tmp/out" &&
	grep -q '^  b  *5 x (10 s + 1 s warmup)$' "$tmp/out" && grep -q "^  c  *5 x .*\[target cpu_quota $ncpu\]\$" "$tmp/out" &&
	grep -q '^  a.spdk  *5 x .*\[target cpu_quota 0.5\]$' "$tmp/out"; then
	ok "cpu_quota: default, 0 lifts it, the online CPUs allowed, twins keep it"
else
	bad "cpu_quota plan (exit $rc): $(cat "$tmp/out" "$tmp/err")"
fi

# the SPDK keys (issue 11 item 7): target.kind, perf.tool, the scenario's spdk.twins
expect_bad target-kind 'cells[0].target.kind: "kernel" is not one of: nvmfd, spdk' \
	'{"name": "x", "cells": [{"name": "a", "target": {"kind": "kernel"}}]}'
expect_bad perf-tool 'cells[0].perf.tool: "fio" is not one of: nvmf-perf, spdk_nvme_perf' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"tool": "fio"}}]}'
expect_bad spdk-exec 'cells[0].target.exec: an nvmfd option' \
	'{"name": "x", "cells": [{"name": "a", "target": {"kind": "spdk", "exec": "bound"}}]}'
expect_bad spdk-defaults-exec 'cells[1].target.idle_poll_us: an nvmfd option' \
	'{"name": "x", "defaults": {"target": {"idle_poll_us": 5}}, "cells": [{"name": "a"},
	 {"name": "b", "target": {"kind": "spdk"}}]}'
expect_bad spdk-file 'cells[0].target.backend: "file" is not available with target.kind "spdk"' \
	'{"name": "x", "cells": [{"name": "a", "target": {"kind": "spdk", "backend": "file"}}]}'
expect_bad spdk-perf-rate 'cells[0].perf.rate: an nvmf-perf option' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"tool": "spdk_nvme_perf", "rate": 1000}}]}'
expect_bad spdk-perf-busy 'cells[0].perf.busy_poll: an nvmf-perf option' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"tool": "spdk_nvme_perf", "busy_poll": true}}]}'
expect_bad latency-nvmf-perf 'cells[0].perf.latency: false (in the cell or its defaults) only with perf.tool "spdk_nvme_perf"' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"latency": false}}]}'
expect_bad latency-defaults 'cells[0].perf.latency: false (in the cell or its defaults) only with' \
	'{"name": "x", "defaults": {"perf": {"latency": false}}, "cells": [{"name": "a"}]}'
expect_bad latency-extra-L 'cells[0].perf.extra_args[1]: "-L" with perf.latency false' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"tool": "spdk_nvme_perf", "latency": false, "extra_args": ["-T", "-L"]}}]}'
expect_bad latency-type 'cells[0].perf.latency: must be true or false (got string)' \
	'{"name": "x", "cells": [{"name": "a", "perf": {"tool": "spdk_nvme_perf", "latency": "no"}}]}'
expect_bad spdk-twins 'spdk.twins: "all" is not one of: none, target, perf, both' \
	"{\"name\": \"x\", \"spdk\": {\"twins\": \"all\"}, $C}"
expect_bad spdk-key 'spdk.dir: unknown field' "{\"name\": \"x\", \"spdk\": {\"dir\": \"/opt\"}, $C}"
expect_bad spdk-type 'spdk: must be an object' "{\"name\": \"x\", \"spdk\": true, $C}"
expect_bad twin-name 'spdk.twins: cell name' \
	'{"name": "x", "spdk": {"twins": "perf"}, "cells": [{"name": "a234567890123456789012345678901234567890123456789012345"}]}'
expect_bad twin-clash 'spdk.twins: twin "a.spdk" has the name of cells[1]' \
	'{"name": "x", "spdk": {"twins": "target"}, "cells": [{"name": "a"}, {"name": "a.spdk"}]}'
# twins: one per cell and kind, skipped with a reason SPDK cannot run, all skipped without SPDK
cat >"$tmp/twins.json" <<'J'
{"name": "x", "spdk": {"twins": "both"}, "cells": [
 {"name": "a", "target": {"exec": "bound"}},
 {"name": "f", "target": {"backend": "file"}, "perf": {"rate": 2000}},
 {"name": "s", "target": {"kind": "spdk", "backend": "ram"}}]}
J
env -u NVMF_BENCH_SPDK "$NVMF_BENCH" --dry-run "$tmp/twins.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && ok "twins: all skipped without SPDK is not an error" || bad "twins dry-run exit $rc: $(cat "$tmp/err")"
for w in 'a.spdk  *skipped: SPDK not given' 'a.spdk-perf  *skipped: SPDK not given' \
	'f.spdk  *skipped: no SPDK twin of a file namespace' 'f.spdk-perf  *skipped: no spdk_nvme_perf twin: perf.rate' \
	's  *skipped: SPDK not given' '^  a  *5 x' '^  f  *5 x'; do
	grep -q -- "$w" "$tmp/out" && ok "twins plan: $w" || bad "twins plan lacks '$w': $(cat "$tmp/out")"
done
grep -q 's.spdk' "$tmp/out" && bad "a cell written for SPDK got a twin" || ok "no twin of an SPDK cell"
"$NVMF_BENCH" --dry-run --spdk "$tmp/no-spdk" "$tmp/twins.json" >"$tmp/out" 2>&1
grep -q "a.spdk  *skipped: SPDK not built in $tmp/no-spdk" "$tmp/out" && ok "--spdk without a build: skipped" ||
	bad "--spdk DIR without a build: $(cat "$tmp/out")"
# an SPDK tree (fake binaries suffice for the plan): the twins are planned
mkdir -p "$tmp/fake-spdk/build/bin" && touch "$tmp/fake-spdk/build/bin/nvmf_tgt" "$tmp/fake-spdk/build/bin/spdk_nvme_perf" &&
	chmod +x "$tmp/fake-spdk/build/bin/"*
NVMF_BENCH_SPDK="$tmp/fake-spdk" "$NVMF_BENCH" --dry-run "$tmp/twins.json" >"$tmp/out" 2>&1
grep -q '^  a.spdk  *5 x' "$tmp/out" && grep -q '^  a.spdk-perf  *5 x' "$tmp/out" && grep -q '^  s  *5 x' "$tmp/out" &&
	ok "NVMF_BENCH_SPDK: SPDK cells planned" || bad "NVMF_BENCH_SPDK plan: $(cat "$tmp/out")"
env -u NVMF_BENCH_SPDK "$NVMF_BENCH" --dry-run spdk-compare >"$tmp/out" 2>&1 &&
	[ "$(grep -c 'skipped: SPDK not given' "$tmp/out")" -eq 8 ] && ok "spdk-compare: 8 cells skipped without SPDK" ||
	bad "spdk-compare without SPDK: $(cat "$tmp/out")"
for a in "--cgroup v3" "--cgroup" "--syscalls ptrace" "--syscalls"; do
	# shellcheck disable=SC2086
	"$NVMF_BENCH" --dry-run $a "$tmp/iso.json" >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] && ok "bad $a: exit 2" || bad "bad $a: exit $rc"
done

# missing file and unknown built-in: exit 2 as well
"$NVMF_BENCH" --dry-run "$tmp/none.json" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'No such file' "$tmp/err" && ok "missing file" || bad "missing file: $rc $(cat "$tmp/err")"
# a directory (fopen() opens one): said so, not "larger than 16 MiB"
mkdir -p "$tmp/adir.json"
"$NVMF_BENCH" --dry-run "$tmp/adir.json" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'Is a directory (a scenario is a JSON file)' "$tmp/err" && ok "directory" ||
	bad "directory: $rc $(cat "$tmp/err")"
"$NVMF_BENCH" --dry-run no-such-builtin 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no such built-in' "$tmp/err" && ok "unknown built-in" || bad "unknown built-in: $rc"
"$NVMF_BENCH" --bogus-option 2> /dev/null; rc=$?
[ $rc -eq 2 ] && ok "bad option" || bad "bad option: exit $rc"
"$NVMF_BENCH" -r 0 2> /dev/null; rc=$?
[ $rc -eq 2 ] && ok "bad --repeat" || bad "bad --repeat: exit $rc"

# --help is the manual
"$NVMF_BENCH" --help > "$tmp/help"; rc=$?
for w in --quick --repeat --out --seed --strict --busy-cpus 'no difference' 'Exit status' seed-a-unbound \
	seed-e-host-scaling self-check-aa report.md --spdk --cgroup --syscalls spdk-compare NVMF_BENCH_SPDK \
	target.cpu_quota; do
	grep -qF -- "$w" "$tmp/help" || { bad "--help lacks $w"; }
done
[ $rc -eq 0 ] && ok "--help" || bad "--help exit $rc"

# the built-ins and the good smoke file validate; --quick plans fewer runs
"$NVMF_BENCH" --dry-run > "$tmp/plan" || bad "built-ins do not validate"
"$NVMF_BENCH" --dry-run --quick > "$tmp/qplan" || bad "--quick built-ins do not validate"
full=$(tail -1 "$tmp/plan" | awk '{print $1}')
quick=$(tail -1 "$tmp/qplan" | awk '{print $1}')
[ "$quick" -gt 0 ] && [ "$quick" -lt "$full" ] && ok "quick plan $quick runs < full $full" ||
	bad "quick plan $quick vs full $full"
for s in seed-a-unbound seed-b-cpu-heavy seed-c-idle-poll seed-d-cq-pool seed-e-host-scaling self-check-aa \
	spdk-compare; do
	grep -q "^$s " "$tmp/plan" || bad "built-in $s missing from the plan"
done
"$NVMF_BENCH" --dry-run "$BENCH_TESTDIR/smoke.json" > /dev/null || bad "smoke.json does not validate"

# bench/scenarios/*.json are the built-ins, and they validate as files
"$NVMF_BENCH" --write-scenarios "$tmp/scen" > /dev/null || bad "--write-scenarios failed"
for f in "$tmp"/scen/*.json; do
	b=$(basename "$f")
	cmp -s "$f" "$BENCH_SCENARIOS/$b" && ok "bench/scenarios/$b up to date" ||
		bad "bench/scenarios/$b differs from the built-in (run nvmf-bench --write-scenarios bench/scenarios)"
	"$NVMF_BENCH" --dry-run "$f" > /dev/null || bad "$b does not validate as a file"
done
[ "$(ls "$tmp"/scen/*.json | wc -l)" -eq 7 ] || bad "want 7 built-in scenario files"
# issue 10's scenario files (exec auto, contention.workers) and issue 16's
# digest-cost.json and digest-target-bound.json (target.cpu_quota) validate too
for f in "$BENCH_SCENARIOS"/auto-*.json "$BENCH_SCENARIOS"/digest-cost.json \
	"$BENCH_SCENARIOS"/digest-target-bound.json; do
	"$NVMF_BENCH" --dry-run --quick "$f" > /dev/null && ok "$(basename "$f") validates" ||
		bad "$(basename "$f") does not validate"
done

# --ratio-ci A B: the reports' interval for series a driver measured
# itself (bench/auto-phases.py). Every pair 1.25 -> ratio, lo and hi 1.25
# (every resample is the same); pairs that split -> no difference.
out=$("$NVMF_BENCH" --ratio-ci 5,2.5,10,1.25 4,2,8,1 2>&1)
python3 -c '
import json, sys
v = json.loads(sys.argv[1])
assert v["pairs"] == 4 and v["valid"] and v["differs"], v
assert all(abs(v[k] - 1.25) < 1e-9 for k in ("ratio", "lo", "hi")), v
' "$out" && ok "--ratio-ci constant ratio: $out" || bad "--ratio-ci constant ratio: $out"
out=$("$NVMF_BENCH" --ratio-ci -S 7 1.2,0.8,1.1,0.9,1.0,1.05 1,1,1,1,1,1 2>&1)
python3 -c '
import json, sys
v = json.loads(sys.argv[1])
assert v["pairs"] == 6 and v["valid"] and not v["differs"] and v["lo"] < 1 < v["hi"], v
' "$out" && ok "--ratio-ci no difference: $out" || bad "--ratio-ci no difference: $out"
for args in "1,2 1" "1,2, 1,1" "1,x 1,1" "1,2"; do
	# shellcheck disable=SC2086
	"$NVMF_BENCH" --ratio-ci $args > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc = 2 ] && grep -q "ratio-ci" "$tmp/err" && ok "--ratio-ci $args: refused" ||
		bad "--ratio-ci $args: exit $rc $(cat "$tmp/err")"
done

# bench/auto-phases.py --report: score_work scales each I/O phase's CPU to
# the round's median I/O count. Synthetic rounds: auto completes twice
# bound's I/O per phase on the same CPU-s, so its CPU per I/O is half
# (5.0 vs 10.0 us) and it wins score_work in every round, while the
# timeline CPU (C) is the same for both.
phases_py="$BENCH_SCENARIOS/../auto-phases.py"
phases_json="$BENCH_SCENARIOS/../phases/auto-phases.json"
mkdir -p "$tmp/phases"
python3 - "$phases_json" "$tmp/phases/results.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
def run(ios, lat):
    ph = []
    for p in cfg["phases"]:
        gap = bool(p.get("rate"))
        ph.append({"name": p["name"], "seconds": 1, "qd": p["qd"], "rate": p.get("rate", 0),
                   "wall_s": 1.0, "rc": 0, "ios": 2 if gap else ios, "iops": 0,
                   "lat_avg": 500.0 if gap else lat, "p50": 0, "p99": 0,
                   "cpu_s": 0.01 if gap else 1.0})
    cpu = sum(p["cpu_s"] for p in ph) + 0.5
    return {"mode": "", "phases": ph, "errors": [], "cpu_s": cpu, "wall_s": 10.0,
            "lat_w": lat, "score": 2.0}
rounds = [{"order": ["bound", "auto"], "runs": {"bound": run(100000, 50.0),
           "auto": run(200000, 40.0)}, "load": [0.0, 0.0], "psi": [0, 0]} for _ in range(5)]
json.dump({"file": sys.argv[1], "scale": 1.0, "seed": 1, "start": "s", "end": "e",
           "load0": 0.0, "psi0": 0, "modes": ["bound", "auto"], "rounds": rounds},
          open(sys.argv[2], "w"))
PY
if python3 "$phases_py" --bin "$(dirname "$NVMF_BENCH")" --report "$tmp/phases" "$phases_json" > "$tmp/out" 2>&1; then
	grep -q "auto wins on score_work (ratio's interval above 1.0 against every other mode): yes" "$tmp/phases/summary.md" &&
		grep -q "^| qd1 | 10.0 | 5.0 |$" "$tmp/phases/summary.md" &&
		ok "auto-phases --report: score_work and CPU per I/O" ||
		bad "auto-phases --report: $(cat "$tmp/phases/summary.md")"
else
	bad "auto-phases --report failed: $(cat "$tmp/out")"
fi

exit $fail
