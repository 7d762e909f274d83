#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T0, one guest: bonds from their configuration files, as a host
# brings them back at boot. `mrbondctl apply` over a bond file whose second
# member is not there yet (HCAs come up one by one), the bond put ahead of
# its members in rdma_cm's device order, applying twice, a member arriving
# and coming back, and the udev rule that starts the bond's unit when a
# member device appears (tools/install/).
. "$(dirname "$0")/lib.sh"

CTL=${MRBOND_CTL:?path of mrbondctl}
SYS=/sys/class/infiniband
CONF=$TB_TMP/etc-rdma_mrbond  # stands for /etc/rdma_mrbond
apply() { "$CTL" apply --config-dir "$CONF" "$@"; }
member_attr() { cat "$SYS/mrbond0/mrbond/members/$1/$2"; }

setup() {
	modprobe veth && modprobe rdma_rxe || return 1
	ip link add i0 type veth peer name i1 || return 1
	ip link add i2 type veth peer name i3 || return 1
	for d in i0 i1 i2 i3; do ip link set "$d" up || return 1; done
	# Registered before the bond, as an HCA is at boot.
	rdma link add rxe0 type rxe netdev i0 || return 1
	modprobe rdma_mrbond || return 1
	mkdir -p "$CONF"
	cat >"$CONF/mrbond0.conf" <<-EOF
	# two rails; rxe1 comes later
	mode rail
	policy lqf
	member rxe0 weight 200
	member rxe1
	EOF
}

# rxe1 not there yet: a rail bond (a port per member, fixed when it is
# registered) waits for it; once it is, the bond over both, and both
# members, registered before it, registered again behind it.
test_apply_creates() {
	local out member
	out=$(apply 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[[ $out == 'mrbond0: waiting for rxe1 (no such RDMA device yet)' ]] || return 1
	[[ ! -e $SYS/mrbond0 ]] || { echo "a rail bond made without its second port"; return 1; }
	rdma link add rxe1 type rxe netdev i2 || return 1
	out=$(apply 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -qx 'bond add mrbond0 mode rail policy lqf member rxe0 weight 200 member rxe1' <<<"$out" &&
		grep -q '^re-register rxe0 ' <<<"$out" && grep -q '^re-register rxe1 ' <<<"$out" || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/policy") == lqf && $(member_attr rxe0 weight) == 200 ]] || return 1
	# (not `i`: wait_for's own counter would hide it from the eval)
	for member in rxe0 rxe1; do
		wait_for 15 eval '[[ $(member_attr $member state) == usable ]]' ||
			{ echo "$member: $(member_attr "$member" state) $(member_attr "$member" reason)"; return 1; }
		(($(dev_index "$member") > $(dev_index mrbond0))) ||
			{ echo "$member still ahead: $(rdma dev show)"; return 1; }
	done
}

# A second run changes nothing; --dry-run says so too.
test_apply_idempotent() {
	local before out
	before=$(bond_config)
	out=$(apply 2>&1) || { echo "$out"; return 1; }
	[[ $out == 'mrbond0: as configured' ]] || { echo "second run: $out"; return 1; }
	[[ $(bond_config) == "$before" ]] || { echo "state changed"; return 1; }
	out=$(apply --dry-run 2>&1) || return 1
	[[ $out == 'mrbond0: as configured' ]] || { echo "dry run: $out"; return 1; }
}

# A member's device going and coming back keeps its slot (the kernel); a
# member taken out of the bond is put back by the next run (its unit's, when
# udev sees the device again).
test_member_readd() {
	local out
	rdma link del rxe1 && rdma link add rxe1 type rxe netdev i2 || return 1
	wait_for 15 eval '[[ $(member_attr rxe1 state) == usable ]]' ||
		{ echo "rxe1 after coming back: $(member_attr rxe1 state)"; return 1; }
	[[ $(apply 2>&1) == 'mrbond0: as configured' ]] || { apply; return 1; }
	"$CTL" member del mrbond0 rxe1 || return 1
	out=$(apply 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -qx 'member add mrbond0 rxe1' <<<"$out" || return 1
	wait_for 15 eval '[[ $(member_attr rxe1 state) == usable ]]' || return 1
	[[ $(apply 2>&1) == 'mrbond0: as configured' ]] || { apply; return 1; }
}

# A member's device renamed (`rdma dev set`, as rdma-core's stable naming
# does at boot): the member follows, its sysfs directory with it; an absent
# member gets back a device renamed to its name.
test_rename_followed() {
	local m=$SYS/mrbond0/mrbond/members
	rdma dev set rxe1 name rxr1 || return 1
	wait_for 10 eval '[[ -d $m/rxr1 ]]' || { echo "members/: $(ls "$m")"; return 1; }
	[[ ! -e $m/rxe1 ]] || { echo "members/rxe1 still there"; return 1; }
	[[ $(cat "$SYS/mrbond0/mrbond/member_list") == "rxe0 rxr1" ]] ||
		{ echo "member_list: $(cat "$SYS/mrbond0/mrbond/member_list")"; return 1; }
	[[ $(member_attr rxr1 state) == usable ]] || { echo "rxr1: $(member_attr rxr1 state)"; return 1; }
	"$CTL" member show mrbond0 rxr1 | grep -q '^    rxr1 ' || { "$CTL" member show mrbond0; return 1; }
	dmesg | grep -q 'rdma_mrbond: member rxe1 is now rxr1' || return 1
	rdma dev set rxr1 name rxe1 || return 1
	wait_for 10 eval '[[ -d $m/rxe1 ]]' || { echo "members/: $(ls "$m")"; return 1; }
	rdma link del rxe1 || return 1
	wait_for 10 eval '[[ $(member_attr rxe1 reason) == device-absent ]]' || return 1
	rdma link add rxz type rxe netdev i2 && rdma dev set rxz name rxe1 || return 1
	wait_for 15 eval '[[ $(member_attr rxe1 state) == usable ]]' ||
		{ echo "rxe1: $(member_attr rxe1 state) $(member_attr rxe1 reason)"; return 1; }
	dmesg | grep -q 'rdma_mrbond: member rxe1 is back (renamed to it)' || return 1
	[[ $(apply 2>&1) == 'mrbond0: as configured' ]] || { apply; return 1; }
}

# Defect: following a rename renamed the member in the bond's state, then
# replaced its sysfs directory with no lock held: a member del and add in
# between, the slot freed and taken again, cost the new member its
# directory, and the departed member's new name got one. The follower
# waits in between (rename_follow); the del and the add must wait for it
# (the bond's membership lock), and the directories must then be the
# members'.
test_regress_rename_vs_member_readd() {
	local m=$SYS/mrbond0/mrbond/members h pid rc=0 dirs
	rdma link add rxs type rxe netdev i3 || return 1
	h=$(inject_hits rename_follow)
	kmark rename-race
	inject_arm rename_follow 6000 || return 1
	rdma dev set rxe1 name rxr1 || return 1
	wait_for 10 eval '(($(inject_hits rename_follow) > h))' || { echo "the rename was never followed"; rc=1; }
	{ "$CTL" member del mrbond0 rxr1 && "$CTL" member add mrbond0 rxs; } &
	pid=$!
	wait_pid 30 "$pid" || { echo "member del and add: failed"; rc=1; }
	wait_for 15 eval 'klog_after rename-race | grep -q "rename_follow: resumed"' || rc=1
	dirs=$(ls "$m" | tr '\n' ' ')
	echo "members/: $dirs; member_list: $(cat "$SYS/mrbond0/mrbond/member_list")"
	if [[ $dirs == "rxe0 rxs " && $(cat "$SYS/mrbond0/mrbond/member_list") == "rxe0 rxs" ]]; then
		wait_for 15 eval '[[ $(member_attr rxs state) == usable ]]' || rc=1
	else
		rc=1
	fi
	"$CTL" member del mrbond0 rxs && rdma link del rxs || rc=1
	rdma dev set rxr1 name rxe1 && "$CTL" member add mrbond0 rxe1 || rc=1
	wait_for 15 eval '[[ $(member_attr rxe1 state) == usable ]]' || rc=1
	[[ $(apply 2>&1) == 'mrbond0: as configured' ]] || { apply; rc=1; }
	return $rc
}

# The bond's own device renamed (`rdma dev set`): a bond is named by its
# device, read when asked, so netlink, sysfs and mrbondctl follow it, and
# the old name is free; renamed back, its file finds it as configured.
test_bond_rename_followed() {
	local rc=0
	rdma dev set mrbond0 name mrbondz || return 1
	[[ -d $SYS/mrbondz/mrbond && ! -e $SYS/mrbond0 ]] || { ls "$SYS"; rc=1; }
	"$CTL" bond show mrbondz | grep -q '^mrbondz:' || { "$CTL" bond show; rc=1; }
	! "$CTL" bond show mrbond0 >/dev/null 2>&1 || { echo "mrbond0 still answers"; rc=1; }
	"$CTL" bond set mrbondz policy rr && [[ $(cat "$SYS/mrbondz/mrbond/policy") == rr ]] || rc=1
	"$CTL" bond set mrbondz policy lqf || rc=1
	rdma dev set mrbondz name mrbond0 || return 1
	[[ $(apply 2>&1) == 'mrbond0: as configured' ]] || { apply; rc=1; }
	return $rc
}

# The udev rule, as installed but pointing at this tree's mrbondctl and
# configuration: a device a bond file names gets that bond's unit in
# SYSTEMD_WANTS, one no file names gets none.
test_udev_wants() {
	local rules=/run/udev/rules.d/90-rdma-mrbond.rules rc=0
	pgrep -x systemd-udevd >/dev/null || pgrep -f udevd >/dev/null ||
		{ echo "no udevd in this guest"; return 1; }
	mkdir -p /run/udev/rules.d
	sed "s|/usr/local/bin/mrbondctl apply|$CTL apply --config-dir $CONF|" \
		"$MRBOND_ROOT/tools/install/90-rdma-mrbond.rules" >"$rules" || return 1
	grep -q -- "--config-dir $CONF --units-for %k" "$rules" || { cat "$rules"; return 1; }
	udevadm control --reload || return 1
	echo "member rxe9" >"$CONF/mrbond9.conf"
	rdma link add rxe9 type rxe netdev i1 && rdma link add rxe8 type rxe netdev i3 || rc=1
	udevadm settle -t 30
	# Beside rdma-core's own units.
	udevadm info -q property "$SYS/rxe9" | grep -q '^SYSTEMD_WANTS=\(.* \)\?rdma-mrbond@mrbond9\.service\( \|$\)' ||
		{ udevadm info -q property "$SYS/rxe9"; rc=1; }
	! udevadm info -q property "$SYS/rxe8" | grep -q 'RDMA_MRBOND_UNITS\|rdma-mrbond@' ||
		{ echo "rxe8, in no file, got a unit"; rc=1; }
	rm -f "$rules" "$CONF/mrbond9.conf"
	udevadm control --reload
	rdma link del rxe9; rdma link del rxe8
	return $rc
}

# The module as DKMS built it against this kernel's headers package
# (tools/install/test-dkms.sh, run by the test command before this suite,
# leaves its DKMS tree in MRBOND_DKMS): `dkms install` puts it in the
# kernel's module tree, and a plain modprobe loads it in place of the test
# build: its version is dkms.conf's, it has no fault-injection points, and
# it makes a bond. The guest's module tree is the host's, read only: the
# install and its depmod write into an overlay, unmounted afterwards, so
# that the suite's later modprobes load the test build again.
test_modprobe_after_dkms() {
	local d=${MRBOND_DKMS:-} rel mods want rc=0
	[[ -d $d/dkms ]] || { echo "no DKMS tree (MRBOND_DKMS=$d)"; return 1; }
	rel=$(uname -r)
	want=$(make -s -C "$MRBOND_ROOT" version)
	mods=$(readlink -f "/lib/modules/$rel")
	mkdir -p /run/dkms-mods/upper /run/dkms-mods/work
	mount -t overlay overlay \
		-o "lowerdir=$mods,upperdir=/run/dkms-mods/upper,workdir=/run/dkms-mods/work" "$mods" || return 1
	dkms_installed "$d" "$rel" "$want" || rc=1
	! grep -q '^rdma_mrbond ' /proc/modules || rmmod rdma_mrbond || rc=1
	# Lazily: udevd keeps the module index it read open.
	umount -l "$mods" || rc=1
	rm -rf /run/dkms-mods
	return $rc
}
dkms_installed() {  # DKMS_OUT RELEASE VERSION
	local dkms=(dkms --dkmstree "$1/dkms" --sourcetree "$1/src" -k "$2"
		--kernelsourcedir "$1/root/usr/src/linux-headers-$2")
	"${dkms[@]}" install "rdma_mrbond/$3" || return 1
	"${dkms[@]}" status
	rmmod rdma_mrbond || return 1  # the test build, its bonds gone
	modprobe rdma_mrbond || return 1
	[[ $(modinfo -n rdma_mrbond) == */updates/dkms/rdma_mrbond.ko* ]] ||
		{ echo "modprobe found $(modinfo -n rdma_mrbond), not DKMS's"; return 1; }
	local want=$3
	[[ $(cat /sys/module/rdma_mrbond/version) == "$want" ]] ||
		{ echo "version $(cat /sys/module/rdma_mrbond/version), dkms.conf says $want"; return 1; }
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	[[ ! -e /sys/kernel/debug/rdma_mrbond/inject ]] || { echo "fault injection in a DKMS build"; return 1; }
	"$CTL" bond add mrbond7 member rxe0 member rxe1 || return 1
	wait_for 15 eval '[[ $(cat $SYS/mrbond7/mrbond/members/rxe0/state) == usable ]]' || return 1
	"$CTL" bond del mrbond7 && rmmod rdma_mrbond
}

# What systemd runs for rdma-mrbond@mrbond0.service, read from the unit
# (ExecStartPre, ExecStart, %i given), with the module not loaded, as at
# boot: the module loads and the bond comes from its file. (This guest's
# init is not systemd; the unit's syntax is checked on the host by
# tools/install/check-unit.sh.)
test_unit_commands() {
	local unit=$MRBOND_ROOT/tools/install/rdma-mrbond@.service line cmd
	! grep -q '^rdma_mrbond ' /proc/modules || rmmod rdma_mrbond || return 1
	grep -qx 'ConditionPathExists=/etc/rdma_mrbond/%i.conf' "$unit" || return 1
	while IFS= read -r line; do
		cmd=${line#*=}
		cmd=${cmd//%i/mrbond0}
		cmd=${cmd/\/usr\/local\/bin\/mrbondctl apply/$CTL apply --config-dir $CONF}
		echo "+ $cmd"
		$cmd || return 1
	done < <(grep -E '^ExecStart(Pre)?=' "$unit")
	[[ $(cat "$SYS/mrbond0/mrbond/member_list") == "rxe0 rxe1" ]] || return 1
	wait_for 15 eval '[[ $(member_attr rxe1 state) == usable ]]' || return 1
	"$CTL" bond del mrbond0 && rmmod rdma_mrbond
}

ktap_header 10
if ! out=$(setup 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! setup failed"
	exit 1
fi
run_test persist_apply_creates_bond test_apply_creates
run_test persist_apply_idempotent test_apply_idempotent
run_test persist_member_readd test_member_readd
run_test rename_followed test_rename_followed
run_test regress_rename_vs_member_readd test_regress_rename_vs_member_readd
run_test bond_rename_followed test_bond_rename_followed
run_test persist_udev_wants test_udev_wants
run_test bond_del eval '"$CTL" bond del mrbond0'
run_test install_modprobe_after_dkms test_modprobe_after_dkms
run_test persist_unit_commands_create_bond test_unit_commands
ktap_totals
[[ $KTAP_FAIL == 0 ]]
