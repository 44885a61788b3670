# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# kh_common.sh - sourced by the tests/interop host scripts: locate the shared
# kernel-host harness and its cache, and serialise guests on this machine.
#
# Sets KH_REPO (this repository), and, through the functions:
#   kh_find_harness  -> KH_RUN_GUEST (path of run-guest.sh), or returns 1
#   kh_pick_cache    -> exports KERNEL_HOST_CACHE (outside git), or returns 1
#   kh_lock SECONDS  -> holds fd 8 locked for this shell (one guest at a time)
#   kh_kernel_pkg PKG -> exports KH_KERNEL_PKG (PKG, or the versioned kernel
#                       package a meta package like linux-image-6.12-amd64
#                       depends on), or returns 1

KH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# KH_HARNESS, else ../shared beside the repository (as CI lays it out), else
# the workplace's shared folder.
kh_find_harness() {
	local d
	for d in "${KH_HARNESS:-}" "$KH_REPO/../shared/interop/kernel-host" \
		 /work/shared/interop/kernel-host; do
		if [ -n "$d" ] && [ -x "$d/run-guest.sh" ]; then
			KH_RUN_GUEST=$(cd "$d" && pwd)/run-guest.sh
			return 0
		fi
	done
	return 1
}

# KERNEL_HOST_CACHE, else /var/cache/nvmfd-kernel-host when it can be made
# writable (kept across fresh clones), else <repo>/.kernel-host-cache (in
# .gitignore). The harness remembers the kernel a cache was built with, so a
# KH_KERNEL_PKG other than the default gets its own cache, a subdirectory
# alt-<version> of that one (the guest lock stays in the base directory:
# KH_LOCK_DIR).
kh_pick_cache() {
	if [ -z "${KERNEL_HOST_CACHE:-}" ]; then
		if mkdir -p /var/cache/nvmfd-kernel-host 2>/dev/null &&
		   [ -w /var/cache/nvmfd-kernel-host ]; then
			KERNEL_HOST_CACHE=/var/cache/nvmfd-kernel-host
		else
			KERNEL_HOST_CACHE=$KH_REPO/.kernel-host-cache
		fi
	fi
	KH_LOCK_DIR=${KH_LOCK_DIR:-$KERNEL_HOST_CACHE}
	if [ -n "${KH_KERNEL_PKG:-}" ] &&
	   [ "${KERNEL_HOST_CACHE##*/}" != "alt-${KH_KERNEL_PKG#linux-image-}" ]; then
		KERNEL_HOST_CACHE=$KERNEL_HOST_CACHE/alt-${KH_KERNEL_PKG#linux-image-}
	fi
	export KERNEL_HOST_CACHE KH_LOCK_DIR
	mkdir -p "$KERNEL_HOST_CACHE" "$KH_LOCK_DIR"
}

# kh_lock SECONDS: wait up to SECONDS for the machine-wide interop guest lock
# (the machine has 2 shared cores: one TCG guest at a time). Children that
# must not keep it get 8>&-.
kh_lock() {
	exec 8>"${KH_LOCK_DIR:-$KERNEL_HOST_CACHE}/.nvmfd-interop.lock"
	flock -w "$1" 8
}

# kh_kernel_pkg PKG: the guest kernel package for the harness (KH_KERNEL_PKG).
# A meta package (linux-image-6.12-amd64) is resolved with apt-cache to the
# versioned one it depends on, so the cache is keyed by the real version.
kh_kernel_pkg() {
	local kp=$1
	if ! [[ "$kp" =~ ^linux-image-[0-9]+\.[0-9]+\.[0-9] ]]; then
		kp=$(apt-cache depends "$kp" 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/{print $2; exit}')
		[ -n "$kp" ] || return 1
	fi
	export KH_KERNEL_PKG=$kp
}
