//! x_tables extension payloads: the C structs that `-m comment`, `-m multiport`, `-j DNAT`, ...
//! hand to the kernel. iptables-nft carries them inside nft_compat `match`/`target`
//! expressions ([`xtnl_wire::expr::Match`], [`xtnl_wire::expr::Target`]); iptables-legacy
//! carries the very same bytes inside its `ipt_entry` blobs. One module serves both.
//!
//! Every struct has a typed form with `encode` (exactly the kernel's bytes, padded to
//! [`XT_ALIGN`], zeros wherever iptables leaves zeros) and `decode` (checks the size, refuses
//! values the kernel would refuse or that a re-encode could not reproduce, never panics).
//! Bytes the kernel never reads (struct padding, the rest of a string after its NUL, the
//! unused slots of a fixed array) are not kept: `encode` writes zeros there, as iptables does.
//! Unknown flag bits are kept.
//!
//! [`XtMatch`] and [`XtTarget`] dispatch on (name, revision); an extension or revision that
//! is not modelled is kept as `Other` with its bytes.
//!
//! This crate sits on `xtnl-wire` (the nft_compat expressions) and `xtnl-core` (the address
//! family a target's payload depends on); the library re-exports it as `xtnl::xt`, and the
//! iptables words of each extension live above, in the library's `ipt::ext`.
//!
//! ```
//! use xtnl_xt::{Comment, XT_ALIGN, XtMatch};
//!
//! // `-m comment --comment "web"`: struct xt_comment_info, 256 bytes of text (NUL-padded).
//! let m = XtMatch::Comment(Comment::new("web")?);
//! let info = m.encode();
//! assert_eq!(info.len(), 256);
//! assert_eq!(info.len() % XT_ALIGN, 0);
//! assert_eq!(&info[..4], b"web\0");
//! assert_eq!(XtMatch::decode("comment", 0, &info)?, m);
//!
//! // A payload of the wrong size is refused, not read past its end.
//! assert!(XtMatch::decode("comment", 0, &info[..100]).is_err());
//! # Ok::<(), xtnl_wire::WireError>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod abi;
mod comment;
mod conntrack;
mod log;
mod multiport;
mod nat;
mod nat_compat;
mod reject;
mod state;
mod tcp;
mod udp;

// Payloads declared with [`layout::xt_struct!`], one file per extension, used by the
// extension registry (the library's `xtnl::ipt::ext`).
pub mod addrtype;
pub mod bpf;
pub mod checksum;
pub mod cluster;
pub mod connlabel;
pub mod connlimit;
pub mod connmark;
pub mod connsecmark;
pub mod ct;
pub mod dccp;
pub mod ecn;
pub mod hashlimit;
pub mod hmark;
pub mod icmp;
pub mod idletimer;
pub mod ip6hdr;
pub mod ipcomp;
pub mod iprange;
pub mod ipv6header;
pub mod ipvs;
pub mod layout;
pub mod led;
pub mod length;
pub mod limit;
pub mod mac;
pub mod mark;
pub mod nfacct;
pub mod nflog;
pub mod nfqueue;
pub mod npt;
pub mod osf;
pub mod owner;
pub mod physdev;
pub mod pkttype;
pub mod policy;
pub mod rateest;
pub mod recent;
pub mod rt;
pub mod sctp;
pub mod secmark;
pub mod set;
pub mod small;
pub mod srh;
pub mod statistic;
pub mod string;
pub mod synproxy;
pub mod tcpmss;
pub mod tcpoptstrip;
pub mod time;
pub mod tproxy;
pub mod u32_match;

use xtnl_core::model::Family;
use xtnl_wire::WireError;
use xtnl_wire::expr::{Match, Target};

pub use comment::Comment;
pub use conntrack::{ConntrackV3, CtStates, ct_flags};
pub use log::{Log, log_flags};
pub use multiport::{Multiport, MultiportDir, PortSpec};
pub use nat::{NatInfo, NatRange, NatRange2, NatRev0};
pub use nat_compat::{NatIpv4MultiRange, nat_flags};
pub use reject::{Reject, RejectV4, RejectV6};
pub use state::StateInfo;
pub use tcp::Tcp;
pub use udp::Udp;

/// `XT_ALIGN`: the alignment of `struct _xt_align` (u8, u16, u32, u64), to which every
/// extension payload is padded. 8 wherever a u64 is 8-aligned; 4 on i386.
pub const XT_ALIGN: usize = if cfg!(target_arch = "x86") { 4 } else { 8 };

/// `XT_ALIGN(size)`.
pub const fn xt_align(size: usize) -> usize {
    (size + XT_ALIGN - 1) & !(XT_ALIGN - 1)
}

/// Checks that a payload has exactly the padded size of the struct (nft_compat and the
/// legacy ABI both refuse any other size), and returns it for field reads.
fn sized<'a>(info: &'a [u8], size: usize, what: &'static str) -> Result<Fields<'a>, WireError> {
    let want = xt_align(size);
    if info.len() < want {
        return Err(WireError::truncated(want, info.len()).within(what));
    }
    if info.len() > want {
        return Err(WireError::bad_value(format!(
            "{} bytes, but XT_ALIGN(sizeof) is {want}",
            info.len()
        ))
        .within(what));
    }
    Ok(Fields { b: info, what })
}

/// Field reads of a payload whose size [`sized`] checked; a read out of bounds would be a bug
/// in a layout here, and is reported as an error rather than a panic all the same.
struct Fields<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Fields<'a> {
    fn bytes<const N: usize>(&self, at: usize) -> Result<[u8; N], WireError> {
        self.b
            .get(at..at + N)
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or_else(|| WireError::truncated(at + N, self.b.len()).within(self.what))
    }
    fn slice(&self, at: usize, len: usize) -> Result<&'a [u8], WireError> {
        self.b
            .get(at..at + len)
            .ok_or_else(|| WireError::truncated(at + len, self.b.len()).within(self.what))
    }
    fn u8(&self, at: usize) -> Result<u8, WireError> {
        Ok(self.bytes::<1>(at)?[0])
    }
    fn u16_ne(&self, at: usize) -> Result<u16, WireError> {
        self.bytes(at).map(u16::from_ne_bytes)
    }
    fn u16_be(&self, at: usize) -> Result<u16, WireError> {
        self.bytes(at).map(u16::from_be_bytes)
    }
    fn u32_ne(&self, at: usize) -> Result<u32, WireError> {
        self.bytes(at).map(u32::from_ne_bytes)
    }
    fn bad(&self, detail: impl Into<String>) -> WireError {
        WireError::bad_value(detail).within(self.what)
    }
}

/// Builds a payload: a zeroed buffer of the padded size, fields written at their offsets.
struct Out {
    b: Vec<u8>,
}

impl Out {
    fn new(size: usize) -> Self {
        Out {
            b: vec![0; xt_align(size)],
        }
    }
    fn put(&mut self, at: usize, v: &[u8]) -> &mut Self {
        // Offsets are constants of the layouts below, all within the buffer.
        if let Some(dst) = self.b.get_mut(at..at + v.len()) {
            dst.copy_from_slice(v);
        }
        self
    }
    fn u8(&mut self, at: usize, v: u8) -> &mut Self {
        self.put(at, &[v])
    }
    fn u16_ne(&mut self, at: usize, v: u16) -> &mut Self {
        self.put(at, &v.to_ne_bytes())
    }
    fn u16_be(&mut self, at: usize, v: u16) -> &mut Self {
        self.put(at, &v.to_be_bytes())
    }
    fn u32_ne(&mut self, at: usize, v: u32) -> &mut Self {
        self.put(at, &v.to_ne_bytes())
    }
    fn done(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.b)
    }
}

/// A C string in a fixed `char[N]`: the bytes up to the first NUL, which must exist (the
/// kernel prints these with `%s`) and must be UTF-8 for a `String`.
fn c_string(raw: &[u8], f: &Fields<'_>) -> Result<String, WireError> {
    let nul = raw
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| f.bad("string is not NUL-terminated"))?;
    String::from_utf8(raw[..nul].to_vec()).map_err(|_| f.bad("string is not UTF-8"))
}

/// Checks a string for a `char[cap]` field: room for the NUL, and no NUL inside.
fn check_c_string(s: &str, cap: usize, what: &'static str) -> Result<(), WireError> {
    if s.len() >= cap {
        return Err(
            WireError::bad_value(format!("{} bytes, at most {} fit", s.len(), cap - 1))
                .within(what),
        );
    }
    if s.as_bytes().contains(&0) {
        return Err(WireError::bad_value("contains a NUL byte").within(what));
    }
    Ok(())
}

/// Whether decoding needs the family, and which one it is.
fn ipv6_of(family: Family, what: &'static str) -> Result<bool, WireError> {
    match family {
        Family::Ipv4 => Ok(false),
        Family::Ipv6 => Ok(true),
        Family::Inet => Err(WireError::bad_value(
            "the payload's layout depends on IPv4/IPv6, and family inet says neither",
        )
        .within(what)),
    }
}

/// An xt match payload, typed when xtnl models the (name, revision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XtMatch {
    /// `comment` rev 0.
    Comment(Comment),
    /// `multiport` rev 1.
    Multiport(Multiport),
    /// `conntrack` rev 3; iptables 1.8.9 writes `-m state` as this too.
    Conntrack(ConntrackV3),
    /// `state` rev 0.
    State(StateInfo),
    /// `tcp` rev 0.
    Tcp(Tcp),
    /// `udp` rev 0.
    Udp(Udp),
    /// Any other match, or a revision xtnl does not model: its payload kept byte for byte.
    Other {
        /// The extension's name.
        name: String,
        /// Its revision.
        rev: u32,
        /// Its payload, as the kernel stores it.
        info: Vec<u8>,
    },
}

impl XtMatch {
    /// The extension name the kernel looks up.
    pub fn name(&self) -> &str {
        match self {
            XtMatch::Comment(_) => "comment",
            XtMatch::Multiport(_) => "multiport",
            XtMatch::Conntrack(_) => "conntrack",
            XtMatch::State(_) => "state",
            XtMatch::Tcp(_) => "tcp",
            XtMatch::Udp(_) => "udp",
            XtMatch::Other { name, .. } => name,
        }
    }

    /// The revision of the payload's layout (what `NFTA_MATCH_REV` carries).
    pub fn revision(&self) -> u32 {
        match self {
            XtMatch::Multiport(_) => 1,
            XtMatch::Conntrack(_) => 3,
            XtMatch::Comment(_) | XtMatch::State(_) | XtMatch::Tcp(_) | XtMatch::Udp(_) => 0,
            XtMatch::Other { rev, .. } => *rev,
        }
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            XtMatch::Comment(m) => m.encode(),
            XtMatch::Multiport(m) => m.encode(),
            XtMatch::Conntrack(m) => m.encode(),
            XtMatch::State(m) => m.encode(),
            XtMatch::Tcp(m) => m.encode(),
            XtMatch::Udp(m) => m.encode(),
            XtMatch::Other { info, .. } => info.clone(),
        }
    }

    /// Types the payload of a known (name, revision); anything else is kept as `Other`. An
    /// error means a known extension with a payload the kernel would not have accepted.
    pub fn decode(name: &str, rev: u32, info: &[u8]) -> Result<XtMatch, WireError> {
        let ctx = || format!("xt match {name} rev {rev}");
        Ok(match (name, rev) {
            ("comment", 0) => XtMatch::Comment(Comment::decode(info).map_err(|e| e.within(ctx()))?),
            ("multiport", 1) => {
                XtMatch::Multiport(Multiport::decode(info).map_err(|e| e.within(ctx()))?)
            }
            ("conntrack", 3) => {
                XtMatch::Conntrack(ConntrackV3::decode(info).map_err(|e| e.within(ctx()))?)
            }
            ("state", 0) => XtMatch::State(StateInfo::decode(info).map_err(|e| e.within(ctx()))?),
            ("tcp", 0) => XtMatch::Tcp(Tcp::decode(info).map_err(|e| e.within(ctx()))?),
            ("udp", 0) => XtMatch::Udp(Udp::decode(info).map_err(|e| e.within(ctx()))?),
            _ => XtMatch::Other {
                name: name.to_owned(),
                rev,
                info: info.to_vec(),
            },
        })
    }

    /// Types the payload of an nft_compat `match` expression (see [`XtMatch::decode`]).
    pub fn from_expr(m: &Match) -> Result<XtMatch, WireError> {
        XtMatch::decode(&m.name, m.rev, &m.info)
    }

    /// The nft_compat expression that runs this match.
    pub fn to_expr(&self) -> Match {
        Match {
            name: self.name().to_owned(),
            rev: self.revision(),
            info: self.encode(),
        }
    }
}

/// An xt target payload, typed when xtnl models the (name, revision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XtTarget {
    /// `DNAT` rev 0 (IPv4 only), 1 or 2.
    Dnat(NatInfo),
    /// `SNAT` rev 0 (IPv4 only), 1 or 2.
    Snat(NatInfo),
    /// `MASQUERADE` rev 0.
    Masquerade(NatRev0),
    /// `REDIRECT` rev 0.
    Redirect(NatRev0),
    /// `REJECT` rev 0.
    Reject(Reject),
    /// `LOG` rev 0.
    Log(Log),
    /// Any other target, or a revision xtnl does not model: its payload kept byte for byte.
    Other {
        /// The extension's name.
        name: String,
        /// Its revision.
        rev: u32,
        /// Its payload, as the kernel stores it.
        info: Vec<u8>,
    },
}

impl XtTarget {
    /// The extension name the kernel looks up (`DNAT`, `LOG`, ...).
    pub fn name(&self) -> &str {
        match self {
            XtTarget::Dnat(_) => "DNAT",
            XtTarget::Snat(_) => "SNAT",
            XtTarget::Masquerade(_) => "MASQUERADE",
            XtTarget::Redirect(_) => "REDIRECT",
            XtTarget::Reject(_) => "REJECT",
            XtTarget::Log(_) => "LOG",
            XtTarget::Other { name, .. } => name,
        }
    }

    /// The revision of the payload's layout (what `NFTA_TARGET_REV` carries).
    pub fn revision(&self) -> u32 {
        match self {
            XtTarget::Dnat(n) | XtTarget::Snat(n) => n.revision(),
            XtTarget::Masquerade(_)
            | XtTarget::Redirect(_)
            | XtTarget::Reject(_)
            | XtTarget::Log(_) => 0,
            XtTarget::Other { rev, .. } => *rev,
        }
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            XtTarget::Dnat(n) | XtTarget::Snat(n) => n.encode(),
            XtTarget::Masquerade(n) | XtTarget::Redirect(n) => n.encode(),
            XtTarget::Reject(r) => r.encode(),
            XtTarget::Log(l) => l.encode(),
            XtTarget::Other { info, .. } => info.clone(),
        }
    }

    /// Types the payload of a known (name, revision); anything else is kept as `Other`.
    /// `family` picks the layout where IPv4 and IPv6 differ (REJECT, MASQUERADE, REDIRECT,
    /// NAT addresses); [`Family::Inet`] is refused for those.
    pub fn decode(
        name: &str,
        rev: u32,
        info: &[u8],
        family: Family,
    ) -> Result<XtTarget, WireError> {
        let ctx = || format!("xt target {name} rev {rev}");
        Ok(match (name, rev) {
            ("DNAT", 0..=2) => {
                XtTarget::Dnat(NatInfo::decode(rev, info, family).map_err(|e| e.within(ctx()))?)
            }
            ("SNAT", 0..=2) => {
                XtTarget::Snat(NatInfo::decode(rev, info, family).map_err(|e| e.within(ctx()))?)
            }
            ("MASQUERADE", 0) => {
                XtTarget::Masquerade(NatRev0::decode(info, family).map_err(|e| e.within(ctx()))?)
            }
            ("REDIRECT", 0) => {
                XtTarget::Redirect(NatRev0::decode(info, family).map_err(|e| e.within(ctx()))?)
            }
            ("REJECT", 0) => {
                XtTarget::Reject(Reject::decode(info, family).map_err(|e| e.within(ctx()))?)
            }
            ("LOG", 0) => XtTarget::Log(Log::decode(info).map_err(|e| e.within(ctx()))?),
            _ => XtTarget::Other {
                name: name.to_owned(),
                rev,
                info: info.to_vec(),
            },
        })
    }

    /// Types the payload of an nft_compat `target` expression (see [`XtTarget::decode`]); `family`
    /// picks the layout where IPv4 and IPv6 differ.
    pub fn from_expr(t: &Target, family: Family) -> Result<XtTarget, WireError> {
        XtTarget::decode(&t.name, t.rev, &t.info, family)
    }

    /// The nft_compat expression that runs this target.
    pub fn to_expr(&self) -> Target {
        Target {
            name: self.name().to_owned(),
            rev: self.revision(),
            info: self.encode(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_matches_the_kernel_on_this_machine() {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(XT_ALIGN, 8);
        assert_eq!(xt_align(0), 0);
        assert_eq!(xt_align(1), XT_ALIGN);
        assert_eq!(xt_align(256), 256);
        assert_eq!(xt_align(164), if XT_ALIGN == 8 { 168 } else { 164 });
    }

    #[test]
    fn unknown_extensions_and_revisions_are_kept_whole() {
        for (name, rev) in [
            ("limit", 0),
            ("multiport", 0),
            ("conntrack", 2),
            ("comment", 1),
        ] {
            let m = XtMatch::decode(name, rev, &[1, 2, 3]).unwrap();
            assert!(matches!(m, XtMatch::Other { .. }), "{name} {rev}: {m:?}");
            assert_eq!(m.name(), name);
            assert_eq!(m.revision(), rev);
            assert_eq!(m.encode(), vec![1, 2, 3]);
        }
        for (name, rev) in [("NFLOG", 0), ("DNAT", 3), ("LOG", 1), ("MASQUERADE", 1)] {
            let t = XtTarget::decode(name, rev, &[9], Family::Ipv4).unwrap();
            assert!(matches!(t, XtTarget::Other { .. }), "{name} {rev}: {t:?}");
            assert_eq!(t.to_expr().info, vec![9]);
        }
    }

    #[test]
    fn wrong_sizes_are_errors_with_context() {
        let err = XtMatch::decode("comment", 0, &[0; 255]).unwrap_err();
        assert!(err.to_string().contains("xt match comment rev 0"), "{err}");
        assert!(err.to_string().contains("truncated"), "{err}");
        let err = XtTarget::decode("REJECT", 0, &[0; 16], Family::Ipv4).unwrap_err();
        assert!(err.to_string().contains("XT_ALIGN"), "{err}");
        let err = XtTarget::decode("REJECT", 0, &[0; 8], Family::Inet).unwrap_err();
        assert!(err.to_string().contains("inet"), "{err}");
    }

    /// Every modelled decoder, on every length up to 300 and assorted fill bytes: an error or
    /// a value, never a panic; and whatever decodes re-encodes to the same size.
    #[test]
    fn no_input_panics() {
        let matches = [
            ("comment", 0),
            ("multiport", 1),
            ("conntrack", 3),
            ("state", 0),
            ("tcp", 0),
            ("udp", 0),
        ];
        let targets = [
            ("DNAT", 0),
            ("DNAT", 1),
            ("DNAT", 2),
            ("SNAT", 0),
            ("SNAT", 1),
            ("SNAT", 2),
            ("MASQUERADE", 0),
            ("REDIRECT", 0),
            ("REJECT", 0),
            ("LOG", 0),
        ];
        for len in 0..300 {
            for fill in [0u8, 1, 0x41, 0xff] {
                let mut info: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8)).collect();
                if fill == 0 {
                    info.fill(0);
                }
                for (n, r) in matches {
                    if let Ok(m) = XtMatch::decode(n, r, &info) {
                        assert_eq!(m.encode().len(), len, "{n}");
                    }
                }
                for (n, r) in targets {
                    for fam in [Family::Ipv4, Family::Ipv6, Family::Inet] {
                        if let Ok(t) = XtTarget::decode(n, r, &info, fam) {
                            assert_eq!(t.encode().len(), len, "{n} {r}");
                        }
                    }
                }
            }
        }
    }
}
