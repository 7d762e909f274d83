#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Experiment, not a CI suite: does rxe (6.12) move QP1 to ERR when a MAD is
# sent while the link is down, leaving the port deaf to every later CM
# exchange? (It does: Documentation/dev-tools/notes/rxe-qp1-dies-on-down-link.md.)
# No rdma_mrbond involved: plain rxe on the T1 rails. Run from the tree root:
#   python3 tools/testbed/testbed.py --topology t1 --kdir KDIR \
#       --script tools/testbed/experiments/rxe_qp1_linkdown.sh --timeout 500
# "not ok" on hosta confirms the behaviour.
. "$(dirname "$0")/../../../selftests/rdma_mrbond/lib.sh"
echo "KTAP version 1"
echo "1..1"
setup_t1 || { echo "Bail out! setup"; exit 1; }
me=$(role_index)
peer=$(rail_ip 0 $((1 - me)))
ip link set bond0 up
sleep 3
gsi() { rdma res show qp link rxe0/1 | grep -w GSI; }
if [[ $MRBOND_ROLE == hostb ]]; then
	rping -s -a "$(rail_ip 0 1)" -v -C 1 >/tmp/rping-s1 2>&1 &
	barrier server-up
	barrier down-sent 300
	barrier up-done 300
	rping -s -a "$(rail_ip 0 1)" -v -C 1 >/tmp/rping-s2 2>&1 &
	barrier server2-up
	barrier done 300
	echo "# hostb rxe0 send_err $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/send_err)"
	echo "ok 1 hostb"
	exit 0
fi
ping -c 2 -W 2 "$peer" | tail -1 | sed 's/^/# /'
# A neighbour that outlives the outage: rdma_cm then sends its REQ.
ip neigh replace "$peer" lladdr 02:00:00:00:00:02 dev r0 nud permanent
barrier server-up
echo "# before: $(gsi) send_err $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/send_err)"
fault link 0 down
sleep 3
timeout 10 rping -c -a "$peer" -v -C 1 2>&1 | tail -2 | sed 's/^/# during: /'
echo "# after send while down: $(gsi) send_err $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/send_err)"
barrier down-sent
fault link 0 up
sleep 5
barrier up-done
barrier server2-up
out=$(timeout 40 rping -c -a "$peer" -v -C 1 2>&1)
rc=$?
echo "$out" | tail -3 | sed 's/^/# after up: /'
echo "# end: $(gsi) send_err $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/send_err)"
barrier done
if ((rc == 0)); then echo "ok 1 connect_after_linkdown_send"; else echo "not ok 1 connect_after_linkdown_send"; fi
