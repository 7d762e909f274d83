#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The selftests are a kselftest collection: installing it with the kernel's
# lib.mk must bring every suite that run-tests.sh runs, the files they
# source, and the settings and config; and no suite may be left out of
# TEST_PROGS.
#   tools/testbed/kselftest-check.sh KSRC
set -euo pipefail
KSRC=$(readlink -f "${1:?kernel source dir}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$ROOT/selftests/rdma_mrbond
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

make -s -C "$DIR" KSRC="$KSRC" install INSTALL_PATH="$out"
rc=0
emitted=$(make -s -C "$DIR" KSRC="$KSRC" emit_tests COLLECTION=rdma_mrbond)
# Every suite the test command names (guest_suite, guest_suite_pair).
mapfile -t run < <(grep -o 'selftests/rdma_mrbond/[a-z0-9_]*\.sh' "$ROOT/tools/testbed/run-tests.sh" |
	xargs -n1 basename | sort -u)
for suite in "${run[@]}"; do
	[[ -x $out/$suite ]] || { echo "$suite: run by CI, not installed as a TEST_PROGS"; rc=1; }
	grep -qx "rdma_mrbond:$suite" <<<"$emitted" || { echo "$suite: not in emit_tests"; rc=1; }
done
for f in "$DIR"/t*.sh; do
	[[ -e $out/$(basename "$f") ]] || { echo "$(basename "$f"): a suite not in TEST_PROGS"; rc=1; }
done
for f in lib.sh settings config boot/mrbond0.conf; do
	[[ -e $out/$f ]] || { echo "$f: not installed"; rc=1; }
done
((rc == 0)) && echo "kselftest collection: ${#run[@]} suites, lib.sh, settings and config installed"
exit $rc
