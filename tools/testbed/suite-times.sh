#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# suite-times.sh LOGDIR [N]: the N (default 15) slowest KTAP results of a
# run-tests.sh run, and each guest suite's total, from the ROLE.times files
# the guests write (selftests/rdma_mrbond/lib.sh): where CI's minutes go.
set -euo pipefail
logdir=${1:?usage: $0 LOGDIR [N]}
n=${2:-15}
shopt -s nullglob
files=("$logdir"/*/host*.times)
((${#files[@]})) || { echo "no ROLE.times under $logdir" >&2; exit 1; }
for f in "${files[@]}"; do
	suite=$(basename "$(dirname "$f")")
	role=$(basename "$f" .times)
	awk -v s="$suite" -v r="$role" '{ print $2, s, r, $1 }' "$f"
done >"${TMPDIR:-/tmp}/suite-times.$$"
echo "== slowest results (seconds since the result before) =="
sort -rn "${TMPDIR:-/tmp}/suite-times.$$" | head -n "$n" |
	awk '{ printf "%8.1f  %-20s %-6s %s\n", $1, $2, $3, $4 }'
echo "== per suite and role (sum of its results) =="
awk '{ t[$2 " " $3] += $1 } END { for (k in t) printf "%8.1f  %s\n", t[k], k }' \
	"${TMPDIR:-/tmp}/suite-times.$$" | sort -rn
rm -f "${TMPDIR:-/tmp}/suite-times.$$"
