//! `-j CONNSECMARK --save|--restore` (revision 0) and `-j SECMARK --selctx CONTEXT`
//! (revision 1), both families, through nft_compat in iptables-nft.
//!
//! SECMARK's context is mapped to a security id by the kernel's LSM when the rule is
//! checked: without one (or with a context it does not know) the kernel refuses the rule
//! with ENOENT ("unable to map security context" in its log), and so iptables and xtnl
//! both fail on it, iptables-nft with `RULE_APPEND failed (No such file or directory)`,
//! iptables-legacy with `No chain/target/match by that name.`. CONNSECMARK is valid in
//! tables mangle and security only; the kernel refuses it elsewhere (EINVAL).

use super::*;
use crate::xt::connsecmark::{CONNSECMARK_RESTORE, CONNSECMARK_SAVE, ConnsecmarkTarget};
use crate::xt::layout::Raw;
use crate::xt::secmark::{SECMARK_MODE_SEL, SECMARK_SECCTX_MAX, SecmarkTarget};

pub(crate) struct Connsecmark;

impl Ext for Connsecmark {
    fn name(&self) -> &'static str {
        "CONNSECMARK"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("save", Arg::None, false),
            opt("restore", Arg::None, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "CONNSECMARK")?;
        let save = get(given, "save").is_some();
        let restore = get(given, "restore").is_some();
        let mode = match (save, restore) {
            (true, true) => {
                return Err(bad(
                    "CONNSECMARK: option \"--save\" cannot be used together with \"--restore\".\n",
                ));
            }
            (true, false) => CONNSECMARK_SAVE,
            (false, true) => CONNSECMARK_RESTORE,
            (false, false) => return Err(bad("CONNSECMARK target: parameter required")),
        };
        Ok(ConnsecmarkTarget { mode }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        out.push_str(connsecmark_mode(info)?);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let m = connsecmark_mode(info)?;
        let _ = write!(out, " CONNSECMARK {}", &m[3..]);
        Some(())
    }
    canonical_via!(ConnsecmarkTarget);
}

/// ` --save`/` --restore`; iptables exits on any other mode.
fn connsecmark_mode(info: &[u8]) -> Option<&'static str> {
    match ConnsecmarkTarget::decode(info).ok()?.mode {
        CONNSECMARK_SAVE => Some(" --save"),
        CONNSECMARK_RESTORE => Some(" --restore"),
        _ => None,
    }
}

pub(crate) struct Secmark;

impl Ext for Secmark {
    fn name(&self) -> &'static str {
        "SECMARK"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("selctx", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "SECMARK")?;
        let g = get(given, "selctx")
            .ok_or_else(|| bad("SECMARK: option \"--selctx\" must be specified"))?;
        // iptables cuts a longer context to 255 bytes; xtnl refuses it.
        if g.arg().len() >= SECMARK_SECCTX_MAX {
            return Err(bad(format!(
                "SECMARK: argument for \"--selctx\" is too long (max {} characters)",
                SECMARK_SECCTX_MAX - 1
            )));
        }
        Ok(SecmarkTarget {
            mode: SECMARK_MODE_SEL,
            secctx: Raw::from_str(g.arg(), "selctx").map_err(wire)?,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let _ = write!(out, " --selctx {}", secctx(info)?);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let _ = write!(out, " SECMARK selctx {}", secctx(info)?);
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = SecmarkTarget::decode(info).ok()?;
        i.secctx = i.secctx.canonical_text();
        Some(i.encode())
    }
}

/// The context, printed as it is by iptables (`%s`); one that would not read back as one
/// word (empty, spaces, quotes, control bytes) is not iptables syntax.
fn secctx(info: &[u8]) -> Option<String> {
    let i = SecmarkTarget::decode(info).ok()?;
    if i.mode != SECMARK_MODE_SEL {
        return None;
    }
    word(i.secctx.text())
}

/// A string iptables prints bare (`%s`), if it reads back as the same single word.
pub(super) fn word(s: String) -> Option<String> {
    let ok = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && !b"\"'\\".contains(&b));
    ok.then_some(s)
}
