#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kperf bond/member ratios of two builds of the module, measured side
# by side: RUNS T0 guests per build (default 5), the builds alternating,
# each guest running the data-path suite's two benchmarks (RDMA WRITE
# bandwidth, 64 B SEND latency p50/p99, each already the median of three
# alternating member/bond runs). Prints every run's ratios, then the median
# of each build's. Not in CI: about two minutes a guest under TCG.
#   tools/testbed/perf-compare.sh KBUILD BEFORE_TREE AFTER_TREE [RUNS]
# A tree is a checkout with its modules built against KBUILD (`make KDIR=...
# MRBOND_FAULT_INJECT=1 modules`) and target/debug/mrbondctl.
set -euo pipefail
KBUILD=$(readlink -f "${1:?kernel build dir}")
BEFORE=$(readlink -f "${2:?tree before}")
AFTER=$(readlink -f "${3:?tree after}")
RUNS=${4:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d /tmp/perf-compare.XXXXXX)

# The suite with only its setup, the two benchmarks and the unload.
subset() {
	local suite=$1/selftests/rdma_mrbond/t0_datapath.sh
	sed -E '/^run_test /{/^run_test (bw_bond_vs_member|lat_bond_vs_member|unload) /!d}' "$suite" |
		sed -E 's/^ktap_header [0-9]+$/ktap_header 3/' >"$1/selftests/rdma_mrbond/.perf_subset.sh"
	chmod +x "$1/selftests/rdma_mrbond/.perf_subset.sh"
}

ratios() { # ratios HOSTA_OUT: "write p50 p99"
	local w p50 p99
	w=$(sed -n 's/^# RDMA WRITE.*bond\/member \([0-9.]*\).*/\1/p' "$1")
	p50=$(sed -n 's/^# 64 B SEND ping-pong p50.*bond\/member \([0-9.]*\).*/\1/p' "$1")
	p99=$(sed -n 's/^# 64 B SEND ping-pong p99.*bond\/member \([0-9.]*\).*/\1/p' "$1")
	[[ -n $w && -n $p50 && -n $p99 ]] || return 1
	echo "$w $p50 $p99"
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

subset "$BEFORE"
subset "$AFTER"
for ((r = 1; r <= RUNS; r++)); do
	for side in before after; do
		tree=$BEFORE
		[[ $side == after ]] && tree=$AFTER
		bash "$ROOT/tools/testbed/install-modules.sh" "$KBUILD" "$tree" >/dev/null
		(cd "$tree" && python3 tools/testbed/testbed.py --topology t0 --cpus 2 --kdir "$KBUILD" \
			--script selftests/rdma_mrbond/.perf_subset.sh --timeout 900 \
			--run-dir "$OUT/$side-$r") >"$OUT/$side-$r.log" 2>&1 || true
		if line=$(ratios "$OUT/$side-$r/hosta.out"); then
			echo "$line" >>"$OUT/$side"
			echo "run $r $side: write $(cut -d' ' -f1 <<<"$line") p50 $(cut -d' ' -f2 <<<"$line") p99 $(cut -d' ' -f3 <<<"$line")"
		else
			echo "run $r $side: no ratios (see $OUT/$side-$r)"
		fi
	done
done
for side in before after; do
	[[ -s $OUT/$side ]] || { echo "$side: no run gave ratios"; continue; }
	echo "$side (median of $(wc -l <"$OUT/$side")): write $(cut -d' ' -f1 "$OUT/$side" | median)" \
		"p50 $(cut -d' ' -f2 "$OUT/$side" | median) p99 $(cut -d' ' -f3 "$OUT/$side" | median)"
done
echo "logs in $OUT"
