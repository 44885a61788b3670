#!/usr/bin/env bash
# Paired, alternating TLS-off / TLS-on comparison with one build of nvmfd +
# nvmf-perf: one nvmfd whose port takes both (--tls=not-required, a global
# SHA-256 PSK), then per workload N rounds of (plain, TLS) in random order
# per round; prints each run, the medians and the median of the per-round
# TLS/plain ratios with its range. doc/tls.md; results in the TLS closing
# note of issue 12.
#
#   scripts/tls-ab.sh BINDIR [ROUNDS] [SECONDS]
#
# Workloads: 4 KiB random reads at QD32, 128 KiB sequential reads at QD16.
# Target pinned with --cpus 0, initiator with --cpus 1 (2-CPU machine);
# RAM namespace; 127.0.0.1, a port picked by the target.
set -euo pipefail
BIN=${1:?usage: $0 BINDIR [ROUNDS] [SECONDS]}
ROUNDS=${2:-5}
SECS=${3:-3}
NQN=nqn.2026-12.io.nvmfd:tls-ab
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
printf '%s' 'NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:' >"$work/psk.key"
chmod 600 "$work/psk.key"

"$BIN/nvmfd" -l 127.0.0.1:0 --tls=not-required -s $NQN -n ram:256M --allow-any-host \
	--psk "@$work/psk.key" --cpus 0 >"$work/tgt.log" 2>&1 &
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/tgt.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { cat "$work/tgt.log" >&2; exit 1; }

run_one() { # mode(plain|tls) pattern size qd -> prints MiB/s and IOPS
	local tls=() v
	[ "$1" = tls ] && tls=(--tls --psk "@$work/psk.key")
	if "$BIN/nvmf-perf" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN" \
		-q "$4" -o "$3" -w "$2" -t "$SECS" --warmup 1 --cpus 1 --exec bound --json "${tls[@]}" \
		>"$work/perf.json" 2>"$work/perf.err"; then
		v=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(round(t["iops"]), round(t["mib_per_s"], 1))' "$work/perf.json")
	else
		v="FAILED FAILED"
		echo "nvmf-perf ($1) failed: $(tail -2 "$work/perf.err" | tr '\n' ' ')" >&2
	fi
	echo "$v"
}

for wl in "randread 4096 32" "read 131072 16"; do
	set -- $wl
	: >"$work/plain"; : >"$work/tls"
	for r in $(seq "$ROUNDS"); do
		if ((RANDOM % 2)); then order="plain tls"; else order="tls plain"; fi
		for m in $order; do
			v=$(run_one "$m" "$1" "$2" "$3")
			echo "$v" >>"$work/$m"
			echo "$1 $2 qd$3 round $r $m: IOPS MiB/s $v (load $(cut -d' ' -f1 /proc/loadavg))"
		done
	done
	python3 - "$work/plain" "$work/tls" "$1 $2 qd$3" <<'PY'
import statistics, sys
pa = [l.split() for l in open(sys.argv[1])]
pb = [l.split() for l in open(sys.argv[2])]
pairs = [(float(a[0]), float(b[0])) for a, b in zip(pa, pb) if "FAILED" not in a + b]
if not pairs:
    print(f"{sys.argv[3]}: no complete pair"); sys.exit(0)
a = [x for x, _ in pairs]
b = [y for _, y in pairs]
r = sorted(y / x for x, y in pairs if x > 0)
print(f"{sys.argv[3]}: plain median {statistics.median(a):.0f} IOPS, TLS median "
      f"{statistics.median(b):.0f} IOPS; TLS/plain per round: median {statistics.median(r):.3f}, "
      f"range {r[0]:.3f}..{r[-1]:.3f} ({len(pairs)} pairs)")
PY
done
