#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# spdk_dhchap.sh - SPDK's NVMe/TCP host against nvmfd with DH-HMAC-CHAP.
#
# nvmfd runs examples/security/dhchap.json (copied, keys mode 0600, port 0;
# the example pins SHA-256 and ffdhe2048), then a variant pinning SHA-512
# and ffdhe8192. SPDK takes DH-HMAC-CHAP secrets only through its keyring:
# key files (absolute path, no group/other permissions) named in a JSON
# config (keyring_file_add_key) for bdevperf, or given by path to
# spdk_nvme_perf (--dhchap-key / --dhchap-ctrlr-key, which adds them to
# the keyring itself). Checks:
#   - bdevperf -w verify, bidirectional (dhchap_key + dhchap_ctrlr_key) and
#     unidirectional: passes, the target logs the mode, hash and group;
#   - spdk_nvme_perf randrw, bidirectional: I/O completes;
#   - a wrong host secret, a wrong controller secret, no secret: the
#     controller does not attach (bdevperf fails, spdk_nvme_perf finds no
#     controller) and the target logs why;
#   - nvmfd is alive afterwards and exits 0 on SIGTERM; no sanitizer report.
#
# Env: NVMFD (binary), EXAMPLES (examples/security), SPDK_DIR (an SPDK
# v25.09 build tree: build/examples/bdevperf, build/bin/spdk_nvme_perf,
# build/lib; default /var/cache/nvmfd-anchors/spdk-v25.09, where CI caches
# it). Exit 77 (skip) when SPDK is absent.
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
EX=${EXAMPLES:?EXAMPLES must point at examples/security}
SPDK_DIR=${SPDK_DIR:-/var/cache/nvmfd-anchors/spdk-v25.09}
BDEVPERF=$SPDK_DIR/build/examples/bdevperf
SPDK_PERF=$SPDK_DIR/build/bin/spdk_nvme_perf
for b in "$BDEVPERF" "$SPDK_PERF"; do
	if [ ! -x "$b" ]; then
		echo "SKIP: SPDK not found ($b missing; set SPDK_DIR to an SPDK build tree)"
		exit 77
	fi
done
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
export LD_LIBRARY_PATH=$SPDK_DIR/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# No hugepages on the CI machines; SPDK's core locks would clash with
# another SPDK process on the machine.
SPDK_ENV=(--no-huge -s 256)
BDEVPERF_ENV=("${SPDK_ENV[@]}" --no-pci --disable-cpumask-locks)

TMP=$(mktemp -d /tmp/nvmfd-spdk-dhchap-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	if [ "${failures:-0}" = 0 ] && [ "${KEEP_LOGS:-0}" = 0 ]; then
		rm -rf "$TMP"
	else
		echo "logs kept in $TMP" >&2
	fi
}
trap cleanup EXIT
failures=0
pass() { echo "PASS: $*"; }

HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:7c9a8d36-2b1e-4f0a-9e55-0d5ec0de0001
SUBNQN=nqn.2026-11.io.nvmfd:secure
cp "$EX/host.key" "$EX/ctrl.key" "$TMP/"
# a valid secret of the same shape that is not the configured one
echo 'DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:' >"$TMP/wrong.key"
chmod 600 "$TMP"/*.key

# mkcfg OUT HASH DHGROUP: the example with port 0 and the given settings
mkcfg() {
	python3 - "$EX/dhchap.json" "$1" "$2" "$3" <<'PY'
import json, sys
src, out, h, g = sys.argv[1:5]
cfg = json.load(open(src))
cfg["ports"][0]["addr"]["trsvcid"] = "0"
d = cfg["hosts"][0]["dhchap"]
d["key"] = "@host.key"
d["ctrl_key"] = "@ctrl.key"
d["hash"] = h
d["dhgroup"] = g
json.dump(cfg, open(out, "w"), indent=2)
PY
}

# nvmfd_start -c CONFIG: nvmfd in the background; sets PID and PORT
# nvmfd_start, fail (tests/lib)
# shellcheck source=../lib/nvmfd_proc.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/nvmfd_proc.sh"

stop() {
	local rc=0
	if ! kill -0 "$PID" 2>/dev/null; then
		fail "nvmfd died"
	else
		kill -TERM "$PID"
		wait "$PID" || rc=$?
		[ "$rc" = 0 ] || fail "nvmfd exit status $rc after SIGTERM"
	fi
	PID=
	grep -q "ERROR: AddressSanitizer\|runtime error:\|ThreadSanitizer" "$TMP/stderr" &&
		fail "sanitizer report in the nvmfd log"
	cat "$TMP/stderr" >>"$TMP/nvmfd.log"
}

# bdevperf_cfg OUT KEY CTRL_KEY: a bdevperf JSON config attaching nvmfd's
# subsystem, with keyring entries for the (absolute) key files given ("" =
# none); small pools so it runs in 256 MiB without hugepages.
bdevperf_cfg() {
	python3 - "$1" "$PORT" "$SUBNQN" "$HOSTNQN" "$2" "$3" <<'PY'
import json, sys
out, port, subnqn, hostnqn, key, ckey = sys.argv[1:7]
keys, attach = [], {"name": "N0", "trtype": "tcp", "adrfam": "ipv4",
                    "traddr": "127.0.0.1", "trsvcid": port, "subnqn": subnqn,
                    "hostnqn": hostnqn}
if key:
    keys.append({"method": "keyring_file_add_key", "params": {"name": "key0", "path": key}})
    attach["dhchap_key"] = "key0"
if ckey:
    keys.append({"method": "keyring_file_add_key", "params": {"name": "ckey0", "path": ckey}})
    attach["dhchap_ctrlr_key"] = "ckey0"
cfg = {"subsystems": [
    {"subsystem": "iobuf", "config": [{"method": "iobuf_set_options",
        "params": {"small_pool_count": 1024, "large_pool_count": 64}}]},
    {"subsystem": "keyring", "config": keys},
    {"subsystem": "bdev", "config": [
        {"method": "bdev_set_options", "params": {"bdev_io_pool_size": 1024,
                                                  "bdev_io_cache_size": 32}},
        {"method": "bdev_nvme_attach_controller", "params": attach},
        {"method": "bdev_wait_for_examine"}]}]}
json.dump(cfg, open(out, "w"), indent=1)
PY
}

# verify NAME WANT(pass|refused) KEY CTRL_KEY: bdevperf -w verify, 4 KiB QD16
# for 3 s and 128 KiB QD4 for 2 s
verify() {
	local name=$1 want=$2 rc=0
	bdevperf_cfg "$TMP/$name.json" "$3" "$4"
	timeout 120 "$BDEVPERF" "${BDEVPERF_ENV[@]}" --json "$TMP/$name.json" \
		-q 16 -o 4096 -w verify -t 3 >"$TMP/$name.out" 2>&1 || rc=$?
	if [ "$want" = pass ]; then
		if [ "$rc" != 0 ] || ! grep -q "Verification LBA range" "$TMP/$name.out"; then
			fail "$name: bdevperf verify exit $rc"
			tail -20 "$TMP/$name.out" >&2
			return 1
		fi
		timeout 120 "$BDEVPERF" "${BDEVPERF_ENV[@]}" --json "$TMP/$name.json" \
			-q 4 -o 131072 -w verify -t 2 >"$TMP/$name-128k.out" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			fail "$name: bdevperf verify 128 KiB exit $rc"
			tail -20 "$TMP/$name-128k.out" >&2
			return 1
		fi
		pass "$name: bdevperf verify 4 KiB + 128 KiB ($(sed -nE 's/.*Total +: +([0-9.]+) .*/\1/p' "$TMP/$name.out" |
			head -1) IOPS at 4 KiB)"
	else
		if [ "$rc" = 0 ] || grep -q "Verification LBA range" "$TMP/$name.out"; then
			fail "$name: bdevperf attached and ran (exit $rc), want refused"
			return 1
		fi
		pass "$name: refused (bdevperf exit $rc)"
	fi
}

# spdk_perf NAME WANT(pass|refused) ARGS...: spdk_nvme_perf randrw 4 KiB QD16
spdk_perf() {
	local name=$1 want=$2
	shift 2
	timeout 120 "$SPDK_PERF" "${SPDK_ENV[@]}" \
		-r "trtype:tcp adrfam:ipv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$HOSTNQN" \
		-q 16 -o 4096 -w randrw -M 50 -t 2 "$@" >"$TMP/$name.out" 2>&1
	# spdk_nvme_perf exits 0 even when no controller attached: judge the output
	if [ "$want" = pass ]; then
		if grep -qE "^Total +: +[1-9]" "$TMP/$name.out"; then
			pass "$name: spdk_nvme_perf $(grep -E '^Total' "$TMP/$name.out" | awk '{print $3}') IOPS"
		else
			fail "$name: spdk_nvme_perf did no I/O"
			tail -20 "$TMP/$name.out" >&2
		fi
	else
		if grep -qE "^Total +:" "$TMP/$name.out" ||
			! grep -q "Failed to attach\|No valid NVMe controllers" "$TMP/$name.out"; then
			fail "$name: spdk_nvme_perf was not refused"
			tail -20 "$TMP/$name.out" >&2
		else
			pass "$name: refused"
		fi
	fi
}

# logged NAME PATTERN: nvmfd logged PATTERN (fixed string)
logged() {
	if grep -qF -- "$2" "$TMP/stderr"; then
		pass "$1"
	else
		fail "$1: nvmfd did not log '$2'"
	fi
}

run_matrix() {
	local tag=$1 hash=$2 group=$3
	verify "$tag-bidi" pass "$TMP/host.key" "$TMP/ctrl.key"
	logged "$tag-bidi: target side" "authenticated (DH-HMAC-CHAP bidirectional, $hash, $group)"
	verify "$tag-uni" pass "$TMP/host.key" ""
	logged "$tag-uni: target side" "authenticated (DH-HMAC-CHAP unidirectional, $hash, $group)"
	spdk_perf "$tag-perf-bidi" pass --dhchap-key "$TMP/host.key" --dhchap-ctrlr-key "$TMP/ctrl.key"
	verify "$tag-wrong" refused "$TMP/wrong.key" ""
	logged "$tag-wrong: target side" "DH-HMAC-CHAP failed: host response does not match the host key"
	verify "$tag-wrong-ctrl" refused "$TMP/host.key" "$TMP/wrong.key"
	logged "$tag-wrong-ctrl: target side" "DH-HMAC-CHAP failed: host sent AUTH_Failure2"
	verify "$tag-none" refused "" ""
	spdk_perf "$tag-perf-wrong" refused --dhchap-key "$TMP/wrong.key"
}

mkcfg "$TMP/sha256.json" "hmac(sha256)" ffdhe2048
if nvmfd_start -c "$TMP/sha256.json"; then
	run_matrix sha256 sha256 ffdhe2048
	stop
else
	fail "nvmfd did not start with the example config"
fi
mkcfg "$TMP/sha512.json" "hmac(sha512)" ffdhe8192
if nvmfd_start -c "$TMP/sha512.json"; then
	run_matrix sha512 sha512 ffdhe8192
	stop
else
	fail "nvmfd did not start with the SHA-512/ffdhe8192 config"
fi

if [ "$failures" != 0 ]; then
	echo "spdk_dhchap: $failures failure(s)"
	tail -50 "$TMP/nvmfd.log" >&2
	exit 1
fi
echo "spdk_dhchap: all checks passed"
exit 0
