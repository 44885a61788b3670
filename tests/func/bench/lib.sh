# Sourced by the nvmf-bench test scripts: a temporary directory removed at
# exit, ok/bad reporting (bad sets fail=1, the script exits $fail), and col
# to read a cells.csv column by its header name.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# col FILE CELL NAME: column NAME of CELL's row in cells.csv FILE
col() {
	awk -F, -v cell="$2" -v name="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		$2 == cell { print $c }' "$1"
}
