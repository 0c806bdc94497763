#!/bin/bash
# Boot the test kernel under QEMU with a busybox initramfs, run one command
# inside, and hand its output and exit status back to the host.
#
# Usage: scripts/kernel-boot.sh [options] [--] COMMAND [ARG...]
#
#   --kernel PATH      bzImage to boot (default: the image of the current
#                      inputs, see scripts/kernel-build.sh --print-dir)
#   --add SRC[:DST]    put a host file or directory into the initramfs; a
#                      file goes to /bin/NAME unless DST is given, a
#                      directory to /NAME; dynamically linked executables
#                      bring the shared libraries ldd names (repeatable)
#   --selftests        add the image's selftests/ directory as /selftests
#   --share DIR        share host directory DIR with the guest (9p over
#                      virtio), mounted at /shared before COMMAND runs
#   --smp N            virtual CPUs (default 4)
#   --mem MB           memory (default 512)
#   --timeout SEC      kill the guest after SEC seconds (default 300)
#   --kvm              use KVM instead of TCG (it hung on this host: only
#                      with a short --timeout)
#   --cpu MODEL        QEMU's -cpu (default: max under TCG, host under KVM),
#                      e.g. Haswell, EPYC-Rome, Skylake-Server,+pku
#   --append ARGS      extra kernel command line
#   --console FILE     keep the whole serial console log in FILE
#   -v, --verbose      copy the console to stderr while the guest runs
#
# COMMAND runs with /bin/sh -c inside the guest, as root, with /proc, /sys,
# /dev, /dev/pts and /tmp mounted and the initramfs root as cwd.  Its output
# (everything the guest printed between the start and the exit marker) goes
# to stdout, and the script exits with COMMAND's status.  Other exit codes:
#   124  the guest timed out        125  the guest did not report a status
#   2    bad usage
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CRIU_KERNEL_CACHE:-$HOME/.cache/criu-kernel}

kernel=
adds=()
selftests=0
share=
smp=4
mem=512
timeout_s=300
accel=tcg
cpu_model=
append=
console=
verbose=0

usage() { sed -n '2,32p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--add) adds+=("$2"); shift 2 ;;
	--selftests) selftests=1; shift ;;
	--share) share=$(cd "$2" && pwd); shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--kvm) accel=kvm; shift ;;
	--cpu) cpu_model=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--console) console=$2; shift 2 ;;
	-v|--verbose) verbose=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) echo "kernel-boot: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "kernel-boot: no command given" >&2; usage; }

if [ -z "$kernel" ]; then
	imgdir=$("$ROOT/scripts/kernel-build.sh" --print-dir 2>/dev/null) ||
		imgdir=$(readlink -f "$CACHE/current" 2>/dev/null) || true
	[ -n "$imgdir" ] && [ -f "$imgdir/bzImage" ] ||
		{ echo "kernel-boot: no kernel built; run scripts/kernel-build.sh" >&2; exit 2; }
	kernel="$imgdir/bzImage"
else
	imgdir=$(dirname "$kernel")
fi
[ -f "$kernel" ] || { echo "kernel-boot: $kernel: no such file" >&2; exit 2; }
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
	{ echo "kernel-boot: need a static busybox (apt-get install busybox-static)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "kernel-boot: need qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 2; }

work=$(mktemp -d /tmp/kernel-boot.XXXXXX)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root="$work/root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,lib,lib64}

# --- initramfs -----------------------------------------------------------------
cp "$BUSYBOX" "$root/bin/busybox"
"$BUSYBOX" --list-full | while read -r app; do
	[ "$app" = bin/busybox ] && continue
	mkdir -p "$root/$(dirname "$app")"
	ln -sf /bin/busybox "$root/$app"
done

# Copy the shared libraries (and the ELF interpreter) an executable needs.
copy_libs() {
	local f=$1 lib
	ldd "$f" >/dev/null 2>&1 || return 0	# not ELF (static: ldd may say 0)
	# a static(-pie) binary names no library: grep finds nothing, not an error
	{ ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true; } | while read -r lib; do
		[ -e "$lib" ] || continue
		mkdir -p "$root$(dirname "$lib")"
		[ -e "$root$lib" ] || cp -L --preserve=timestamps "$lib" "$root$lib"
	done
}

add_one() {
	local spec=$1 src dst
	src=${spec%%:*}
	if [ "$src" != "$spec" ]; then dst=${spec#*:}; else dst=; fi
	[ -e "$src" ] || { echo "kernel-boot: --add $src: no such file" >&2; exit 2; }
	if [ -d "$src" ]; then
		[ -n "$dst" ] || dst=/$(basename "$src")
		mkdir -p "$root$dst"
		cp -a "$src/." "$root$dst/"
		find "$src" -type f -perm -u+x | while read -r f; do copy_libs "$f"; done
	else
		[ -n "$dst" ] || dst=/bin/$(basename "$src")
		mkdir -p "$root$(dirname "$dst")"
		cp -L --preserve=timestamps "$src" "$root$dst"
		[ -x "$src" ] && copy_libs "$src"
	fi
	return 0
}
for a in ${adds[@]+"${adds[@]}"}; do add_one "$a"; done
if [ "$selftests" = 1 ]; then
	[ -d "$imgdir/selftests" ] || { echo "kernel-boot: $imgdir has no selftests/" >&2; exit 2; }
	add_one "$imgdir/selftests:/selftests"
fi

nonce=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
begin="KBOOT-$nonce-BEGIN"
endm="KBOOT-$nonce-EXIT="

# The command is passed as a file: no quoting through the kernel command line.
printf '%s\n' "$*" > "$root/cmd"
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
cat > "$root/init" <<EOF
#!/bin/busybox sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /sys/fs/cgroup
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
${share:+mkdir -p /shared; mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 shared /shared}
hostname guest
# the loopback link up, as on any host (127.0.0.1, ::1 for the socket tests)
ip link set lo up 2>/dev/null
echo "$begin"
/bin/sh /cmd </dev/null
echo "$endm\$?"
sync
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.gz"

# --- boot ------------------------------------------------------------------------
if [ "$accel" = kvm ]; then
	cpu="-accel kvm -cpu ${cpu_model:-host}"
else
	cpu="-accel tcg -cpu ${cpu_model:-max}"
fi
log="$work/console"
: > "$log"
set +e
timeout --foreground -k 5 "$timeout_s" qemu-system-x86_64 $cpu -smp "$smp" -m "$mem" \
	-kernel "$kernel" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init $append" \
	${share:+-virtfs local,path="$share",mount_tag=shared,security_model=none} \
	-nographic -monitor none -serial stdio -no-reboot </dev/null > "$log" 2>"$work/qemu.err" &
qpid=$!
if [ "$verbose" = 1 ]; then
	tail -f --pid="$qpid" "$log" >&2 &
fi
wait "$qpid"
qrc=$?
qpid=
set -e
[ -n "$console" ] && cp "$log" "$console"

tr -d '\r' < "$log" > "$work/console.txt"
status=$(grep -ao "$endm[0-9]*" "$work/console.txt" | tail -1 | sed "s/^$endm//" || true)
if grep -aq "$begin" "$work/console.txt"; then
	# Lines after the start marker up to the exit marker; text that ran
	# into the marker's line (output without a final newline) is kept.
	sed -n "/$begin/,\$p" "$work/console.txt" | sed '1d' |
		sed -n -e "/$endm[0-9]*/{s/$endm[0-9]*//;/^\$/!p;q}" -e p || true
fi
if [ -n "$status" ]; then
	exit "$status"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "kernel-boot: guest timed out after ${timeout_s}s; console tail:" >&2
	rc=124
else
	echo "kernel-boot: guest ended (qemu status $qrc) without reporting a status; console tail:" >&2
	rc=125
fi
tail -30 "$work/console.txt" >&2
cat "$work/qemu.err" >&2
exit $rc
