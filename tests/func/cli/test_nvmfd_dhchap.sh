#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_dhchap.sh - DH-HMAC-CHAP end to end: nvmfd runs
# examples/security/dhchap.json (copied, keys mode 0600, port 0) and
# nvmf-perf authenticates every queue:
#   - bidirectional (host + controller secret, @FILE) with --verify: passes,
#     and the report names the hash and group the example configures;
#   - unidirectional (host secret only, inline): passes;
#   - a wrong host secret, a wrong controller secret, no secret: exit 3;
#   - the target's log and --print-config never contain a secret;
#   - a new key in the key file takes effect at SIGHUP (the old one is refused);
#   - nvmf-perf --reauth-interval: I/O verifies across re-authentications of
#     every queue; after a host key change on the target (file + SIGHUP) a
#     re-authenticating run fails (exit 3, AUTH_Failure1 01h named) while a
#     run that does not re-authenticate keeps working, and new connections
#     need the new key; the same with --exec auto verifies;
#   - --dhchap-key on the command line does the same as the config file;
#   - the control socket's save_config keeps secrets only in its 0600 file;
#   - a world-readable key file is refused at startup, naming the key.
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
nvmfd_test_begin dhchap

HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:7c9a8d36-2b1e-4f0a-9e55-0d5ec0de0001
SUBNQN=nqn.2026-11.io.nvmfd:secure
# git does not keep mode 0600: the copies get it
cp "$EX/host.key" "$EX/ctrl.key" "$TMP/"
chmod 600 "$TMP/host.key" "$TMP/ctrl.key"
HKEY=$(cat "$TMP/host.key")
CKEY=$(cat "$TMP/ctrl.key")
# a valid secret of the same shape that is not the configured one
WRONG='DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:'
python3 - "$EX/dhchap.json" "$TMP/dhchap.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["ports"][0]["addr"]["trsvcid"] = "0"
json.dump(cfg, open(sys.argv[2], "w"), indent=2)
PY


# perf NAME WANT_RC ARGS...: one nvmf-perf run against $PORT
perf() {
	local name=$1 want=$2 rc=0
	shift 2
	"$PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$HOSTNQN" \
		"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, want $want"
		cat "$TMP/$name.out" "$TMP/$name.err" >&2
		return 1
	fi
	cat "$TMP/$name.out" "$TMP/$name.err" >>"$TMP/all-perf"
	return 0
}

run_matrix() {
	local tag=$1
	perf "$tag-bidi" 0 -P 2 -q 8 -o 4096 -w randrw -t 1 --verify \
		--dhchap-secret "@$TMP/host.key" --dhchap-ctrl-secret "@$TMP/ctrl.key" --json &&
		python3 - "$TMP/$tag-bidi.out" <<'PY' || fail "$tag-bidi: report"
import json, sys
r = json.load(open(sys.argv[1]))["config"]
assert r["dhchap"] == "bidirectional", r["dhchap"]
assert r["dhchap_queues"] == 3, r["dhchap_queues"]  # admin + 2 I/O queues
assert r["dhchap_hash"] == "sha256", r["dhchap_hash"]
assert r["dhchap_dhgroup"] == "ffdhe2048", r["dhchap_dhgroup"]
PY
	perf "$tag-uni" 0 -q 4 -w randrw -t 1 --verify --dhchap-secret "$HKEY" &&
		{ grep -q "DH-HMAC-CHAP: unidirectional" "$TMP/$tag-uni.out" ||
			fail "$tag-uni: no DH-HMAC-CHAP line"; }
	perf "$tag-wrong" 3 -t 1 --dhchap-secret "$WRONG"
	perf "$tag-wrong-ctrl" 3 -t 1 --dhchap-secret "$HKEY" --dhchap-ctrl-secret "$WRONG"
	perf "$tag-none" 3 -t 1
	grep -q "AUTH_REQUIRED\|DH-HMAC-CHAP\|authentication" "$TMP/$tag-none.err" ||
		fail "$tag-none: message does not say why"
	grep -q "DH-HMAC-CHAP failed: host response does not match the host key" "$TMP/stderr" ||
		fail "$tag: the target did not log the refused host secret"
}

# --- the example config ----------------------------------------------------
if nvmfd_start -c "$TMP/dhchap.json"; then
	run_matrix cfg
	grep -q "DH-HMAC-CHAP required" "$TMP/stderr" ||
		fail "cfg: the Connect log line does not say DH-HMAC-CHAP required"
	grep -q "authenticated (DH-HMAC-CHAP bidirectional, sha256, ffdhe2048)" "$TMP/stderr" ||
		fail "cfg: no authenticated log line"
	# key rotation: a new host key in the file, SIGHUP; the old key is refused
	echo "$WRONG" >"$TMP/host.key"
	nvmfd_reload || fail "reload: no summary line"
	grep -q "reload: host $HOSTNQN: DH-HMAC-CHAP settings changed" "$TMP/stderr" ||
		fail "reload: the new key was not applied"
	perf rot-new 0 -q 4 -w randrw -t 1 --verify --dhchap-secret "@$TMP/host.key"
	perf rot-old 3 -t 1 --dhchap-secret "$HKEY"
	echo "$HKEY" >"$TMP/host.key"
	nvmfd_stop
else
	fail "nvmfd -c dhchap.json did not start"
fi

# --- re-authentication on request (nvmf-perf --reauth-interval) -------------
# count_auth: "authenticated" lines of admin queues in the log so far
count_auth() { grep -c "host $HOSTNQN authenticated (DH-HMAC-CHAP" "$TMP/stderr"; }
# wait_for_auth N: until the log has N such lines (<= 60 s)
wait_for_auth() {
	for _ in $(seq 600); do
		[ "$(count_auth)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
if nvmfd_start -c "$TMP/dhchap.json"; then
	# I/O keeps flowing across re-authentications of every queue
	perf reauth-io 0 -P 2 -q 8 -w randrw -t 3 --verify --reauth-interval 50 \
		--dhchap-secret "@$TMP/host.key" --dhchap-ctrl-secret "@$TMP/ctrl.key" --json &&
		python3 - "$TMP/reauth-io.out" <<'PY' || fail "reauth-io: report"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
assert c["reauth_interval_ms"] == 50, c
assert c["reauth_admin"] >= 1 and c["reauth_io"] >= 2, c  # admin + each of 2 queues
assert c["dhchap_queues"] == 3, c["dhchap_queues"]  # counted once per queue
PY
	# the same under --exec auto: the monitor watches the queue threads
	# through their re-authentications (a DH step is not a starvation:
	# unit test host-perf-auto); the run verifies and reports exec.auto
	perf reauth-auto 0 -P 2 -q 8 -w randrw -t 2 --verify --reauth-interval 50 \
		--exec auto --dhchap-secret "@$TMP/host.key" --dhchap-ctrl-secret "@$TMP/ctrl.key" \
		--json && python3 - "$TMP/reauth-auto.out" <<'PY' || fail "reauth-auto: report"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
assert c["exec"] == "auto" and c["reauth_io"] >= 2, c
assert r["total"]["verified_blocks"] > 0 and not r["total"]["errors"], r["total"]
for q in r["queues"]:
    assert "auto" in q["exec"], q["exec"]
PY
	# a run that re-authenticates and verifies (B) and one that reads and
	# does not re-authenticate (A; the same namespace, so it does not
	# write); then the target's host key changes (file + SIGHUP). Both
	# are ended by the test (SIGINT, the refused re-authentication), not
	# by their -t: 400 s only bounds a hang (a loaded machine made the
	# steps between their start and their end slow)
	base=$(count_auth)
	"$PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$HOSTNQN" \
		-q 4 -w randread -t 400 --dhchap-secret "@$TMP/host.key" \
		>"$TMP/live-a.out" 2>"$TMP/live-a.err" &
	pa=$!
	wait_for_auth $((base + 1)) || fail "live run A did not authenticate"
	"$PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$SUBNQN hostnqn:$HOSTNQN" \
		-q 4 -w randrw -t 400 --verify --reauth-interval 100 \
		--dhchap-secret "@$TMP/host.key" --dhchap-ctrl-secret "@$TMP/ctrl.key" \
		>"$TMP/live-b.out" 2>"$TMP/live-b.err" &
	pb=$!
	# B's connect and at least two of its admin re-authentications succeeded
	wait_for_auth $((base + 4)) || fail "live run B did not re-authenticate"
	kill -0 "$pb" 2>/dev/null || fail "live run B ended early: $(cat "$TMP/live-b.err")"
	cp "$TMP/host.key" "$TMP/host.key.orig"
	echo "$WRONG" >"$TMP/host.key"
	nvmfd_reload || fail "reauth: no reload summary line"
	grep -q "reload: host $HOSTNQN: DH-HMAC-CHAP settings changed" "$TMP/stderr" ||
		fail "reauth: the new key was not applied"
	# B's next re-authentication uses the old key: refused, reason named
	rc=0
	wait "$pb" || rc=$?
	[ "$rc" = 3 ] || fail "live run B: exit $rc after the key change, want 3"
	grep -q "re-authentication failed: DH-HMAC-CHAP failed: controller sent AUTH_Failure1: authentication failed (reason 0x01/0x01)" \
		"$TMP/live-b.err" || fail "live run B: no reason: $(cat "$TMP/live-b.err")"
	grep -q "DH-HMAC-CHAP failed: host response does not match the host key" "$TMP/stderr" ||
		fail "reauth: the target did not log the refused re-authentication"
	# A, authenticated before the change and not re-authenticating, still works
	kill -0 "$pa" 2>/dev/null || fail "live run A ended early: $(cat "$TMP/live-a.err")"
	kill -INT "$pa"
	rc=0
	wait "$pa" || rc=$?
	[ "$rc" = 130 ] || fail "live run A: exit $rc after SIGINT, want 130: $(cat "$TMP/live-a.err")"
	grep -q "completed with status\|I/O at LBA\|errors:" "$TMP/live-a.err" "$TMP/live-a.out" &&
		fail "live run A: errors after the key change: $(cat "$TMP/live-a.err")"
	# new connections need the new key
	perf reauth-new 0 -q 4 -w randrw -t 1 --verify --dhchap-secret "@$TMP/host.key"
	cat "$TMP/live-a.out" "$TMP/live-a.err" "$TMP/live-b.out" "$TMP/live-b.err" >>"$TMP/all-perf"
	cp "$TMP/host.key.orig" "$TMP/host.key"
	nvmfd_stop
else
	fail "nvmfd -c dhchap.json (reauth) did not start"
fi

# --- the same with flags ----------------------------------------------------
if nvmfd_start -l 127.0.0.1:0 -s "$SUBNQN" -n ram:16M \
	--dhchap-key "$HOSTNQN=@$TMP/host.key,ctrl=@$TMP/ctrl.key,hash=sha256,dhgroup=ffdhe2048"; then
	run_matrix flags
	nvmfd_stop
else
	fail "nvmfd --dhchap-key did not start"
fi

# --- the control socket: save_config to a file keeps inline secrets (the
# file is 0600), a reply on the socket never carries them ------------------
if nvmfd_start -l 127.0.0.1:0 -s "$SUBNQN" -n ram:16M --control "$TMP/ctl.sock" \
	--dhchap-key "$HOSTNQN=$HKEY,ctrl=@$TMP/ctrl.key"; then
	# the inline secret is overwritten in argv once parsed
	tr '\0' ' ' <"/proc/$PID/cmdline" >"$TMP/cmdline"
	grep -qF -- "$HKEY" "$TMP/cmdline" && fail "the secret is visible in /proc/PID/cmdline"
	grep -qF -- "ctrl=@$TMP/ctrl.key" "$TMP/cmdline" || fail "cmdline: @FILE not kept"
	python3 - "$TMP/ctl.sock" "$TMP/saved.json" "$HKEY" >"$TMP/rpc.out" 2>&1 <<'PY' ||
import json, os, socket, stat, sys
sock, saved, hkey = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sock)
f = s.makefile("rw")
def call(method, params=None):
    req = {"jsonrpc": "2.0", "method": method, "id": 1}
    if params is not None:
        req["params"] = params
    f.write(json.dumps(req) + "\n")
    f.flush()
    return f.readline()
reply = call("save_config")
assert hkey not in reply, "save_config reply carries the secret"
host = json.loads(reply)["result"]["hosts"][0]["dhchap"]
assert host["key"] == "<redacted>", host
assert host["ctrl_key"].startswith("@"), host
reply = call("save_config", {"filename": saved})
assert "error" not in json.loads(reply), reply
assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
assert json.load(open(saved))["hosts"][0]["dhchap"]["key"] == hkey
PY
		{ fail "control socket: $(cat "$TMP/rpc.out")"; }
	nvmfd_stop
	"$NVMFD" -c "$TMP/saved.json" --print-config >/dev/null 2>&1 ||
		fail "the saved config does not load"
else
	fail "nvmfd --control did not start"
fi

# --- nvmf_subsystem_add_host with DH-HMAC-CHAP keys: the host may connect only
# with them; errors for a ctrlr key alone, a relative @FILE, other keys --
if nvmfd_start -l 127.0.0.1:0 -s "$SUBNQN" -n ram:16M --control "$TMP/ctl2.sock"; then
	python3 - "$TMP/ctl2.sock" "$HOSTNQN" "$SUBNQN" "$TMP/host.key" "$CKEY" >"$TMP/rpc2.out" 2>&1 <<'PY' ||
import json, socket, sys
sock, host, nqn, hkeyfile, ckey = sys.argv[1:6]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sock)
f = s.makefile("rw")
def call(method, params):
    f.write(json.dumps({"jsonrpc": "2.0", "method": method, "id": 1, "params": params}) + "\n")
    f.flush()
    line = f.readline()
    assert ckey not in line, "a reply carries the secret"
    return json.loads(line)
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_ctrlr_key": ckey})
assert r["error"]["code"] == -32602 and "needs a dhchap_key" in r["error"]["message"], r
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_key": "@host.key"})
assert r["error"]["code"] == -32602 and "absolute" in r["error"]["message"], r
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_key": "DHHC-1:01:x:"})
assert r["error"]["code"] == -32602, r
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_key": "@" + hkeyfile,
                                     "dhchap_ctrlr_key": ckey})
assert r.get("result") is True, r
r = call("save_config", {})
d = r["result"]["hosts"][0]["dhchap"]
assert d["key"] == "@" + hkeyfile and d["ctrl_key"] == "<redacted>", d
# the keys stay with the host: removed and added again, other keys are refused
assert call("nvmf_subsystem_remove_host", {"nqn": nqn, "host": host}).get("result") is True
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_key": "@" + hkeyfile})
assert r["error"]["code"] == -17 and "other DH-HMAC-CHAP keys" in r["error"]["message"], r
r = call("nvmf_subsystem_add_host", {"nqn": nqn, "host": host, "dhchap_key": "@" + hkeyfile,
                                     "dhchap_ctrlr_key": ckey})
assert r.get("result") is True, r
PY
		{ fail "add_host with keys: $(cat "$TMP/rpc2.out")"; }
	perf rpc-bidi 0 -q 4 -w randrw -t 1 --verify \
		--dhchap-secret "@$TMP/host.key" --dhchap-ctrl-secret "@$TMP/ctrl.key"
	perf rpc-wrong 3 -t 1 --dhchap-secret "$WRONG"
	perf rpc-none 3 -t 1
	grep -q "host $HOSTNQN allowed (DH-HMAC-CHAP, bidirectional)" "$TMP/stderr" ||
		fail "add_host with keys: no log line"
	nvmfd_stop
else
	fail "nvmfd --control (add_host) did not start"
fi

# --- refused configurations ---------------------------------------------------
chmod 644 "$TMP/host.key"
rc=0
"$NVMFD" -c "$TMP/dhchap.json" --print-config >/dev/null 2>"$TMP/perm.err" || rc=$?
[ "$rc" = 2 ] || fail "world-readable key file: exit $rc, want 2"
grep -q "hosts\[0\]\.dhchap\.key: .*host.key: .*group/other" "$TMP/perm.err" ||
	{ fail "world-readable key file: message"; cat "$TMP/perm.err" >&2; }
chmod 600 "$TMP/host.key"
rc=0
"$NVMFD" -l 127.0.0.1:0 -s "$SUBNQN" -n ram:1M --dhchap-key "$HOSTNQN=DHHC-1:01:garbage:" \
	--print-config >/dev/null 2>"$TMP/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "bad key: exit $rc, want 2"
grep -q "not a valid DH-HMAC-CHAP secret" "$TMP/bad.err" || fail "bad key: message"
grep -q "garbage" "$TMP/bad.err" && fail "bad key: the message quotes the secret"

# --- --print-config: inline secrets only into a private file ------------------
"$NVMFD" -l 127.0.0.1:0 -s "$SUBNQN" -n ram:1M --dhchap-key "$HOSTNQN=$HKEY,ctrl=$CKEY" \
	--print-config 2>"$TMP/pc.err" | cat >"$TMP/pc-pipe.json"
grep -q '"key": "<redacted>"' "$TMP/pc-pipe.json" || fail "print-config to a pipe: not redacted"
grep -q "redacted" "$TMP/pc.err" || fail "print-config to a pipe: no note on stderr"
(umask 077 && "$NVMFD" -l 127.0.0.1:0 -s "$SUBNQN" -n ram:1M \
	--dhchap-key "$HOSTNQN=$HKEY,ctrl=$CKEY" --print-config >"$TMP/pc-private.json")
grep -qF "\"key\": \"$HKEY\"" "$TMP/pc-private.json" ||
	fail "print-config to a 0600 file: host secret missing"
grep -qF "\"ctrl_key\": \"$CKEY\"" "$TMP/pc-private.json" ||
	fail "print-config to a 0600 file: controller secret missing"
# the private file reads back; the redacted one is refused with a hint
"$NVMFD" -c "$TMP/pc-private.json" --print-config >/dev/null 2>&1 ||
	fail "the 0600 --print-config output does not load"
rc=0
"$NVMFD" -c "$TMP/pc-pipe.json" --print-config >/dev/null 2>"$TMP/redacted.err" || rc=$?
[ "$rc" = 2 ] && grep -q "redacted by --print-config" "$TMP/redacted.err" ||
	fail "a redacted config: exit $rc, $(cat "$TMP/redacted.err")"
"$NVMFD" -c "$TMP/dhchap.json" --print-config >"$TMP/pc-file.json" 2>/dev/null
grep -qF "\"key\": \"@$TMP/host.key\"" "$TMP/pc-file.json" ||
	fail "print-config: a key file is not written as @FILE"

# --- no secret anywhere in the logs or reports --------------------------------
for f in "$TMP/all-stderr" "$TMP/all-perf" "$TMP/pc-pipe.json" "$TMP/pc-file.json" "$TMP/rpc.out"; do
	for k in "$HKEY" "$CKEY"; do
		grep -qF -- "${k:10:20}" "$f" 2>/dev/null && fail "$(basename "$f") contains a secret"
	done
done

if [ "$failures" -gt 0 ]; then
	echo "test_nvmfd_dhchap: $failures failure(s)" >&2
	exit 1
fi
echo "test_nvmfd_dhchap: ok"
