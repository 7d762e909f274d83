#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-unit.sh: systemd's own check of rdma-mrbond@.service, in a staged
# root (the host's units, the unit, stand-ins for the commands it runs):
# any message fails it, since systemd-analyze verify reports a bad setting
# and still exits 0.
set -euo pipefail
cd "$(dirname "$0")"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/sbin" "$root/lib/systemd"
cp -a /lib/systemd/system "$root/lib/systemd/"
cp 'rdma-mrbond@.service' "$root/lib/systemd/system/"
printf '#!/bin/sh\n' >"$root/usr/local/bin/mrbondctl"
printf '#!/bin/sh\n' >"$root/sbin/modprobe"
chmod +x "$root/usr/local/bin/mrbondctl" "$root/sbin/modprobe"
out=$(systemd-analyze verify --man=no --root="$root" 'rdma-mrbond@mrbond0.service' 2>&1) ||
	{ echo "$out"; exit 1; }
[[ -z $out ]] || { echo "$out"; exit 1; }
echo "rdma-mrbond@.service: systemd-analyze verify clean"
