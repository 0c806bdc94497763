#!/bin/sh
# Run zdtm test programs in the guest (busybox sh, no python): the "plain"
# flavour of test/zdtm (start, ready, criu dump, gap, criu restore -d,
# SIGTERM, verdict), one test after the other.
#
# Usage: guest-zdtm.sh LIST
#
# LIST has one test per line, fields separated by '|':
#   NAME|ARGS|DUMP_OPTS|RESTORE_OPTS|RESTORE_ENV|PIDNS|EXPECT|TAG|CPUNS
# (ARGS, the options and RESTORE_ENV are space-separated words; PIDNS is 1
# for a test that runs as the init of a pid namespace; EXPECT pass or
# fail; TAG names a flavour in the report; CPUNS, a map V:CPU,..., runs the
# test in a CPU namespace of its own, made by the cpuns helper, and checks
# that the restored one has the same map). The programs are /zdtm/NAME.
# Besides the test's verdict, the restored leader must have the start time
# it had (/proc/PID/start_time). A program whose feature this kernel or
# machine lacks writes "SKIP: reason" instead of getting ready (see
# test/zdtm/README.md); it is reported skipped. For each test one line:
#   ZDTM NAME[:TAG] ok|FAILED|skipped [reason]
# and, for a failure, the tails of the logs prefixed with "| ".
LIST=$1
BIN=/zdtm
WORK=/tmp/zdtm
GAP=1

mkdir -p $WORK
# a few huge pages for mem_hugetlb (the guest is a machine of its own)
echo 8 > /proc/sys/vm/nr_hugepages 2>/dev/null || true

# Waits up to $2 tenths of a second for the file $1 to be non-empty.
wait_file() {
	i=0
	while [ ! -s "$1" ]; do
		[ $i -lt $2 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# Waits up to $2 tenths of a second for the ready file $1, or for a verdict
# in $3 (a program that skips exits without getting ready).
wait_ready() {
	i=0
	while [ ! -s "$1" ] && [ ! -s "$3" ]; do
		[ $i -lt $2 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$1" ]
}

report() {
	name=$1 verdict=$2 reason=$3 dir=$4
	echo "ZDTM $name $verdict $reason"
	[ "$verdict" != FAILED ] && return
	for f in $dir/log $dir/img/dump.log $dir/img/restore.log; do
		[ -f $f ] || continue
		echo "| == $f"
		grep -E 'Error|Warn' $f | tail -5 | sed 's/^/| /'
		tail -3 $f | sed 's/^/| /'
	done
}

run_one() {
	prog=$1 args=$2 dopts=$3 ropts=$4 renv=$5 pidns=$6 expect=$7 tag=$8 cpuns=$9
	name=$prog${tag:+:$tag}
	d=$WORK/$prog${tag:+-$tag}
	mkdir -p $d/img
	cd $d || return
	extra=
	[ "$pidns" = 1 ] && extra=--pidns
	wrap=
	[ -n "$cpuns" ] && wrap="cpuns $cpuns"
	ZDTM_GAP=$GAP $wrap setsid $BIN/$prog --outfile $d/out --readyfile $d/ready $extra $args \
		</dev/null >>$d/log 2>&1 &
	if ! wait_ready $d/ready 200 $d/out; then
		case "$(cat $d/out 2>/dev/null)" in
		"SKIP: "*) report $name skipped "$(sed 's/^SKIP: //' $d/out)" $d ;;
		*) report $name FAILED "not ready" $d ;;
		esac
		return
	fi
	pid=$(cat $d/ready)
	# the kernel/ patches: the leader's start time (in its time namespace)
	start=$(cat /proc/$pid/start_time)
	if ! criu dump -t $pid -D $d/img -o dump.log -v4 $dopts; then
		report $name FAILED "dump failed" $d
		kill -9 $pid 2>/dev/null
		return
	fi
	sleep $GAP
	if ! env $renv criu restore -d -D $d/img -o restore.log -v4 --pidfile $d/rpid $ropts; then
		report $name FAILED "restore failed" $d
		return
	fi
	rpid=$(cat $d/rpid)
	if [ "$(cat /proc/$rpid/start_time)" != "$start" ]; then
		report $name FAILED "start time $(cat /proc/$rpid/start_time), was $start" $d
		kill -9 $rpid
		return
	fi
	if [ -n "$cpuns" ]; then
		want=$(echo "$cpuns" | tr ':,' ' \n')
		if [ "$(stat -L -c %i /proc/$rpid/ns/cpu)" = "$(stat -L -c %i /proc/1/ns/cpu)" ] ||
		   [ "$(cat /proc/$rpid/cpu_map)" != "$want" ]; then
			report $name FAILED "not restored in its CPU namespace" $d
			kill -9 $rpid
			return
		fi
	fi
	kill -TERM $rpid
	if ! wait_file $d/out 200; then
		report $name FAILED "no verdict after SIGTERM" $d
		kill -9 $rpid 2>/dev/null
		return
	fi
	# the verdict is written before the exit: wait for the task to be gone
	i=0
	while [ -d /proc/$rpid ] && [ "$(cut -d' ' -f3 /proc/$rpid/stat 2>/dev/null)" != Z ] &&
	      [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	verdict=$(cat $d/out)
	if [ "$expect" = fail ]; then
		[ "$verdict" != PASS ] && report $name ok "" $d ||
			report $name FAILED "passed, expected to fail" $d
	elif [ "$verdict" = PASS ]; then
		report $name ok "" $d
	else
		report $name FAILED "$verdict" $d
	fi
}

while IFS='|' read -r name args dopts ropts renv pidns expect tag cpuns; do
	[ -n "$name" ] || continue
	run_one "$name" "$args" "$dopts" "$ropts" "$renv" "$pidns" "$expect" "$tag" "$cpuns" \
		</dev/null
done < "$LIST"
echo "ZDTM-DONE"
