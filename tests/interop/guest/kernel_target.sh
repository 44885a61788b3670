#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kernel_target.sh - guest script: configure the Linux kernel NVMe/TCP target
# (nvmet, nvmet-tcp) inside the kernel-host harness guest, then either
#
#   KT_ACTION=selftest  run /guest/interop.sh against it (the same checks as
#                       against nvmfd: proves the guest script itself), or
#   KT_ACTION=serve     keep it up for KT_SERVE_SECONDS (with a QEMU hostfwd
#                       it is then reachable from the host's 127.0.0.1), or
#                       until the first 7 bytes of the namespace read
#                       "KH-STOP".
#
# Settings (environment):
#   KT_ADDR        address nvmet listens on in the guest (127.0.0.1;
#                  10.0.2.15 for serve, which hostfwd forwards to)
#   KT_PORT        TCP port (4420)
#   KT_NQN         subsystem NQN (nqn.2026-11.io.nvmfd:kernel-target)
#   KT_SERIAL      serial number (NVMFD-KT-0001)
#   KT_MODEL       model number (Linux kernel target)
#   KT_NS_MB       RAM (tmpfs file) namespace size in MiB (128)
#   KT_ALLOW_HOST  the only host NQN allowed; empty = any host
#   KT_DENY_NQN    optional second subsystem that allows only a host NQN
#                  nobody uses (so connecting to it must fail)
#   KT_AUTH_NQN    optional subsystem that allows only KT_AUTH_HOST, which
#                  must authenticate with DH-HMAC-CHAP (nvmet configfs
#                  hosts/<nqn>/dhchap_key, and when set dhchap_ctrl_key,
#                  dhchap_hash, dhchap_dhgroup from the variables below)
#   KT_AUTH_HOST   its host NQN
#   KT_DHCHAP_KEY, KT_DHCHAP_CTRL_KEY  secrets, DHHC-1:hh:<base64>:
#   KT_DHCHAP_HASH hmac(sha256) | hmac(sha384) | hmac(sha512)
#   KT_DHCHAP_DHGROUP  null | ffdhe2048 ... ffdhe8192
#   KT_SERVE_SECONDS  serve time (300)
# For selftest, IOP_* settings are passed on to interop.sh; the target
# settings above fill in IOP_NQN, IOP_SERIAL, ... unless already set.
set -u
KT_ACTION=${KT_ACTION:-selftest}
KT_ADDR=${KT_ADDR:-127.0.0.1}
KT_PORT=${KT_PORT:-4420}
KT_NQN=${KT_NQN:-nqn.2026-11.io.nvmfd:kernel-target}
KT_SERIAL=${KT_SERIAL:-NVMFD-KT-0001}
KT_MODEL=${KT_MODEL:-Linux kernel target}
KT_NS_MB=${KT_NS_MB:-128}
KT_ALLOW_HOST=${KT_ALLOW_HOST:-}
KT_DENY_NQN=${KT_DENY_NQN:-}
KT_AUTH_NQN=${KT_AUTH_NQN:-}
KT_AUTH_HOST=${KT_AUTH_HOST:-}
KT_DHCHAP_KEY=${KT_DHCHAP_KEY:-}
KT_DHCHAP_CTRL_KEY=${KT_DHCHAP_CTRL_KEY:-}
KT_DHCHAP_HASH=${KT_DHCHAP_HASH:-}
KT_DHCHAP_DHGROUP=${KT_DHCHAP_DHGROUP:-}
KT_SERVE_SECONDS=${KT_SERVE_SECONDS:-300}
C=/sys/kernel/config/nvmet
NOBODY=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000dead

die() { echo "KT-FAIL: $*"; exit 1; }

# add_subsys NQN SIZE_MB ALLOWED_HOST(empty=any) SERIAL MODEL
add_subsys() {
	s=$C/subsystems/$1
	mkdir "$s" || die "mkdir $s"
	if [ -z "$3" ]; then
		echo 1 >"$s/attr_allow_any_host"
	else
		echo 0 >"$s/attr_allow_any_host"
		[ -d "$C/hosts/$3" ] || mkdir "$C/hosts/$3" || die "mkdir host $3"
		ln -s "$C/hosts/$3" "$s/allowed_hosts/$3" || die "allow $3"
	fi
	echo "$4" >"$s/attr_serial" || die "attr_serial"
	echo "$5" >"$s/attr_model" || die "attr_model"
	img=/tmp/kt-$(echo "$1" | md5sum | cut -c1-8).img
	truncate -s "${2}M" "$img"
	mkdir "$s/namespaces/1"
	echo "$img" >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/buffered_io"   # tmpfs: no O_DIRECT
	echo 1 >"$s/namespaces/1/enable" || die "enable namespace of $1"
	ln -s "$s" "$C/ports/1/subsystems/$1" || die "export $1"
	KT_IMG=$img
}

modprobe nvmet || die "modprobe nvmet"
modprobe nvmet-tcp || die "modprobe nvmet-tcp"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
mkdir "$C/ports/1" || die "mkdir port"
echo ipv4 >"$C/ports/1/addr_adrfam"
echo tcp >"$C/ports/1/addr_trtype"
echo "$KT_ADDR" >"$C/ports/1/addr_traddr"
echo "$KT_PORT" >"$C/ports/1/addr_trsvcid"
if [ -n "$KT_DENY_NQN" ]; then
	add_subsys "$KT_DENY_NQN" 16 "$NOBODY" NVMFD-KT-DENY "Linux kernel target (deny)"
fi
# Debian 12's 6.1 kernel is built without CONFIG_NVME_TARGET_AUTH: then the
# auth subsystem is left out and a KH-TARGET-AUTH-UNSUPPORTED line says so.
if [ -n "$KT_AUTH_NQN" ]; then
	[ -n "$KT_AUTH_HOST" ] && [ -n "$KT_DHCHAP_KEY" ] ||
		die "KT_AUTH_NQN needs KT_AUTH_HOST and KT_DHCHAP_KEY"
	h=$C/hosts/$KT_AUTH_HOST
	mkdir -p "$h" || die "mkdir host $KT_AUTH_HOST"
	if [ ! -e "$h/dhchap_key" ]; then
		echo "KH-TARGET-AUTH-UNSUPPORTED kernel=$(uname -r): nvmet has no DH-HMAC-CHAP" \
		     "(CONFIG_NVME_TARGET_AUTH)"
		rmdir "$h"
		KT_AUTH_NQN=
	fi
fi
if [ -n "$KT_AUTH_NQN" ]; then
	echo "$KT_DHCHAP_KEY" >"$h/dhchap_key" || die "dhchap_key"
	if [ -n "$KT_DHCHAP_CTRL_KEY" ]; then
		echo "$KT_DHCHAP_CTRL_KEY" >"$h/dhchap_ctrl_key" || die "dhchap_ctrl_key"
	fi
	if [ -n "$KT_DHCHAP_HASH" ]; then
		echo "$KT_DHCHAP_HASH" >"$h/dhchap_hash" || die "dhchap_hash $KT_DHCHAP_HASH"
	fi
	if [ -n "$KT_DHCHAP_DHGROUP" ]; then
		echo "$KT_DHCHAP_DHGROUP" >"$h/dhchap_dhgroup" || die "dhchap_dhgroup $KT_DHCHAP_DHGROUP"
	fi
	add_subsys "$KT_AUTH_NQN" 32 "$KT_AUTH_HOST" NVMFD-KT-AUTH "Linux kernel target (auth)"
	echo "KH-TARGET-AUTH nqn=$KT_AUTH_NQN host=$KT_AUTH_HOST" \
	     "hash=$(cat "$h/dhchap_hash") dhgroup=$(cat "$h/dhchap_dhgroup")" \
	     "ctrl_key=$([ -n "$KT_DHCHAP_CTRL_KEY" ] && echo yes || echo no)"
fi
add_subsys "$KT_NQN" "$KT_NS_MB" "$KT_ALLOW_HOST" "$KT_SERIAL" "$KT_MODEL"
echo "KH-TARGET-READY nqn=$KT_NQN addr=$KT_ADDR:$KT_PORT ns=${KT_NS_MB}MiB" \
     "allow=${KT_ALLOW_HOST:-any} deny=${KT_DENY_NQN:-none}"

case "$KT_ACTION" in
selftest)
	export IOP_ADDR="${IOP_ADDR:-$KT_ADDR}" IOP_PORT="${IOP_PORT:-$KT_PORT}"
	export IOP_NQN="${IOP_NQN:-$KT_NQN}" IOP_SERIAL="${IOP_SERIAL-$KT_SERIAL}"
	export IOP_MODEL="${IOP_MODEL-$KT_MODEL}"
	export IOP_NS_BYTES="${IOP_NS_BYTES-$((KT_NS_MB * 1048576))}"
	export IOP_DENY_NQN="${IOP_DENY_NQN-$KT_DENY_NQN}"
	[ -n "$KT_ALLOW_HOST" ] && export IOP_HOSTNQN="${IOP_HOSTNQN:-$KT_ALLOW_HOST}"
	sh /guest/interop.sh
	exit $?
	;;
serve)
	end=$(($(cut -d. -f1 /proc/uptime) + KT_SERVE_SECONDS))
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		if [ "$(head -c 7 "$KT_IMG")" = "KH-STOP" ]; then
			echo "KH-STOP seen"
			break
		fi
		sleep 1
	done
	echo "KH-TARGET-DONE"
	exit 0
	;;
*)
	die "unknown KT_ACTION '$KT_ACTION'"
	;;
esac
