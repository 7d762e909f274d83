#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# preflight.sh KDIR: whether rdma_mrbond can be built for, and loaded into,
# the kernel whose build tree (or headers package) is KDIR. Fails with one
# line saying why; `make` and DKMS (dkms.conf's PRE_BUILD) run it first, so
# that a kernel without Rust support fails here rather than deep in Kbuild.
kdir=${1:?usage: preflight.sh KDIR}
fail() {
	echo "rdma_mrbond: $*" >&2
	exit 1
}
[ -f "$kdir/Makefile" ] ||
	fail "no kernel build tree at $kdir: install the kernel's headers, or give KDIR="
conf=$kdir/include/config/auto.conf
[ -f "$conf" ] || fail "$kdir has no include/config/auto.conf: not a configured kernel tree"
grep -qx 'CONFIG_RUST=y' "$conf" ||
	fail "the kernel at $kdir has no CONFIG_RUST=y, so it cannot load Rust modules (tools/kernel/build-host-kernel.sh builds one that can)"
# Out-of-tree Rust modules compile against the kernel crates' metadata;
# 6.12's headers package (scripts/package/install-extmod-build) leaves it
# out, tools/kernel/build-host-kernel.sh puts it in.
[ -f "$kdir/rust/libkernel.rmeta" ] ||
	fail "the headers at $kdir lack the Rust metadata (rust/libkernel.rmeta): 6.12's headers package leaves it out; tools/kernel/build-host-kernel.sh builds one with it"
for opt in CONFIG_INFINIBAND CONFIG_INFINIBAND_USER_ACCESS CONFIG_DCB; do
	grep -q "^$opt=[ym]" "$conf" || fail "the kernel at $kdir lacks $opt, which rdma_mrbond needs"
done
