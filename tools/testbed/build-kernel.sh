#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Rust-enabled guest kernel once per (source, config, toolchain) and
# prints its build directory. A finished build is reused; a half-finished one
# is resumed by make.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KDIR=$(tb_kdir)
if [[ -f $KDIR/.mrbond-complete ]]; then
	tb_log "kernel cache hit: $KDIR"
	echo "$KDIR"
	exit 0
fi

mkdir -p "$KDIR"
SRC=$KDIR/src
if [[ ! -f $SRC/Makefile ]]; then
	tb_log "extracting $(basename "$KSRC_TARBALL")"
	mkdir -p "$SRC"
	tar -xf "$KSRC_TARBALL" -C "$SRC" --strip-components=1
fi

MAKE=(make -C "$SRC" O="$KDIR/build" LLVM="$LLVM_SUFFIX" -j"$(nproc)")
mkdir -p "$KDIR/build"
cp "$KBASE_CONFIG" "$KDIR/build/.config"
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$KDIR/build" \
	"$KDIR/build/.config" "${KFRAGMENTS[@]}" >/dev/null
"${MAKE[@]}" olddefconfig >/dev/null

# merge_config reports silently dropped options only on stdout; check them here
# so that a missing dependency cannot slip through as a weaker kernel.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" "$KDIR/build/.config" || {
		tb_log "config option not applied: $line"; missing=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=[ym]" "$KDIR/build/.config" || {
			tb_log "config option should be off: $opt"; missing=1; } ;;
	esac
done < <(cat "${KFRAGMENTS[@]}")
((missing == 0)) || tb_die "kernel config does not satisfy ${KFRAGMENTS[*]}"

"${MAKE[@]}" rustavailable >/dev/null || tb_die "Rust toolchain not usable for this kernel"
tb_log "building kernel in $KDIR/build (cold build: about 9 minutes on 2 cores)"
start=$SECONDS
"${MAKE[@]}" bzImage modules >"$KDIR/build.log" 2>&1 ||
	{ tail -n 40 "$KDIR/build.log" >&2; tb_die "kernel build failed"; }
tb_log "kernel built in $((SECONDS - start)) s"
touch "$KDIR/.mrbond-complete"
echo "$KDIR"
