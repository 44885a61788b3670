#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_cli.sh - nvmfd command line without running the target:
# --help lists every option, bad flags and bad configs exit 2 with one
# message naming the flag or key (and nothing listens), --print-config
# output loads back unchanged.
#
# Env: NVMFD = path of the nvmfd binary; EXAMPLE_CONFIG = doc/example-config.json.
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
TMP=$(mktemp -d /tmp/nvmfd-cli-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# --- --help and --version ------------------------------------------------
"$NVMFD" --help >"$TMP/help" 2>"$TMP/help.err"
rc=$?
[ $rc -eq 0 ] || fail "--help exited $rc"
[ -s "$TMP/help.err" ] && fail "--help wrote to stderr"
for opt in --listen --subsystem --namespace --allow-host --allow-any-host --config \
	--print-config --serial --model --inline-data-size --max-queue-size --max-io-size \
	--maxh2cdata --log-level --stats-interval --control --exec --affinity-scope \
	--affinity-strict --max-active --wq-per-ctrl --idle-poll-us --backend-poll --cq-pool \
	--net --uring-recv --uring-ring \
	--rx-budget --tx-budget --rx-budget-pdus --tx-budget-pdus --io-work-deadline-us \
	--io-cpu --cpus --auto-starve-ms --auto-bound --auto-no-poll --auto-no-budget --auto-no-cq \
	--auto-no-follow --auto-freeze --version --help; do
	grep -q -- "$opt\\b" "$TMP/help" || fail "--help does not mention $opt"
done
for short in "-l, --listen" "-s, --subsystem" "-n, --namespace" "-c, --config" \
	"-V, --version" "-h, --help" "Examples:" '{"cmd":"stats"}' '{"cmd":"config"}'; do
	grep -qF -- "$short" "$TMP/help" || fail "--help does not mention '$short'"
done
"$NVMFD" -h | cmp -s - "$TMP/help" || fail "-h differs from --help"
out=$("$NVMFD" --version) || fail "--version exited $?"
[[ "$out" == "nvmfd "* ]] || fail "--version printed '$out'"

# the manual carries the --help text verbatim (first ``` block after OPTIONS)
if [ -n "${NVMFD_DOC:-}" ]; then
	sed -n '/^## OPTIONS/,/^## CONFIGURATION FILE/p' "$NVMFD_DOC" |
		sed -n '/^```$/,/^```$/p' | sed '1d;$d' >"$TMP/doc-help"
	cmp -s "$TMP/doc-help" "$TMP/help" || fail "$NVMFD_DOC OPTIONS differ from --help: $(diff "$TMP/doc-help" "$TMP/help" | head -5)"
fi

# --- bad flags: exit 2, exactly one stderr line naming the flag -----------
# Each case: "expected text|args..." (args split on spaces).
check_bad() {
	local expect=$1
	shift
	"$NVMFD" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne 2 ]; then
		fail "nvmfd $*: exit $rc, want 2"
		return
	fi
	[ -s "$TMP/out" ] && fail "nvmfd $*: wrote to stdout"
	local lines
	lines=$(wc -l <"$TMP/err")
	[ "$lines" -eq 1 ] || fail "nvmfd $*: $lines stderr lines, want 1: $(cat "$TMP/err")"
	grep -qF -- "$expect" "$TMP/err" || fail "nvmfd $*: stderr '$(cat "$TMP/err")' lacks '$expect'"
}

S="-s nqn.2026-11.io.nvmfd:t"
check_bad "'--bogus'" --bogus
check_bad "'-x'" -x
check_bad "'--listen' requires an argument" --listen
check_bad "--listen" -l 1.2.3.4:x $S
check_bad "'1.2.3.4:70000'" -l 1.2.3.4:70000 $S
check_bad "'[::1'" -l "[::1" $S
check_bad "--namespace" -l 127.0.0.1:0 $S -n disk:1M
check_bad "'ram:0'" -l 127.0.0.1:0 $S -n ram:0
check_bad "--namespace: needs a preceding --subsystem" -l 127.0.0.1:0 -n ram:1M
check_bad "--allow-host 'bob'" -l 127.0.0.1:0 $S --allow-host bob
check_bad "--allow-any-host: needs a preceding --subsystem" -l 127.0.0.1:0 --allow-any-host
check_bad "--exec 'sideways'" --exec sideways
check_bad "--auto-starve-ms" -l 127.0.0.1:0 $S --exec auto --auto-starve-ms 0
check_bad "auto does not work with wq_per_ctrl" -l 127.0.0.1:0 $S --exec auto --wq-per-ctrl
check_bad "need exec mode auto" -l 127.0.0.1:0 $S --auto-bound --exec bound
check_bad "--net 'kqueue'" --net kqueue
check_bad "--uring-recv 'many'" --uring-recv many
check_bad "net uring does not work with exec mode auto" -l 127.0.0.1:0 $S --net uring --exec auto
check_bad "net uring does not support TLS" -l 127.0.0.1:0 --tls $S --net uring
check_bad "uring_recv needs exec net uring" -l 127.0.0.1:0 $S --uring-recv single
check_bad "--uring-ring 'both'" --uring-ring both
check_bad "uring_ring worker needs exec net uring" -l 127.0.0.1:0 $S --uring-ring worker
check_bad "uring_ring worker needs exec mode bound" -l 127.0.0.1:0 $S --net uring --uring-ring worker --exec unbound
check_bad "uring_ring worker does not work with wq_per_ctrl" -l 127.0.0.1:0 $S --net uring --uring-ring worker --wq-per-ctrl
check_bad "--affinity-scope 'socket'" --affinity-scope socket
check_bad "--io-cpu 'random'" --io-cpu random
check_bad "--cq-pool 'global'" --cq-pool global
check_bad "--max-queue-size '8'" --max-queue-size 8
check_bad "--max-io-size '3M'" --max-io-size 3M
check_bad "--maxh2cdata 'lots'" --maxh2cdata lots
check_bad "--max-active '0'" --max-active 0
check_bad "--rx-budget-pdus '-1'" --rx-budget-pdus -1
check_bad "--tx-budget 'x'" --tx-budget x
check_bad "--idle-poll-us '1e3'" --idle-poll-us 1e3
check_bad "--io-work-deadline-us 'soon'" --io-work-deadline-us soon
check_bad "--cpus" --cpus 4-2
check_bad "--log-level 'loud'" --log-level loud
check_bad "--stats-interval 'often'" --stats-interval often
check_bad "--serial" -l 127.0.0.1:0 $S --serial 012345678901234567890
check_bad "unexpected argument 'stray'" stray
check_bad "no listener" $S -n ram:1M
check_bad "'iqn.x': an NQN must start" -l 127.0.0.1:0 -s iqn.x
check_bad "duplicate nsid 1" -l 127.0.0.1:0 $S -n ram:1M -n ram:1M,nsid=1
check_bad "--config $TMP/none.json: No such file" -c "$TMP/none.json"
check_bad "--config $TMP: is a directory" -c "$TMP"
# NQN length: the NVMe limit (223) in every message, whatever the length
check_bad "longer than 223 bytes" -l 127.0.0.1:0 -s "nqn.$(printf 'a%.0s' $(seq 236))"
check_bad "longer than 223 bytes" -l 127.0.0.1:0 -s "nqn.$(printf 'a%.0s' $(seq 297))"
# RAM namespaces beyond the machine's physical memory (1 EiB > any RAM)
check_bad "namespace 'ram:1048576T'" -l 127.0.0.1:0 $S -n ram:1048576T
check_bad "ram namespaces need 1 EiB but the machine has" -l 127.0.0.1:0 $S -n ram:1048576T
# --cpus naming a CPU this process cannot use
ncpu=$(nproc --all)
check_bad "--cpus '$ncpu-$((ncpu + 4))': CPU $ncpu-$((ncpu + 4)) not online" \
	-l 127.0.0.1:0 $S -n ram:1M --cpus "$ncpu-$((ncpu + 4))"
# file namespaces that cannot be created or opened read-write: exit 2, spec named
check_bad "namespace 'file:$TMP/nonexistent/dir/x.img,size=1M': cannot create" \
	-l 127.0.0.1:0 $S -n "file:$TMP/nonexistent/dir/x.img,size=1M"
if [ "$(id -u)" -ne 0 ]; then
	: >"$TMP/ro.img"
	truncate -s 1M "$TMP/ro.img"
	chmod 0444 "$TMP/ro.img"
	check_bad "namespace 'file:$TMP/ro.img': '$TMP/ro.img': not writable" \
		-l 127.0.0.1:0 $S -n "file:$TMP/ro.img"
	mkdir "$TMP/rodir" && chmod 0555 "$TMP/rodir"
	check_bad "cannot create '$TMP/rodir/x.img'" \
		-l 127.0.0.1:0 $S -n "file:$TMP/rodir/x.img,size=1M"
else
	echo "running as root: read-only namespace file not exercised" >&2
fi
# --io-work-deadline-us 0 is accepted (documented: the default)
"$NVMFD" -l 127.0.0.1:0 $S -n ram:1M --io-work-deadline-us 0 --print-config >"$TMP/dl.json" ||
	fail "--io-work-deadline-us 0 rejected"
grep -qF -- "0 also means 1000" "$TMP/help" || fail "--help does not say what --io-work-deadline-us 0 means"

# --- bad configs: exit 2, key named, nothing listening --------------------
# A port above the ephemeral range (so no other test's port 0 bind lands on
# it) and outside the interop harness's 20000-39999; checked free below.
PORT=$(( (RANDOM % 4000) + 61000 ))
listening() {
	ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .
}
if listening; then
	echo "port $PORT busy, skipping" >&2
	exit 77
fi
good_cfg() { # $1 = extra attr, $2 = extra device key
	cat <<JSON
{ "hosts": [],
  "ports": [ { "portid": 1,
      "addr": { "trtype": "tcp", "adrfam": "ipv4", "traddr": "127.0.0.1",
                "trsvcid": "$PORT", "treq": "not specified" },
      "param": { "inline_data_size": "16384" },
      "subsystems": [ "nqn.2026-11.io.nvmfd:cfg" ] } ],
  "subsystems": [ { "nqn": "nqn.2026-11.io.nvmfd:cfg",
      "attr": { "allow_any_host": "1" $1 },
      "allowed_hosts": [],
      "namespaces": [ { "nsid": 1, "enable": 1,
          "device": { "path": "ram:8M" $2 } } ] } ] }
JSON
}
check_bad_cfg() { # $1 = expected text, $2 = file
	"$NVMFD" -c "$2" >"$TMP/out" 2>"$TMP/err" &
	local pid=$!
	local rc=0
	wait $pid || rc=$?
	[ $rc -eq 2 ] || fail "config $2: exit $rc, want 2 ($(cat "$TMP/err"))"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "config $2: stderr not one line: $(cat "$TMP/err")"
	grep -qF -- "$1" "$TMP/err" || fail "config $2: stderr '$(cat "$TMP/err")' lacks '$1'"
	listening && fail "config $2: something listens on $PORT"
}
good_cfg ', "bogus": "1"' '' >"$TMP/unknown.json"
check_bad_cfg "subsystems[0].attr.bogus: unknown key" "$TMP/unknown.json"
good_cfg '' ', "uuid": 7' >"$TMP/type.json"
check_bad_cfg "subsystems[0].namespaces[0].device.uuid: expected a string, got 7" "$TMP/type.json"
good_cfg ', "cntlid_min": "9", "cntlid_max": "3"' '' >"$TMP/range.json"
check_bad_cfg "cntlid range 9..3 invalid" "$TMP/range.json"
good_cfg '' ', "size": "1M"' >"$TMP/size.json"
check_bad_cfg "subsystems[0].namespaces[0].device.size: only for file paths" "$TMP/size.json"
good_cfg '' '' | sed 's/"path": "ram:8M"/"path": "relative-missing.img"/' >"$TMP/missing.json"
check_bad_cfg "relative-missing.img" "$TMP/missing.json"
good_cfg '' '' | sed 's/"trtype": "tcp"/"trtype": "rdma"/' >"$TMP/rdma.json"
check_bad_cfg "ports[0].addr.trtype: 'rdma' is not supported" "$TMP/rdma.json"
echo '{ "ports": [ }' >"$TMP/syntax.json"
check_bad_cfg "invalid JSON at line 1" "$TMP/syntax.json"

# --- --print-config: loads back and prints the same ----------------------
good_cfg '' '' >"$TMP/good.json"
"$NVMFD" -c "$TMP/good.json" --max-io-size 256K --exec unbound --cpus 0 \
	--print-config >"$TMP/p1.json" 2>"$TMP/err" || fail "--print-config failed: $(cat "$TMP/err")"
"$NVMFD" -c "$TMP/p1.json" --print-config >"$TMP/p2.json" 2>"$TMP/err" ||
	fail "reloading --print-config output failed: $(cat "$TMP/err")"
cmp -s "$TMP/p1.json" "$TMP/p2.json" || fail "--print-config output changed on reload"
grep -q '"max_io_size": 262144' "$TMP/p1.json" || fail "--max-io-size not in printed config"
grep -q '"mode": "unbound"' "$TMP/p1.json" || fail "--exec not in printed config"
grep -q "\"trsvcid\": \"$PORT\"" "$TMP/p1.json" || fail "port not in printed config"
listening && fail "--print-config started a listener"

# --exec auto and its knobs print and load back (auto runs bound pools)
"$NVMFD" -c "$TMP/good.json" --exec auto --auto-starve-ms 80 --auto-bound \
	--print-config >"$TMP/a1.json" 2>"$TMP/err" || fail "--exec auto --print-config failed: $(cat "$TMP/err")"
"$NVMFD" -c "$TMP/a1.json" --print-config >"$TMP/a2.json" 2>"$TMP/err" ||
	fail "reloading the auto config failed: $(cat "$TMP/err")"
cmp -s "$TMP/a1.json" "$TMP/a2.json" || fail "auto --print-config output changed on reload"
grep -q '"mode": "auto"' "$TMP/a1.json" || fail "--exec auto not in printed config"
# print_reload NAME FLAGS...: good.json with FLAGS, printed to $TMP/NAME.json,
# loads back and prints the same
print_reload() {
	local name=$1
	shift
	"$NVMFD" -c "$TMP/good.json" "$@" --print-config >"$TMP/$name.json" 2>"$TMP/err" ||
		fail "$* --print-config failed: $(cat "$TMP/err")"
	"$NVMFD" -c "$TMP/$name.json" --print-config >"$TMP/$name.2.json" 2>"$TMP/err" ||
		fail "reloading the $name config failed: $(cat "$TMP/err")"
	cmp -s "$TMP/$name.json" "$TMP/$name.2.json" ||
		fail "$name --print-config output changed on reload"
}
# --net uring, --uring-recv and --uring-ring print and load back
print_reload u1 --net uring --uring-recv single
grep -q '"net": "uring"' "$TMP/u1.json" || fail "--net uring not in printed config"
grep -q '"uring_recv": "single"' "$TMP/u1.json" || fail "--uring-recv not in printed config"
grep -q '"uring_ring": "queue"' "$TMP/u1.json" || fail "uring_ring (default queue) not in printed config"
print_reload u3 --net uring --uring-ring worker
grep -q '"uring_ring": "worker"' "$TMP/u3.json" || fail "--uring-ring worker not in printed config"
grep -q '"auto_starve_ms": 80' "$TMP/a1.json" || fail "--auto-starve-ms not in printed config"
grep -q '"auto_bound": true' "$TMP/a1.json" || fail "--auto-bound not in printed config"

# port-wide flags apply to every listener, also ones given after them
"$NVMFD" --max-queue-size 64 --inline-data-size 4K -l 127.0.0.1:0 -l "[::1]:0" \
	-s nqn.2026-11.io.nvmfd:q --print-config >"$TMP/q.json" || fail "port-wide flags failed"
[ "$(grep -c '"max_queue_size": "64"' "$TMP/q.json")" -eq 2 ] || fail "--max-queue-size not on both ports"
[ "$(grep -c '"inline_data_size": "4096"' "$TMP/q.json")" -eq 2 ] || fail "--inline-data-size not on both ports"

# --allow-host NQNs are also listed in "hosts" (nvmetcli links allowed_hosts there)
"$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:h --allow-host nqn.2014-08.org.nvmexpress:uuid:h1 \
	-s nqn.2026-11.io.nvmfd:h2 --allow-host nqn.2014-08.org.nvmexpress:uuid:h1 --print-config >"$TMP/h.json" ||
	fail "--allow-host config failed"
python3 - "$TMP/h.json" <<'PY' || fail "hosts list wrong in $(cat "$TMP/h.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["hosts"] == [{"nqn": "nqn.2014-08.org.nvmexpress:uuid:h1"}], c["hosts"]
assert c["subsystems"][1]["allowed_hosts"] == ["nqn.2014-08.org.nvmexpress:uuid:h1"]
PY

# the embedded default, printed
"$NVMFD" --print-config >"$TMP/d.json" || fail "default --print-config failed"
grep -q '"nqn.2026-11.io.nvmfd:demo"' "$TMP/d.json" || fail "default subsystem missing"
grep -q '"path": "ram:256M"' "$TMP/d.json" || fail "default namespace missing"
grep -q '"traddr": "127.0.0.1"' "$TMP/d.json" || fail "default listener missing"
grep -q '"allow_any_host": "1"' "$TMP/d.json" || fail "default allow_any_host missing"

# the default exec mode: auto when neither the file nor --exec names one;
# bound where auto does not combine (--wq-per-ctrl, --net uring); an explicit
# mode stays. A defaulted mode is not printed (a printed config resolves the
# same way again); the mode that runs is logged at start.
grep -q '"mode"' "$TMP/d.json" && fail "default --print-config names the defaulted exec mode"
# exec_mode WANT FLAGS...: the "exec mode" start-up line of nvmfd FLAGS
exec_mode() {
	local want=$1 pid line=
	shift
	"$NVMFD" -l 127.0.0.1:0 "$@" >/dev/null 2>"$TMP/xm.err" &
	pid=$!
	for _ in $(seq 100); do
		line=$(grep -m1 -o 'exec mode .*' "$TMP/xm.err")
		[ -n "$line" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM $pid 2>/dev/null
	wait $pid 2>/dev/null
	[[ "$line" == "exec mode $want" ]] || fail "nvmfd $*: '$line', want 'exec mode $want'"
}
exec_mode "auto (the default; --exec bound for the Linux drivers' model)"
exec_mode "bound (the default with --wq-per-ctrl or --net uring)" --wq-per-ctrl
exec_mode "bound (the default with --wq-per-ctrl or --net uring)" --net uring
exec_mode "bound" --exec bound
exec_mode "unbound" --exec unbound
exec_mode "auto" --exec auto
# printed and loaded back, a defaulted mode is defaulted again: the file
# takes --wq-per-ctrl (bound), a file that names auto would refuse it
print_reload x0 --idle-poll-us 20
grep -q '"mode"' "$TMP/x0.json" && fail "a defaulted exec mode was printed"
exec_mode "auto (the default; --exec bound for the Linux drivers' model)" -c "$TMP/x0.json"
exec_mode "bound (the default with --wq-per-ctrl or --net uring)" -c "$TMP/x0.json" --wq-per-ctrl
print_reload x1 --exec bound
grep -q '"mode": "bound"' "$TMP/x1.json" || fail "an explicit --exec bound was not printed"
exec_mode "bound" -c "$TMP/x1.json"
exec_mode "auto" -c "$TMP/x1.json" --exec auto
check_bad "default mode is bound" -l 127.0.0.1:0 $S --auto-freeze --wq-per-ctrl

# flags after the config add to it: a CLI subsystem is exported on the config's port
"$NVMFD" -c "$TMP/good.json" -s nqn.2026-11.io.nvmfd:extra -n null:1G --print-config \
	>"$TMP/m.json" || fail "config + flags failed"
"$NVMFD" -c "$TMP/m.json" --print-config | cmp -s - "$TMP/m.json" || fail "merged config changed on reload"
python3 - "$TMP/m.json" <<'PY' 2>/dev/null || { [ $? -eq 3 ] && fail "merged config: extra subsystem not exported"; }
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c["ports"][0]["subsystems"] == ["nqn.2026-11.io.nvmfd:cfg", "nqn.2026-11.io.nvmfd:extra"] else 3)
PY

# the shipped example config
if [ -n "${EXAMPLE_CONFIG:-}" ]; then
	"$NVMFD" -c "$EXAMPLE_CONFIG" --print-config >"$TMP/ex.json" 2>"$TMP/err" ||
		fail "example config rejected: $(cat "$TMP/err")"
	"$NVMFD" -c "$TMP/ex.json" --print-config | cmp -s - "$TMP/ex.json" ||
		fail "example config changed on reload"
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "all CLI checks passed"
