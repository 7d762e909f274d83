#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T0 booted with systemd as init (testbed.py --systemd): the install
# as a host has it, on a root of its own (the host's, under an overlay) that
# holds `make -C tools install`'s unit, udev rule and mrbondctl, the bond file
# boot/mrbond0.conf and boot/mrbond-test-hcas.service, whose RoCE ports
# appear during boot as HCAs' do. Run at the end of the boot by the runner's
# own unit. Nothing here makes the bond: udev sees the ports arrive, starts
# rdma-mrbond@mrbond0.service through SYSTEMD_WANTS, and the unit applies
# the file.
. "$(dirname "$0")/lib.sh"

MRBOND_CTL=/usr/local/bin/mrbondctl CTL=/usr/local/bin/mrbondctl
SYS=/sys/class/infiniband
UNIT=rdma-mrbond@mrbond0.service
member_attr() { cat "$SYS/mrbond0/mrbond/members/$1/$2"; }
# What the unit's mrbondctl printed this boot, oldest first; after
# `journal_mark`, only what came since.
unit_log() {
	journalctl -b -q -o cat "_SYSTEMD_UNIT=$UNIT" SYSLOG_IDENTIFIER=mrbondctl | tail -n +$((${JOURNAL_MARK:-0} + 1))
}
journal_mark() { JOURNAL_MARK=0; JOURNAL_MARK=$(unit_log | wc -l); }
usable() { [[ $(member_attr "$1" state 2>/dev/null) == usable ]]; }
unit_diag() {
	systemctl status --no-pager "$UNIT" mrbond-test-hcas.service 2>&1 | head -40
	journalctl -b -q -o cat -u "$UNIT" | tail -20
}

# The file's bond, over both ports, with its knobs, ahead of its members in
# rdma_cm's device order, made by the unit that udev asked for.
test_boot_creates_bond() {
	local m
	wait_until 120 usable rxe1 || { echo "no bond over a usable rxe1 after boot"; unit_diag; return 1; }
	[[ $(cat "$SYS/mrbond0/mrbond/member_list") == "rxe0 rxe1" ]] || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/mode") == rail && $(cat "$SYS/mrbond0/mrbond/policy") == lqf ]] ||
		{ echo "mode $(cat "$SYS/mrbond0/mrbond/mode"), policy $(cat "$SYS/mrbond0/mrbond/policy")"; return 1; }
	[[ $(member_attr rxe0 weight) == 200 && $(member_attr rxe1 weight) == 100 ]] || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/ecn/enable") == 1 && $(cat "$SYS/mrbond0/mrbond/ecn/tclass") == 104 ]] ||
		{ "$CTL" ecn show mrbond0; return 1; }
	for m in rxe0 rxe1; do
		usable "$m" || { echo "$m: $(member_attr "$m" state) $(member_attr "$m" reason)"; return 1; }
		(($(dev_index "$m") > $(dev_index mrbond0))) || { echo "$m ahead of mrbond0: $(rdma dev show)"; return 1; }
		udevadm info -q property "$SYS/$m" | grep -q "^SYSTEMD_WANTS=\(.* \)\?$UNIT\( \|$\)" ||
			{ udevadm info -q property "$SYS/$m"; return 1; }
	done
	unit_log
	unit_log | grep -qx 'bond add mrbond0 mode rail policy lqf member rxe0 weight 200 member rxe1.*' ||
		{ echo "the unit did not make the bond"; return 1; }
	[[ $(systemctl show -p Result --value "$UNIT") == success ]] || { unit_diag; return 1; }
}

# A member taken out of the bond, and its device gone and back: udev starts
# the unit again, which puts it back.
test_boot_member_readd() {
	journal_mark
	"$CTL" member del mrbond0 rxe1 || return 1
	rdma link del rxe1 && rdma link add rxe1 type rxe netdev i2 || return 1
	wait_until 60 usable rxe1 || { echo "rxe1 not back in the bond"; unit_diag; return 1; }
	wait_until 30 eval 'unit_log | grep -qx "member add mrbond0 rxe1"' ||
		{ echo "not the unit's doing:"; unit_diag; return 1; }
}

# The unit started again with nothing to do changes nothing. (A run udev
# started late for the re-added device may land here too: it has nothing to
# do either.)
test_boot_apply_idempotent() {
	local before
	before=$(bond_config)
	journal_mark
	systemctl start "$UNIT" || { unit_diag; return 1; }
	[[ -n $(unit_log) && -z $(unit_log | grep -vx 'mrbond0: as configured') ]] ||
		{ unit_log; unit_diag; return 1; }
	[[ $(bond_config) == "$before" ]] || { echo "state changed"; return 1; }
}

ktap_header 3
run_test persist_boot_creates_bond test_boot_creates_bond
run_test persist_boot_member_readd test_boot_member_readd
run_test persist_boot_apply_idempotent test_boot_apply_idempotent
ktap_totals
[[ $KTAP_FAIL == 0 ]]
