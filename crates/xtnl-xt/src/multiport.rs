//! `struct xt_multiport_v1`: up to 15 ports or ranges (a range takes two slots), for source,
//! destination or either. Ports are in host byte order. The kernel refuses it unless the
//! rule's protocol (`-p`, NFTA_RULE_COMPAT for nft) is one with ports and not inverted.

use super::{Out, sized};
use xtnl_wire::WireError;

/// `XT_MULTI_PORTS`.
pub const XT_MULTI_PORTS: usize = 15;

pub(super) mod field {
    pub const FLAGS: usize = 0;
    pub const COUNT: usize = 1;
    pub const PORTS: usize = 2;
    pub const PFLAGS: usize = PORTS + 2 * super::XT_MULTI_PORTS;
    pub const INVERT: usize = PFLAGS + super::XT_MULTI_PORTS;
    pub const SIZE: usize = INVERT + 1;
}

const WHAT: &str = "xt_multiport_v1";

/// `enum xt_multiport_flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiportDir {
    /// `--sports`.
    Source,
    /// `--dports`.
    Destination,
    /// `--ports`: source or destination.
    Either,
}

impl MultiportDir {
    fn code(self) -> u8 {
        match self {
            MultiportDir::Source => 0,
            MultiportDir::Destination => 1,
            MultiportDir::Either => 2,
        }
    }
}

/// One entry of the list: `80` or `1000:2000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortSpec {
    /// A single port.
    Port(u16),
    /// Inclusive; iptables refuses `a:b` unless `a < b`, the kernel does not check.
    Range(u16, u16),
}

impl PortSpec {
    fn slots(self) -> usize {
        match self {
            PortSpec::Port(_) => 1,
            PortSpec::Range(..) => 2,
        }
    }
}

/// `-m multiport` rev 1 (`struct xt_multiport_v1`): a direction, up to 15 port slots (a range
/// takes two) and `!`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multiport {
    dir: MultiportDir,
    ports: Vec<PortSpec>,
    invert: bool,
}

impl Multiport {
    /// Refuses more entries than fit in 15 slots.
    pub fn new(
        dir: MultiportDir,
        ports: Vec<PortSpec>,
        invert: bool,
    ) -> Result<Multiport, WireError> {
        let slots: usize = ports.iter().map(|p| p.slots()).sum();
        if slots > XT_MULTI_PORTS {
            return Err(WireError::bad_value(format!(
                "{slots} port slots (a range takes two), at most {XT_MULTI_PORTS}"
            ))
            .within(WHAT));
        }
        Ok(Multiport { dir, ports, invert })
    }

    /// Which ports are tested: `--sports`, `--dports` or `--ports`.
    pub fn dir(&self) -> MultiportDir {
        self.dir
    }
    /// The ports and ranges, in the order given.
    pub fn ports(&self) -> &[PortSpec] {
        &self.ports
    }
    /// Whether the match is negated (`! --dports`).
    pub fn invert(&self) -> bool {
        self.invert
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(field::SIZE);
        let mut i = 0;
        for p in &self.ports {
            match *p {
                PortSpec::Port(n) => {
                    o.u16_ne(field::PORTS + 2 * i, n);
                    i += 1;
                }
                PortSpec::Range(a, b) => {
                    o.u16_ne(field::PORTS + 2 * i, a)
                        .u8(field::PFLAGS + i, 1)
                        .u16_ne(field::PORTS + 2 * (i + 1), b);
                    i += 2;
                }
            }
        }
        // `new` bounds the slots to 15, so the count fits.
        o.u8(field::FLAGS, self.dir.code())
            .u8(field::COUNT, i as u8)
            .u8(field::INVERT, u8::from(self.invert))
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<Multiport, WireError> {
        let f = sized(info, field::SIZE, WHAT)?;
        let dir = match f.u8(field::FLAGS)? {
            0 => MultiportDir::Source,
            1 => MultiportDir::Destination,
            2 => MultiportDir::Either,
            n => return Err(f.bad(format!("flags {n} is not source, destination or either"))),
        };
        let count = usize::from(f.u8(field::COUNT)?);
        if count > XT_MULTI_PORTS {
            return Err(f.bad(format!("count {count} exceeds {XT_MULTI_PORTS}")));
        }
        let invert = match f.u8(field::INVERT)? {
            0 => false,
            1 => true,
            // The kernel XORs the result with the byte: any other value inverts nonsense.
            n => return Err(f.bad(format!("invert {n} is neither 0 nor 1"))),
        };
        let mut ports = Vec::new();
        let mut i = 0;
        while i < count {
            let port = f.u16_ne(field::PORTS + 2 * i)?;
            match f.u8(field::PFLAGS + i)? {
                0 => {
                    ports.push(PortSpec::Port(port));
                    i += 1;
                }
                1 if i + 1 < count => {
                    let end = f.u16_ne(field::PORTS + 2 * (i + 1))?;
                    if f.u8(field::PFLAGS + i + 1)? != 0 {
                        // The kernel skips the flag of a range's end; a re-encode would
                        // lose it, so refuse rather than change the rule's bytes.
                        return Err(f.bad(format!("range end at slot {} is flagged", i + 1)));
                    }
                    ports.push(PortSpec::Range(port, end));
                    i += 2;
                }
                1 => {
                    return Err(f.bad("a range starts in the last slot and has no end"));
                }
                n => return Err(f.bad(format!("pflags[{i}] is {n}, not 0 or 1"))),
            }
        }
        Ok(Multiport { dir, ports, invert })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(field::SIZE, 48);
        assert_eq!(field::PFLAGS, 32);
        assert_eq!(field::INVERT, 47);
    }

    /// What iptables-nft 1.8.9 wrote for `--dports 80,443,1000:2000`.
    #[test]
    fn matches_captured_bytes() {
        let mut want = vec![0u8; 48];
        want[..10].copy_from_slice(&[1, 4, 0x50, 0, 0xbb, 1, 0xe8, 3, 0xd0, 7]);
        want[34] = 1;
        let m = Multiport::new(
            MultiportDir::Destination,
            vec![
                PortSpec::Port(80),
                PortSpec::Port(443),
                PortSpec::Range(1000, 2000),
            ],
            false,
        )
        .unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(m.encode(), want);
            assert_eq!(Multiport::decode(&want).unwrap(), m);
        }
        assert_eq!(Multiport::decode(&m.encode()).unwrap(), m);
    }

    #[test]
    fn fifteen_slots_at_most() {
        let seven_ranges: Vec<_> = (0..7)
            .map(|i| PortSpec::Range(i * 10, i * 10 + 5))
            .collect();
        let mut full = seven_ranges.clone();
        full.push(PortSpec::Port(1));
        let m = Multiport::new(MultiportDir::Either, full.clone(), true).unwrap();
        let b = m.encode();
        assert_eq!(b[1], 15);
        assert_eq!(b[47], 1);
        assert_eq!(Multiport::decode(&b).unwrap(), m);
        full.push(PortSpec::Port(2));
        assert!(Multiport::new(MultiportDir::Either, full, false).is_err());
    }

    #[test]
    fn malformed_payloads_are_refused() {
        let good = Multiport::new(MultiportDir::Source, vec![PortSpec::Port(53)], false)
            .unwrap()
            .encode();
        let bad = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            Multiport::decode(&b).unwrap_err().to_string()
        };
        assert!(bad(&|b| b[0] = 3).contains("flags"));
        assert!(bad(&|b| b[1] = 16).contains("count"));
        assert!(bad(&|b| b[47] = 2).contains("invert"));
        assert!(bad(&|b| b[32] = 1).contains("last slot"));
        assert!(bad(&|b| b[32] = 5).contains("pflags"));
        assert!(
            bad(&|b| {
                b[1] = 2;
                b[32] = 1;
                b[33] = 1;
            })
            .contains("range end")
        );
    }

    #[test]
    fn empty_list_is_what_the_kernel_gets() {
        let m = Multiport::new(MultiportDir::Destination, vec![], false).unwrap();
        assert_eq!(Multiport::decode(&m.encode()).unwrap(), m);
    }
}
