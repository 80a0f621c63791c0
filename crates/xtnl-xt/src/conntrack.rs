//! `struct xt_conntrack_mtinfo3`: `-m conntrack`, and since iptables 1.8 also `-m state`
//! (flagged `XT_CONNTRACK_STATE_ALIAS` so that `iptables -S` prints it back as `-m state`).
//! The state part is typed; every other field is kept as a plain value so that any payload
//! re-encodes byte for byte. Ports here are in host byte order (revisions 1 and 2 had them
//! big endian).

use std::fmt;

use super::{Out, sized};
use xtnl_wire::WireError;

/// `XT_CONNTRACK_*`: bits of `match_flags` (what is checked) and `invert_flags` (`!`).
pub mod ct_flags {
    /// `XT_CONNTRACK_STATE`: `--ctstate` is tested.
    pub const STATE: u16 = 1 << 0;
    /// `XT_CONNTRACK_PROTO`: `--ctproto` is tested.
    pub const PROTO: u16 = 1 << 1;
    /// `XT_CONNTRACK_ORIGSRC`: `--ctorigsrc` is tested.
    pub const ORIGSRC: u16 = 1 << 2;
    /// `XT_CONNTRACK_ORIGDST`: `--ctorigdst` is tested.
    pub const ORIGDST: u16 = 1 << 3;
    /// `XT_CONNTRACK_REPLSRC`: `--ctreplsrc` is tested.
    pub const REPLSRC: u16 = 1 << 4;
    /// `XT_CONNTRACK_REPLDST`: `--ctrepldst` is tested.
    pub const REPLDST: u16 = 1 << 5;
    /// `XT_CONNTRACK_STATUS`: `--ctstatus` is tested.
    pub const STATUS: u16 = 1 << 6;
    /// `XT_CONNTRACK_EXPIRES`: `--ctexpire` is tested.
    pub const EXPIRES: u16 = 1 << 7;
    /// `XT_CONNTRACK_ORIGSRC_PORT`: `--ctorigsrcport` is tested.
    pub const ORIGSRC_PORT: u16 = 1 << 8;
    /// `XT_CONNTRACK_ORIGDST_PORT`: `--ctorigdstport` is tested.
    pub const ORIGDST_PORT: u16 = 1 << 9;
    /// `XT_CONNTRACK_REPLSRC_PORT`: `--ctreplsrcport` is tested.
    pub const REPLSRC_PORT: u16 = 1 << 10;
    /// `XT_CONNTRACK_REPLDST_PORT`: `--ctrepldstport` is tested.
    pub const REPLDST_PORT: u16 = 1 << 11;
    /// `XT_CONNTRACK_DIRECTION`: `--ctdir` is tested.
    pub const DIRECTION: u16 = 1 << 12;
    /// Not checked by the kernel: tells iptables to print the match as `-m state`.
    pub const STATE_ALIAS: u16 = 1 << 13;
}

pub(super) mod field {
    pub const ORIGSRC_ADDR: usize = 0;
    pub const ORIGSRC_MASK: usize = 16;
    pub const ORIGDST_ADDR: usize = 32;
    pub const ORIGDST_MASK: usize = 48;
    pub const REPLSRC_ADDR: usize = 64;
    pub const REPLSRC_MASK: usize = 80;
    pub const REPLDST_ADDR: usize = 96;
    pub const REPLDST_MASK: usize = 112;
    pub const EXPIRES_MIN: usize = 128;
    pub const EXPIRES_MAX: usize = 132;
    pub const L4PROTO: usize = 136;
    pub const ORIGSRC_PORT: usize = 138;
    pub const ORIGDST_PORT: usize = 140;
    pub const REPLSRC_PORT: usize = 142;
    pub const REPLDST_PORT: usize = 144;
    pub const MATCH_FLAGS: usize = 146;
    pub const INVERT_FLAGS: usize = 148;
    pub const STATE_MASK: usize = 150;
    pub const STATUS_MASK: usize = 152;
    pub const ORIGSRC_PORT_HIGH: usize = 154;
    pub const ORIGDST_PORT_HIGH: usize = 156;
    pub const REPLSRC_PORT_HIGH: usize = 158;
    pub const REPLDST_PORT_HIGH: usize = 160;
    /// 162 bytes of fields, rounded up to the struct's 4-byte alignment.
    pub const SIZE: usize = 164;
}

const WHAT: &str = "xt_conntrack_mtinfo3";

/// `state_mask` of conntrack: `XT_CONNTRACK_STATE_BIT(ctinfo)` and the three extra states.
/// Unknown bits are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CtStates(pub u16);

impl CtStates {
    /// `XT_CONNTRACK_STATE_INVALID`: `INVALID`.
    pub const INVALID: CtStates = CtStates(1 << 0);
    /// `1 << (IP_CT_ESTABLISHED + 1)`.
    pub const ESTABLISHED: CtStates = CtStates(1 << 1);
    /// `1 << (IP_CT_RELATED + 1)`: `RELATED`.
    pub const RELATED: CtStates = CtStates(1 << 2);
    /// `1 << (IP_CT_NEW + 1)`: `NEW`.
    pub const NEW: CtStates = CtStates(1 << 3);
    /// `1 << (IP_CT_NUMBER + 1)`.
    pub const SNAT: CtStates = CtStates(1 << 6);
    /// `1 << (IP_CT_NUMBER + 2)`: `DNAT` (the connection's destination was translated).
    pub const DNAT: CtStates = CtStates(1 << 7);
    /// `1 << (IP_CT_NUMBER + 3)`; `-m state --state UNTRACKED` uses this bit too once
    /// iptables writes it as conntrack (xt_state's own bit is 1 << 6).
    pub const UNTRACKED: CtStates = CtStates(1 << 8);

    const NAMED: [(CtStates, &'static str); 7] = [
        (Self::INVALID, "INVALID"),
        (Self::NEW, "NEW"),
        (Self::RELATED, "RELATED"),
        (Self::ESTABLISHED, "ESTABLISHED"),
        (Self::UNTRACKED, "UNTRACKED"),
        (Self::SNAT, "SNAT"),
        (Self::DNAT, "DNAT"),
    ];

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: CtStates) -> bool {
        self.0 & other.0 == other.0
    }

    /// Parses iptables' `NEW,ESTABLISHED`.
    pub fn from_names(list: &str) -> Result<CtStates, WireError> {
        let mut s = CtStates(0);
        for name in list.split(',') {
            let (bit, _) = Self::NAMED
                .iter()
                .find(|(_, n)| n.eq_ignore_ascii_case(name))
                .ok_or_else(|| WireError::bad_value(format!("unknown conntrack state {name:?}")))?;
            s = s | *bit;
        }
        Ok(s)
    }
}

impl std::ops::BitOr for CtStates {
    type Output = CtStates;
    fn bitor(self, rhs: CtStates) -> CtStates {
        CtStates(self.0 | rhs.0)
    }
}

/// In iptables' order (`INVALID,NEW,RELATED,ESTABLISHED,UNTRACKED,SNAT,DNAT`), unknown bits
/// last in hex.
impl fmt::Display for CtStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            let r = if first { Ok(()) } else { f.write_str(",") };
            first = false;
            r
        };
        for (bit, name) in Self::NAMED {
            if rest & bit.0 != 0 {
                sep(f)?;
                f.write_str(name)?;
                rest &= !bit.0;
            }
        }
        if rest != 0 {
            sep(f)?;
            write!(f, "0x{rest:x}")?;
        }
        Ok(())
    }
}

/// `struct xt_conntrack_mtinfo3`, field by field. Addresses are `union nf_inet_addr` bytes
/// (an IPv4 address in the first four).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConntrackV3 {
    /// `--ctorigsrc` address (16 bytes).
    pub origsrc_addr: [u8; 16],
    /// `--ctorigsrc` mask.
    pub origsrc_mask: [u8; 16],
    /// `--ctorigdst` address.
    pub origdst_addr: [u8; 16],
    /// `--ctorigdst` mask.
    pub origdst_mask: [u8; 16],
    /// `--ctreplsrc` address.
    pub replsrc_addr: [u8; 16],
    /// `--ctreplsrc` mask.
    pub replsrc_mask: [u8; 16],
    /// `--ctrepldst` address.
    pub repldst_addr: [u8; 16],
    /// `--ctrepldst` mask.
    pub repldst_mask: [u8; 16],
    /// `--ctexpire` low bound, in seconds.
    pub expires_min: u32,
    /// `--ctexpire` high bound, in seconds.
    pub expires_max: u32,
    /// `--ctproto`: the layer-4 protocol number.
    pub l4proto: u16,
    /// `--ctorigsrcport` low bound (host order).
    pub origsrc_port: u16,
    /// `--ctorigdstport` low bound.
    pub origdst_port: u16,
    /// `--ctreplsrcport` low bound.
    pub replsrc_port: u16,
    /// `--ctrepldstport` low bound.
    pub repldst_port: u16,
    /// [`ct_flags`]; unknown bits are kept.
    pub match_flags: u16,
    /// [`ct_flags`] of the tests that are negated (`!`).
    pub invert_flags: u16,
    /// `--ctstate`: the states of [`CtStates`].
    pub state_mask: CtStates,
    /// `IPS_*` status bits (`--ctstatus`).
    pub status_mask: u16,
    /// `--ctorigsrcport` high bound.
    pub origsrc_port_high: u16,
    /// `--ctorigdstport` high bound.
    pub origdst_port_high: u16,
    /// `--ctreplsrcport` high bound.
    pub replsrc_port_high: u16,
    /// `--ctrepldstport` high bound.
    pub repldst_port_high: u16,
}

impl ConntrackV3 {
    /// `-m conntrack [!] --ctstate ...`, as iptables-nft 1.8.9 writes it.
    pub fn ctstate(states: CtStates, negated: bool) -> ConntrackV3 {
        ConntrackV3 {
            match_flags: ct_flags::STATE,
            invert_flags: if negated { ct_flags::STATE } else { 0 },
            state_mask: states,
            ..Default::default()
        }
    }

    /// `-m state [!] --state ...`, as iptables-nft 1.8.9 writes it: conntrack with the alias
    /// flag, which only changes how iptables prints it.
    pub fn state(states: CtStates, negated: bool) -> ConntrackV3 {
        ConntrackV3 {
            match_flags: ct_flags::STATE | ct_flags::STATE_ALIAS,
            ..Self::ctstate(states, negated)
        }
    }

    /// The state check, if this match makes one: the states and whether it is negated.
    pub fn states(&self) -> Option<(CtStates, bool)> {
        (self.match_flags & ct_flags::STATE != 0)
            .then_some((self.state_mask, self.invert_flags & ct_flags::STATE != 0))
    }

    /// Whether iptables prints this as `-m state`.
    pub fn is_state_alias(&self) -> bool {
        self.match_flags & ct_flags::STATE_ALIAS != 0
    }

    fn addrs(&self) -> [(usize, &[u8; 16]); 8] {
        use field::*;
        [
            (ORIGSRC_ADDR, &self.origsrc_addr),
            (ORIGSRC_MASK, &self.origsrc_mask),
            (ORIGDST_ADDR, &self.origdst_addr),
            (ORIGDST_MASK, &self.origdst_mask),
            (REPLSRC_ADDR, &self.replsrc_addr),
            (REPLSRC_MASK, &self.replsrc_mask),
            (REPLDST_ADDR, &self.repldst_addr),
            (REPLDST_MASK, &self.repldst_mask),
        ]
    }

    fn u16s(&self) -> [(usize, u16); 13] {
        use field::*;
        [
            (L4PROTO, self.l4proto),
            (ORIGSRC_PORT, self.origsrc_port),
            (ORIGDST_PORT, self.origdst_port),
            (REPLSRC_PORT, self.replsrc_port),
            (REPLDST_PORT, self.repldst_port),
            (MATCH_FLAGS, self.match_flags),
            (INVERT_FLAGS, self.invert_flags),
            (STATE_MASK, self.state_mask.0),
            (STATUS_MASK, self.status_mask),
            (ORIGSRC_PORT_HIGH, self.origsrc_port_high),
            (ORIGDST_PORT_HIGH, self.origdst_port_high),
            (REPLSRC_PORT_HIGH, self.replsrc_port_high),
            (REPLDST_PORT_HIGH, self.repldst_port_high),
        ]
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(field::SIZE);
        for (at, a) in self.addrs() {
            o.put(at, a);
        }
        o.u32_ne(field::EXPIRES_MIN, self.expires_min)
            .u32_ne(field::EXPIRES_MAX, self.expires_max);
        for (at, v) in self.u16s() {
            o.u16_ne(at, v);
        }
        o.done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<ConntrackV3, WireError> {
        use field::*;
        let f = sized(info, SIZE, WHAT)?;
        Ok(ConntrackV3 {
            origsrc_addr: f.bytes(ORIGSRC_ADDR)?,
            origsrc_mask: f.bytes(ORIGSRC_MASK)?,
            origdst_addr: f.bytes(ORIGDST_ADDR)?,
            origdst_mask: f.bytes(ORIGDST_MASK)?,
            replsrc_addr: f.bytes(REPLSRC_ADDR)?,
            replsrc_mask: f.bytes(REPLSRC_MASK)?,
            repldst_addr: f.bytes(REPLDST_ADDR)?,
            repldst_mask: f.bytes(REPLDST_MASK)?,
            expires_min: f.u32_ne(EXPIRES_MIN)?,
            expires_max: f.u32_ne(EXPIRES_MAX)?,
            l4proto: f.u16_ne(L4PROTO)?,
            origsrc_port: f.u16_ne(ORIGSRC_PORT)?,
            origdst_port: f.u16_ne(ORIGDST_PORT)?,
            replsrc_port: f.u16_ne(REPLSRC_PORT)?,
            repldst_port: f.u16_ne(REPLDST_PORT)?,
            match_flags: f.u16_ne(MATCH_FLAGS)?,
            invert_flags: f.u16_ne(INVERT_FLAGS)?,
            state_mask: CtStates(f.u16_ne(STATE_MASK)?),
            status_mask: f.u16_ne(STATUS_MASK)?,
            origsrc_port_high: f.u16_ne(ORIGSRC_PORT_HIGH)?,
            origdst_port_high: f.u16_ne(ORIGDST_PORT_HIGH)?,
            replsrc_port_high: f.u16_ne(REPLSRC_PORT_HIGH)?,
            repldst_port_high: f.u16_ne(REPLDST_PORT_HIGH)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_bits_follow_the_headers() {
        const IP_CT_ESTABLISHED: u16 = 0;
        const IP_CT_RELATED: u16 = 1;
        const IP_CT_NEW: u16 = 2;
        const IP_CT_NUMBER: u16 = 5;
        let bit = |ctinfo: u16| 1u16 << (ctinfo + 1);
        assert_eq!(CtStates::ESTABLISHED.0, bit(IP_CT_ESTABLISHED));
        assert_eq!(CtStates::RELATED.0, bit(IP_CT_RELATED));
        assert_eq!(CtStates::NEW.0, bit(IP_CT_NEW));
        assert_eq!(CtStates::SNAT.0, 1 << (IP_CT_NUMBER + 1));
        assert_eq!(CtStates::DNAT.0, 1 << (IP_CT_NUMBER + 2));
        assert_eq!(CtStates::UNTRACKED.0, 1 << (IP_CT_NUMBER + 3));
    }

    /// `-m state --state NEW,ESTABLISHED` as iptables-nft 1.8.9 wrote it.
    #[test]
    fn state_alias_matches_captured_bytes() {
        let m = ConntrackV3::state(CtStates::NEW | CtStates::ESTABLISHED, false);
        let b = m.encode();
        assert_eq!(b.len(), 168);
        let mut want = vec![0u8; 168];
        want[146..148].copy_from_slice(&0x2001u16.to_ne_bytes());
        want[150..152].copy_from_slice(&0x000au16.to_ne_bytes());
        assert_eq!(b, want);
        let back = ConntrackV3::decode(&b).unwrap();
        assert_eq!(back, m);
        assert!(back.is_state_alias());
        assert_eq!(back.states(), Some((CtStates(0x0a), false)));
        assert_eq!(back.state_mask.to_string(), "NEW,ESTABLISHED");
    }

    #[test]
    fn every_field_survives_a_round_trip() {
        let mut m = ConntrackV3::ctstate(CtStates::INVALID, true);
        m.origdst_addr[..4].copy_from_slice(&[192, 0, 2, 0]);
        m.origdst_mask[..3].copy_from_slice(&[255; 3]);
        m.repldst_mask = [0xff; 16];
        m.expires_min = 10;
        m.expires_max = 0xdead_beef;
        m.l4proto = 6;
        m.origdst_port = 80;
        m.origdst_port_high = 90;
        m.repldst_port_high = 7;
        m.match_flags = 0xffff;
        m.invert_flags = 0x8000;
        m.status_mask = 4;
        let b = m.encode();
        assert_eq!(ConntrackV3::decode(&b).unwrap(), m);
        assert_eq!(&b[140..142], &80u16.to_ne_bytes());
        assert_eq!(&b[156..158], &90u16.to_ne_bytes());
        assert_eq!(&b[160..162], &7u16.to_ne_bytes());
        assert_eq!(&b[162..], &[0; 6]);
    }

    #[test]
    fn state_names_parse_and_print() {
        let s = CtStates::from_names("RELATED,ESTABLISHED").unwrap();
        assert_eq!(s, CtStates(6));
        assert_eq!(s.to_string(), "RELATED,ESTABLISHED");
        assert!(CtStates::from_names("BOGUS").is_err());
        assert_eq!(
            CtStates(0x1c0 | 0x200).to_string(),
            "UNTRACKED,SNAT,DNAT,0x200"
        );
        assert_eq!(CtStates(0).to_string(), "");
    }
}
