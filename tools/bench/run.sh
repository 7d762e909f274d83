#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark suite (issue 14): boots the T1 guests once per rail count,
# runs tools/bench/guest.sh in them, and writes results.json, report.md and
# the plots (PNG and SVG) into an output folder. Installs and builds what it
# needs, as the test command does, with the module built as shipped (no
# fault-injection points) plus the traffic tool mrbond_xperf.
#
#   bash tools/bench/run.sh [--quick] [--out DIR] [--links "2 4"] [--rate 20mbit]
#
# --quick: every case once, briefly, at 2 rails (what CI runs); the figures
# are then for checking the pipeline, not for citing.
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"
cd "$MRBOND_ROOT"

quick=0 out="" links="2 4" rate=20mbit
while (($#)); do
	case $1 in
	--quick) quick=1 links=2 ;;
	--out) out=$2; shift ;;
	--links) links=$2; shift ;;
	--rate) rate=$2; shift ;;
	-h | --help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) tb_die "unknown argument $1 (see --help)" ;;
	esac
	shift
done
out=${out:-$MRBOND_ROOT/bench-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

bash tools/testbed/install-deps.sh
KDIR=$(bash tools/testbed/build-kernel.sh)
tb_log "building the module as shipped, with mrbond_xperf"
make -s KDIR="$KDIR/build" MRBOND_BENCH=1 modules >/dev/null
cargo build -q -p mrbondctl
bash tools/testbed/install-modules.sh "$KDIR/build" "$MRBOND_ROOT" >/dev/null

# Progress from the guest's "bench: plan N runs" and "bench: run K: CASE
# VARIANT" lines, with an estimate of what is left from the mean time per
# run so far; K counts raw and bond runs alike.
progress() {  # progress RUN_DIR LINKS PID
	local log=$1/hosta.out t0=$SECONDS last="" n_done=0 total line eta
	while kill -0 "$3" 2>/dev/null; do
		sleep 5
		[[ -e $log ]] || continue
		total=$(sed -n 's/.*bench: plan \([0-9]*\) runs.*/\1/p' "$log" | head -n1)
		line=$(grep -o 'bench: run [0-9]*: .*' "$log" | tail -n1 || true)
		if [[ -n $line && -n $total && $line != "$last" ]]; then
			last=$line
			n_done=$(grep -c 'bench: run [0-9]*: ' "$log")
			eta=$(((SECONDS - t0) * (total - n_done + 1) / n_done))
			tb_log "$2 rails: run $n_done of $total (${line##*: }), about $((eta / 60 + 1)) min left"
		fi
	done
}

run_dirs=()
rc=0
for n in $links; do
	run_dir=$out/boot-${n}rails
	rm -rf "$run_dir"
	tb_log "booting the T1 guests with $n rails (TCG; each boot takes a few minutes)"
	MRBOND_BENCH_QUICK=$quick MRBOND_BENCH_RATE=$rate \
		python3 tools/testbed/testbed.py --topology t1 --links "$n" --kdir "$KDIR/build" \
		--script tools/bench/guest.sh --timeout 5400 --run-dir "$run_dir" \
		>"$out/boot-${n}rails.log" 2>&1 &
	pid=$!
	progress "$run_dir" "$n" "$pid"
	wait "$pid" || { rc=1; tb_log "$n rails: some runs failed (see $run_dir/hosta.out)"; }
	run_dirs+=("$run_dir")
done

# Case 5's first half: the placement decision itself, on the host.
bench_args=()
((quick)) && bench_args=(--quick)
cargo run -q --release -p mrbond-policy-host --bin mrbond-placement-bench -- "${bench_args[@]}" \
	>"$out/placement-bench.txt" || rc=1
check=()
((quick)) && check=(--check)
python3 tools/bench/report.py "${check[@]}" "$out" "${run_dirs[@]}" || rc=1
# Debian's python3: it has python3-matplotlib (install-deps.sh).
/usr/bin/python3 tools/bench/plot.py "$out" || rc=1
tb_log "results: $out/results.json, $out/report.md"
exit $rc
