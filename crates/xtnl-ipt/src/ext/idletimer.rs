//! `-j IDLETIMER --timeout SECONDS --label NAME [--alarm]`: revision 1 as iptables 1.8.9
//! writes it (revision 0, which has no `--alarm`, is read too), both families, through
//! nft_compat in iptables-nft.
//!
//! The kernel keeps one timer per label for the whole machine (its `idletimer_tg_list` is
//! not per network namespace), with a file `/sys/class/xt_idletimer/timers/LABEL`; it is
//! freed with the last rule using it (for rules of a namespace, when the namespace's
//! cleanup has run). A label used by rules of another type (alarm or not) is refused by
//! the kernel (EINVAL). iptables cuts a label over 27 bytes silently; xtnl refuses it.

use super::secmark::word;
use super::*;
use crate::xt::idletimer::{
    IdletimerTarget as Info, IdletimerTargetV0 as InfoV0, MAX_IDLETIMER_LABEL_SIZE,
    XT_IDLETIMER_ALARM,
};
use crate::xt::layout::Raw;

pub(crate) struct Idletimer;

impl Ext for Idletimer {
    fn name(&self) -> &'static str {
        "IDLETIMER"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        1
    }
    fn reads(&self, rev: u32) -> bool {
        rev <= 1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("timeout", Arg::One, false),
            opt("label", Arg::One, false),
            opt("alarm", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "IDLETIMER")?;
        let mut i = Info::default();
        for g in given {
            match g.opt {
                "timeout" => {
                    i.timeout = num(g.arg(), u64::from(u32::MAX), "IDLETIMER --timeout")? as u32
                }
                "label" => {
                    if g.arg().len() >= MAX_IDLETIMER_LABEL_SIZE {
                        return Err(bad(format!(
                            "IDLETIMER: argument for \"--label\" is too long (max {} characters)",
                            MAX_IDLETIMER_LABEL_SIZE - 1
                        )));
                    }
                    i.label = Raw::from_str(g.arg(), "label").map_err(wire)?;
                }
                _ => i.timer_type = XT_IDLETIMER_ALARM,
            }
        }
        for o in ["timeout", "label"] {
            if get(given, o).is_none() {
                return Err(bad(format!(
                    "IDLETIMER: option \"--{o}\" must be specified"
                )));
            }
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let (timeout, label, alarm) = fields(info)?;
        let _ = write!(out, " --timeout {timeout} --label {label}");
        if alarm {
            out.push_str(" --alarm");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let (timeout, label, alarm) = fields(info)?;
        let _ = write!(out, " timeout:{timeout} label:{label}");
        if alarm {
            out.push_str(" alarm");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        if info.len() == InfoV0::SIZE {
            let mut i = InfoV0::decode(info).ok()?;
            i.label = i.label.canonical_text();
            return Some(i.encode());
        }
        let mut i = Info::decode(info).ok()?;
        i.label = i.label.canonical_text();
        Some(i.encode())
    }
}

/// Timeout, label and `--alarm` of either revision (told apart by size); `None` for what
/// iptables would not print back (a timer type it does not know, Android's netlink flag,
/// a label that is no single word).
fn fields(info: &[u8]) -> Option<(u32, String, bool)> {
    if info.len() == InfoV0::SIZE {
        let i = InfoV0::decode(info).ok()?;
        return Some((i.timeout, word(i.label.text())?, false));
    }
    let i = Info::decode(info).ok()?;
    if i.send_nl_msg != 0 || i.timer_type > XT_IDLETIMER_ALARM {
        return None;
    }
    Some((i.timeout, word(i.label.text())?, i.timer_type != 0))
}
