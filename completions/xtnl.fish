# fish completion for xtnl (and xtnl6): its own commands and iptables' options. Installed as
# /usr/share/fish/vendor_completions.d/xtnl.fish. tests/packaging.rs loads it in fish.

set -l __xtnl_cmds demo list restore save apply serve doctor reservation forward teardown sweep host migrate version help

for c in xtnl xtnl6
    complete -c $c -f
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a demo -d 'NAT reservation demo in a scratch namespace'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a list -d 'print tables, chains and rules'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a restore -d 'apply an iptables-restore file atomically'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a save -d 'print tables in iptables-save format'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a apply -d 'apply a JSON document'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a doctor -d 'what this host has and what will fail'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a reservation -d 'reservation setup CHAIN'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a forward -d 'forward add|remove CHAIN SPEC'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a teardown -d 'delete a reservation'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a sweep -d 'remove PREFIX* chains not kept'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a host -d 'host setup'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a migrate -d 'move reservations between layouts'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a serve -d 'JSON-lines service (stdio or socket)'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a version -d 'print the version'
    complete -c $c -n "not __fish_seen_subcommand_from $__xtnl_cmds" -a help -d 'print the usage'
    complete -c $c -n "__fish_seen_subcommand_from reservation host" -a setup
    complete -c $c -n "__fish_seen_subcommand_from forward" -a 'add remove list'
    complete -c $c -n "__fish_seen_subcommand_from list" -a 'ip ip6 inet'

    # Global options.
    complete -c $c -l policy-file -r -F -d 'check every change against this policy'
    complete -c $c -l audit -x -a 'syslog stderr off' -d 'where audit lines go'
    complete -c $c -l backend -x -a 'nft legacy auto' -d 'nf_tables, x_tables, or as the host'
    complete -c $c -l netns -x -d 'network namespace (ip netns name or path)'
    complete -c $c -l layout -x -a 'chains map' -d 'NAT-host layout'
    complete -c $c -l to -x -a 'map chains' -d 'migrate: the layout to move to'
    complete -c $c -l stdio -d 'serve: requests on standard input'
    complete -c $c -l socket -r -F -d 'serve: unix socket path'

    # Command options.
    complete -c $c -l noflush -d 'restore: keep what is there'
    complete -c $c -l json -d 'JSON output'
    complete -c $c -l entry -x -d 'entry chain (PREROUTING)'
    complete -c $c -l forward -x -d '[IFACE:]PROTO/PORT=ADDR:PORT'
    complete -c $c -l comment-prefix -x -d 'comment prefix'
    complete -c $c -l no-comments -d 'no comments'
    complete -c $c -l prefix -x -d 'sweep: chain name prefix'
    complete -c $c -l keep -x -d 'sweep: names kept, or @FILE'
    complete -c $c -l public-interface -x -a '(__fish_print_interfaces)'
    complete -c $c -l private-interface -x -a '(__fish_print_interfaces)'
    complete -c $c -l private-network -x
    complete -c $c -l public-address -x
    complete -c $c -l ports -x
    complete -c $c -l chain -x

    # iptables commands and options.
    complete -c $c -s A -l append -x -d 'append a rule'
    complete -c $c -s I -l insert -x -d 'insert a rule'
    complete -c $c -s D -l delete -x -d 'delete a rule'
    complete -c $c -s R -l replace -x -d 'replace a rule'
    complete -c $c -s C -l check -x -d 'check for a rule'
    complete -c $c -s N -l new-chain -x -d 'create a chain'
    complete -c $c -s X -l delete-chain -d 'delete a chain'
    complete -c $c -s F -l flush -d 'flush a chain'
    complete -c $c -s Z -l zero -d 'zero counters'
    complete -c $c -s P -l policy -x -d 'set a chain policy'
    complete -c $c -s E -l rename-chain -x -d 'rename a chain'
    complete -c $c -s S -l list-rules -d 'print rules'
    complete -c $c -s L -l list -d 'list rules'
    complete -c $c -s 4 -d 'IPv4'
    complete -c $c -s 6 -d 'IPv6'
    complete -c $c -s t -l table -x -a 'filter nat mangle raw security'
    complete -c $c -s w -l wait -d 'wait for the xtables lock'
    complete -c $c -s W -l wait-interval -x
    complete -c $c -s v -l verbose
    complete -c $c -s n -l numeric
    complete -c $c -s x -l exact
    complete -c $c -l line-numbers
    complete -c $c -s c -l set-counters -x
    complete -c $c -s s -l source -l src -x
    complete -c $c -s d -l destination -l dst -x
    complete -c $c -s i -l in-interface -x -a '(__fish_print_interfaces)'
    complete -c $c -s o -l out-interface -x -a '(__fish_print_interfaces)'
    complete -c $c -s p -l protocol -x -a 'tcp udp icmp icmpv6 all'
    complete -c $c -s f -l fragment
    complete -c $c -s m -l match -x -a 'tcp udp multiport comment state conntrack'
    complete -c $c -s j -l jump -x -a 'ACCEPT DROP RETURN DNAT SNAT MASQUERADE REDIRECT REJECT LOG'
    complete -c $c -s g -l goto -x
    complete -c $c -l sport -l source-port -l dport -l destination-port -x
    complete -c $c -l sports -l source-ports -l dports -l destination-ports -x
    complete -c $c -l comment -x
    complete -c $c -l state -l ctstate -x -a 'NEW ESTABLISHED RELATED INVALID UNTRACKED'
    complete -c $c -l to-destination -l to-source -l to-ports -l reject-with -x
    complete -c $c -l log-prefix -l log-level -x
end
