#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Topology T1, two guests: NVMe-oF over the bond's data path. hostb serves a
# brd namespace through nvmet-rdma on a service address present on every
# rail, hosta connects with nvme-rdma over mrbond0 (rail mode, policy rr) and
# runs fio with crc32c verification: plain, while rail 0's cable is pulled
# (QMP), and while a member is removed. The bond flushes the QPs of a failed
# member and nvme-rdma reconnects over the other rail; fio must not see an
# error. Captured on the peer, the RoCEv2 packets of bond QPs carry the
# bond's DSCP with ECT(0) while ECN is on, and without it while it is off.
# NFSv4.2 over RDMA, hosta's rpcrdma over mrbond0, verified by fio through a
# cable pull and a member removal; a REQ reaching a member whose listener
# is being set up (regression test); WRR placing new QPs by the members'
# sampled utilisation while rail 0 is loaded; connects whose member is
# removed while their CM exchange is in flight fail at once (regression
# test). Teardown must leave no QP and no outstanding WR behind.
#
# MRBOND_MEMBERS=dma (lib.sh) runs the NVMe-oF and NFS flows over members
# that need DMA mapping, the rdma_rxe_dma doubles, on both guests: no
# address refused, and no bounce slot left in use once they are gone. Only
# hosta, the initiator (nvme-rdma, rpcrdma: both over mrbond0), boots with
# swiotlb=force (MRBOND_BOUNCE_ROLES=hosta): nfsd listens on every device,
# so its QPs are on the member itself, not on the bond, and 6.12's svcrdma
# unmaps a Read chunk's pages only when the RPC is done
# (svc_rdma_recv_ctxt_put()), after nfsd has stored them: under bouncing
# it stores the previous contents of those pages, with or without the bond.
#
# NVME_DEV_MODE=raw (validation of the suite itself, forwarded by testbed.py)
# skips the bond and runs the same flow over the raw member rxe0 on rail 0's
# addresses; there the cable pull is expected to break the controller.
. "$(dirname "$0")/lib.sh"

CTL=${MRBOND_CTL:?path of mrbondctl}
SYS=/sys/class/infiniband
ME=$(role_index)
MODE=${NVME_DEV_MODE:-bond}
FIO_RUNTIME=25  # s, the time-based fio runs of the fault tests
FAULT_AT=5      # s into the fio run
FIO_GRACE=20    # s fio may take beyond its runtime while the fault lasts

if [[ $MODE == raw ]]; then
	DEV=${MEMBER_PREFIX}0
	TARGET_IP=$(rail_ip 0 1)
else
	MODE=bond
	DEV=mrbond0
	TARGET_IP=$(service_ip 1)
fi

ms_since_us() { echo $(((${EPOCHREALTIME/./} - $1) / 1000)); }

port_counter() { bq cat "$SYS/mrbond0/ports/$1/hw_counters/$2"; }

# gsi_state MEMBER: the state of the member's QP1 as ib_core reports it.
# rxe (6.12) moves QP1 to ERR for good when a MAD is sent while its link is
# down, and the port then takes no CM MAD until the device is re-created.
gsi_state() {
	bq rdma -j res show qp link "$1/" | jq -r '[.[] | select(.lqpn == 1)][0].state // "none"'
}
send_err_of() { bq rdma statistic show link "$1/1" | grep -o 'send_err [0-9]*'; }

# gsi_intact: every rail member's QP1 on this host is RTS.
gsi_intact() {
	local r s rc=0
	for ((r = 0; r < MRBOND_LINKS; r++)); do
		s=$(gsi_state "${MEMBER_PREFIX}$r")
		[[ $s == RTS ]] || { echo "${MEMBER_PREFIX}$r's QP1 is $s ($(send_err_of "${MEMBER_PREFIX}$r"))"; rc=1; }
	done
	return $rc
}

# member_gauge PORT FILE: a gauge of port PORT's member, from sysfs.
member_gauge() { bq cat "$SYS/mrbond0/mrbond/members/${MEMBER_PREFIX}$(($1 - 1))/$2"; }

# The controllers as sysfs shows them: no command reaches a controller.
ctrls_sysfs() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/state ]] || continue
		echo "${c##*/}: $(cat "$c/state") $(cat "$c/transport") $(cat "$c/address") $(cat "$c/subsysnqn")"
	done
}

# What every RDMA device's connection manager sent and received, by message,
# and its RoCE GIDs: where a CM exchange stopped.
cm_counters() {
	local d c line
	for d in "$SYS"/*; do
		line=""
		for c in req rep rtu rej mra dreq drep; do
			line+=" $c $(cat "$d"/ports/*/cm_tx_msgs/$c 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')/$(cat "$d"/ports/*/cm_rx_msgs/$c 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')"
		done
		echo "${d##*/} cm tx/rx:$line"
	done
	bq rdma statistic show | grep -v mrbond
	# One grep over the whole table: a process per GID takes minutes here.
	for d in "$SYS"/"$MEMBER_PREFIX"*; do
		grep -H '^0000:0000:0000:0000:0000:ffff:' "$d"/ports/1/gids/* 2>/dev/null |
			sed 's|.*/gids/\([0-9]*\):|\1 |' | while read -r i g; do
				echo "${d##*/} gid $i $g $(cat "$d/ports/1/gid_attrs/ndevs/$i" 2>/dev/null)"
			done
	done
	ip neigh show
}

diag() {
	echo "--- diagnostics ($MRBOND_ROLE, $MODE mode)"
	dmesg | grep -iE 'nvme|mrbond|rxe|rdma' | tail -n 40
	ctrls_sysfs
	bq nvme list-subsys
	bq rdma res show cm_id
	bq rdma res show qp | grep -v 'type GSI'
	# A member's QP1 that stopped taking MADs: its state, and its CQ's.
	bq rdma res show qp | grep 'type GSI' | grep -v '^link mrbond'
	bq rdma res show cq | grep -w ib_core
	if [[ $MODE == bond && -d $SYS/mrbond0 ]]; then
		local p m
		for ((p = 1; p <= MRBOND_LINKS; p++)); do bq rdma statistic show link "mrbond0/$p"; done
		for m in $(bq cat "$SYS/mrbond0/mrbond/member_list"); do
			echo "member $m: $(member_state "$m") $(bq cat "$SYS/mrbond0/mrbond/members/$m/reason")"
		done
	fi
	cm_counters
}

# The CM MADs (RoCEv2 packets to QP1) each rail carries while a test runs,
# for its diagnostics: which rail a lost REQ left on, and whether it came in.
mad_capture_start() {
	tcpdump -i any -t -nn -l "udp dst port $ROCE_PORT and (udp[12:4] & 0xffffff) == 1" \
		>"$TB_TMP/mad-$1" 2>/dev/null </dev/null &
	MAD_CAPTURE_PID=$!
}
mad_capture_stop() {
	[[ -n ${MAD_CAPTURE_PID:-} ]] && kill "$MAD_CAPTURE_PID" 2>/dev/null && wait "$MAD_CAPTURE_PID" 2>/dev/null
	MAD_CAPTURE_PID=
}
# By interface, direction, source and destination IP (ports dropped) and
# length: a MAD that reaches a rail but not the member's CM shows whom it was
# addressed to.
mad_capture_report() {
	echo "CM MADs by interface, direction, addresses and length during $1:"
	awk '{
		src = $4; dst = $6
		sub(/\.[0-9]+$/, "", src); sub(/\.[0-9]+:?$/, "", dst)
		print $1, $2, src, ">", dst, "len", $NF
	}' "$TB_TMP/mad-$1" | sort | uniq -c
}

# A test that fails on one guest asks the other for its diagnostics too: the
# failing side calls ask_peer_diag NAME before the test's last barrier; both
# end with diag_end NAME RC, which prints the diagnostics and the MADs
# captured under NAME if the test failed here or the peer asked for them.
ask_peer_diag() { touch "$MRBOND_RUN/diag-$1"; }
diag_end() {
	if (($2 != 0)); then
		diag
	elif [[ -e $MRBOND_RUN/diag-$1 ]]; then
		echo "(diagnostics the peer asked for)"
		diag
	else
		return 0
	fi
	mad_capture_report "$1"
}

# ---- setup ----

# ---- hosta's controller (lib.sh: nvme_ctrl, connect_ctrl, ...) ----

# The controller's QPs on DEV: the cm_ids of nvme_rdma with their QPNs.
ctrl_qpns() {
	bq rdma res show cm_id link "$DEV/" | grep -w nvme_rdma |
		sed -n 's/.* lqpn \([0-9]*\) .*/\1/p'
}

# libaio if it works in the guest, else psync (decided once).
fio_engine() {
	local blk
	if [[ ! -s $TB_TMP/engine ]]; then
		blk=$(nvme_blk) || return 1
		if bounded 120 "$TB_TMP/probe" fio --name=probe --filename="$blk" --rw=read \
			--bs=4k --size=64k --direct=1 --ioengine=libaio; then
			echo libaio >"$TB_TMP/engine"
		else
			echo psync >"$TB_TMP/engine"
		fi
	fi
	cat "$TB_TMP/engine"
}

fio_ok() {  # fio_ok OUT RC: exit 0, no error, no verification failure
	if (($2 != 0)) || ! grep -q 'err= 0' "$1" || grep -qiE 'verify.*(fail|bad|mismatch)|crc32c.*(wanted|bad)' "$1"; then
		echo "fio failed (rc $2):"
		tail -n 40 "$1"
		return 1
	fi
	grep -E 'err=|READ:|WRITE:' "$1"
}

# fio_start OUT: the time-based verifying run of the fault tests, in the
# background (a child of this shell, so that `wait` gets its status); its pid
# in FIO_PID.
fio_start() {
	local blk engine
	blk=$(nvme_blk) && engine=$(fio_engine) || return 1
	fio --name=fault --filename="$blk" --rw=randrw --bs=4k --iodepth=8 --numjobs=1 \
		--direct=1 --ioengine="$engine" --size=16m --time_based --runtime=$FIO_RUNTIME \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_backlog=256 \
		>"$1" 2>&1 </dev/null &
	FIO_PID=$!
}

# sampler CTRL: every 100 ms "us state flushed_wr" (flushed_wr: the bond's
# device counter), until killed.
sampler() {
	local st fl=-
	while :; do
		set +x
		{ read -r st <"/sys/class/nvme/$1/state"; } 2>/dev/null
		[[ -n $st ]] || st=gone
		[[ $MODE == bond ]] && { { read -r fl <"$SYS/mrbond0/hw_counters/flushed_wr"; } 2>/dev/null
			[[ -n $fl ]] || fl=-; }
		echo "${EPOCHREALTIME/./} $st $fl"
		sleep 0.1
	done
}

# timings SAMPLES T0_US: ms from the fault to the last rise of flushed_wr, to
# the controller leaving live and to it being live again; fails unless the
# controller did both.
timings() {
	awk -v t0="$2" '
		$1 < t0 { prev = $3; next }
		{ ms = int(($1 - t0) / 1000) }
		$3 ~ /^[0-9]+$/ && prev ~ /^[0-9]+$/ && $3 != prev { last_flush = ms; flushed += $3 - prev }
		{ prev = $3 }
		$2 != "live" && left == "" { left = ms }
		$2 == "live" && left != "" && back == "" { back = ms }
		END {
			printf "flushed_wr rose by %d, last rise at +%s ms\n", flushed, last_flush == "" ? "none" : last_flush
			printf "controller left live at +%s ms, live again at +%s ms\n",
				left == "" ? "never" : left, back == "" ? "never" : back
			exit !(left != "" && back != "")
		}' "$1"
}

# ---- tests ----

test_connect() {
	local rc=0 c out=$TB_TMP/connect p q total=0 min=-1 max=0 n_ctrl nq
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier connected 600 || return 1
		echo "target side, $DEV:"
		bq rdma res show cm_id link "$DEV/"
		bq rdma res show qp link "$DEV/" | grep -v 'type GSI'
		[[ $MODE == bond ]] && bq "$CTL" -j bond show mrbond0
		# Admin queue plus at least one I/O queue, accepted on DEV.
		n_ctrl=$(bq rdma res show cm_id link "$DEV/" | grep -w nvmet_rdma | grep -vc LISTEN)
		((n_ctrl >= 2)) || { echo "nvmet has $n_ctrl connected queues on $DEV"; rc=1; }
		if [[ $MODE == bond ]]; then
			for ((p = 1; p <= MRBOND_LINKS; p++)); do echo "port $p qps $(member_gauge "$p" qps)"; done
		fi
		((rc == 0)) || diag
		return $rc
	fi
	modprobe nvme-rdma && connect_ctrl "$out" || rc=1
	cat "$out"
	barrier connected 600 || rc=1
	((rc == 0)) || { diag; return 1; }
	c=$(nvme_ctrl) || { echo "no controller for $NQN"; diag; return 1; }
	echo "$c: $(ctrl_state "$c"), $(cat "/sys/class/nvme/$c/transport") $(cat "/sys/class/nvme/$c/address"), namespace $(nvme_blk)"
	nvme_blk >/dev/null || { echo "no namespace block device"; rc=1; }
	bq rdma res show cm_id link "$DEV/"
	bq rdma res show qp link "$DEV/" | grep -v 'type GSI'
	# nvme-rdma caps I/O queues at the online CPUs: count what it created.
	nq=$(dmesg | sed -n "s/.*nvme $c: creating \([0-9]*\) I\/O queues.*/\1/p" | tail -n 1)
	n_ctrl=$(ctrl_qpns | wc -l)
	echo "controller: ${nq:-?} I/O queues + admin, $n_ctrl QPs on $DEV"
	[[ -n $nq ]] && ((n_ctrl == nq + 1)) || { echo "expected $((nq + 1)) QPs"; rc=1; }
	for q in $(ctrl_qpns); do
		bq rdma res show qp link "$DEV/" lqpn "$q" | grep -q "lqpn $q " ||
			{ echo "QP $q of a cm_id not in rdma res show qp"; rc=1; }
	done
	if [[ $MODE == bond ]]; then
		bq "$CTL" -j bond show mrbond0
		[[ $(bq cat "$SYS/mrbond0/mrbond/mode") == rail && $(bq cat "$SYS/mrbond0/mrbond/policy") == rr ]] ||
			{ echo "mode $(bq cat "$SYS/mrbond0/mrbond/mode") policy $(bq cat "$SYS/mrbond0/mrbond/policy")"; rc=1; }
		for ((p = 1; p <= MRBOND_LINKS; p++)); do
			q=$(member_gauge "$p" qps)
			echo "port $p qps ${q:-none}, member ${MEMBER_PREFIX}$((p - 1)) RC QPs $(bq rdma res show qp link "${MEMBER_PREFIX}$((p - 1))/" | grep -c 'type RC')"
			[[ -n $q ]] || { rc=1; continue; }
			total=$((total + q))
			((q > max)) && max=$q
			((min < 0 || q < min)) && min=$q
		done
		((n_ctrl >= MRBOND_LINKS && min == 0)) && { echo "a port hosts none of the controller's QPs"; rc=1; }
		((max - min <= 1)) || { echo "rr: per-port qps differ by $((max - min))"; rc=1; }
		((total == n_ctrl)) || { echo "ports count $total QPs, the controller has $n_ctrl"; rc=1; }
	fi
	((rc == 0)) || diag
	return $rc
}

# `rdma -dd res show qp` names the member of every RC QP of the bond
# (fill_res_qp_entry), and that member hosts a QP of the same number. The
# rdma tool prints driver attributes with a drv_ prefix (iproute2 6.1).
test_res_qp_member() {
	local rc=0 n=0 lqpn member mqpn
	while read -r lqpn member mqpn; do
		n=$((n + 1))
		[[ $member == "$MEMBER_PREFIX"* && $mqpn == "$lqpn" ]] ||
			{ echo "QP $lqpn: member $member, member QPN $mqpn"; rc=1; continue; }
		bq rdma res show qp link "$member/" lqpn "$lqpn" | grep -q "lqpn $lqpn " ||
			{ echo "QP $lqpn: $member has no such QP"; rc=1; }
	done < <(bq rdma -dd -j res show qp link mrbond0/ |
		jq -r '.[] | select(.type == "RC") |
			"\(.lqpn) \(.drv_member // .member // "none") \(.drv_member_qpn // .member_qpn // "none")"')
	((n > 0)) || { echo "no RC QP on mrbond0:"; bq rdma -dd res show qp link mrbond0/; rc=1; }
	echo "$n RC QPs of mrbond0, each named with its member"
	bq rdma -dd res show qp link mrbond0/ | grep -m 1 -w RC
	return $rc
}

# Transparent failover's channel: both guests run the bond, so every RC QP
# of mrbond0 (the controller's queues, at either end) exchanged HELLOs with
# its peer over the member's GSI and shows tfo_capable 1 in `rdma -dd res
# show qp`; the device's counters saw at least as many HELLOs and capable
# connections. Either end's check fails if the other end's HELLOs never
# came (a bond without the channel, a lost MAD with no answer).
tfo_qps() {  # "lqpn capable" per RC QP of mrbond0
	bq rdma -dd -j res show qp link mrbond0/ |
		jq -r '.[] | select(.type == "RC") | "\(.lqpn) \(.drv_tfo_capable // .tfo_capable // "none")"'
}
all_tfo_capable() { [[ -n $(tfo_qps) ]] && ! tfo_qps | grep -qv ' 1$'; }
test_tfo_hello_handshake() {
	local rc=0 n c
	wait_until 10 all_tfo_capable || rc=1
	n=$(tfo_qps | wc -l)
	echo "$n RC QPs on mrbond0; not capable: $(tfo_qps | grep -v ' 1$' | tr '\n' ' ')"
	for c in tfo_hello_sent tfo_hello_heard tfo_capable; do
		echo "$c $(cat "$SYS/mrbond0/hw_counters/$c")"
		(($(cat "$SYS/mrbond0/hw_counters/$c") >= n)) || rc=1
	done
	((n > 0)) || rc=1
	((rc == 0)) || bq rdma -dd res show qp link mrbond0/
	barrier tfo-hello-checked 120 || rc=1
	return $rc
}

# Each capable connection's move session, as `rdma -dd res show qp` shows
# it: running on the rail of the QP's member (its slot), the two ends of a
# connection in opposite roles (the REQ's sender active), and the rails
# the peer's HELLO named: each a GID of the peer's member on that rail of
# the connection's kind (RoCE v2, IPv4-mapped: the NVMe-oF addresses), one
# for every member the peer has. A move's messages and its new QP go
# there.
tfo_sessions() {  # "lqpn rqpn role state rail member peer_rails" per RC QP
	bq rdma -dd -j res show qp link mrbond0/ | jq -r '.[] | select(.type == "RC") |
		[.lqpn, (.rqpn // "none"), (.drv_tfo_role // .tfo_role // "none"),
		 (.drv_tfo_state // .tfo_state // "none"), (.drv_tfo_rail // .tfo_rail // "none"),
		 (.drv_member // .member // "none"), (.drv_tfo_peer_rails // .tfo_peer_rails // "")] |
		map(tostring) | join(" ")'
}
my_rails() {  # "rail=gid" for each RoCE v2 IPv4-mapped GID of each member
	local rail=0 m f i
	for m in $(cat "$SYS/mrbond0/mrbond/member_list"); do
		for f in "$SYS/$m"/ports/1/gids/*; do
			i=${f##*/}
			[[ $(cat "$SYS/$m/ports/1/gid_attrs/types/$i" 2>/dev/null) == "RoCE v2" ]] ||
				continue
			[[ $(cat "$f") == 0000:0000:0000:0000:0000:ffff:* ]] && echo "$rail=$(cat "$f")"
		done
		rail=$((rail + 1))
	done
}
# sessions_check MY_SESSIONS PEER_SESSIONS MEMBER_LIST PEER_RAILS
sessions_check() {
	awk -v members="$3" '
		FILENAME == ARGV[1] { peer_role[$1] = $3; next }
		FILENAME == ARGV[2] { owned[$1] = 1; rails_of[substr($1, 1, index($1, "=") - 1)] = 1; next }
		{
			n++
			split(members, m, " "); slot = "none"
			for (i in m) if (m[i] == $6) slot = i - 1
			why = ""
			if ($4 != "running") why = why " state " $4
			if ($5 != slot) why = why " rail " $5 " (member " $6 " is slot " slot ")"
			if (!($2 in peer_role)) why = why " no peer QP " $2
			else if ($3 == peer_role[$2] || ($3 != "active" && $3 != "passive"))
				why = why " roles " $3 "/" peer_role[$2]
			named = 0; delete seen
			k = split($7, pairs, ",")
			for (i = 1; i <= k; i++) {
				if (!(pairs[i] in owned)) why = why " not the peer'"'"'s: " pairs[i]
				seen[substr(pairs[i], 1, index(pairs[i], "=") - 1)] = 1
			}
			for (r in rails_of) if (!(r in seen)) why = why " rail " r " not named"
			if (why != "") { bad++; print "QP " $1 ":" why }
		}
		END { exit !(n > 0 && bad == 0) }' "$2" "$4" "$1"
}
test_tfo_session_rails() {
	local mine=$MRBOND_RUN/tfo-sessions-$MRBOND_ROLE theirs=$MRBOND_RUN/tfo-sessions-$(peer_role)
	local rc=0
	my_rails >"$MRBOND_RUN/tfo-rails-$MRBOND_ROLE"
	tfo_sessions >"$mine"
	barrier tfo-sessions 60 || return 1
	echo "lqpn rqpn role state rail member peer_rails, here:"
	cat "$mine"
	echo "the peer's rails:"
	cat "$MRBOND_RUN/tfo-rails-$(peer_role)"
	sessions_check "$mine" "$theirs" "$(cat "$SYS/mrbond0/mrbond/member_list")" \
		"$MRBOND_RUN/tfo-rails-$(peer_role)" || rc=1
	barrier tfo-sessions-checked 60 || rc=1
	return $rc
}

tfo_counts() {  # "lqpn rqpn tx rx" per RC QP of mrbond0
	bq rdma -dd -j res show qp link mrbond0/ | jq -r '.[] | select(.type == "RC") |
		"\(.lqpn) \(.rqpn // "none") \(.drv_tfo_tx_consuming // .tfo_tx_consuming // "none")" +
		" \(.drv_tfo_rx_consumed // .tfo_rx_consumed // "none")"'
}
# counts_match MINE PEER: every connection of MINE is in PEER, each end's
# consuming sends the other's consumed receives; some were sent.
counts_match() {
	awk 'NR == FNR { tx[$1] = $3; rx[$1] = $4; next }
		{ n++; if (!($2 in tx) || $3 != rx[$2] || $4 != tx[$2] || $3 == "none") bad++; sent += $3 }
		END { exit !(n > 0 && bad == 0 && sent > 0) }' "$2" "$1"
}
# What a move exchanges: per connection, each end's count of the sends it
# posted that consume a receive at the other end (SEND, WRITE with
# immediate) is the other end's count of receives consumed, once nothing
# is in flight. Both ends snapshot at a barrier; an NVMe-oF keep-alive in
# flight at that moment makes a round inconclusive, so up to 5 rounds,
# each judged by both ends from both snapshots.
test_tfo_consuming_counts() {
	local round mine theirs
	for round in 1 2 3 4 5; do
		mine=$MRBOND_RUN/tfo-counts-$round-$MRBOND_ROLE
		theirs=$MRBOND_RUN/tfo-counts-$round-$(peer_role)
		barrier "tfo-counts-ready-$round" 60 || return 1
		tfo_counts >"$mine"
		barrier "tfo-counts-$round" 60 || return 1
		counts_match "$mine" "$theirs" && touch "$mine.ok"
		barrier "tfo-counts-judged-$round" 60 || return 1
		if [[ -e $mine.ok && -e $theirs.ok ]]; then
			echo "round $round: lqpn rqpn tx rx here, then at $(peer_role):"
			cat "$mine" "$theirs"
			return 0
		fi
		sleep 1
	done
	echo "no round matched; the last one, here then at $(peer_role):"
	cat "$mine" "$theirs"
	return 1
}

test_fio_verify() {
	local rc=0 blk engine out=$TB_TMP/fio-verify
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier fio-verify-done 900
		return
	fi
	if blk=$(nvme_blk) && engine=$(fio_engine); then
		echo "fio on $blk, ioengine $engine"
		bounded 600 "$out" fio --name=v --filename="$blk" --rw=randrw --bs=4k --iodepth=8 \
			--numjobs=1 --direct=1 --ioengine="$engine" --size=16m \
			--verify=crc32c --do_verify=1 --verify_fatal=1 || rc=$?
		fio_ok "$out" $rc || rc=1
	else
		echo "no controller or namespace"
		rc=1
	fi
	barrier fio-verify-done 900 || rc=1
	((rc == 0)) || diag
	return $rc
}

# fault_report MARK SAMPLES T0 HOSTED: what the fault did, from the sampler
# and from the kernel log. The controller must have reconnected if the
# member hosted some of its QPs.
fault_report() {
	local klog=$TB_TMP/klog-$1 rc=0
	if ! timings "$2" "$3" && (($4 > 0)); then
		echo "the controller did not reconnect"
		rc=1
	fi
	klog_after "$1" >"$klog"
	grep -m 1 -E 'rdma_mrbond: member .*: usable -> unusable' "$klog" |
		sed 's/^/member out (kernel log): /'
	grep -E 'rdma_mrbond: mrbond0: member .*(moved to error|flushed)' "$klog" | tail -n 1 |
		sed 's/^/last flush (kernel log): /'
	{
		grep -m 1 -E 'Reconnecting' "$klog"
		grep -m 1 -E 'Successfully reconnected|Removing ctrl' "$klog"
	} | sed 's/^/controller (kernel log): /'
	return $rc
}

# fio_after_fault PID OUT T0_US SECS WHAT: the fio run PID (output in OUT)
# must end within SECS, with no error, while the fault WHAT (injected at
# T0_US) lasts.
fio_after_fault() {
	local frc=0
	wait_pid "$4" "$1" || frc=$?
	if ((frc == 124)); then
		echo "fio stalled: still running $4 s after the fault, with $5 in place"
		return 1
	fi
	echo "fio finished $(ms_since_us "$3") ms after the fault"
	fio_ok "$2" $frc
}

# fault_under_fio MARK MEMBER FAULT REPAIR, on hosta: fio runs, the function
# FAULT takes MEMBER out, fio must end on time without an error, then REPAIR
# restores it. MARK names the fault in the kernel log.
fault_under_fio() {
	local mark=$1 member=$2 fault_on=$3 fault_off=$4 out=$TB_TMP/fio-$1 samples=$TB_TMP/samples-$1
	local rc=0 c spid t0 frc=0 hosted=0 tail=$((FIO_RUNTIME - FAULT_AT + FIO_GRACE))
	FIO_PID=
	c=$(nvme_ctrl) && fio_start "$out" || { echo "no controller or fio"; rc=1; }
	sleep $FAULT_AT
	if ((rc == 0)); then
		hosted=$(bq rdma res show qp link "$member/" | grep -c 'type RC')
		echo "$member hosts $hosted RC QP(s) of the controller"
		# A fault on a member without QPs would prove nothing.
		[[ $MODE == bond ]] && ((hosted == 0)) && rc=1
		sampler "$c" >"$samples" 2>/dev/null </dev/null &
		spid=$!
	fi
	kmark "$mark"
	t0=${EPOCHREALTIME/./}
	$fault_on || { echo "fault $mark not injected"; rc=1; }
	if [[ -n $spid ]]; then
		# fio must finish while the fault lasts: no stall, no error.
		fio_after_fault "$FIO_PID" "$out" "$t0" $tail "$mark" || rc=1
		kill "$spid" 2>/dev/null
		wait_pid 5 "$spid"
		fault_report "$mark" "$samples" "$t0" "$hosted" || rc=1
	fi
	$fault_off || { echo "repair after $mark failed"; rc=1; }
	if [[ -n $FIO_PID ]] && kill -0 "$FIO_PID" 2>/dev/null; then
		# Raw mode: the controller may come back with the repair.
		wait_pid 120 "$FIO_PID"
		frc=$?
		echo "fio ended $(ms_since_us "$t0") ms after the fault, after the repair: rc $frc"
		tail -n 20 "$out"
	fi
	t0=${EPOCHREALTIME/./}
	if wait_until 120 ctrl_live; then
		echo "controller live $(ms_since_us "$t0") ms after the repair"
	else
		echo "controller $(nvme_ctrl || echo gone) not live 120 s after the repair"
		rc=1
	fi
	return $rc
}

cable0_down() { cable 0 down; }
cable0_up() {
	local t0
	cable 0 up || return 1
	[[ $MODE == bond ]] || return 0
	t0=${EPOCHREALTIME/./}
	wait_until 60 member_is ${MEMBER_PREFIX}0 usable || { echo "${MEMBER_PREFIX}0 still $(member_state ${MEMBER_PREFIX}0)"; return 1; }
	echo "${MEMBER_PREFIX}0 usable $(ms_since_us "$t0") ms after the cable came back"
}

test_cable_pull() {
	local rc=0
	if [[ $MRBOND_ROLE == hostb ]]; then
		cable0_down || rc=1
		cable0_up || rc=1
		[[ $MODE == bond ]] && { gsi_intact || rc=1; }
		((rc == 0)) || diag
		return $rc
	fi
	fault_under_fio cable-pull ${MEMBER_PREFIX}0 cable0_down cable0_up || rc=1
	if [[ $MODE == raw ]]; then
		echo "raw mode: nvme-rdma on ${MEMBER_PREFIX}0 cannot move to another rail; failing is expected here"
	fi
	# Only the bond spoke through the members: their QP1s must be intact.
	[[ $MODE == bond ]] && { gsi_intact || rc=1; }
	((rc == 0)) || diag
	return $rc
}

member_hosts_qps() { bq rdma res show qp link "$1/" | grep -q 'type RC'; }
member_del() { bq -t 60 rdma link del "$VICTIM"; }
member_add() {
	local nic t0
	nic=$(slave_of_link "${VICTIM#"$MEMBER_PREFIX"}") || return 1
	bq -t 60 rdma link add "$VICTIM" type "$MEMBER_TYPE" netdev "$nic" || return 1
	[[ $MODE == bond ]] || return 0
	t0=${EPOCHREALTIME/./}
	wait_until 60 member_is "$VICTIM" usable || { echo "$VICTIM still $(member_state "$VICTIM")"; return 1; }
	echo "$VICTIM usable $(ms_since_us "$t0") ms after it was re-created"
}

test_member_removed() {
	local rc=0 i
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier member-del-done 600 || rc=1
		((rc == 0)) || diag
		return $rc
	fi
	# rxe1, which holds every QP after the cable pull on two links; with more
	# links, the first member that hosts some (raw mode: rxe1, which hosts
	# none, since removing rxe0 deletes the controller).
	VICTIM=${MEMBER_PREFIX}1
	if [[ $MODE == bond ]] && ! member_hosts_qps ${MEMBER_PREFIX}1; then
		for ((i = 0; i < MRBOND_LINKS; i++)); do
			member_hosts_qps "${MEMBER_PREFIX}$i" && { VICTIM=${MEMBER_PREFIX}$i; break; }
		done
	fi
	fault_under_fio member-del "$VICTIM" member_del member_add || rc=1
	barrier member-del-done 600 || rc=1
	((rc == 0)) || diag
	return $rc
}

# ---- a REQ while a member's listener is being set up ----
#
# Defect: the REQ listener a member gets when it (re)joins was live before
# its context was set, and a REQ in between made the handler dereference
# NULL; peers reconnect exactly when members rejoin. hostb re-creates rxe1
# with that window held open for 8 s by the injection point and says when
# it is open; hosta, its rxe0 drained so that its new QPs (and their REQs)
# take rail 1, then connects extra controllers in a loop: hostb must
# survive, and the connects succeed.

LISTEN_VICTIM=${MEMBER_PREFIX}1

# fabrics_connect: one more controller of the target, written to
# /dev/nvme-fabrics with duplicate_connect; prints "instance=N,cntlid=M".
fabrics_connect() {
	local fd line
	exec {fd}<>/dev/nvme-fabrics || return 1
	if ! echo "transport=rdma,traddr=$TARGET_IP,trsvcid=4420,nqn=$NQN,nr_io_queues=1,reconnect_delay=1,ctrl_loss_tmo=5,duplicate_connect" >&"$fd"; then
		exec {fd}>&-
		return 1
	fi
	read -r line <&"$fd"
	exec {fd}>&-
	echo "$line"
}
LISTEN_OPEN=$MRBOND_RUN/listen-open

test_regress_listen_context_race() {
	local rc=0 out=$TB_TMP/listen nic ok=0 tries=0 end c before
	if [[ $MODE != bond ]]; then
		echo "raw mode: no bond, no listener of ours"
		barrier listen-armed 300 && barrier listen-done 600
		return
	fi
	if [[ $MRBOND_ROLE == hostb ]]; then
		nic=$(slave_of_link "${LISTEN_VICTIM#"$MEMBER_PREFIX"}") || rc=1
		barrier listen-armed 300 || rc=1
		inject_arm cm_listen 8000 || rc=1
		bq -t 60 rdma link del "$LISTEN_VICTIM" && bq -t 60 rdma link add "$LISTEN_VICTIM" type "$MEMBER_TYPE" netdev "$nic" || rc=1
		if wait_until 30 eval '(($(inject_hits cm_listen) > 0))'; then
			touch "$LISTEN_OPEN"
		else
			echo "the listener window was never opened"
			rc=1
		fi
		wait_until 60 member_is "$LISTEN_VICTIM" usable || { echo "$LISTEN_VICTIM: $(member_state "$LISTEN_VICTIM")"; rc=1; }
		barrier listen-done 600 || rc=1
	else
		modprobe nvme-rdma || rc=1
		bq "$CTL" member set mrbond0 ${MEMBER_PREFIX}0 admin drain || rc=1
		before=$(ls /sys/class/nvme)
		barrier listen-armed 300 || rc=1
		wait_until 60 test -e "$LISTEN_OPEN" || { echo "hostb never opened the window"; rc=1; }
		end=$((EPOCHSECONDS + 20))
		while ((EPOCHSECONDS < end)); do
			tries=$((tries + 1))
			# The kernel's own interface: nvme-cli 2.3 refuses a
			# second controller of a target (-D, another host NQN
			# or host address alike).
			bounded 60 "$out" fabrics_connect && ok=$((ok + 1))
			for c in $(comm -13 <(echo "$before") <(ls /sys/class/nvme)); do
				bounded 60 "$out.d" nvme disconnect -d "$c"
			done
		done
		bq "$CTL" member set mrbond0 ${MEMBER_PREFIX}0 admin up || rc=1
		echo "extra controllers: $ok of $tries connects succeeded"
		((ok > 0)) || { echo "no connect succeeded"; cat "$out"; rc=1; }
		barrier listen-done 600 || rc=1
	fi
	! dmesg | grep -E 'BUG:|Oops|general protection' || { echo "kernel oops"; rc=1; }
	((rc == 0)) || diag
	return $rc
}

# ---- a connect whose member dies while the CM exchange is in flight ----
#
# Defect: a member removed while hosta's REQ waited for the REP left ib_cm to
# time the REQ out (~4.6 s under rdma_cm, then the retry failed on the dead
# member; with a busy peer, 15 retries): connects stalled although another
# member was usable. The bond now ends such an exchange at once with a REJ
# to the vdev's own ib_cm (rdma_cm: REJECTED), so the ULP retries on a
# survivor. hostb holds every REQ (injection point cm_req_in, 8 s), so each
# removal lands while hosta's REQ is out; the offsets vary where in that
# window. Classes: succeeded, failed fast (within CDR_FAST_MS of the removal),
# failed slow, stalled (no answer in 60 s), and missed: the REP came before
# the removal took effect (the lockdep kernel is slow), which is transparent
# failover's case; at most half may miss, and at least half of the REQs must
# have been held by hostb (the others lost the race to the removal).
# Ten removal offsets in the full run (run-tests.sh --full), four in CI:
# the hold puts every try in the window, so four catch the defect as well.
CDR_TRIES=$((${MRBOND_FULL:-0} == 1 ? 10 : 4))
CDR_HOLD_MS=8000  # beyond a REQ timeout: its retries are held too
CDR_FAST_MS=500  # the fix answers within ms; the REQ timeout takes seconds
CDR_HELD=$MRBOND_RUN/cdr-held  # hostb: REQs held so far
CDR_DONE=$MRBOND_RUN/cdr-done

member_qps() { bq cat "$SYS/mrbond0/mrbond/members/$1/qps"; }
bond_ended_exchanges() { dmesg | grep -c 'lost its member while connecting'; }

cdr_disconnect_all() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c ]] && bounded 60 "$1.d" nvme disconnect -d "${c##*/}"
	done
}

cdr_hold_reqs() {  # hostb, until hosta is done
	local held=0 h
	inject_arm cm_req_in 0 || return 1
	while [[ ! -e $CDR_DONE ]]; do
		h=$(inject_hits cm_req_in)
		if ((h > held)); then
			held=$h
			echo "$h" >"$CDR_HELD.tmp" && mv "$CDR_HELD.tmp" "$CDR_HELD"
		fi
		[[ $(inject_armed cm_req_in) == 0 ]] && inject_arm cm_req_in "$CDR_HOLD_MS"
		sleep 0.1
	done
	inject_arm cm_req_in 0
	echo "REQs held on hostb: $held"
}

test_regress_connect_during_member_removal() {
	local rc=0 out=$TB_TMP/cdr i off pid crc t_rm dt victim nic held m
	local ok=0 fast=0 slow=0 stalled=0 missed=0 reached=0 ended q0 q1
	if [[ $MODE != bond ]]; then
		echo "raw mode: no bond"
		barrier cdr-start 300 && barrier cdr-done 900
		return
	fi
	mad_capture_start cdr
	if [[ $MRBOND_ROLE == hostb ]]; then
		rm -f "$CDR_HELD" "$CDR_DONE"
		barrier cdr-start 300 || rc=1
		cdr_hold_reqs || rc=1
		barrier cdr-done 900 || rc=1
		mad_capture_stop
		diag_end cdr $rc
		return $rc
	fi
	modprobe nvme-rdma || rc=1
	# The suite's controller would reconnect through the held window.
	disconnect_ctrl "$out" || { cat "$out"; rc=1; }
	barrier cdr-start 300 || rc=1
	for ((i = 0; i < CDR_TRIES && rc == 0; i++)); do
		off=0.$i
		held=$(cat "$CDR_HELD" 2>/dev/null || echo 0)
		ended=$(bond_ended_exchanges)
		q0=$(member_qps ${MEMBER_PREFIX}0) q1=$(member_qps ${MEMBER_PREFIX}1)
		fabrics_connect >"$out.$i" 2>&1 &
		pid=$!
		# The QP, placed just before its REQ leaves, seen here in sysfs:
		# hostb's report of the hold, `rdma res` (seconds on the lockdep
		# kernel) or ib_cm's REQ counter (counted when the REP comes)
		# would leave too little of the hold for the removal.
		if ! wait_until 30 eval '(($(member_qps ${MEMBER_PREFIX}0) > q0 || $(member_qps ${MEMBER_PREFIX}1) > q1))'; then
			echo "try $i: no member got the QP"
			wait_pid 60 "$pid"
			rc=1
			break
		fi
		if (($(member_qps ${MEMBER_PREFIX}0) > q0)); then victim=${MEMBER_PREFIX}0; else victim=${MEMBER_PREFIX}1; fi
		sleep "$off"
		nic=$(slave_of_link "${victim#"$MEMBER_PREFIX"}") || { rc=1; break; }
		bq -t 60 rdma link del "$victim" || rc=1
		t_rm=${EPOCHREALTIME/./}
		wait_pid 60 "$pid"
		crc=$?
		dt=$(ms_since_us "$t_rm")
		if ((crc == 0 && $(bond_ended_exchanges) == ended)); then
			# The QP was past INIT when its member went: no exchange
			# to end (transparent failover's case).
			missed=$((missed + 1)) m="succeeded, the REP having come before the removal (not counted)"
		elif ((crc == 0)); then
			ok=$((ok + 1)) m="succeeded"
		elif ((crc == 124)); then
			stalled=$((stalled + 1)) m="stalled (no answer in 60 s)"
		elif ((dt <= CDR_FAST_MS)); then
			fast=$((fast + 1)) m="failed fast"
		else
			slow=$((slow + 1)) m="failed slow"
		fi
		echo "try $i: removal ${off}s into the held REQ of a QP on $victim: $m, $dt ms after the removal: $(tr '\n' ' ' <"$out.$i")"
		# A removal may also beat the REQ out of the member.
		if wait_until 10 eval '(($(cat "$CDR_HELD" 2>/dev/null || echo 0) > held))'; then
			reached=$((reached + 1))
		else
			echo "try $i: the REQ never reached hostb"
		fi
		bq -t 60 rdma link add "$victim" type "$MEMBER_TYPE" netdev "$nic" || rc=1
		wait_until 60 member_is "$victim" usable || { echo "$victim: $(member_state "$victim")"; rc=1; }
		cdr_disconnect_all "$out"
	done
	touch "$CDR_DONE"
	echo "$i tries: $ok succeeded, $fast failed fast (<= $CDR_FAST_MS ms), $slow failed slow, $stalled stalled, $missed missed the hold; $reached REQs held by hostb"
	echo "exchanges the bond ended: $(bond_ended_exchanges)"
	((i == CDR_TRIES && slow + stalled == 0)) || rc=1
	((missed <= CDR_TRIES / 2)) || { echo "more than half of the tries missed the hold"; rc=1; }
	((reached >= CDR_TRIES / 2)) || { echo "only $reached REQs reached hostb"; rc=1; }
	((rc == 0)) || ask_peer_diag cdr
	barrier cdr-done 900 || rc=1
	mad_capture_stop
	! dmesg | grep -E 'BUG:|Oops|general protection' || { echo "kernel oops"; rc=1; }
	diag_end cdr $rc
	return $rc
}

# ---- no MAD through a member whose link is down ----
#
# Defect: the GSI proxy sent a REQ or REP through the member of the QP it
# speaks for without looking at that member's link. Sent while the link is
# down, the MAD kills the member's QP1 (rxe 6.12, see gsi_state) and every
# later connect over that rail times out (78 s). The window lies between the
# carrier drop and the bond failing the member's QPs; two injection points
# widen it: the REQ of a new connect waits in the proxy (gsi_req_out) while
# the cable of its QP's member is pulled, and that member's QPs are failed
# late (member_fail), so the QP still names the member when the REQ goes.
# The target's address is a static neighbour on every rail (common on RoCE
# fabrics): a learned one is flushed when the carrier drops, and a packet
# sent then waits for ARP and is dropped without an error reaching rxe; a
# static one goes into the down link's noop qdisc, which refuses it, as a
# learned one does in the few ms before the flush. The member's QP1 must
# stay RTS and the bond must log the REQ as not sent.
# On the debug kernel under TCG, seeing the REQ held, finding its member
# and pulling the cable took 8.5 s once (one cat of `hits` 4.5 s): the REQ
# waits 15 s, and the member's QPs fail 25 s after the pull, after the REQ
# went whenever within the hold the pull came.
NOMAD_REQ_MS=15000
NOMAD_FAIL_MS=25000

nomad_static_neigh() {  # add|del
	local i mac
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		if [[ $1 == del ]]; then
			ip neigh del "$TARGET_IP" dev "r$i"
			continue
		fi
		# Learned by the suite's traffic, else the peer's bond MAC
		# (setup_t1), which its slaves and their VLANs carry.
		mac=$(ip -j neigh show to "$TARGET_IP" dev "r$i" | jq -r '.[0].lladdr // empty')
		[[ -n $mac ]] || mac=02:00:00:00:00:0$((1 - ME + 1))
		ip neigh replace "$TARGET_IP" lladdr "$mac" dev "r$i" nud permanent || return 1
	done
}

test_regress_no_mad_on_down_link() {
	local rc=0 out=$TB_TMP/nomad pid q0 q1 victim link s h0 h1
	if [[ $MODE != bond ]]; then
		echo "raw mode: no bond"
		barrier nomad-start 300 && barrier nomad-done 300
		return
	fi
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier nomad-start 300 || rc=1
		barrier nomad-done 300 || rc=1
		((rc == 0)) || diag
		return $rc
	fi
	cdr_disconnect_all "$out"
	barrier nomad-start 300 || rc=1
	nomad_static_neigh add || rc=1
	h0=$(inject_hits gsi_req_out) h1=$(inject_hits member_fail)
	q0=$(member_qps ${MEMBER_PREFIX}0) q1=$(member_qps ${MEMBER_PREFIX}1)
	kmark nomad
	inject_arm gsi_req_out $NOMAD_REQ_MS && inject_arm member_fail $NOMAD_FAIL_MS || rc=1
	fabrics_connect >"$out" 2>&1 &
	pid=$!
	# Pulled once the REQ waits, not when the QP appears: on the debug
	# kernel the ULP's setup between the two (its MR pool) took seconds,
	# and a pull then failed the connect before any REQ.
	if wait_until 60 eval '(($(inject_hits gsi_req_out) > h0))' &&
		(($(member_qps ${MEMBER_PREFIX}0) > q0 || $(member_qps ${MEMBER_PREFIX}1) > q1)); then
		if (($(member_qps ${MEMBER_PREFIX}0) > q0)); then victim=${MEMBER_PREFIX}0; else victim=${MEMBER_PREFIX}1; fi
		link=${victim#"$MEMBER_PREFIX"}
		echo "the connect's QP is on $victim: pulling rail $link while its REQ waits"
		fault link "$link" down || { echo "QMP set_link on link $link failed"; rc=1; }
		# The REQ goes at NOMAD_REQ_MS, the QPs fail at NOMAD_FAIL_MS.
		wait_until $((NOMAD_REQ_MS / 1000 + 10)) eval 'klog_after nomad | grep -q "gsi_req_out: resumed"' ||
			{ echo "the held REQ was never released"; rc=1; }
		sleep 2
		s=$(gsi_state "$victim")
		echo "$victim's QP1 $s with the link down ($(send_err_of "$victim"))"
		[[ $s == RTS ]] || rc=1
		fault link "$link" up || { echo "QMP set_link on link $link failed"; rc=1; }
		wait_until 60 member_is "$victim" usable || { echo "$victim still $(member_state "$victim")"; rc=1; }
		s=$(gsi_state "$victim")
		[[ $s == RTS ]] || { echo "$victim's QP1 $s after the link came back"; rc=1; }
	else
		echo "no REQ held in the proxy, or no member got its QP"
		rc=1
	fi
	wait_pid 90 "$pid"
	echo "connect: rc $?: $(tr '\n' ' ' <"$out")"
	inject_arm gsi_req_out 0 && inject_arm member_fail 0
	(($(inject_hits gsi_req_out) == h0 + 1 && $(inject_hits member_fail) == h1 + 1)) ||
		{ echo "the injection points were not both passed once: nothing proven"; rc=1; }
	klog_after nomad | grep -E 'not sent|QP1 send failed|unusable|rejected locally|inject:'
	klog_after nomad | grep -q 'QP1 send failed' && { echo "the bond sent a MAD on the downed link"; rc=1; }
	klog_after nomad | grep -q 'MAD class 0x7 attr 0x10 not sent' ||
		{ echo "no REQ refused by the proxy: the window was missed"; rc=1; }
	cdr_disconnect_all "$out"
	nomad_static_neigh del
	barrier nomad-done 300 || rc=1
	((rc == 0)) || diag
	return $rc
}

# ---- WRR weighs the members' live utilisation ----
#
# Rail 0 is loaded with raw RoCE traffic (ib_write_bw on rxe0, hosta to
# hostb) while both members' capacity is set to WRR_CAPACITY Mb/s: rxe0's
# sampled utilisation must rise to the top, rxe1's stay low, and the QPs of
# new controllers (nvme-rdma's QPs are placed by policy) must go to the
# members in WRR's proportions, admin weight x (1400 - utilisation permille),
# within WRR_SLACK QPs. Before the fix the module never sampled: WRR split
# them evenly.
WRR_CAPACITY=2  # Mb/s: below what ib_write_bw reaches under TCG (12 Mb/s on the lockdep kernel)
WRR_CTRLS=6  # two QPs each: admin and one I/O queue
WRR_SLACK=2
WRR_PORT=$((PORT_BASE + 30))
WRR_LOAD_S=75

member_attr() { bq cat "$SYS/mrbond0/mrbond/members/$1/$2"; }
util_at_least() { local u; u=$(member_attr "$1" utilisation); [[ $u =~ ^[0-9]+$ ]] && ((u >= $2)); }

wrr_load() {  # ib_write_bw on rail 0's member for WRR_LOAD_S seconds, both sides
	local gid
	gid=$(gid_index_of ${MEMBER_PREFIX}0 "$(rail_ip 0 "$ME")") || return 1
	local cmd=(timeout $((WRR_LOAD_S + 30)) ib_write_bw -d ${MEMBER_PREFIX}0 -x "$gid" -p "$WRR_PORT" -D "$WRR_LOAD_S"
		-s 65536 -F --report_gbits)
	if [[ $MRBOND_ROLE == hostb ]]; then
		"${cmd[@]}" >"$TB_TMP/wrr-server" 2>&1
	else
		run_client "${cmd[@]}" "$(rail_ip 0 1)"
	fi
}

test_wrr_live_utilisation() {
	local rc=0 out=$TB_TMP/wrr load u0 u1 p0 p1 d0 d1 n want c before i m
	if [[ $MODE != bond ]]; then
		echo "raw mode: no bond"
		barrier wrr-start 300 && barrier wrr-done 600
		return
	fi
	if [[ $MRBOND_ROLE == hostb ]]; then
		wrr_load &
		load=$!
		barrier wrr-start 300 || rc=1
		barrier wrr-done 600 || rc=1
		wait "$load" || { echo "ib_write_bw server: $(tail -n 3 "$TB_TMP/wrr-server")"; rc=1; }
		return $rc
	fi
	echo wrr >"$SYS/mrbond0/mrbond/policy" || rc=1
	for m in ${MEMBER_PREFIX}0 ${MEMBER_PREFIX}1; do
		echo "$WRR_CAPACITY" >"$SYS/mrbond0/mrbond/members/$m/capacity_mbps" || rc=1
	done
	barrier wrr-start 300 || rc=1
	wrr_load >"$out.load" 2>&1 &
	load=$!
	wait_until 40 util_at_least ${MEMBER_PREFIX}0 900 ||
		{ echo "${MEMBER_PREFIX}0 utilisation did not rise: $(member_attr ${MEMBER_PREFIX}0 utilisation)"; rc=1; }
	u0=$(member_attr ${MEMBER_PREFIX}0 utilisation) u1=$(member_attr ${MEMBER_PREFIX}1 utilisation)
	echo "utilisation under load (permille of $WRR_CAPACITY Mb/s): ${MEMBER_PREFIX}0 $u0, ${MEMBER_PREFIX}1 $u1"
	bq "$CTL" bond show mrbond0
	[[ $u1 =~ ^[0-9]+$ ]] && ((u1 <= 200)) || { echo "${MEMBER_PREFIX}1 is not idle: $u1"; rc=1; }
	p0=$(port_counter 1 placements) p1=$(port_counter 2 placements)
	before=$(ls /sys/class/nvme)
	for ((i = 0; i < WRR_CTRLS && rc == 0; i++)); do
		bounded 60 "$out.c$i" fabrics_connect || { echo "connect $i: $(cat "$out.c$i")"; rc=1; }
	done
	d0=$(($(port_counter 1 placements) - p0)) d1=$(($(port_counter 2 placements) - p1))
	n=$((d0 + d1))
	# Equal admin weights: rxe0's share is (1400 - u0) / (2800 - u0 - u1).
	want=$(awk -v n="$n" -v a="$u0" -v b="$u1" 'BEGIN { printf "%.1f", n * (1400 - a) / (2800 - a - b) }')
	echo "new QPs: ${MEMBER_PREFIX}0 $d0, ${MEMBER_PREFIX}1 $d1 of $n; WRR's proportions give ${MEMBER_PREFIX}0 $want"
	u0=$(member_attr ${MEMBER_PREFIX}0 utilisation) u1=$(member_attr ${MEMBER_PREFIX}1 utilisation)
	echo "utilisation after the connects: ${MEMBER_PREFIX}0 $u0, ${MEMBER_PREFIX}1 $u1"
	((n > 0)) && awk -v d="$d0" -v w="$want" -v s="$WRR_SLACK" 'BEGIN { exit !(d >= w - s && d <= w + s) }' ||
		{ echo "placement did not follow WRR's proportions"; rc=1; }
	for c in $(comm -13 <(echo "$before") <(ls /sys/class/nvme)); do
		bounded 60 "$out.d" nvme disconnect -d "$c"
	done
	wait "$load" || { echo "ib_write_bw client: $(tail -n 3 "$out.load")"; rc=1; }
	tail -n 2 "$TB_TMP/client"
	for m in ${MEMBER_PREFIX}0 ${MEMBER_PREFIX}1; do
		echo 0 >"$SYS/mrbond0/mrbond/members/$m/capacity_mbps" || rc=1
	done
	echo rr >"$SYS/mrbond0/mrbond/policy" || rc=1
	barrier wrr-done 600 || rc=1
	((rc == 0)) || diag
	return $rc
}

# ---- NFS over RDMA ----
#
# nfsd on hostb exports a tmpfs over RPC/RDMA (port 20049, on every
# address: its QPs are on the member a REQ comes in on); hosta mounts it
# with NFSv4.2 over mrbond0, where rpcrdma's QPs are placed by policy, and
# fio verifies a file there: plain, while the cable of the rail that
# carries rpcrdma's QP is pulled, and while its member is removed. rpcrdma
# moves its FRWR windows after mapping them (ibmr->iova), which the bond
# must carry into the member MR at REG_MR: without that the server's RDMA
# to a chunk fails with a remote access error.

NFS_PORT=20049
NFS_EXPORT=/srv/mrbond-nfs
NFS_MNT=/tmp/mrbond-nfs  # /tmp: the guest's /mnt is read-only
NFS_RAIL=$MRBOND_RUN/nfs-rail  # the rail of hosta's rpcrdma QP, for hostb

nfs_server_up() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mkdir -p "$NFS_EXPORT" /var/lib/nfs/v4recovery /run/rpcbind || return 1
	mount -t tmpfs -o size=96m tmpfs "$NFS_EXPORT" || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	# The shortest lease and grace nfsd takes: OPENs wait out the grace.
	echo 10 >/proc/fs/nfsd/nfsv4leasetime && echo 10 >/proc/fs/nfsd/nfsv4gracetime || return 1
	rpcbind -w || return 1
	exportfs -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 "*:$NFS_EXPORT" || return 1
	# NFSv4 only (v2 is gone from nfs-utils and the kernel).
	rpc.mountd -N 3 || return 1
	rpc.nfsd -N 3 4 || return 1
	echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist || return 1
	cat /proc/fs/nfsd/portlist
}

nfs_server_down() {
	rpc.nfsd 0
	exportfs -ua
	pkill rpc.mountd
	pkill rpcbind
	umount "$NFS_EXPORT"
}

nfs_mounted() { mountpoint -q "$NFS_MNT"; }

# The vdev port of hosta's rpcrdma QP (RC QPs on mrbond0 while only NFS
# runs beside the controller: those the controller does not own).
nfs_port() {
	local q
	for q in $(bq rdma res show cm_id link "$DEV/" | grep -v -w nvme_rdma | grep -v LISTEN |
		sed -n 's/.* lqpn \([0-9]*\) .*/\1/p'); do
		bq rdma res show qp link "$DEV/" lqpn "$q" | sed -n 's/^link [^/]*\/\([0-9]*\) .*/\1/p' | head -n1
		return 0
	done
	return 1
}

nfs_fio() {  # nfs_fio OUT [time-based runtime]: verifying fio on the mount
	local t=()
	[[ -n ${2:-} ]] && t=(--time_based --runtime="$2")
	fio --name=nfs --filename="$NFS_MNT/fio.dat" --rw=randrw --bs=64k --iodepth=4 \
		--numjobs=1 --direct=1 --ioengine=psync --size=16m "${t[@]}" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 >"$1" 2>&1 </dev/null
}

test_nfs_fio_verify() {
	local rc=0 out=$TB_TMP/nfs-fio port
	if [[ $MRBOND_ROLE == hostb ]]; then
		nfs_server_up || rc=1
		barrier nfs-server 300 || rc=1
		barrier nfs-fio-done 900 || rc=1
		bq rdma res show cm_id | grep -w 20049
		((rc == 0)) || diag
		return $rc
	fi
	barrier nfs-server 300 || rc=1
	modprobe rpcrdma && modprobe nfsv4 && mkdir -p "$NFS_MNT" || rc=1
	bounded 120 "$out.mount" mount -t nfs4 \
		-o "proto=rdma,port=$NFS_PORT,vers=4.2,hard,timeo=100" "$TARGET_IP:/" "$NFS_MNT" ||
		{ echo "mount failed:"; cat "$out.mount"; rc=1; }
	if nfs_mounted; then
		grep " $NFS_MNT " /proc/mounts
		bounded 600 "$out" nfs_fio "$out.fio"
		fio_ok "$out.fio" $? || rc=1
		port=$(nfs_port) || { echo "no rpcrdma QP on $DEV"; rc=1; }
		echo "rpcrdma's QP on $DEV port ${port:-none}"
		bq rdma res show cm_id link "$DEV/" | grep -v -w nvme_rdma
	fi
	barrier nfs-fio-done 900 || rc=1
	((rc == 0)) || diag
	return $rc
}

# nfs_fault NAME FAULT REPAIR, on hosta: fio on the mount while FAULT takes
# the rail (or member) of rpcrdma's QP out; fio must finish without an
# error, then REPAIR restores it.
nfs_fault() {
	local name=$1 fault_on=$2 fault_off=$3 out=$TB_TMP/nfs-$1 pid t0 rc=0
	nfs_fio "$out" $FIO_RUNTIME &
	pid=$!
	sleep $FAULT_AT
	kmark "nfs-$name"
	t0=${EPOCHREALTIME/./}
	$fault_on || { echo "fault $name not injected"; rc=1; }
	fio_after_fault "$pid" "$out" "$t0" $((FIO_RUNTIME - FAULT_AT + FIO_GRACE + 30)) "$name" || rc=1
	klog_after "nfs-$name" | grep -E 'rpcrdma|mrbond0: member' | head -n 8
	$fault_off || { echo "repair after $name failed"; rc=1; }
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && wait_pid 120 "$pid"
	return $rc
}

nfs_rail_down() { cable "$(cat "$NFS_RAIL")" down; }
nfs_rail_up() {
	local r
	r=$(cat "$NFS_RAIL")
	cable "$r" up || return 1
	[[ $MODE == bond ]] || return 0
	wait_until 60 member_is "${MEMBER_PREFIX}$r" usable || { echo "${MEMBER_PREFIX}$r still $(member_state "${MEMBER_PREFIX}$r")"; return 1; }
}

# gsi_repair_after_nfsd, on hostb: nfsd's RPC/RDMA listens on the members
# themselves, so its DREQ for a connection the pull broke goes out through
# the member's own ib_cm, not the bond; if that happened while the link was
# down, rxe killed the member's QP1 (see gsi_state). The member is then
# re-created, as an operator of rxe would have to, and the test says so. A
# QP1 the bond's proxy failed to send on (its "QP1 send failed" line) is
# the bond's doing: the test fails.
gsi_repair_after_nfsd() {
	local r s VICTIM
	for ((r = 0; r < MRBOND_LINKS; r++)); do
		s=$(gsi_state "${MEMBER_PREFIX}$r")
		[[ $s == RTS ]] && continue
		if klog_after nfs-cable-pull | grep -q "member ${MEMBER_PREFIX}$r: QP1 send failed"; then
			echo "${MEMBER_PREFIX}$r's QP1 is $s: the bond sent a MAD through it while its link was down"
			return 1
		fi
		echo "${MEMBER_PREFIX}$r's QP1 is $s ($(send_err_of "${MEMBER_PREFIX}$r")): the member's own ib_cm, which handles nfsd's connections there, sent on the downed link (rxe defect); re-creating ${MEMBER_PREFIX}$r"
		VICTIM=${MEMBER_PREFIX}$r
		member_del && member_add || return 1
	done
}

test_nfs_cable_pull() {
	local rc=0 port
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier nfs-rail-known 300 || rc=1
		kmark nfs-cable-pull
		nfs_rail_down || rc=1
		nfs_rail_up || rc=1
		[[ $MODE == bond ]] && { gsi_repair_after_nfsd || rc=1; }
		barrier nfs-gsi-checked 300 || rc=1
		((rc == 0)) || diag
		return $rc
	fi
	port=$(nfs_port) || { echo "no rpcrdma QP on $DEV"; rc=1; port=1; }
	echo $((port - 1)) >"$NFS_RAIL"
	echo "rpcrdma's QP on port $port: pulling rail $((port - 1))"
	barrier nfs-rail-known 300 || rc=1
	nfs_fault cable-pull nfs_rail_down nfs_rail_up || rc=1
	echo "rpcrdma's QP now on port $(nfs_port || echo none)"
	# hosta's members carry only the bond's MADs.
	[[ $MODE == bond ]] && { gsi_intact || rc=1; }
	barrier nfs-gsi-checked 300 || rc=1
	((rc == 0)) || diag
	return $rc
}

nfs_member_del() { bq -t 60 rdma link del "$VICTIM"; }

test_nfs_member_removal() {
	local rc=0 port
	mad_capture_start nfs-member
	if [[ $MRBOND_ROLE == hostb ]]; then
		barrier nfs-member-done 900 || rc=1
		mad_capture_stop
		diag_end nfs-member $rc
		return $rc
	fi
	port=$(nfs_port) || { echo "no rpcrdma QP on $DEV"; rc=1; port=1; }
	VICTIM=${MEMBER_PREFIX}$((port - 1))
	echo "rpcrdma's QP on port $port: removing $VICTIM"
	nfs_fault member-del nfs_member_del member_add || rc=1
	((rc == 0)) || ask_peer_diag nfs-member
	barrier nfs-member-done 900 || rc=1
	mad_capture_stop
	diag_end nfs-member $rc
	return $rc
}

test_nfs_unmount() {
	local rc=0
	if [[ $MRBOND_ROLE == hosta ]]; then
		bounded 120 "$TB_TMP/umount" umount "$NFS_MNT" || { cat "$TB_TMP/umount"; rc=1; }
	fi
	barrier nfs-unmounted 300 || rc=1
	[[ $MRBOND_ROLE == hostb ]] && { nfs_server_down || rc=1; }
	return $rc
}

# ---- ECN on the wire ----
#
# Each guest captures the RoCEv2 packets its peer sends to any QP but QP1
# (CM MADs leave through the members' own QP1, not through bond QPs) while
# hosta connects a new controller and runs I/O: the QPs of both bonds are
# placed after the knobs were set, so every packet must carry the bond's
# traffic class. Raw mode, without a bond: rdma_cm's default TOS 0.

ECN_TCLASS=0x68  # DSCP 26 (AF31)

peer_ip() {
	if [[ $MODE == bond ]]; then service_ip $((1 - ME)); else rail_ip 0 $((1 - ME)); fi
}

# set_ecn ENABLE: the bond's default traffic class and ECN marking.
set_ecn() {
	[[ $MODE == bond ]] || return 0
	echo $ECN_TCLASS >"$SYS/mrbond0/mrbond/ecn/tclass" &&
		echo "$1" >"$SYS/mrbond0/mrbond/ecn/enable" || return 1
	echo "mrbond0: ecn/tclass $(cat "$SYS/mrbond0/mrbond/ecn/tclass"), ecn/enable $(cat "$SYS/mrbond0/mrbond/ecn/enable")"
}

# capture_start OUT: tcpdump, in the background until capture_stop; returns
# once it listens. UDP bytes 12-15 of RoCEv2 are the BTH's reserved byte and
# destination QPN.
capture_start() {
	tcpdump -i any -t -nn -v -l -c 400 \
		"udp dst port $ROCE_PORT and src host $(peer_ip) and (udp[12:4] & 0xffffff) != 1" \
		>"$1" 2>"$1.err" </dev/null &
	CAPTURE_PID=$!
	wait_until 30 grep -q 'listening on' "$1.err" || { cat "$1.err"; return 1; }
}

capture_stop() {
	[[ -n $CAPTURE_PID ]] || return 0
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait_pid 20 "$CAPTURE_PID"
	CAPTURE_PID=
}

# capture_check OUT WANT: enough packets, every one with IPv4 TOS WANT, and
# (bond mode) packets on every rail where this bond has QPs: an RC QP and its
# peer are on the same rail.
capture_check() {
	local n summary rc=0 i q
	summary=$(awk 'match($0, /tos 0x[0-9a-f]+/) { print $1, substr($0, RSTART, RLENGTH) }' "$1" |
		sort | uniq -c)
	n=$(grep -c 'tos 0x' "$1")
	echo "packets from $(peer_ip) by interface and TOS:"
	echo "$summary"
	((n >= 20)) || { echo "only $n packets captured"; cat "$1.err"; rc=1; }
	if grep 'tos 0x' "$1" | grep -qv "tos $2[,)]"; then
		echo "packets without TOS $2:"
		grep 'tos 0x' "$1" | grep -v "tos $2[,)]" | head -n 5
		rc=1
	fi
	if [[ $MODE == bond ]]; then
		for ((i = 0; i < MRBOND_LINKS; i++)); do
			q=$(member_gauge $((i + 1)) qps)
			[[ $q =~ ^[0-9]+$ ]] || { echo "port $((i + 1)): no qps file"; rc=1; continue; }
			((q > 0)) || continue
			echo "$summary" | grep -qE "^ *[0-9]+ r$i tos" ||
				{ echo "no packet on rail r$i, where mrbond0 has QPs"; rc=1; }
		done
	fi
	return $rc
}

# ecn_phase NAME ENABLE WANT: knobs set on both guests, a new controller and
# I/O, both captures checked against TOS WANT.
ecn_phase() {
	local name=$1 enable=$2 want=$3 rc=0 cap=$TB_TMP/capture-$1 out=$TB_TMP/ecn-$1 blk engine
	if [[ $MRBOND_ROLE == hosta ]]; then
		disconnect_ctrl "$out" || { cat "$out"; rc=1; }
	fi
	barrier "ecn-$name-down" 300 || rc=1
	set_ecn "$enable" || { echo "ecn knobs not set"; rc=1; }
	capture_start "$cap" || { echo "tcpdump did not start"; rc=1; }
	barrier "ecn-$name-capturing" 120 || rc=1
	if [[ $MRBOND_ROLE == hosta ]] && ((rc == 0)); then
		if connect_ctrl "$out" && wait_until 60 ctrl_live && wait_until 30 nvme_blk >/dev/null &&
			blk=$(nvme_blk) && engine=$(fio_engine); then
			bounded 300 "$out" fio --name=ecn --filename="$blk" --rw=randrw --bs=4k --iodepth=8 \
				--numjobs=1 --direct=1 --ioengine="$engine" --size=4m \
				--verify=crc32c --do_verify=1 --verify_fatal=1 || rc=$?
			fio_ok "$out" $rc >/dev/null || { fio_ok "$out" $rc; rc=1; }
		else
			echo "no controller or namespace: $(cat "$out") $(ctrls_sysfs)"
			rc=1
		fi
	fi
	barrier "ecn-$name-done" 600 || rc=1
	capture_stop
	capture_check "$cap" "$want" || rc=1
	return $rc
}

test_ecn_on_wire() {
	local rc=0
	if [[ $MODE == bond ]]; then
		echo "--- ECN on, traffic class $ECN_TCLASS: expecting TOS 0x6a"
		ecn_phase on 1 0x6a || rc=1
		echo "--- ECN off: expecting TOS 0x68"
		ecn_phase off 0 0x68 || rc=1
	else
		echo "--- raw member, no bond: expecting rdma_cm's default TOS 0x0"
		ecn_phase raw - 0x0 || rc=1
	fi
	((rc == 0)) || diag
	return $rc
}

# No QP and no outstanding WR left on any port of the bond (raw: on rxe0).
nothing_left() {
	local p
	if [[ $MODE == raw ]]; then
		! bq rdma res show qp link ${MEMBER_PREFIX}0/ | grep -q 'type RC'
		return
	fi
	for ((p = 1; p <= MRBOND_LINKS; p++)); do
		(($(member_gauge "$p" qps) == 0 && $(member_gauge "$p" outstanding) == 0)) || return 1
	done
}

# Disabling the port tears down nvmet-rdma's listener and queues.
target_down() {
	local rc=0
	bq -t 60 rm "$NVMET/ports/1/subsystems/$NQN" && bq -t 60 rmdir "$NVMET/ports/1" || rc=1
	echo 0 >"$NVMET/subsystems/$NQN/namespaces/1/enable"
	bq -t 60 rmdir "$NVMET/subsystems/$NQN/namespaces/1" "$NVMET/subsystems/$NQN" || rc=1
	return $rc
}

test_teardown() {
	local rc=0 p out=$TB_TMP/teardown
	if [[ $MRBOND_ROLE == hosta ]]; then
		nvme_ctrl >/dev/null || echo "no controller to disconnect"
		disconnect_ctrl "$out" || rc=1
		cat "$out" 2>/dev/null
	fi
	barrier disconnected 300 || rc=1
	# hostb deletes its bond (and unloads the module) under the live nvmet
	# port (bond mode): the listener on mrbond0 then sees the device go, as
	# at `rdma link del`, and on the lockdep kernel the bond's teardown is
	# checked before nvmet's own teardown report (an upstream one) turns
	# lockdep off.
	if [[ $MRBOND_ROLE == hostb && $MODE != bond ]]; then
		target_down || rc=1
	fi
	# Queues are released asynchronously (nvmet's release work). With its
	# port live, nvmet keeps the queues that belong to no controller yet:
	# those of REQs the host abandoned while hostb held them (the REJ
	# overtook the held REQ, and ib_cm drops a REP to a gone id in
	# silence, cm.c cm_dup_rep_handler(), so only the REP retries end them,
	# in minutes). Port removal destroys them (nvmet_rdma_disable_port());
	# here the bond's deletion does, through nvmet's ib_client, and the
	# members must then hold no QP.
	if ! wait_until 30 nothing_left; then
		if [[ $MRBOND_ROLE == hostb && $MODE == bond ]]; then
			echo "$(bq rdma res show qp link mrbond0/ | grep -c 'type RC') nvmet queues of no controller left open; the bond is deleted under them"
		else
			echo "QPs or WRs left behind"
			rc=1
		fi
	fi
	if [[ $MODE == bond ]]; then
		for ((p = 1; p <= MRBOND_LINKS; p++)); do
			echo "port $p: qps $(member_gauge "$p" qps) outstanding_wr $(member_gauge "$p" outstanding)"
		done
		bq rdma res show qp link mrbond0/ | grep -v 'type GSI'
		bounded 60 "$out" "$CTL" bond del mrbond0 || { cat "$out"; rc=1; }
		[[ ! -e $SYS/mrbond0 ]] || { echo "mrbond0 still registered"; rc=1; }
		bounded 60 "$out" modprobe -r rdma_mrbond || { cat "$out"; rc=1; }
		! grep -q '^rdma_mrbond ' /proc/modules || { echo "rdma_mrbond still loaded"; rc=1; }
		for ((p = 0; p < MRBOND_LINKS; p++)); do
			! bq rdma res show qp link "${MEMBER_PREFIX}$p/" | grep 'type RC' ||
				{ echo "${MEMBER_PREFIX}$p: member QPs outlive the bond"; rc=1; }
		done
		if [[ $MRBOND_ROLE == hostb ]]; then
			target_down || rc=1
		fi
	else
		bq rdma res show qp link ${MEMBER_PREFIX}0/ | grep -v 'type GSI'
	fi
	barrier torn-down 300 || rc=1
	((rc == 0)) || diag
	return $rc
}

# ---- members that need DMA mapping (MRBOND_MEMBERS=dma) ----
#
# The same flows over a bond of rdma_rxe_dma doubles on both guests, hosta's
# mappings bounced by swiotlb: fio's crc32c sees any copy the bond got
# wrong there (a bounce not copied back, an unmap before the member was
# done), and a double refuses any buffer the bond did not map on it.

test_dma_refused_zero() {
	local n rc=0
	n=$(dma_refused) || return 1
	echo "$MRBOND_ROLE: rdma_rxe_dma refused $n address(es)"
	((n == 0)) || rc=1
	if [[ $MRBOND_ROLE == hosta ]] && ! grep -qw swiotlb=force /proc/cmdline; then
		echo "hosta not booted with swiotlb=force: its mappings were not checked"
		rc=1
	fi
	return $rc
}

# After the bond's teardown: with the doubles deleted too, every bounce
# slot must be free on a guest that bounces.
test_dma_mappings_released() {
	local i rc=0
	for ((i = 0; i < MRBOND_LINKS; i++)); do
		[[ -e $SYS/$(member_name "$i") ]] || continue
		bq -t 60 rdma link del "$(member_name "$i")" || rc=1
	done
	dma_mappings_released || rc=1
	return $rc
}

dma_released_test() {
	if grep -qw swiotlb=force /proc/cmdline; then
		run_test dma_mappings_released test_dma_mappings_released
	else
		ktap_skip dma_mappings_released "$MRBOND_ROLE does not bounce (MRBOND_BOUNCE_ROLES)"
	fi
}

# The tests, NAME FUNCTION in order; kmemleak_clean and
# teardown_leaves_nothing follow them. MRBOND_STAGE says which kernel runs
# the suite: `debug`, the checking kernel; `normal`, the normal kernel with
# the debug stage to follow; unset, the only stage. Each test runs in one of
# the two stages: the checking kernel gets what takes rdma_mrbond's locks
# and lifetimes through their paths (the NVMe-oF faults, the regression
# tests); the normal kernel what checks data, the wire or timing (a plain
# fio verify, WRR's placement, the TOS bytes) and the NFS faults, which take
# the bond through the failover paths the NVMe-oF ones do. Over DMA doubles
# the suite runs the data flows only: the regression tests and WRR are
# about the bond's control path, which does not depend on the member's
# driver.
if [[ $MRBOND_MEMBERS == dma ]]; then
	tests=(dma_member_nvme_connect test_connect
		dma_member_nvme_fio_verify test_fio_verify
		dma_member_nvme_cable_pull test_cable_pull
		dma_member_nvme_member_removal test_member_removed
		dma_member_nfs_fio_verify test_nfs_fio_verify
		dma_member_nfs_cable_pull test_nfs_cable_pull
		dma_member_nfs_member_removal test_nfs_member_removal
		dma_member_nfs_unmount test_nfs_unmount
		dma_refused_addresses_zero test_dma_refused_zero)
	# After the teardown, each reporting its own result.
	after=(dma_released_test)
else
	tests=(nvme_connect_over_bond test_connect)
	[[ $MODE == bond ]] &&
		tests+=(rdma_res_qp_member test_res_qp_member tfo_hello_handshake test_tfo_hello_handshake
			tfo_session_rails test_tfo_session_rails)
	tests_on normal fio_verify test_fio_verify
	[[ $MODE == bond ]] && tests_on normal tfo_consuming_counts_match test_tfo_consuming_counts
	tests_on debug \
		cable_pull_during_fio test_cable_pull \
		member_removed_during_fio test_member_removed \
		regress_listen_context_race test_regress_listen_context_race
	tests_on normal \
		wrr_live_utilisation test_wrr_live_utilisation \
		ecn_marking_on_the_wire test_ecn_on_wire
	tests_on both nfs_rdma_fio_verify test_nfs_fio_verify
	tests_on normal \
		nfs_rdma_cable_pull test_nfs_cable_pull \
		nfs_rdma_member_removal test_nfs_member_removal
	tests_on both nfs_rdma_unmount test_nfs_unmount
	tests_on debug \
		regress_connect_during_member_removal test_regress_connect_during_member_removal \
		regress_no_mad_on_down_link test_regress_no_mad_on_down_link
	after=()
fi
ktap_header $((${#tests[@]} / 2 + ${#after[@]} + 2))
# Every command, time-stamped, in the run directory: where a guest hangs
# shows from the host while it hangs.
exec {TRACE_FD}>>"$MRBOND_RUN/$MRBOND_ROLE.nvme-trace"
BASH_XTRACEFD=$TRACE_FD
PS4='+ ${EPOCHREALTIME} ${FUNCNAME[0]:-main}: '
set -x
ktap_diag "role $MRBOND_ROLE, $MRBOND_LINKS link(s), $MODE mode (device $DEV, target $TARGET_IP), members $MEMBER_TYPE, kernel $(uname -r)"
setup() {
	setup_t1 && setup_service || return 1
	if [[ $MODE == bond ]]; then
		setup_bond || return 1
	else
		wait_until 30 has_gid ${MEMBER_PREFIX}0 1 "$(rail_ip 0 "$ME")" || { echo "${MEMBER_PREFIX}0: no rail GID"; return 1; }
	fi
}
if ! out=$(setup 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "Bail out! setup failed"
	exit 1
fi
echo "$out" | sed 's/^/# /'
barrier setup || { echo "Bail out! peer never set up"; exit 1; }
wait_until 60 lacp_converged_now || ktap_diag "LACP not converged (not needed by the rails)"
if [[ $MRBOND_ROLE == hostb ]]; then
	out=$(setup_target 2>&1) || { echo "$out" | sed 's/^/# /'; echo "Bail out! nvmet target setup failed"; exit 1; }
	echo "$out" | sed 's/^/# /'
fi
barrier target-ready 300 || { echo "Bail out! target never ready"; exit 1; }
for ((test_at = 0; test_at < ${#tests[@]}; test_at += 2)); do
	run_test "${tests[test_at]}" "${tests[test_at + 1]}"
done
kmemleak_test
run_test teardown_leaves_nothing test_teardown
for f in "${after[@]}"; do "$f"; done
ktap_totals
[[ $KTAP_FAIL == 0 ]]
