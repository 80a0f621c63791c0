//! The corpus' second part: the modules added after the first fifty (sctp, dccp,
//! hashlimit, connlimit, string, srh, IPv6 ah/frag, rpfilter; TCPOPTSTRIP, CLASSIFY,
//! AUDIT). Written for xtnl from the iptables man pages' option lists.

use super::Hook;

/// (match, hook, IPv4, IPv6), crossed with every table like `MATCHES`.
pub(super) const MATCHES: &[(&str, Hook, bool, bool)] = &[
    ("-p sctp --dport 2905", Hook::Any, true, true),
    ("-p sctp -m sctp ! --sport 1024:2048", Hook::Any, true, true),
    (
        "-p sctp -m sctp --chunk-types any INIT,COOKIE_ECHO",
        Hook::Any,
        true,
        true,
    ),
    (
        "-p sctp -m sctp --dport 36412 ! --chunk-types only DATA:Be,SACK",
        Hook::Any,
        true,
        false,
    ),
    (
        "-p sctp -m sctp --chunk-types all ABORT:T,SHUTDOWN_COMPLETE:t",
        Hook::Any,
        true,
        true,
    ),
    (
        "-p sctp -m sctp --chunk-types all NONE",
        Hook::Any,
        true,
        false,
    ),
    ("-p dccp --dport 5004", Hook::Any, true, true),
    (
        "-p dccp -m dccp ! --sport 100:200 --dccp-types REQUEST,RESPONSE",
        Hook::Any,
        true,
        true,
    ),
    (
        "-p dccp -m dccp ! --dccp-types INVALID --dccp-option 4",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m hashlimit --hashlimit-upto 20/sec --hashlimit-burst 40 --hashlimit-mode srcip --hashlimit-name corp1",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m hashlimit --hashlimit-above 3/min --hashlimit-mode srcip,dstport --hashlimit-name corp2 --hashlimit-srcmask 24",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m hashlimit --hashlimit-above 3/min --hashlimit-mode srcip,dstport --hashlimit-name corp3 --hashlimit-srcmask 64",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m hashlimit --hashlimit-upto 512kb/s --hashlimit-burst 1mb --hashlimit-mode dstip --hashlimit-name corp4 --hashlimit-htable-size 1024 --hashlimit-htable-max 4096",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m hashlimit --hashlimit-upto 100/hour --hashlimit-name corp5 --hashlimit-htable-gcinterval 5000 --hashlimit-htable-expire 120000",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m hashlimit --hashlimit-upto 50/sec --hashlimit-mode srcip --hashlimit-name corp6 --hashlimit-rate-match --hashlimit-rate-interval 5",
        Hook::Any,
        true,
        true,
    ),
    (
        "-p tcp --syn -m connlimit --connlimit-above 10",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m connlimit --connlimit-upto 100 --connlimit-mask 24 --connlimit-daddr",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m connlimit ! --connlimit-above 5 --connlimit-mask 64",
        Hook::Any,
        false,
        true,
    ),
    ("-m string --string GET --algo bm", Hook::Any, true, true),
    (
        "-m string ! --string login --algo kmp --from 20 --to 400 --icase",
        Hook::Any,
        true,
        true,
    ),
    (
        "-m string --hex-string |00ff|abc --algo bm",
        Hook::Any,
        true,
        false,
    ),
    (
        "-m srh --srh-next-hdr 41 --srh-segs-left-gt 0 ! --srh-tag 7",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m srh ! --srh-last-entry-lt 3 --srh-psid 2001:db8::/48 ! --srh-lsid 2001:db8::1/128",
        Hook::Any,
        false,
        true,
    ),
    (
        "-m ah --ahspi 100:200 ! --ahlen 4 --ahres",
        Hook::Any,
        false,
        true,
    ),
    ("-m ah ! --ahspi 500", Hook::Any, false, true),
    ("-m frag --fragid 7 --fragfirst", Hook::Any, false, true),
    (
        "-m frag ! --fragid 1:100 ! --fraglen 8 --fragres --fraglast",
        Hook::Any,
        false,
        true,
    ),
];

/// (rule, table, chain, IPv4, IPv6).
pub(super) const TARGETS: &[(&str, &str, &str, bool, bool)] = &[
    (
        "-p tcp -j TCPOPTSTRIP --strip-options mss,sack-permitted,timestamp",
        "mangle",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-p tcp --dport 443 -j TCPOPTSTRIP",
        "mangle",
        "OUTPUT",
        true,
        true,
    ),
    (
        "-p tcp -j TCPOPTSTRIP --strip-options 30,md5",
        "mangle",
        "FORWARD",
        true,
        false,
    ),
    (
        "-j CLASSIFY --set-class 1:10",
        "mangle",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-o eth0 -j CLASSIFY --set-class ffff:0",
        "mangle",
        "FORWARD",
        true,
        false,
    ),
    ("-j AUDIT --type drop", "filter", "INPUT", true, true),
    ("-j AUDIT --type accept", "mangle", "OUTPUT", true, true),
    ("-j AUDIT --type reject", "raw", "PREROUTING", true, false),
    ("-m rpfilter -j DROP", "raw", "PREROUTING", true, true),
    (
        "-m rpfilter --loose --invert -j DROP",
        "mangle",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-m rpfilter --validmark --accept-local -j ACCEPT",
        "raw",
        "PREROUTING",
        true,
        false,
    ),
];
