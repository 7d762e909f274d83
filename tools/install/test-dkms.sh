#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-dkms.sh KBUILD OUT: rdma_mrbond through DKMS as an operator would,
# against the headers package of the kernel built in KBUILD
# (tools/kernel/headers-package.sh, unpacked under OUT/root, not installed
# on this host): `dkms add`, then `dkms build`, which runs the preflight
# and make, from a copy of this tree, in a scratch DKMS tree under OUT (the
# host's /var/lib/dkms stays untouched). `dkms install` runs in a guest
# booted on that kernel (the T0 install suite's install_modprobe_after_dkms,
# given OUT as MRBOND_DKMS): its depmod needs the kernel's own
# /lib/modules/<release>, which this host does not have.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kbuild=${1:?usage: $0 KBUILD OUT}
out=${2:?usage: $0 KBUILD OUT}
version=$(make -s -C "$root" version)
kver=$(cat "$kbuild/include/config/kernel.release")
rm -rf "$out" && mkdir -p "$out/src/rdma_mrbond-$version" "$out/dkms" "$out/lib" "$out/root"
deb=$(bash "$root/tools/kernel/headers-package.sh" "$kbuild" "$out")
dpkg-deb -x "$deb" "$out/root"
headers=$out/root/usr/src/linux-headers-$kver
echo "$deb, unpacked in $out/root"
# The tree as a release tarball would carry it: what git tracks.
git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$out/src/rdma_mrbond-$version")
dkms=(dkms --dkmstree "$out/dkms" --sourcetree "$out/src" --installtree "$out/lib"
	-k "$kver" --kernelsourcedir "$headers")
"${dkms[@]}" add "rdma_mrbond/$version"
"${dkms[@]}" build "rdma_mrbond/$version" ||
	{ cat "$out/dkms/rdma_mrbond/$version/build/make.log" 2>/dev/null | tail -n 30; exit 1; }
"${dkms[@]}" status
ko=$(find "$out/dkms/rdma_mrbond/$version/$kver" -name 'rdma_mrbond.ko*' | head -n 1)
[[ -n $ko ]] || { echo "dkms built no rdma_mrbond.ko for $kver"; exit 1; }
got=$(modinfo -F version "$ko")
[[ $got == "$version" ]] || { echo "$ko: version '$got', dkms.conf says $version"; exit 1; }
echo "dkms built rdma_mrbond $version for $kver against $(basename "$deb"): $ko"
