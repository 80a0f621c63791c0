# Rules written by iptables-nft: native expressions where iptables-nft translates, and
# {"xt": ...} compat statements where it keeps an x_tables match or target.
iptables-nft -A INPUT -p tcp --dport 22 -m conntrack --ctstate NEW -m comment --comment ssh -j ACCEPT
iptables-nft -A INPUT -p tcp -m multiport --dports 80,443 -j LOG --log-prefix web
iptables-nft -A INPUT -m limit --limit 3/min -j REJECT
iptables-nft -N custom
iptables-nft -A custom -s 198.51.100.0/24 -i eth0 ! -o eth1 -j RETURN
iptables-nft -A FORWARD -j custom
iptables-nft -t nat -A POSTROUTING -s 192.0.2.0/24 -j MASQUERADE
iptables-nft -t nat -A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 192.0.2.3:8080
iptables-nft -t mangle -A PREROUTING -j MARK --set-mark 0x10
ip6tables-nft -A INPUT -p ipv6-icmp -j ACCEPT
ip6tables-nft -A INPUT -s 2001:db8::/32 -m state --state ESTABLISHED -j ACCEPT
