#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_tls.sh - NVMe/TCP over TLS 1.3 with PSKs end to end: nvmfd runs
# examples/security/tls.json (copied, psk.key mode 0600, port 0) and
# nvmf-perf connects over TLS (and SIGHUP re-reads the PSK file):
#   - identities v1 and v0 with --verify, TLS_AES_128_GCM_SHA256 (the
#     example's SHA-256 PSK), and TLS_AES_256_GCM_SHA384 (a SHA-384 PSK of a
#     second host given with --psk); SPDK's keying of v0 (v0=spdk);
#   - a wrong PSK and no TLS at all: exit 3, the target logs why, once, and
#     the host hints at TLS; a TLS host on a plain port: both sides say so;
#   - the discovery log entry says treq required, sectype tls1.3;
#   - a "not required" port (--tls=not-required): plain and TLS both work,
#     the discovery entry says not required;
#   - a world-readable PSK file and a bad PSK are refused at startup;
#   - --print-config redacts an inline --psk unless stdout is private, the
#     argv copy is overwritten, and neither logs, stats nor reports
#     contain a PSK.
#
# Env: NVMFD, NVMF_PERF (binaries), EXAMPLES (examples/security).
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
PERF=${NVMF_PERF:?NVMF_PERF must point at nvmf-perf}
EX=${EXAMPLES:?EXAMPLES must point at examples/security}
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 77; }
# nvmfd_start/nvmfd_stop, the scratch directory, fail()
# shellcheck source=../../lib/nvmfd_proc.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/nvmfd_proc.sh"
nvmfd_test_begin tls

HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:7c9a8d36-2b1e-4f0a-9e55-0d5ec0de0002
HOST384=nqn.2014-08.org.nvmexpress:uuid:7c9a8d36-2b1e-4f0a-9e55-0d5ec0de0384
SUBNQN=nqn.2026-11.io.nvmfd:tls
# git does not keep mode 0600: the copy gets it
cp "$EX/psk.key" "$TMP/psk.key"
chmod 600 "$TMP/psk.key"
PSK=$(cat "$TMP/psk.key")
# a SHA-384 PSK, and a valid SHA-256 PSK that is not the configured one
PSK384='NVMeTLSkey-1:02:QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5voBXMjQ==:'
WRONG='NVMeTLSkey-1:01:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj/jBqb2:'
printf '%s' "$PSK384" >"$TMP/psk384.key"
chmod 600 "$TMP/psk384.key"
python3 - "$EX/tls.json" "$TMP/tls.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["ports"][0]["addr"]["trsvcid"] = "0"
json.dump(cfg, open(sys.argv[2], "w"), indent=2)
PY



# perf NAME WANT_RC HOSTNQN ARGS...: one nvmf-perf run against $PORT
perf() {
	local name=$1 want=$2 host=$3 rc=0
	shift 3
	"$PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$host" \
		"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, want $want"
		cat "$TMP/$name.out" "$TMP/$name.err" >&2
		return 1
	fi
	cat "$TMP/$name.out" "$TMP/$name.err" >>"$TMP/all-perf"
	return 0
}

# discovery NAME TREQ SECTYPE: the entry of our subsystem
discovery() {
	local name=$1 treq=$2 sect=$3 rc=0
	shift 3
	"$PERF" discover -r "traddr:127.0.0.1 trsvcid:$PORT hostnqn:$HOSTNQN" --json "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" = 0 ] || { fail "$name: exit $rc: $(cat "$TMP/$name.err")"; return; }
	python3 - "$TMP/$name.out" "$SUBNQN" "$treq" "$sect" <<'PY' || fail "$name: entry"
import json, sys
out, nqn, treq, sect = sys.argv[1:5]
e = [e for e in json.load(open(out))["records"] if e["subnqn"] == nqn][0]
assert e["treq"].startswith(treq), e["treq"]
assert e["sectype"] == sect, e["sectype"]
PY
}

# --- the example config: TLS required ------------------------------------
if nvmfd_start -c "$TMP/tls.json" --allow-host "$HOST384" --psk "$HOST384=@$TMP/psk384.key" \
	--stats-interval 1; then
	perf v1 0 "$HOSTNQN" -P 2 -q 8 -o 4096 -w randrw -t 1 --verify --tls --psk "@$TMP/psk.key" \
		--json && python3 - "$TMP/v1.out" <<'PY' || fail "v1: report"
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["tls"] is True and c["tls_cipher"] == "TLS_AES_128_GCM_SHA256", c
PY
	perf v0 0 "$HOSTNQN" -q 8 -o 65536 -w randrw -t 1 --verify --tls --psk "$PSK" \
		--tls-identity 0 &&
		{ grep -q "TLS: TLS 1.3 TLS_AES_128_GCM_SHA256, identity v0" "$TMP/v0.out" ||
			fail "v0: no TLS line"; }
	# 2 s: at least one stats line (every second) while its queues exist
	perf sha384 0 "$HOST384" -q 8 -o 131072 -w randrw -t 2 --verify --tls \
		--psk "@$TMP/psk384.key" &&
		{ grep -q "TLS: TLS 1.3 TLS_AES_256_GCM_SHA384, identity v1" "$TMP/sha384.out" ||
			fail "sha384: no TLS line"; }
	perf sha384-v0 0 "$HOST384" -q 4 -w randread -t 1 --tls --psk "$PSK384" --tls-identity 0
	perf wrong 3 "$HOSTNQN" -t 1 --tls --psk "$WRONG"
	grep -q "TLS handshake refused" "$TMP/wrong.err" || fail "wrong: message does not say why"
	perf plain 3 "$HOSTNQN" -t 1
	grep -q "connection closed by the target before ICResp (does the port require TLS?)" \
		"$TMP/plain.err" || fail "plain: the host does not hint at TLS: $(cat "$TMP/plain.err")"
	perf spdk-keying 3 "$HOSTNQN" -t 1 --tls --psk "$PSK" --tls-identity spdk
	discovery disc required tls1.3 --tls --psk "@$TMP/psk.key"
	grep -q "binder does not verify" "$TMP/stderr" ||
		fail "the target did not log the refused PSK"
	[ "$(grep -c "requires TLS, the host sent plain NVMe/TCP" "$TMP/stderr")" = 1 ] ||
		fail "the plain ICReq was not logged exactly once"
	grep -q "records in user space (OpenSSL)\|records in the kernel (kTLS)" "$TMP/stderr" ||
		fail "the record layer in use is not logged"
	nvmfd_stop
else
	fail "nvmfd -c tls.json did not start"
fi

# --- SIGHUP re-reads the PSK file: the new PSK works, the old one is refused --
if nvmfd_start -c "$TMP/tls.json"; then
	perf rot-before 0 "$HOSTNQN" -q 4 -w randread -t 1 --tls --psk "$PSK"
	cp "$TMP/psk.key" "$TMP/psk.key.orig"
	printf '%s' "$WRONG" >"$TMP/psk.key"
	nvmfd_reload || fail "reload: no summary line"
	grep -q "reload: host $HOSTNQN: TLS PSK changed" "$TMP/stderr" ||
		fail "reload: the new PSK was not applied"
	perf rot-new 0 "$HOSTNQN" -q 4 -w randrw -t 1 --verify --tls --psk "$WRONG"
	perf rot-old 3 "$HOSTNQN" -t 1 --tls --psk "$PSK"
	cp "$TMP/psk.key.orig" "$TMP/psk.key"
	nvmfd_stop
else
	fail "nvmfd -c tls.json (reload) did not start"
fi

# --- flags: TLS not required, a global inline PSK keyed as SPDK does -------------
if nvmfd_start -l 127.0.0.1:0 --tls=not-required -s "$SUBNQN" -n ram:16M --allow-any-host \
	--psk "$PSK,v0=spdk" --control "$TMP/ctl.sock"; then
	perf nr-plain 0 "$HOSTNQN" -q 4 -w randrw -t 1 --verify
	perf nr-tls 0 "$HOSTNQN" -q 4 -w randrw -t 1 --verify --tls --psk "$PSK"
	perf nr-spdk 0 "$HOSTNQN" -q 4 -w randrw -t 1 --verify --tls --psk "$PSK" \
		--tls-identity spdk
	perf nr-v0 3 "$HOSTNQN" -t 1 --tls --psk "$PSK" --tls-identity 0
	discovery nr-disc "not required" tls1.3
	tr '\0' ' ' <"/proc/$PID/cmdline" >"$TMP/cmdline"
	grep -qF -- "${PSK:16:20}" "$TMP/cmdline" && fail "the PSK is visible in /proc/PID/cmdline"
	python3 - "$TMP/ctl.sock" "$PSK" >"$TMP/rpc.out" 2>&1 <<'PY' || fail "control socket: $(cat "$TMP/rpc.out")"
import json, socket, sys
sock, psk = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sock)
f = s.makefile("rw")
f.write(json.dumps({"jsonrpc": "2.0", "method": "save_config", "id": 1}) + "\n")
f.flush()
reply = f.readline()
assert psk[16:40] not in reply, "save_config reply carries the PSK"
assert json.loads(reply)["result"]["nvmfd"]["tls"]["psk"] == "<redacted>", reply
PY
	nvmfd_stop
else
	fail "nvmfd --tls=not-required did not start"
fi

# --- a TLS host on a plain port: refused, and the target says why ---------------
if nvmfd_start -l 127.0.0.1:0 -s "$SUBNQN" -n ram:1M --allow-any-host; then
	perf plain-port 3 "$HOSTNQN" -t 1 --tls --psk "$PSK"
	grep -q "the host started a TLS handshake (first byte 0x16) on a port without TLS" \
		"$TMP/stderr" || fail "plain port: the target did not name the TLS handshake"
	grep -q "the peer did not answer with TLS (a port without TLS, or not an NVMe/TCP target?)" \
		"$TMP/plain-port.err" ||
		fail "plain port: the host does not say the answer is not TLS: $(cat "$TMP/plain-port.err")"
	nvmfd_stop
else
	fail "nvmfd (plain port) did not start"
fi

# --- refused configurations -----------------------------------------------------
chmod 644 "$TMP/psk.key"
rc=0
"$NVMFD" -c "$TMP/tls.json" --print-config >/dev/null 2>"$TMP/perm.err" || rc=$?
[ "$rc" = 2 ] || fail "world-readable PSK file: exit $rc, want 2"
grep -q "hosts\[0\]\.tls\.psk: .*psk.key: .*group/other" "$TMP/perm.err" ||
	{ fail "world-readable PSK file: message"; cat "$TMP/perm.err" >&2; }
chmod 600 "$TMP/psk.key"
rc=0
"$NVMFD" -l 127.0.0.1:0 --tls -s "$SUBNQN" -n ram:1M --psk "NVMeTLSkey-1:01:garbage:" \
	--print-config >/dev/null 2>"$TMP/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "bad PSK: exit $rc, want 2"
grep -q "not a valid TLS PSK" "$TMP/bad.err" || fail "bad PSK: message"
grep -q "garbage" "$TMP/bad.err" && fail "bad PSK: the message quotes the key"
rc=0
"$NVMFD" -c "$TMP/tls.json" -l 127.0.0.1:0 --tls=maybe --print-config >/dev/null \
	2>"$TMP/treq.err" || rc=$?
[ "$rc" = 2 ] || fail "--tls=maybe: exit $rc, want 2"

# --- --print-config: an inline PSK only into a private file ----------------------
"$NVMFD" -l 127.0.0.1:0 --tls -s "$SUBNQN" -n ram:1M --psk "$HOSTNQN=$PSK" --print-config \
	2>"$TMP/pc.err" | cat >"$TMP/pc-pipe.json"
grep -q '"psk": "<redacted>"' "$TMP/pc-pipe.json" || fail "print-config to a pipe: not redacted"
grep -q '"tsas": "tls1.3"' "$TMP/pc-pipe.json" || fail "print-config: no tsas tls1.3"
grep -q '"treq": "required"' "$TMP/pc-pipe.json" || fail "print-config: no treq required"
grep -q "redacted" "$TMP/pc.err" || fail "print-config to a pipe: no note on stderr"
(umask 077 && "$NVMFD" -l 127.0.0.1:0 --tls -s "$SUBNQN" -n ram:1M --psk "$HOSTNQN=$PSK" \
	--print-config >"$TMP/pc-private.json")
grep -qF "\"psk\": \"$PSK\"" "$TMP/pc-private.json" || fail "print-config to a 0600 file: PSK missing"
"$NVMFD" -c "$TMP/pc-private.json" --print-config >/dev/null 2>&1 ||
	fail "the 0600 --print-config output does not load"
"$NVMFD" -c "$TMP/tls.json" --print-config >"$TMP/pc-file.json" 2>/dev/null
grep -qF "\"psk\": \"@$TMP/psk.key\"" "$TMP/pc-file.json" ||
	fail "print-config: a PSK file is not written as @FILE"

# --- no PSK anywhere in logs, stats or reports -----------------------------------
grep -qE '"tls": ?"TLS_AES_256_GCM_SHA384"' "$TMP/all-stderr" ||
	fail "stats: no queue with \"tls\": the cipher suite"
for f in "$TMP/all-stderr" "$TMP/all-perf" "$TMP/pc-pipe.json" "$TMP/pc-file.json" "$TMP/rpc.out"; do
	for k in "$PSK" "$PSK384"; do
		grep -qF -- "${k:16:20}" "$f" 2>/dev/null && fail "$(basename "$f") contains a PSK"
	done
done

if [ "$failures" -gt 0 ]; then
	echo "test_nvmfd_tls: $failures failure(s)" >&2
	exit 1
fi
echo "test_nvmfd_tls: ok"
