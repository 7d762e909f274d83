#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs our out-of-tree modules into the module tree virtme-ng hands the
# guest (<kdir>/.virtme_mods/lib/modules/0.0.0), so that the guest loads them
# with a plain `modprobe rdma_mrbond`.
set -euo pipefail
KBUILD=${1:?kernel build dir}
MDIR=${2:?module source dir}

cd "$KBUILD"
MODROOT=.virtme_mods/lib/modules/0.0.0
# virtme-ng rebuilds its tree when modules.order is newer than modules.dep;
# prepare it now so that it does not later drop the modules added below.
if [[ ! -f $MODROOT/modules.dep ]] || [[ modules.order -nt $MODROOT/modules.dep ]]; then
	virtme-prep-kdir-mods
fi
mkdir -p "$MODROOT/extra"
rm -f "$MODROOT"/extra/*.ko
for ko in "$MDIR"/*.ko; do
	install -m 0644 "$ko" "$MODROOT/extra/"
done
depmod -ae -F System.map -b .virtme_mods 0.0.0
ls "$MODROOT/extra"
