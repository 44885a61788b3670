#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# spdk_tls.sh - SPDK's NVMe/TCP host over TLS 1.3 with a PSK against nvmfd
# (the TLS interop partner: Debian 12 has no tlshd, so the Linux kernel
# host cannot do NVMe/TCP TLS here; doc/tls.md):
#   1. spdk_nvme_perf -S ssl --psk-path: 4 KiB random reads at QD32 pass;
#   2. bdevperf -w verify with the PSK from SPDK's keyring: data verified;
#   3. a wrong PSK: spdk_nvme_perf fails, nvmfd logs the refused binder;
#   4. nvmfd keying v0 identities the specification's way (the retained
#      PSK) refuses SPDK v25.09, which keys them with an HKDF over the
#      identity: the v0=spdk setting is needed, and this shows why.
# No hugepages needed (--no-huge). Exit 77 (skipped) with the reason when
# SPDK is not built or its perf has no TLS (ssl socket) support.
#
# Env: NVMFD (binary, required), SPDK_DIR (default
# /var/cache/nvmfd-anchors/spdk-v25.09, where ../shared/anchors/build-spdk.sh
# builds it).
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
SPDK_DIR=${SPDK_DIR:-/var/cache/nvmfd-anchors/spdk-v25.09}
PERF=$SPDK_DIR/build/bin/spdk_nvme_perf
BDEVPERF=$SPDK_DIR/build/examples/bdevperf
export LD_LIBRARY_PATH=$SPDK_DIR/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}
[ -x "$PERF" ] || skip "no SPDK spdk_nvme_perf at $PERF (build it with build-spdk.sh, or set SPDK_DIR)"
"$PERF" --help 2>&1 | grep -q -- "--psk-path" ||
	skip "$PERF has no TLS options (--psk-path): SPDK built without the ssl socket"

TMP=$(mktemp -d /tmp/nvmfd-spdk-tls-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
failures=0

HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5bd0f1a2-0c4e-4d8b-9a51-5bdc0de7a5e5
SUBNQN=nqn.2026-11.io.nvmfd:spdk-tls
# SPDK wants the interchange string with no line end after the final ':'
printf '%s' 'NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:' >"$TMP/psk.key"
printf '%s' 'NVMeTLSkey-1:01:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj/jBqb2:' >"$TMP/wrong.key"
chmod 600 "$TMP/psk.key" "$TMP/wrong.key"

# nvmfd_start, fail (tests/lib)
# shellcheck source=../lib/nvmfd_proc.sh
. "$(dirname "$0")/../lib/nvmfd_proc.sh"

# start V0: nvmfd, TLS required, the host's PSK keyed "spdk" or "retained"
start() {
	nvmfd_start -l 127.0.0.1:0 --tls -s "$SUBNQN" -n ram:64M --allow-host "$HOSTNQN" \
		--psk "$HOSTNQN=@$TMP/psk.key,v0=$1"
}


TRID() {
	echo "trtype:tcp adrfam:ipv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$HOSTNQN"
}

# spdk_perf NAME KEYFILE: 4 KiB random reads, QD32, 2 s. Success: exit 0
# and the controller attached (spdk_nvme_perf exits 0 also when it found
# no controller to attach)
spdk_perf() {
	local rc=0
	timeout 120 "$PERF" --no-huge -s 256 -S ssl --psk-path "$2" -r "$(TRID)" -q 32 -o 4096 \
		-w randread -t 2 >"$TMP/$1.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] && grep -q "^Attached to NVMeoF Controller" "$TMP/$1.out"
}

if start spdk; then
	if spdk_perf perf "$TMP/psk.key"; then
		grep -q "^Total .*: *[1-9]" "$TMP/perf.out" || fail "perf: no I/O in the report"
	else
		fail "spdk_nvme_perf over TLS failed"
		cat "$TMP/perf.out" >&2
	fi
	grep -q "TLS 1.3 TLS_AES_128_GCM_SHA256" "$TMP/stderr" ||
		fail "nvmfd did not log the TLS session"
	if [ -x "$BDEVPERF" ]; then
		cat >"$TMP/bdevperf.json" <<EOF
{ "subsystems": [
  { "subsystem": "keyring", "config": [ { "method": "keyring_file_add_key",
      "params": { "name": "key0", "path": "$TMP/psk.key" } } ] },
  { "subsystem": "bdev", "config": [ { "method": "bdev_nvme_attach_controller",
      "params": { "name": "Nvme0", "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
                  "trsvcid": "$PORT", "subnqn": "$SUBNQN", "hostnqn": "$HOSTNQN",
                  "psk": "key0" } } ] } ] }
EOF
		rc=0
		timeout 120 "$BDEVPERF" --no-huge -s 512 --json "$TMP/bdevperf.json" -q 16 -o 4096 \
			-w verify -t 2 >"$TMP/bdevperf.out" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			fail "bdevperf -w verify over TLS: exit $rc"
			tail -20 "$TMP/bdevperf.out" >&2
		fi
		grep -q "Nvme0n1 *: .* 0\.00 *0\.00 " "$TMP/bdevperf.out" ||
			fail "bdevperf: failed or timed out I/Os (Fail/s, TO/s not 0)"
	else
		echo "note: no bdevperf at $BDEVPERF: verified I/O not checked" >&2
	fi
	if spdk_perf wrong "$TMP/wrong.key"; then
		fail "spdk_nvme_perf with a wrong PSK was accepted"
	fi
	grep -q "TLS handshake failed: .*binder does not verify" "$TMP/stderr" ||
		fail "nvmfd did not log the refused PSK"
	nvmfd_stop
else
	fail "nvmfd did not start"
fi

if start retained; then
	if spdk_perf spec "$TMP/psk.key"; then
		fail "SPDK's v0 keying was accepted by a target keying v0 the specification's way"
	fi
	nvmfd_stop
else
	fail "nvmfd did not start"
fi

if [ "$failures" -gt 0 ]; then
	echo "spdk_tls: $failures failure(s)" >&2
	exit 1
fi
echo "spdk_tls: ok"
