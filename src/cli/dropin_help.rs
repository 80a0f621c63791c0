//! What iptables 1.8.9 prints for `-h`/`--help`, byte for byte (firewalld reads the ICMP
//! types from `iptables -p icmp --help`): the generic text, then the help of the target
//! (`-j`) and of each match (`-m`, or the protocol's match when `-p NAME` came without `-m`),
//! as iptables' `print_extension_helps` prints them. The texts are iptables' own, taken from
//! iptables-nft 1.8.9 (identical under iptables-legacy 1.8.9); `tests/dropin_help.rs` compares
//! them with the real tools. A module without a text here adds nothing.

use xtnl::model::Family;

/// The generic part of the help after the version line, `{P}` standing for the program.
const GENERIC: &str = concat!(
    "Usage: {P} -[ACD] chain rule-specification [options]\n",
    "       {P} -I chain [rulenum] rule-specification [options]\n",
    "       {P} -R chain rulenum rule-specification [options]\n",
    "       {P} -D chain rulenum [options]\n",
    "       {P} -[LS] [chain [rulenum]] [options]\n",
    "       {P} -[FZ] [chain] [options]\n",
    "       {P} -[NX] chain\n",
    "       {P} -E old-chain-name new-chain-name\n",
    "       {P} -P chain target [options]\n",
    "       {P} -h (print this help information)\n",
    "\n",
    "Commands:\n",
    "Either long or short options are allowed.\n",
    "  --append  -A chain\t\tAppend to chain\n",
    "  --check   -C chain\t\tCheck for the existence of a rule\n",
    "  --delete  -D chain\t\tDelete matching rule from chain\n",
    "  --delete  -D chain rulenum\n",
    "\t\t\t\tDelete rule rulenum (1 = first) from chain\n",
    "  --insert  -I chain [rulenum]\n",
    "\t\t\t\tInsert in chain as rulenum (default 1=first)\n",
    "  --replace -R chain rulenum\n",
    "\t\t\t\tReplace rule rulenum (1 = first) in chain\n",
    "  --list    -L [chain [rulenum]]\n",
    "\t\t\t\tList the rules in a chain or all chains\n",
    "  --list-rules -S [chain [rulenum]]\n",
    "\t\t\t\tPrint the rules in a chain or all chains\n",
    "  --flush   -F [chain]\t\tDelete all rules in  chain or all chains\n",
    "  --zero    -Z [chain [rulenum]]\n",
    "\t\t\t\tZero counters in chain or all chains\n",
    "  --new     -N chain\t\tCreate a new user-defined chain\n",
    "  --delete-chain\n",
    "            -X [chain]\t\tDelete a user-defined chain\n",
    "  --policy  -P chain target\n",
    "\t\t\t\tChange policy on chain to target\n",
    "  --rename-chain\n",
    "            -E old-chain new-chain\n",
    "\t\t\t\tChange chain name, (moving any references)\n",
    "\n",
    "Options:\n",
    "    --ipv4\t-4\t\tNothing (line is ignored by ip6tables-restore)\n",
    "    --ipv6\t-6\t\tError (line is ignored by iptables-restore)\n",
    "[!] --protocol\t-p proto\tprotocol: by number or name, eg. `tcp'\n",
    "[!] --source\t-s address[/mask][...]\n",
    "\t\t\t\tsource specification\n",
    "[!] --destination -d address[/mask][...]\n",
    "\t\t\t\tdestination specification\n",
    "[!] --in-interface -i input name[+]\n",
    "\t\t\t\tnetwork interface name ([+] for wildcard)\n",
    " --jump\t-j target\n",
    "\t\t\t\ttarget for rule (may load target extension)\n",
    "  --goto      -g chain\n",
    "\t\t\t       jump to chain with no return\n",
    "  --match\t-m match\n",
    "\t\t\t\textended match (may load extension)\n",
    "  --numeric\t-n\t\tnumeric output of addresses and ports\n",
    "[!] --out-interface -o output name[+]\n",
    "\t\t\t\tnetwork interface name ([+] for wildcard)\n",
    "  --table\t-t table\ttable to manipulate (default: `filter')\n",
    "  --verbose\t-v\t\tverbose mode\n",
    "  --wait\t-w [seconds]\tmaximum wait to acquire xtables lock before give up\n",
    "  --line-numbers\t\tprint line numbers when listing\n",
    "  --exact\t-x\t\texpand numbers (display exact values)\n",
    "[!] --fragment\t-f\t\tmatch second or further fragments only\n",
    "  --modprobe=<command>\t\ttry to insert modules using this command\n",
    "  --set-counters -c PKTS BYTES\tset the counter during insert/append\n",
    "[!] --version\t-V\t\tprint package version.\n",
);

/// The generic help of `prog` for `family`, after its version line and a blank line.
pub(super) fn generic(prog: &str, family: Family) -> String {
    let text = GENERIC.replace("{P}", prog);
    match family {
        Family::Ipv6 => text
            .replace(
                "-4\t\tNothing (line is ignored by ip6tables-restore)",
                "-4\t\tError (line is ignored by ip6tables-restore)",
            )
            .replace(
                "-6\t\tError (line is ignored by iptables-restore)",
                "-6\t\tNothing (line is ignored by iptables-restore)",
            )
            .replace(
                "[!] --fragment\t-f\t\tmatch second or further fragments only\n",
                "",
            ),
        _ => text,
    }
}

/// The help of extension `name` (a match or a target) as iptables prints it, with its
/// leading blank line.
fn block(name: &str, family: Family) -> Option<&'static str> {
    Some(match (name, family) {
        ("DNAT", _) => concat!(
            "\n",
            "DNAT target options:\n",
            " --to-destination [<ipaddr>[-<ipaddr>]][:port[-port[/port]]]\n",
            "\t\t\t\tAddress to map destination to.\n",
            "[--random] [--persistent]\n",
        ),
        ("LOG", _) => concat!(
            "\n",
            "LOG target options:\n",
            " --log-level level\t\tLevel of logging (numeric or see syslog.conf)\n",
            " --log-prefix prefix\t\tPrefix log messages with this prefix.\n",
            " --log-tcp-sequence\t\tLog TCP sequence numbers.\n",
            " --log-tcp-options\t\tLog TCP options.\n",
            " --log-ip-options\t\tLog IP options.\n",
            " --log-uid\t\t\tLog UID owning the local socket.\n",
            " --log-macdecode\t\tDecode MAC addresses and protocol.\n",
        ),
        ("MARK", _) => concat!(
            "\n",
            "MARK target options:\n",
            "  --set-xmark value[/mask]  Clear bits in mask and XOR value into nfmark\n",
            "  --set-mark value[/mask]   Clear bits in mask and OR value into nfmark\n",
            "  --and-mark bits           Binary AND the nfmark with bits\n",
            "  --or-mark bits            Binary OR the nfmark with bits\n",
            "  --xor-mark bits           Binary XOR the nfmark with bits\n",
        ),
        ("MASQUERADE", _) => concat!(
            "\n",
            "MASQUERADE target options:\n",
            " --to-ports <port>[-<port>]\n",
            "\t\t\t\tPort (range) to map to.\n",
            " --random\n",
            "\t\t\t\tRandomize source port.\n",
            " --random-fully\n",
            "\t\t\t\tFully randomize source port.\n",
        ),
        ("REDIRECT", _) => concat!(
            "\n",
            "REDIRECT target options:\n",
            " --to-ports <port>[-<port>]\n",
            "\t\t\t\tPort (range) to map to.\n",
            " [--random]\n",
        ),
        ("REJECT", Family::Ipv6) => concat!(
            "\n",
            "REJECT target options:\n",
            "--reject-with type              drop input packet and send back\n",
            "                                a reply packet according to type:\n",
            "Valid reject types:\n",
            "    icmp6-no-route           \tICMPv6 no route\n",
            "    no-route                 \talias\n",
            "    icmp6-adm-prohibited     \tICMPv6 administratively prohibited\n",
            "    adm-prohibited           \talias\n",
            "    icmp6-addr-unreachable   \tICMPv6 address unreachable\n",
            "    addr-unreach             \talias\n",
            "    icmp6-port-unreachable   \tICMPv6 port unreachable\n",
            "    port-unreach             \talias\n",
            "    tcp-reset                \tTCP RST packet\n",
            "    tcp-reset                \talias\n",
            "    icmp6-policy-fail        \tICMPv6 policy fail\n",
            "    policy-fail              \talias\n",
            "    icmp6-reject-route       \tICMPv6 reject route\n",
            "    reject-route             \talias\n",
            "\n",
        ),
        ("REJECT", _) => concat!(
            "\n",
            "REJECT target options:\n",
            "--reject-with type              drop input packet and send back\n",
            "                                a reply packet according to type:\n",
            "Valid reject types:\n",
            "    icmp-net-unreachable     \tICMP network unreachable\n",
            "    net-unreach              \talias\n",
            "    icmp-host-unreachable    \tICMP host unreachable\n",
            "    host-unreach             \talias\n",
            "    icmp-proto-unreachable   \tICMP protocol unreachable\n",
            "    proto-unreach            \talias\n",
            "    icmp-port-unreachable    \tICMP port unreachable (default)\n",
            "    port-unreach             \talias\n",
            "    icmp-net-prohibited      \tICMP network prohibited\n",
            "    net-prohib               \talias\n",
            "    icmp-host-prohibited     \tICMP host prohibited\n",
            "    host-prohib              \talias\n",
            "    tcp-reset                \tTCP RST packet\n",
            "    tcp-rst                  \talias\n",
            "    icmp-admin-prohibited    \tICMP administratively prohibited (*)\n",
            "    admin-prohib             \talias\n",
            "\n",
            "(*) See man page or read the INCOMPATIBILITES file for compatibility issues.\n",
        ),
        ("SNAT", _) => concat!(
            "\n",
            "SNAT target options:\n",
            " --to-source [<ipaddr>[-<ipaddr>]][:port[-port]]\n",
            "\t\t\t\tAddress to map source to.\n",
            "[--random] [--random-fully] [--persistent]\n",
        ),
        ("comment", _) => concat!(
            "\n",
            "comment match options:\n",
            "--comment COMMENT             Attach a comment to a rule\n",
        ),
        ("conntrack", _) => concat!(
            "\n",
            "conntrack match options:\n",
            "[!] --ctstate {INVALID|ESTABLISHED|NEW|RELATED|UNTRACKED|SNAT|DNAT}[,...]\n",
            "                               State(s) to match\n",
            "[!] --ctproto proto            Protocol to match; by number or name, e.g. \"tcp\"\n",
            "[!] --ctorigsrc address[/mask]\n",
            "[!] --ctorigdst address[/mask]\n",
            "[!] --ctreplsrc address[/mask]\n",
            "[!] --ctrepldst address[/mask]\n",
            "                               Original/Reply source/destination address\n",
            "[!] --ctorigsrcport port\n",
            "[!] --ctorigdstport port\n",
            "[!] --ctreplsrcport port\n",
            "[!] --ctrepldstport port\n",
            "                               TCP/UDP/SCTP orig./reply source/destination port\n",
            "[!] --ctstatus {NONE|EXPECTED|SEEN_REPLY|ASSURED|CONFIRMED}[,...]\n",
            "                               Status(es) to match\n",
            "[!] --ctexpire time[:time]     Match remaining lifetime in seconds against\n",
            "                               value or range of values (inclusive)\n",
            "    --ctdir {ORIGINAL|REPLY}   Flow direction of packet\n",
        ),
        ("icmp", Family::Ipv4) => concat!(
            "\n",
            "icmp match options:\n",
            "[!] --icmp-type typename\tmatch icmp type\n",
            "[!] --icmp-type type[/code]\t(or numeric type or type/code)\n",
            "Valid ICMP Types:\n",
            "any\n",
            "echo-reply (pong)\n",
            "destination-unreachable\n",
            "   network-unreachable\n",
            "   host-unreachable\n",
            "   protocol-unreachable\n",
            "   port-unreachable\n",
            "   fragmentation-needed\n",
            "   source-route-failed\n",
            "   network-unknown\n",
            "   host-unknown\n",
            "   network-prohibited\n",
            "   host-prohibited\n",
            "   TOS-network-unreachable\n",
            "   TOS-host-unreachable\n",
            "   communication-prohibited\n",
            "   host-precedence-violation\n",
            "   precedence-cutoff\n",
            "source-quench\n",
            "redirect\n",
            "   network-redirect\n",
            "   host-redirect\n",
            "   TOS-network-redirect\n",
            "   TOS-host-redirect\n",
            "echo-request (ping)\n",
            "router-advertisement\n",
            "router-solicitation\n",
            "time-exceeded (ttl-exceeded)\n",
            "   ttl-zero-during-transit\n",
            "   ttl-zero-during-reassembly\n",
            "parameter-problem\n",
            "   ip-header-bad\n",
            "   required-option-missing\n",
            "timestamp-request\n",
            "timestamp-reply\n",
            "address-mask-request\n",
            "address-mask-reply\n",
        ),
        ("icmp6", Family::Ipv6) => concat!(
            "\n",
            "icmpv6 match options:\n",
            "[!] --icmpv6-type typename\tmatch icmpv6 type\n",
            "\t\t\t\t(or numeric type or type/code)\n",
            "Valid ICMPv6 Types:\n",
            "destination-unreachable\n",
            "   no-route\n",
            "   communication-prohibited\n",
            "   beyond-scope\n",
            "   address-unreachable\n",
            "   port-unreachable\n",
            "   failed-policy\n",
            "   reject-route\n",
            "packet-too-big\n",
            "time-exceeded (ttl-exceeded)\n",
            "   ttl-zero-during-transit\n",
            "   ttl-zero-during-reassembly\n",
            "parameter-problem\n",
            "   bad-header\n",
            "   unknown-header-type\n",
            "   unknown-option\n",
            "echo-request (ping)\n",
            "echo-reply (pong)\n",
            "router-solicitation\n",
            "router-advertisement\n",
            "neighbour-solicitation (neighbor-solicitation)\n",
            "neighbour-advertisement (neighbor-advertisement)\n",
            "redirect\n",
        ),
        ("limit", _) => concat!(
            "\n",
            "limit match options:\n",
            "--limit avg\t\t\tmax average match rate: default 3/hour\n",
            "                                [Packets per second unless followed by \n",
            "                                /sec /minute /hour /day postfixes]\n",
            "--limit-burst number\t\tnumber to match in a burst, default 5\n",
        ),
        ("mark", _) => concat!(
            "\n",
            "mark match options:\n",
            "[!] --mark value[/mask]    Match nfmark value with optional mask\n",
        ),
        ("multiport", _) => concat!(
            "\n",
            "multiport match options:\n",
            "[!] --source-ports port[,port:port,port...]\n",
            " --sports ...\n",
            "\t\t\t\tmatch source port(s)\n",
            "[!] --destination-ports port[,port:port,port...]\n",
            " --dports ...\n",
            "\t\t\t\tmatch destination port(s)\n",
            "[!] --ports port[,port:port,port]\n",
            "\t\t\t\tmatch both source and destination port(s)\n",
        ),
        ("standard", _) => concat!(
            "\n",
            "standard match options:\n",
            "(If target is DROP, ACCEPT, RETURN or nothing)\n",
        ),
        ("state", _) => concat!(
            "\n",
            "state match options:\n",
            " [!] --state [INVALID|ESTABLISHED|NEW|RELATED|UNTRACKED][,...]\n",
            "\t\t\t\tState(s) to match\n",
        ),
        ("tcp", _) => concat!(
            "\n",
            "tcp match options:\n",
            "[!] --tcp-flags mask comp\tmatch when TCP flags & mask == comp\n",
            "\t\t\t\t(Flags: SYN ACK FIN RST URG PSH ALL NONE)\n",
            "[!] --syn\t\t\tmatch when only SYN flag set\n",
            "\t\t\t\t(equivalent to --tcp-flags SYN,RST,ACK,FIN SYN)\n",
            "[!] --source-port port[:port]\n",
            " --sport ...\n",
            "\t\t\t\tmatch source port(s)\n",
            "[!] --destination-port port[:port]\n",
            " --dport ...\n",
            "\t\t\t\tmatch destination port(s)\n",
            "[!] --tcp-option number        match if TCP option set\n",
        ),
        ("udp", _) => concat!(
            "\n",
            "udp match options:\n",
            "[!] --source-port port[:port]\n",
            " --sport ...\n",
            "\t\t\t\tmatch source port(s)\n",
            "[!] --destination-port port[:port]\n",
            " --dport ...\n",
            "\t\t\t\tmatch destination port(s)\n",
        ),
        ("TEE", _) => concat!(
            "\n",
            "TEE target options:\n",
            "  --gateway IPADDR    Route packet via the gateway given by address\n",
            "  --oif NAME          Include oif in route calculation\n",
            "\n",
        ),
        _ => return None,
    })
}

/// The match iptables loads for `-p NAME` (`xtables_find_match` of the protocol's name).
fn protocol_match(proto: &str, family: Family) -> Option<String> {
    let p = proto.to_ascii_lowercase();
    match (p.as_str(), family) {
        ("icmpv6" | "ipv6-icmp" | "icmp6", Family::Ipv6) => Some("icmp6".into()),
        ("icmp", Family::Ipv6) => None,
        _ if p.bytes().all(|b| b.is_ascii_digit()) => None,
        _ => Some(p),
    }
}

/// Options of iptables itself that take a value (so that the value is not read as an
/// option), in short and long form.
fn takes_value(opt: &str) -> bool {
    matches!(
        opt,
        "-s" | "--source"
            | "--src"
            | "-d"
            | "--destination"
            | "--dst"
            | "-i"
            | "--in-interface"
            | "-o"
            | "--out-interface"
            | "-t"
            | "--table"
            | "-g"
            | "--goto"
            | "--modprobe"
    )
}

/// Whether `opt` is one of iptables' own options (not a module's).
fn generic_option(opt: &str) -> bool {
    takes_value(opt)
        || matches!(
            opt,
            "-4" | "--ipv4"
                | "-6"
                | "--ipv6"
                | "-n"
                | "--numeric"
                | "-v"
                | "--verbose"
                | "-x"
                | "--exact"
                | "--line-numbers"
                | "-f"
                | "--fragment"
                | "-w"
                | "--wait"
                | "-W"
                | "--wait-interval"
                | "-c"
                | "--set-counters"
                | "!"
        )
}

/// The extensions' part of `--help` for the options before it, as iptables prints it: the
/// target's help, then each match's in the order loaded. `-p NAME` loads NAME's match when
/// no `-m` did by the time of `--help`, or when a module option follows it (iptables loads the
/// protocol's match for an option it does not know).
pub(super) fn extensions(args: &[String], family: Family) -> String {
    let mut matches: Vec<String> = Vec::new();
    let mut target: Option<String> = None;
    let mut proto: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = args.get(i + 1).map(String::as_str);
        match a {
            "-h" | "--help" => break,
            "-p" | "--protocol" => {
                proto = value.and_then(|v| protocol_match(v, family));
                i += 1;
            }
            "-m" | "--match" => {
                if let Some(v) = value {
                    matches.push(v.to_string());
                }
                i += 1;
            }
            "-j" | "--jump" => {
                target = value.map(|v| match v {
                    "ACCEPT" | "DROP" | "RETURN" => "standard".to_string(),
                    other => other.to_string(),
                });
                i += 1;
            }
            _ if takes_value(a) => i += 1,
            _ if a.starts_with('-') && !generic_option(a) => {
                if let Some(p) = &proto
                    && !matches.contains(p)
                {
                    matches.push(p.clone());
                }
            }
            _ => {}
        }
        i += 1;
    }
    if matches.is_empty()
        && let Some(p) = proto
    {
        matches.push(p);
    }
    let mut out = String::new();
    for name in target.iter().chain(matches.iter()) {
        if let Some(text) = block(name, family) {
            out.push_str(text);
        }
    }
    out
}
