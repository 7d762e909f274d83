#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T0, one guest: the ECN/DCQCN/PFC knobs of rdma_mrbond. Two netdevs
# of the DCB test double (mrbond_dcbtest: dcbnl PFC ops that log every call
# in debugfs and inject faults) carry rxe members of mrbond0; two veth
# netdevs, which have no dcbnl, carry the members of mrbond1. Proven here:
# defaults and per-member status of every knob, ECN settings through netlink
# and sysfs, counters unavailable rather than zero, the PFC fan-out (order,
# values, read-back, RTNL), quiescing while a member is changed, rollback on a
# failure or a read-back mismatch, member overrides, members without dcbnl
# reported unsupported, and refused inputs that change nothing.
. "$(dirname "$0")/lib.sh"

CTL=${MRBOND_CTL:?path of mrbondctl}
SYS=/sys/class/infiniband
DBG=/sys/kernel/debug/mrbond_dcbt
B0=$SYS/mrbond0/mrbond
B1=$SYS/mrbond1/mrbond

setup_knobs() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	modprobe veth && modprobe rdma_rxe && modprobe mrbond_dcbtest || return 1
	modprobe rdma_mrbond || return 1
	local i
	for i in 0 1; do
		ip link add "dcbt$i" type mrbond_dcbt || return 1
		ip addr add "198.18.3$i.1/24" dev "dcbt$i" && ip link set "dcbt$i" up || return 1
		rdma link add "rxed$i" type rxe netdev "dcbt$i" || return 1
	done
	ip link add v0 type veth peer name v1 && ip link add v2 type veth peer name v3 || return 1
	for i in 0 1 2 3; do ip link set "v$i" up || return 1; done
	for i in 0 1 2; do rdma link add "rxev$i" type rxe netdev "v$i" || return 1; done
	"$CTL" bond add mrbond0 member rxed0 member rxed1 || return 1
	"$CTL" bond add mrbond1 member rxev0 member rxev1 || return 1
	wait_for 20 all_usable || { grep . "$B0"/members/*/state "$B1"/members/*/state; return 1; }
}

member_not_usable() { [[ $(cat "$SYS/$1/mrbond/members/$2/state") != usable ]]; }

all_usable() {
	local f
	for f in "$B0"/members/*/state "$B1"/members/*/state; do
		[[ $(cat "$f") == usable ]] || return 1
	done
}

member_attr() { cat "$SYS/$1/mrbond/members/$2/$3"; }
# pfc_lines BOND_DIR: "<member> <target> <status>" per member, from each
# member's one-value files pfc_target and status/pfc.
pfc_lines() {
	local d
	for d in "$1"/members/*/; do
		d=${d%/}
		echo "${d##*/} $(cat "$d/pfc_target") $(cat "$d/status/pfc")"
	done
}
pfc_has() { pfc_lines "$1" | grep -qx "$2"; }
# counter DIR NAME: a counters/ file, or "unavailable" where reading it
# fails with EOPNOTSUPP (no member has that counter) and nothing else.
counter() {
	local v
	if v=$(cat "$1/counters/$2" 2>"$TB_TMP/cerr"); then
		echo "$v"
	elif grep -q 'Operation not supported' "$TB_TMP/cerr"; then
		echo unavailable
	else
		cat "$TB_TMP/cerr" >&2
		echo error
	fi
}
show_json() { "$CTL" -j bond show "$1"; }
# knob BOND MEMBER KNOB FIELD: a member's knob status field from mrbondctl -j.
knob() {
	show_json "$1" | jq -r --arg m "$2" --arg k "$3" --arg f "$4" \
		'.[0].members[] | select(.ifname == $m) | .knobs[$k][$f]'
}
log_clear() { echo > "$DBG/log"; }
# dev_ops DEV: "op pfc_en=.." of DEV's dcbnl calls, in order.
dev_ops() { awk -v d="$1" '$2 == d { print $3, $4 }' "$DBG/log"; }
dev_calls() { (($(dev_ops "$1" | wc -l) >= $2)); }
# first_ops DEV N: DEV's first N calls on one line.
first_ops() { dev_ops "$1" | head -n "$2" | paste -sd' '; }
prio_pfc() { dcb pfc show dev "$1" prio-pfc; }

test_defaults() {
	[[ $(cat "$B0/ecn/enable") == 1 && $(cat "$B0/ecn/tclass") == 0 ]] ||
		{ echo "ecn defaults: enable $(cat "$B0/ecn/enable") tclass $(cat "$B0/ecn/tclass")"; return 1; }
	[[ $(cat "$B0/ecn/rp_rpg_gd") == 11 ]] || return 1
	[[ $(cat "$B0/pfc/enable_bitmap") == none ]] || return 1
	pfc_has "$B0" 'rxed0 none unset' || { pfc_lines "$B0"; return 1; }
	[[ $(member_attr mrbond0 rxed0 pfc_override) == none ]] || return 1
	show_json mrbond0 | jq -e '.[0].members | all(.knobs | length == 21)' >/dev/null ||
		{ echo "not every knob reported per member"; show_json mrbond0; return 1; }
	[[ $(knob mrbond0 rxed0 np_enable state) == unsupported &&
		$(knob mrbond0 rxed0 np_enable reason) == dcqcn-no-kernel-interface ]] || return 1
	[[ $(knob mrbond0 rxed1 ecn_enable state) == applied ]] || return 1
	[[ $(knob mrbond0 rxed1 pfc_enable state) == unset ]] || return 1
	"$CTL" bond show mrbond0
}

test_ecn_settings() {
	"$CTL" ecn set mrbond0 enable off tclass 0x68 rp-rpg-gd 7 np-cnp-dscp 46 2>"$TB_TMP/warn" ||
		{ cat "$TB_TMP/warn"; return 1; }
	cat "$TB_TMP/warn"
	grep -q 'warning: rxed0: np_cnp_dscp,rp_rpg_gd: unsupported (no kernel interface for DCQCN parameters)' \
		"$TB_TMP/warn" || { echo "no warning for DCQCN parameters that are not applied"; return 1; }
	[[ $(cat "$B0/ecn/enable") == 0 && $(cat "$B0/ecn/tclass") == 104 ]] || return 1
	[[ $(cat "$B0/ecn/rp_rpg_gd") == 7 && $(cat "$B0/ecn/np_cnp_dscp") == 46 ]] || return 1
	[[ $(show_json mrbond0 | jq '.[0].ecn.enable, .[0].ecn.tclass' | paste -sd' ') == "0 104" ]] ||
		return 1
	echo 1 >"$B0/ecn/enable" && echo 11 >"$B0/ecn/rp_rpg_gd" && echo 0 >"$B0/ecn/tclass" || return 1
	[[ $(cat "$B0/ecn/enable") == 1 && $(cat "$B0/ecn/rp_rpg_gd") == 11 ]] || return 1
	grep . "$B0"/members/*/status/*
	[[ $(member_attr mrbond0 rxed0 status/ecn_enable) == applied &&
		$(member_attr mrbond0 rxed1 status/dcqcn) == \
		"unsupported(no kernel interface for DCQCN parameters)" ]] || return 1
	dmesg | grep -q 'mrbond0: rp_rpg_gd = 7 stored, unsupported on every member' ||
		{ echo "no log line for the unsupported DCQCN parameter"; return 1; }
}

# Counters, one per file: the bond's sums in counters/, each member's own in
# members/<dev>/counters/; one that no member has fails to read rather than
# pass a zero for a measurement.
test_counters() {
	local m0=$B0/members/rxed0 m1=$B0/members/rxed1
	grep -r . "$B0/counters" "$m0/counters" 2>&1
	[[ $(counter "$B0" np_cnp_sent) == unavailable && $(counter "$m1" rp_cnp_handled) == unavailable ]] ||
		return 1
	# The test double counts 3 tx and 4 rx pause frames per netdev.
	[[ $(counter "$B0" tx_pause_frames) == 6 && $(counter "$B0" rx_pause_frames) == 8 &&
		$(counter "$m0" tx_pause_frames) == 3 ]] || return 1
	[[ $(counter "$B1" tx_pause_frames) == unavailable ]] || return 1
	[[ $(show_json mrbond0 | jq -r '.[0].members[0].counters.np_ecn_marked_roce_packets') == null ]] ||
		return 1
	[[ $(show_json mrbond0 | jq -r '.[0].counters.tx_pause_frames') == 6 ]]
}

# PFC frames per priority (dcbnl ieee_getpfc: requests sent, indications
# received), apart from 802.3x PAUSE; the double counts p + 1 sent and
# 10 * (p + 1) received at priority p, per netdev.
test_pfc_per_priority_counters() {
	local p m1=$B0/members/rxed1
	for ((p = 0; p < 8; p++)); do
		[[ $(counter "$B0" "tx_pfc_prio$p") == $((2 * (p + 1))) &&
			$(counter "$B0" "rx_pfc_prio$p") == $((20 * (p + 1))) &&
			$(counter "$m1" "tx_pfc_prio$p") == $((p + 1)) ]] ||
			{ echo "prio $p: $(counter "$B0" "tx_pfc_prio$p") $(counter "$B0" "rx_pfc_prio$p")"; return 1; }
	done
	# veth has no dcbnl: no PFC counters, not zeros.
	[[ $(counter "$B1" rx_pfc_prio7) == unavailable ]] || return 1
	[[ $(show_json mrbond0 | jq -r '.[0].counters.rx_pfc_prio7') == 160 ]]
}

# sysfs is one value per file: every file under mrbond/ reads as one line
# (a counter no member has: EOPNOTSUPP), the multi-line reports are gone,
# and both counters/ directories name every counter.
test_sysfs_one_value_per_file() {
	local f rc=0
	# One process reads them all: a cat per file took most of a minute
	# under TCG.
	python3 - "$B0" "$B1" <<-'PY' || rc=1
	import errno, os, sys
	n, bad = 0, 0
	for top in sys.argv[1:]:
	    for d, _, files in os.walk(top):
	        for name in files:
	            f, n = os.path.join(d, name), n + 1
	            try:
	                lines = open(f).read().count("\n")
	            except OSError as e:
	                if e.errno == errno.EOPNOTSUPP and "/counters/" in f:
	                    continue
	                print(f"{f}: {e.strerror}")
	                bad += 1
	                continue
	            if lines != 1:
	                print(f"{f}: {lines} lines")
	                bad += 1
	print(f"{n} files")
	sys.exit(1 if bad or n < 100 else 0)
	PY
	for f in ecn/status ecn/counters pfc/status pfc/counters; do
		[[ ! -e $B0/$f ]] || { echo "$f still exists"; rc=1; }
	done
	for f in "$B0/counters" "$B0"/members/*/counters; do
		[[ $(ls "$f" | wc -l) == 22 && -e $f/np_ecn_marked_roce_packets && -e $f/rx_pfc_prio7 ]] ||
			{ echo "$f: $(ls "$f" | paste -sd' ')"; rc=1; }
	done
	for f in ecn_enable tclass dcqcn pfc; do
		[[ -n $(member_attr mrbond0 rxed0 "status/$f") ]] || { echo "no status/$f"; rc=1; }
	done
	[[ $(cat "$B0/member_list") == "rxed0 rxed1" ]] || { echo "member_list: $(cat "$B0/member_list")"; rc=1; }
	return $rc
}

# Every object's show (the default command) in text and JSON, counters
# with -s only, details with -d only, pretty JSON with -p; PFC as set by
# test_pfc_fanout (0x08 on both of mrbond0's members).
test_cli_show_objects() {
	local out
	out=$("$CTL" pfc) || return 1
	echo "$out"
	grep -qx 'mrbond0: pfc-enable 0x08 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' <<<"$out" &&
		grep -qx '    rxed0: target 0x08 override none status applied' <<<"$out" || return 1
	! grep -q counters <<<"$out" || { echo "counters without -s"; return 1; }
	"$CTL" -s pfc show mrbond0 | grep -q '^    rxed1: counters: tx_pause_frames 3 rx_pause_frames 4 ' ||
		{ "$CTL" -s pfc show mrbond0; return 1; }
	[[ $("$CTL" -j pfc show mrbond0 | jq -r '.[0].members[] | select(.ifname == "rxed0") | .status.state') == \
		applied ]] || return 1
	"$CTL" ecn | grep -q '^    rxed0: ecn_enable applied tclass applied dcqcn unsupported' || { "$CTL" ecn; return 1; }
	[[ $("$CTL" -j ecn show mrbond1 | jq -r '.[0].counters.np_cnp_sent') == null ]] || return 1
	out=$("$CTL" member show mrbond0 rxed1) || return 1
	echo "$out"
	[[ $(grep -c rxed0 <<<"$out") == 0 && $(grep -c '^    rxed1 ' <<<"$out") == 1 ]] || return 1
	[[ $("$CTL" -j member | jq -r '.[] | select(.bond == "mrbond0") | .ifname' | paste -sd' ') == "rxed0 rxed1" ]] ||
		return 1
	! "$CTL" member show mrbond0 nosuchdev 2>/dev/null || { echo "a member that is not there shown"; return 1; }
	(($("$CTL" -p bond show mrbond0 | wc -l) > 1)) && "$CTL" -p bond show mrbond0 | jq -e '.[0].ifname == "mrbond0"' ||
		return 1
	"$CTL" -d bond show mrbond0 | grep -q '^    dcqcn: ' && ! "$CTL" bond show mrbond0 | grep -q 'dcqcn:' ||
		{ echo "-d does not add the knobs"; return 1; }
	"$CTL" -s bond | grep -q '^    counters: np_ecn_marked_roce_packets unavailable'
}

test_pfc_fanout() {
	log_clear
	echo 0x08 >"$B0/pfc/enable_bitmap" || return 1
	cat "$DBG/log"; pfc_lines "$B0"
	pfc_has "$B0" 'rxed0 0x08 applied' && pfc_has "$B0" 'rxed1 0x08 applied' ||
		return 1
	# Member 1 is done (probe, save, set, read back) before member 2 starts.
	awk '$2 == "dcbt0" { last0 = $1 } $2 == "dcbt1" && !first1 { first1 = $1 }
		END { exit !(last0 && first1 && last0 < first1) }' "$DBG/log" ||
		{ echo "fan-out interleaved members"; return 1; }
	local want="getpfc pfc_en=0x00 getpfc pfc_en=0x00 setpfc pfc_en=0x08 getpfc pfc_en=0x08"
	for d in dcbt0 dcbt1; do
		[[ $(first_ops "$d" 4) == "$want" ]] || { echo "$d: $(first_ops "$d" 4)"; return 1; }
		[[ $(dev_ops "$d" | grep -c '^setpfc') == 1 ]] || return 1
	done
	! grep -q 'rtnl=0' "$DBG/log" || { echo "a dcbnl call without RTNL"; return 1; }
	prio_pfc dcbt0 | grep -q '3:on' && prio_pfc dcbt1 | grep -q '3:on' || { prio_pfc dcbt0; return 1; }
	[[ $(knob mrbond0 rxed0 pfc_enable state) == applied ]] || return 1
	# The same value again: probed, not set (on mlx5 a change bounces the link).
	log_clear
	echo 8 >"$B0/pfc/enable_bitmap" || return 1
	! grep -q setpfc "$DBG/log" || { echo "unchanged members were set again"; return 1; }
}

test_pfc_quiesce() {
	log_clear
	"$CTL" -j monitor --timeout 120 >"$TB_TMP/events" 2>&1 &
	local mon=$! pid rc=0 i
	# A marker on mrbond1 proves the monitor listens before the change (a
	# fixed sleep missed the first event on the debug kernel).
	for ((i = 0; i < 30; i++)); do
		"$CTL" member set mrbond1 rxev0 admin drain &&
			"$CTL" member set mrbond1 rxev0 admin up || rc=1
		wait_for 2 grep -q '"member":"rxev0"' "$TB_TMP/events" && break
	done
	grep -q '"member":"rxev0"' "$TB_TMP/events" || { echo "the monitor never showed the marker"; rc=1; }
	echo "dcbt0 hold 1" >"$DBG/inject" || return 1
	echo 0x0c >"$B0/pfc/enable_bitmap" &
	pid=$!
	if wait_for 60 grep -q 'dcbt0 setpfc-hold' "$DBG/log"; then
		# Inside rxed0's ieee_setpfc: what the bond reports right now.
		local s0 r0 s1 st
		s0=$(member_attr mrbond0 rxed0 state)
		r0=$(member_attr mrbond0 rxed0 reason)
		s1=$(member_attr mrbond0 rxed1 state)
		st=$(pfc_lines "$B0" | grep rxed0)
		echo "during rxed0's setpfc: rxed0 $s0 ($r0), rxed1 $s1, pfc status '$st'"
		[[ $s0 == draining && $r0 == quiesced && $s1 == usable ]] || rc=1
		[[ $st == 'rxed0 0x0c pending' ]] || rc=1
		[[ -z $(dev_ops dcbt1) ]] || { echo "rxed1 touched while rxed0 is changed"; rc=1; }
	else
		echo "the hold was never reached"
		rc=1
	fi
	echo >"$DBG/release"
	wait "$pid" || rc=1
	wait_for 20 eval '(($(grep -c "\"member\":\"rxed0\"" "$TB_TMP/events") >= 2))' ||
		echo "fewer than 2 events of rxed0"
	kill "$mon" 2>/dev/null
	wait "$mon"
	cat "$TB_TMP/events"
	[[ $(jq -r 'select(.member == "rxed0") | "\(.usability)/\(.reason)"' "$TB_TMP/events" | paste -sd' ') == \
		"draining/quiesced usable/ready" ]] || { echo "events of rxed0 not quiesced, then ready"; rc=1; }
	wait_for 10 all_usable || { echo "members not usable after the change"; rc=1; }
	pfc_has "$B0" 'rxed1 0x0c applied' || rc=1
	dmesg | grep -q 'member rxed0: usable -> draining (quiesced)' || rc=1
	return $rc
}

test_pfc_rollback() {
	log_clear
	echo "dcbt1 fail 1" >"$DBG/inject" || return 1
	if echo 0x0f >"$B0/pfc/enable_bitmap" 2>"$TB_TMP/err"; then
		echo "a failed member did not fail the write"
		return 1
	fi
	cat "$TB_TMP/err" "$DBG/log"; pfc_lines "$B0"
	grep -q 'Input/output error' "$TB_TMP/err" || return 1
	pfc_has "$B0" 'rxed0 0x0f applied' &&
		pfc_has "$B0" 'rxed1 0x0f failed(-EIO)' || return 1
	# dcbt1: the failed set, then the saved value set and read back.
	[[ $(dev_ops dcbt1 | grep '^setpfc' | paste -sd' ') == "setpfc pfc_en=0x0f setpfc pfc_en=0x0c" ]] ||
		return 1
	grep -q 'dcbt1 setpfc pfc_en=0x0f rc=-5' "$DBG/log" || return 1
	prio_pfc dcbt1 | grep -q '1:off 2:on 3:on 4:off' || { prio_pfc dcbt1; return 1; }
	prio_pfc dcbt0 | grep -q '0:on 1:on 2:on 3:on' || return 1
	[[ $(knob mrbond0 rxed1 pfc_enable state) == failed && $(knob mrbond0 rxed1 pfc_enable errno) == 5 ]] ||
		return 1
	[[ $(knob mrbond0 rxed0 pfc_enable state) == applied ]] || return 1
	[[ $(member_attr mrbond0 rxed1 state) == usable ]] || { echo "rxed1 left quiesced"; return 1; }
	dmesg | grep -q 'member rxed1: PFC 0x0f failed (-EIO), 0x0c restored'
}

test_pfc_mismatch() {
	log_clear
	echo "dcbt0 mismatch 1" >"$DBG/inject" || return 1
	if "$CTL" pfc set mrbond0 bitmap 0x01 2>"$TB_TMP/err"; then
		echo "a read-back mismatch passed"
		return 1
	fi
	cat "$TB_TMP/err"; pfc_lines "$B0"
	grep -q 'PFC failed on a member and was rolled back there' "$TB_TMP/err" || return 1
	grep -q 'warning: rxed0: pfc_enable: failed (Protocol error)' "$TB_TMP/err" || return 1
	pfc_has "$B0" 'rxed0 0x01 failed(-EPROTO)' &&
		pfc_has "$B0" 'rxed1 0x01 applied' || return 1
	prio_pfc dcbt0 | grep -q '0:on 1:on 2:on 3:on 4:off' || { prio_pfc dcbt0; return 1; }
}

test_pfc_override() {
	"$CTL" pfc set mrbond0 member rxed1 override 0x80 || return 1
	pfc_lines "$B0"
	[[ $(member_attr mrbond0 rxed1 pfc_override) == 0x80 ]] || return 1
	pfc_has "$B0" 'rxed1 0x80 applied' &&
		pfc_has "$B0" 'rxed0 0x01 applied' || return 1
	prio_pfc dcbt1 | grep -q '0:off .* 7:on' || { prio_pfc dcbt1; return 1; }
	[[ $(show_json mrbond0 | jq '.[0].members[] | select(.ifname == "rxed1") | .pfc_override') == 128 ]] ||
		return 1
	echo none >"$B0/members/rxed1/pfc_override" || return 1
	[[ $(member_attr mrbond0 rxed1 pfc_override) == none ]] || return 1
	pfc_has "$B0" 'rxed1 0x01 applied' || return 1
	prio_pfc dcbt1 | grep -q '0:on 1:off' || { prio_pfc dcbt1; return 1; }
}

# rxed1's device goes away and comes back on a fresh netdev: the bond
# applies its PFC there without another write. Back on dcbt1, which already
# has the value: probed, not set again. rxed0, whose write failed, is not
# retried (on mlx5 every attempt bounces the link).
test_pfc_member_returns() {
	local rc=0
	echo "dcbt0 fail 1" >"$DBG/inject" || return 1
	echo 0x02 >"$B0/pfc/enable_bitmap" 2>/dev/null && { echo "the injected failure passed"; return 1; }
	pfc_has "$B0" 'rxed0 0x02 failed(-EIO)' && pfc_has "$B0" 'rxed1 0x02 applied' ||
		{ pfc_lines "$B0"; return 1; }
	ip link add dcbt2 type mrbond_dcbt && ip link set dcbt2 up || return 1
	log_clear
	rdma link del rxed1 && wait_for 20 member_not_usable mrbond0 rxed1 &&
		rdma link add rxed1 type rxe netdev dcbt2 || { echo "rxed1 not moved to dcbt2"; return 1; }
	# The status of the old netdev may show until the evaluation ran.
	wait_for 20 dev_calls dcbt2 4 && wait_for 20 pfc_has "$B0" 'rxed1 0x02 applied' ||
		{ echo "rxed1 on dcbt2 never applied"; rc=1; }
	cat "$DBG/log"; pfc_lines "$B0"
	local want="getpfc pfc_en=0x00 getpfc pfc_en=0x00 setpfc pfc_en=0x02 getpfc pfc_en=0x02"
	[[ $(first_ops dcbt2 4) == "$want" ]] || { echo "dcbt2: $(first_ops dcbt2 4)"; rc=1; }
	prio_pfc dcbt2 | grep -q '0:off 1:on 2:off' || { prio_pfc dcbt2; rc=1; }
	[[ -z $(dev_ops dcbt0) ]] || { echo "rxed0 (failed) was retried"; rc=1; }
	pfc_has "$B0" 'rxed0 0x02 failed(-EIO)' || { echo "rxed0 no longer failed"; rc=1; }
	log_clear
	rdma link del rxed1 && wait_for 20 member_not_usable mrbond0 rxed1 &&
		rdma link add rxed1 type rxe netdev dcbt1 || { echo "rxed1 not back on dcbt1"; return 1; }
	wait_for 20 dev_calls dcbt1 1 && wait_for 20 pfc_has "$B0" 'rxed1 0x02 applied' ||
		{ echo "rxed1 back on dcbt1 never applied"; pfc_lines "$B0"; rc=1; }
	[[ $(dev_ops dcbt1 | paste -sd' ') == "getpfc pfc_en=0x02" ]] ||
		{ echo "dcbt1: $(dev_ops dcbt1 | paste -sd' ')"; rc=1; }
	wait_for 20 all_usable || { echo "members not usable"; rc=1; }
	ip link del dcbt2 || rc=1
	# Every member applied again for the tests that follow.
	echo 0x01 >"$B0/pfc/enable_bitmap" || rc=1
	return $rc
}

test_veth_unsupported() {
	echo 0x08 >"$B1/pfc/enable_bitmap" || return 1
	pfc_lines "$B1"
	pfc_has "$B1" 'rxev0 0x08 unsupported(no dcbnl ieee_setpfc)' &&
		pfc_has "$B1" 'rxev1 0x08 unsupported(no dcbnl ieee_setpfc)' || return 1
	[[ $(knob mrbond1 rxev0 pfc_enable reason) == no-dcbnl-setpfc ]] || return 1
	"$CTL" pfc set mrbond1 bitmap 0x08 2>"$TB_TMP/warn" || return 1
	grep -q 'warning: rxev1: pfc_enable: unsupported (no dcbnl ieee_setpfc)' "$TB_TMP/warn" ||
		{ cat "$TB_TMP/warn"; return 1; }
	# A member that joins after the write gets the bond's value by itself.
	"$CTL" member del mrbond1 rxev1 && "$CTL" member add mrbond1 rxev2 || return 1
	wait_for 20 pfc_has "$B1" 'rxev2 0x08 unsupported(no dcbnl ieee_setpfc)' ||
		{ pfc_lines "$B1"; return 1; }
	[[ $(knob mrbond1 rxev2 pfc_enable state) == unsupported ]]
}

knob_state() {
	bond_config
	grep -r . "$B0"/ecn "$B0"/pfc "$B0"/members/*/pfc_* "$B0"/members/*/status
}
# bad_input NAME EXPECTED_TEXT CMD...: the command must fail, print the
# expected (extack or errno) text, and change neither any bond (checked
# here, or around the series by refusal_series) nor any member's PFC (no
# ieee_setpfc call).
bad_input() { REFUSAL_HOOK=knob_refusal refused knob_state "$@"; }
# Per refused knob: the DCB double's log starts empty; a refusal changed
# nothing, so it has no member outcome to warn about, and no member's PFC
# was set.
knob_refusal() {  # before | after NAME OUTPUT
	[[ $1 == before ]] && { log_clear; return; }
	if [[ $3 == *"warning:"* ]]; then
		echo "$2: member warnings after a refusal: $3"
		return 1
	fi
	if grep -q setpfc "$DBG/log"; then
		echo "$2: a member's PFC was set"
		return 1
	fi
}

test_bad_inputs() { refusal_series knob_state bad_input_cases; }
bad_input_cases() {
	local fails=0
	run_bad() { bad_input "$@" || fails=$((fails + 1)); }
	run_bad ecn-gd-out-of-range "rp_rpg_gd out of range (1..15)" "$CTL" ecn set mrbond0 rp-rpg-gd 16
	run_bad ecn-threshold-zero "rp_rpg_threshold out of range (1..31)" \
		"$CTL" ecn set mrbond0 enable off rp-rpg-threshold 0
	run_bad ecn-tclass-256 "tclass out of range (0..255)" "$CTL" ecn set mrbond0 tclass 256
	run_bad ecn-enable-2 "ecn_enable out of range (0..1)" "$CTL" ecn set mrbond0 enable 2
	run_bad ecn-unknown-bond "no such bond" "$CTL" ecn set nosuchbond enable off
	run_bad ecn-unknown-key "unknown ECN setting" "$CTL" ecn set mrbond0 rp-nope 1
	run_bad pfc-bitmap-0x100 "pfc_enable out of range (0..255)" "$CTL" pfc set mrbond0 bitmap 0x100
	run_bad pfc-override-0x1ff "pfc_enable out of range (0..255)" \
		"$CTL" pfc set mrbond0 member rxed0 override 0x1ff
	run_bad pfc-unknown-member "not a member of this bond" "$CTL" pfc set mrbond0 member rxev0 override 1
	run_bad pfc-unknown-bond "no such bond" "$CTL" pfc set nosuchbond bitmap 1
	run_bad ynl-ecn-nothing "nothing to set" ynl --do ecn-set --json '{"name": "mrbond0", "ecn": {}}'
	run_bad ynl-pfc-nothing "nothing to set" ynl --do pfc-set --json '{"name": "mrbond0"}'
	run_bad ynl-override-and-clear "not both" ynl --do pfc-set --json \
		'{"name": "mrbond0", "member": [{"ibdev": "rxed0", "pfc-override": 1, "pfc-override-clear": true}]}'
	run_bad ynl-wide-bitmap "pfc_enable out of range" ynl --do pfc-set --json \
		'{"name": "mrbond0", "pfc": {"enable-bitmap": 4294967295}}'
	run_bad sysfs-gd-16 "Invalid argument" sysfs_write "$B0/ecn/rp_rpg_gd" 16
	run_bad sysfs-tclass-text "Invalid argument" sysfs_write "$B0/ecn/tclass" banana
	run_bad sysfs-bitmap-0x100 "Invalid argument" sysfs_write "$B0/pfc/enable_bitmap" 0x100
	run_bad sysfs-override-0x1ff "Invalid argument" sysfs_write "$B0/members/rxed0/pfc_override" 0x1ff
	run_bad sysfs-ro-status "Permission denied" sysfs_write "$B0/members/rxed0/status/pfc" x
	run_bad nonroot-ecn-netlink "Operation not permitted" as_nobody "$CTL" ecn set mrbond0 enable off
	run_bad nonroot-pfc-netlink "Operation not permitted" as_nobody "$CTL" pfc set mrbond0 bitmap 0
	run_bad nonroot-ecn-sysfs "Permission denied" as_nobody sh -c "echo 0 > $B0/ecn/enable"
	run_bad nonroot-pfc-sysfs "Permission denied" as_nobody sh -c "echo 0 > $B0/pfc/enable_bitmap"
	echo "$fails refused-input case(s) failed"
	((fails == 0))
}

# The largest bond: 16 members' knob status and counters in one BOND_GET
# reply, and in one dump message.
test_sixteen_members() {
	local i members=() b2=$SYS/mrbond2/mrbond
	for ((i = 0; i < 16; i += 2)); do
		ip link add "w$i" type veth peer name "w$((i + 1))" || return 1
	done
	for ((i = 0; i < 16; i++)); do
		ip link set "w$i" up && rdma link add "rxw$i" type rxe netdev "w$i" || return 1
		members+=(member "rxw$i")
	done
	"$CTL" bond add mrbond2 "${members[@]}" || return 1
	echo 0x08 >"$b2/pfc/enable_bitmap" || return 1
	[[ $(pfc_lines "$b2" | grep -c 'unsupported(no dcbnl ieee_setpfc)') == 16 ]] || return 1
	local got
	got=$("$CTL" -j bond show mrbond2 |
		jq '.[0].members | map(select(.knobs.pfc_enable.state == "unsupported")) | length')
	[[ $got == 16 ]] || { echo "bond show mrbond2: $got members with knobs"; return 1; }
	got=$("$CTL" -j bond show | jq '.[] | select(.ifname == "mrbond2") | .members | map(.knobs | length) | add')
	[[ $got == 336 ]] || { echo "dump: $got knob statuses, want 16 x 21"; return 1; }
	"$CTL" bond del mrbond2 || return 1
	for ((i = 0; i < 16; i++)); do rdma link del "rxw$i" || return 1; done
}

# Defect: member del kept the bond's vdev locked while removing the
# member's sysfs directory, which waits for the stores running in it; a
# pfc_override store whose fan-out then quiesced another member waited for
# that lock to announce it: both hung for good. The DCB double holds the
# store inside rxed0's setpfc until member del is waiting for it; both
# must finish, and rxed1 must get the bond's PFC back.
test_regress_pfc_override_vs_member_del() {
	local store del i rc=0
	# rxed1's PFC changed behind the bond's back: the fan-out the store
	# starts changes it too, after rxed0, quiescing it and announcing that
	# through the vdev (which the old member del kept locked).
	dcb pfc set dev dcbt1 prio-pfc 0:off 5:on || return 1
	log_clear
	echo "dcbt0 hold 1" >"$DBG/inject" || return 1
	echo 0x10 >"$B0/members/rxed0/pfc_override" &
	store=$!
	wait_for 60 grep -q 'dcbt0 setpfc-hold' "$DBG/log" ||
		{ echo "the hold was never reached"; echo >"$DBG/release"; return 1; }
	"$CTL" member del mrbond0 rxed0 &
	del=$!
	sleep 3
	kill -0 "$del" 2>/dev/null || echo "member del did not wait for the held store"
	echo >"$DBG/release"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$store" 2>/dev/null || kill -0 "$del" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$store" 2>/dev/null || kill -0 "$del" 2>/dev/null; then
		echo "deadlock: still blocked 30 s after the release"
		for i in "$store" "$del"; do
			[[ -e /proc/$i/stack ]] && { echo "pid $i:"; cat "/proc/$i/stack"; }
		done
		return 1
	fi
	# The store may fail (its member went away under it); member del not.
	wait "$store"
	echo "pfc_override store: rc $?"
	wait "$del" || { echo "member del failed"; rc=1; }
	[[ ! -e $B0/members/rxed0 ]] || { echo "rxed0 still in sysfs"; rc=1; }
	grep -q 'dcbt1 setpfc pfc_en=0x01' "$DBG/log" || { echo "rxed1 not set back"; cat "$DBG/log"; rc=1; }
	"$CTL" member add mrbond0 rxed0 || rc=1
	wait_for 20 all_usable || { echo "members not usable again"; rc=1; }
	return $rc
}

test_unload() {
	rdma link del rxed0 && rdma link del rxed1 || return 1
	modprobe -r rdma_mrbond || return 1
	modprobe -r mrbond_dcbtest || return 1
	[[ ! -e /sys/class/net/dcbt0 && ! -e $SYS/mrbond0 ]]
}

ktap_header 18
if ! out=$(setup_knobs 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! knob test setup failed"
	exit 1
fi
run_test defaults_and_status_of_every_knob test_defaults
run_test ecn_settings_netlink_and_sysfs test_ecn_settings
run_test counters_summed_or_unavailable test_counters
run_test pfc_per_priority_counters test_pfc_per_priority_counters
run_test sysfs_one_value_per_file test_sysfs_one_value_per_file
run_test pfc_fanout_order_values_readback test_pfc_fanout
run_test cli_show_objects test_cli_show_objects
run_test pfc_member_quiesced_while_changed test_pfc_quiesce
run_test pfc_rollback_on_second_member test_pfc_rollback
run_test pfc_readback_mismatch_rolled_back test_pfc_mismatch
run_test pfc_member_override test_pfc_override
run_test pfc_applied_to_returning_member test_pfc_member_returns
run_test veth_members_unsupported test_veth_unsupported
run_test refused_inputs_change_nothing test_bad_inputs
run_test sixteen_members_in_one_message test_sixteen_members
run_test regress_pfc_override_vs_member_del test_regress_pfc_override_vs_member_del
kmemleak_test
run_test unload_with_knobs_set test_unload
ktap_totals
[[ $KTAP_FAIL == 0 ]]
