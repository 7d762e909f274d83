#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerates the netlink code from Documentation/netlink/specs/rdma_mrbond.yaml
# with the kernel's own generator (tools/net/ynl/ynl-gen-c.py), as in-tree
# families do: the UAPI header and the kernel policy/ops tables.
#   tools/ynl-regen.sh KSRC          rewrite the generated files
#   tools/ynl-regen.sh KSRC --check  fail if they are stale
set -euo pipefail
KSRC=${1:?kernel source dir}
MODE=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GEN=$KSRC/tools/net/ynl/ynl-gen-c.py

# The generator finds the schema next to the spec's directory and names the
# spec relative to the first parent holding a MAINTAINERS file: stage a tree
# shaped like the kernel's.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/Documentation/netlink/specs"
touch "$stage/MAINTAINERS"
cp "$KSRC/Documentation/netlink/genetlink.yaml" "$stage/Documentation/netlink/"
cp "$ROOT/Documentation/netlink/specs/rdma_mrbond.yaml" "$stage/Documentation/netlink/specs/"
spec=$stage/Documentation/netlink/specs/rdma_mrbond.yaml

generate() { # generate OUT ARGS...
	local out=$1
	shift
	local gen=$stage/${out##*/}
	# The source includes its header by the output file's name.
	timeout 60 python3 "$GEN" --spec "$spec" "$@" -o "$gen"
	if [[ $MODE == --check ]]; then
		diff -u "$ROOT/$out" "$gen" || { echo "$out is stale: run $0 KSRC" >&2; return 1; }
	else
		cp "$gen" "$ROOT/$out"
	fi
}

generate include/uapi/rdma_mrbond.h --mode uapi --header
generate rust/mrbond_nl_gen.h --mode kernel --header
generate rust/mrbond_nl_gen.c --mode kernel --source
