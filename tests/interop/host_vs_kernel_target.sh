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
#   5. DH-HMAC-CHAP against a second subsystem that allows only one host
#      NQN, whose nvmet host entry has a dhchap_key and a dhchap_ctrl_key
#      (HVK_DHCHAP_HASH, HVK_DHCHAP_DHGROUP: hmac(sha384), ffdhe2048 by
#      default): nvmf-perf --verify with
#        the host and controller secrets (bidirectional, 2 I/O queues; the
#        host secret read from a 0600 file with @FILE) -> must pass
#        the same with --reauth-interval 250 (every queue re-authenticates
#        while I/O verifies; the report counts them) -> must pass
#        the host secret only (unidirectional)   -> must pass
#        a wrong host secret                     -> must exit 3, naming
#                                                   DH-HMAC-CHAP
#        the right host secret, a wrong controller secret -> exit 3,
#                                                   controller not proven
#        no secret                               -> exit 3, "no host secret"
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
#   HVK_DHCHAP_HASH, HVK_DHCHAP_DHGROUP  nvmet's dhchap_hash / dhchap_dhgroup
#                 for step 5 (default hmac(sha384), ffdhe2048)
#   HVK_AUTH      step 5: auto (default: skipped, with a SKIP line, when the
#                 guest kernel's nvmet lacks DH-HMAC-CHAP, as Debian 12's
#                 6.1 kernel does), 1 (must run), 0 (leave it out)
#   HVK_STEPS     all (default) or auth (step 5 only)
#   HVK_KERNEL_PKG  guest kernel package (KH_KERNEL_PKG of the harness), or
#                 a meta package such as linux-image-6.12-amd64, resolved with
#                 apt-cache to the versioned package it depends on (skip if
#                 that fails); default: the harness's (Debian 12's 6.1)
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
HVK_AUTH=${HVK_AUTH:-auto}
HVK_STEPS=${HVK_STEPS:-all}
case "$HVK_AUTH" in auto|0|1) ;; *) log "HVK_AUTH must be auto, 0 or 1"; exit 2 ;; esac
case "$HVK_STEPS" in all|auth) ;; *) log "HVK_STEPS must be all or auth"; exit 2 ;; esac
# shellcheck source-path=SCRIPTDIR source=kh_common.sh
. "$HERE/kh_common.sh"
if [ -n "${HVK_KERNEL_PKG:-}" ]; then
	kh_kernel_pkg "$HVK_KERNEL_PKG" ||
		skip "cannot resolve $HVK_KERNEL_PKG to a kernel package"
	log "guest kernel package: $KH_KERNEL_PKG"
fi
SECS=${HVK_SECONDS:-4}
DEPTH=${HVK_DEPTH:-16}
NQN=nqn.2026-11.io.nvmfd:kernel-target
# Step 5: a subsystem that only AUTH_HOST may use, with DH-HMAC-CHAP. The
# secrets are test values made with 'nvme gen-dhchap-key' (nvme-cli 2.3).
AUTH_NQN=nqn.2026-11.io.nvmfd:kernel-target-auth
AUTH_HOST=nqn.2014-08.org.nvmexpress:uuid:6a1f4f2e-9d4b-4e0a-8f43-1c2d3e4f5a6b
KEY_HOST='DHHC-1:01:cPp7ca76JYk874YzDvneSLWJCIv1KpKpr9VR2oUU0ymfTKRE:'
KEY_CTRL='DHHC-1:02:sk7XCFbgqNpChLL//jAjOWaRk3yNRknLsJUinr8zZAai+OmNf4px8u/mvNVmN0B8Gawohg==:'
KEY_WRONG='DHHC-1:00:irsVTz+mPynlaX1W/GtM/1vUYA/b4ogHEKpb6Tle/Ytuz87i:'
DH_HASH=${HVK_DHCHAP_HASH:-hmac(sha384)}
DH_GROUP=${HVK_DHCHAP_DHGROUP:-ffdhe2048}
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
AUTH_ENV=()
if [ "$HVK_AUTH" != 0 ]; then
	AUTH_ENV=(-e "KT_AUTH_NQN=$AUTH_NQN" -e "KT_AUTH_HOST=$AUTH_HOST"
		-e "KT_DHCHAP_KEY=$KEY_HOST" -e "KT_DHCHAP_CTRL_KEY=$KEY_CTRL"
		-e "KT_DHCHAP_HASH=$DH_HASH" -e "KT_DHCHAP_DHGROUP=$DH_GROUP")
fi
bash "$HERE/kernel_target_serve.sh" -p "$PORT" -t 900 -s 256 -n "$NQN" -r "$WORK/ready" \
	"${AUTH_ENV[@]+"${AUTH_ENV[@]}"}" >"$WORK/serve.log" 2>&1 &
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
	log "RUN $name: nvmf-perf ${*//DHHC-1:??:*:/<secret>}"
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

DIGEST_MODES=(plain digest)
[ "$HVK_STEPS" = auth ] && DIGEST_MODES=()
for dg in "${DIGEST_MODES[@]+"${DIGEST_MODES[@]}"}"; do
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

# 5. DH-HMAC-CHAP. step_refused NAME PATTERN ARGS...: nvmf-perf must exit 3
# (connection refused cleanly) with PATTERN on stderr, and never print a secret.
step_refused() {
	local name=$1 pat=$2 rc
	shift 2
	log "RUN $name (must be refused): nvmf-perf ${*//DHHC-1:??:*:/<secret>}"
	"$PERF" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	sed 's/^/    stderr: /' "$WORK/$name.err"
	if [ "$rc" -ne 3 ]; then
		log "FAIL: $name exited $rc, want 3"
		FAILS=$((FAILS + 1))
	elif ! grep -q -- "$pat" "$WORK/$name.err"; then
		log "FAIL: $name: stderr lacks '$pat'"
		FAILS=$((FAILS + 1))
	else
		log "PASS: $name"
	fi
}
no_secret_printed() {
	if grep -l -e "$KEY_HOST" -e "$KEY_CTRL" -e "$KEY_WRONG" "$WORK"/*.out "$WORK"/*.err \
		2>/dev/null; then
		log "FAIL: a secret was printed"
		FAILS=$((FAILS + 1))
	fi
}
TRID_AUTH="$TRID_DISC subnqn:$AUTH_NQN hostnqn:$AUTH_HOST"
run_auth=$HVK_AUTH
# kernel_target_serve.sh shows the guest's KH-TARGET-AUTH* line only in its
# console log; it names that file in its own log.
glog=$(sed -n 's/.*console: \([^ ]*guest.log\).*/\1/p' "$WORK/serve.log" | head -1)
[ -n "$glog" ] && grep -h 'KH-TARGET-AUTH' "$glog" 2>/dev/null | sed 's/^/    /'
if [ "$run_auth" != 0 ] && [ -n "$glog" ] && grep -q 'KH-TARGET-AUTH-UNSUPPORTED' "$glog"; then
	if [ "$run_auth" = 1 ]; then
		log "FAIL: HVK_AUTH=1 but the guest kernel's nvmet has no DH-HMAC-CHAP"
		FAILS=$((FAILS + 1))
	else
		log "SKIP: DH-HMAC-CHAP steps (the guest kernel's nvmet lacks it; set" \
		    "HVK_KERNEL_PKG=linux-image-6.12-amd64)"
	fi
	run_auth=0
fi
if [ "$run_auth" != 0 ]; then
(umask 077 && printf '%s\n' "$KEY_HOST" >"$WORK/host.key")
AUTH_IO=(-w randrw -M 50 -o 4k -q "$DEPTH" -t "$SECS" --verify --timeout 30000)
# Two I/O queues: every queue (admin and each I/O queue) authenticates.
step "dhchap-bidirectional" -r "$TRID_AUTH" "${AUTH_IO[@]}" -P 2 --json \
	--dhchap-secret "@$WORK/host.key" --dhchap-ctrl-secret "$KEY_CTRL"
# The report: bidirectional, the hash/group nvmet was configured with, and
# all three queues (admin + 2 I/O) authenticated.
for want in '"dhchap": *"bidirectional"' '"dhchap_queues": *3' \
	    "\"dhchap_hash\": *\"$(echo "$DH_HASH" | sed 's/hmac(\(.*\))/\1/')\"" \
	    "\"dhchap_dhgroup\": *\"$DH_GROUP\""; do
	if ! grep -q "$want" "$WORK/dhchap-bidirectional.out"; then
		log "FAIL: dhchap-bidirectional: the JSON report lacks $want"
		FAILS=$((FAILS + 1))
	fi
done
# Re-authentication on request while I/O verifies: every queue runs new
# transactions against nvmet (nvmf-perf --reauth-interval).
step "dhchap-reauth" -r "$TRID_AUTH" "${AUTH_IO[@]}" -P 2 --json --reauth-interval 250 \
	--dhchap-secret "@$WORK/host.key" --dhchap-ctrl-secret "$KEY_CTRL"
if ! python3 - "$WORK/dhchap-reauth.out" <<'PY'; then
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["reauth_admin"] >= 1 and c["reauth_io"] >= 2, c
PY
	log "FAIL: dhchap-reauth: no re-authentication counted in the report"
	FAILS=$((FAILS + 1))
fi
step "dhchap-unidirectional" -r "$TRID_AUTH" "${AUTH_IO[@]}" --dhchap-secret "$KEY_HOST"
# nvmet drops the connection after a failed transaction, often before its
# AUTH_Failure1 reaches the host: either way the message names DH-HMAC-CHAP.
step_refused "dhchap-wrong-secret" "DH-HMAC-CHAP" -r "$TRID_AUTH" "${AUTH_IO[@]}" \
	--dhchap-secret "$KEY_WRONG"
step_refused "dhchap-wrong-ctrl-secret" "controller response does not match" \
	-r "$TRID_AUTH" "${AUTH_IO[@]}" --dhchap-secret "$KEY_HOST" --dhchap-ctrl-secret "$KEY_WRONG"
step_refused "dhchap-no-secret" "no host secret" -r "$TRID_AUTH" "${AUTH_IO[@]}"
no_secret_printed
fi

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
