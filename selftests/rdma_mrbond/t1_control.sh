#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T1 control plane, in both guests: `rdma link add mrbond0 type
# mrbond netdev bond0` makes a rail bond over the slaves' rxe members with the
# 802.3ad bond as LACP source; cable pulls (QMP) and LACP-only failures (the
# peer releases a slave) must make the member unusable and usable again.
# mrbond-exporter's scrape passes promtool, and a real Prometheus (hosta's)
# scraping it records a member going unusable through a cable pull.
. "$(dirname "$0")/lib.sh"

SYS=/sys/class/infiniband
ME=$(role_index)

member_attr() { cat "$SYS/mrbond0/mrbond/members/$1/$2"; }
member_is() { [[ $(member_attr "$1" state) == "$2" ]]; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

test_create() {
	modprobe rdma_mrbond || return 1
	rdma link add mrbond0 type mrbond netdev bond0 || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/mode") == rail ]] || return 1
	[[ $(cat "$SYS/mrbond0/mrbond/lacp_source") == bond0 ]] || return 1
	[[ $(tr '\n' ' ' <"$SYS/mrbond0/mrbond/member_list") == "rxe0 rxe1 " ]] ||
		{ echo "members: $(cat "$SYS/mrbond0/mrbond/member_list")"; return 1; }
	wait_for 10 member_is rxe0 usable && wait_for 10 member_is rxe1 usable ||
		{ echo "rxe0 $(member_attr rxe0 reason), rxe1 $(member_attr rxe1 reason)"; return 1; }
	[[ $(member_attr rxe0 lacp) == distributing ]] ||
		{ echo "rxe0 lacp: $(member_attr rxe0 lacp)"; return 1; }
	# Two 10 Gb/s QEMU NICs (speed=10000).
	[[ $(cat "$SYS/mrbond0/mrbond/speed") == 20000 ]] ||
		{ echo "aggregate speed $(cat "$SYS/mrbond0/mrbond/speed")"; return 1; }
	rdma dev show mrbond0
}

test_device_order() {
	# The members existed first, so rdma_cm lists them ahead of the bond.
	dmesg | grep -E "rdma_mrbond: mrbond0 is behind member rxe[01] in rdma_cm's device order"
}

test_cable_pull() {
	local t0
	cable 0 down || return 1
	t0=$(date +%s%N)
	wait_for 15 member_is rxe0 unusable ||
		{ echo "rxe0 still $(member_attr rxe0 state)"; return 1; }
	echo "rxe0 unusable ($(member_attr rxe0 reason)) $(ms_since "$t0") ms after the cable pull"
	member_is rxe1 usable || { echo "rxe1 affected"; return 1; }
	dmesg | grep "member rxe0: usable -> unusable" | tail -n 1
	cable 0 up || return 1
	t0=$(date +%s%N)
	wait_for 60 member_is rxe0 usable ||
		{ echo "rxe0 still $(member_attr rxe0 state) $(member_attr rxe0 reason)"; return 1; }
	echo "rxe0 usable again $(ms_since "$t0") ms after the cable came back"
}

test_lacp_only_failure() {
	local nic t0 rc=0
	nic=$(slave_of_link 0) || return 1
	barrier release-pre || return 1
	if [[ $MRBOND_ROLE == hostb ]]; then
		ip link set "$nic" nomaster || return 1
		ip link set "$nic" up
	fi
	barrier released || return 1
	t0=$(date +%s%N)
	if [[ $MRBOND_ROLE == hosta ]]; then
		# The link stays up: only LACP can tell (3 s with lacp_rate fast).
		[[ $(slave_info "$nic" mii_status) == UP ]] || { echo "link went down"; rc=1; }
		wait_for 15 eval '[[ $(member_attr rxe0 reason) == lacp-not-distributing ]]' ||
			{ echo "rxe0: $(member_attr rxe0 state) $(member_attr rxe0 reason)"; rc=1; }
		echo "rxe0 unusable (lacp-not-distributing) $(ms_since "$t0") ms after the peer released its slave"
	fi
	barrier reattach-pre || return 1
	if [[ $MRBOND_ROLE == hostb ]]; then
		ip link set "$nic" down
		ip link set "$nic" master bond0 || rc=1
		ip link set "$nic" up
	fi
	barrier reattached || return 1
	t0=$(date +%s%N)
	wait_for 60 lacp_converged_now || { echo "LACP did not converge again"; rc=1; }
	wait_for 30 member_is rxe0 usable || { echo "rxe0 not usable again"; rc=1; }
	echo "rxe0 usable $(ms_since "$t0") ms after the slave rejoined"
	return $rc
}

test_member_device_cycle() {
	local nic
	nic=$(slave_of_link 1) || return 1
	rdma link del rxe1 || return 1
	wait_for 10 eval '[[ $(member_attr rxe1 reason) == device-absent ]]' || return 1
	[[ -d $SYS/mrbond0 ]] || { echo "bond gone with its member"; return 1; }
	rdma link add rxe1 type rxe netdev "$nic" || return 1
	wait_for 15 member_is rxe1 usable || { echo "rxe1: $(member_attr rxe1 reason)"; return 1; }
}

# ---- monitoring: mrbond-exporter and Prometheus (hosta's) ----

EXPORTER=$(dirname "${MRBOND_CTL:?path of mrbondctl}")/mrbond-exporter
PROM_DIR=$(mktemp -d)
PROM=http://127.0.0.1:9090

# One scrape, linted as Prometheus does, with both members usable in it.
test_exporter_promtool() {
	local out m
	out=$("$EXPORTER" --once) || return 1
	promtool check metrics <<<"$out" || return 1
	grep -qx 'mrbond_up 1' <<<"$out" || { echo "mrbond_up is not 1"; return 1; }
	for m in rxe0 rxe1; do
		grep -q "^mrbond_member_usable{bond=\"mrbond0\",member=\"$m\",.*} 1$" <<<"$out" ||
			{ echo "$m is not usable in the scrape:"; grep '^mrbond_member_usable' <<<"$out"; return 1; }
	done
	echo "$(grep -vc '^#' <<<"$out") samples in $(grep -c '^# TYPE' <<<"$out") families"
}

# The exporter serving, and Prometheus scraping it every second (hosta;
# started outside run_test, whose output capture would wait for them).
prometheus_start() {
	[[ $MRBOND_ROLE == hosta ]] || return 0
	cat >"$PROM_DIR/prometheus.yml" <<-EOF
		global: {scrape_interval: 1s, evaluation_interval: 1s}
		scrape_configs:
		  - job_name: mrbond
		    static_configs: [{targets: ['127.0.0.1:9879']}]
	EOF
	"$EXPORTER" --listen 127.0.0.1:9879 >"$PROM_DIR/exporter.log" 2>&1 &
	prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
		--web.listen-address=127.0.0.1:9090 >"$PROM_DIR/prometheus.log" 2>&1 &
}
prometheus_stop() {
	pkill -f "prometheus --config.file=$PROM_DIR"
	pkill -f "$EXPORTER --listen"
	return 0
}
# prom_query EXPR: the instant value of EXPR's first series, or "none"
# (also while Prometheus starts, when it answers 503).
prom_query() {
	curl -fsS --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
		jq -r '.data.result[0].value[1] // "none"'
}
prom_is() { [[ $(prom_query "$1") == "$2" ]]; }

# A cable pull as Prometheus records it: rxe0 unusable while the cable is
# out, usable again after, rxe1 usable throughout.
test_exporter_scrape_failover() {
	local rxe0='max(mrbond_member_usable{bond="mrbond0",member="rxe0"})' rc=0
	if [[ $MRBOND_ROLE == hosta ]]; then
		wait_until 120 prom_is 'up{job="mrbond"}' 1 ||
			{ echo "Prometheus never scraped the exporter"; tail -n 5 "$PROM_DIR"/*.log; rc=1; }
		((rc)) || wait_until 20 prom_is "$rxe0" 1 || { echo "rxe0: $(prom_query "$rxe0")"; rc=1; }
	fi
	cable 0 down || return 1
	if [[ $MRBOND_ROLE == hosta ]] && ((rc == 0)); then
		wait_until 30 prom_is "$rxe0" 0 ||
			{ echo "Prometheus did not record rxe0 unusable: $(prom_query "$rxe0")"; rc=1; }
	fi
	cable 0 up || return 1
	[[ $MRBOND_ROLE == hosta ]] || return 0
	((rc == 0)) || return 1
	wait_until 90 prom_is "$rxe0" 1 || { echo "rxe0 not usable again: $(prom_query "$rxe0")"; return 1; }
	prom_is 'min(min_over_time(mrbond_member_usable{bond="mrbond0",member="rxe1"}[10m]))' 1 ||
		{ echo "rxe1 was unusable too"; return 1; }
	echo "transitions of rxe0 as scraped: $(prom_query 'max(mrbond_member_transitions_total{member="rxe0"})')"
}

test_unload() {
	modprobe -r rdma_mrbond || return 1
	[[ ! -e $SYS/mrbond0 ]]
}

# `rdma link add … type mrbond` loads the module through its alias.
test_autoload() {
	rdma link add mrbond0 type mrbond netdev bond0 || return 1
	grep -q '^rdma_mrbond ' /proc/modules || { echo "not loaded"; return 1; }
	rdma link del mrbond0 && modprobe -r rdma_mrbond
}

ktap_header 10
if ! out=$(setup_t1 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! T1 setup failed"
	exit 1
fi
barrier setup || { echo "Bail out! peer never set up"; exit 1; }
wait_for 60 lacp_converged_now || { echo "Bail out! LACP never converged"; exit 1; }
run_test bond_over_802.3ad_rails test_create
run_test exporter_promtool_check test_exporter_promtool
prometheus_start
run_test device_order_warning test_device_order
run_test cable_pull_member_unusable_usable test_cable_pull
run_test exporter_prometheus_scrape_failover test_exporter_scrape_failover
prometheus_stop
run_test lacp_only_failure_and_return test_lacp_only_failure
run_test member_rdma_link_del_and_add test_member_device_cycle
kmemleak_test
run_test unload_with_bond test_unload
run_test rdma_link_autoloads_module test_autoload
ktap_totals
[[ $KTAP_FAIL == 0 ]]
