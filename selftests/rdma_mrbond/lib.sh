# SPDX-License-Identifier: GPL-2.0
# Guest-side helpers of the rdma_mrbond selftests: KTAP output, barriers and
# fault requests to the host runner (tools/testbed/testbed.py), and topology
# setup. Sourced by the role scripts.

: "${MRBOND_ROLE:?run by tools/testbed/testbed.py}"
: "${MRBOND_RUN:?}"
MRBOND_LINKS=${MRBOND_LINKS:-2}
export PATH=$PATH:/sbin:/usr/sbin

KTAP_N=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0

# Each result's time since the one before it (or the script's start) goes to
# ROLE.times in the run directory: where a suite spends its minutes, which
# the CI's time budget needs to know (tools/testbed/suite-times.sh LOGDIR).
KTAP_LAST_US=${EPOCHREALTIME/./}
ktap_time() {
	local now=${EPOCHREALTIME/./}
	printf '%s %d.%d\n' "$1" $(((now - KTAP_LAST_US) / 1000000)) \
		$(((now - KTAP_LAST_US) / 100000 % 10)) >>"$MRBOND_RUN/$MRBOND_ROLE.times"
	KTAP_LAST_US=$now
}
ktap_header() { echo "KTAP version 1"; echo "1..$1"; }
ktap_pass() { KTAP_N=$((KTAP_N + 1)); KTAP_PASS=$((KTAP_PASS + 1)); echo "ok $KTAP_N $1"; ktap_time "$1"; }
ktap_fail() { KTAP_N=$((KTAP_N + 1)); KTAP_FAIL=$((KTAP_FAIL + 1)); echo "not ok $KTAP_N $1"; ktap_time "$1"; }
# A skip is only for a prerequisite the testbed lacks, never for a failure.
ktap_skip() {
	KTAP_N=$((KTAP_N + 1)); KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_N $1 # SKIP $2"
	ktap_time "$1"
}
ktap_diag() { echo "# $*"; }
ktap_totals() {
	echo "# Totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
}

# run_test NAME CMD [ARGS...]: one KTAP result; the command's diagnostics
# become KTAP comments so that a failure explains itself.
run_test() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[[ -n $out ]] && sed 's/^/# /' <<<"$out"
	if ((rc == 0)); then ktap_pass "$name"; else ktap_fail "$name"; fi
}

peer_role() { [[ $MRBOND_ROLE == hosta ]] && echo hostb || echo hosta; }
role_index() { [[ $MRBOND_ROLE == hosta ]] && echo 0 || echo 1; }

# barrier NAME [TIMEOUT]: wait until the peer guest reaches the same point.
# Both guests pass the same barriers in the same order; the sequence number
# (kept in a file, since tests run in subshells) makes repeated names unique.
BARRIER_SEQ_FILE=$(mktemp)
echo 0 >"$BARRIER_SEQ_FILE"
barrier() {
	local seq name timeout=${2:-180} i
	seq=$(($(cat "$BARRIER_SEQ_FILE") + 1))
	echo "$seq" >"$BARRIER_SEQ_FILE"
	name=$seq-$1
	touch "$MRBOND_RUN/sync/$MRBOND_ROLE.$name"
	for ((i = 0; i < timeout * 10; i++)); do
		[[ -e $MRBOND_RUN/sync/$(peer_role).$name ]] && return 0
		sleep 0.1
	done
	echo "barrier $name: peer $(peer_role) never arrived" >&2
	return 1
}

# fault REQUEST: ask the host to inject a fault through QMP, and wait for it.
fault() {
	local id req
	id=$(date +%s%N)-$MRBOND_ROLE
	req=$MRBOND_RUN/req/$id
	echo "$*" >"$req.tmp" && mv "$req.tmp" "$req"
	for ((i = 0; i < 300; i++)); do
		if [[ -e $req.done ]]; then
			read -r status _ <"$req.done"
			return "$status"
		fi
		sleep 0.1
	done
	echo "fault '$*': host never answered" >&2
	return 1
}

# cable LINK down|up: both guests meet, hosta pulls (or plugs) the cable at
# both ends through QMP, and both go on once it is done.
cable() {
	barrier "cable$1-$2-pre" || return 1
	if [[ $MRBOND_ROLE == hosta ]]; then
		fault link "$1" "$2" || { echo "QMP set_link on link $1 ($2) failed"; return 1; }
	fi
	barrier "cable$1-$2-done"
}

# wait_for TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	local timeout=$1 i
	shift
	for ((i = 0; i < timeout * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# A bond slave takes the bond's MAC, so match the permanent address too.
nic_by_mac() {
	local nic
	nic=$(ip -j link show | jq -r --arg m "$1" \
		'.[] | select(.address == $m or .permaddr == $m) | .ifname' | head -n1)
	[[ -n $nic ]] && echo "$nic"
}

link_mac() { printf '52:54:00:%02x:00:%02x' $(($1 + 10)) "$2"; }

# Index of the RoCE v2 GID that holds IPv4 address $2 on ib device $1 port 1.
gid_index_of() {
	local dev=$1 ip=$2 hex gid f
	hex=$(printf '%02x%02x:%02x%02x' ${ip//./ })
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		gid=$(cat "$f" 2>/dev/null) || continue
		[[ $gid == "0000:0000:0000:0000:0000:ffff:$hex" ]] || continue
		[[ $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/${f##*/}" 2>/dev/null) == "RoCE v2" ]] ||
			continue
		echo "${f##*/}"
		return 0
	done
	return 1
}

hw_counter() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

rail_ip() { echo "198.18.$1.$(($2 + 1))"; }  # rail, role index (RFC 2544 range)

# The members' driver on the T1 rails: rdma_rxe, or with MRBOND_MEMBERS=dma
# the DMA-mapping test double rdma_rxe_dma (selftests/rdma_mrbond/rxe_dma/),
# which speaks RoCEv2 on UDP port 4792: every member of a rail, on both
# guests, must then be a double. member_name RAIL: the member on that rail.
MRBOND_MEMBERS=${MRBOND_MEMBERS:-rxe}
if [[ $MRBOND_MEMBERS == dma ]]; then
	MEMBER_MODULE=rdma_rxe_dma MEMBER_TYPE=rxe_dma MEMBER_PREFIX=dma ROCE_PORT=4792
else
	MEMBER_MODULE=rdma_rxe MEMBER_TYPE=rxe MEMBER_PREFIX=rxe ROCE_PORT=4791
fi
member_name() { echo "$MEMBER_PREFIX$1"; }

# T1: untagged 802.3ad bond over all links (the source of LACP state), a VLAN
# rail r<i> on every slave with its own /24, and a member (member_name i) on
# every slave. Each guest's bond gets its own MAC: identical guests would
# otherwise pick the same one.
setup_t1() {
	local me i nic
	me=$(role_index)
	modprobe bonding && modprobe 8021q && modprobe "$MEMBER_MODULE" || return 1
	ip link add bond0 address "02:00:00:00:00:0$((me + 1))" type bond \
		mode 802.3ad lacp_rate fast miimon 100 || return 1
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(nic_by_mac "$(link_mac "$me" "$i")") || { echo "no NIC for link $i"; return 1; }
		# MRBOND_MEMBERS_FIRST=1: the member before the slave joins the
		# bond, which gives every slave the bond's MAC. rxe derives its
		# node GUID from the MAC, and ib_cm rejects as stale a second
		# connection from one GUID with a QPN already seen: members that
		# are used side by side without the bond need GUIDs of their own,
		# as separate HCAs have.
		if [[ ${MRBOND_MEMBERS_FIRST:-0} == 1 ]]; then
			rdma link add "$(member_name "$i")" type "$MEMBER_TYPE" netdev "$nic" || return 1
		fi
		ip link set "$nic" down
		ip link set "$nic" master bond0 || return 1
		ip link add link "$nic" name "r$i" type vlan id $((100 + i)) || return 1
		ip addr add "$(rail_ip "$i" "$me")/24" dev "r$i"
		ip link set "r$i" up
		if [[ ${MRBOND_MEMBERS_FIRST:-0} != 1 ]]; then
			rdma link add "$(member_name "$i")" type "$MEMBER_TYPE" netdev "$nic" || return 1
		fi
		# Optional shaping, e.g. MRBOND_SHAPE_RATE=100mbit: TCG guests are
		# slow, but a shaped link makes bandwidth ratios independent of it.
		if [[ -n ${MRBOND_SHAPE_RATE:-} ]]; then
			tc qdisc add dev "$nic" root tbf rate "$MRBOND_SHAPE_RATE" \
				burst 64kb latency 50ms || return 1
		fi
	done
	ip link set bond0 up
}

slave_of_link() {
	nic_by_mac "$(link_mac "$(role_index)" "$1")" || { echo "no NIC for link $1" >&2; return 1; }
}

slave_info() {  # slave_info NIC FIELD
	ip -j -d link show dev "$1" | jq -r ".[0].linkinfo.info_slave_data.$2"
}

# ---- RoCE traffic on the T1 rails (hostb serves, hosta connects) ----

TB_TMP=$(mktemp -d)
PORT_BASE=18515

lacp_converged_now() {
	local i nic
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i") || return 1
		[[ $(slave_info "$nic" ad_actor_oper_port_state) == 63 ]] || return 1
		[[ $(slave_info "$nic" ad_partner_oper_port_state) == 63 ]] || return 1
	done
}

# run_client TOOL ARGS...: the server may not be listening yet; retry only that.
run_client() {
	local try
	for ((try = 0; try < 20; try++)); do
		timeout 120 "$@" >"$TB_TMP/client" 2>&1 && return 0
		grep -qi "couldn't connect\|Unable to connect\|connect to" "$TB_TMP/client" || break
		sleep 0.5
	done
	cat "$TB_TMP/client"
	return 1
}

# rdma_pair NAME RAIL SERVER_CMD... -- CLIENT_CMD...: on both sides the rail's
# rxe counters must rise in both directions.
rdma_pair() {
	local name=$1 dev=rxe$2 sent0 rcvd0 rc=0 server=() client=() pid sent rcvd
	shift 2
	while [[ $1 != -- ]]; do server+=("$1"); shift; done
	shift
	client=("$@")
	sent0=$(hw_counter "$dev" sent_pkts)
	rcvd0=$(hw_counter "$dev" rcvd_pkts)
	if [[ $MRBOND_ROLE == hostb ]]; then
		timeout 120 "${server[@]}" >"$TB_TMP/server" 2>&1 &
		pid=$!
		barrier "$name-start" || return 1
		wait "$pid" || { rc=1; cat "$TB_TMP/server"; }
	else
		barrier "$name-start" || return 1
		run_client "${client[@]}" || rc=1
	fi
	barrier "$name-done" || rc=1
	sent=$(($(hw_counter "$dev" sent_pkts) - sent0))
	rcvd=$(($(hw_counter "$dev" rcvd_pkts) - rcvd0))
	echo "$dev: sent_pkts +$sent rcvd_pkts +$rcvd"
	((sent > 0 && rcvd > 0)) || { echo "$dev counters did not rise both ways"; rc=1; }
	return $rc
}

rail_rc_pingpong() {
	local rail=$1 gid me
	me=$(role_index)
	gid=$(gid_index_of "rxe$rail" "$(rail_ip "$rail" "$me")") || return 1
	local common=(ibv_rc_pingpong -d "rxe$rail" -g "$gid" -p $((PORT_BASE + rail)) -n 100 -s 1024)
	rdma_pair "pingpong$rail" "$rail" "${common[@]}" -- "${common[@]}" "$(rail_ip "$rail" 1)" ||
		return 1
	[[ $MRBOND_ROLE == hosta ]] && tail -n 2 "$TB_TMP/client"
	return 0
}

# Prints the average Gb/s ib_write_bw measured on the rail (client side).
rail_write_bw() {
	local rail=$1 gid me avg
	me=$(role_index)
	gid=$(gid_index_of "rxe$rail" "$(rail_ip "$rail" "$me")") || return 1
	local common=(ib_write_bw -d "rxe$rail" -x "$gid" -p $((PORT_BASE + 10 + rail))
		-n 100 -s 65536 -F --report_gbits)
	rdma_pair "writebw$rail" "$rail" "${common[@]}" -- "${common[@]}" "$(rail_ip "$rail" 1)" ||
		return 1
	[[ $MRBOND_ROLE == hosta ]] || return 0
	# The result row: bytes, iterations, peak, average Gb/s, msg rate.
	avg=$(awk '$1 == 65536 { print $4 }' "$TB_TMP/client")
	echo "rail $rail ib_write_bw average: ${avg:-none} Gb/s"
	awk -v a="${avg:-0}" 'BEGIN { exit !(a > 0) }'
}

# bond_config: every bond as `mrbondctl -j bond show` reports it, without
# what the bond samples by itself (members' utilisation), so that two
# snapshots differ only when a request changed something. sed, not jq: the
# refusal tests take one a case, and jq starts ten times slower (48 ms
# against 4 on the host, more under TCG). mrbondctl's keys keep their order.
bond_config() {
	"${MRBOND_CTL:?}" -j bond show 2>&1 | sed -E 's/,?"utilisation_permille":(null|[0-9]+)//g'
}

# refusal_series STATE CASES: runs the function CASES, whose refusal cases
# each check their own error, between two snapshots of STATE (a function)
# instead of two per case: on the debug kernel under TCG a snapshot took
# 3-4 s, and the series' 37 cases 287 s. Where the state changed, CASES
# runs again with a snapshot around each case, which names the case that
# changed it (a refused request may run twice). CASES sees
# REFUSAL_SNAPSHOTS=0 while its cases share the series' snapshots.
REFUSAL_SNAPSHOTS=1
refusal_series() {
	local state=$1 cases=$2 before after rc
	before=$("$state")
	REFUSAL_SNAPSHOTS=0 "$cases"
	rc=$?
	after=$("$state")
	[[ $before == "$after" ]] && return $rc
	echo "the series changed the state:"
	diff <(echo "$before") <(echo "$after")
	echo "again, case by case:"
	"$cases"
	return 1
}

# dev_index DEV: an RDMA device's index, its place in rdma_cm's device
# order (a bond must be ahead of its members).
dev_index() { rdma -j dev show "$1" | jq -r '.[0].ifindex'; }

# tests_on KERNEL NAME FUNCTION...: adds NAME FUNCTION pairs to the suite's
# list `tests` if the kernel running the suite takes them. KERNEL is `debug`
# (the checking kernel: what drives rdma_mrbond's locks and lifetimes through
# their races), `normal` (timing, data on the wire) or `both`. MRBOND_STAGE
# names the running kernel: debug, normal (with the debug stage to follow),
# or unset, the only stage, which takes every test.
tests_on() {
	local stage=${MRBOND_STAGE:-all}
	[[ $1 == both || $stage == all || $stage == "$1" ]] && tests+=("${@:2}")
	return 0
}

# refused STATE NAME WANT CMD...: one refusal case. CMD must fail and say
# WANT, and STATE (a function) read the same before and after it (unless
# refusal_series snapshots the whole series). A suite that checks more per
# case sets REFUSAL_HOOK, a function called with "before" ahead of CMD, and
# with "after" NAME OUTPUT once CMD was refused as expected: it fails the
# case with its own reason.
refused() {
	local state=$1 name=$2 want=$3 before= after= out rc
	shift 3
	[[ -z ${REFUSAL_HOOK:-} ]] || "$REFUSAL_HOOK" before
	((REFUSAL_SNAPSHOTS)) && before=$("$state")
	out=$("$@" 2>&1)
	rc=$?
	((REFUSAL_SNAPSHOTS)) && after=$("$state")
	if ((rc == 0)); then
		echo "$name: accepted"
		return 1
	fi
	if [[ $out != *"$want"* ]]; then
		echo "$name: expected '$want', got: $out"
		return 1
	fi
	[[ -z ${REFUSAL_HOOK:-} ]] || "$REFUSAL_HOOK" after "$name" "$out" || return 1
	if [[ $before != "$after" ]]; then
		echo "$name: state changed"
		diff <(echo "$before") <(echo "$after")
		return 1
	fi
	echo "$name: refused: $out"
}

# What the refusal cases send besides mrbondctl: a sysfs write, a raw
# netlink request through the kernel's YNL CLI (what mrbondctl would never
# send), a command without privileges.
sysfs_write() { echo "$2" >"$1"; }
ynl() {
	python3 "$MRBOND_KSRC/tools/net/ynl/cli.py" --no-schema \
		--spec "$MRBOND_ROOT/Documentation/netlink/specs/rdma_mrbond.yaml" "$@"
}
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }

# Fault-injection points of rdma_mrbond's test build (MRBOND_FAULT_INJECT=1,
# rust/inject.rs): a race test arms one and sees it taken.
INJECT=/sys/kernel/debug/rdma_mrbond/inject
# inject_arm POINT MS: the next pass through POINT sleeps MS once.
inject_arm() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	[[ -w $INJECT/$1/armed_ms ]] || { echo "no injection point $INJECT/$1: not a MRBOND_FAULT_INJECT build"; return 1; }
	echo "$2" >"$INJECT/$1/armed_ms"
}
# inject_armed POINT: the delay armed and not yet taken, 0 if none.
inject_armed() { cat "$INJECT/$1/armed_ms"; }
# inject_hits POINT: how many passes slept so far.
inject_hits() { cat "$INJECT/$1/hits"; }

# kmemleak_test: the KTAP test kmemleak_clean. On the debug kernel
# (CONFIG_DEBUG_KMEMLEAK, config.debug) kmemleak scans memory twice (an
# object is reported once it is 5 s old and found unreferenced) and the test
# fails on any unreferenced object whose allocation went through
# rdma_mrbond. Run while the module is still loaded, so that the backtraces
# name its functions; objects still held by live bonds are referenced, so
# it finds what earlier operations of the suite lost. Other kernels skip.
kmemleak_test() {
	local f=/sys/kernel/debug/kmemleak out
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	if [[ ! -e $f ]]; then
		ktap_skip kmemleak_clean "kernel without CONFIG_DEBUG_KMEMLEAK"
		return
	fi
	echo scan >"$f"
	sleep 6
	echo scan >"$f"
	# Report blocks that name rdma_mrbond anywhere in their backtrace.
	out=$(awk '/^unreferenced object/ { if (blk ~ /mrbond/) print blk; blk = "" }
		{ blk = blk $0 "\n" } END { if (blk ~ /mrbond/) print blk }' "$f")
	if [[ -n $out ]]; then
		sed 's/^/# /' <<<"$out"
		ktap_fail kmemleak_clean
	else
		ktap_diag "kmemleak: $(grep -c '^unreferenced object' "$f") unreferenced object(s), none of rdma_mrbond"
		ktap_pass kmemleak_clean
	fi
}

# ---- the DMA-mapping double's checks ----

# Addresses the doubles refused since rdma_rxe_dma was loaded: any is a
# buffer the bond did not map on its member.
dma_refused() { cat /sys/module/rdma_rxe_dma/parameters/refused; }

# Slots of the swiotlb bounce pool in use. Guests boot with swiotlb=force
# and only the doubles map through the DMA API (virtio uses physical
# addresses), so with no double left every slot must be free again: one
# still in use is a mapping nobody undid.
swiotlb_used() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	cat /sys/kernel/debug/swiotlb/io_tlb_used
}

# dma_mappings_released: run once every double is deleted.
dma_mappings_released() {
	local used
	wait_for 10 eval '(($(swiotlb_used) == 0))'
	used=$(swiotlb_used) || { echo "no swiotlb debugfs"; return 1; }
	echo "swiotlb slots in use with no double left: $used (hiwater $(cat /sys/kernel/debug/swiotlb/io_tlb_used_hiwater))"
	((used == 0))
}

# dma_api_debug_test: on a kernel with CONFIG_DMA_API_DEBUG (the debug
# stage), run once every double is deleted: the DMA API reported nothing
# (a double unmap, another size or direction at unmap, a map error not
# checked, an sg entry over the device's segment size) and holds no
# mapping of a double any more.
dma_api_debug_test() {
	local d=/sys/kernel/debug/dma-api errors left
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	if [[ ! -e $d/error_count ]]; then
		ktap_skip dma_api_debug_clean "kernel without CONFIG_DMA_API_DEBUG"
		return
	fi
	errors=$(cat "$d/error_count")
	left=$(grep -c rdma_rxe_dma "$d/dump")
	ktap_diag "DMA-API: $errors error(s), $left mapping(s) of a double left ($(cat "$d/num_free_entries") of $(cat "$d/nr_total_entries") entries free)"
	if ((errors == 0 && left == 0)); then
		ktap_pass dma_api_debug_clean
	else
		grep rdma_rxe_dma "$d/dump" | head -n 10 | sed 's/^/# /'
		dmesg | grep -E -A4 'DMA-API: [^ ]+ [^ ]+: ' | head -n 40 | sed 's/^/# /'
		ktap_fail dma_api_debug_clean
	fi
}

# ---- the bond over the T1 rails (t1_nvme.sh, tools/bench/guest.sh) ----

CTL=${MRBOND_CTL:-}
SYS=/sys/class/infiniband
service_ip() { echo "198.18.30.$(($1 + 1))"; }  # role index

# wait_until SECS CMD...: poll CMD until it succeeds, for at most SECS of
# wall-clock time (counting polls is off by 2-4x in a TCG guest, where every
# fork is slow).
wait_until() {
	local end=$((EPOCHSECONDS + $1))
	shift
	until "$@"; do
		((EPOCHSECONDS < end)) || return 1
		sleep 0.1
	done
}

# wait_pid SECS PID: wait at most SECS for the background job PID; its exit
# status, or 124 while it still runs.
wait_pid() {
	local end=$((EPOCHSECONDS + $1))
	while kill -0 "$2" 2>/dev/null; do
		((EPOCHSECONDS < end)) || return 124
		sleep 0.1
	done
	wait "$2"
}

# bounded SECS OUT CMD...: CMD in the background, its output in OUT; waits at
# most SECS. Returns CMD's status, or 124 while it still runs: it is left
# alone, since a task stuck in the kernel cannot be killed, and waiting for
# it (or letting it hold run_test's pipe) would hang the suite.
bounded() {
	local secs=$1 out=$2 rc
	shift 2
	"$@" >"$out" 2>&1 </dev/null &
	wait_pid "$secs" $! && return 0
	rc=$?
	((rc == 124)) && echo "still running after $secs s: $*" >>"$out"
	return $rc
}

# bq [-t SECS] CMD...: a query that may block on a stuck controller or bond
# (nvme-cli, rdma, mrbondctl, the bond's sysfs files), bounded (default 20 s):
# its output, and its status.
bq() {
	local secs=20 f=$TB_TMP/bq.$BASHPID.$RANDOM rc
	[[ $1 == -t ]] && { secs=$2; shift 2; }
	bounded "$secs" "$f" "$@"
	rc=$?
	cat "$f"
	rm -f "$f"
	return $rc
}

member_state() { bq cat "$SYS/mrbond0/mrbond/members/$1/state"; }
member_is() { [[ $(member_state "$1") == "$2" ]]; }

# The first time a unique marker is logged, and kernel lines after it,
# stamped in ms since the marker: printk time is the only clock common to the
# bond's and the ULPs' messages.
kmark() { echo "mrbond selftest: mark $1" >/dev/kmsg; }
# The kernel log after the last mark $1 (a mark set again in a loop starts
# the log afresh), each line timed from the mark.
klog_after() {
	dmesg | awk -v m="mrbond selftest: mark $1" '
		match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
			ts = substr($0, 2, RLENGTH - 2) + 0
			line = substr($0, RLENGTH + 2)
			if (index(line, m)) { t0 = ts; n = 0; next }
			if (t0 != "") out[n++] = sprintf("+%d ms %s", (ts - t0) * 1000, line)
		}
		END { for (i = 0; i < n; i++) print out[i] }'
}

has_gid() {  # has_gid DEV PORT IP: a RoCE v2 GID of IPv4 address IP
	local hex f
	hex=$(printf '%02x%02x:%02x%02x' ${3//./ })
	for f in "$SYS/$1/ports/$2/gids/"*; do
		[[ $(cat "$f" 2>/dev/null) == "0000:0000:0000:0000:0000:ffff:$hex" ]] || continue
		[[ $(cat "$SYS/$1/ports/$2/gid_attrs/types/${f##*/}" 2>/dev/null) == "RoCE v2" ]] &&
			return 0
	done
	return 1
}

# The service address as a /32 on every rail, and a route to the peer's on
# every rail, rail 0 first. Two additions to a plain rail setup:
# - `src` on the routes: without it the kernel picks the rail's own /24
#   address as source, which no other rail holds, so a QP placed on another
#   member would have no source GID there;
# - ignore_routes_with_linkdown: otherwise a route through a rail whose cable
#   is pulled stays the best one, its neighbours are flushed, and nvme's
#   reconnect cannot resolve the target.
setup_service() {
	local i peer me
	me=$(role_index)
	peer=$(service_ip $((1 - me)))
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.ignore_routes_with_linkdown=1 ||
		return 1
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		sysctl -qw "net.ipv4.conf.r$i.rp_filter=0" "net.ipv4.conf.r$i.arp_ignore=0" || return 1
		ip addr add "$(service_ip "$me")/32" dev "r$i" || return 1
		ip route add "$peer/32" dev "r$i" metric $((10 + i)) src "$(service_ip "$me")" || return 1
	done
	ip route get "$peer"
}

# mrbond0 over every member, then put ahead of them (bond_ahead).
setup_bond() {
	local i
	modprobe rdma_mrbond || return 1
	local members=()
	for ((i = 0; i < MRBOND_LINKS; i++)); do members+=(member "${MEMBER_PREFIX}$i"); done
	bq -t 60 "$CTL" bond add mrbond0 "${members[@]}" || return 1
	echo rr >"$SYS/mrbond0/mrbond/policy" || return 1
	bond_ahead
}

# rdma link add of member I on its slave NIC. With MRBOND_MEMBERS_FIRST=1
# (members with GUIDs of their own, see setup_t1) the NIC gets its own MAC
# back for the moment of creation: rxe takes its node GUID from the MAC then,
# and a slave wears the bond's. member_create I NIC
member_create() {
	local own worn rc
	own=$(link_mac "$(role_index)" "$1") worn=$(<"/sys/class/net/$2/address")
	if [[ ${MRBOND_MEMBERS_FIRST:-0} != 1 || $own == "$worn" ]]; then
		bq -t 60 rdma link add "$(member_name "$1")" type "$MEMBER_TYPE" netdev "$2"
		return
	fi
	ip link set dev "$2" address "$own" || return 1
	bq -t 60 rdma link add "$(member_name "$1")" type "$MEMBER_TYPE" netdev "$2"
	rc=$?
	ip link set dev "$2" address "$worn" || return 1
	return $rc
}

# Every member re-created, so that mrbond0 is ahead of them in rdma_cm's
# device order (rdma_cm binds an address to the first device holding it);
# the bond re-attaches them by name. Then every member usable and every
# port of the bond with the service address's GID.
bond_ahead() {
	local i nic
	kmark reorder
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i") || return 1
		bq -t 60 rdma link del "${MEMBER_PREFIX}$i" || return 1
		member_create "$i" "$nic" || return 1
	done
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		wait_until 60 member_is "${MEMBER_PREFIX}$i" usable || {
			echo "${MEMBER_PREFIX}$i: $(member_state "${MEMBER_PREFIX}$i")"
			declare -F diag >/dev/null && diag
			return 1
		}
	done
	for ((i = 1; i <= MRBOND_LINKS; i++)); do
		wait_until 30 has_gid mrbond0 "$i" "$(service_ip "$(role_index)")" ||
			{ echo "mrbond0 port $i has no GID for $(service_ip "$(role_index)")"; return 1; }
	done
	klog_after reorder | grep -E "mrbond0 is behind member" &&
		{ echo "a member is still ahead of mrbond0 in rdma_cm's device order"; return 1; }
	[[ ${MRBOND_MEMBERS_FIRST:-0} != 1 ]] || member_guids_distinct
}

# Whether every member has a node GUID of its own; if not, names the shared
# one. Used side by side without the bond, members with one GUID collide in
# ib_cm (REJ "stale connection", or a DREQ to the older connection).
member_guids_distinct() {
	local i guid seen=" "
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		guid=$(<"/sys/class/infiniband/$(member_name "$i")/node_guid") || return 1
		[[ $seen == *" $guid "* ]] &&
			{ echo "$(member_name "$i") shares node GUID $guid with another member"; return 1; }
		seen+="$guid "
	done
}

# ---- NVMe-oF over the T1 rails: hostb's target, hosta's controller ----
# TARGET_IP: the address the target listens on and the controller connects to.

NVMET=/sys/kernel/config/nvmet
NQN=nqn.2026-12.io.mrbond:t1

setup_target() {
	local ns=$NVMET/subsystems/$NQN/namespaces/1 port=$NVMET/ports/1
	modprobe brd rd_nr=1 rd_size=65536 || return 1
	[[ -b /dev/ram0 ]] || { echo "no /dev/ram0"; return 1; }
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	modprobe nvmet && modprobe nvmet-rdma || return 1
	mkdir "$NVMET/subsystems/$NQN" || return 1
	echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host" || return 1
	mkdir "$ns" || return 1
	echo /dev/ram0 >"$ns/device_path" && echo 1 >"$ns/enable" || return 1
	mkdir "$port" || return 1
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$TARGET_IP" >"$port/addr_traddr"
	echo 4420 >"$port/addr_trsvcid"
	# Enables the port: nvmet-rdma binds and listens on $TARGET_IP.
	bq -t 60 ln -s "$NVMET/subsystems/$NQN" "$port/subsystems/$NQN" || return 1
	bq rdma res show cm_id
}

nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ $(cat "$c/subsysnqn" 2>/dev/null) == "$NQN" ]] && { echo "${c##*/}"; return 0; }
	done
	return 1
}
nvme_blk() {
	local c n
	c=$(nvme_ctrl) || return 1
	for n in /sys/class/nvme/"$c"/"$c"n*; do
		[[ -b /dev/${n##*/} ]] && { echo "/dev/${n##*/}"; return 0; }
	done
	return 1
}
ctrl_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }
ctrl_live() { local c; c=$(nvme_ctrl) && [[ $(ctrl_state "$c") == live ]]; }

# connect_ctrl OUT: nvme connect to the target (up to 3 tries), output in OUT.
connect_ctrl() {
	local try
	modprobe nvme-rdma || return 1
	for ((try = 1; try <= 3; try++)); do
		bounded 120 "$1" nvme connect -t rdma -a "$TARGET_IP" -s 4420 -n "$NQN" \
			--nr-io-queues=4 --reconnect-delay=1 --ctrl-loss-tmo=60 && return 0
		echo "nvme connect, try $try: $(cat "$1")"
		sleep 3
	done
	return 1
}

# disconnect_ctrl OUT: the controller gone, if there was one.
disconnect_ctrl() {
	nvme_ctrl >/dev/null || return 0
	# A controller that is reconnecting finishes its attempt first.
	bounded 150 "$1" nvme disconnect -n "$NQN" || return 1
	! nvme_ctrl >/dev/null || { echo "controller $(nvme_ctrl) still there"; return 1; }
}
