//! `struct xt_state_info { unsigned int statemask; }`: `-m state` as iptables before 1.8
//! wrote it, and as legacy rulesets may still hold it. Its bit for UNTRACKED differs from
//! conntrack's ([`super::CtStates`]).

use super::{Out, sized};
use xtnl_wire::WireError;

const SIZE: usize = 4;
const WHAT: &str = "xt_state_info";

/// `-m state --state ...` (revision 0): the state bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StateInfo {
    /// `XT_STATE_*` bits; unknown ones are kept.
    pub mask: u32,
}

impl StateInfo {
    /// `XT_STATE_INVALID`.
    pub const INVALID: u32 = 1 << 0;
    /// `XT_STATE_BIT(IP_CT_ESTABLISHED)`.
    pub const ESTABLISHED: u32 = 1 << 1;
    /// `XT_STATE_BIT(IP_CT_RELATED)`.
    pub const RELATED: u32 = 1 << 2;
    /// `XT_STATE_BIT(IP_CT_NEW)`.
    pub const NEW: u32 = 1 << 3;
    /// `XT_STATE_UNTRACKED`: `1 << (IP_CT_NUMBER + 1)`.
    pub const UNTRACKED: u32 = 1 << 6;

    /// The state names in the order iptables prints them, then any unknown bits in hex.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = self.mask;
        for (bit, name) in [
            (Self::INVALID, "INVALID"),
            (Self::NEW, "NEW"),
            (Self::RELATED, "RELATED"),
            (Self::ESTABLISHED, "ESTABLISHED"),
            (Self::UNTRACKED, "UNTRACKED"),
        ] {
            if rest & bit != 0 {
                out.push(name.to_owned());
                rest &= !bit;
            }
        }
        if rest != 0 {
            out.push(format!("0x{rest:x}"));
        }
        out
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(SIZE).u32_ne(0, self.mask).done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<StateInfo, WireError> {
        let f = sized(info, SIZE, WHAT)?;
        Ok(StateInfo { mask: f.u32_ne(0)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_names() {
        let s = StateInfo {
            mask: StateInfo::NEW | StateInfo::ESTABLISHED,
        };
        let b = s.encode();
        assert_eq!(b.len(), 8);
        assert_eq!(&b[..4], &10u32.to_ne_bytes());
        assert_eq!(StateInfo::decode(&b).unwrap(), s);
        assert_eq!(s.names(), ["NEW", "ESTABLISHED"]);
        let odd = StateInfo { mask: 0x41 | 0x100 };
        assert_eq!(odd.names(), ["INVALID", "UNTRACKED", "0x100"]);
        assert_eq!(StateInfo::decode(&odd.encode()).unwrap(), odd);
    }
}
