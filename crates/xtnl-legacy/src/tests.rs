//! The codec on a table captured from the kernel after iptables-legacy 1.8.9 wrote it, in a
//! scratch network namespace:
//!
//! ```text
//! iptables-legacy -N web
//! iptables-legacy -A INPUT -s 192.0.2.1 -p tcp --dport 22 -j web
//! iptables-legacy -A web -i eth+ -m comment --comment hi -j LOG --log-prefix p
//! iptables-legacy -A INPUT -g web
//! iptables-legacy -A web -o eth0
//! iptables-legacy -P FORWARD DROP
//! ```
//!
//! (`IPT_SO_GET_INFO`: valid_hooks 14, hook_entry [-, 0, 504, 656, -], underflow
//! [-, 352, 504, 656, -], 10 entries, 1928 bytes.)

use super::blob::{self, Entry};
use super::table::{Table, Verdict};
use crate::model::Family;

const CAPTURE: &[&str] = &[
    "c000020100000000ffffffff000000000000000000000000000000000000000000000000000000000000000000000000",
    "00000000000000000000000000000000000000000000000000000000000000000600000000000000a000c80002000000",
    "000000000000000000000000000000003000746370000000000000000000000000000000000000000000000000000000",
    "0000ffff1600160000000000000000002800000000000000000000000000000000000000000000000000000000000000",
    "d80300000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000020000000000",
    "700098000200000000000000000000000000000000000000280000000000000000000000000000000000000000000000",
    "0000000000000000d8030000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000070009800020000000000000000000000000000000000000028000000000000000000000000000000",
    "00000000000000000000000000000000feffffff00000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000007000980004000000000000000000000000000000000000002800000000000000",
    "000000000000000000000000000000000000000000000000ffffffff0000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000700098000800000000000000000000000000000000000000",
    "2800000000000000000000000000000000000000000000000000000000000000feffffff000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "00000000000000000000000000000000000000000000000000000000000000007000b000000000000000000000000000",
    "000000000000000040004552524f52000000000000000000000000000000000000000000000000007765620000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000006574682b00000000",
    "000000000000000000000000000000000000000000000000ffffff000000000000000000000000000000000000000000",
    "000000000000000000000000000000009001d00102000000000000000000000000000000000000002001636f6d6d656e",
    "740000000000000000000000000000000000000000000000686900000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000040004c4f47000000",
    "000000000000000000000000000000000000000000000000040070000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000006574683000000000",
    "000000000000000000000000000000000000000000000000ffffffffff00000000000000000000000000000000000000",
    "700098000200000000000000000000000000000000000000280000000000000000000000000000000000000000000000",
    "000000000000000040060000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000070009800020000000000000000000000000000000000000028000000000000000000000000000000",
    "00000000000000000000000000000000fbffffff00000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000007000b000000000000000000000000000000000000000000040004552524f5200",
    "0000000000000000000000000000000000000000000000004552524f5200000000000000000000000000000000000000",
    "0000000000000000",
];

fn captured() -> Vec<u8> {
    let hex: String = CAPTURE.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

const NONE: u32 = u32::MAX;
const HOOKS: [u32; 5] = [NONE, 0, 504, 656, NONE];
const UNDERFLOWS: [u32; 5] = [NONE, 352, 504, 656, NONE];

pub(super) fn table() -> Table {
    Table::from_blob(Family::Ipv4, "filter", 14, &HOOKS, &UNDERFLOWS, &captured()).unwrap()
}

#[test]
fn entries_decode_and_encode_byte_for_byte() {
    let b = captured();
    assert_eq!(b.len(), 1928);
    let entries = blob::decode_entries(Family::Ipv4, &b).unwrap();
    assert_eq!(entries.len(), 10);
    let mut out = Vec::new();
    for (off, e) in &entries {
        assert_eq!(*off, out.len());
        e.encode(Family::Ipv4, &mut out).unwrap();
    }
    assert_eq!(out, b);
}

#[test]
fn chains_policies_jumps_gotos_and_fallthrough() {
    let t = table();
    let names: Vec<&str> = t.chains.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["INPUT", "FORWARD", "OUTPUT", "web"]);
    assert_eq!(t.chains[1].policy, blob::verdict::DROP);
    assert_eq!(t.chains[0].rules[0].verdict, Verdict::Jump("web".into()));
    assert_eq!(t.chains[0].rules[1].verdict, Verdict::Goto("web".into()));
    assert_eq!(t.chains[3].rules[1].verdict, Verdict::Fallthrough);
    assert_eq!(t.references("web"), 2);
    let text: Vec<String> = t
        .chains
        .iter()
        .flat_map(|c| {
            c.rules.iter().map(move |r| {
                crate::ipt::print::append_line(
                    &c.name,
                    &super::convert::to_ipt(Family::Ipv4, r),
                    false,
                )
            })
        })
        .collect();
    assert_eq!(
        text,
        [
            "-A INPUT -s 192.0.2.1/32 -p tcp -m tcp --dport 22 -j web",
            "-A INPUT -g web",
            "-A web -i eth+ -m comment --comment hi -j LOG --log-prefix p",
            "-A web -o eth0",
        ]
    );
}

/// Laid out again, the table is the captured one but for `comefrom`, which the kernel
/// fills in on its side (and ignores on the way in).
#[test]
fn the_table_lays_out_as_the_kernel_had_it() {
    let t = table();
    let l = t.to_blob().unwrap();
    assert_eq!(l.hook_entry[1..4], HOOKS[1..4]);
    assert_eq!(l.underflow[1..4], UNDERFLOWS[1..4]);
    let mut want = Vec::new();
    for (_, mut e) in blob::decode_entries(Family::Ipv4, &captured()).unwrap() {
        e.comefrom = 0;
        e.encode(Family::Ipv4, &mut want).unwrap();
    }
    assert_eq!(l.blob, want);
    assert_eq!(l.carry.len(), 10);
}

/// Damaged blobs (cut short, or any byte changed) are errors or tables, never panics.
#[test]
fn damaged_blobs_never_panic() {
    let b = captured();
    for len in 0..b.len() {
        let _ = Table::from_blob(Family::Ipv4, "filter", 14, &HOOKS, &UNDERFLOWS, &b[..len]);
    }
    for i in 0..b.len() {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut d = b.clone();
            d[i] = v;
            if let Ok(t) = Table::from_blob(Family::Ipv4, "filter", 14, &HOOKS, &UNDERFLOWS, &d) {
                let _ = t.to_blob();
            }
        }
    }
    assert!(Entry::decode(Family::Ipv4, &b[..100]).is_err());
    assert!(Entry::decode(Family::Inet, &b).is_err());
}

/// Rules are kept as the bytes read and copied when laid out: after a chain is added in front
/// of `web` (so every entry after it moves), the jump and the goto to `web` point at its new
/// body, the fall-through rule at its new next entry, counters and `comefrom` read from the
/// kernel are not written back, and every rule still reads as before.
#[test]
fn copied_rules_are_relocated() {
    let mut b = captured();
    // Counters and comefrom as a live table has them, on every entry.
    let entries = blob::decode_entries(Family::Ipv4, &b).unwrap();
    for (off, _) in &entries {
        b[off + 92..off + 96].copy_from_slice(&7u32.to_ne_bytes());
        b[off + 96..off + 112].copy_from_slice(&[0x11; 16]);
    }
    let mut t = Table::from_blob(Family::Ipv4, "filter", 14, &HOOKS, &UNDERFLOWS, &b).unwrap();
    assert_eq!(t.chains[0].rules[0].counters.packets, 0x1111_1111_1111_1111);
    let before: Vec<String> = listed(&t);
    t.insert_user_chain(super::table::Chain::user("aaa"));
    let l = t.to_blob().unwrap();
    let out = blob::decode_entries(Family::Ipv4, &l.blob).unwrap();
    assert!(
        out.iter()
            .all(|(_, e)| e.comefrom == 0 && e.counters.packets == 0)
    );
    // web's body was at 984 (OUTPUT's policy at 656, 152 bytes, then web's head, 176); aaa's
    // head and tail (176 + 152 bytes) now sit before web's head.
    let web_body = 984 + 176 + 152;
    let verdicts: Vec<Option<i32>> = out
        .iter()
        .map(|(_, e)| e.target.standard_verdict())
        .collect();
    assert_eq!(verdicts[0], Some(web_body));
    assert_eq!(verdicts[1], Some(web_body));
    let (fall_at, fall) = &out[out.len() - 3];
    assert_eq!(
        fall.target.standard_verdict(),
        Some((fall_at + fall.size(Family::Ipv4)) as i32)
    );
    let mut hooks = HOOKS;
    let mut underflows = UNDERFLOWS;
    hooks[1..4].copy_from_slice(&l.hook_entry[1..4]);
    underflows[1..4].copy_from_slice(&l.underflow[1..4]);
    let again = Table::from_blob(Family::Ipv4, "filter", 14, &hooks, &underflows, &l.blob).unwrap();
    assert_eq!(listed(&again), before);
    assert_eq!(again.chains[3].name, "aaa");
}

fn listed(t: &Table) -> Vec<String> {
    t.chains
        .iter()
        .flat_map(|c| {
            c.rules.iter().map(move |r| {
                crate::ipt::print::append_line(
                    &c.name,
                    &super::convert::to_ipt(Family::Ipv4, r),
                    false,
                )
            })
        })
        .collect()
}

#[test]
fn the_policy_sees_what_a_replace_changes() {
    use crate::policy::Verb;
    let before = table();
    let summary = |after: &Table| -> Vec<(Verb, Option<String>, Option<String>)> {
        super::exec::judged_difference(&before, after)
            .unwrap()
            .into_iter()
            .flat_map(|j| j.touches)
            .map(|t| (t.verb, t.chain, t.jump_to))
            .collect()
    };
    let some = |s: &str| Some(s.to_owned());
    // Nothing changed, or only what a layout or a zeroing rewrites: no touch.
    let mut t = before.clone();
    assert!(summary(&t).is_empty());
    for c in &mut t.chains {
        for r in &mut c.rules {
            r.counters = Default::default();
        }
    }
    assert!(summary(&t).is_empty(), "counters are not a change of rules");
    // A rule removed by position is judged by its own target; a reorder is no change.
    let mut t = before.clone();
    let input = t.chain_mut("INPUT").unwrap();
    input.rules.remove(0);
    assert_eq!(
        summary(&t),
        [(Verb::DeleteRule, some("INPUT"), some("web"))]
    );
    let mut t = before.clone();
    t.chain_mut("INPUT").unwrap().rules.reverse();
    assert!(summary(&t).is_empty(), "{:?}", summary(&t));
    // Replacing the goto by a copy of the jump: one removal (the goto's target) and one
    // addition.
    let mut t = before.clone();
    let input = t.chain_mut("INPUT").unwrap();
    input.rules[1] = input.rules[0].clone();
    assert_eq!(
        summary(&t),
        [
            (Verb::DeleteRule, some("INPUT"), some("web")),
            (Verb::AddRule, some("INPUT"), some("web")),
        ]
    );
    // A policy, a flush, a deleted chain.
    let mut t = before.clone();
    t.chain_mut("FORWARD").unwrap().policy = super::blob::verdict::ACCEPT;
    t.chain_mut("web").unwrap().rules.clear();
    assert_eq!(
        summary(&t),
        [
            (Verb::Policy, some("FORWARD"), None),
            (Verb::Flush, some("web"), None),
        ]
    );
    let mut t = before.clone();
    t.chains.retain(|c| c.name != "web");
    assert_eq!(summary(&t), [(Verb::Delete, some("web"), None)]);
}

/// A user chain with an empty name (the kernel takes one from any writer of the blob) lays
/// out with an empty name: the chain heads' template once showed its own name, `x`,
/// through it (found by the `xt_blob` fuzz target).
#[test]
fn an_empty_chain_name_lays_out_empty() {
    let mut t = table();
    t.insert_user_chain(super::table::Chain::user(""));
    let l = t.to_blob().unwrap();
    let mut hooks = HOOKS;
    let mut underflows = UNDERFLOWS;
    hooks[1..4].copy_from_slice(&l.hook_entry[1..4]);
    underflows[1..4].copy_from_slice(&l.underflow[1..4]);
    let again = Table::from_blob(Family::Ipv4, "filter", 14, &hooks, &underflows, &l.blob).unwrap();
    let names: Vec<&str> = again.chains.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["INPUT", "FORWARD", "OUTPUT", "", "web"]);
}
