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
# Raw and bond runs alternate, one repetition of every case at a time: raw
# without mrbond0 (rdma_cm binds a rail's address to its member), then the
# bond (mrbond0 over every member and ahead of them: rdma_cm binds the
# service address to it), then mrbond0 deleted again; a drift of the host
# under the guests thus weighs on both. MRBOND_BENCH_QUICK=1 (CI) runs each
# case once, briefly; the full run repeats them (MRBOND_BENCH_REPS).
. "$(dirname "$0")/../../selftests/rdma_mrbond/lib.sh"

ME=$(role_index)
# Members with GUIDs of their own, in setup_t1 and whenever bond_ahead
# re-creates them: the raw runs use them side by side (lib.sh).
export MRBOND_MEMBERS_FIRST=1
. "$(dirname "$0")/xperf-lib.sh"
RAW=$MRBOND_RUN/bench/raw
QUICK=${MRBOND_BENCH_QUICK:-0}
if ((QUICK)); then
	REPS=1 CONNECT_REPS=1 DURATION_MS=2000 LAT_ITERS=200 AGG_SPECS="write:65536 send:4096"
	CASES="aggregate latency connect placement failover"
	POLICIES="rr lqf" PLACE_VARIANTS=quarter PLACE_CONNS=4 PLACE_GAP_MS=1200
	CONNECT_COUNTS="1 16" FO_RUN_S=14 FO_PULL_S=4 FO_PLUG_S=8
else
	REPS=${MRBOND_BENCH_REPS:-5} DURATION_MS=${MRBOND_BENCH_MS:-5000} LAT_ITERS=500
	AGG_SPECS="write:65536 write:1048576 send:4096"
	POLICIES="rr wrr wrr+weights lqf hash" PLACE_VARIANTS="quarter foreign" PLACE_CONNS=16
	PLACE_GAP_MS=1500 CONNECT_COUNTS="1 64 512" FO_RUN_S=30 FO_PULL_S=8 FO_PLUG_S=18
	# 512 connections take minutes to open under TCG: two repetitions.
	CONNECT_REPS=$((REPS < 2 ? REPS : 2))
	# The 2-rail boot measures the per-connection cases, the 4-rail boot the
	# hot rail among several.
	if ((MRBOND_LINKS == 2)); then
		CASES="aggregate latency connect failover"
	else
		CASES="aggregate placement"
	fi
fi
CASES=${MRBOND_BENCH_CASES:-$CASES}
has_case() { [[ " $CASES " == *" $1 "* ]]; }
RUN_SEQ=0
# The server gives up this long after it started listening (a client that
# failed to connect never comes).
SERVER_MS=$((DURATION_MS + 60000))

# One run of a case: its name, the server's and the client's keys.
# run_case CASE VARIANT SERVER_KV -- CLIENT_KV
run_case() {
	local case=$1 variant=$2
	shift 2
	RUN_SEQ=$((RUN_SEQ + 1))
	echo "bench: run $RUN_SEQ: $case $variant" >&2
	xperf_pair "$case/$variant/$RUN_SEQ" "$@"
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

# 64 B ping-pong over one connection: SEND (lat) and RDMA WRITE with
# immediate (wlat: the immediate is how the other end learns the WRITE
# landed, as perftest's ib_write_lat polls its buffer). The server waits for
# the whole run: up to 200 ms a round trip (about 50 here) and SERVER_MS
# besides. LAT_SPECS: OP:XPERF_MODE per case.
LAT_SPECS="send:lat write:wlat"
latency() {  # latency PHASE
	local wait="timeout_ms=$((LAT_ITERS * 200 + SERVER_MS))" spec op common rc=0
	for spec in $LAT_SPECS; do
		op=${spec%%:*}
		common="mode=${spec#*:} size=64 iters=$LAT_ITERS"
		if [[ $1 == raw ]]; then
			run_case "latency-$op-64" raw "local=$(rail_ip 0 1) $wait" -- \
				"local=$(rail_ip 0 0) peer=$(rail_ip 0 1) dev=$(member_name 0) $common" ||
				rc=1
		else
			run_case "latency-$op-64" bond "local=$(service_ip 1) $wait" -- \
				"local=$(service_ip 0) peer=$(service_ip 1) dev=mrbond0 $common" || rc=1
		fi
	done
	return $rc
}

# Placement under a hot rail: the last rail shaped to a quarter of the
# others' rate (quarter), or carrying traffic the bond does not see, an
# ib_write_bw on its member (foreign). PLACE_CONNS connections opened
# PLACE_GAP_MS apart (the bond samples utilisation every second), each
# writing from its READY on; per policy the members' QPs once all are open
# and, from the rails' counters, how much each rail carried. "wrr+weights"
# is wrr with admin weights in proportion to the members' shaped rates (what
# an operator sets for a slower link); every other policy runs with the
# default weights.
placement() {
	local variant=$1 hot=$((MRBOND_LINKS - 1)) bits policy rc=0 i cap
	bits=$(rate_bits "$RATE")
	[[ $variant == quarter ]] && { shape_rail "$hot" $((bits / 4)) || return 1; }
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		cap=$((bits / 1000000))
		[[ $variant == quarter && $i == "$hot" ]] && cap=$((cap / 4))
		echo "$cap" >"$SYS/mrbond0/mrbond/members/$(member_name "$i")/capacity_mbps" || rc=1
	done
	for policy in $(place_policies "$variant"); do
		# The hot rail's admin weight: a quarter of the others' for
		# wrr+weights (only the quarter variant runs it).
		hot_weight "$([[ $policy == *+weights ]] && echo 25 || echo 100)" || rc=1
		echo "${policy%+weights}" >"$SYS/mrbond0/mrbond/policy" || { rc=1; continue; }
		[[ $variant == foreign ]] && foreign_start "$hot" "$policy"
		run_case "placement-$variant" "$policy" "local=$(service_ip 1) conns=$PLACE_CONNS" -- \
			"local=$(service_ip 0) peer=$(service_ip 1) dev=mrbond0 conns=$PLACE_CONNS" \
			"mode=write size=65536 open_gap_ms=$PLACE_GAP_MS duration_ms=$DURATION_MS" || rc=1
		[[ $variant == foreign ]] && { foreign_stop "$RAW/placement-$variant/$policy/$RUN_SEQ" || rc=1; }
	done
	hot_weight 100 || rc=1
	shape_rails || rc=1
	return $rc
}

# The policies placement runs for VARIANT: foreign traffic leaves the rails'
# rates equal, so there are no weights to give.
place_policies() {  # place_policies VARIANT
	local p
	for p in $POLICIES; do
		[[ $1 != quarter && $p == *+weights ]] || echo "$p"
	done
}

hot_weight() {  # hot_weight W: the last (hot) rail's member at W, the others at 100
	local i w
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		w=100
		((i == MRBOND_LINKS - 1)) && w=$1
		echo "$w" >"$SYS/mrbond0/mrbond/members/$(member_name "$i")/weight" || return 1
	done
}

# Foreign traffic on RAIL: ib_write_bw between the rail's members, hostb
# serving, for longer than a placement run lasts. Its QP's ACK timeout is
# raised from perftest's 67 ms (-u 14) to 1 s (-u 18), as rdma_cm's is: on a
# rail the bond's connections share, the shaped queue delays ACKs beyond
# 67 ms, the requester retransmits WRITEs still in flight, and rxe ends the
# run with a remote invalid request error (measured: every run failed so).
foreign_start() {  # foreign_start RAIL TAG
	local dev gid secs=$((PLACE_CONNS * PLACE_GAP_MS / 1000 + DURATION_MS / 1000 + 10))
	dev=$(member_name "$1")
	gid=$(gid_index_of "$dev" "$(rail_ip "$1" "$ME")") || return 1
	FOREIGN=(ib_write_bw -d "$dev" -x "$gid" -p $((PORT_BASE + 40)) -s 65536 -D "$secs" -u 18)
	if [[ $MRBOND_ROLE == hostb ]]; then
		timeout $((secs + 30)) "${FOREIGN[@]}" >"$TB_TMP/foreign" 2>&1 &
		FOREIGN_PID=$!
		barrier "foreign-$2"
	else
		barrier "foreign-$2"
		(run_client "${FOREIGN[@]}" "$(rail_ip "$1" 1)") >"$TB_TMP/foreign" 2>&1 &
		FOREIGN_PID=$!
	fi
	sleep 2
}
# foreign_stop RUN: the traffic's end, its status kept beside RUN's results
# (report.py counts a run without it as failed).
foreign_stop() {
	local status=ok
	wait "$FOREIGN_PID" || status=error
	{
		echo "status=$status"
		sed 's/^/output=/' "$TB_TMP/foreign"
	} >"$1.$MRBOND_ROLE.foreign"
	[[ $status == ok ]] && return 0
	echo "foreign traffic failed on $MRBOND_ROLE"
	cat "$TB_TMP/foreign"
	return 1
}

# The check of the checks: a run whose client corrupts one byte on purpose
# (xperf corrupt=1: a SEND, the final WRITE, or a ping-pong's WRITE) must
# fail, the server having found it. Raw rail 0, once.
SELFCHECK_MODES="send write wlat"
selfcheck() {
	local mode
	for mode in $SELFCHECK_MODES; do
		run_case "selfcheck-$mode" corrupt "local=$(rail_ip 0 1)" -- \
			"local=$(rail_ip 0 0) peer=$(rail_ip 0 1) dev=$(member_name 0) mode=$mode" \
			"size=4096 duration_ms=500 iters=10 corrupt=1" >/dev/null 2>&1
	done
	return 0
}

test_smoke_detects_corruption() {
	local f rc=0 n=0
	for f in "$RAW"/selfcheck-*/corrupt/*."$MRBOND_ROLE".kv; do
		[[ -e $f ]] || continue
		n=$((n + 1))
		if [[ $MRBOND_ROLE == hosta ]]; then
			grep -qx status=error "$f" && grep -q '^error=the server found [1-9]' "$f" ||
				{ echo "$f: $(grep -E '^(status|error)=' "$f" | tr '\n' ' ')"; rc=1; }
		else
			(($(kv "$f" verify_errors) >= 1)) || { echo "$f: the server found nothing"; rc=1; }
		fi
		echo "${f#"$RAW"/}: $(grep -E '^(status|error|verify_errors)=' "$f" | tr '\n' ' ')"
	done
	(($(wc -w <<<"$SELFCHECK_MODES") == n)) ||
		{ echo "$n corrupted runs, expected one per mode of: $SELFCHECK_MODES"; rc=1; }
	return $rc
}

# Control path: connections opened at once and timed from their QP's
# creation to ESTABLISHED, over the bond or a raw member. The server closes
# each connection once it is ESTABLISHED; a single one is looked at only
# after that close (late_poll_ms), the case where the client once reported
# "connecting failed: 0". Its time comes from the CM event, not the poll.
connect_scale() {  # connect_scale PHASE
	local n rc=0 dev=mrbond0 l r late
	l=$(service_ip 0) r=$(service_ip 1)
	[[ $1 == raw ]] && { dev=$(member_name 0) l=$(rail_ip 0 0) r=$(rail_ip 0 1); }
	for n in $CONNECT_COUNTS; do
		late=0
		((n == 1)) && late=1000
		run_case "connect-$n" "$1" "local=$r conns=$n depth=1" -- \
			"local=$l peer=$r dev=$dev conns=$n depth=1 mode=connect late_poll_ms=$late" || rc=1
	done
	return $rc
}

# The rail whose NIC sends the most over a second.
busiest_rail() {
	local i before=() best=0 most=-1 d v
	rail_nics || return 1
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		read -r before[i] <"/sys/class/net/${RAIL_NICS[i]}/statistics/tx_bytes"
	done
	sleep 1
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		read -r v <"/sys/class/net/${RAIL_NICS[i]}/statistics/tx_bytes"
		d=$((v - before[i]))
		((d > most)) && { most=$d; best=$i; }
	done
	echo "$best"
}

# Failover timeline with NVMe-oF: fio writes to hostb's ramdisk through
# mrbond0, and the cable of the rail that carries the writes is pulled
# FO_PULL_S into the run and put back at FO_PLUG_S. (With one vCPU
# nvme-rdma makes one I/O queue: the other rail may carry only the admin
# queue, whose loss costs a reconnect but shows nothing of the data.) The
# sampler records the rails' bytes, fio its own log, the kernel log the
# bond's and nvme's events; failover.py lines them up on the wall clock
# (the log's timestamps through a marker written at a known wall time).
failover_nvme() {
	local out=$RAW/failover-nvme/bond rc=0 fio_pid blk rail
	mkdir -p "$out"
	TARGET_IP=$(service_ip 1)
	if [[ $MRBOND_ROLE == hostb ]]; then
		setup_target >"$out/target.hostb" 2>&1 || { echo "nvmet setup failed"; rc=1; }
		barrier fo-target || rc=1
	else
		barrier fo-target || rc=1
		connect_ctrl "$TB_TMP/connect" && wait_until 30 nvme_blk >/dev/null ||
			{ echo "nvme connect failed: $(cat "$TB_TMP/connect")"; rc=1; }
	fi
	barrier fo-connected || rc=1
	if [[ $MRBOND_ROLE == hosta ]] && ((rc == 0)); then
		blk=$(nvme_blk)
		timeline_start "$out"
		fio --name=failover --filename="$blk" --rw=write --bs=64k --iodepth=16 \
			--ioengine=libaio --direct=1 --time_based --runtime="$FO_RUN_S" \
			--log_avg_msec=10 --write_bw_log="$out/fio" --write_lat_log="$out/fio" \
			--output-format=json --output="$out/fio.json" >/dev/null 2>&1 &
		fio_pid=$!
		sleep 1
		busiest_rail >"$MRBOND_RUN/fo-rail"
		echo "rail=$(cat "$MRBOND_RUN/fo-rail")" >>"$out/marks"
	fi
	barrier fo-rail || rc=1
	rail=$(cat "$MRBOND_RUN/fo-rail" 2>/dev/null || echo 0)
	sleep $((FO_PULL_S - 2))
	cable_cycle "$out" "$rail" $((FO_PLUG_S - FO_PULL_S)) || rc=1
	if [[ $MRBOND_ROLE == hosta && -n ${fio_pid:-} ]]; then
		wait_pid $((FO_RUN_S + 60)) "$fio_pid" || { echo "fio failed or hung"; rc=1; }
		timeline_end "$out"
		disconnect_ctrl "$TB_TMP/disconnect" || rc=1
	fi
	dmesg >"$out/dmesg.$MRBOND_ROLE"
	barrier fo-done || rc=1
	return $rc
}

# Failover timeline with mrbond_xperf: WRITEs over 2 connections per rail,
# each reconnecting when its rail's member fails (as a ULP reconnects on a
# flush); rail 0's cable pulled and put back as above. Every WR must still
# complete exactly once.
failover_xperf() {
	local out=$RAW/failover-xperf/bond rc=0 n=$((2 * MRBOND_LINKS))
	mkdir -p "$out"
	if [[ $MRBOND_ROLE == hostb ]]; then
		xperf_bg "$out/server.kv" "role=server local=$(service_ip 1) conns=$n reconnect=1" \
			"timeout_ms=$(((FO_RUN_S + 60) * 1000))"
		xperf_listening fx-listening || rc=1
	else
		xperf_listening fx-listening || rc=1
		timeline_start "$out"
		echo "rail=0" >>"$out/marks"
		xperf_bg "$out/client.kv" "role=client local=$(service_ip 0) peer=$(service_ip 1)" \
			"dev=mrbond0 conns=$n mode=write size=65536 duration_ms=$((FO_RUN_S * 1000))" \
			"reconnect=1"
	fi
	sleep "$FO_PULL_S"
	cable_cycle "$out" 0 $((FO_PLUG_S - FO_PULL_S)) || rc=1
	wait "$XP_PID" || { echo "xperf failed on $MRBOND_ROLE"; rc=1; }
	if [[ $MRBOND_ROLE == hosta ]]; then
		timeline_end "$out"
		grep -E '^(status|error|reconnects|conns_broken|duplicates|lost)=' "$out/client.kv"
	fi
	dmesg >"$out/dmesg.$MRBOND_ROLE"
	barrier fx-done || rc=1
	return $rc
}

# How many runs bench_runs makes (run.sh's progress line).
plan_runs() {
	local aggs counts per_rep=0 n v
	aggs=$(wc -w <<<"$AGG_SPECS") counts=$(wc -w <<<"$CONNECT_COUNTS")
	has_case aggregate && per_rep=$((per_rep + aggs * (MRBOND_LINKS + 2)))
	has_case latency && per_rep=$((per_rep + 2 * $(wc -w <<<"$LAT_SPECS")))
	n=$(wc -w <<<"$SELFCHECK_MODES")	# selfcheck
	n=$((n + REPS * per_rep))
	has_case connect && n=$((n + CONNECT_REPS * 2 * counts))
	if has_case placement; then
		for v in $PLACE_VARIANTS; do n=$((n + $(place_policies "$v" | wc -l))); done
	fi
	echo "$n"
}

# Repetition REP of the figures a phase measures.
phase_rep() {  # phase_rep PHASE REP
	local phase=$1 rc=0 spec
	if has_case aggregate; then
		for spec in $AGG_SPECS; do
			aggregate ${spec/:/ } "$phase" || rc=1
		done
	fi
	has_case latency && { latency "$phase" || rc=1; }
	if has_case connect && (($2 < CONNECT_REPS)); then
		connect_scale "$phase" || rc=1
	fi
	return $rc
}

# mrbond0 over every member, ahead of them in rdma_cm's device order; the
# members keep GUIDs of their own (MRBOND_MEMBERS_FIRST, member_create).
bond_on() {
	echo "bench: mrbond0 on" >&2
	setup_bond 2>&1 || { echo "the bond could not be set up: its runs are missing"; return 1; }
}

bond_off() {
	echo "bench: mrbond0 off" >&2
	bq -t 60 "$CTL" bond del mrbond0 && wait_until 30 bond_gone
}
bond_gone() { [[ ! -e $SYS/mrbond0 ]]; }

# REPS alternating repetitions, raw then bond; the corruption self-check
# (raw); then what only the bond has: placement, and the failover timelines.
bench_runs() {
	local rep rc=0 spec
	for ((rep = 0; rep < REPS; rep++)); do
		phase_rep raw "$rep" || rc=1
		bond_on || return 1
		phase_rep bond "$rep" || rc=1
		bond_off || return 1
	done
	selfcheck
	has_case placement || has_case failover || return $rc
	bond_on || return 1
	if has_case placement; then
		for spec in $PLACE_VARIANTS; do placement "$spec" || rc=1; done
	fi
	if has_case failover; then
		echo "bench: failover timeline (NVMe-oF)"
		failover_nvme || rc=1
		echo "bench: failover timeline (mrbond_xperf, reconnecting)"
		failover_xperf || rc=1
	fi
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
# lost or duplicated, bytes moved, and any traffic beside it ran.
runs_ok() {
	local f rc=0 n=0
	for f in $RAW/$1/*.$MRBOND_ROLE.kv; do
		[[ -e $f ]] || continue
		n=$((n + 1))
		grep -qx status=ok "$f" || { echo "$f: $(grep -E '^(status|error)=' "$f" | tr '\n' ' ')"; rc=1; }
		grep -qx duplicates=0 "$f" && grep -qx lost=0 "$f" ||
			{ echo "$f: duplicates or lost completions"; rc=1; }
		# Traffic beside the run (placement-foreign) must have run too.
		if [[ -e ${f%.kv}.foreign ]] && ! grep -qx status=ok "${f%.kv}.foreign"; then
			echo "${f%.kv}.foreign: the traffic beside the run failed"
			rc=1
		fi
	done
	((n > 0)) || { echo "no run of $1"; return 1; }
	return $rc
}

kv() { sed -n "s/^$2=//p" "$1"; }

test_smoke_aggregate() {
	local f rc=0
	runs_ok 'aggregate-*/*' || rc=1
	# The next repetition's raw runs (full mode) need members with GUIDs
	# of their own after bond_ahead re-created them; quick mode has none.
	member_guids_distinct || rc=1
	[[ $MRBOND_ROLE == hosta ]] || return $rc
	for f in "$RAW"/aggregate-*/*/*.hosta.kv; do
		(($(kv "$f" paced_kbps) > 0)) || { echo "$f: no bandwidth"; rc=1; }
		echo "${f#"$RAW"/}: $(($(kv "$f" paced_kbps) / 1000)) Mbit/s over $(kv "$f" conns) connections"
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

test_smoke_placement() {
	local f rc=0 total n
	runs_ok 'placement-*/*' || rc=1
	[[ $MRBOND_ROLE == hosta ]] || return $rc
	for f in "$RAW"/placement-*/*/*.hosta.kv; do
		[[ -s ${f%.kv}.qps ]] || { echo "$f: no QP counts"; rc=1; continue; }
		total=$(awk -F= '{ s += $2 } END { print s + 0 }' "${f%.kv}.qps")
		n=$(kv "$f" conns)
		# The bond's own QP1s are not in qps: each member counts ours only.
		((total == n)) || { echo "$f: members hold $total QPs, $n were opened"; rc=1; }
		echo "${f#"$RAW"/}: $(kv "$f" mbps) Mbit/s, QPs $(tr '\n' ' ' <"${f%.kv}.qps")"
	done
	return $rc
}

# Both timelines recorded: samples, marks, kernel logs; fio without error;
# xperf's every WR completed once, its broken connections opened again.
test_smoke_failover() {
	local d rc=0 x=$RAW/failover-xperf/bond
	for d in "$RAW"/failover-nvme/bond "$x"; do
		[[ -s $d/dmesg.$MRBOND_ROLE ]] || { echo "$d: no kernel log"; rc=1; }
		[[ $MRBOND_ROLE == hosta ]] || continue
		[[ -s $d/rails.csv ]] || { echo "$d: no rail samples"; rc=1; continue; }
		grep -q '^pull=' "$d/marks" && grep -q '^plug=' "$d/marks" ||
			{ echo "$d: events not marked"; rc=1; }
		echo "${d#"$RAW"/}: $(wc -l <"$d/rails.csv") rail samples"
	done
	if [[ $MRBOND_ROLE == hosta ]]; then
		jq -e '.jobs[0].error == 0' "$RAW/failover-nvme/bond/fio.json" >/dev/null ||
			{ echo "fio reported an error"; rc=1; }
		grep -qx status=ok "$x/client.kv" || { echo "xperf: $(grep -E '^(status|error)=' "$x/client.kv" | tr '\n' ' ')"; rc=1; }
		(($(kv "$x/client.kv" reconnects) > 0)) || { echo "xperf: no connection was opened again"; rc=1; }
	else
		grep -qx status=ok "$x/server.kv" || { echo "xperf server: $(grep -E '^(status|error)=' "$x/server.kv" | tr '\n' ' ')"; rc=1; }
	fi
	return $rc
}

test_smoke_connect() {
	local f rc=0
	runs_ok 'connect-*/*' || rc=1
	[[ $MRBOND_ROLE == hosta ]] || return $rc
	for f in "$RAW"/connect-*/*/*.hosta.kv; do
		(($(kv "$f" connect_p50_ns) > 0)) || { echo "$f: no connect time"; rc=1; }
		echo "${f#"$RAW"/}: p50 $(($(kv "$f" connect_p50_ns) / 1000)) us, max $(($(kv "$f" connect_max_ns) / 1000)) us"
	done
	return $rc
}

setup() {
	setup_t1 && setup_service || return 1
	wait_for 60 lacp_converged_now || { echo "LACP did not converge"; return 1; }
	shape_rails && modprobe mrbond_xperf || return 1
	# The bond hands a member's incoming requests to its own QP1 only for
	# the TCP ports in cm_ports (admin guide): xperf's besides NVMe-oF's.
	modprobe rdma_mrbond cm_ports=4420,$XP_PORT || return 1
	mkdir -p "$RAW" && meta
}

ktap_header 6
if ! out=$(setup 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! bench setup failed"
	exit 1
fi
bench_rc=0
echo "# bench: plan $(plan_runs) runs, cases: $CASES"
bench_runs 2>&1 | sed -u 's/^/# /'
((PIPESTATUS[0])) && bench_rc=1
((bench_rc)) && ktap_diag "some runs failed; the tests below name them"
run_case_test() {  # run_case_test NAME CASE FUNCTION
	if has_case "$2"; then run_test "$1" "$3"; else ktap_skip "$1" "not in this boot's cases"; fi
}
run_case_test bench_smoke_aggregate aggregate test_smoke_aggregate
run_case_test bench_smoke_latency latency test_smoke_latency
run_case_test bench_smoke_placement placement test_smoke_placement
run_case_test bench_smoke_failover failover test_smoke_failover
run_case_test bench_smoke_connect connect test_smoke_connect
run_test bench_smoke_detects_corruption test_smoke_detects_corruption
ktap_totals
