//! Payload bytes of CONNSECMARK, SECMARK, IDLETIMER, RATEEST, rateest, nfacct and LED as
//! iptables 1.8.9 writes them (iptables' `-C` finds xtnl's rules and xtnl's finds
//! iptables': tests/ext_diff.rs, tests/ext_rateest.rs, the .t runner), and a property over
//! arbitrary payloads of these modules (the ext_decode fuzz target's, run here on
//! pseudo-random mutations of valid payloads): decoding, `-S` and `-L` never panic, and
//! what `-S` prints reads back as the same rule.

use super::*;
use crate::ipt::parse::{Command, parse, split_words};
use crate::ipt::{IptMatch, IptTarget};

fn rule(line: &str, family: Family) -> IptRule {
    let words = split_words(line).unwrap();
    match parse(&words, family).unwrap().command {
        Command::Append { rule, .. } => rule,
        other => panic!("{other:?}"),
    }
}

fn payload(line: &str) -> XtPayload {
    let r = rule(line, Family::Ipv4);
    if let Some(IptTarget::Ext(x)) = r.target {
        return x;
    }
    match r.matches.into_iter().next_back() {
        Some(IptMatch::Ext(x)) => x,
        other => panic!("{line}: {other:?}"),
    }
}

fn spec(line: &str) -> String {
    crate::ipt::print::rule_spec(&rule(line, Family::Ipv4))
}

fn label(s: &str, n: usize) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.resize(n, 0);
    v
}

#[test]
fn connsecmark_and_secmark_bytes() {
    let p = payload("-A X -j CONNSECMARK --restore");
    assert_eq!((p.name.as_str(), p.rev), ("CONNSECMARK", 0));
    assert_eq!(p.info, [2, 0, 0, 0, 0, 0, 0, 0]);
    let p = payload("-A X -j SECMARK --selctx system_u:object_r:x_t:s0");
    assert_eq!((p.name.as_str(), p.rev, p.info.len()), ("SECMARK", 1, 264));
    assert_eq!(p.info[0], 1);
    assert_eq!(&p.info[1..27], b"system_u:object_r:x_t:s0\0\0");
    assert_eq!(
        spec("-A X -j SECMARK --selctx a_u:b_r:c_t:s0"),
        " -j SECMARK --selctx a_u:b_r:c_t:s0"
    );
}

#[test]
fn idletimer_bytes() {
    let p = payload("-A X -j IDLETIMER --label foo --alarm --timeout 0x2a");
    assert_eq!((p.name.as_str(), p.rev, p.info.len()), ("IDLETIMER", 1, 48));
    let mut want = 42u32.to_ne_bytes().to_vec();
    want.extend(label("foo", 28));
    want.extend([0, 1, 0, 0, 0, 0, 0, 0]);
    want.extend([0; 8]);
    assert_eq!(p.info, want);
    assert_eq!(
        spec("-A X -j IDLETIMER --label foo --alarm --timeout 0x2a"),
        " -j IDLETIMER --timeout 42 --label foo --alarm"
    );
    // Revision 0 (no --alarm) reads too.
    let mut v0 = 7u32.to_ne_bytes().to_vec();
    v0.extend(label("old", 28));
    v0.extend([0; 8]);
    let x = decode("IDLETIMER", 0, &v0, true, Family::Ipv4).unwrap();
    let mut out = String::new();
    save_target(&x, &mut out);
    assert_eq!(out, " -j IDLETIMER --timeout 7 --label old");
}

#[test]
fn rateest_bytes_and_words() {
    let p = payload(
        "-A X -j RATEEST --rateest-name RE1 --rateest-interval 250.0ms --rateest-ewmalog 500.0ms",
    );
    let mut want = label("RE1", 16);
    want.extend([0xfe, 1]);
    want.resize(32, 0);
    assert_eq!((p.name.as_str(), p.rev, p.info), ("RATEEST", 0, want));
    // iptables' quantisation: the next interval 2^k/4 s, the log of the time constant.
    assert_eq!(
        spec("-A X -j RATEEST --rateest-name r --rateest-interval 300ms --rateest-ewmalog 1.5s"),
        " -j RATEEST --rateest-name r --rateest-interval 500.0ms --rateest-ewmalog 2.0s"
    );
    let p = payload("-A X -m rateest --rateest RE1 --rateest-lt --rateest-bps 8bit");
    let mut want = label("RE1", 32);
    want.extend(0x12u16.to_ne_bytes()); // BPS | ABS
    want.extend(2u16.to_ne_bytes()); // LT
    want.extend([0; 8]);
    want.extend(1u32.to_ne_bytes()); // bps2: 8 bit/s = 1 byte/s
    want.resize(72, 0);
    assert_eq!(p.info, want);
    assert_eq!(
        spec("-A X -m rateest --rateest a ! --rateest-gt --rateest-bps 3MBps --rateest-pps 7"),
        " -m rateest --rateest a ! --rateest-gt --rateest-bps 24000Kbit ! --rateest-gt --rateest-pps 7"
    );
}

#[test]
fn nfacct_and_led_bytes() {
    let p = payload("-A X -m nfacct --nfacct-name acct");
    assert_eq!((p.name.as_str(), p.rev), ("nfacct", 1));
    assert_eq!(p.info, label("acct", 40));
    assert_eq!(
        spec("-A X -m nfacct --nfacct-name acct"),
        " -m nfacct --nfacct-name  acct"
    );
    let p = payload("-A X -j LED --led-trigger-id foo --led-delay inf --led-always-blink");
    let mut want = label("netfilter-foo", 27);
    want.push(1);
    want.extend(u32::MAX.to_ne_bytes());
    want.resize(40, 0);
    assert_eq!(p.info, want);
    // iptables saves `inf` with %d.
    assert_eq!(
        spec("-A X -j LED --led-trigger-id foo --led-delay inf"),
        " -j LED --led-trigger-id \"foo\" --led-delay -1"
    );
}

/// xorshift64*, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn arbitrary_payloads_print_and_read_back_alike() {
    let seeds: &[(&str, bool)] = &[
        ("-A X -j CONNSECMARK --save", true),
        ("-A X -j SECMARK --selctx a_u:b_r:c_t:s0", true),
        ("-A X -j IDLETIMER --timeout 42 --label foo --alarm", true),
        (
            "-A X -j RATEEST --rateest-name RE1 --rateest-interval 1s --rateest-ewmalog 4s",
            true,
        ),
        (
            "-A X -m rateest --rateest-delta --rateest1 a --rateest-bps1 8bit --rateest-lt --rateest-bps2 16kbit --rateest2 b",
            false,
        ),
        (
            "-A X -m rateest --rateest a ! --rateest-eq --rateest-pps 9",
            false,
        ),
        ("-A X -m nfacct --nfacct-name acct", false),
        (
            "-A X -j LED --led-trigger-id foo --led-delay 5 --led-always-blink",
            true,
        ),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut printed = 0;
    for &(line, target) in seeds {
        let base = payload(line);
        for round in 0..3000 {
            let mut info = base.info.clone();
            // A few bytes changed, mostly in the fields (the first 48 bytes).
            for _ in 0..1 + round % 4 {
                let r = rng.next();
                let at = (r as usize >> 8) % info.len().min(if r & 1 == 0 { 48 } else { 4096 });
                info[at] = (r >> 40) as u8;
            }
            for family in [Family::Ipv4, Family::Ipv6] {
                let Some(x) = decode(&base.name, base.rev, &info, target, family) else {
                    continue;
                };
                let mut s = String::new();
                if target {
                    save_target(&x, &mut s);
                } else {
                    save_match(&x, &mut s);
                }
                for numeric in [false, true] {
                    for flavour in [Flavour::Nft, Flavour::Legacy] {
                        let mut l = String::new();
                        list(&x, target, numeric, flavour, &mut l);
                    }
                }
                // A RATEEST time constant past 2^32 us wraps in iptables' unsigned
                // arithmetic and prints as another time (as with iptables, it does not
                // read back).
                if x.name == "RATEEST" {
                    let interval = (1_000_000u64 << (x.info[16] as i8 + 2)) / 4;
                    if interval << x.info[17] > u64::from(u32::MAX) {
                        continue;
                    }
                }
                let Ok(words) = split_words(&format!("-A X{s}")) else {
                    panic!("{s}: does not split");
                };
                let Ok(p) = parse(&words, family) else {
                    continue;
                };
                let Command::Append { rule, .. } = p.command else {
                    panic!("{s}")
                };
                assert_eq!(crate::ipt::print::rule_spec(&rule), s, "read back");
                printed += 1;
            }
        }
    }
    assert!(printed > 1000, "{printed} payloads printed");
}

/// The `-L` words of the targets the kernel here refuses (no LSM, no LED class), which the
/// listing tests cannot reach: iptables 1.8.9's `print` of each.
#[test]
fn list_words_of_secmark_led_connsecmark() {
    let words = |line: &str| {
        let mut out = String::new();
        list(&payload(line), true, false, Flavour::Nft, &mut out);
        out
    };
    assert_eq!(
        words("-A X -j SECMARK --selctx a_u:b_r:c_t:s0"),
        " SECMARK selctx a_u:b_r:c_t:s0"
    );
    assert_eq!(
        words("-A X -j LED --led-trigger-id \"a\\\"b\" --led-always-blink"),
        " led-trigger-id:\"a\\\"b\" led-delay:0ms led-always-blink"
    );
    assert_eq!(
        words("-A X -j LED --led-trigger-id x --led-delay inf"),
        " led-trigger-id:\"x\" led-delay:inf"
    );
    assert_eq!(words("-A X -j CONNSECMARK --save"), " CONNSECMARK save");
    assert_eq!(
        words("-A X -j IDLETIMER --timeout 1 --label t --alarm"),
        " timeout:1 label:t alarm"
    );
}
