#!/bin/sh
# SPDX-License-Identifier: MIT
#
# interop.sh - guest side of the nvmfd kernel-host interop test.
#
# Runs inside the QEMU guest of the shared kernel-host harness (busybox sh,
# Debian's 6.1 kernel with nvme-tcp, nvme-cli 2.3, fio 3.33 when present) and
# drives an NVMe/TCP target with the real Linux initiator:
#
#   1. nvme discover: IOP_NQN listed with trtype tcp, traddr, trsvcid
#   2. nvme connect (plain); nvme list / id-ctrl / id-ns: serial, model,
#      subsystem NQN and namespace size
#   3. IOP_IO_MB MiB pattern written with O_DIRECT, read back, compared
#   4. fio verify job (randrw, bs 4k-128k, crc32c), when fio is in the guest
#   4b. with IOP_TRIGGER_PORT: a namespace added over nvmfd's control socket
#      appears (block device, nvme list, nvme list-ns) after the AEN, reads,
#      and goes away when removed; the first namespace stays
#   5. nvme disconnect
#   6. connect with header and data digests (-g -G): the pattern of step 3 is
#      still there, a fresh pattern is written/read/compared
#   7. connect to IOP_DENY_NQN (which does not allow this host) must fail
#   8. the kernel log has no I/O timeout, reset, digest error or warning
#   9. (IOP_AUTH_NQN set) DH-HMAC-CHAP, run before 8: nvme connect with
#      --dhchap-secret and --dhchap-ctrl-secret (bidirectional), a pattern
#      written and read back; with --dhchap-secret only (unidirectional),
#      the pattern is still there; a wrong host secret, a wrong controller
#      secret and no secret are refused (the kernel's messages about those
#      refusals are not held against step 8)
#
# Every check prints one "PASS: ..." or "FAIL: ..." line; the last line is
# "INTEROP RESULT: PASS|FAIL (pass=N fail=N skip=N)". Exit status 0 when no
# check failed, 1 otherwise.
#
# Settings (environment, usually passed with run-guest.sh -e NAME=VALUE):
#   IOP_NQN           subsystem under test (required)
#   IOP_ADDR          target address as seen by the guest (10.0.2.2 = host's
#                     127.0.0.1)
#   IOP_PORT          target TCP port (4420)
#   IOP_EXPECT_TRADDR traddr the discovery log must report (the address the
#                     target listens on; default IOP_ADDR)
#   IOP_HOSTNQN       host NQN to use (written to /etc/nvme/hostnqn and passed
#                     with -q); default: the harness's /etc/nvme/hostnqn
#   IOP_HOSTID        host ID (UUID) to use; default: /etc/nvme/hostid
#   IOP_SERIAL        expected serial number (empty: not checked)
#   IOP_MODEL         expected model number (empty: not checked)
#   IOP_NS_BYTES      expected namespace size in bytes (empty: not checked)
#   IOP_DENY_NQN      subsystem that must refuse this host (empty: skipped)
#   IOP_IO_MB         dd pattern size in MiB (64), written at offset 0
#   IOP_FIO           0 = skip the fio step (default 1)
#   IOP_FIO_SIZE_MB   fio verify region in MiB (32), right after the pattern
#   IOP_FIO_SECONDS   upper bound for the fio job (60)
#   IOP_DIGEST_IO_MB  dd size in MiB on the digest connection (8), after the
#                     fio region
#   IOP_CONNECT_OPTS  extra options for every nvme connect (e.g. "-i 2")
#   IOP_STEP_TIMEOUT  upper bound in seconds for one nvme/dd command (120)
#   IOP_TRIGGER_PORT  TCP port on IOP_ADDR where the host side takes "add"
#                     (answers the new NSID) and "remove NSID" (answers ok),
#                     run over nvmfd's control socket (empty: step 4b skipped)
#   IOP_AUTH_NQN      subsystem requiring DH-HMAC-CHAP (empty: step 9 skipped)
#   IOP_AUTH_HOSTNQN, IOP_AUTH_HOSTID  the identity it allows
#   IOP_DHCHAP_KEY, IOP_DHCHAP_CTRL_KEY  that host's secrets (DHHC-1:...)
#   IOP_DHCHAP_WRONG_KEY  a valid secret that is neither

IOP_ADDR=${IOP_ADDR:-10.0.2.2}
IOP_PORT=${IOP_PORT:-4420}
IOP_NQN=${IOP_NQN:-}
IOP_TRIGGER_PORT=${IOP_TRIGGER_PORT:-}
IOP_EXPECT_TRADDR=${IOP_EXPECT_TRADDR:-$IOP_ADDR}
IOP_HOSTNQN=${IOP_HOSTNQN:-}
IOP_HOSTID=${IOP_HOSTID:-}
IOP_SERIAL=${IOP_SERIAL:-}
IOP_MODEL=${IOP_MODEL:-}
IOP_NS_BYTES=${IOP_NS_BYTES:-}
IOP_DENY_NQN=${IOP_DENY_NQN:-}
IOP_IO_MB=${IOP_IO_MB:-64}
IOP_FIO=${IOP_FIO:-1}
IOP_FIO_SIZE_MB=${IOP_FIO_SIZE_MB:-32}
IOP_FIO_SECONDS=${IOP_FIO_SECONDS:-60}
IOP_DIGEST_IO_MB=${IOP_DIGEST_IO_MB:-8}
IOP_CONNECT_OPTS=${IOP_CONNECT_OPTS:-}
IOP_STEP_TIMEOUT=${IOP_STEP_TIMEOUT:-120}
IOP_AUTH_NQN=${IOP_AUTH_NQN:-}
IOP_AUTH_HOSTNQN=${IOP_AUTH_HOSTNQN:-}
IOP_AUTH_HOSTID=${IOP_AUTH_HOSTID:-}
IOP_DHCHAP_KEY=${IOP_DHCHAP_KEY:-}
IOP_DHCHAP_CTRL_KEY=${IOP_DHCHAP_CTRL_KEY:-}
IOP_DHCHAP_WRONG_KEY=${IOP_DHCHAP_WRONG_KEY:-}

NPASS=0
NFAIL=0
NSKIP=0
CTRL=""
NS=""
T0=$(cut -d' ' -f1 /proc/uptime)

now() { cut -d' ' -f1 /proc/uptime; }
step() { echo; echo "=== $* [t=$(now)s]"; }
pass() { echo "PASS: $*"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL: $*"; NFAIL=$((NFAIL + 1)); }
skip() { echo "SKIP: $*"; NSKIP=$((NSKIP + 1)); }
# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1 '$2'"
	else
		fail "$1 '$2', expected '$3'"
	fi
}
# run CMD...: bounded by IOP_STEP_TIMEOUT, output shown
run() { timeout "$IOP_STEP_TIMEOUT" "$@"; }
# trim leading/trailing blanks of stdin
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'; }

finish() {
	if [ -n "$(ls /sys/class/nvme 2>/dev/null)" ]; then
		echo "(controllers still connected, disconnecting)"
		nvme list
		timeout 60 nvme disconnect-all
	fi
	step "8. kernel log: no I/O timeouts, resets, digest errors or warnings"
	dmesg | grep -E 'nvme|Oops|BUG:|WARNING:|Call Trace' >/tmp/dmesg.txt
	# step 9's refused connects are expected to make the kernel complain
	if [ -s /tmp/dmesg-refused.txt ]; then
		grep -vxFf /tmp/dmesg-refused.txt /tmp/dmesg.txt >/tmp/dmesg-kept.txt
		echo "($(wc -l </tmp/dmesg-refused.txt) kernel log line(s) of step 9's refused connects not checked)"
		mv /tmp/dmesg-kept.txt /tmp/dmesg.txt
	fi
	cat /tmp/dmesg.txt
	{
		grep -E 'Oops|BUG:|WARNING:|Call Trace' /tmp/dmesg.txt
		grep -iE 'nvme.*(timeout|timed out|digest|reset|reconnect|error)' /tmp/dmesg.txt
	} >/tmp/dmesg-bad.txt
	if [ -s /tmp/dmesg-bad.txt ]; then
		fail "kernel log: $(wc -l </tmp/dmesg-bad.txt) suspicious line(s), first: $(head -1 /tmp/dmesg-bad.txt)"
	else
		pass "kernel log clean ($(wc -l </tmp/dmesg.txt) nvme lines)"
	fi
	step "summary"
	if [ "$NFAIL" -eq 0 ] && [ "$NPASS" -gt 0 ]; then
		res=PASS
	else
		res=FAIL
	fi
	echo "INTEROP RESULT: $res (pass=$NPASS fail=$NFAIL skip=$NSKIP," \
	     "$(awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')s in guest)"
	[ "$res" = PASS ]
	exit $?
}

# ctrl_of NQN: name of the live controller connected to NQN, or nothing
ctrl_of() {
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] || continue
		if [ "$(cat "$c/subsysnqn")" = "$1" ]; then
			basename "$c"
			return 0
		fi
	done
	return 1
}

# wait_ns NQN: sets CTRL and NS (block device of the first namespace of NQN),
# waiting up to 15 s for the namespace scan. Return 1 when not found.
wait_ns() {
	CTRL=""
	NS=""
	i=0
	while [ $i -lt 150 ]; do
		CTRL=$(ctrl_of "$1")
		if [ -n "$CTRL" ]; then
			for s in /sys/class/nvme-subsystem/*; do
				[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$1" ] || continue
				for n in "$s"/nvme*n*; do
					[ -e "$n" ] && NS=$(basename "$n") && break
				done
			done
			if [ -z "$NS" ]; then
				for n in /sys/class/nvme/"$CTRL"/nvme*n*; do
					case "$(basename "$n")" in
					*c*n*) ;;
					*) [ -e "$n" ] && NS=$(basename "$n") ;;
					esac
				done
			fi
			[ -n "$NS" ] && [ -b "/dev/$NS" ] && return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# connect NQN [OPTS...]: nvme connect with this host's identity
connect() {
	nqn=$1
	shift
	# shellcheck disable=SC2086 # IOP_CONNECT_OPTS is a list of options
	run nvme connect -t tcp -a "$IOP_ADDR" -s "$IOP_PORT" -n "$nqn" \
		-q "$IOP_HOSTNQN" -I "$IOP_HOSTID" $IOP_CONNECT_OPTS "$@"
}

# disconnect NQN: nvme disconnect, and the controller must go away
disconnect() {
	run nvme disconnect -n "$1"
	drc=$?
	j=0
	while [ -n "$(ctrl_of "$1")" ] && [ $j -lt 100 ]; do
		sleep 0.1
		j=$((j + 1))
	done
	if [ $drc -ne 0 ]; then
		fail "nvme disconnect -n $1 exited $drc"
	elif [ -n "$(ctrl_of "$1")" ]; then
		fail "controller for $1 still present 10 s after nvme disconnect"
	else
		pass "nvme disconnect -n $1"
	fi
	CTRL=""
	NS=""
}

# pattern_rw FILE MB OFFSET_MB WHAT: write FILE (MB MiB) with O_DIRECT at
# OFFSET_MB, read it back with O_DIRECT and compare.
pattern_rw() {
	f=$1 mb=$2 off=$3 what=$4
	if ! run dd if="$f" of="/dev/$NS" bs=1M count="$mb" seek="$off" \
			oflag=direct conv=fsync,notrunc; then
		fail "$what: O_DIRECT write of $mb MiB at $off MiB failed"
		return 1
	fi
	echo 3 >/proc/sys/vm/drop_caches
	rm -f /tmp/readback
	if ! run dd if="/dev/$NS" of=/tmp/readback bs=1M count="$mb" skip="$off" \
			iflag=direct; then
		fail "$what: O_DIRECT read of $mb MiB at $off MiB failed"
		return 1
	fi
	want=$(md5sum <"$f" | cut -d' ' -f1)
	got=$(md5sum </tmp/readback | cut -d' ' -f1)
	if cmp "$f" /tmp/readback >/dev/null 2>&1; then
		pass "$what: $mb MiB at $off MiB written and read back identical (md5 $got)"
	else
		cmp "$f" /tmp/readback 2>&1 | head -3
		fail "$what: read-back differs (md5 wrote $want, read $got)"
		rm -f /tmp/readback
		return 1
	fi
	rm -f /tmp/readback
	return 0
}

# ---------------------------------------------------------------------------
if [ -z "$IOP_NQN" ]; then
	fail "IOP_NQN not set"
	finish
fi
if [ -n "$IOP_HOSTNQN" ]; then
	echo "$IOP_HOSTNQN" >/etc/nvme/hostnqn
else
	IOP_HOSTNQN=$(cat /etc/nvme/hostnqn)
fi
if [ -n "$IOP_HOSTID" ]; then
	echo "$IOP_HOSTID" >/etc/nvme/hostid
else
	IOP_HOSTID=$(cat /etc/nvme/hostid)
fi
echo "target $IOP_ADDR:$IOP_PORT subsystem $IOP_NQN; host $IOP_HOSTNQN ($IOP_HOSTID)"
echo "kernel $(uname -r), $(nvme version 2>/dev/null | head -1)"
FIO_OFF_MB=$IOP_IO_MB
DIG_OFF_MB=$((IOP_IO_MB + IOP_FIO_SIZE_MB))
NEED_MB=$((DIG_OFF_MB + IOP_DIGEST_IO_MB))
if [ -n "$IOP_NS_BYTES" ] && [ $((IOP_NS_BYTES / 1048576)) -lt "$NEED_MB" ]; then
	fail "namespace of $IOP_NS_BYTES bytes is smaller than the $NEED_MB MiB the test uses"
	finish
fi

# ---------------------------------------------------------------------------
step "1. nvme discover -t tcp -a $IOP_ADDR -s $IOP_PORT"
if run nvme discover -t tcp -a "$IOP_ADDR" -s "$IOP_PORT" -q "$IOP_HOSTNQN" \
		>/tmp/discover.txt 2>&1; then
	cat /tmp/discover.txt
	# one line per entry: trtype traddr trsvcid subtype... for subnqn
	ent=$(awk -v nqn="$IOP_NQN" '
		function flush() { if (sn == nqn) print tt "|" ta "|" ts; tt = ta = ts = sn = "" }
		/^=====Discovery Log Entry/ { flush(); next }
		{ k = $1; sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v) }
		k == "trtype" { tt = v } k == "traddr" { ta = v }
		k == "trsvcid" { ts = v } k == "subnqn" { sn = v }
		END { flush() }' /tmp/discover.txt)
	want="tcp|$IOP_EXPECT_TRADDR|$IOP_PORT"
	if [ -z "$ent" ]; then
		fail "discovery log does not list $IOP_NQN"
	elif echo "$ent" | grep -qxF "$want"; then
		pass "discovery log lists $IOP_NQN (trtype tcp, traddr $IOP_EXPECT_TRADDR, trsvcid $IOP_PORT)"
	else
		fail "discovery log entry for $IOP_NQN is '$ent', expected '$want' (trtype|traddr|trsvcid)"
	fi
	if [ -n "$IOP_DENY_NQN" ]; then
		# as nvmet does, the log lists only subsystems this host may use
		if awk '$1 == "subnqn:" { print $2 }' /tmp/discover.txt | grep -qxF "$IOP_DENY_NQN"; then
			fail "discovery log lists $IOP_DENY_NQN to a host it does not allow"
		else
			pass "discovery log hides $IOP_DENY_NQN (host not allowed)"
		fi
	fi
else
	cat /tmp/discover.txt
	nrc=0
	timeout 5 nc -w 3 "$IOP_ADDR" "$IOP_PORT" </dev/null >/dev/null 2>&1 || nrc=$?
	if [ $nrc = 0 ] || [ $nrc = 124 ] || [ $nrc = 143 ]; then
		fail "nvme discover failed although $IOP_ADDR:$IOP_PORT accepts TCP connections"
	else
		fail "nvme discover failed: nothing listening on $IOP_ADDR:$IOP_PORT"
	fi
	finish
fi

# ---------------------------------------------------------------------------
step "2. nvme connect -t tcp -a $IOP_ADDR -s $IOP_PORT -n $IOP_NQN $IOP_CONNECT_OPTS"
if ! connect "$IOP_NQN"; then
	fail "nvme connect to $IOP_NQN failed"
	finish
fi
if ! wait_ns "$IOP_NQN"; then
	if [ -n "$CTRL" ]; then
		fail "connected (/dev/$CTRL) but no namespace block device appeared"
		nvme list
		disconnect "$IOP_NQN"
	else
		fail "nvme connect returned 0 but no controller for $IOP_NQN"
	fi
	finish
fi
pass "nvme connect: controller /dev/$CTRL, namespace /dev/$NS"
c=/sys/class/nvme/$CTRL
echo "state=$(cat "$c/state") transport=$(cat "$c/transport") address=$(cat "$c/address")" \
     "queue_count=$(cat "$c/queue_count" 2>/dev/null) sqsize=$(cat "$c/sqsize" 2>/dev/null)"

step "nvme list"
run nvme list | tee /tmp/list.txt
if grep -q "/dev/$NS " /tmp/list.txt; then
	pass "nvme list shows /dev/$NS"
else
	fail "nvme list does not show /dev/$NS"
fi
for v in "$IOP_SERIAL" "$IOP_MODEL"; do
	[ -n "$v" ] || continue
	if grep "/dev/$NS " /tmp/list.txt | grep -qF "$v"; then
		pass "nvme list shows '$v' for /dev/$NS"
	else
		fail "nvme list does not show '$v' for /dev/$NS"
	fi
done

step "nvme id-ctrl /dev/$CTRL"
if run nvme id-ctrl "/dev/$CTRL" >/tmp/idctrl.txt; then
	head -40 /tmp/idctrl.txt
	idfield() { sed -n "s/^$1 *: //p" /tmp/idctrl.txt | head -1 | trim; }
	sn=$(idfield sn)
	mn=$(idfield mn)
	subnqn=$(idfield subnqn)
	echo "(sn='$sn' mn='$mn' subnqn='$subnqn' mdts=$(idfield mdts) ioccsz=$(idfield ioccsz) cntlid=$(idfield cntlid))"
	[ -z "$IOP_SERIAL" ] || expect_eq "id-ctrl sn" "$sn" "$IOP_SERIAL"
	[ -z "$IOP_MODEL" ] || expect_eq "id-ctrl mn" "$mn" "$IOP_MODEL"
	expect_eq "id-ctrl subnqn" "$subnqn" "$IOP_NQN"
	ssn=$(trim </sys/class/nvme/"$CTRL"/serial)
	if [ -n "$IOP_SERIAL" ] && [ "$ssn" != "$IOP_SERIAL" ]; then
		fail "sysfs serial '$ssn', expected '$IOP_SERIAL'"
	fi
else
	fail "nvme id-ctrl /dev/$CTRL failed"
fi

step "nvme id-ns /dev/$NS"
if run nvme id-ns "/dev/$NS" >/tmp/idns.txt; then
	head -30 /tmp/idns.txt
	nsze=$(sed -n 's/^nsze *: *//p' /tmp/idns.txt | trim)
	lbads=$(sed -n 's/^lbaf .*lbads:\([0-9]*\).*(in use).*/\1/p' /tmp/idns.txt | head -1)
	bytes=""
	if [ -n "$nsze" ] && [ -n "$lbads" ]; then
		bytes=$((nsze * (1 << lbads)))
	fi
	blk=$(( $(cat /sys/block/"$NS"/size) * 512 ))
	echo "(nsze=$nsze lbads=$lbads -> $bytes bytes; block device $blk bytes)"
	if [ -z "$bytes" ]; then
		fail "id-ns: cannot read nsze / in-use LBA format"
	elif [ -n "$IOP_NS_BYTES" ] && [ "$bytes" != "$IOP_NS_BYTES" ]; then
		fail "id-ns size $bytes bytes, expected $IOP_NS_BYTES"
	elif [ "$blk" != "$bytes" ]; then
		fail "block device is $blk bytes, id-ns says $bytes"
	else
		pass "id-ns size $bytes bytes (nsze $nsze, $((1 << lbads))-byte blocks)"
	fi
else
	fail "nvme id-ns /dev/$NS failed"
fi

# ---------------------------------------------------------------------------
step "3. dd: $IOP_IO_MB MiB pattern with O_DIRECT, read back, compare"
dd if=/dev/urandom of=/tmp/pattern bs=1M count="$IOP_IO_MB" 2>/dev/null
pattern_rw /tmp/pattern "$IOP_IO_MB" 0 "dd plain"

# ---------------------------------------------------------------------------
step "4. fio verify: randrw, bs 4k-128k, crc32c, $IOP_FIO_SIZE_MB MiB at $FIO_OFF_MB MiB"
if [ "$IOP_FIO" = 0 ]; then
	skip "fio disabled (IOP_FIO=0)"
elif ! command -v fio >/dev/null 2>&1; then
	skip "fio not in the guest"
else
	# write phase with verify_backlog (reads verify while writing), then
	# the final verify pass over everything written
	frc=0
	timeout $((IOP_FIO_SECONDS + 60)) fio --name=iop-verify --filename="/dev/$NS" \
		--ioengine=libaio --direct=1 --iodepth=16 --rw=randrw --rwmixread=30 \
		--bsrange=4k-128k --verify=crc32c --verify_fatal=1 --verify_backlog=64 \
		--do_verify=1 --offset="${FIO_OFF_MB}M" --size="${IOP_FIO_SIZE_MB}M" \
		--runtime="$IOP_FIO_SECONDS" --randrepeat=0 --eta=never \
		--output=/tmp/fio.txt || frc=$?
	grep -E 'err=|READ:|WRITE:|verify|IOPS' /tmp/fio.txt
	if [ $frc -eq 0 ] && grep -q 'err= 0' /tmp/fio.txt; then
		pass "fio randrw crc32c verify ($(grep -o 'io=[^,]*' /tmp/fio.txt | tr '\n' ' '))"
	else
		tail -20 /tmp/fio.txt
		fail "fio verify job exited $frc"
	fi
fi

# ---------------------------------------------------------------------------
# 4b. a namespace added (and removed) over nvmfd's control socket while
# connected: the host side's trigger (IOP_TRIGGER_PORT) runs nvmfctl add-ns /
# remove-ns and answers the NSID; the kernel learns of it only through the
# Namespace Attribute Changed AEN (it rescans on that event).
# ns_dev_of NQN NSID: the block device of namespace NSID of NQN, or ""
ns_dev_of() {
	for s in /sys/class/nvme-subsystem/*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		for n in "$s"/nvme*n* /sys/class/nvme/"$CTRL"/nvme*n*; do
			[ -e "$n/nsid" ] || continue
			case "$(basename "$n")" in *c*n*) continue ;; esac
			[ "$(cat "$n/nsid" 2>/dev/null)" = "$2" ] && basename "$n" && return 0
		done
	done
	return 0
}
trigger() { echo "$1" | timeout 30 nc -w 20 "$IOP_ADDR" "$IOP_TRIGGER_PORT" 2>/dev/null | tr -d '\r'; }
step "4b. namespace added and removed over nvmfd's control socket (AEN)"
if [ -z "$IOP_TRIGGER_PORT" ]; then
	skip "no control-socket trigger (IOP_TRIGGER_PORT)"
else
	nsid=$(trigger add | tail -1)
	echo "(nvmfd answered NSID '$nsid')"
	dev=""
	i=0
	while [ -n "$nsid" ] && [ $i -lt 300 ]; do
		dev=$(ns_dev_of "$IOP_NQN" "$nsid")
		[ -n "$dev" ] && [ -b "/dev/$dev" ] && break
		dev=""
		sleep 0.1
		i=$((i + 1))
	done
	case "$nsid" in
	''|*[!0-9]*) fail "add-ns over the control socket failed: '$nsid'" ;;
	*)
		if [ -z "$dev" ]; then
			fail "namespace $nsid added over RPC: no block device within 30 s (AEN not acted on)"
			dmesg | tail -20
		else
			pass "namespace $nsid added over RPC appeared as /dev/$dev ($((i / 10)) s)"
			run nvme list | tee /tmp/list2.txt
			if grep -q "/dev/$dev " /tmp/list2.txt; then
				pass "nvme list shows /dev/$dev"
			else
				fail "nvme list does not show /dev/$dev"
			fi
			run nvme list-ns "/dev/$CTRL" | tee /tmp/listns.txt
			if grep -qi "0x$(printf %x "$nsid")\$" /tmp/listns.txt; then
				pass "nvme list-ns /dev/$CTRL lists NSID $nsid"
			else
				fail "nvme list-ns /dev/$CTRL does not list NSID $nsid"
			fi
			if run dd if="/dev/$dev" of=/dev/null bs=1M count=4 iflag=direct 2>/dev/null; then
				pass "read 4 MiB from /dev/$dev"
			else
				fail "read from /dev/$dev failed"
			fi
			r=$(trigger "remove $nsid" | tail -1)
			i=0
			while [ $i -lt 300 ] && [ -n "$(ns_dev_of "$IOP_NQN" "$nsid")" ]; do
				sleep 0.1
				i=$((i + 1))
			done
			if [ "$r" = ok ] && [ -z "$(ns_dev_of "$IOP_NQN" "$nsid")" ]; then
				pass "namespace $nsid removed over RPC: /dev/$dev gone ($((i / 10)) s)"
			else
				fail "namespace $nsid removed over RPC ('$r'): /dev/$dev still there after 30 s"
			fi
		fi
		;;
	esac
	if [ -b "/dev/$NS" ]; then
		pass "the first namespace /dev/$NS is still there"
	else
		fail "/dev/$NS disappeared with the namespace change"
	fi
fi

# ---------------------------------------------------------------------------
step "5. nvme disconnect -n $IOP_NQN"
disconnect "$IOP_NQN"

# ---------------------------------------------------------------------------
step "6. nvme connect with header and data digests (-g -G)"
if ! connect "$IOP_NQN" -g -G; then
	fail "nvme connect -g -G to $IOP_NQN failed"
elif ! wait_ns "$IOP_NQN"; then
	fail "digest connection: no namespace block device"
	disconnect "$IOP_NQN"
else
	pass "nvme connect -g -G: controller /dev/$CTRL, namespace /dev/$NS"
	# the data of step 3 survived the reconnect (read with digests)
	chk=$IOP_DIGEST_IO_MB
	[ "$chk" -le "$IOP_IO_MB" ] || chk=$IOP_IO_MB
	echo 3 >/proc/sys/vm/drop_caches
	dd if=/tmp/pattern of=/tmp/pattern-head bs=1M count="$chk" 2>/dev/null
	if run dd if="/dev/$NS" of=/tmp/readback bs=1M count="$chk" iflag=direct &&
			cmp /tmp/pattern-head /tmp/readback >/dev/null 2>&1; then
		pass "digests: first $chk MiB of the step-3 pattern read back intact"
	else
		fail "digests: first $chk MiB of the step-3 pattern differ after reconnect"
	fi
	rm -f /tmp/pattern-head /tmp/readback /tmp/pattern
	dd if=/dev/urandom of=/tmp/pattern2 bs=1M count="$IOP_DIGEST_IO_MB" 2>/dev/null
	pattern_rw /tmp/pattern2 "$IOP_DIGEST_IO_MB" "$DIG_OFF_MB" "dd digests"
	rm -f /tmp/pattern2
	step "nvme list (digest connection)"
	run nvme list
	disconnect "$IOP_NQN"
fi
rm -f /tmp/pattern

# ---------------------------------------------------------------------------
step "7. nvme connect to $IOP_DENY_NQN (host not allowed) must fail"
if [ -z "$IOP_DENY_NQN" ]; then
	skip "no IOP_DENY_NQN given"
else
	crc=0
	connect "$IOP_DENY_NQN" >/tmp/deny.txt 2>&1 || crc=$?
	cat /tmp/deny.txt
	c=$(ctrl_of "$IOP_DENY_NQN")
	if [ $crc -ne 0 ] && [ -z "$c" ]; then
		pass "connect to $IOP_DENY_NQN refused (nvme connect exit $crc)"
	else
		fail "connect to $IOP_DENY_NQN was accepted (exit $crc, controller '${c:-none}')"
		[ -n "$c" ] && disconnect "$IOP_DENY_NQN"
	fi
fi

# ---------------------------------------------------------------------------
# auth_connect OPTS...: nvme connect to IOP_AUTH_NQN as IOP_AUTH_HOSTNQN
auth_connect() {
	# shellcheck disable=SC2086 # IOP_CONNECT_OPTS is a list of options
	run nvme connect -t tcp -a "$IOP_ADDR" -s "$IOP_PORT" -n "$IOP_AUTH_NQN" \
		-q "$IOP_AUTH_HOSTNQN" -I "$IOP_AUTH_HOSTID" $IOP_CONNECT_OPTS "$@"
}

# auth_refused WHAT OPTS...: the connect must fail and leave no controller
auth_refused() {
	what=$1
	shift
	crc=0
	auth_connect "$@" >/tmp/auth-refused.txt 2>&1 || crc=$?
	cat /tmp/auth-refused.txt
	c=$(ctrl_of "$IOP_AUTH_NQN")
	if [ $crc -ne 0 ] && [ -z "$c" ]; then
		pass "DH-HMAC-CHAP $what refused (nvme connect exit $crc)"
	else
		fail "DH-HMAC-CHAP $what accepted (exit $crc, controller '${c:-none}')"
		[ -n "$c" ] && disconnect "$IOP_AUTH_NQN"
	fi
}

AUTH_MB=8
if [ -z "$IOP_AUTH_NQN" ]; then
	:
elif [ -z "$IOP_AUTH_HOSTNQN" ] || [ -z "$IOP_DHCHAP_KEY" ] || [ -z "$IOP_DHCHAP_CTRL_KEY" ] ||
		[ -z "$IOP_DHCHAP_WRONG_KEY" ]; then
	fail "IOP_AUTH_NQN set without IOP_AUTH_HOSTNQN / IOP_DHCHAP_KEY / _CTRL_KEY / _WRONG_KEY"
else
	step "9a. DH-HMAC-CHAP bidirectional: nvme connect --dhchap-secret --dhchap-ctrl-secret"
	if ! auth_connect --dhchap-secret="$IOP_DHCHAP_KEY" \
			--dhchap-ctrl-secret="$IOP_DHCHAP_CTRL_KEY"; then
		fail "DH-HMAC-CHAP bidirectional connect to $IOP_AUTH_NQN failed" \
		     "(kernel without CONFIG_NVME_HOST_AUTH? $(uname -r))"
	elif ! wait_ns "$IOP_AUTH_NQN"; then
		fail "DH-HMAC-CHAP bidirectional: no namespace block device"
		disconnect "$IOP_AUTH_NQN"
	else
		pass "DH-HMAC-CHAP bidirectional connect: controller /dev/$CTRL, namespace /dev/$NS"
		dmesg | grep -i 'authenticated' | tail -3
		dd if=/dev/urandom of=/tmp/auth-pattern bs=1M count=$AUTH_MB 2>/dev/null
		pattern_rw /tmp/auth-pattern $AUTH_MB 0 "dd DH-HMAC-CHAP bidirectional"
		disconnect "$IOP_AUTH_NQN"
	fi

	step "9b. DH-HMAC-CHAP unidirectional: nvme connect --dhchap-secret"
	if ! auth_connect --dhchap-secret="$IOP_DHCHAP_KEY"; then
		fail "DH-HMAC-CHAP unidirectional connect to $IOP_AUTH_NQN failed"
	elif ! wait_ns "$IOP_AUTH_NQN"; then
		fail "DH-HMAC-CHAP unidirectional: no namespace block device"
		disconnect "$IOP_AUTH_NQN"
	else
		pass "DH-HMAC-CHAP unidirectional connect: controller /dev/$CTRL, namespace /dev/$NS"
		echo 3 >/proc/sys/vm/drop_caches
		if [ -e /tmp/auth-pattern ] &&
				run dd if="/dev/$NS" of=/tmp/auth-readback bs=1M count=$AUTH_MB iflag=direct &&
				cmp /tmp/auth-pattern /tmp/auth-readback >/dev/null 2>&1; then
			pass "DH-HMAC-CHAP unidirectional: the $AUTH_MB MiB of 9a read back intact"
		else
			fail "DH-HMAC-CHAP unidirectional: the pattern of 9a did not read back"
		fi
		rm -f /tmp/auth-readback
		disconnect "$IOP_AUTH_NQN"
	fi
	rm -f /tmp/auth-pattern

	step "9c. DH-HMAC-CHAP: wrong host secret, wrong controller secret, no secret"
	mark=$(dmesg | wc -l)
	auth_refused "wrong host secret" --dhchap-secret="$IOP_DHCHAP_WRONG_KEY"
	auth_refused "wrong controller secret" --dhchap-secret="$IOP_DHCHAP_KEY" \
		--dhchap-ctrl-secret="$IOP_DHCHAP_WRONG_KEY"
	auth_refused "without a secret"
	dmesg | tail -n +$((mark + 1)) >/tmp/dmesg-refused.txt
	cat /tmp/dmesg-refused.txt
fi

finish
