//! `-j CHECKSUM` rev 0.

use super::*;
use crate::xt::checksum::{CHECKSUM_OP_FILL, ChecksumTarget as Info};

pub(crate) struct Checksum;

impl Ext for Checksum {
    fn name(&self) -> &'static str {
        "CHECKSUM"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("checksum-fill", Arg::None, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "CHECKSUM")?;
        if given.is_empty() {
            return Err(bad(
                "CHECKSUM: option \"--checksum-fill\" must be specified",
            ));
        }
        Ok(Info {
            operation: CHECKSUM_OP_FILL,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.operation & !CHECKSUM_OP_FILL != 0 {
            return None;
        }
        if i.operation & CHECKSUM_OP_FILL != 0 {
            out.push_str(" --checksum-fill");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        out.push_str(" CHECKSUM");
        if i.operation & CHECKSUM_OP_FILL != 0 {
            out.push_str(" fill");
        }
        Some(())
    }
    canonical_via!(Info);
}
