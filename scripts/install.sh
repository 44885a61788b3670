#!/usr/bin/env bash
# Build an optimized nvmfd and install it: binaries, man pages, the systemd
# unit and the docs.
#   scripts/install.sh                 into /usr/local (needs root)
#   PREFIX=/opt/nvmfd scripts/install.sh
#   DESTDIR=/tmp/stage scripts/install.sh   staged (for packaging)
# Then: copy an nvmetcli JSON config to /etc/nvmfd/nvmfd.json and
# 'systemctl daemon-reload && systemctl enable --now nvmfd'.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${PREFIX:-/usr/local}
dir=build-install
if [ ! -f "$dir/build.ninja" ]; then
	# the project default build type (-O2 -g, assertions on): what the tests ran
	meson setup "$dir" --prefix "$prefix" -Dtests=false >/dev/null
else
	meson configure "$dir" --prefix "$prefix" >/dev/null
fi
ninja -C "$dir" >/dev/null
meson install -C "$dir" ${DESTDIR:+--destdir "$DESTDIR"}
echo "install: nvmfd installed under ${DESTDIR:-}$prefix"
