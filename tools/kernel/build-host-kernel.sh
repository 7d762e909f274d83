#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-host-kernel.sh [--config FILE] [--src DIR] [--out DIR]
#                       [--localmodconfig | --modules FILE] [--config-only]
#
# A distribution kernel that can load rdma_mrbond: the running kernel's
# configuration (or FILE, e.g. Debian's linux-config-6.12) with the few
# changes Rust modules need, built into installable Debian packages (image
# and headers) whose headers carry what out-of-tree Rust modules compile
# against. Debian's 6.12 kernels cannot load a Rust module: CONFIG_RUST is
# off, and in 6.12 it depends on !MODVERSIONS, which Debian turns on.
#
#   --config FILE   the configuration to start from [/boot/config-$(uname -r)]
#   --src DIR       a 6.12 kernel source tree [/usr/src/linux-source-6.12.tar.xz
#                   extracted next to --out]
#   --out DIR       the build directory and the packages' [./host-kernel]
#   --localmodconfig  keep only the modules loaded now (make localmodconfig),
#                   and the RDMA stack: a build of an hour, not a day, on
#                   2 cores, for this host's hardware only
#   --modules FILE  the same with the modules named in FILE (lsmod's output,
#                   or one name per line) instead of those loaded now
#   --config-only   stop after the configuration: print what changed, build
#                   nothing (CI runs this; the full build takes hours)
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

config=/boot/config-$(uname -r) src="" out=$PWD/host-kernel config_only=0 modules=""
while (($#)); do
	case $1 in
	--config) config=$2; shift 2 ;;
	--src) src=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--config-only) config_only=1; shift ;;
	--localmodconfig) modules=-; shift ;;
	--modules) modules=$2; shift 2 ;;
	*) echo "usage: $0 [--config FILE] [--src DIR] [--out DIR] [--localmodconfig | --modules FILE] [--config-only]" >&2; exit 2 ;;
	esac
done
[[ -z $modules || $modules == - || -r $modules ]] || tb_die "no module list at $modules"
[[ -r $config ]] || tb_die "no configuration at $config (--config FILE; Debian's: apt install linux-config-6.12)"
if [[ -z $src ]]; then
	src=$out.src
	if [[ ! -f $src/Makefile ]]; then
		[[ -r $KSRC_TARBALL ]] || tb_die "no kernel source: --src DIR, or apt install linux-source-6.12"
		tb_log "extracting $KSRC_TARBALL into $src"
		mkdir -p "$src"
		tar -xf "$KSRC_TARBALL" -C "$src" --strip-components=1
	fi
fi
[[ -f $src/Makefile ]] || tb_die "no kernel source at $src"
version=$(make -s -C "$src" kernelversion)
[[ $version == 6.12.* ]] || tb_die "kernel source $version: rdma_mrbond targets 6.12"

mkdir -p "$out"
MAKE=(make -C "$src" O="$out" LLVM="$LLVM_SUFFIX")
case $config in
*.xz) xz -dc "$config" >"$out/.config" ;;
*) cp "$config" "$out/.config" ;;
esac
cp "$out/.config" "$out/config.orig"
"${MAKE[@]}" rustavailable >/dev/null || tb_die "the Rust toolchain is not usable for $version (make rustavailable)"
# What Rust modules need in 6.12 (init/Kconfig, config RUST), and what
# rdma_mrbond needs beside them (tools/install/preflight.sh checks the same).
# The kernel is built with clang, as Rust's bindgen wants; a module must
# then be built with the same LLVM (the Makefile's LLVM=).
rust_capable() {
	"$src/scripts/config" --file "$out/.config" \
		--disable MODVERSIONS \
		--disable RANDSTRUCT_FULL --disable RANDSTRUCT_PERFORMANCE --enable RANDSTRUCT_NONE \
		--enable RUST \
		--module INFINIBAND --module INFINIBAND_USER_ACCESS --enable INFINIBAND_ADDR_TRANS \
		--enable DCB --module RDMA_RXE \
		--set-str LOCALVERSION "-mrbond" --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
	"${MAKE[@]}" olddefconfig >/dev/null
}
rust_capable
if [[ -n $modules ]]; then
	# The RDMA stack stays whatever is loaded now: the bond, its members'
	# drivers (mlx5, rxe) and the ULPs it carries load on demand later.
	{
		if [[ $modules == - ]]; then lsmod; else cat "$modules"; fi
		printf '%s\n' ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe \
			mlx5_core mlx5_ib bonding nvme_rdma nvmet_rdma rpcrdma
	} >"$out/localmod.list" || tb_die "no module list (lsmod failed; --modules FILE)"
	# No new symbol is left to ask about: olddefconfig ran just above.
	"${MAKE[@]}" LSMOD="$out/localmod.list" localmodconfig </dev/null >/dev/null
	rust_capable
	for want in MLX5_INFINIBAND RDMA_RXE BONDING NVME_RDMA NVME_TARGET_RDMA; do
		grep -Eqx "CONFIG_$want=[ym]" "$out/.config" ||
			tb_die "localmodconfig dropped CONFIG_$want, which the RDMA stack needs"
	done
	echo "localmodconfig: $(grep -c '=m$' "$out/.config") modules kept" \
		"(of $(grep -c '=m$' "$out/config.orig") in $config)"
fi
missing=()
for want in RUST RANDSTRUCT_NONE DCB; do
	grep -qx "CONFIG_$want=y" "$out/.config" || missing+=("CONFIG_$want=y")
done
for want in INFINIBAND INFINIBAND_USER_ACCESS; do
	grep -Eqx "CONFIG_$want=[ym]" "$out/.config" || missing+=("CONFIG_$want=m")
done
grep -q '^CONFIG_MODVERSIONS=y' "$out/.config" && missing+=("# CONFIG_MODVERSIONS is not set")
if ((${#missing[@]})); then
	# RUST's other dependencies (BTF needs pahole >= 1.24, CFI, ...) show here.
	tb_die "olddefconfig did not keep: ${missing[*]} (see init/Kconfig, config RUST)"
fi
grep -q '^CONFIG_PAHOLE_VERSION=0$' "$out/.config" &&
	echo "note: no pahole here, so BTF (and what needs it) is off; apt install dwarves keeps it"
echo "configuration changes against $config:"
"$src/scripts/diffconfig" "$out/config.orig" "$out/.config" | sed 's/^/  /'
# bindeb-pkg's build dependencies (6.12's scripts/package/mkdebian), which
# dpkg-buildpackage checks only after the build has started: said here, and
# by --config-only too, before the hours begin.
build_deps=(debhelper bc bison cpio flex kmod libelf-dev libssl-dev rsync dpkg-dev)
missing=()
for pkg in "${build_deps[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
done
if ((config_only)); then
	((${#missing[@]} == 0)) || echo "note: the package build needs: apt install ${missing[*]}"
	echo "configured in $out (--config-only: nothing built)"
	exit 0
fi
((${#missing[@]} == 0)) || tb_die "the package build needs: apt install ${missing[*]}"

tb_log "building Debian packages of $version in $out (hours on 2 cores)"
"${MAKE[@]}" -j"$(nproc)" bindeb-pkg
# 6.12's headers package carries no Rust: the one headers-package.sh makes
# from the same tree (and the same kernel script) does, and replaces it.
image=$(ls "$out"/../linux-image-*-mrbond_*.deb | grep -v -- -dbg_ | tail -n 1)
headers=$(bash "$(dirname "$0")/headers-package.sh" "$out" "$out/.." "$(dpkg-deb -f "$image" Version)")
echo "packages (install both, then reboot into $version-mrbond):"
echo "$image" "$headers"
