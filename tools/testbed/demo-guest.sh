#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, run in both T1 guests: bring up the rails, load rdma_mrbond with a
# plain modprobe, show what it sees, push RoCE traffic over every rail and
# print the per-rail RoCE counters. Every step is also a KTAP result, so the
# runner notices when the demo breaks.
. "$MRBOND_ROOT/selftests/rdma_mrbond/lib.sh"

show_members() {
	echo "RDMA links:"
	rdma link show
	echo "rdma_mrbond kernel log:"
	dmesg | grep 'rdma_mrbond:'
}

show_lacp() {
	local i nic
	printf '%-6s %-10s %-6s %-12s %-14s\n' link slave mii actor_state partner_state
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i")
		printf '%-6s %-10s %-6s %-12s %-14s\n' "l$i" "$nic" "$(slave_info "$nic" mii_status)" \
			"$(slave_info "$nic" ad_actor_oper_port_state)" \
			"$(slave_info "$nic" ad_partner_oper_port_state)"
	done
}

show_counters() {
	local i
	printf '%-6s %-6s %-16s %12s %12s %14s %14s\n' rail member address \
		sent_pkts rcvd_pkts sent_bytes rcvd_bytes
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		printf '%-6s %-6s %-16s %12s %12s %14s %14s\n' "r$i" "rxe$i" \
			"$(rail_ip "$i" "$(role_index)")" \
			"$(hw_counter "rxe$i" sent_pkts)" "$(hw_counter "rxe$i" rcvd_pkts)" \
			"$(cat "/sys/class/net/r$i/statistics/tx_bytes")" \
			"$(cat "/sys/class/net/r$i/statistics/rx_bytes")"
	done
}

show_bond() {
	"$MRBOND_CTL" bond show mrbond0
	echo "rdma statistic:"
	rdma statistic show link mrbond0/1
}

# A cable pull on rail 0, seen live by the bond on both guests.
demo_cable_pull() {
	local t0
	cable 0 down || return 1
	t0=$(date +%s%N)
	wait_for 15 eval '[[ $(cat /sys/class/infiniband/mrbond0/mrbond/members/rxe0/state) == unusable ]]' ||
		return 1
	echo "rxe0 unusable $((($(date +%s%N) - t0) / 1000000)) ms after the cable pull:"
	show_bond
	dmesg | grep 'member rxe0: usable -> unusable' | tail -n 1
	cable 0 up || return 1
	wait_for 60 eval '[[ $(cat /sys/class/infiniband/mrbond0/mrbond/members/rxe0/state) == usable ]]' ||
		return 1
	echo "rxe0 usable again:"
	show_bond
}

ktap_header $((3 + 2 * MRBOND_LINKS + 4))
run_test t1_setup setup_t1
barrier setup || exit 1
run_test lacp_converged wait_for 60 lacp_converged_now
show_lacp | sed 's/^/# /'
run_test modprobe_rdma_mrbond modprobe rdma_mrbond
show_members | sed 's/^/# /'
for ((rail = 0; rail < MRBOND_LINKS; rail++)); do
	run_test "rail${rail}_rc_pingpong" rail_rc_pingpong "$rail"
	run_test "rail${rail}_ib_write_bw" rail_write_bw "$rail"
done
ktap_diag "per-rail RoCE traffic counters on $MRBOND_ROLE:"
show_counters | sed 's/^/# /'
run_test bond_over_rails rdma link add mrbond0 type mrbond netdev bond0
show_bond | sed 's/^/# /'
run_test members_usable wait_for 15 eval '[[ $(cat /sys/class/infiniband/mrbond0/mrbond/usable) == '"$MRBOND_LINKS"' ]]'
run_test cable_pull_seen_live demo_cable_pull
run_test modprobe_remove_rdma_mrbond modprobe -r rdma_mrbond
ktap_totals
