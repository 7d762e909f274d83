#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, run in both T1 guests: bring up the rails, load rdma_mrbond,
# check RoCE on every rail, build mrbond0 over bond0's slaves, then push
# traffic through mrbond0 (mrbond_xperf, hosta writing to hostb) while rail
# 0's cable is pulled and put back, printing the rails' rates live. Every
# step is also a KTAP result, so the runner notices when the demo breaks.
. "$MRBOND_ROOT/selftests/rdma_mrbond/lib.sh"
. "$MRBOND_ROOT/tools/bench/xperf-lib.sh"

ME=$(role_index)
RAW=$MRBOND_RUN/demo
SERVER_MS=90000
DEMO_CONNS=4
PULL_AT=6 PLUG_AT=13 RUN_S=22

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

# The bond and its members; not the knobs' long lines (t0_knobs.sh tests them).
show_bond() {
	"$MRBOND_CTL" bond show mrbond0 | grep -vE '^ *(ecn|dcqcn|counters):|^ *[a-z]+[0-9]+: '
	echo "rdma statistic:"
	rdma statistic show link mrbond0/1
}

# Every 0.5 s while PID runs: each rail's rate over the last interval, by
# the wall clock. Builtins only but the sleep: a fork costs under TCG.
live_rates() {  # live_rates PID
	local i t0 t1 tp prev=() now=() line part total rate fd
	t0=${EPOCHREALTIME/./} tp=$t0
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		read -r "prev[i]" <"/sys/class/net/${RAIL_NICS[i]}/statistics/tx_bytes"
	done
	exec {fd}<> <(:)
	while kill -0 "$1" 2>/dev/null; do
		read -r -t 0.5 -u "$fd" _
		t1=${EPOCHREALTIME/./}
		printf -v line '%3d.%d s' $(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10))
		total=0
		for ((i = 0; i < MRBOND_LINKS; i++)); do
			read -r "now[i]" <"/sys/class/net/${RAIL_NICS[i]}/statistics/tx_bytes"
			rate=$(((now[i] - prev[i]) * 8 / (t1 - tp)))  # bits per us = Mbit/s
			total=$((total + rate))
			printf -v part '   rail%d %3d Mbit/s' "$i" "$rate"
			line+=$part
			prev[i]=${now[i]}
		done
		tp=$t1
		echo "# $line   total $total Mbit/s"
	done
}

member0_state() { cat "$SYS/mrbond0/mrbond/members/$(member_name 0)/state"; }

# hosta writes to hostb through mrbond0 over DEMO_CONNS connections for
# RUN_S seconds; rail 0's cable is pulled PULL_AT seconds after every
# connection carries data (opening them takes seconds under TCG, more on a
# loaded host, which once had the pull come before any traffic) and put
# back at PLUG_AT. The connections on rail 0 fail when their member does (the bond
# flushes their WRs) and the others go on (keep_going); then a second,
# short run shows new connections on rail 0 again. Prints as it goes, so
# that the demo shows it live.
demo_traffic() {
	local out=$RAW/traffic rc=0 printer i
	mkdir -p "$out"
	if [[ $MRBOND_ROLE == hostb ]]; then
		xperf_bg "$out/server.kv" "role=server local=$(service_ip 1) conns=$DEMO_CONNS" \
			"keep_going=1 timeout_ms=$SERVER_MS"
		xperf_listening demo-listening || return 1
	else
		xperf_listening demo-listening || return 1
		timeline_start "$out" || rc=1
		xperf_bg "$out/client.kv" "role=client local=$(service_ip 0) peer=$(service_ip 1)" \
			"dev=mrbond0 conns=$DEMO_CONNS mode=write size=65536" \
			"duration_ms=$((RUN_S * 1000)) keep_going=1"
		echo "# $DEMO_CONNS connections writing through mrbond0 (rates are each rail's, hosta's side):"
		live_rates "$XP_PID" &
		printer=$!
		wait_until 120 grep -qx running "$XP/state" || { echo "xperf never ran"; rc=1; }
		# What the check weighs before the pull, seen by the sampler.
		wait_until 60 rails_moved "$out/rails.csv" 1000000 ||
			{ echo "not every rail carried 1 MB before the pull"; rc=1; }
	fi
	barrier demo-running || return 1
	sleep "$PULL_AT"
	timeline_mark "$out" pull
	[[ $MRBOND_ROLE == hosta ]] && echo "# >>> rail 0's cable pulled"
	cable 0 down || rc=1
	[[ $MRBOND_ROLE == hosta ]] &&
		wait_for 15 eval '[[ $(member0_state) == unusable ]]' &&
		echo "# >>> $(member_name 0) unusable; the connections on rail 1 go on"
	sleep $((PLUG_AT - PULL_AT))
	timeline_mark "$out" plug
	[[ $MRBOND_ROLE == hosta ]] && echo "# >>> rail 0's cable back"
	cable 0 up || rc=1
	[[ $MRBOND_ROLE == hosta ]] && wait_for 60 eval '[[ $(member0_state) == usable ]]' &&
		echo "# >>> $(member_name 0) usable again: new connections may land on it"
	wait "$XP_PID" || rc=1
	if [[ $MRBOND_ROLE == hosta ]]; then
		wait "$printer"
		timeline_end "$out"
		echo "# $(grep -E '^(mbps|conns_broken|duplicates|lost|status)=' "$out/client.kv" | tr '\n' ' ')"
	fi
	dmesg >"$out/dmesg.$MRBOND_ROLE"
	barrier demo-run1 || return 1
	# New connections, rail 0 back: the bond places them on both rails again.
	xperf_pair demo/after-plug "local=$(service_ip 1) conns=$DEMO_CONNS" -- \
		"local=$(service_ip 0) peer=$(service_ip 1) dev=mrbond0 conns=$DEMO_CONNS" \
		"mode=write size=65536 duration_ms=4000" >/dev/null || rc=1
	demo_check "$out" || rc=1
	return $rc
}

# What the demo must have shown: traffic on both rails through mrbond0,
# traffic on rail 1 while rail 0 was down, exactly-once completions, rail 0
# used again by the new connections.
demo_check() {
	local out=$1 rc=0 after
	[[ $MRBOND_ROLE == hosta ]] || { grep -qx status=ok "$out/server.kv" || { echo "server: $(grep -E '^(status|error)=' "$out/server.kv")"; rc=1; }; return $rc; }
	grep -qx status=ok "$out/client.kv" || { echo "client: $(grep -E '^(status|error)=' "$out/client.kv" | tr '\n' ' ')"; rc=1; }
	grep -q '^conn0=mrbond0,' "$out/client.kv" || { echo "the connections were not on mrbond0"; rc=1; }
	python3 - "$out" <<-'PY' || rc=1
	import sys
	out = sys.argv[1]
	marks = dict(l.split("=") for l in open(f"{out}/marks").read().split())
	rows = [list(map(float, l.split(","))) for l in open(f"{out}/rails.csv") if l.count(",")]
	pull, plug = float(marks["pull"]), float(marks["plug"])
	def moved(rail, t_from, t_to):
	    sel = [r for r in rows if t_from <= r[0] <= t_to]
	    return sel[-1][rail + 1] - sel[0][rail + 1] if len(sel) > 1 else 0
	before = [moved(i, rows[0][0], pull) for i in range(len(rows[0]) - 1)]
	during = moved(1, pull + 3, plug)
	print(f"bytes before the pull: {before}; rail 1 while rail 0 was down: {during}")
	ok = all(b > 1e6 for b in before) and during > 1e6
	sys.exit(0 if ok else 1)
	PY
	after=$(ls "$RAW"/demo/after-plug.hosta.before 2>/dev/null)
	if [[ -n $after ]]; then
		grep -qx status=ok "$RAW/demo/after-plug.hosta.kv" || { echo "the run after the plug failed"; rc=1; }
		echo "after the plug, rail 0 carried $(($(sed -n 's/^rail0.tx_bytes=//p' "$RAW/demo/after-plug.hosta.after") - $(sed -n 's/^rail0.tx_bytes=//p' "$after"))) bytes"
		(($(sed -n 's/^rail0.tx_bytes=//p' "$RAW/demo/after-plug.hosta.after") - $(sed -n 's/^rail0.tx_bytes=//p' "$after") > 1000000)) ||
			{ echo "rail 0 was not used again"; rc=1; }
	fi
	return $rc
}

# Every rail's member on its slave, with its rail's RoCE v2 GID.
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

ktap_header $((10 + 3 * MRBOND_LINKS))
run_test t1_setup eval 'setup_t1 && setup_service'
barrier setup || exit 1
run_test lacp_converged wait_for 60 lacp_converged_now
run_test rxe_members_on_rails test_rxe_members
show_lacp | sed 's/^/# /'
# cm_ports: the bond takes incoming requests for NVMe-oF's port and xperf's.
run_test modprobe_rdma_mrbond modprobe rdma_mrbond cm_ports=4420,$XP_PORT
show_members | sed 's/^/# /'
for ((rail = 0; rail < MRBOND_LINKS; rail++)); do
	run_test "rail${rail}_rc_pingpong" rail_rc_pingpong "$rail"
	run_test "rail${rail}_ib_write_bw" rail_write_bw "$rail"
done
ktap_diag "per-rail RoCE traffic counters on $MRBOND_ROLE:"
show_counters | sed 's/^/# /'
# The members re-created after the bond: rdma_cm binds an address to the
# first device holding it, and the bond must come first.
run_test bond_over_rails eval 'rdma link add mrbond0 type mrbond netdev bond0 && bond_ahead'
show_bond | sed 's/^/# /'
run_test members_usable wait_for 15 eval '[[ $(cat /sys/class/infiniband/mrbond0/mrbond/usable) == '"$MRBOND_LINKS"' ]]'
# Rails at 20 Mbit/s each (tbf): what a TCG guest's rxe can fill, and equal.
run_test rails_shaped eval 'shape_rails && modprobe mrbond_xperf'
barrier traffic || exit 1
# Not through run_test: its output is the demo, and must show as it happens.
if demo_traffic; then ktap_pass demo_traffic_over_bond; else ktap_fail demo_traffic_over_bond; fi
# After the pull: LACP converged again, and RoCE on every rail.
run_test lacp_converged_after_pull wait_for 60 lacp_converged_now
for ((rail = 0; rail < MRBOND_LINKS; rail++)); do
	run_test "rail${rail}_rc_pingpong_after_pull" rail_rc_pingpong "$rail"
done
run_test modprobe_remove_rdma_mrbond modprobe -r mrbond_xperf rdma_mrbond
ktap_totals
