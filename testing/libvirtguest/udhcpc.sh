#!/bin/sh
# udhcpc's event script: apply the lease to the interface.
case "$1" in
bound|renew)
	ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}" up
	if [ -n "$router" ]; then
		while route del default gw 0.0.0.0 dev "$interface" 2>/dev/null; do :; done
		for r in $router; do route add default gw "$r" dev "$interface"; break; done
	fi
	echo "standin-init: $interface $ip/$subnet via $router (DHCP $1)"
	;;
deconfig)
	ifconfig "$interface" 0.0.0.0
	;;
esac
