#!/usr/bin/env bash
# Configure (once) and build nvmfd. Binaries land in build/bin/.
#   scripts/build.sh            optimized build with assertions (build/)
#   scripts/build.sh asan       ASan+UBSan build (build-asan/)
#   scripts/build.sh tsan       TSan build (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
release) dir=build; opts=() ;;
asan) dir=build-asan; opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fno-sanitize-recover=undefined) ;;
tsan) dir=build-tsan; opts=(-Db_sanitize=thread -Db_lundef=false) ;;
*) echo "usage: $0 [release|asan|tsan]" >&2; exit 2 ;;
esac
# CI must build and test the fio ioengine (tools/fio): fail instead of skip.
[ "${CI:-}" = true ] && opts+=(-Dfio=enabled)
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "${opts[@]}" >/dev/null
fi
ninja -C "$dir" >/dev/null || ninja -C "$dir"
echo "build: $dir ok"
