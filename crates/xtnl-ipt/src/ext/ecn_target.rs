//! `-j ECN` (IPv4, revision 0): `--ecn-tcp-remove`, `--ecn-tcp-cwr 0|1`, `--ecn-tcp-ece
//! 0|1`, `--ecn-ip-ect 0-3`, through nft_compat as iptables-nft writes it; table mangle.

use super::*;
use crate::xt::ecn::{self as xe, EcnTarget as Info};

pub(crate) struct EcnTarget;

impl Ext for EcnTarget {
    fn name(&self) -> &'static str {
        "ECN"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn fams(&self) -> Fams {
        Fams::V4
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ecn-tcp-remove", Arg::None, false),
            opt("ecn-tcp-cwr", Arg::One, false),
            opt("ecn-tcp-ece", Arg::One, false),
            opt("ecn-ip-ect", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ECN")?;
        if given.is_empty() {
            return Err(bad("ECN target: An operation is required"));
        }
        let remove = get(given, "ecn-tcp-remove").is_some();
        if remove
            && given
                .iter()
                .any(|g| g.opt == "ecn-tcp-cwr" || g.opt == "ecn-tcp-ece")
        {
            return Err(bad(
                "ECN: --ecn-tcp-remove cannot be used with --ecn-tcp-cwr or --ecn-tcp-ece",
            ));
        }
        let mut e = Info::default();
        for g in given {
            match g.opt {
                "ecn-tcp-remove" => {
                    e.operation = xe::OP_SET_ECE | xe::OP_SET_CWR;
                    e.tcp = 0;
                }
                "ecn-tcp-cwr" => {
                    e.operation |= xe::OP_SET_CWR;
                    if num(g.arg(), 1, "ECN --ecn-tcp-cwr")? == 1 {
                        e.tcp |= xe::TCP_CWR;
                    }
                }
                "ecn-tcp-ece" => {
                    e.operation |= xe::OP_SET_ECE;
                    if num(g.arg(), 1, "ECN --ecn-tcp-ece")? == 1 {
                        e.tcp |= xe::TCP_ECE;
                    }
                }
                _ => {
                    e.operation |= xe::OP_SET_IP;
                    e.ip_ect = num(g.arg(), 3, "ECN --ecn-ip-ect")? as u8;
                }
            }
        }
        Ok(e.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump(
            info,
            out,
            [
                "--ecn-tcp-remove",
                "--ecn-tcp-ece ",
                "--ecn-tcp-cwr ",
                "--ecn-ip-ect ",
            ],
        )
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        out.push_str(" ECN");
        dump(info, out, ["TCP remove", "ECE=", "CWR=", "ECT codepoint="])
    }
    canonical_via!(Info);
}

/// `ECN_save` / `ECN_print` with their words: remove, then ECE, CWR, the IP codepoint.
fn dump(info: &[u8], out: &mut String, [remove, ece, cwr, ect]: [&str; 4]) -> Option<()> {
    let e = Info::decode(info).ok()?;
    let known = xe::OP_SET_IP | xe::OP_SET_ECE | xe::OP_SET_CWR;
    if e.operation & !known != 0 || e.tcp & !3 != 0 || e.ip_ect > 3 {
        return None;
    }
    if e.operation == xe::OP_SET_ECE | xe::OP_SET_CWR && e.tcp == 0 {
        let _ = write!(out, " {remove}");
        return Some(());
    }
    if e.operation & xe::OP_SET_ECE != 0 {
        let _ = write!(out, " {ece}{}", e.tcp & xe::TCP_ECE);
    }
    if e.operation & xe::OP_SET_CWR != 0 {
        let _ = write!(out, " {cwr}{}", (e.tcp & xe::TCP_CWR) >> 1);
    }
    if e.operation & xe::OP_SET_IP != 0 {
        let _ = write!(out, " {ect}{}", e.ip_ect);
    }
    Some(())
}
