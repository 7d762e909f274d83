#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: two virtme-ng guests joined by MRBOND_LINKS (default 2) QEMU
# socket links; each runs `modprobe rdma_mrbond`, shows its members, state and
# the per-rail RoCE traffic counters. Installs and builds what it needs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$MRBOND_ROOT"

bash tools/testbed/install-deps.sh
KDIR=$(bash tools/testbed/build-kernel.sh)
make -s KDIR="$KDIR/build" modules >/dev/null
cargo build -q -p mrbondctl
bash tools/testbed/install-modules.sh "$KDIR/build" "$MRBOND_ROOT" >/dev/null
run_dir=$(mktemp -d /tmp/mrbond-demo-XXXXXX)
rc=0
python3 tools/testbed/testbed.py --topology t1 --links "${MRBOND_LINKS:-2}" \
	--kdir "$KDIR/build" --script tools/testbed/demo-guest.sh --timeout 900 \
	--run-dir "$run_dir" >/dev/null || rc=$?
for role in hosta hostb; do
	echo "======== $role ========"
	sed -n '/^KTAP version/,$p' "$run_dir/$role.out"
done
exit $rc
