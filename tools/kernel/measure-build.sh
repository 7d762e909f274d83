#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# measure-build.sh start|stop|report [debian|roce-host]
#
# Measures build-host-kernel.sh's package build of Debian's 6.12
# configuration (the README's "Install on a host", step 1): `debian`, all
# of it (the default); `roce-host`, made by localmodconfig for the modules
# of roce-host.modules. The full build takes hours of CPU on 2 cores, more
# than a working session leaves beside a CI run, so it runs in segments at
# the lowest priority: `start` begins one (make resumes where the last one
# stopped), `stop` ends it, `report` sums them. Every process of the build
# is in one cgroup (cgroup v1's cpuacct where it is mounted, else the v2
# hierarchy's cpu.stat; MRBOND_CGROUP2=1 picks v2 on a hybrid host), so its
# CPU counts whatever else runs on the machine and however a segment ends.
#
# The tree is $MRBOND_CACHE/host-kernel-<variant> (build/ and the
# packages); the source is the testbed kernel's (tb_kdir), extracted once
# already.
set -euo pipefail
. "$(dirname "$0")/../testbed/lib.sh"

variant=${2:-debian}
case $variant in
debian | roce-host) ;;
*) echo "usage: $0 start|stop|report [debian|roce-host]" >&2; exit 2 ;;
esac
dir=$MRBOND_CACHE/host-kernel-$variant
log=$dir/times.log
config=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
if [[ -d /sys/fs/cgroup/cpuacct && ${MRBOND_CGROUP2:-0} != 1 ]]; then
	cg=/sys/fs/cgroup/cpuacct/mrbond-hostkernel-$variant
	usage=$cg/cpuacct.usage
else
	cg=/sys/fs/cgroup
	[[ -f $cg/cgroup.controllers ]] || cg=$cg/unified
	[[ -f $cg/cgroup.controllers ]] || tb_die "no cgroup v1 cpuacct nor v2 hierarchy under /sys/fs/cgroup"
	cg=$cg/mrbond-hostkernel-$variant
	usage=$cg/cpu.stat
fi

# The CPU time of the cgroup's processes so far, in ns, from USAGE (v1's
# cpuacct.usage or v2's cpu.stat). The segment's own shell repeats it.
read_cpu_ns='case $1 in
	*/cpu.stat) awk '\''$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }'\'' "$1" ;;
	*) cat "$1" ;;
	esac'
cpu_ns() { bash -c "$read_cpu_ns" _ "$usage"; }
# (cgroupfs files have no size: read them.)
running() { [[ -n $(cat "$cg/cgroup.procs" 2>/dev/null) ]]; }

start() {
	local src
	src=$(tb_kdir)/src
	[[ -f $src/Makefile ]] || tb_die "no testbed kernel source at $src (run the test command once)"
	! running || tb_die "a segment is running (stop it first)"
	mkdir -p "$dir" "$cg"
	# A copy of the scripts: bash reads a script as it runs it, and the
	# tree's may change meanwhile.
	rm -rf "$dir/tree" && mkdir -p "$dir/tree/tools/testbed"
	cp -r "$MRBOND_ROOT/tools/kernel" "$dir/tree/tools/"
	cp "$MRBOND_ROOT/tools/testbed/lib.sh" "$dir/tree/tools/testbed/"
	# Any variant but debian is localmodconfig's, for <variant>.modules.
	local variant_args=()
	[[ $variant == debian ]] || variant_args=(--modules "$dir/tree/tools/kernel/$variant.modules")
	read_cpu_ns=$read_cpu_ns usage=$usage setsid bash -c '
		cpu() { bash -c "$read_cpu_ns" _ "$usage"; }
		echo $$ >"$1/cgroup.procs"
		echo "start $(date -Is) cpu_ns $(cpu)" >>"$2"
		nice -n 19 ionice -c3 bash "$3/tree/tools/kernel/build-host-kernel.sh" \
			--config "$4" --src "$5" --out "$3/build" "${@:6}" >>"$3/build.log" 2>&1
		rc=$?
		echo "end $(date -Is) rc $rc cpu_ns $(cpu)" >>"$2"
	' _ "$cg" "$log" "$dir" "$config" "$src" "${variant_args[@]}" </dev/null >/dev/null 2>&1 &
	echo "segment started: $dir/build.log"
}

stop() {
	running || { echo "no segment running"; return 0; }
	echo "stop $(date -Is) cpu_ns $(cpu_ns)" >>"$log"
	local i
	for i in 1 2 3 4 5; do
		xargs -r kill <"$cg/cgroup.procs" 2>/dev/null || true
		sleep 2
		running || break
	done
	! running || tb_die "still running: $(tr '\n' ' ' <"$cg/cgroup.procs")"
	echo "segment stopped"
}

# Each segment's CPU is its last reading less its start's; a running one's
# counts up to now.
report() {
	local now=-1
	[[ -f $log ]] || { echo "no segment yet"; return 0; }
	running && now=$(cpu_ns)
	awk -v now="$now" '
		$1 == "start" { s = $NF; seg++; running = 1 }
		$1 == "stop" || $1 == "end" { cpu += $NF - s; s = $NF; running = 0; if ($1 == "end") last = $0 }
		END {
			if (running && now >= 0) cpu += now - s
			printf "%d segment(s), %.1f CPU-minutes%s", seg, cpu / 6e10, (now >= 0 ? " (one running)" : "")
			if (last != "") printf "; last end: %s", last
			printf "\n"
		}' "$log"
	ls "$dir"/*.deb 2>/dev/null || echo "no packages yet"
}

case ${1:-} in
start | stop | report) "$1" ;;
*) echo "usage: $0 start|stop|report [debian|roce-host]" >&2; exit 2 ;;
esac
