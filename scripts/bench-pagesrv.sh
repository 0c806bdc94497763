#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The page server's throughput (Documentation/page-server.md), a benchmark:
# it reports, it asserts nothing. For each size (MiB of written anonymous
# memory of a python process), in two network namespaces of its own joined
# by a veth pair (removed at the end; the host is left as found):
#   local   criu dump into a directory (no network)
#   lo      criu dump --page-server to a page server over loopback
#   veth    the same across the veth pair
#   copy    the same bytes (the dump's pages-*.img) through a plain TCP copy
#           (python: sendfile into the socket, recv_into + write at the
#           other end, into a file as the page server does), lo and veth
#   tls     lo and veth again with --tls on both sides (a CA and the two
#           certificates made here with openssl; the columns say "-" without
#           it), "wall/mem" as the other columns; before the table, one core's AES-256-GCM rate on 16 KiB
#           records (openssl speed), the bound of an encrypting side
# GB/s = the checkpoint's bytes / the wall time of the command, which for a
# dump ends once the images are durable (syncfs here, or the page server's
# fsync and syncfs before its ACK); "/mem" the same bytes / the dump's memory
# phase (its log: the pages read and written, or sent, as they are read).
# The copies end when the bytes are in the receiver's page cache (no fsync).
#
# Usage: scripts/bench-pagesrv.sh [MiB...]   (default: 256 1024; root)
set -eu

CRIU=${CRIU:-$(dirname "$0")/../build/criu/criu}
CRIU=$(realpath "$CRIU")
PY=/usr/bin/python3
SIZES=${*:-256 1024}
WORK=$(mktemp -d /tmp/bench-pagesrv.XXXXXX)
HOLDERS=()

cleanup() {
	local p
	for p in "${HOLDERS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# A network namespace held by a sleeping process; prints its pid.
netns() {
	unshare -n sleep 1d &
	HOLDERS+=($!)
	sleep 0.2
	nsenter --net=/proc/$!/ns/net ip link set lo up
}
netns; A=${HOLDERS[-1]}
netns; B=${HOLDERS[-1]}
inA() { nsenter --net=/proc/$A/ns/net "$@"; }
inB() { nsenter --net=/proc/$B/ns/net "$@"; }
inA ip link add bpa type veth peer name bpb netns "$B"
inA ip addr add 10.78.0.1/24 dev bpa
inA ip link set bpa up
inB ip addr add 10.78.0.2/24 dev bpb
inB ip link set bpb up

now() { date +%s.%N; }
rate() { $PY -c "import sys; print(f'{int(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])) / 1e9:.2f}')" "$@"; }
pages_bytes() { cat "$1"/pages-*.img | wc -c; }
# the memory phase of the dump logged in $2, as a rate of $1 bytes
mem_rate() {
	local ms
	ms=$(sed -n 's/.* memory \([0-9.]*\) .*/\1/p' "$2" | tail -n 1)
	$PY -c "import sys; print(f'{int(sys.argv[1]) / float(sys.argv[2]) / 1e6:.2f}')" "$1" "$ms"
}

# --tls for each side, if openssl can make the certificates: TLS_SRV, TLS_CLI.
make_pki() {
	local d=$WORK/pki n
	TLS_SRV=() TLS_CLI=()
	command -v openssl > /dev/null || return 0
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/ca-key.pem" -out "$d/ca.pem" -days 1 -subj /CN=bench-ca \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign 2> /dev/null
	for n in server client; do
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$d/$n-key.pem" -out "$d/$n.csr" -subj "/CN=bench-$n" 2> /dev/null
		printf 'subjectAltName=IP:127.0.0.1,IP:10.78.0.2\n' > "$d/$n.ext"
		openssl x509 -req -in "$d/$n.csr" -CA "$d/ca.pem" -CAkey "$d/ca-key.pem" \
			-CAcreateserial -days 1 -out "$d/$n.pem" -extfile "$d/$n.ext" 2> /dev/null
	done
	TLS_SRV=(--tls --tls-cacert "$d/ca.pem" --tls-cert "$d/server.pem"
		 --tls-key "$d/server-key.pem")
	TLS_CLI=(--tls --tls-cacert "$d/ca.pem" --tls-cert "$d/client.pem"
		 --tls-key "$d/client-key.pem")
}

# The page server in namespace $1's runner on address $2, into $3, with the
# options after: PORT, SRV.
start_server() {
	local run=$1 addr=$2 dst=$3
	shift 3
	rm -rf "$dst"; mkdir -p "$dst"
	$run "$CRIU" page-server -D "$dst" --address "$addr" --port 0 \
		-W "$WORK" -o ps.log "$@" > "$WORK/port" &
	SRV=$!
	while [ ! -s "$WORK/port" ]; do sleep 0.05; done
	PORT=$(cat "$WORK/port")
}

# Dumps pid $1 (left running) from namespace A to the server at $2:PORT,
# with the options after; until the server is done: the start and end
# times in T.
dump_remote() {
	local pid=$1 addr=$2 t0
	shift 2
	rm -rf "$WORK/src"; mkdir -p "$WORK/src"
	rm -f "$WORK/port"
	t0=$(now)
	inA "$CRIU" dump -t "$pid" -D "$WORK/src" -o dump.log -v3 --leave-running \
		--page-server --address "$addr" --port "$PORT" "$@"
	wait "$SRV"
	T="$t0 $(now)"
}

# The plain copy: sendfile of $3 from namespace A to a receiver run by $1 on $2.
copy_ref() {
	local run=$1 addr=$2 file=$3 port t0 t1
	rm -f "$WORK/copy.out" "$WORK/cport"
	$run $PY - "$addr" "$WORK/copy.out" "$WORK/cport" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind((sys.argv[1], 0)); s.listen(1)
open(sys.argv[3] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[3] + ".tmp", sys.argv[3])
c, _ = s.accept()
buf = memoryview(bytearray(16 << 20))
with open(sys.argv[2], "wb", buffering=0) as f:
    while True:
        n = c.recv_into(buf)
        if not n:
            break
        f.write(buf[:n])
EOF
	local rcv=$!
	while [ ! -s "$WORK/cport" ]; do sleep 0.05; done
	port=$(cat "$WORK/cport")
	t0=$(now)
	inA $PY -c "
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
s.sendfile(open(sys.argv[3], 'rb'))
s.close()" "$addr" "$port" "$file"
	wait $rcv
	t1=$(now)
	echo "$t0 $t1"
}

# One TLS dump through the server at namespace $1's runner, address $2:
# "GB/s/mem" (the wall time's rate, then the memory phase's).
tls_rate() {
	[ ${#TLS_CLI[@]} -gt 0 ] || { echo -; return; }
	start_server "$1" "$2" "$WORK/dst" "${TLS_SRV[@]}"
	dump_remote "$pid" "$2" "${TLS_CLI[@]}"
	echo "$(rate "$bytes" $T)/$(mem_rate "$bytes" "$WORK/src/dump.log")"
}

make_pki
if [ ${#TLS_CLI[@]} -gt 0 ]; then
	openssl speed -evp aes-256-gcm -bytes 16384 -seconds 1 2> /dev/null |
		awk 'tolower($1) == "aes-256-gcm" { printf "AES-256-GCM, one core, 16 KiB records: %.2f GB/s\n", $2 / 1e6 }'
	grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2> /dev/null &&
		echo "kernel TLS (tls ULP) available" ||
		echo "kernel TLS (tls ULP) not available here: GnuTLS encrypts in criu-tls"
else
	echo "no openssl: the TLS columns are skipped"
fi
printf "%6s %7s %7s %7s %7s %8s %10s %7s %7s %9s %12s\n" "MiB" "local" "/mem" "lo" "/mem" \
	"copy-lo" "tls-lo/mem" "veth" "/mem" "copy-veth" "tls-veth/mem"
for mib in $SIZES; do
	rm -f "$WORK/pid"
	inA setsid $PY -c "
import os, sys, time
b = bytearray(b'\x5a') * (int(sys.argv[1]) << 20)
open(sys.argv[2] + '.tmp', 'w').write(str(os.getpid()))
os.rename(sys.argv[2] + '.tmp', sys.argv[2])
while True:
    time.sleep(1)" "$mib" "$WORK/pid" < /dev/null > /dev/null 2>&1 &
	while [ ! -s "$WORK/pid" ]; do sleep 0.05; done
	pid=$(cat "$WORK/pid")
	HOLDERS+=("$pid")

	rm -rf "$WORK/local"; mkdir -p "$WORK/local"
	t0=$(now)
	inA "$CRIU" dump -t "$pid" -D "$WORK/local" -o dump.log -v3 --leave-running
	t1=$(now)
	bytes=$(pages_bytes "$WORK/local")
	local_r=$(rate "$bytes" "$t0" "$t1")
	local_m=$(mem_rate "$bytes" "$WORK/local/dump.log")
	# the copies send the dump's own page store
	cp "$WORK"/local/pages-*.img "$WORK/pages.ref"
	rm -rf "$WORK/local"

	start_server inA 127.0.0.1 "$WORK/dst"
	dump_remote "$pid" 127.0.0.1
	lo_r=$(rate "$bytes" $T)
	lo_m=$(mem_rate "$bytes" "$WORK/src/dump.log")
	copy_lo=$(rate "$bytes" $(copy_ref inA 127.0.0.1 "$WORK/pages.ref"))
	tls_lo=$(tls_rate inA 127.0.0.1)

	start_server inB 10.78.0.2 "$WORK/dst"
	dump_remote "$pid" 10.78.0.2
	veth_r=$(rate "$bytes" $T)
	veth_m=$(mem_rate "$bytes" "$WORK/src/dump.log")
	copy_veth=$(rate "$bytes" $(copy_ref inB 10.78.0.2 "$WORK/pages.ref"))
	tls_veth=$(tls_rate inB 10.78.0.2)

	printf "%6s %7s %7s %7s %7s %8s %10s %7s %7s %9s %12s   (GB/s, %d page bytes)\n" \
		"$mib" "$local_r" "$local_m" "$lo_r" "$lo_m" "$copy_lo" "$tls_lo" "$veth_r" \
		"$veth_m" "$copy_veth" "$tls_veth" "$bytes"
	kill -9 "$pid"
	rm -f "$WORK/pages.ref" "$WORK/copy.out"
	rm -rf "$WORK/dst"
done
