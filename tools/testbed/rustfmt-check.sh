#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rustfmt with the kernel's configuration over every crate root (rustfmt
# follows `mod` declarations, so this covers the whole module) and the cargo
# workspace.
set -euo pipefail
KBUILD=${1:?kernel build dir}
cd "$(dirname "$0")/../.."
KSRC=$(readlink -f "$KBUILD/source")
mapfile -t roots < <(git ls-files 'rust/*_main.rs' 'rust/kunit/*.rs' 'selftests/**/*_main.rs')
rustfmt --check --edition 2021 --config-path "$KSRC/.rustfmt.toml" "${roots[@]}"
cargo fmt --all --check
