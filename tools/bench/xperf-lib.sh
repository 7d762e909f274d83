# SPDX-License-Identifier: GPL-2.0
# Guest-side helpers for traffic through mrbond_xperf between the T1 guests
# (the benchmark, tools/bench/guest.sh, and the demo,
# tools/testbed/demo-guest.sh): shaping the rails, running a server/client
# pair, sampling the rails. Sourced after selftests/rdma_mrbond/lib.sh; the
# caller sets RAW (where runs are kept) and SERVER_MS.

XP=/sys/kernel/debug/mrbond_xperf
XP_PORT=18600
RATE=${MRBOND_BENCH_RATE:-20mbit}

rate_bits() {  # tc's rate: 20mbit -> 20000000
	local v=${1%bit} m=1
	case $v in
	*k) m=1000 v=${v%k} ;;
	*m) m=1000000 v=${v%m} ;;
	*g) m=1000000000 v=${v%g} ;;
	esac
	echo $((v * m))
}

# The "cable": tbf on a rail's NIC. The guests have a 4 ms tick and no
# high-resolution timers, so the bucket holds 3 ticks of traffic (at least
# 64 KiB), and the queue (2 MB) more than every QP's rxe can have in flight
# (64 packets each): a full queue delays, never drops.
shape_rail() {  # shape_rail RAIL BITS_PER_S
	local nic burst=$(($2 / 8 * 12 / 1000))
	((burst < 65536)) && burst=65536
	nic=$(slave_of_link "$1") || return 1
	tc qdisc replace dev "$nic" root tbf rate "$2bit" burst "$burst" limit 2000000
}
shape_rails() {
	local i
	for ((i = 0; i < MRBOND_LINKS; i++)); do shape_rail "$i" "$(rate_bits "$RATE")" || return 1; done
}

# rails_snapshot FILE: the time (us), each rail NIC's tx bytes and its
# qdisc's counters.
rails_snapshot() {
	local i nic
	rail_nics || return 1
	echo "t_us=${EPOCHREALTIME/./}" >"$1"
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		nic=${RAIL_NICS[i]}
		echo "rail$i.tx_bytes=$(cat "/sys/class/net/$nic/statistics/tx_bytes")"
		tc -s -j qdisc show dev "$nic" root |
			jq -r --arg r "rail$i" '.[0] | "\($r).qdisc_bytes=\(.bytes)\n\($r).drops=\(.drops)\n\($r).overlimits=\(.overlimits)\n\($r).backlog=\(.backlog)"'
	done >>"$1"
}

# xperf_pair NAME SERVER_KV -- CLIENT_KV: one run. hostb listens, hosta
# connects once hostb is listening; both keep their results and the rails'
# counters before and after as $RAW/NAME.<role>.{kv,before,after}.
xperf_pair() {
	local name=$1 server=() client=() rc=0 out sync=${1//\//-} snap=
	shift
	while [[ $1 != -- ]]; do server+=("$1"); shift; done
	shift
	client=("$@")
	out=$RAW/$name.$MRBOND_ROLE
	mkdir -p "$(dirname "$out")"
	rails_snapshot "$out.before"
	if [[ $MRBOND_ROLE == hostb ]]; then
		xperf_bg "$out.kv" "role=server timeout_ms=$SERVER_MS ${server[*]}"
		xperf_listening "$sync-listening" || { echo "$name: server not listening"; rc=1; }
		wait "$XP_PID" || rc=1
	else
		# With a bond: its members' QPs once every connection is open.
		if [[ -d $SYS/mrbond0 ]]; then
			(wait_until 300 grep -qx running "$XP/state" && member_snapshot qps >"$out.qps") &
			snap=$!
		fi
		xperf_listening "$sync-listening" || rc=1
		# A run that did not start leaves no result of an earlier one.
		printf 'status=error\nerror=not run\n' >"$out.kv"
		((rc)) || xperf_fg "$out.kv" "role=client ${client[*]}" || rc=1
	fi
	# A run that never got to "running" (connect mode, a failure) has none.
	[[ -n ${snap:-} ]] && { kill "$snap" 2>/dev/null; wait "$snap"; }
	rails_snapshot "$out.after"
	barrier "$sync-done" || rc=1
	((rc)) && { echo "$name failed on $MRBOND_ROLE:"; grep -E '^(status|error)=' "$out.kv"; }
	return $rc
}

member_snapshot() {  # member_snapshot ATTR: ATTR of every member of mrbond0
	local i m
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		m=$(member_name "$i")
		echo "$m=$(cat "$SYS/mrbond0/mrbond/members/$m/$1" 2>/dev/null)"
	done
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

# rail_nics: RAIL_NICS[i], rail i's NIC, looked up once. The lookup runs ip
# and jq, which take seconds under TCG while traffic runs: a sampler that
# did it itself once started 26 s late, after the cable pull it was to show.
RAIL_NICS=()
rail_nics() {
	local i
	((${#RAIL_NICS[@]} == MRBOND_LINKS)) && return 0
	RAIL_NICS=()
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		RAIL_NICS[i]=$(slave_of_link "$i") || return 1
	done
}

# rails_moved CSV BYTES: every rail sent BYTES or more between the sampler's
# first line and its last.
rails_moved() {
	awk -F, -v min="$2" 'NR == 1 { for (i = 2; i <= NF; i++) first[i] = $i }
		END { if (NR < 2) exit 1; for (i = 2; i <= NF; i++) if ($i - first[i] < min) exit 1 }' "$1"
}

# Every ~10 ms (a 4 ms tick, so 12 in practice): the wall clock and every
# rail NIC's tx bytes (RAIL_NICS), as CSV lines, until killed. Bash builtins
# only (no fork per sample, which costs milliseconds under TCG): read from
# sysfs, and a read with a timeout on a pipe nobody writes to as the sleep.
rail_sampler() {  # rail_sampler OUT
	local files=() nic fd line v p
	for nic in "${RAIL_NICS[@]}"; do files+=("/sys/class/net/$nic/statistics/tx_bytes"); done
	exec {fd}<> <(:)
	while :; do
		line=$EPOCHREALTIME
		for p in "${files[@]}"; do read -r v <"$p"; line+=",$v"; done
		echo "$line"
		read -r -t 0.01 -u "$fd" _
	done >"$1"
}

# xperf_fg RESULT KV...: an xperf run, its result copied to RESULT; fails
# when the run does. In a subshell: a background job's SIGCHLD must not cut
# the write short.
xperf_fg() {
	local result=$1
	shift
	(
		echo "cm_port=$XP_PORT $*" >"$XP/run"
		rc=$?
		cp "$XP/result" "$result"
		exit $rc
	) 2>/dev/null
}
# xperf_bg RESULT KV...: the same in the background (XP_PID).
xperf_bg() {
	xperf_fg "$@" &
	XP_PID=$!
}

# Both sides meet at barrier NAME once hostb's server listens.
xperf_listening() {  # xperf_listening NAME
	local rc=0
	if [[ $MRBOND_ROLE == hostb ]]; then
		wait_until 20 grep -qx listening "$XP/state" || rc=1
	fi
	barrier "$1" || rc=1
	return $rc
}

# ---- failover timelines, hosta's wall clock (tools/bench/failover.py) ----

# timeline_start DIR: the marker that puts the kernel log on the wall
# clock, the rail sampler (TIMELINE_SAMPLER), the start; returns once the
# sampler has written, so that what follows is on the timeline.
timeline_start() {
	rail_nics || return 1
	echo "bench: clock $EPOCHREALTIME" >/dev/kmsg
	rail_sampler "$1/rails.csv" &
	TIMELINE_SAMPLER=$!
	echo "start=$EPOCHREALTIME" >"$1/marks"
	wait_until 30 test -s "$1/rails.csv" || { echo "the rail sampler never wrote" >&2; return 1; }
}
timeline_mark() {  # timeline_mark DIR EVENT
	[[ $MRBOND_ROLE == hosta ]] && echo "$2=$EPOCHREALTIME" >>"$1/marks"
	return 0
}
timeline_end() {  # timeline_end DIR
	timeline_mark "$1" end
	kill "$TIMELINE_SAMPLER" 2>/dev/null
}

# cable_cycle DIR RAIL DOWN_S: RAIL's cable pulled, and put back DOWN_S
# seconds later, marked on the timeline.
cable_cycle() {
	local rc=0
	timeline_mark "$1" pull
	cable "$2" down || rc=1
	sleep "$3"
	timeline_mark "$1" plug
	cable "$2" up || rc=1
	return $rc
}
