#!/usr/bin/env bash
# Install the Debian 12 packages nvmfd needs to build, test and benchmark.
# Idempotent: only missing packages are installed. Needs root (or sudo).
set -euo pipefail

pkgs=(
	build-essential meson ninja-build pkg-config
	liburing-dev libisal-dev libjson-c-dev libcmocka-dev
	libssl-dev                 # OpenSSL: DH-HMAC-CHAP, TLS PSK (src/auth)
	clang libclang-rt-14-dev   # libFuzzer + sanitizer runtimes for clang
	stress-ng gnuplot-nox      # nvmf-bench contention and plots
	nvme-cli                   # discovery/connect helpers, reference output
	procps psmisc iproute2
	# kernel-host interop (tests/interop): QEMU guest with Debian's kernel;
	# the harness downloads the kernel, nvme-cli and fio .debs into its cache
	qemu-system-x86 busybox-static cpio kmod zstd
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "install-deps: all ${#pkgs[@]} packages present"
	exit 0
fi
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
