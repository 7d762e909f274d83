#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: two virtme-ng guests joined by MRBOND_LINKS (default 2) QEMU
# socket links. Each loads rdma_mrbond and checks RoCE on every rail; then
# mrbond0 carries traffic between them over both rails, through a cable pull
# and back, the rails' rates printed live (tools/testbed/demo-guest.sh). At
# the end the timeline of that run is plotted. Installs and builds what it
# needs: the module as shipped, plus the traffic tool mrbond_xperf.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$MRBOND_ROOT"

bash tools/testbed/install-deps.sh
KDIR=$(bash tools/testbed/build-kernel.sh)
make -s KDIR="$KDIR/build" MRBOND_BENCH=1 modules >/dev/null
cargo build -q -p mrbondctl
bash tools/testbed/install-modules.sh "$KDIR/build" "$MRBOND_ROOT" >/dev/null
run_dir=$(mktemp -d /tmp/mrbond-demo-XXXXXX)
tb_log "booting two guests (TCG, about a minute), then the demo; logs in $run_dir"
python3 tools/testbed/testbed.py --topology t1 --links "${MRBOND_LINKS:-2}" \
	--kdir "$KDIR/build" --script tools/testbed/demo-guest.sh --timeout 900 \
	--run-dir "$run_dir" >"$run_dir/testbed.log" 2>&1 &
pid=$!
# hosta's output as it comes: the live rates are the demo.
until [[ -e $run_dir/hosta.out ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 1; done
echo "======== hosta ========"
tail -n +1 -f --pid="$pid" "$run_dir/hosta.out" 2>/dev/null | sed -u -n '/^KTAP version/,$p'
rc=0
wait "$pid" || rc=$?
echo "======== hostb ========"
sed -n '/^KTAP version/,$p' "$run_dir/hostb.out"
if [[ -s $run_dir/demo/traffic/rails.csv ]]; then
	# Debian's python3: it has python3-matplotlib (install-deps.sh).
	/usr/bin/python3 tools/bench/plot.py --timeline "$run_dir/demo/traffic" | sed 's/^plot: /timeline plot: /'
fi
tail -n 1 "$run_dir/testbed.log"
exit $rc
