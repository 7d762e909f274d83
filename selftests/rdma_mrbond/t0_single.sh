#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T0, one guest: rxe members on a veth pair, QP pairs on one member
# (rxe loopback), loading rdma_mrbond over them, and the KUnit suites.
. "$(dirname "$0")/lib.sh"


setup_t0() {
	modprobe veth && modprobe rdma_rxe || return 1
	ip link add m0 type veth peer name m1 || return 1
	ip addr add 198.18.10.1/24 dev m0
	ip addr add 198.18.11.1/24 dev m1
	ip link set m0 up && ip link set m1 up || return 1
	rdma link add rxe0 type rxe netdev m0 && rdma link add rxe1 type rxe netdev m1
}

test_loopback_pingpong() {
	local dev=$1 ip=$2 gid sent0 rc=0
	gid=$(gid_index_of "$dev" "$ip") || { echo "no GID for $ip on $dev"; return 1; }
	sent0=$(hw_counter "$dev" sent_pkts)
	timeout 60 ibv_rc_pingpong -d "$dev" -g "$gid" -n 50 -s 512 >"$TB_TMP/server" 2>&1 &
	local pid=$! try
	for ((try = 0; try < 20; try++)); do
		sleep 0.5
		timeout 60 ibv_rc_pingpong -d "$dev" -g "$gid" -n 50 -s 512 127.0.0.1 \
			>"$TB_TMP/client" 2>&1 && break
	done
	wait "$pid" || { rc=1; cat "$TB_TMP/server"; }
	tail -n 2 "$TB_TMP/client"
	echo "$dev sent_pkts +$(($(hw_counter "$dev" sent_pkts) - sent0))"
	(($(hw_counter "$dev" sent_pkts) > sent0)) || rc=1
	return $rc
}

test_modprobe() {
	modprobe rdma_mrbond || return 1
	dmesg | grep -qE 'rdma_mrbond: sees RDMA device rxe0$' &&
		dmesg | grep -qE 'rdma_mrbond: sees RDMA device rxe1$' ||
		{ dmesg | grep rdma_mrbond; return 1; }
}

test_member_removal_seen() {
	rdma link del rxe1 || return 1
	dmesg | grep -q 'rdma_mrbond: RDMA device rxe1 removed' ||
		{ echo "removal of rxe1 not seen"; return 1; }
	rdma link add rxe1 type rxe netdev m1 || return 1
	[[ $(dmesg | grep -cE 'rdma_mrbond: sees RDMA device rxe1$') == 2 ]] ||
		{ echo "re-added rxe1 not seen"; return 1; }
}

test_modprobe_remove() {
	modprobe -r rdma_mrbond || return 1
	! grep -q '^rdma_mrbond ' /proc/modules
}

# KUnit: the policy core's self-checks in kernel context. Every KUnit result
# (the parameterised scenarios included) becomes one KTAP result here.
kunit_results() {
	local results=/sys/kernel/debug/kunit/rdma_mrbond_policy/results
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	modprobe rdma_mrbond_kunit || return 1
	[[ -r $results ]] || { echo "no $results"; return 1; }
	cat "$results"
}
KUNIT_LOG=$TB_TMP/kunit
kunit_results >"$KUNIT_LOG" 2>&1
# Leaf results are the indented "ok N name" lines of the suite's cases and of
# the parameterised case's scenarios; the case lines that contain sub-results
# are summaries, so count only leaves: lines followed by no deeper level.
mapfile -t KUNIT_LEAVES < <(awk 'BEGIN { n = 0 }
	/^ *(not )?ok [0-9]+ / { depth = match($0, /[^ ]/); line[n] = $0; d[n++] = depth }
	END { for (i = 0; i < n; i++) if (!(i > 0 && d[i - 1] > d[i]) && d[i] > 1) print line[i] }
' "$KUNIT_LOG")

ktap_header $((6 + (${#KUNIT_LEAVES[@]} ? ${#KUNIT_LEAVES[@]} : 1)))
sed 's/^/# kunit: /' "$KUNIT_LOG"
if ((${#KUNIT_LEAVES[@]} == 0)); then
	ktap_fail kunit_rdma_mrbond_policy
fi
for leaf in "${KUNIT_LEAVES[@]}"; do
	name=$(sed -E 's/^ *(not )?ok [0-9]+ //; s/ /_/g' <<<"$leaf")
	if [[ $leaf =~ ^\ *ok ]]; then
		ktap_pass "kunit_$name"
	else
		ktap_fail "kunit_$name"
	fi
done
if ! out=$(setup_t0 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! T0 setup failed"
	exit 1
fi
run_test rxe_loopback_pingpong_rxe0 test_loopback_pingpong rxe0 198.18.10.1
run_test rxe_loopback_pingpong_rxe1 test_loopback_pingpong rxe1 198.18.11.1
run_test modprobe_rdma_mrbond test_modprobe
run_test member_removal_seen test_member_removal_seen
kmemleak_test
run_test modprobe_remove_rdma_mrbond test_modprobe_remove
ktap_totals
[[ $KTAP_FAIL == 0 ]]
