#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T1 bench checks, run in both guests (hosta, hostb) by
# tools/testbed/testbed.py: LACP state, raw rxe RoCE on every rail, cable-pull
# faults through QMP, and loading/unloading rdma_mrbond.
. "$(dirname "$0")/lib.sh"

ME=$(role_index)

test_lacp_converged() {
	wait_for 60 lacp_converged_now && return 0
	grep -E 'Slave Interface|port state|Aggregator ID' /proc/net/bonding/bond0
	return 1
}

test_rxe_members() {
	local i nic
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i") || return 1
		rdma link show "rxe$i/1" | grep -qw "netdev $nic" ||
			{ echo "rxe$i not on slave $nic"; rdma link show; return 1; }
		gid_index_of "rxe$i" "$(rail_ip "$i" "$ME")" >/dev/null ||
			{ echo "rxe$i has no RoCE v2 GID for $(rail_ip "$i" "$ME")"; return 1; }
	done
}

test_rc_pingpong() { rail_rc_pingpong "$1"; }
test_write_bw() { rail_write_bw "$1"; }

slave_mii() { slave_info "$1" mii_status; }

test_link_down_seen() {
	local nic t0
	nic=$(slave_of_link 0) || return 1
	cable 0 down || return 1
	t0=$(date +%s%N)
	wait_for 15 eval '[[ $(slave_mii '"$nic"') == DOWN ]]' ||
		{ echo "bond0 slave $nic still $(slave_mii "$nic")"; return 1; }
	echo "bond0 slave $nic DOWN $((($(date +%s%N) - t0) / 1000000)) ms after the fault was injected"
}

test_link_up_restored() {
	local nic
	nic=$(slave_of_link 0) || return 1
	cable 0 up || return 1
	wait_for 15 eval '[[ $(slave_mii '"$nic"') == UP ]]' ||
		{ echo "bond0 slave $nic still $(slave_mii "$nic")"; return 1; }
	wait_for 60 lacp_converged_now ||
		{ echo "LACP did not converge again"; return 1; }
	echo "bond0 slave $nic UP and collecting/distributing again"
}

test_modprobe() {
	local i
	modprobe rdma_mrbond || return 1
	grep -q '^rdma_mrbond ' /proc/modules || { echo "not in /proc/modules"; return 1; }
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		dmesg | grep -qE "rdma_mrbond: sees RDMA device rxe$i$" ||
			{ echo "rdma_mrbond did not report rxe$i"; dmesg | grep rdma_mrbond; return 1; }
	done
	dmesg | grep 'rdma_mrbond:'
}

test_modprobe_remove() {
	modprobe -r rdma_mrbond || return 1
	! grep -q '^rdma_mrbond ' /proc/modules || { echo "still loaded"; return 1; }
	dmesg | grep -q 'rdma_mrbond: unloading' || { echo "no unload message"; return 1; }
}

ktap_header $((6 + 3 * MRBOND_LINKS))
ktap_diag "role $MRBOND_ROLE, $MRBOND_LINKS link(s), kernel $(uname -r)"
if ! out=$(setup_t1 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! T1 setup failed"
	exit 1
fi
barrier setup || { echo "Bail out! peer never set up"; exit 1; }

run_test lacp_collecting_distributing test_lacp_converged
run_test rxe_members_on_rails test_rxe_members
for ((rail = 0; rail < MRBOND_LINKS; rail++)); do
	run_test "rc_pingpong_rail$rail" test_rc_pingpong "$rail"
	run_test "ib_write_bw_rail$rail" test_write_bw "$rail"
done
run_test qmp_link_down_seen_by_bond test_link_down_seen
run_test qmp_link_up_restores_lacp test_link_up_restored
run_test modprobe_rdma_mrbond test_modprobe
run_test modprobe_remove_rdma_mrbond test_modprobe_remove
# RoCE must work again on every rail after the cable pull.
for ((rail = 0; rail < MRBOND_LINKS; rail++)); do
	run_test "rc_pingpong_rail${rail}_after_flap" test_rc_pingpong "$rail"
done
ktap_totals
[[ $KTAP_FAIL == 0 ]]
