//! `-j ECN --ecn-tcp-remove` (revision 0, IPv4 only, table mangle), and the options
//! iptables 1.8.9 still parses but no longer documents: `--ecn-tcp-cwr 0|1`,
//! `--ecn-tcp-ece 0|1`, `--ecn-ip-ect 0..3`. The payload of [`crate::xt::ecn`], through
//! nft_compat in iptables-nft. `-S` prints `--ecn-tcp-remove` for exactly what that option
//! writes (both TCP bits set to 0), as iptables does.

use super::*;
use crate::xt::ecn::{EcnTarget as Info, ecn_ops as op};

pub(crate) struct EcnTarget;

const ECE: u8 = 0x01;
const CWR: u8 = 0x02;

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
        let remove = given.iter().any(|g| g.opt == "ecn-tcp-remove");
        if let Some(g) = given
            .iter()
            .find(|g| remove && matches!(g.opt, "ecn-tcp-cwr" | "ecn-tcp-ece"))
        {
            return Err(bad(format!(
                "ECN: option \"--{}\" cannot be used together with \"--ecn-tcp-remove\"",
                g.opt
            )));
        }
        let mut i = Info::default();
        // In the order given, as iptables applies them (`--ecn-tcp-remove` sets the
        // operations outright).
        for g in given {
            match g.opt {
                "ecn-tcp-remove" => {
                    i.operation = op::SET_ECE | op::SET_CWR;
                    i.tcp &= !(ECE | CWR);
                }
                "ecn-tcp-cwr" => {
                    i.operation |= op::SET_CWR;
                    let v = num(g.arg(), 1, "ECN --ecn-tcp-cwr")? as u8;
                    i.tcp = (i.tcp & !CWR) | (v << 1);
                }
                "ecn-tcp-ece" => {
                    i.operation |= op::SET_ECE;
                    let v = num(g.arg(), 1, "ECN --ecn-tcp-ece")? as u8;
                    i.tcp = (i.tcp & !ECE) | v;
                }
                _ => {
                    i.operation |= op::SET_IP;
                    i.ip_ect = num(g.arg(), 3, "ECN --ecn-ip-ect")? as u8;
                }
            }
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        let known = op::SET_IP | op::SET_ECE | op::SET_CWR;
        if i.operation == 0 || i.operation & !known != 0 || i.tcp & !(ECE | CWR) != 0 {
            return None;
        }
        if i.operation == op::SET_ECE | op::SET_CWR && i.tcp == 0 {
            out.push_str(" --ecn-tcp-remove");
            return Some(());
        }
        if i.operation & op::SET_ECE != 0 {
            let _ = write!(out, " --ecn-tcp-ece {}", i.tcp & ECE);
        }
        if i.operation & op::SET_CWR != 0 {
            let _ = write!(out, " --ecn-tcp-cwr {}", (i.tcp & CWR) >> 1);
        }
        if i.operation & op::SET_IP != 0 {
            let _ = write!(out, " --ecn-ip-ect {}", i.ip_ect);
        }
        Some(())
    }
    canonical_via!(Info);
}
