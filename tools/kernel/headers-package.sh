#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# headers-package.sh KBUILD OUTDIR [VERSION]
#
# The Debian headers package (linux-headers-<release>) of the built kernel
# tree KBUILD, as `make bindeb-pkg` lays it out (the tree for out-of-tree
# modules under /usr/src/linux-headers-<release>, made by the kernel's own
# scripts/package/install-extmod-build, and /lib/modules/<release>/build
# pointing at it), plus what 6.12's leaves out and rustc reads when it
# compiles an out-of-tree Rust module: the kernel crates' metadata, the
# macros crate, the target specification. build-host-kernel.sh replaces
# bindeb-pkg's headers package with this one; the DKMS test builds
# rdma_mrbond against this package made from the testbed's kernel.
# Prints the package's path.
set -euo pipefail
kbuild=$(cd "${1:?usage: $0 KBUILD OUTDIR [VERSION]}" && pwd)
out=${2:?usage: $0 KBUILD OUTDIR [VERSION]}
release=$(cat "$kbuild/include/config/kernel.release")
version=${3:-$release}
# An O= build links its source tree as `source`; an in-tree build is both.
srctree=$kbuild
[[ ! -L $kbuild/source ]] || srctree=$(readlink -f "$kbuild/source")
grep -qx 'CONFIG_RUST=y' "$kbuild/include/config/auto.conf" ||
	{ echo "$kbuild: no CONFIG_RUST=y, no Rust to package" >&2; exit 1; }
[[ -f $kbuild/rust/libkernel.rmeta ]] || { echo "$kbuild: not built (no rust/libkernel.rmeta)" >&2; exit 1; }

pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT
dest=$pkg/usr/src/linux-headers-$release
# The kernel's script, run as builddeb runs it: from the object tree, with
# the variables Kbuild exports. CC and HOSTCC only have to agree (not a
# cross build), so that it rebuilds no host program.
(cd "$kbuild" && srctree=$srctree SRCARCH=x86 CC=cc HOSTCC=cc MAKE=make \
	sh "$srctree/scripts/package/install-extmod-build" "$dest")
mkdir -p "$dest/rust" "$pkg/lib/modules/$release" "$pkg/DEBIAN"
cp "$kbuild"/rust/*.rmeta "$kbuild/rust/libmacros.so" "$dest/rust/"
# Debian's own headers packages carry it too; DKMS keeps a copy of it.
cp "$kbuild/.config" "$dest/.config"
[[ ! -f $kbuild/scripts/target.json ]] || cp "$kbuild/scripts/target.json" "$dest/scripts/"
ln -s "/usr/src/linux-headers-$release" "$pkg/lib/modules/$release/build"
cat >"$pkg/DEBIAN/control" <<EOF
Package: linux-headers-$release
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: rdma_mrbond <rdma_mrbond@localhost>
Section: kernel
Priority: optional
Description: Linux kernel headers for $release, with the Rust metadata
 for building out-of-tree Rust modules (rdma_mrbond) against $release.
EOF
mkdir -p "$out"
deb=$out/linux-headers-${release}_${version}_$(dpkg --print-architecture).deb
dpkg-deb --root-owner-group -Zgzip -b "$pkg" "$deb" >/dev/null
echo "$deb"
