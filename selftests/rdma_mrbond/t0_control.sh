#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T0, one guest: the control plane of rdma_mrbond over two rxe
# members on a veth pair: creation through netlink and `rdma link`, sysfs,
# `rdma statistic`, member loss and return, a table of refused inputs that
# must leave the state unchanged, and unloading with bonds present.
. "$(dirname "$0")/lib.sh"

CTL=${MRBOND_CTL:?path of mrbondctl}
SYS=/sys/class/infiniband

setup_t0() {
	modprobe veth && modprobe rdma_rxe || return 1
	ip link add m0 type veth peer name m1 || return 1
	ip link add m2 type veth peer name m3 || return 1
	for d in m0 m1 m2 m3; do ip link set "$d" up || return 1; done
	ip link add d0 type dummy 2>/dev/null || { modprobe dummy && ip link add d0 type dummy; }
	modprobe bonding || return 1
	ip link add lag0 type bond mode 802.3ad || return 1
	# Active-backup: members rxea/rxeb on slaves a0/b0 of ab0.
	ip link add a0 type veth peer name a1 && ip link add b0 type veth peer name b1 || return 1
	ip link add ab0 type bond mode active-backup miimon 100 || return 1
	ip link set a0 master ab0 && ip link set b0 master ab0 || return 1
	for d in a1 b1 ab0; do ip link set "$d" up || return 1; done
	ip link set ab0 type bond active_slave a0 || return 1
	ip addr add 198.18.20.1/24 dev ab0 || return 1
	rdma link add rxea type rxe netdev a0 && rdma link add rxeb type rxe netdev b0
	rdma link add rxe0 type rxe netdev m0 && rdma link add rxe1 type rxe netdev m1 &&
		rdma link add rxe2 type rxe netdev m2
}

member_attr() { cat "$SYS/$1/mrbond/members/$2/$3"; }

test_create_netlink() {
	"$CTL" bond add mrbond0 member rxe0 member rxe1 weight 200 || return 1
	rdma dev show mrbond0 || { echo "mrbond0 not in rdma dev"; return 1; }
	rdma link show mrbond0/1 && rdma link show mrbond0/2 || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/mode") == rail ]] || { echo "mode not rail"; return 1; }
	[[ $(cat "$SYS/mrbond0/mrbond/member_list" | tr '\n' ' ') == "rxe0 rxe1 " ]] ||
		{ echo "members: $(cat "$SYS/mrbond0/mrbond/member_list")"; return 1; }
	[[ $(member_attr mrbond0 rxe1 weight) == 200 ]] || { echo "weight not applied"; return 1; }
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe0 state) == usable ]]' ||
		{ echo "rxe0: $(member_attr mrbond0 rxe0 state) $(member_attr mrbond0 rxe0 reason)"; return 1; }
	wait_for 10 eval '[[ $(cat '"$SYS"'/mrbond0/ports/1/state) == *ACTIVE* ]]' ||
		{ echo "port 1: $(cat "$SYS/mrbond0/ports/1/state")"; return 1; }
	"$CTL" bond show mrbond0
}

# Counters only: the gauges are the member's sysfs files, not counters.
test_statistic() {
	rdma statistic show link mrbond0/1 | tee "$TB_TMP/stat" || return 1
	grep -qw placements "$TB_TMP/stat" && grep -qw flushed_wr "$TB_TMP/stat" ||
		{ echo "counters missing"; return 1; }
	grep -qwE 'usable|qps|outstanding_wr' "$TB_TMP/stat" && { echo "a gauge among the counters"; return 1; }
	[[ -e $SYS/mrbond0/ports/1/hw_counters/transitions && ! -e $SYS/mrbond0/ports/1/hw_counters/qps ]] ||
		{ echo "hw_counters: $(ls "$SYS/mrbond0/ports/1/hw_counters")"; return 1; }
	[[ $(member_attr mrbond0 rxe0 state) == usable ]]
}

# The port verbs (rust/vdev/ports.rs) as the core publishes them: a RoCE port
# with a 128-entry GID table, the default P_Key alone, CM support, and the
# rate of the netdev it is bound to, as its member (rxe0) reports it.
test_port_attributes() {
	local p=$SYS/mrbond0/ports/1 rc=0
	[[ $(cat "$p/link_layer") == Ethernet ]] || { echo "link_layer: $(cat "$p/link_layer")"; rc=1; }
	[[ $(cat "$p/pkeys/0") == 0xffff ]] || { echo "P_Key 0: $(cat "$p/pkeys/0")"; rc=1; }
	[[ ! -e $p/pkeys/1 ]] || { echo "a second P_Key entry"; rc=1; }
	[[ $(ls "$p/gids" | wc -l) == 128 ]] || { echo "GID entries: $(ls "$p/gids" | wc -l)"; rc=1; }
	(($(cat "$p/cap_mask") & 0x10000)) || { echo "cap_mask $(cat "$p/cap_mask"): no CM"; rc=1; }
	[[ $(cat "$p/phys_state") == *LinkUp* ]] || { echo "phys_state: $(cat "$p/phys_state")"; rc=1; }
	[[ $(cat "$p/rate") == "$(cat "$SYS/rxe0/ports/1/rate")" ]] ||
		{ echo "rate $(cat "$p/rate"), rxe0's $(cat "$SYS/rxe0/ports/1/rate")"; rc=1; }
	return $rc
}

# query_device (Rust): the members' capability flags that describe how their
# own QPs behave, plus the vdev's own (port events, its own system image,
# FRWR), and none of the others (rxe has memory windows, SRQ resize, APM);
# and its own system image GUID. (No tool shows max_sge: not checked here.)
test_device_attributes() {
	local rc=0 own inherited member want got
	own='["MEM_MGT_EXTENSIONS","PORT_ACTIVE_EVENT","SYS_IMAGE_GUID"]'
	inherited='["CURR_QP_STATE_MOD","RC_RNR_NAK_GEN","UD_AV_PORT_ENFORCE"]'
	member=$(rdma -j -d dev show rxe0) || return 1
	# By prefix: iproute2 names UD_AV_PORT_ENFORCE "UD_AV_PORT_ENFORCE_PORT_ENFORCE".
	want=$(jq -c --argjson own "$own" --argjson inh "$inherited" \
		'($own + [.[0].caps[] | select(. as $c | $inh | any(. as $p | $c | startswith($p)))]) | sort' \
		<<<"$member")
	got=$(rdma -j -d dev show mrbond0 | jq -c '.[0].caps | sort')
	[[ -n $want && $got == "$want" ]] || { echo "caps $got, want $want"; rc=1; }
	jq -e '.[0].caps | index("MEM_WINDOW")' <<<"$member" >/dev/null ||
		{ echo "rxe0 has no MEM_WINDOW: the test sees nothing dropped"; rc=1; }
	[[ $(cat "$SYS/mrbond0/sys_image_guid") == "$(cat "$SYS/mrbond0/node_guid")" ]] ||
		{ echo "sys_image_guid $(cat "$SYS/mrbond0/sys_image_guid")"; rc=1; }
	[[ $(cat "$SYS/mrbond0/sys_image_guid") != "$(cat "$SYS/rxe0/sys_image_guid")" ]] ||
		{ echo "sys_image_guid is rxe0's"; rc=1; }
	return $rc
}

test_sysfs_writes() {
	echo lqf >"$SYS/mrbond0/mrbond/policy" || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/policy") == lqf ]] || return 1
	echo 300 >"$SYS/mrbond0/mrbond/members/rxe0/weight" || return 1
	[[ $(member_attr mrbond0 rxe0 weight) == 300 ]] || return 1
	echo drain >"$SYS/mrbond0/mrbond/members/rxe0/admin" || return 1
	wait_for 5 eval '[[ $(member_attr mrbond0 rxe0 state) == draining ]]' ||
		{ echo "admin drain: $(member_attr mrbond0 rxe0 state)"; return 1; }
	echo up >"$SYS/mrbond0/mrbond/members/rxe0/admin" || return 1
	wait_for 5 eval '[[ $(member_attr mrbond0 rxe0 state) == usable ]]' || return 1
	# Capacity for utilisation: 0 follows the link speed, which a veth
	# reports as 10000 Mb/s, so a sample lands within two periods.
	[[ $(member_attr mrbond0 rxe0 capacity_mbps) == 0 ]] || return 1
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe0 utilisation) =~ ^[0-9]+$ ]]' ||
		{ echo "rxe0 utilisation: $(member_attr mrbond0 rxe0 utilisation)"; return 1; }
	echo 100 >"$SYS/mrbond0/mrbond/members/rxe0/capacity_mbps" || return 1
	[[ $(member_attr mrbond0 rxe0 capacity_mbps) == 100 ]] || return 1
	"$CTL" member set mrbond0 rxe0 capacity-mbps 0 || return 1
	[[ $(member_attr mrbond0 rxe0 capacity_mbps) == 0 ]] || return 1
	"$CTL" -j bond show mrbond0 | jq -e '.[0].members[0] | has("utilisation_permille") and .capacity_mbps == 0' ||
		{ "$CTL" -j bond show mrbond0; return 1; }
	echo wrr >"$SYS/mrbond0/mrbond/policy"
}

test_member_loss() {
	local t0
	rdma link del rxe1 || return 1
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe1 reason) == device-absent ]]' ||
		{ echo "rxe1 after removal: $(member_attr mrbond0 rxe1 state) $(member_attr mrbond0 rxe1 reason)"; return 1; }
	[[ -d $SYS/mrbond0 ]] || { echo "bond unregistered on member loss"; return 1; }
	[[ $(cat "$SYS/mrbond0/ports/2/state") == *DOWN* ]] ||
		{ echo "port 2 still $(cat "$SYS/mrbond0/ports/2/state")"; return 1; }
	rdma link add rxe1 type rxe netdev m1 || return 1
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe1 state) == usable ]]' ||
		{ echo "rxe1 did not come back"; return 1; }
}

test_link_down_member() {
	ip link set m1 down
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe1 state) == unusable ]]' || return 1
	echo "rxe1 on m1 down: $(member_attr mrbond0 rxe1 reason)"
	ip link set m1 up
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe1 state) == usable ]]'
}

# bad_input NAME EXPECTED_TEXT CMD...: the command must fail, print the
# expected (extack or errno) text, and leave every bond exactly as it was
# (checked here, or around the series by refusal_series).
bad_input() { refused bond_config "$@"; }

test_bad_inputs() { refusal_series bond_config bad_input_cases; }
bad_input_cases() {
	local fails=0
	local b=$SYS/mrbond0/mrbond
	run_bad() { bad_input "$@" || fails=$((fails + 1)); }
	run_bad unknown-bond-del "no such bond" "$CTL" bond del nosuchbond
	run_bad unknown-bond-policy "no such bond" "$CTL" bond set nosuchbond policy rr
	run_bad unknown-member-device "no such RoCE RDMA device" "$CTL" bond add mrbond9 member nosuchdev
	run_bad duplicate-member-in-request "member listed twice" "$CTL" bond add mrbond9 member rxe2 member rxe2
	run_bad member-of-another-bond "already a bond member" "$CTL" bond add mrbond9 member rxe0
	run_bad member-add-taken "already a bond member" "$CTL" member add mrbond0 rxe1
	run_bad member-add-no-port "no free port" "$CTL" member add mrbond0 rxe2
	run_bad non-rdma-netdev-link "No such device" rdma link add mrbond9 type mrbond netdev d0
	run_bad weight-zero "integer out of range" "$CTL" member set mrbond0 rxe0 weight 0
	run_bad weight-too-big "integer out of range" "$CTL" member set mrbond0 rxe0 weight 1001
	run_bad member-set-not-member "not a member" "$CTL" member set mrbond0 rxe2 weight 5
	run_bad member-del-not-member "not a member" "$CTL" member del mrbond0 rxe2
	run_bad bond-name-taken "exists" "$CTL" bond add mrbond0 member rxe2
	run_bad bond-name-percent "may not contain %" "$CTL" bond add 'x%d' member rxe2
	# Raw requests mrbondctl would never send, through the kernel's YNL CLI.
	run_bad ynl-member-set-nothing "nothing to set" \
		ynl --do member-set --json '{"name": "mrbond0", "member": [{"ibdev": "rxe0"}]}'
	run_bad ynl-no-members "at least one member" ynl --do bond-new --json '{"name": "mrbond9"}'
	run_bad ynl-member-without-ibdev "member needs an ibdev name" \
		ynl --do bond-new --json '{"name": "mrbond9", "member": [{"weight": 5}]}'
	run_bad ynl-mode-out-of-range "out of range" \
		ynl --do bond-new --json '{"name": "mrbond9", "mode": 7, "member": [{"ibdev": "rxe2"}]}'
	run_bad ynl-policy-out-of-range "out of range" \
		ynl --do bond-set --json '{"name": "mrbond0", "policy": 9}'
	run_bad ynl-name-too-long "Invalid" ynl --do bond-del --json "{\"name\": \"$(printf 'x%.0s' {1..80})\"}"
	run_bad ynl-set-without-name "miss-type" ynl --do bond-set --json '{"policy": 1}'
	run_bad lacp-source-not-bond "not a bond" "$CTL" bond add mrbond9 member rxe2 lacp-source d0
	run_bad data-over-802.3ad "802.3ad across HCAs loses packets" \
		"$CTL" bond add mrbond9 mode active-backup member rxe2 lacp-source lag0
	run_bad sysfs-bad-policy "Invalid argument" sysfs_write "$b/policy" roundrobin
	run_bad sysfs-bad-weight "Invalid argument" sysfs_write "$b/members/rxe0/weight" 0
	run_bad sysfs-weight-text "Invalid argument" sysfs_write "$b/members/rxe0/weight" heavy
	run_bad sysfs-bad-admin "Invalid argument" sysfs_write "$b/members/rxe0/admin" sideways
	run_bad sysfs-capacity-too-big "Invalid argument" sysfs_write "$b/members/rxe0/capacity_mbps" 3200001
	run_bad sysfs-capacity-text "Invalid argument" sysfs_write "$b/members/rxe0/capacity_mbps" fast
	run_bad sysfs-ro-utilisation "Permission denied" sysfs_write "$b/members/rxe0/utilisation" 5
	run_bad capacity-too-big "integer out of range" "$CTL" member set mrbond0 rxe0 capacity-mbps 3200001
	run_bad sysfs-ro-mode "Permission denied" sysfs_write "$b/mode" active-backup
	run_bad nonroot-sysfs-write "Permission denied" as_nobody sh -c "echo rr > $b/policy"
	run_bad nonroot-netlink "Operation not permitted" as_nobody "$CTL" bond set mrbond0 policy rr
	run_bad nonroot-bond-del "Operation not permitted" as_nobody "$CTL" bond del mrbond0
	echo "$fails refused-input case(s) failed"
	((fails == 0))
}

# Defect: MEMBER_ADD took a device listed twice into two slots (BOND_NEW
# refused it; a raw MEMBER_ADD did not).
test_regress_member_add_duplicate() {
	local fails=0
	run_bad() { bad_input "$@" || fails=$((fails + 1)); }
	# An active-backup bond has room for both: only the check refuses.
	"$CTL" bond add mrbond8 mode active-backup member rxea || return 1
	run_bad ynl-member-add-duplicate "member listed twice" \
		ynl --do member-add --json '{"name": "mrbond8", "member": [{"ibdev": "rxe2"}, {"ibdev": "rxe2"}]}'
	"$CTL" bond del mrbond8 || fails=$((fails + 1))
	((fails == 0))
}

# Defect: the genl family answered every network namespace, and `rdma link
# add` resolved the caller's netdev by ifindex in init_net, where bonds
# live: another namespace's request must be refused, with a reason.
test_regress_netns() {
	local fails=0 out
	run_bad() { bad_input "$@" || fails=$((fails + 1)); }
	ip netns add mrbns || return 1
	ip link add nd0 type dummy && ip link set nd0 netns mrbns || return 1
	run_bad netns-bond-add "initial network namespace" \
		ip netns exec mrbns "$CTL" bond add mrbond9 member rxe2
	run_bad netns-bond-show "initial network namespace" \
		ip netns exec mrbns "$CTL" bond show mrbond0
	run_bad netns-bond-dump "initial network namespace" ip netns exec mrbns "$CTL" bond show
	run_bad netns-policy-set "initial network namespace" \
		ip netns exec mrbns "$CTL" bond set mrbond0 policy lqf
	if out=$(ip netns exec mrbns rdma link add mrbond9 type mrbond netdev nd0 2>&1); then
		echo "netns-rdma-link-add: accepted"
		fails=$((fails + 1))
	fi
	dmesg | grep -q 'rdma link add mrbond9: nd0 is not in the initial network namespace' ||
		{ echo "netns-rdma-link-add: no reason logged ($out)"; fails=$((fails + 1)); }
	[[ ! -e $SYS/mrbond9 ]] || { echo "mrbond9 was created"; fails=$((fails + 1)); }
	ip netns del mrbns
	((fails == 0))
}

# Defect: sysfs numbers parsed differently by file (ecn/ and pfc/ took
# "7\n\n" and refused "+7", weight the opposite). Both now take what
# kstrtou64 takes: an optional '+', one trailing newline at most.
test_sysfs_numbers_parse_alike() {
	local b=$SYS/mrbond0/mrbond rc=0 f
	for f in "$b/members/rxe0/weight" "$b/ecn/rp_rpg_gd"; do
		echo +7 >"$f" || { echo "$f: +7 refused"; rc=1; }
		[[ $(cat "$f") == 7 ]] || { echo "$f: $(cat "$f") after +7"; rc=1; }
		printf '7\n\n' >"$f" 2>/dev/null && { echo "$f: 7 and two newlines accepted"; rc=1; }
	done
	echo 100 >"$b/members/rxe0/weight" && echo 11 >"$b/ecn/rp_rpg_gd" || rc=1
	return $rc
}

test_link_ops() {
	rdma link add mrb1 type mrbond netdev m2 || return 1
	[[ $(cat "$SYS/mrb1/mrbond/member_list") == rxe2 ]] || return 1
	rdma link del mrb1 || return 1
	[[ ! -e $SYS/mrb1 ]] || { echo "mrb1 still there"; return 1; }
	! "$CTL" bond show mrb1 >/dev/null 2>&1 || { echo "registry kept mrb1"; return 1; }
}

# Each admin change: the setting (bond-change member-set), then the
# member's usability (member-change).
test_monitor_events() {
	"$CTL" -j monitor --count 4 --timeout 20 >"$TB_TMP/events" 2>&1 &
	local pid=$!
	sleep 1
	"$CTL" member set mrbond0 rxe0 admin down || return 1
	wait_for 10 eval '[[ $(member_attr mrbond0 rxe0 state) == unusable ]]' || return 1
	"$CTL" member set mrbond0 rxe0 admin up || return 1
	wait "$pid" || { echo "monitor saw fewer than 4 events"; cat "$TB_TMP/events"; return 1; }
	cat "$TB_TMP/events"
	grep -q '"admin-down"' "$TB_TMP/events" && grep -q '"ready"' "$TB_TMP/events" &&
		[[ $(grep -c '"changes":\["member-set"\]' "$TB_TMP/events") == 2 ]]
}

# monitor also reports a bond created and deleted, and its settings and
# knobs changed, through netlink or sysfs, in order (member-change events,
# which the new member and the PFC quiescing cause, come in between).
test_monitor_bond_events() {
	"$CTL" -j monitor --timeout 15 >"$TB_TMP/bevents" 2>&1 &
	local pid=$! got
	sleep 1
	"$CTL" bond add mrbond6 member rxe2 || return 1
	"$CTL" bond set mrbond6 policy rr || return 1
	echo 0 >"$SYS/mrbond6/mrbond/ecn/enable" || return 1
	"$CTL" pfc set mrbond6 prio-pfc 3:on 2>/dev/null || return 1
	[[ $(cat "$SYS/mrbond6/mrbond/pfc/enable_bitmap") == 0x08 ]] || return 1
	"$CTL" bond del mrbond6 || return 1
	wait "$pid" || { echo "monitor failed"; cat "$TB_TMP/bevents"; return 1; }
	cat "$TB_TMP/bevents"
	got=$(jq -r 'select(.event == "bond-change" and .ifname == "mrbond6") | .changes | join(",")' \
		"$TB_TMP/bevents" | paste -sd' ')
	[[ $got == "created policy ecn pfc deleted" ]] || { echo "events: $got"; return 1; }
	"$CTL" monitor --count 1 --timeout 10 >"$TB_TMP/btext" &
	pid=$!
	sleep 1
	"$CTL" bond set mrbond0 policy wrr || return 1
	wait "$pid" && grep -qx 'mrbond0: bond policy' "$TB_TMP/btext" || { cat "$TB_TMP/btext"; return 1; }
}

ab_port_netdev() { rdma link show mrbab/1 | grep -o 'netdev [^ ]*' | cut -d' ' -f2; }

test_active_backup_failover() {
	rdma link add mrbab type mrbond netdev ab0 || return 1
	[[ $(cat "$SYS/mrbab/mrbond/mode") == active-backup ]] || return 1
	wait_for 10 eval '[[ $(member_attr mrbab rxea state) == usable && $(member_attr mrbab rxeb state) == unusable ]]' ||
		{ echo "rxea $(member_attr mrbab rxea state), rxeb $(member_attr mrbab rxeb state)"; return 1; }
	wait_for 10 eval '[[ $(ab_port_netdev) == a0 ]]' || { echo "port 1 on $(ab_port_netdev)"; return 1; }
	# roce_gid_mgmt gives the bond's IP GIDs to the active slave's port only.
	wait_for 10 gid_index_of mrbab 198.18.20.1 >/dev/null || { echo "no bond IP GID on mrbab"; return 1; }
	ip link set ab0 type bond active_slave b0 || return 1
	wait_for 10 eval '[[ $(member_attr mrbab rxeb state) == usable && $(member_attr mrbab rxea state) == unusable ]]' ||
		{ echo "after failover: rxea $(member_attr mrbab rxea state), rxeb $(member_attr mrbab rxeb state)"; return 1; }
	wait_for 10 eval '[[ $(ab_port_netdev) == b0 ]]' || { echo "port 1 stayed on $(ab_port_netdev)"; return 1; }
	wait_for 10 gid_index_of mrbab 198.18.20.1 >/dev/null ||
		{ echo "bond IP GID did not follow the active slave"; return 1; }
	echo "active member moved to rxeb, port 1 now on $(ab_port_netdev), bond IP GID index $(gid_index_of mrbab 198.18.20.1)"
	rdma link del mrbab
}

test_destroy_netlink() {
	"$CTL" bond add mrbond5 member rxe2 || return 1
	"$CTL" bond del mrbond5 || return 1
	[[ ! -e $SYS/mrbond5 ]]
}

test_unload_with_bonds() {
	"$CTL" bond add mrbond7 member rxe2 || return 1
	modprobe -r rdma_mrbond || return 1
	[[ ! -e $SYS/mrbond0 && ! -e $SYS/mrbond7 ]] || { echo "bond devices left behind"; return 1; }
	rdma dev show rxe0 >/dev/null || { echo "members harmed"; return 1; }
}

ktap_header 20
if ! out=$(setup_t0 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! T0 setup failed"
	exit 1
fi
modprobe rdma_mrbond || { echo "Bail out! modprobe rdma_mrbond"; exit 1; }
run_test create_through_netlink test_create_netlink
run_test rdma_statistic_counters test_statistic
run_test port_attributes test_port_attributes
run_test device_attributes test_device_attributes
run_test sysfs_writes_apply test_sysfs_writes
run_test member_removed_and_readded test_member_loss
run_test member_netdev_down_up test_link_down_member
run_test refused_inputs_change_nothing test_bad_inputs
run_test regress_member_add_duplicate test_regress_member_add_duplicate
run_test regress_netns test_regress_netns
run_test regress_sysfs_numbers_parse_alike test_sysfs_numbers_parse_alike
run_test create_destroy_rdma_link test_link_ops
run_test create_destroy_netlink test_destroy_netlink
run_test monitor_member_events test_monitor_events
run_test monitor_bond_events test_monitor_bond_events
run_test active_backup_follows_failover test_active_backup_failover
run_test notifier_reaction_logged eval 'dmesg | grep -E "rdma_mrbond: member rxe1: usable -> unusable .* us after the netdev event"'
run_test no_vdev_as_member eval '! dmesg | grep -q "sees RDMA device mrbond"'
kmemleak_test
run_test unload_with_bonds_present test_unload_with_bonds
ktap_totals
[[ $KTAP_FAIL == 0 ]]
