#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Makes the sources of rdma_rxe_dma (Documentation/dev-tools/
# rdma_mrbond-testbed.rst, "The DMA test double"): rdma_rxe's
# from the tree of the kernel at KDIR, patched with rdma_rxe_dma.patch, in
# src/ here. Done again only when the kernel source or the patch changed, so
# that Kbuild does not rebuild them each time.
#
#   prepare.sh KDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KDIR=${1:?kernel build dir}

rxe=$KDIR/source/drivers/infiniband/sw/rxe
[[ -d $rxe ]] || rxe=$KDIR/drivers/infiniband/sw/rxe
if [[ ! -f $rxe/rxe.c ]]; then
	echo "rdma_rxe_dma: no rdma_rxe sources in the kernel tree at $KDIR" >&2
	exit 1
fi
stamp="$(readlink -f "$rxe") $(sha256sum "$HERE/rdma_rxe_dma.patch" | cut -d' ' -f1)"
if [[ -f $HERE/src/.stamp && $(<"$HERE/src/.stamp") == "$stamp" ]]; then
	exit 0
fi
rm -rf "$HERE/src.new"
mkdir -p "$HERE/src.new"
cp "$rxe"/*.[ch] "$HERE/src.new/"
patch -d "$HERE/src.new" -p5 -s --no-backup-if-mismatch <"$HERE/rdma_rxe_dma.patch"
echo "$stamp" >"$HERE/src.new/.stamp"
rm -rf "$HERE/src"
mv "$HERE/src.new" "$HERE/src"
