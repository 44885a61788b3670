#!/usr/bin/env bash
# Paired, alternating A/B comparison of two builds of nvmfd + nvmf-perf on
# this machine: for each workload, N rounds of (A, B) in random order per
# round; prints each run and the medians and the median of the per-round
# B/A ratios. For before/after checks of a change (e.g. issue 9).
#
#   scripts/ab-perf.sh A_BINDIR B_BINDIR [ROUNDS] [SECONDS]
#
# Target pinned with --cpus 0, initiator with --cpus 1 (2-CPU machine);
# RAM namespace; 127.0.0.1, a port picked by the target (port 0).
set -euo pipefail
A=${1:?usage: $0 A_BINDIR B_BINDIR [ROUNDS] [SECONDS]}
B=${2:?usage: $0 A_BINDIR B_BINDIR [ROUNDS] [SECONDS]}
ROUNDS=${3:-5}
SECS=${4:-3}
NQN=nqn.2026-12.io.nvmfd:ab
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

run_one() { # bindir qd -> prints IOPS
	local bin=$1 qd=$2 log=$work/tgt.log port iops
	"$bin/nvmfd" -l 127.0.0.1:0 -s $NQN -n ram:256M --allow-any-host --cpus 0 >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	if "$bin/nvmf-perf" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN" \
		-q "$qd" -o 4096 -w randread -t "$SECS" --warmup 1 --cpus 1 --json \
		>"$work/perf.json" 2>"$work/perf.err"; then
		iops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["total"]["iops"]))' "$work/perf.json")
	else
		iops=FAILED
		echo "nvmf-perf ($bin) failed: $(tail -2 "$work/perf.err" | tr '\n' ' ')" >&2
	fi
	kill -TERM $pid; wait $pid 2>/dev/null || true
	echo "$iops"
}

for qd in 32 1; do
	: >"$work/a.$qd"; : >"$work/b.$qd"
	for r in $(seq "$ROUNDS"); do
		if ((RANDOM % 2)); then order="A B"; else order="B A"; fi
		for w in $order; do
			if [ $w = A ]; then v=$(run_one "$A" $qd); else v=$(run_one "$B" $qd); fi
			# a failed run drops the whole round (pairs stay pairs)
			echo "$v" >>"$work/$([ $w = A ] && echo a || echo b).$qd"
			echo "qd$qd round $r $w: $v IOPS (load $(cut -d' ' -f1 /proc/loadavg))"
		done
	done
	python3 - "$work/a.$qd" "$work/b.$qd" "$qd" <<'PY'
import statistics, sys
ra = [x.strip() for x in open(sys.argv[1])]
rb = [x.strip() for x in open(sys.argv[2])]
pairs = [(float(x), float(y)) for x, y in zip(ra, rb) if x != "FAILED" and y != "FAILED"]
fails = sum(1 for x in ra + rb if x == "FAILED")
a = [x for x, _ in pairs]
b = [y for _, y in pairs]
r = sorted(y / x for x, y in pairs if x > 0)
if fails:
    print(f"qd{sys.argv[3]}: {fails} failed run(s), their rounds left out")
print(f"qd{sys.argv[3]}: A median {statistics.median(a):.0f} IOPS, B median {statistics.median(b):.0f} IOPS, "
      f"B/A per round: median {statistics.median(r):.3f}, range {r[0]:.3f}..{r[-1]:.3f} (n={len(r)})")
PY
done
