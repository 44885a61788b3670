#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_stop_flush.sh - what a stop does with a file namespace holding
# writes no Flush covered (issue 14: SIGTERM with a dirty 256 MiB file took
# 13-17 s, all of it the fsync at close).
#  - default: closed without an fsync, the log says so per namespace and in
#    the "stopped in" line; the acknowledged writes read back intact after
#    a restart (nvmf-perf --verify-state: they were in the page cache);
#  - --stop-flush, given as the config key "stop_flush": true (written by
#    --print-config with the flag): the same namespace is fsynced at stop;
#  - a namespace only read since it was opened needs no fsync either way;
#  - removal over the control socket (nvmfctl remove-ns) does as the stop:
#    by default closed without an fsync (and the acknowledged writes read
#    back after re-adding the file), with stop_flush fsynced on a thread of
#    its own; the control socket answers the next request either way, and
#    the file comes free (its lock released) for a re-add.
# What happened is asserted from the log, never from timing.
#
# Env: NVMFD, NVMF_PERF = the binaries.
set -u
NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
NVMF_PERF=${NVMF_PERF:?NVMF_PERF must point at nvmf-perf}
. "$(dirname "$0")/../../lib/nvmfd_proc.sh"
nvmfd_test_begin stop-flush
NQN=nqn.2026-12.io.nvmfd:stop-flush
truncate -s 32M "$TMP/ns.img"
ST=$TMP/state
LEFT="nsid 1: writes no Flush covered: left to the kernel's writeback, no fsync at stop"
SYNCED="nsid 1: writes no Flush covered: fsync at stop (stop_flush)"
args=(-l 127.0.0.1:0 -s $NQN -n "file:$TMP/ns.img" --allow-any-host)
perf() {
	"$NVMF_PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN" \
		-o 4096 -q 8 -t 1 "$@"
}
# slots of earlier runs the run reported as read back
checked() { sed -nE 's/.*\): ([0-9]+) slots .* read back intact.*/\1/p' "$1"; }
has() { grep -qF -- "$2" "$TMP/$1"; }

# 1. default: no fsync at stop
nvmfd_start "${args[@]}" || exit 1
perf -w randrw -M 10 --verify-state "$ST" >"$TMP/o1" 2>&1 || fail "write run: exit $? $(cat "$TMP/o1")"
nvmfd_stop
cp "$TMP/stderr" "$TMP/log1"
has log1 "$LEFT" || fail "default stop: no '$LEFT' line: $(cat "$TMP/log1")"
has log1 "1 namespaces held writes no Flush covered: left to the kernel's writeback" ||
	fail "default stop: the stop line does not say so: $(grep 'stopped in' "$TMP/log1")"
has log1 "fsync at stop (stop_flush)" && fail "default stop fsynced: $(cat "$TMP/log1")"

# 2. what was acknowledged before that stop reads back after a restart
nvmfd_start "${args[@]}" || exit 1
perf -w randrw -M 50 --verify-state "$ST" >"$TMP/o2" 2>&1 ||
	fail "read-back run after the stop: exit $? $(cat "$TMP/o2")"
[ "$(checked "$TMP/o2")" -gt 0 ] 2>/dev/null ||
	fail "the run after the stop checked none of the earlier slots: $(cat "$TMP/o2")"
nvmfd_stop

# 3. stop_flush from a config file (made by --print-config with the flag)
"$NVMFD" "${args[@]}" --stop-flush --print-config >"$TMP/cfg.json" 2>"$TMP/pc.err" ||
	fail "--print-config: exit $? $(cat "$TMP/pc.err")"
grep -q '"stop_flush": *true' "$TMP/cfg.json" || fail "--print-config lacks stop_flush: true"
sed -i 's/"trsvcid": *"[0-9]*"/"trsvcid": "0"/' "$TMP/cfg.json"
nvmfd_start -c "$TMP/cfg.json" || exit 1
perf -w randwrite >"$TMP/o3" 2>&1 || fail "write run (stop_flush): exit $? $(cat "$TMP/o3")"
nvmfd_stop
cp "$TMP/stderr" "$TMP/log3"
has log3 "$SYNCED" || fail "stop_flush: no '$SYNCED' line: $(cat "$TMP/log3")"
has log3 "1 namespaces held writes no Flush covered: fsynced" ||
	fail "stop_flush: the stop line does not say so: $(grep 'stopped in' "$TMP/log3")"

# 4. only read since the open: nothing to fsync, with or without stop_flush
nvmfd_start -c "$TMP/cfg.json" || exit 1
perf -w randread >"$TMP/o4" 2>&1 || fail "read run: exit $? $(cat "$TMP/o4")"
nvmfd_stop
cp "$TMP/stderr" "$TMP/log4"
has log4 "nsid 1: writes no Flush covered" && fail "a read-only run left the namespace dirty: $(cat "$TMP/log4")"
has log4 "0 namespaces held writes no Flush covered: nothing to fsync" ||
	fail "read run: stop line: $(grep 'stopped in' "$TMP/log4")"

# 5. removal: as the stop, no fsync by default; with stop_flush one, off
# the control thread (the removal's answer does not wait for it)
NVMFCTL=${NVMFCTL:-$(dirname "$NVMFD")/nvmfctl}
CTL=$TMP/ctl.sock
ctl() { "$NVMFCTL" -s "$CTL" "$@"; }
# the namespace's slot is free once the re-add of the same file works (its
# lock released); bounded by 1200 tries 0.1 s apart, a bound for a hang
readd() {
	for _ in $(seq 1200); do
		ctl add-ns $NQN "file:$TMP/ns.img" 1 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
removal() { # NAME ARGS...: write, remove over the control socket, re-add
	local name=$1
	shift
	nvmfd_start "$@" --control "$CTL" || return 1
	perf -w randrw -M 10 --verify-state "$ST.$name" >"$TMP/$name.o1" 2>&1 ||
		fail "$name: write run: exit $? $(cat "$TMP/$name.o1")"
	ctl remove-ns $NQN 1 >"$TMP/$name.rm" 2>&1 || fail "$name: remove-ns: $(cat "$TMP/$name.rm")"
	ctl get-subsystems >/dev/null 2>&1 || fail "$name: the control socket no longer answers"
	readd || fail "$name: the file never came free for a re-add: $(cat "$TMP/stderr")"
	perf -w randrw -M 50 --verify-state "$ST.$name" >"$TMP/$name.o2" 2>&1 ||
		fail "$name: read-back run after the re-add: exit $? $(cat "$TMP/$name.o2")"
	[ "$(checked "$TMP/$name.o2")" -gt 0 ] 2>/dev/null ||
		fail "$name: the run after the re-add checked none of the slots: $(cat "$TMP/$name.o2")"
	nvmfd_stop
	cp "$TMP/stderr" "$TMP/$name.log"
}
RM_LEFT="removed namespace ($TMP/ns.img): writes no Flush covered: left to the kernel's writeback, no fsync at removal"
RM_SYNCED="removed namespace ($TMP/ns.img): writes no Flush covered: fsync at removal (stop_flush), on a thread of its own"
removal rm-default "${args[@]}"
has rm-default.log "$RM_LEFT" || fail "removal: no '$RM_LEFT' line: $(cat "$TMP/rm-default.log")"
has rm-default.log "fsync at removal (stop_flush)" && fail "default removal fsynced: $(cat "$TMP/rm-default.log")"
has rm-default.log "removed namespace ($TMP/ns.img) drained and closed" ||
	fail "removal: not closed: $(cat "$TMP/rm-default.log")"
removal rm-flush -c "$TMP/cfg.json"
has rm-flush.log "$RM_SYNCED" || fail "stop_flush removal: no '$RM_SYNCED' line: $(cat "$TMP/rm-flush.log")"
has rm-flush.log "removed namespace ($TMP/ns.img) drained and closed" ||
	fail "stop_flush removal: not closed: $(cat "$TMP/rm-flush.log")"

[ $failures = 0 ] && echo "PASS: default stop leaves dirty data to writeback (and it reads back" \
	"after a restart); stop_flush fsyncs; a clean namespace needs neither;" \
	"removal does as the stop"
exit $((failures > 0))
