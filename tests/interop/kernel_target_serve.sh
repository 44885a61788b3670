#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kernel_target_serve.sh - put the Linux kernel NVMe/TCP target (nvmet-tcp,
# in the kernel-host harness guest) on this machine's 127.0.0.1:PORT for a
# while, so that nvmfd's host library (nvmf-perf, tests) can be tried against
# the reference target.
#
#   kernel_target_serve.sh [-p PORT] [-t SECONDS] [-n NQN] [-s MiB] [-r FILE]
#                          [-e NAME=VALUE ...]
#
#   -p PORT     host TCP port (default 4421; must be free)
#   -t SECONDS  how long the target stays up once ready (default 300)
#   -n NQN      subsystem NQN (default nqn.2026-11.io.nvmfd:kernel-target)
#   -s MiB      RAM namespace size (default 256)
#   -r FILE     create FILE once the target accepts connections (for scripts
#               that start this in the background); removed on exit
#   -e N=V      extra guest/kernel_target.sh setting (repeatable), e.g. the
#               KT_AUTH_* / KT_DHCHAP_* of a DH-HMAC-CHAP subsystem
#
# The subsystem allows any host and has one namespace (nsid 1, tmpfs-backed,
# 512-byte blocks), serial NVMFD-KT-0001, model "Linux kernel target". QEMU
# forwards 127.0.0.1:PORT to the guest's 10.0.2.15:4420, where nvmet listens;
# so the discovery log reports traddr 10.0.2.15 trsvcid 4420: connect to
# 127.0.0.1:PORT directly, not to what the log says.
#
# Stop early with SIGINT/SIGTERM (QEMU is stopped), or by writing the 7 bytes
# "KH-STOP" to LBA 0 of the namespace. Exit status: the guest's (0 when the
# time ran out or KH-STOP was seen), 77 when qemu/the harness is missing,
# 1 on errors.
#
# Environment: KH_HARNESS, KERNEL_HOST_CACHE, KH_NO_KVM (default 1) as for
# kernel_host_test.sh; KH_BOOT_TIMEOUT (default 300 s) bounds the time until
# the target is ready.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=kh_common.sh
. "$HERE/kh_common.sh"

PORT=4421
SECS=300
NQN=nqn.2026-11.io.nvmfd:kernel-target
NS_MB=256
READY=""
EXTRA_ENV=()
usage() { sed -n '9,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while getopts "p:t:n:s:r:e:h" o; do
	case "$o" in
	p) PORT=$OPTARG ;;
	t) SECS=$OPTARG ;;
	n) NQN=$OPTARG ;;
	s) NS_MB=$OPTARG ;;
	r) READY=$OPTARG ;;
	e) EXTRA_ENV+=(-e "$OPTARG") ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
log() { echo "kernel_target_serve: $*" >&2; }
command -v qemu-system-x86_64 >/dev/null || { log "SKIP: qemu-system-x86_64 not installed"; exit 77; }
kh_find_harness || { log "SKIP: kernel-host harness not found; set KH_HARNESS"; exit 77; }
kh_pick_cache || { log "cannot create $KERNEL_HOST_CACHE"; exit 1; }
export KH_NO_KVM=${KH_NO_KVM:-1}
BOOT=${KH_BOOT_TIMEOUT:-300}
if [ -n "$(ss -Hltn "sport = :$PORT" 2>/dev/null)" ]; then
	log "127.0.0.1:$PORT is in use"
	exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmfd-kt-serve.XXXXXX")
GUEST_PID=""
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	if [ -n "$GUEST_PID" ] && kill -0 "$GUEST_PID" 2>/dev/null; then
		kill -TERM "$GUEST_PID" 2>/dev/null
		wait "$GUEST_PID" 2>/dev/null
	fi
	[ -n "$READY" ] && rm -f "$READY"
	log "console log: $WORK/guest.log"
	exit "$rc"
}
trap cleanup EXIT
trap 'log "stopping"; exit 130' INT TERM HUP

kh_lock 600 || { log "another interop guest held the lock for 600 s"; exit 1; }
timeout -k 10 600 "$KH_RUN_GUEST" --build-only >"$WORK/build.log" 2>&1 ||
	{ tail -20 "$WORK/build.log" >&2; log "harness cache build failed"; exit 1; }

log "booting the kernel target (ready in ~30-60 s under TCG); console: $WORK/guest.log"
KH_TIMEOUT=$((BOOT + SECS + 60)) KH_FIO=0 KH_CONSOLE_LOG=$WORK/console.log \
KH_NETDEV_EXTRA=",hostfwd=tcp:127.0.0.1:$PORT-10.0.2.15:4420" \
	"$KH_RUN_GUEST" -e KT_ACTION=serve -e KT_ADDR=10.0.2.15 -e KT_PORT=4420 \
	-e "KT_NQN=$NQN" -e "KT_NS_MB=$NS_MB" -e "KT_SERVE_SECONDS=$SECS" \
	"${EXTRA_ENV[@]+"${EXTRA_ENV[@]}"}" \
	"$HERE/guest/kernel_target.sh" >"$WORK/guest.log" 2>&1 </dev/null 8>&- &
GUEST_PID=$!

t0=$SECONDS
until grep -q 'KH-TARGET-READY' "$WORK/guest.log" 2>/dev/null; do
	if ! kill -0 "$GUEST_PID" 2>/dev/null || [ $((SECONDS - t0)) -gt "$BOOT" ]; then
		tail -30 "$WORK/guest.log" >&2
		log "the kernel target did not come up"
		exit 1
	fi
	sleep 0.5
done
if grep -q 'KT-FAIL' "$WORK/guest.log"; then
	grep 'KT-FAIL' "$WORK/guest.log" >&2
	exit 1
fi
echo "KERNEL-TARGET-READY traddr=127.0.0.1 trsvcid=$PORT subnqn=$NQN ns=${NS_MB}MiB for ${SECS}s"
echo "  e.g. nvmf-perf -r 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN' -w randrw --verify -t 10"
[ -n "$READY" ] && : >"$READY"
wait "$GUEST_PID"
rc=$?
GUEST_PID=""
grep -E 'KH-STOP seen|KH-TARGET-DONE|KH-GUEST-END' "$WORK/guest.log" >&2
exit "$rc"
