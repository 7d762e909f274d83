#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The benchmark's role script, run in both T1 guests by
# tools/testbed/testbed.py (tools/bench/run.sh starts it): hostb serves,
# hosta connects, with mrbond_xperf (selftests/rdma_mrbond/xperf/) through
# rdma_cm. Every rail is shaped with tbf to MRBOND_BENCH_RATE, well below
# what a TCG guest's rxe can push, so that the links, not the CPUs, limit
# the figures. Each run leaves both sides' results, and the rails' byte
# counters and qdisc statistics around it, under $MRBOND_RUN/bench/raw/;
# tools/bench/report.py turns them into results.json and report.md.
#
# Phases: raw first (no bond: rdma_cm binds a rail's address to its
# member), then the bond (mrbond0 over every member: rdma_cm binds the
# service address to it). MRBOND_BENCH_QUICK=1 (CI) runs each case once,
# briefly; the full run repeats them (MRBOND_BENCH_REPS).
. "$(dirname "$0")/../../selftests/rdma_mrbond/lib.sh"

ME=$(role_index)
XP=/sys/kernel/debug/mrbond_xperf
XP_PORT=18600
RAW=$MRBOND_RUN/bench/raw
QUICK=${MRBOND_BENCH_QUICK:-0}
RATE=${MRBOND_BENCH_RATE:-20mbit}
if ((QUICK)); then
	REPS=1 DURATION_MS=2000 LAT_ITERS=200
else
	REPS=${MRBOND_BENCH_REPS:-5} DURATION_MS=${MRBOND_BENCH_MS:-5000} LAT_ITERS=2000
fi
RUN_SEQ=0
# The server gives up this long after it started listening (a client that
# failed to connect never comes).
SERVER_MS=$((DURATION_MS + 60000))

rate_bits() {  # tc's rate: 20mbit -> 20000000
	local v=${1%bit} m=1
	case $v in
	*k) m=1000 v=${v%k} ;;
	*m) m=1000000 v=${v%m} ;;
	*g) m=1000000000 v=${v%g} ;;
	esac
	echo $((v * m))
}

# The "cable": tbf on every rail's NIC. The guests have a 4 ms tick and no
# high-resolution timers, so the bucket holds 3 ticks of traffic (at least
# 64 KiB), and the queue (2 MB) more than every QP's rxe can have in flight
# (64 packets each): a full queue delays, never drops.
shape_rails() {
	local i nic bits burst
	bits=$(rate_bits "$RATE")
	burst=$((bits / 8 * 12 / 1000))
	((burst < 65536)) && burst=65536
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i") || return 1
		tc qdisc replace dev "$nic" root tbf rate "$RATE" burst "$burst" limit 2000000 ||
			return 1
	done
}

# rails_snapshot FILE: each rail NIC's tx bytes and its qdisc's counters.
rails_snapshot() {
	local i nic
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=$(slave_of_link "$i") || return 1
		echo "rail$i.tx_bytes=$(cat "/sys/class/net/$nic/statistics/tx_bytes")"
		tc -s -j qdisc show dev "$nic" root |
			jq -r --arg r "rail$i" '.[0] | "\($r).qdisc_bytes=\(.bytes)\n\($r).drops=\(.drops)\n\($r).overlimits=\(.overlimits)\n\($r).backlog=\(.backlog)"'
	done >"$1"
}

# xperf_pair NAME SERVER_KV -- CLIENT_KV: one run. hostb listens, hosta
# connects once hostb is listening; both keep their results and the rails'
# counters before and after as $RAW/NAME.<role>.{kv,before,after}.
xperf_pair() {
	local name=$1 server=() client=() pid rc=0 out sync=${1//\//-}
	shift
	while [[ $1 != -- ]]; do server+=("$1"); shift; done
	shift
	client=("$@")
	out=$RAW/$name.$MRBOND_ROLE
	mkdir -p "$(dirname "$out")"
	rails_snapshot "$out.before"
	if [[ $MRBOND_ROLE == hostb ]]; then
		echo "role=server cm_port=$XP_PORT timeout_ms=$SERVER_MS ${server[*]}" >"$XP/run" 2>/dev/null &
		pid=$!
		wait_until 20 grep -qx listening "$XP/state" || { echo "$name: server not listening"; rc=1; }
		barrier "$sync-listening" || rc=1
		wait "$pid" || rc=1
	else
		barrier "$sync-listening" || rc=1
		((rc)) || echo "role=client cm_port=$XP_PORT ${client[*]}" >"$XP/run" 2>/dev/null || rc=1
	fi
	cp "$XP/result" "$out.kv"
	rails_snapshot "$out.after"
	barrier "$sync-done" || rc=1
	((rc)) && { echo "$name failed on $MRBOND_ROLE:"; grep -E '^(status|error)=' "$out.kv"; }
	return $rc
}

# One run of a case: its name, the server's and the client's keys.
# run_case CASE VARIANT SERVER_KV -- CLIENT_KV
run_case() {
	local case=$1 variant=$2
	shift 2
	RUN_SEQ=$((RUN_SEQ + 1))
	echo "bench: run $RUN_SEQ: $case $variant" >&2
	xperf_pair "$case/$variant/$RUN_SEQ" "$@"
}

rail_ips() {  # rail_ips ROLE_INDEX: every rail's address, comma separated
	local i ips=()
	for ((i = 0; i < MRBOND_LINKS; i++)); do ips+=("$(rail_ip "$i" "$1")"); done
	(IFS=,; echo "${ips[*]}")
}
members_csv() {
	local i m=()
	for ((i = 0; i < MRBOND_LINKS; i++)); do m+=("$(member_name "$i")"); done
	(IFS=,; echo "${m[*]}")
}

# Aggregate bandwidth of one operation: each member alone (2 connections),
# the connections spread over the raw members by hand (2 per member), or
# the bond (2 per member, placed by the bond). MODE SIZE PHASE
aggregate() {
	local mode=$1 size=$2 phase=$3 n=$((2 * MRBOND_LINKS)) i rc=0
	local common="mode=$mode size=$size duration_ms=$DURATION_MS depth=16"
	if [[ $phase == raw ]]; then
		for ((i = 0; i < MRBOND_LINKS; i++)); do
			run_case "aggregate-$mode-$size" "alone$i" "local=$(rail_ip "$i" 1) conns=2" -- \
				"local=$(rail_ip "$i" 0) peer=$(rail_ip "$i" 1) conns=2 $common" \
				"dev=$(member_name "$i")" || rc=1
		done
		run_case "aggregate-$mode-$size" by_hand "local=$(rail_ips 1) conns=$n" -- \
			"local=$(rail_ips 0) peer=$(rail_ips 1) dev=$(members_csv) conns=$n $common" || rc=1
	else
		run_case "aggregate-$mode-$size" bond "local=$(service_ip 1) conns=$n" -- \
			"local=$(service_ip 0) peer=$(service_ip 1) dev=mrbond0 conns=$n $common" || rc=1
	fi
	return $rc
}

latency() {  # latency PHASE: 64 B SEND ping-pong, one connection
	local common="mode=lat size=64 iters=$LAT_ITERS"
	if [[ $1 == raw ]]; then
		run_case latency-send-64 raw "local=$(rail_ip 0 1)" -- \
			"local=$(rail_ip 0 0) peer=$(rail_ip 0 1) dev=$(member_name 0) $common"
	else
		run_case latency-send-64 bond "local=$(service_ip 1)" -- \
			"local=$(service_ip 0) peer=$(service_ip 1) dev=mrbond0 $common"
	fi
}

# The figures a phase measures, REPS times over.
phase_runs() {
	local phase=$1 rep rc=0 spec
	for ((rep = 0; rep < REPS; rep++)); do
		for spec in "write 65536" "send 4096"; do
			# shellcheck disable=SC2086
			aggregate $spec "$phase" || rc=1
		done
		((QUICK)) || aggregate write 1048576 "$phase" || rc=1
		latency "$phase" || rc=1
	done
	return $rc
}

meta() {
	{
		echo "links=$MRBOND_LINKS"
		echo "rate=$RATE"
		echo "rate_bits=$(rate_bits "$RATE")"
		echo "quick=$QUICK"
		echo "reps=$REPS"
		echo "duration_ms=$DURATION_MS"
		echo "kernel=$(uname -r)"
		echo "vcpus=$(nproc)"
		echo "members=$MEMBER_TYPE"
	} >"$RAW/meta.$MRBOND_ROLE"
}

# ---- the KTAP tests: the pipeline works; speed is judged by nobody here ----

# Every run of the cases named by the glob: both sides status=ok, nothing
# lost or duplicated, bytes moved.
runs_ok() {
	local f rc=0 n=0
	for f in $RAW/$1/*.$MRBOND_ROLE.kv; do
		[[ -e $f ]] || continue
		n=$((n + 1))
		grep -qx status=ok "$f" || { echo "$f: $(grep -E '^(status|error)=' "$f" | tr '\n' ' ')"; rc=1; }
		grep -qx duplicates=0 "$f" && grep -qx lost=0 "$f" ||
			{ echo "$f: duplicates or lost completions"; rc=1; }
	done
	((n > 0)) || { echo "no run of $1"; return 1; }
	return $rc
}

kv() { sed -n "s/^$2=//p" "$1"; }

test_smoke_aggregate() {
	local f rc=0
	runs_ok 'aggregate-*/*' || rc=1
	[[ $MRBOND_ROLE == hosta ]] || return $rc
	for f in "$RAW"/aggregate-*/*/*.hosta.kv; do
		(($(kv "$f" mbps) > 0)) || { echo "$f: no bandwidth"; rc=1; }
		echo "${f#"$RAW"/}: $(kv "$f" mbps) Mbit/s over $(kv "$f" conns) connections"
	done
	return $rc
}

test_smoke_latency() {
	local f p50 p99 rc=0
	runs_ok 'latency-*/*' || rc=1
	[[ $MRBOND_ROLE == hosta ]] || return $rc
	for f in "$RAW"/latency-*/*/*.hosta.kv; do
		p50=$(kv "$f" lat_p50_ns) p99=$(kv "$f" lat_p99_ns)
		((p50 > 0 && p99 >= p50)) || { echo "$f: p50 $p50 ns, p99 $p99 ns"; rc=1; }
		echo "${f#"$RAW"/}: p50 $((p50 / 1000)) us, p99 $((p99 / 1000)) us"
	done
	return $rc
}

setup() {
	MRBOND_MEMBERS_FIRST=1 setup_t1 && setup_service || return 1
	wait_for 60 lacp_converged_now || { echo "LACP did not converge"; return 1; }
	shape_rails && modprobe mrbond_xperf || return 1
	mkdir -p "$RAW" && meta
}

ktap_header 2
if ! out=$(setup 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! bench setup failed"
	exit 1
fi
bench_rc=0
phase_runs raw 2>&1 | sed 's/^/# /'
((PIPESTATUS[0])) && bench_rc=1
# The bond hands a member's incoming requests to its own QP1 only for the
# TCP ports in cm_ports (admin guide): xperf's besides NVMe-oF's.
if out=$(modprobe rdma_mrbond cm_ports=4420,$XP_PORT && setup_bond 2>&1); then
	phase_runs bond 2>&1 | sed 's/^/# /'
	((PIPESTATUS[0])) && bench_rc=1
else
	echo "$out" | sed 's/^/# /'
	echo "# the bond could not be set up: its runs are missing"
	bench_rc=1
fi
((bench_rc)) && ktap_diag "some runs failed; the tests below name them"
run_test bench_smoke_aggregate test_smoke_aggregate
run_test bench_smoke_latency test_smoke_latency
ktap_totals
