#!/usr/bin/env bash
# Run the whole nvmfd test suite and print one summary line
# "tests: N passed, N failed, N skipped".
#   scripts/test.sh                 unit, func, hostile, interop under ASan+UBSan
#   NVMFD_TEST_BUILD=tsan scripts/test.sh   same under TSan
#   NVMFD_TEST_SUITES="unit func" scripts/test.sh   a subset
#   NVMFD_TEST_SUITES=scale scripts/test.sh   the scale/storm/soak runs
#     (tests/scale, minutes each; never part of the default suites)
# Interop (QEMU + the Linux kernel host) is skipped with exit 77 when the
# shared harness is not found; set NVMFD_INTEROP=0 to leave it out.
set -uo pipefail
cd "$(dirname "$0")/.."
kind=${NVMFD_TEST_BUILD:-asan}
case "$kind" in
asan) dir=build-asan ;;
tsan) dir=build-tsan ;;
release) dir=build ;;
*) echo "NVMFD_TEST_BUILD must be asan, tsan or release" >&2; exit 2 ;;
esac
bash scripts/build.sh release || exit 1
[ "$kind" = release ] || bash scripts/build.sh "$kind" || exit 1

suites=${NVMFD_TEST_SUITES:-"unit func hostile interop"}
[ "${NVMFD_INTEROP:-1}" = 0 ] && suites=${suites//interop/}
args=()
for s in $suites; do args+=(--suite "$s"); done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export NVMFD_BIN=$PWD/build/bin
meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}"
rc=$?

python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
except FileNotFoundError:
    pass
print(f"tests: {p} passed, {f} failed, {s} skipped")
PY
exit $rc
