//! `-j LED --led-trigger-id ID [--led-delay MS|inf] [--led-always-blink]` (revision 0,
//! both families), through nft_compat in iptables-nft. iptables writes the id as
//! `netfilter-ID` (the LED trigger's name) and prints it without the prefix, in double
//! quotes with `"` and `\` escaped; it saves the delay with `%d`, so `inf` (all ones)
//! saves as `--led-delay -1`, which it cannot read back, and xtnl prints the same.
//! Kernels without the LED class (no `xt_LED`) refuse the rule (ENOENT), as iptables
//! reports it after its warning that the revision is not supported.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::led::{LED_ID_PREFIX, LedTarget as Info};

pub(crate) struct Led;

/// The longest `--led-trigger-id` iptables takes: the id's buffer less the prefix and NUL.
const ID_MAX: usize = 27 - LED_ID_PREFIX.len() - 1;

impl Ext for Led {
    fn name(&self) -> &'static str {
        "LED"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("led-trigger-id", Arg::One, false),
            opt("led-delay", Arg::One, false),
            opt("led-always-blink", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "LED")?;
        let mut i = Info::default();
        for g in given {
            match g.opt {
                "led-trigger-id" => {
                    if g.arg().len() > ID_MAX {
                        return Err(bad(format!(
                            "Argument must have a maximum length of {ID_MAX} characters"
                        )));
                    }
                    let id = format!("{LED_ID_PREFIX}{}", g.arg());
                    i.id = Raw::from_str(&id, "led-trigger-id").map_err(wire)?;
                }
                "led-delay" => {
                    let a = g.arg();
                    i.delay = if a.len() >= 3 && a[..3].eq_ignore_ascii_case("inf") {
                        u32::MAX
                    } else {
                        num(a, u64::from(u32::MAX), "LED --led-delay").map_err(|_| {
                            bad(format!("Delay value must be within range 0..{}", u32::MAX))
                        })? as u32
                    };
                }
                _ => i.always_blink = 1,
            }
        }
        if get(given, "led-trigger-id").is_none() {
            return Err(bad("LED: option \"--led-trigger-id\" must be specified"));
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let (i, id) = fields(info)?;
        let _ = write!(out, " --led-trigger-id \"{id}\"");
        // `%d` of the unsigned delay: all ones (`inf`) is -1.
        if i.delay != 0 {
            let _ = write!(out, " --led-delay {}", i.delay as i32);
        }
        if i.always_blink != 0 {
            out.push_str(" --led-always-blink");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let (i, id) = fields(info)?;
        let _ = write!(out, " led-trigger-id:\"{id}\"");
        if i.delay == u32::MAX {
            out.push_str(" led-delay:inf");
        } else {
            let _ = write!(out, " led-delay:{}ms", i.delay as i32);
        }
        if i.always_blink != 0 {
            out.push_str(" led-always-blink");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = Info::decode(info).ok()?;
        i.id = i.id.canonical_text();
        Some(i.encode())
    }
}

/// The payload and its id without the prefix, escaped as iptables prints it; `None` when
/// the id lacks the prefix or holds what would not read back (control bytes).
fn fields(info: &[u8]) -> Option<(Info, String)> {
    let i = Info::decode(info).ok()?;
    let text = i.id.text();
    let id = text.strip_prefix(LED_ID_PREFIX)?;
    if id.chars().any(|c| c.is_control() || c == '\u{fffd}') {
        return None;
    }
    let mut out = String::new();
    for c in id.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    Some((i, out))
}
