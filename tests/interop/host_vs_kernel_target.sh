#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# host_vs_kernel_target.sh - nvmfd's host library (nvmf-perf) against the
# Linux kernel NVMe/TCP target (nvmet-tcp) in the kernel-host harness guest.
#
# Starts kernel_target_serve.sh (the interop engineer's script; the guest is
# exposed on 127.0.0.1:PORT with a 256 MiB RAM namespace), waits until the
# port answers, then runs, each of which must exit 0:
#   1. nvmf-perf discover (the subsystem NQN must be listed), plain and
#      with --digest hdr,data
#   2. nvmf-perf --verify -w randrw -o 4k   for HVK_SECONDS
#   3. nvmf-perf --verify -w randrw -o 128k for HVK_SECONDS
#   4. 2 and 3 again with --digest hdr,data
# and stops the guest.
#
#   host_vs_kernel_target.sh [--perf PATH]
#
# Exit: 0 pass, 1 fail, 77 skip (no qemu, no harness, no nvmf-perf binary,
# or the harness cache cannot be built).
#
# Environment:
#   NVMF_PERF     the nvmf-perf binary (default: --perf PATH, else
#                 <repo>/build/bin/nvmf-perf)
#   HVK_SECONDS   run time of each perf step (default 4)
#   HVK_DEPTH     -q of each perf step (default 16)
#   HVK_PORT      host port (default: a free one in 20000-39999)
#   HVK_EXTRA     extra nvmf-perf flags (word-split), e.g. "--exec unbound"
#   KH_HARNESS, KERNEL_HOST_CACHE, KH_NO_KVM, KH_BOOT_TIMEOUT: see
#   kernel_target_serve.sh
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ARG_PERF=""
while [ $# -gt 0 ]; do
	case "$1" in
	--perf) ARG_PERF=${2:-}; shift 2 ;;
	-h|--help) sed -n '4,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "host_vs_kernel_target.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

log() { echo "host_vs_kernel_target: $*"; }
skip() { log "SKIP: $*"; exit 77; }

PERF=${NVMF_PERF:-${ARG_PERF:-$REPO/build/bin/nvmf-perf}}
[ -x "$PERF" ] || skip "nvmf-perf binary '$PERF' not found"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
command -v ss >/dev/null || skip "ss (iproute2) not installed"
SECS=${HVK_SECONDS:-4}
DEPTH=${HVK_DEPTH:-16}
NQN=nqn.2026-11.io.nvmfd:kernel-target
# shellcheck disable=SC2206 # word splitting wanted
EXTRA=(${HVK_EXTRA:-})

port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
PORT=${HVK_PORT:-}
if [ -z "$PORT" ]; then
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		if port_free "$p"; then PORT=$p; break; fi
	done
	[ -n "$PORT" ] || { log "no free port"; exit 1; }
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmfd-hvk.XXXXXX")
SERVE_PID=""
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null
		wait "$SERVE_PID" 2>/dev/null
	fi
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		log "serve log:"; tail -40 "$WORK/serve.log"
		log "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

log "starting the kernel target on 127.0.0.1:$PORT (perf: $PERF)"
t0=$SECONDS
bash "$HERE/kernel_target_serve.sh" -p "$PORT" -t 900 -s 256 -n "$NQN" -r "$WORK/ready" \
	>"$WORK/serve.log" 2>&1 &
SERVE_PID=$!
until [ -e "$WORK/ready" ]; do
	if ! kill -0 "$SERVE_PID" 2>/dev/null; then
		wait "$SERVE_PID"
		rc=$?
		SERVE_PID=""
		[ "$rc" -eq 77 ] && { tail -5 "$WORK/serve.log"; skip "kernel_target_serve.sh skipped"; }
		log "FAIL: kernel_target_serve.sh exited $rc before the target was ready"
		exit 1
	fi
	if [ $((SECONDS - t0)) -gt 1500 ]; then
		log "FAIL: the kernel target was not ready after 1500 s"
		exit 1
	fi
	sleep 1
done
# The port must answer (QEMU's forwarder accepts even while the guest is
# not listening, so ask nvmf-perf discover, which needs an ICResp).
TRID_DISC="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT"
TRID="$TRID_DISC subnqn:$NQN"
ok=0
for _ in $(seq 1 30); do
	if "$PERF" discover -r "$TRID_DISC" --timeout 20000 >"$WORK/disc0.txt" 2>&1; then
		ok=1
		break
	fi
	sleep 2
done
[ "$ok" = 1 ] || { cat "$WORK/disc0.txt"; log "FAIL: the port does not answer"; exit 1; }
log "target ready after $((SECONDS - t0)) s"

FAILS=0
step() {
	local name=$1 s rc
	shift
	s=$SECONDS
	log "RUN $name: nvmf-perf $*"
	"$PERF" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	sed 's/^/    /' "$WORK/$name.out"
	if [ -s "$WORK/$name.err" ]; then sed 's/^/    stderr: /' "$WORK/$name.err"; fi
	if [ "$rc" -eq 0 ]; then
		log "PASS: $name ($((SECONDS - s)) s)"
	else
		log "FAIL: $name exited $rc"
		FAILS=$((FAILS + 1))
	fi
	return "$rc"
}

for dg in plain digest; do
	dopt=()
	[ "$dg" = digest ] && dopt=(--digest hdr,data)
	if step "discover-$dg" discover -r "$TRID_DISC" "${dopt[@]}" --timeout 20000; then
		if grep -q "^subnqn: *$NQN\$" "$WORK/discover-$dg.out"; then
			log "PASS: discover-$dg lists $NQN"
		else
			log "FAIL: discover-$dg does not list $NQN"
			FAILS=$((FAILS + 1))
		fi
	fi
	for sz in 4k 128k; do
		step "randrw-$sz-$dg" -r "$TRID" -w randrw -M 50 -o "$sz" -q "$DEPTH" -t "$SECS" \
			--verify --timeout 30000 "${dopt[@]}" "${EXTRA[@]}"
	done
done

log "stopping the guest"
kill -TERM "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=""
if [ "$FAILS" -ne 0 ]; then
	log "RESULT: FAIL ($FAILS steps failed)"
	exit 1
fi
log "RESULT: PASS (total $((SECONDS - t0)) s)"
exit 0
