#!/bin/busybox sh
# The stand-in guest's init (PID 1 of the initramfs): load the virtio
# drivers, bring up eth0 (the address the provider gave on the kernel
# command line as ip=<addr>::<gateway>:<netmask>::eth0:off, else DHCP),
# unpack the disk (a tar archive on /dev/vda: the WS-Management stand-in)
# and run the stand-in on 5985, restarting it should it exit.
/bin/busybox mkdir -p /proc /sys /dev /tmp /opt /bin /sbin /usr/bin /usr/sbin /run
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
say() { echo "standin-init: $*"; }

for m in $(cat /etc/modules.load); do
	insmod "/lib/modules/$m.ko" || say "insmod $m failed"
done

name=standin
ipconf=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	winconform.name=*) name="${arg#*=}" ;;
	ip=*) ipconf="${arg#ip=}" ;;
	esac
done
hostname "$name"
say "machine $name"

i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
ip link set lo up
ip link set eth0 up
case "$ipconf" in
*:*)
	IFS=: read -r addr server gw mask host dev auto <<END
$ipconf
END
	ifconfig eth0 "$addr" netmask "$mask" up
	[ -n "$gw" ] && route add default gw "$gw"
	say "eth0 $addr/$mask via $gw (static, from the kernel command line)"
	;;
*)
	say "eth0: DHCP"
	udhcpc -i eth0 -b -t 20 -T 1 -s /etc/udhcpc.script -x "hostname:$name"
	;;
esac

i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
if ! tar -x -C /opt -f /dev/vda || [ ! -x /opt/standin ]; then
	say "cannot unpack the stand-in from the disk /dev/vda: WinRM will not answer"
	while true; do sleep 3600; done
fi
while true; do
	say "starting the WS-Management stand-in on :5985"
	/opt/standin -addr :5985 -name "$name"
	say "the stand-in exited ($?); restarting"
	sleep 1
done
