#!/usr/bin/env bash
# fio-overhead.sh - what fio + libnvmfd-fio.so costs against nvmf-perf on
# the same target: 4 KiB random reads at QD32 on one I/O queue, both host
# threads pinned to the same CPU (nvmf-perf --exec bound --io-cpu rr, the
# engine's exec=bound io_cpu=rr: queue / job 0 on the first CPU).
#
#   bench/fio-overhead.sh [PAIRS] [SECONDS]      (default 5 pairs of 5 s)
#
# Starts build/bin/nvmfd (256 MiB RAM namespace) on 127.0.0.1 port 0, then
# runs PAIRS pairs alternately, the order flipped every pair (perf-fio,
# fio-perf, ...) so a drift in machine load hits both sides alike. Prints
# each run's IOPS, the medians, the ratio fio/perf of the medians and the
# range of the per-pair ratios, and the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
secs=${2:-5}
nvmfd=build/bin/nvmfd
perf=build/bin/nvmf-perf
engine=$PWD/build/tools/fio/libnvmfd-fio.so
nqn=nqn.2026-11.io.nvmfd:fio-bench
for f in "$nvmfd" "$perf" "$engine"; do
	[ -e "$f" ] || { echo "fio-overhead: $f missing (scripts/build.sh)" >&2; exit 2; }
done
command -v fio >/dev/null || { echo "fio-overhead: no fio (scripts/install-deps.sh)" >&2; exit 2; }

work=$(mktemp -d)
"$nvmfd" -l 127.0.0.1:0 -s "$nqn" -n ram:256M --allow-any-host --log-level info \
	>"$work/nvmfd.log" 2>&1 &
tgt=$!
trap 'kill $tgt 2>/dev/null; wait $tgt 2>/dev/null; rm -rf "$work"' EXIT
port=
for _ in $(seq 100); do
	port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/nvmfd.log" | head -1 | grep -o '[0-9]*$' || true)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "fio-overhead: nvmfd did not start" >&2; cat "$work/nvmfd.log" >&2; exit 1; }

run_perf() {
	timeout $((secs + 60)) "$perf" -r "traddr:127.0.0.1 trsvcid:$port subnqn:$nqn" -q 32 -o 4096 \
		-w randread -t "$secs" --exec bound --io-cpu rr --json |
		python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["total"]["iops"])'
}
run_fio() {
	timeout $((secs + 60)) fio --name=randread --ioengine=external:"$engine" --traddr=127.0.0.1 \
		--trsvcid="$port" --subnqn="$nqn" --rw=randread --bs=4k --iodepth=32 --time_based \
		--runtime="$secs" --exec=bound --io_cpu=rr --output-format=json |
		python3 -c 'import json,sys; t=sys.stdin.read(); print("%.0f" % json.loads(t[t.index("{"):])["jobs"][0]["read"]["iops"])'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
perf_iops=()
fio_iops=()
for i in $(seq "$pairs"); do
	if ((i % 2)); then
		p=$(run_perf); f=$(run_fio)
	else
		f=$(run_fio); p=$(run_perf)
	fi
	perf_iops+=("$p")
	fio_iops+=("$f")
	echo "pair $i: nvmf-perf $p IOPS, fio $f IOPS"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${perf_iops[*]}" "${fio_iops[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
f = [float(x) for x in sys.argv[2].split()]
r = [b / a for a, b in zip(p, f)]
mp, mf = statistics.median(p), statistics.median(f)
print("median IOPS: nvmf-perf %.0f, fio %.0f; fio/perf %.3f" % (mp, mf, mf / mp))
print("per-pair fio/perf: median %.3f, min %.3f, max %.3f" % (statistics.median(r), min(r), max(r)))
PY
