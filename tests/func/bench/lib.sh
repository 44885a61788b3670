# Sourced by the nvmf-bench test scripts: a temporary directory removed at
# exit, ok/bad reporting (bad sets fail=1, the script exits $fail), and col
# to read a cells.csv column by its header name.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# col FILE CELL NAME: column NAME of CELL's row in cells.csv FILE
# (quoted fields as RFC 4180 has them: a series "hdr,data" is one field)
col() {
	python3 - "$@" <<'PY'
import csv, sys
rows = csv.reader(open(sys.argv[1], newline=""))
head = next(rows)
for r in rows:
    if r[1] == sys.argv[2] and sys.argv[3] in head:
        print(r[head.index(sys.argv[3])])
PY
}
