#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel coding style of every C file and header, as checkpatch sees it.
set -euo pipefail
KSRC=${1:?kernel source dir}
cd "$(dirname "$0")/../.."
mapfile -t files < <(git ls-files '*.c' '*.h')
((${#files[@]})) || exit 0
"$KSRC/scripts/checkpatch.pl" --no-tree --terse --show-types -f "${files[@]}"
