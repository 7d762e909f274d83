# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rdma_mrbond.ko against the cached Rust-enabled guest
# kernel (tools/testbed/build-kernel.sh builds it on first use).
#
#   make              build rdma_mrbond.ko (and the KUnit module)
#   make guest-install install the modules into the guest's module tree (depmod)
#   make check        host tests of the policy core (cargo test)
#   make clippy       build the module with the kernel's Clippy lints
#   make clean

KDIR ?= $(shell bash tools/testbed/build-kernel.sh)/build
LLVM ?= -19
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM)

all: modules

modules:
	$(KMAKE) modules

# Kbuild only lints what it recompiles: force every Rust crate root.
clippy:
	touch rust/*_main.rs rust/kunit/*.rs
	$(KMAKE) CLIPPY=1 modules

guest-install: modules
	bash tools/testbed/install-modules.sh $(KDIR) $(CURDIR)

check:
	cargo test --workspace

clean:
	$(KMAKE) clean

.PHONY: all modules clippy guest-install check clean
