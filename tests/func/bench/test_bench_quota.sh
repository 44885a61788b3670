#!/bin/bash
# nvmf-bench target.cpu_quota end to end (quota.json: a cell whose target
# is limited to 0.2 CPUs and one without a limit, 2 s each):
#  - without a cpu controller (--cgroup off) the quota cell fails with the
#    reason instead of running unlimited;
#  - where a cpu controller is writable (else the test is skipped, exit
#    77), the quota cell's nvmfd runs in the target's cpu group with 2 ms
#    per 10 ms while the other's is not limited, the outputs record the
#    quota, and the limited target's CPU stays under the quota plus slack
#    (an upper bound: other work on the machine can only lower it);
#  - the cpu group is removed at the end, after SIGINT, and when a killed
#    run left it (by the next nvmf-bench).
set -u
: "${NVMF_BENCH:?}" "${BENCH_TESTDIR:?}"
. "$BENCH_TESTDIR/lib.sh"

command -v setsid > /dev/null || { echo "SKIP: no setsid"; exit 77; }
scen=$BENCH_TESTDIR/quota.json

# run_in_session OUT ARGS...: start the bench as a session leader in the
# background; its pid (= session id) is written to $tmp/sid.
run_in_session() {
	rm -f "$tmp/sid"
	setsid -w sh -c 'echo $$ > "$0"; exec "$@"' "$tmp/sid" "$NVMF_BENCH" "$@" &
	bgpid=$!
	for _ in $(seq 100); do [ -s "$tmp/sid" ] && break; sleep 0.05; done
	sid=$(cat "$tmp/sid")
}

# leftovers SID: processes still in the session
leftovers() { ps -e -o sid= -o pid= -o comm= | awk -v s="$1" '$1 == s'; }

le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

# cpudir FILE: the target's cpu group nvmf-bench said it uses (stderr), or ""
cpudir() { sed -n 's/^nvmf-bench: target CPU quota: cpu cgroup (v[12]) \(.*\), period .*$/\1/p' "$1"; }

# nvmfd_of SID CELL: pid of the session's nvmfd serving CELL (its control socket is CELL.sock)
nvmfd_of() {
	local p
	for p in $(leftovers "$1" | awk '$3 == "nvmfd" { print $2 }'); do
		tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q "/$2\.sock " && { echo "$p"; return; }
	done
}

# limit_of PID DIR: the CFS limit the process runs under if it is in the
# target group DIR (its v1 cpu group or its v2 group): "QUOTA PERIOD" in
# µs, "max ..." or "-1 ..." = none, "max" = no cpu controller there; ""
# if it is not in DIR
limit_of() {
	local rel
	for rel in "$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' "/proc/$1/cgroup" 2>/dev/null)" \
		"$(sed -n 's/^0::\(.*\)$/\1/p' "/proc/$1/cgroup" 2>/dev/null)"; do
		[ -n "$rel" ] && [ "$rel" != / ] && [ "${2%"$rel"}" != "$2" ] || continue
		if [ -e "$2/cpu.max" ]; then
			cat "$2/cpu.max"
		elif [ -e "$2/cpu.cfs_quota_us" ]; then
			echo "$(cat "$2/cpu.cfs_quota_us") $(cat "$2/cpu.cfs_period_us")"
		else
			echo max
		fi
		return
	done
}

# 1. no cpu controller (--cgroup off): the quota cell fails, with the reason
out=$tmp/off
"$NVMF_BENCH" -o "$out" --no-progress --no-plots --cgroup off --cells limited "$scen" 2>"$tmp/off.err"; rc=$?
[ $rc -eq 1 ] && ok "--cgroup off: exit 1" || bad "--cgroup off: exit $rc, want 1: $(tail -3 "$tmp/off.err")"
grep -q '^nvmf-bench: target CPU quota: none (--cgroup off); cells with target.cpu_quota fail$' "$tmp/off.err" &&
	ok "--cgroup off: stderr says the quota cells fail" || bad "--cgroup off: stderr: $(cat "$tmp/off.err")"
grep -q 'run 1: target.cpu_quota 0.2: no usable cpu controller: none (--cgroup off)' "$out/report.md" &&
	ok "--cgroup off: report.md gives the reason" || bad "--cgroup off: report.md lacks the reason"
[ "$(col "$out/cells.csv" limited runs_ok)" = 0 ] && [ "$(col "$out/cells.csv" limited target_cpu_quota)" = 0.2 ] &&
	ok "--cgroup off: no run ok, the quota recorded" ||
	bad "--cgroup off: runs_ok '$(col "$out/cells.csv" limited runs_ok)' quota '$(col "$out/cells.csv" limited target_cpu_quota)'"
[ -e "$out/raw/quota/limited/rep1/nvmfd.log" ] && bad "--cgroup off: nvmfd was started" ||
	ok "--cgroup off: no unlimited nvmfd started"

# 2. both cells; watch the cgroups of each cell's nvmfd while it runs
out=$tmp/run1
run_in_session -o "$out" --no-progress --no-plots "$scen" 2>"$tmp/run1.err"
dir=""
lim_limited="" lim_free=""
while kill -0 "$bgpid" 2>/dev/null; do
	[ -n "$dir" ] || dir=$(cpudir "$tmp/run1.err")
	if [ -n "$dir" ]; then
		p=$(nvmfd_of "$sid" limited)
		[ -n "$p" ] && [ -z "$lim_limited" ] && lim_limited=$(limit_of "$p" "$dir")
		p=$(nvmfd_of "$sid" free)
		[ -n "$p" ] && [ -z "$lim_free" ] && lim_free=$(limit_of "$p" "$dir")
		[ -n "$p" ] && [ -z "$lim_free" ] && lim_free="none"
	fi
	sleep 0.05
done
wait $bgpid
rc=$?
if grep -q '^nvmf-bench: target CPU quota: none' "$tmp/run1.err"; then
	echo "SKIP: no writable cpu controller: $(grep '^nvmf-bench: target CPU quota' "$tmp/run1.err")"
	[ $fail -eq 0 ] && exit 77
	exit $fail
fi
[ -n "$dir" ] && ok "stderr: $(grep '^nvmf-bench: target CPU quota' "$tmp/run1.err")" ||
	bad "no target CPU quota line on stderr: $(cat "$tmp/run1.err")"
[ $rc -eq 0 ] && ok "run exit 0" || bad "run exit $rc: $(tail -3 "$tmp/run1.err")"
[ "$lim_limited" = "2000 10000" ] && ok "limited: nvmfd in $dir with 2000 us per 10000 us" ||
	bad "limited: nvmfd's limit '$lim_limited' (want '2000 10000' in $dir)"
case "$lim_free" in
none | max | "max 10000" | "-1 10000") ok "free: nvmfd not limited ($lim_free)" ;;
*) bad "free: nvmfd runs under '$lim_free'" ;;
esac
csv=$out/cells.csv
[ "$(col "$csv" limited target_cpu_quota)" = 0.2 ] && [ "$(col "$csv" free target_cpu_quota)" = 0 ] &&
	ok "cells.csv: target_cpu_quota 0.2 and 0" ||
	bad "cells.csv target_cpu_quota: '$(col "$csv" limited target_cpu_quota)' '$(col "$csv" free target_cpu_quota)'"
python3 -c '
import json, sys
q = {c["cell"]: c["target_cpu_quota"] for c in json.load(open(sys.argv[1]))["cells"]}
assert q == {"limited": 0.2, "free": 0}, q
' "$out/cells.json" && ok "cells.json: target_cpu_quota 0.2 and 0" || bad "cells.json target_cpu_quota"
grep -q '^| limited | [0-9,-]* (quota 0.2) / ' "$out/report.md" &&
	grep -q '^  - target CPU quota: 0.2 CPUs (2000 µs per 10000 µs period)$' "$out/report.md" &&
	grep -q '^- target CPU quota (target.cpu_quota' "$out/report.md" &&
	ok "report.md records the quota" || bad "report.md lacks the quota"
grep -q '^| free | [0-9,-]* (quota' "$out/report.md" && bad "report.md gives the free cell a quota" ||
	ok "report.md: no quota for the free cell"
for cell in limited free; do
	[ "$(col "$csv" $cell runs_ok)" = 1 ] && ok "$cell: 1 run ok" || bad "$cell: runs_ok $(col "$csv" $cell runs_ok)"
done
# 0.2 CPUs = 20 %; 40 % leaves room for the accounting, none for a missing limit
cpu=$(col "$csv" limited target_cpu)
[ -n "$cpu" ] && le "$cpu" 40 && ok "limited: target CPU $cpu % <= 40 %" || bad "limited: target CPU '$cpu' % > 40 %"
base=${dir%/target}
[ -n "$dir" ] && [ -e "$base" ] && bad "cpu group $base left after the run" || ok "cpu group removed after the run"
left=$(leftovers "$sid")
[ -z "$left" ] && ok "no stray process after the run" || bad "stray processes: $left"

# 3. SIGINT while the limited cell runs: the cpu group is removed too
out=$tmp/run2
run_in_session -o "$out" --no-progress --no-plots -d 5 --cells limited "$scen" 2>"$tmp/run2.err"
for _ in $(seq 200); do [ -n "$(nvmfd_of "$sid" limited)" ] && break; sleep 0.05; done
dir=$(cpudir "$tmp/run2.err")
base=${dir%/target}
[ -n "$dir" ] && [ -d "$dir" ] && ok "run 2: cpu group $dir exists while it runs" || bad "run 2: no cpu group ('$dir')"
kill -INT "$sid"
wait $bgpid
rc=$?
[ $rc -eq 130 ] && ok "SIGINT: exit 130" || bad "SIGINT: exit $rc"
[ -n "$base" ] && [ -e "$base" ] && bad "cpu group $base left after SIGINT" || ok "cpu group removed after SIGINT"
left=$(leftovers "$sid")
[ -z "$left" ] && ok "no stray process after SIGINT" || bad "stray processes after SIGINT: $left"

# 4. a v1 cpu group of its own (not the cpuset group) of a killed run, its
# pid gone, is removed by the next nvmf-bench
cs=$(sed -n 's/^nvmf-bench: isolation: cpuset cgroups (v[12]) under \(.*\)$/\1/p' "$tmp/run2.err")
if grep -q '^nvmf-bench: target CPU quota: cpu cgroup (v1) ' "$tmp/run2.err" && [ -n "$base" ] && [ "$base" != "$cs" ]; then
	root=${base%/nvmf-bench.*}
	dead=$(sh -c 'echo $$')
	if [ ! -e "/proc/$dead" ] && mkdir -p "$root/nvmf-bench.$dead/target"; then
		"$NVMF_BENCH" --dry-run "$scen" >/dev/null 2>&1
		if [ -e "$root/nvmf-bench.$dead" ]; then
			bad "stale cpu group $root/nvmf-bench.$dead not removed"
			rmdir "$root/nvmf-bench.$dead/target" "$root/nvmf-bench.$dead"
		else
			ok "next nvmf-bench removed the stale cpu group $root/nvmf-bench.$dead"
		fi
	fi
fi

exit $fail
