# SPDX-License-Identifier: GPL-2.0
# Shared paths and helpers for the testbed scripts (sourced, not run).

MRBOND_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Build products live outside the repository so that a fresh clone reuses them.
# Not under /var/cache, /var/tmp or /run: virtme-ng mounts tmpfs there in the
# guest, which would hide the module tree it links to.
MRBOND_CACHE=${MRBOND_CACHE:-/var/lib/rdma_mrbond}
LLVM_SUFFIX=${LLVM_SUFFIX:--19}
KSRC_TARBALL=${KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
KBASE_CONFIG=$MRBOND_ROOT/tools/testbed/kernel/base.config
KFRAGMENT=$MRBOND_ROOT/selftests/rdma_mrbond/config
# MRBOND_KERNEL_DEBUG=1 adds lockdep, context checks and kmemleak
# (config.debug); MRBOND_KERNEL_DEBUG=kasan adds KASAN to them (config.kasan).
KFRAGMENTS=("$KFRAGMENT")
case ${MRBOND_KERNEL_DEBUG:-0} in
1) KFRAGMENTS+=("$MRBOND_ROOT/selftests/rdma_mrbond/config.debug") ;;
kasan) KFRAGMENTS+=("$MRBOND_ROOT/selftests/rdma_mrbond/config.debug"
	"$MRBOND_ROOT/selftests/rdma_mrbond/config.kasan") ;;
esac

tb_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
tb_die() { tb_log "FATAL: $*"; exit 1; }

# The kernel build directory is named by everything that changes its output:
# the source package, our two config inputs and the Rust/LLVM toolchain.
tb_kernel_key() {
	{
		dpkg-query -W -f='${Version}\n' linux-source-6.12
		cat "$KBASE_CONFIG" "${KFRAGMENTS[@]}"
		rustc --version
		bindgen --version
		"clang$LLVM_SUFFIX" --version | head -n1
	} | sha256sum | cut -c1-16
}

tb_kdir() { echo "$MRBOND_CACHE/kernel-$(tb_kernel_key)"; }
