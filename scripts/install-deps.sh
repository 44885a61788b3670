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
	linux-perf strace python3  # nvmf-bench --syscalls; bench/compare-spdk.sh's table
	nvme-cli                   # discovery/connect helpers, reference output
	procps psmisc iproute2
	fio dpkg-dev               # fio ioengine (tools/fio): fio + dpkg-source
	libaio-dev libnuma-dev     # so fio's ./configure sees what Debian's build saw
	# kernel-host interop (tests/interop): QEMU guest with Debian's kernel;
	# the harness downloads the kernel, nvme-cli and fio .debs into its cache
	qemu-system-x86 busybox-static cpio kmod zstd
)

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "install-deps: all ${#pkgs[@]} packages present"
else
	echo "install-deps: installing ${missing[*]}"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# fio's headers for the external ioengine (tools/fio). Debian ships no fio
# development package, so the engine is built against the source package
# of the installed fio version, unpacked and ./configure'd (fio's headers
# need the config-host.h it writes) in a cache outside the clone:
#   $NVMFD_FIO_SRC_CACHE (default /var/cache/nvmfd/fio-src)/fio-<version>
# with a symlink "current" to it; meson's -Dfio_src defaults to that link.
# A stamp file .nvmfd-fio-version holds the Debian version it was made for,
# so a changed fio package is fetched again.
fio_cache=${NVMFD_FIO_SRC_CACHE:-/var/cache/nvmfd/fio-src}
fio_ver=$(dpkg-query -W -f='${Version}' fio)
fio_dir="$fio_cache/fio-$fio_ver"
if [ -f "$fio_dir/.nvmfd-fio-version" ] && [ "$(cat "$fio_dir/.nvmfd-fio-version")" = "$fio_ver" ] &&
	[ -f "$fio_dir/src/config-host.h" ]; then
	echo "install-deps: fio $fio_ver source present in $fio_dir"
else
	src_list=/etc/apt/sources.list.d/nvmfd-deb-src.sources
	if ! apt-cache showsrc fio 2>/dev/null | grep -qx "Version: $fio_ver"; then
		if [ ! -f "$src_list" ]; then
			echo "install-deps: adding a deb-src entry for bookworm ($src_list)"
			$SUDO tee "$src_list" >/dev/null <<-'EOF'
			# Added by nvmfd scripts/install-deps.sh: Debian source packages
			# (the fio ioengine builds against the fio source package's headers).
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: bookworm bookworm-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
			EOF
		fi
		$SUDO apt-get update -qq
	fi
	echo "install-deps: fetching the fio $fio_ver source package into $fio_dir"
	$SUDO rm -rf "$fio_dir"
	$SUDO mkdir -p "$fio_dir/dl"
	(cd "$fio_dir/dl" && $SUDO apt-get source -qq --download-only "fio=$fio_ver") \
		>"$fio_cache/apt-source.log" 2>&1 || {
		echo "install-deps: apt-get source fio=$fio_ver failed:" >&2
		cat "$fio_cache/apt-source.log" >&2
		exit 1
	}
	dsc=$(ls "$fio_dir"/dl/fio_*.dsc)
	$SUDO dpkg-source --no-check -x "$dsc" "$fio_dir/src" >/dev/null
	$SUDO rm -rf "$fio_dir/dl" "$fio_dir"/fio_*.orig.tar.*
	# The same configure line as Debian's build (debian/rules) minus the GUI,
	# which only adds gfio; the engine ABI (FIO_IOOPS_VERSION, struct
	# thread_data, struct io_u up to its trailing union) does not depend on it.
	(cd "$fio_dir/src" && $SUDO ./configure --disable-native --prefix=/usr >"$fio_dir/configure.log" 2>&1) || {
		echo "install-deps: fio ./configure failed, see $fio_dir/configure.log" >&2
		exit 1
	}
	echo "$fio_ver" | $SUDO tee "$fio_dir/.nvmfd-fio-version" >/dev/null
	$SUDO ln -sfn "$fio_dir" "$fio_cache/current"
	echo "install-deps: fio $fio_ver headers ready in $fio_dir/src"
fi
