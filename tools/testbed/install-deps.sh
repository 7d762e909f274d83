#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs everything the bench needs on a Debian 12 host, idempotently:
# Debian packages, rust-src, a pinned bindgen-cli and a pinned virtme-ng.
set -euo pipefail

BINDGEN_VERSION=0.73.2
VIRTME_NG_VERSION=1.42

DEB_PACKAGES=(
	clang-19 lld-19 llvm-19 libclang-19-dev
	linux-source-6.12 qemu-system-x86 bc flex bison libelf-dev libssl-dev
	kmod busybox-static iproute2 rdma-core ibverbs-utils rdmacm-utils
	perftest nvme-cli fio tcpdump make xz-utils cpio socat jq python3-pip
	nfs-kernel-server nfs-common rpcbind rsync patch python3-matplotlib
	prometheus linux-config-6.12 systemd udev dkms
)

log() { printf 'install-deps: %s\n' "$*" >&2; }

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$pkg")
done
if ((${#missing[@]})); then
	log "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
	log "rustup component add rust-src"
	rustup component add rust-src
fi

if ! bindgen --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "cargo install bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION"
fi

if ! vng --version 2>/dev/null | grep -q "$VIRTME_NG_VERSION"; then
	log "pip install virtme-ng==$VIRTME_NG_VERSION"
	pip3 install --quiet --disable-pip-version-check "virtme-ng==$VIRTME_NG_VERSION"
fi
# The kernel's YNL code generator (tools/net/ynl) needs these.
if ! python3 -c 'import yaml, jsonschema' 2>/dev/null; then
	log "pip install pyyaml jsonschema"
	pip3 install --quiet --disable-pip-version-check 'PyYAML==6.*' 'jsonschema==4.*'
fi
log "all dependencies present"
