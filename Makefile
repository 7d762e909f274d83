# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rdma_mrbond.ko (`make help`). KDIR defaults to the
# running kernel's build tree; the testbed passes its guest kernel's.

KDIR ?= /lib/modules/$(shell uname -r)/build
LLVM ?= -19
# The compiler and linker named outright: DKMS appends CC=clang LD=ld.lld
# for a clang-built kernel, which Debian's versioned LLVM does not install.
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM) MRBOND_VERSION=$(MRBOND_VERSION) \
	$(if $(filter -%,$(LLVM)),CC=clang$(LLVM) LD=ld.lld$(LLVM))
# The version's one place is dkms.conf.
MRBOND_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)

all: modules

help:
	@echo 'rdma_mrbond, out of tree (KDIR=$(KDIR)):'
	@echo '  make                     build rdma_mrbond.ko for the kernel at KDIR'
	@echo '  make modules_install     install it under /lib/modules/<release>/updates, run depmod'
	@echo '                           (INSTALL_MOD_PATH=DIR installs below DIR instead)'
	@echo '  make MRBOND_FAULT_INJECT=1   the test build: fault-injection points, and the test'
	@echo '                           modules (KUnit suite, mrbond_kperf, the DCB and DMA test doubles)'
	@echo '  make clippy              the build with the kernel'"'"'s Clippy lints'
	@echo '  make check               host tests of the policy core (cargo test)'
	@echo '  make guest-install       install into the testbed guest'"'"'s module tree'
	@echo '  make install-tools       make -C tools install: mrbondctl, mrbond-exporter, the systemd'
	@echo '                           units and the udev rule (PREFIX=, DESTDIR=); make version: $(MRBOND_VERSION)'
	@echo '  make clean'
	@echo 'Testbed: bash tools/testbed/demo.sh, bash tools/testbed/run-tests.sh (README).'

# A kernel that cannot load a Rust module fails here, with the reason,
# rather than deep inside Kbuild.
preflight:
	@sh tools/install/preflight.sh $(KDIR)

modules: preflight $(if $(filter 1,$(MRBOND_FAULT_INJECT)),rxe-dma-sources)
	$(KMAKE) modules

# The test build's DMA double is rdma_rxe's sources, patched.
rxe-dma-sources: preflight
	bash selftests/rdma_mrbond/rxe_dma/prepare.sh $(KDIR)

modules_install: modules
	$(KMAKE) modules_install

# Kbuild only lints what it recompiles: force every Rust crate root.
clippy: preflight $(if $(filter 1,$(MRBOND_FAULT_INJECT)),rxe-dma-sources)
	touch rust/*_main.rs rust/kunit/*.rs
	$(KMAKE) CLIPPY=1 modules

guest-install: modules
	bash tools/testbed/install-modules.sh $(KDIR) $(CURDIR)

check:
	cargo test --workspace

version:
	@echo $(MRBOND_VERSION)

# The operator's side: the CLI, the exporter, and what brings bonds back
# at boot (tools/Makefile).
install-tools:
	$(MAKE) -C tools install

.PHONY: all help preflight modules rxe-dma-sources modules_install clippy guest-install check \
	version install-tools clean
