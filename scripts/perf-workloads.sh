# shellcheck shell=bash
# Sourced by scripts/ab-perf.sh, scripts/perf-profile.sh and
# scripts/syscall-ab.sh: the workloads of doc/perf.md as nvmf-perf
# arguments, and perf_cleanup: the exit cleanup of a target ($tpid,
# SIGTERM) and an initiator ($ppid, SIGINT) the caller started (the
# caller sets `trap perf_cleanup EXIT` when it wants it).
#   rr-qd1      4K randread QD1      rr-qd32     4K randread QD32
#   rd128k-qd16 128K read QD16       rw-qd32     4K randwrite QD32
wl_args() {
	case $1 in
	rr-qd1) echo "-w randread -o 4096 -q 1" ;;
	rr-qd32) echo "-w randread -o 4096 -q 32" ;;
	rd128k-qd16) echo "-w read -o 131072 -q 16" ;;
	rw-qd32) echo "-w randwrite -o 4096 -q 32" ;;
	*) echo "unknown workload $1" >&2; return 1 ;;
	esac
}

tpid= ppid=
perf_cleanup() {
	[ -n "$ppid" ] && kill -INT "$ppid" 2>/dev/null || true
	[ -n "$tpid" ] && kill -TERM "$tpid" 2>/dev/null || true
	wait 2>/dev/null || true
}
