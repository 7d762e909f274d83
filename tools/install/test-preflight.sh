#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-preflight.sh KDIR: preflight.sh passes on KDIR (a Rust-enabled build
# tree) and refuses, with its one-line reason, trees that lack each thing
# it checks: made from KDIR's own files with one thing taken out.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
kdir=${1:?usage: $0 KDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # expect NAME TREE TEXT: preflight on TREE fails saying TEXT
	local out
	if out=$(sh "$here/preflight.sh" "$2" 2>&1); then
		echo "$1: accepted"; fails=$((fails + 1))
	elif [[ $out != *"$3"* ]]; then
		echo "$1: want '$3', got: $out"; fails=$((fails + 1))
	else
		echo "$1: refused: $out"
	fi
}
out=$(sh "$here/preflight.sh" "$kdir" 2>&1) || { echo "$kdir refused: $out"; exit 1; }
echo "$kdir: accepted"
# A tree that is KDIR's Makefile, configuration and rust/ metadata.
fake() { # fake NAME: a copy of what preflight reads
	mkdir -p "$tmp/$1/include/config" "$tmp/$1/rust"
	cp "$kdir/Makefile" "$tmp/$1/"
	cp "$kdir/include/config/auto.conf" "$tmp/$1/include/config/"
	touch "$tmp/$1/rust/libkernel.rmeta"
}
expect no-tree "$tmp/none" "no kernel build tree"
fake no-rust && sed -i '/^CONFIG_RUST=/d' "$tmp/no-rust/include/config/auto.conf"
expect no-rust "$tmp/no-rust" "has no CONFIG_RUST=y"
fake no-rmeta && rm "$tmp/no-rmeta/rust/libkernel.rmeta"
expect no-rmeta "$tmp/no-rmeta" "lack the Rust metadata"
fake no-ib && sed -i '/^CONFIG_INFINIBAND=/d' "$tmp/no-ib/include/config/auto.conf"
expect no-infiniband "$tmp/no-ib" "lacks CONFIG_INFINIBAND"
fake ok
out=$(sh "$here/preflight.sh" "$tmp/ok" 2>&1) || { echo "the unaltered copy refused: $out"; fails=$((fails + 1)); }
((fails == 0))
