#!/bin/bash
# nvmf-bench A/A self-check, short form: the same configuration as both
# series (aa.json: 5 interleaved rounds of 1 s against nvmfd on a RAM
# namespace) must come out as "no difference" - the statistics must not
# invent an effect. The report must also carry what makes it checkable:
# the seed, the CPU sets, a randomised order per round, the noise guard.
#
# A 95 % interval excludes 1.0 by chance about once in twenty runs, so a
# difference is checked once more with another seed (independent runs):
# the test fails only if both differ (a false alarm about 1 run in 400).
set -u
: "${NVMF_BENCH:?}" "${BENCH_TESTDIR:?}"
. "$BENCH_TESTDIR/lib.sh"

run_aa() { # SEED OUT
	"$NVMF_BENCH" --no-progress --no-plots --seed "$1" -o "$2" "$BENCH_TESTDIR/aa.json" 2> "$2.err"
}

seed=$((RANDOM * 32768 + RANDOM))
out=$tmp/aa1
run_aa $seed "$out"; rc=$?
[ $rc -eq 0 ] && ok "A/A run exit 0 (seed $seed)" || { bad "A/A run exit $rc: $(tail -3 "$out.err")"; exit 1; }
csv=$out/cells.csv
effect=$(col "$csv" a-again effect)
pairs=$(col "$csv" a-again pairs)
[ "$pairs" = 5 ] && ok "5 pairs" || bad "pairs '$pairs', want 5"
if [ "$effect" != "no difference" ]; then
	echo "note: seed $seed: a-again vs a: $(col "$csv" a-again ratio_paired) [$(col "$csv" a-again ci_lo), $(col "$csv" a-again ci_hi)]; once more with another seed"
	out=$tmp/aa2
	run_aa $((seed + 1)) "$out" || bad "second A/A run failed: $(tail -3 "$out.err")"
	csv=$out/cells.csv
	effect=$(col "$csv" a-again effect)
fi
[ "$effect" = "no difference" ] && ok "A/A: IOPS ratio $(col "$csv" a-again ratio_paired) [$(col "$csv" a-again ci_lo), $(col "$csv" a-again ci_hi)]: no difference" ||
	bad "A/A shows an effect twice: $(grep '^| a-again' "$out/report.md")"
grep -q '^| a-again | 5/5 |.*no difference' "$out/report.md" && ok "report.md prints \"no difference\"" ||
	bad "report.md row: $(grep '^| a-again' "$out/report.md")"
grep -q '^| a | 5/5 |.*| baseline |' "$out/report.md" && ok "report.md marks the baseline" || bad "baseline row"
grep -q "^- seed: " "$out/report.md" && ok "report.md records the seed" || bad "no seed in report.md"
grep -q 'nvmf-bench: seed ' "$out.err" && ok "seed printed at the start" || bad "seed not printed"
# CPU sets: on this machine's topology, printed per cell
tc=$(col "$csv" a target_cpus); pc=$(col "$csv" a perf_cpus)
[ -n "$tc" ] && [ -n "$pc" ] && ok "CPU sets target $tc, initiator $pc" || bad "CPU sets missing"
if [ "$(nproc)" -ge 2 ]; then
	[ "$tc" != "$pc" ] && ok "target and initiator on different CPUs" || bad "target and initiator share CPUs $tc"
fi
grep -q -- "--cpus $tc" "$out/cells.json" && ok "nvmfd got --cpus $tc" || bad "nvmfd without --cpus $tc"
grep -q '  - CPUs: target ' "$out/report.md" && ok "report.md prints the sets" || bad "report.md lacks the sets"
# every round ran both cells, in positions 1 and 2
python3 - "$out/cells.json" <<'PY' && ok "each round ran a and a-again once, order recorded" || bad "run order not recorded"
import json, sys
cells = {c["cell"]: c for c in json.load(open(sys.argv[1]))["cells"]}
for r in range(5):
    pos = sorted(cells[n]["runs"][r]["position"] for n in ("a", "a-again"))
    assert pos == [1, 2], pos
    for n in ("a", "a-again"):
        run = cells[n]["runs"][r]
        assert run["round"] == r + 1 and "busy" in run and run["tries"] == 1
        for k in ("foreign_cpus_pre", "foreign_cpus", "loadavg_pre", "target_cpu_s_mio",
                  "host_cpu_s_mio", "target_ctxsw_io", "host_ctxsw_io", "host_syscalls_io"):
            assert k in run["metrics"], k
            assert run["metrics"][k] >= 0, k
        assert run["metrics"]["target_cpu_s_mio"] > 0 and run["metrics"]["host_cpu_s_mio"] > 0
assert "iops" in cells["a-again"]["paired_ratio"]
PY

# perf.one_process: 2 controllers as two -r of one nvmf-perf (its total
# merges the histograms), open loop at a fixed rate
cat > "$tmp/one.json" <<'JSON'
{ "name": "one", "duration": 1, "warmup": 0, "repeat": 1,
  "defaults": { "target": { "backend": "ram", "backend_size": "16M" } },
  "cells": [ { "name": "two-ctrls", "perf": { "controllers": 2, "one_process": true, "qd": 4, "rate": 2000 } } ] }
JSON
"$NVMF_BENCH" --no-progress --no-plots -o "$tmp/one" "$tmp/one.json" 2> "$tmp/one.err"; rc=$?
p0=$tmp/one/raw/one/two-ctrls/rep1/perf-0.json
[ $rc -eq 0 ] && [ -s "$p0" ] && [ ! -e "${p0%-0.json}-1.json" ] && ok "one_process: one nvmf-perf" ||
	bad "one_process run: rc $rc $(tail -2 "$tmp/one.err")"
python3 - "$p0" <<'PY' && ok "one_process: 2 controllers, merged total, --rate 2000" || bad "one_process report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["controllers"] == 2 and d["config"]["rate_iops"] == 2000, d["config"]
assert len(d["controllers"]) == 2
assert d["total"]["ios"] == sum(c["total"]["ios"] for c in d["controllers"]) > 0
assert d["total"]["ios"] <= 2000  # open loop: at most the schedule's arrivals in 1 s
PY
[ "$(grep -o -- "-r 'trtype" "$tmp/one/cells.json" | wc -l)" -eq 2 ] && ok "perf command has two -r" ||
	bad "perf command: $(grep perf_cmd "$tmp/one/cells.json")"

# the noise guard: --busy-cpus 1024 flags nothing; --strict --busy-cpus 0
# re-runs a run in which any other work was seen (--strict-tries 2: at most
# one re-run), and says so
"$NVMF_BENCH" --no-progress --no-plots --busy-cpus 1024 -o "$tmp/calm" "$tmp/one.json" 2>/dev/null
[ "$(col "$tmp/calm/cells.csv" two-ctrls busy_runs)" = 0 ] && ok "--busy-cpus 1024: no busy run" ||
	bad "--busy-cpus 1024: busy_runs $(col "$tmp/calm/cells.csv" two-ctrls busy_runs)"
"$NVMF_BENCH" --no-progress --no-plots --strict --strict-tries 2 --busy-cpus 0 -o "$tmp/strict" "$tmp/one.json" \
	2> "$tmp/strict.err"
python3 - "$tmp/strict/cells.json" "$tmp/strict.err" <<'PY' && ok "--strict: busy runs re-run, at most --strict-tries" || bad "--strict: $(cat "$tmp/strict.err")"
import json, sys
run = json.load(open(sys.argv[1]))["cells"][0]["runs"][0]
err = open(sys.argv[2]).read()
assert run["tries"] in (1, 2), run["tries"]
# a first try that was not busy is kept; a busy one is re-run once and the re-run kept
assert (run["tries"] == 2) == ("machine busy" in err and "re-running" in err), (run, err)
if run["tries"] == 1:
    assert not run["busy"]
PY

exit $fail
