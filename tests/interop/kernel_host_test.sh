#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kernel_host_test.sh - nvmfd against the real Linux NVMe/TCP host.
#
# Starts build/bin/nvmfd on 127.0.0.1 (a free port, checked with ss) with
#   - subsystem IOP_NQN: a RAM namespace, a known serial and model, and one
#     allowed host NQN (the one the guest is told to use), and
#   - subsystem IOP_DENY_NQN that does not allow that host,
# then boots Debian's stock kernel in QEMU with the shared kernel-host
# harness and runs guest/interop.sh there (discover, connect, id-ctrl,
# id-ns, 64 MiB O_DIRECT pattern, fio verify, digests, denied connect).
# Afterwards nvmfd must still be alive, and must exit 0 on SIGTERM.
#
#   kernel_host_test.sh                 the test (suite 'interop')
#   kernel_host_test.sh --kernel-target the same guest script against the
#                                       kernel target inside the guest (no
#                                       nvmfd): validates the harness itself
#   kernel_host_test.sh --nvmfd PATH    nvmfd binary when NVMFD_BIN is unset
#
# Exit: 0 pass, 1 fail, 77 skip (no qemu, no harness, no nvmfd binary, or
# the harness cache cannot be built), 124 a timeout was hit.
#
# Environment:
#   NVMFD_BIN          directory holding nvmfd (or the binary itself);
#                      default: --nvmfd PATH, else <repo>/build/bin
#   NVMFD_EXTRA_ARGS   extra nvmfd flags (word-split), e.g. "--exec unbound"
#   NVMFD_STATS_INTERVAL  nvmfd --stats-interval (default 5 s): the stats
#                      JSON goes to the nvmfd log; on failure the last 3 are
#                      printed, to tell a stalled queue from a starved guest
#   KH_HARNESS         the kernel-host harness directory; default
#                      <repo>/../shared/interop/kernel-host, then
#                      /work/shared/interop/kernel-host
#   KERNEL_HOST_CACHE  harness cache; default /var/cache/nvmfd-kernel-host
#                      when writable, else <repo>/.kernel-host-cache
#   KH_TIMEOUT         hard limit in seconds for the guest (default 600)
#   KH_BUILD_TIMEOUT   limit for building the harness cache (default 600)
#   KH_NO_KVM          1 (default) = TCG; KVM hangs in the nested VMs this
#                      project runs on. 0 lets the harness use /dev/kvm.
#   KH_PORT            TCP port for nvmfd (default: a free one in 20000-39999)
#   KH_NS_MB           namespace size in MiB (default 128)
#   KH_NS_SPEC         nvmfd --namespace of the subsystem under test (default
#                      ram:<KH_NS_MB>M); must be KH_NS_MB MiB, e.g.
#                      "file:/tmp/ns.img,size=128M,direct"; "file" and
#                      "file-direct" use a file in the work directory. For
#                      file namespaces the head of the file is compared
#                      with the guest's dd pattern after nvmfd has exited.
#   KH_KEEP_LOGS       1 = keep the work directory (logs) even on success
#   IOP_*              passed through to guest/interop.sh (see there), e.g.
#                      IOP_IO_MB, IOP_FIO_SECONDS, IOP_CONNECT_OPTS
#   KH_KERNEL_PKG      guest kernel package (harness), e.g.
#                      linux-image-6.12-amd64 (resolved with apt-cache)
#   KH_DHCHAP          1 = also DH-HMAC-CHAP (guest step 9; needs a kernel
#                      with CONFIG_NVME_HOST_AUTH: Debian 12's 6.12, not
#                      6.1): nvmfd gets subsystem IOP_AUTH_NQN whose only
#                      host (another host NQN) has the host and controller
#                      keys of examples/security (--dhchap-key @FILE)
#   KH_DHCHAP_HASH, KH_DHCHAP_DHGROUP  that host's hash and DH group
#                      (default sha384, ffdhe3072)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODE=nvmfd
ARG_NVMFD=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel-target) MODE=kernel; shift ;;
	--nvmfd) ARG_NVMFD=${2:-}; shift 2 ;;
	-h|--help) sed -n '4,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "kernel_host_test.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

log() { echo "kernel_host_test: $*"; }
skip() { log "SKIP: $*"; exit 77; }

KH_TIMEOUT=${KH_TIMEOUT:-600}
KH_BUILD_TIMEOUT=${KH_BUILD_TIMEOUT:-600}
export KH_NO_KVM=${KH_NO_KVM:-1}
KH_NS_MB=${KH_NS_MB:-128}

# ---------------------------------------------------------------- prerequisites
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
# shellcheck source-path=SCRIPTDIR source=kh_common.sh
. "$HERE/kh_common.sh"
kh_find_harness || skip "kernel-host harness (run-guest.sh) not found; set KH_HARNESS"
RUN_GUEST=$KH_RUN_GUEST

NVMFD=""
NVMFCTL=""
if [ "$MODE" = nvmfd ]; then
	b=${NVMFD_BIN:-${ARG_NVMFD:-$KH_REPO/build/bin}}
	[ -d "$b" ] && b=$b/nvmfd
	[ -x "$b" ] || skip "no nvmfd binary at $b (build it first: scripts/build.sh)"
	NVMFD=$(readlink -f "$b")
	command -v ss >/dev/null || skip "ss (iproute2) not installed"
	# step 4b of the guest (a namespace added over the control socket)
	# needs nvmfctl beside nvmfd and python3 for the trigger
	NVMFCTL=$(dirname "$NVMFD")/nvmfctl
	[ -x "$NVMFCTL" ] && command -v python3 >/dev/null || NVMFCTL=""
fi
TRIGGER_PID=""

if [ -n "${KH_KERNEL_PKG:-}" ]; then
	kh_kernel_pkg "$KH_KERNEL_PKG" || skip "cannot resolve $KH_KERNEL_PKG to a kernel package"
	log "guest kernel package: $KH_KERNEL_PKG"
fi
KH_DHCHAP=${KH_DHCHAP:-0}
[ "$KH_DHCHAP" = 1 ] && [ "$MODE" != nvmfd ] && skip "KH_DHCHAP=1 needs nvmfd (not --kernel-target)"
kh_pick_cache || skip "cannot create the harness cache $KERNEL_HOST_CACHE"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmfd-interop.XXXXXX")
NVMFD_PID=""
KEEP=${KH_KEEP_LOGS:-0}

# stop_nvmfd SIG SECONDS: signal nvmfd, wait for it; its status in NVMFD_RC
NVMFD_RC=""
stop_nvmfd() {
	local i
	kill -"$1" "$NVMFD_PID" 2>/dev/null
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$NVMFD_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$NVMFD_PID" 2>/dev/null; then
		NVMFD_RC=timeout
		return 1
	fi
	wait "$NVMFD_PID"
	NVMFD_RC=$?
	NVMFD_PID=""
	return 0
}

GUEST_PID=""
TAIL_PID=""
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	if [ -n "$GUEST_PID" ]; then
		log "cleanup: stopping the guest"
		kill -TERM "$GUEST_PID" 2>/dev/null
		wait "$GUEST_PID" 2>/dev/null
	fi
	[ -n "$TAIL_PID" ] && kill "$TAIL_PID" 2>/dev/null
	[ -n "$TRIGGER_PID" ] && kill "$TRIGGER_PID" 2>/dev/null && wait "$TRIGGER_PID" 2>/dev/null
	if [ -n "$NVMFD_PID" ] && kill -0 "$NVMFD_PID" 2>/dev/null; then
		log "cleanup: stopping nvmfd (pid $NVMFD_PID)"
		stop_nvmfd TERM 10 || { kill -KILL "$NVMFD_PID" 2>/dev/null; wait "$NVMFD_PID" 2>/dev/null; }
	fi
	if [ "$rc" = 0 ] && [ "$KEEP" != 1 ]; then
		rm -rf "$WORK"
	else
		log "logs kept in $WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM HUP

# ------------------------------------------------------------- harness cache
# One guest at a time on this machine (2 shared cores): serialise runs of
# this script through a lock in the cache directory.
if ! kh_lock "$KH_TIMEOUT"; then
	log "FAIL: another interop run held the lock for ${KH_TIMEOUT}s"
	exit 124
fi
log "building/checking the harness cache in $KERNEL_HOST_CACHE"
if ! timeout -k 10 "$KH_BUILD_TIMEOUT" "$RUN_GUEST" --build-only >"$WORK/build.log" 2>&1; then
	tail -20 "$WORK/build.log"
	skip "kernel-host harness cache could not be built (see above)"
fi

# ---------------------------------------------------------------- identities
UUID=$(cat /proc/sys/kernel/random/uuid)
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$UUID
IOP_NQN=${IOP_NQN:-nqn.2026-11.io.nvmfd:interop}
IOP_DENY_NQN=${IOP_DENY_NQN:-nqn.2026-11.io.nvmfd:interop-deny}
SERIAL=${IOP_SERIAL:-NVMFD-IOP-0001}
MODEL=${IOP_MODEL:-nvmfd interop ram}
OTHER_HOST=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000beef
# DH-HMAC-CHAP (KH_DHCHAP=1): a host of its own, so that the plain steps'
# host needs no key (a key applies to every subsystem listing its host)
IOP_AUTH_NQN=nqn.2026-11.io.nvmfd:interop-auth
AUTH_UUID=$(cat /proc/sys/kernel/random/uuid)
AUTH_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$AUTH_UUID
if [ "$KH_DHCHAP" = 1 ]; then
	cp "$KH_REPO/examples/security/host.key" "$KH_REPO/examples/security/ctrl.key" "$WORK/"
	chmod 600 "$WORK/host.key" "$WORK/ctrl.key"
fi

# pass every IOP_* setting of our environment on to the guest
GUEST_ENV=()
while IFS='=' read -r name _; do
	case "$name" in
	IOP_NQN|IOP_DENY_NQN|IOP_SERIAL|IOP_MODEL|IOP_HOSTNQN|IOP_HOSTID|IOP_ADDR|IOP_PORT|IOP_EXPECT_TRADDR|IOP_NS_BYTES|IOP_TRIGGER_PORT|IOP_AUTH_*|IOP_DHCHAP_*) ;;
	IOP_*) GUEST_ENV+=(-e "$name=${!name}") ;;
	esac
done < <(env)

# ---------------------------------------------------------------- nvmfd
NS_SPEC=${KH_NS_SPEC:-ram:${KH_NS_MB}M}
case "$NS_SPEC" in
file) NS_SPEC="file:$WORK/ns.img,size=${KH_NS_MB}M" ;;
file-direct) NS_SPEC="file:$WORK/ns.img,size=${KH_NS_MB}M,direct" ;;
esac
port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

start_nvmfd() {
	local port=$1 i
	local -a args=(--listen "127.0.0.1:$port"
		--subsystem "$IOP_NQN" --namespace "$NS_SPEC"
		--serial "$SERIAL" --model "$MODEL" --allow-host "$HOSTNQN"
		--subsystem "$IOP_DENY_NQN" --namespace ram:16M --allow-host "$OTHER_HOST"
		--log-level "${NVMFD_LOG_LEVEL:-info}"
		--stats-interval "${NVMFD_STATS_INTERVAL:-5}")
	[ -n "$NVMFCTL" ] && args+=(--control "$WORK/ctl.sock")
	[ "$KH_DHCHAP" = 1 ] && args+=(--subsystem "$IOP_AUTH_NQN" --namespace ram:32M
		--dhchap-key "$AUTH_HOSTNQN=@$WORK/host.key,ctrl=@$WORK/ctrl.key,hash=${KH_DHCHAP_HASH:-sha384},dhgroup=${KH_DHCHAP_DHGROUP:-ffdhe3072}")
	# shellcheck disable=SC2206 # word splitting wanted
	args+=(${NVMFD_EXTRA_ARGS:-})
	log "starting $NVMFD ${args[*]}"
	"$NVMFD" "${args[@]}" </dev/null >>"$WORK/nvmfd.log" 2>&1 8>&- &
	NVMFD_PID=$!
	for ((i = 0; i < 100; i++)); do
		if ! kill -0 "$NVMFD_PID" 2>/dev/null; then
			wait "$NVMFD_PID"
			log "nvmfd exited with status $? before listening"
			NVMFD_PID=""
			return 1
		fi
		grep -q "listening on 127.0.0.1:$port" "$WORK/nvmfd.log" && break
		sleep 0.1
	done
	# whatever the log says, the socket must be there and be nvmfd's
	for ((i = 0; i < 50; i++)); do
		ss -Hltnp "sport = :$port" 2>/dev/null | grep -q "pid=$NVMFD_PID," && return 0
		sleep 0.1
	done
	log "nvmfd (pid $NVMFD_PID) is not listening on 127.0.0.1:$port after 15 s"
	return 2
}

if [ "$MODE" = nvmfd ]; then
	PORT=""
	for ((try = 0; try < 5; try++)); do
		p=${KH_PORT:-$((20000 + (RANDOM * 32768 + RANDOM) % 20000))}
		if ! port_free "$p"; then
			log "port $p is in use"
			[ -n "${KH_PORT:-}" ] && break
			continue
		fi
		start_nvmfd "$p"
		src=$?
		if [ $src = 0 ]; then
			PORT=$p
			break
		fi
		# retry only when another process took the port in between
		if [ $src != 1 ] || [ -n "${KH_PORT:-}" ] || ! grep -qi 'in use' "$WORK/nvmfd.log"; then
			break
		fi
	done
	if [ -z "$PORT" ]; then
		log "FAIL: could not start nvmfd; its log:"
		cat "$WORK/nvmfd.log"
		exit 1
	fi
	log "nvmfd pid $NVMFD_PID listening on 127.0.0.1:$PORT"
	GUEST_ENV+=(-e "IOP_ADDR=10.0.2.2" -e "IOP_PORT=$PORT" -e "IOP_EXPECT_TRADDR=127.0.0.1"
		-e "IOP_NQN=$IOP_NQN" -e "IOP_DENY_NQN=$IOP_DENY_NQN"
		-e "IOP_SERIAL=$SERIAL" -e "IOP_MODEL=$MODEL"
		-e "IOP_HOSTNQN=$HOSTNQN" -e "IOP_HOSTID=$UUID"
		-e "IOP_NS_BYTES=$((KH_NS_MB * 1048576))")
	if [ -n "$NVMFCTL" ]; then
		python3 "$HERE/rpc_trigger.py" "$NVMFCTL" "$WORK/ctl.sock" "$IOP_NQN" \
			"$WORK/trigger.port" >"$WORK/trigger.log" 2>&1 </dev/null 8>&- &
		TRIGGER_PID=$!
		for ((i = 0; i < 50; i++)); do
			[ -s "$WORK/trigger.port" ] && break
			sleep 0.1
		done
		if [ -s "$WORK/trigger.port" ]; then
			GUEST_ENV+=(-e "IOP_TRIGGER_PORT=$(cat "$WORK/trigger.port")")
			log "control-socket trigger on 127.0.0.1:$(cat "$WORK/trigger.port")"
		else
			log "(the control-socket trigger did not start: step 4b skipped)"
		fi
	else
		log "(no nvmfctl beside nvmfd: step 4b skipped)"
	fi
	if [ "$KH_DHCHAP" = 1 ]; then
		GUEST_ENV+=(-e "IOP_AUTH_NQN=$IOP_AUTH_NQN" -e "IOP_AUTH_HOSTNQN=$AUTH_HOSTNQN"
			-e "IOP_AUTH_HOSTID=$AUTH_UUID"
			-e "IOP_DHCHAP_KEY=$(cat "$WORK/host.key")"
			-e "IOP_DHCHAP_CTRL_KEY=$(cat "$WORK/ctrl.key")"
			-e "IOP_DHCHAP_WRONG_KEY=DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:")
	fi
	GUEST_SCRIPT=$HERE/guest/interop.sh
	GUEST_FILES=()
else
	GUEST_ENV+=(-e "KT_ACTION=selftest" -e "KT_ADDR=127.0.0.1" -e "KT_PORT=4420"
		-e "KT_NQN=$IOP_NQN" -e "KT_DENY_NQN=$IOP_DENY_NQN"
		-e "KT_SERIAL=$SERIAL" -e "KT_MODEL=$MODEL" -e "KT_NS_MB=$KH_NS_MB"
		-e "KT_ALLOW_HOST=$HOSTNQN" -e "IOP_HOSTID=$UUID")
	GUEST_SCRIPT=$HERE/guest/kernel_target.sh
	GUEST_FILES=(-f "$HERE/guest/interop.sh")
fi

# ---------------------------------------------------------------- guest
log "host load average: $(cut -d' ' -f1-3 /proc/loadavg)"
log "booting the kernel host (KH_TIMEOUT=${KH_TIMEOUT}s, KH_NO_KVM=$KH_NO_KVM, work dir $WORK)"
T0=$SECONDS
# In the background so that a SIGTERM (meson's timeout) is handled at once:
# timeout(1) forwards it to run-guest.sh, which stops QEMU.
KH_TIMEOUT=$KH_TIMEOUT KH_CONSOLE_LOG=$WORK/console.log \
	timeout -k 10 $((KH_TIMEOUT + 120)) "$RUN_GUEST" "${GUEST_ENV[@]}" "${GUEST_FILES[@]}" \
	"$GUEST_SCRIPT" >"$WORK/guest.log" 2>&1 </dev/null 8>&- &
GUEST_PID=$!
tail --pid="$GUEST_PID" -n +1 -f "$WORK/guest.log" &
TAIL_PID=$!
wait "$GUEST_PID"
GRC=$?
GUEST_PID=""
wait "$TAIL_PID" 2>/dev/null
TAIL_PID=""
log "guest finished with status $GRC after $((SECONDS - T0)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"

FAILS=0
report() { log "$1: $2"; [ "$1" = PASS ] || FAILS=$((FAILS + 1)); }

case "$GRC" in
0) report PASS "guest script (kernel host) passed" ;;
124) report FAIL "guest timed out (KH_TIMEOUT=${KH_TIMEOUT}s)" ;;
125) report FAIL "guest died without reporting a status" ;;
2) report FAIL "harness usage/build error" ;;
*) report FAIL "guest script failed (status $GRC)" ;;
esac

if [ "$MODE" = nvmfd ]; then
	if kill -0 "$NVMFD_PID" 2>/dev/null; then
		report PASS "nvmfd still alive after the guest run"
		if stop_nvmfd TERM 30; then
			if [ "$NVMFD_RC" = 0 ]; then
				report PASS "nvmfd exited 0 on SIGTERM"
			else
				report FAIL "nvmfd exited $NVMFD_RC on SIGTERM"
			fi
		else
			report FAIL "nvmfd did not exit within 30 s of SIGTERM"
			kill -KILL "$NVMFD_PID" 2>/dev/null
			wait "$NVMFD_PID" 2>/dev/null
			NVMFD_PID=""
		fi
	else
		wait "$NVMFD_PID" 2>/dev/null
		report FAIL "nvmfd died during the guest run (status $?)"
		NVMFD_PID=""
	fi
fi

# DH-HMAC-CHAP: the target side saw what the guest did
if [ "$MODE" = nvmfd ] && [ "$KH_DHCHAP" = 1 ]; then
	h=${KH_DHCHAP_HASH:-sha384}
	h=${h#hmac(}
	h=${h%)}
	g=${KH_DHCHAP_DHGROUP:-ffdhe3072}
	for m in bidirectional unidirectional; do
		if grep -qF "authenticated (DH-HMAC-CHAP $m, $h, $g)" "$WORK/nvmfd.log"; then
			report PASS "nvmfd logged the $m DH-HMAC-CHAP ($h, $g) of the kernel host"
		else
			report FAIL "nvmfd did not log a $m DH-HMAC-CHAP ($h, $g)"
		fi
	done
	for w in "host response does not match the host key" "host sent AUTH_Failure2"; do
		if grep -qF "DH-HMAC-CHAP failed: $w" "$WORK/nvmfd.log"; then
			report PASS "nvmfd logged the refused connect ($w)"
		else
			report FAIL "nvmfd did not log a refused connect ($w)"
		fi
	done
fi

# A file namespace outlives nvmfd: its head must hold the guest's pattern.
spec=$NS_SPEC
if [ "$MODE" = nvmfd ] && [ "${spec#file:}" != "$spec" ] && [ -z "$NVMFD_PID" ]; then
	f=${spec#file:}
	f=${f%%,*}
	mb=${IOP_IO_MB:-64}
	want=$(sed -n 's/.*PASS: dd plain: .* (md5 \([0-9a-f]*\)).*/\1/p' "$WORK/guest.log" | head -1)
	got=$(head -c $((mb * 1048576)) "$f" 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ -z "$want" ]; then
		log "(no dd pattern md5 from the guest: backing file not checked)"
	elif [ "$got" = "$want" ]; then
		report PASS "backing file $f holds the guest's $mb MiB pattern (md5 $got)"
	else
		report FAIL "backing file $f: first $mb MiB md5 $got, the guest wrote $want"
	fi
fi

echo
log "guest check lines:"
grep -aE '^(PASS|FAIL|SKIP): |^INTEROP RESULT' "$WORK/guest.log" | sed 's/^/    /'
if [ "$MODE" = nvmfd ] && { [ "$FAILS" -gt 0 ] || [ "${NVMFD_SHOW_LOG:-0}" = 1 ]; }; then
	echo
	log "nvmfd log (last 200 lines of $WORK/nvmfd.log, without the stats JSON):"
	grep -v '^{' "$WORK/nvmfd.log" | tail -n 200 | sed 's/^/    /'
	log "nvmfd stats (last 3 of every ${NVMFD_STATS_INTERVAL:-5} s):"
	grep '^{' "$WORK/nvmfd.log" | tail -n 3 | sed 's/^/    /'
fi
if [ "$FAILS" -gt 0 ]; then
	log "RESULT: FAIL ($FAILS failed)"
	[ "$GRC" = 124 ] && exit 124
	exit 1
fi
log "RESULT: PASS"
exit 0
