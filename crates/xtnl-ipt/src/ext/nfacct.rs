//! `-m nfacct --nfacct-name NAME` (revision 1, both families; revision 0, the same layout
//! on 64-bit machines, is read too), through nft_compat in iptables-nft.
//!
//! The accounting object must exist in the namespace (`nfacct add NAME`): the kernel
//! refuses a rule naming one that does not with ENOENT ("accounting object `NAME' does not
//! exist" in its log), which iptables-nft reports as `RULE_APPEND failed (No such file or
//! directory)` and iptables-legacy as `No chain/target/match by that name.`; xtnl passes
//! the kernel's refusal on the same way. iptables cuts a name over 31 bytes; xtnl refuses it.

use super::*;
use crate::ipt::print::save_string;
use crate::xt::layout::Raw;
use crate::xt::nfacct::{NFACCT_NAME_MAX, NfacctMatch as Info};

pub(crate) struct Nfacct;

impl Ext for Nfacct {
    fn name(&self) -> &'static str {
        "nfacct"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn reads(&self, rev: u32) -> bool {
        rev <= 1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("nfacct-name", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "nfacct")?;
        let g = get(given, "nfacct-name")
            .ok_or_else(|| bad("nfacct: option \"--nfacct-name\" must be specified"))?;
        let name = g.arg();
        if name.is_empty() {
            return Err(bad("Argument must have a minimum length of 1 characters"));
        }
        if name.len() >= NFACCT_NAME_MAX {
            return Err(bad(format!(
                "nfacct: argument for \"--nfacct-name\" is too long (max {} characters)",
                NFACCT_NAME_MAX - 1
            )));
        }
        if name.contains('\n') {
            return Err(bad("Newlines not allowed in --nfacct-name"));
        }
        Ok(Info {
            name: Raw::from_str(name, "nfacct-name").map_err(wire)?,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        // iptables prints `--nfacct-name ` and then the quoted string with its own leading
        // space: two spaces, as its .t file notes.
        out.push_str(" --nfacct-name ");
        save_string(out, &name(info)?);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        out.push_str(" nfacct-name ");
        save_string(out, &name(info)?);
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = Info::decode(info).ok()?;
        i.name = i.name.canonical_text();
        Some(i.encode())
    }
}

/// The name, if the parser would take it back (not empty, no newline).
fn name(info: &[u8]) -> Option<String> {
    let n = Info::decode(info).ok()?.name.text();
    (!n.is_empty() && !n.contains('\n') && !n.contains('\u{fffd}')).then_some(n)
}
