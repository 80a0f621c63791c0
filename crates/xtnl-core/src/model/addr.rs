use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use crate::Error;

/// An address with a netmask, e.g. `10.0.0.0/24`; host bits are cleared on creation (as
/// iptables and nft do). The mask is usually a prefix, but iptables also accepts any mask
/// written as an address (`10.0.12.0/255.0.255.0`), which both kernel interfaces carry
/// (x_tables' `ipt_ip.smsk`, nf_tables' bitwise mask), so the model keeps it as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpNet {
    addr: IpAddr,
    /// The netmask, same family as `addr`.
    mask: IpAddr,
}

impl IpNet {
    /// A network of `prefix` bits; refuses a prefix longer than the address.
    pub fn new(addr: IpAddr, prefix: u8) -> crate::Result<Self> {
        let max = Self::max_prefix_of(&addr);
        if prefix > max {
            return Err(Error::InvalidInput(format!(
                "prefix length /{prefix} is longer than {max} for {addr}"
            )));
        }
        let mask = prefix_mask(addr.is_ipv4(), prefix);
        Ok(IpNet {
            addr: apply_mask(addr, mask),
            mask,
        })
    }
    /// A net with any mask of the address's family (non-contiguous included); host bits
    /// are cleared.
    pub fn with_mask(addr: IpAddr, mask: IpAddr) -> crate::Result<Self> {
        if addr.is_ipv4() != mask.is_ipv4() {
            return Err(Error::InvalidInput(format!(
                "netmask {mask} is not of the family of {addr}"
            )));
        }
        Ok(IpNet {
            addr: apply_mask(addr, mask),
            mask,
        })
    }
    /// A single address (/32 or /128).
    pub fn host(addr: IpAddr) -> Self {
        IpNet {
            addr,
            mask: prefix_mask(addr.is_ipv4(), Self::max_prefix_of(&addr)),
        }
    }
    /// The network's address.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }
    /// The netmask as an address.
    pub fn mask(&self) -> IpAddr {
        self.mask
    }
    /// The prefix length, `None` for a non-contiguous mask.
    pub fn prefix(&self) -> Option<u8> {
        let m = bits(self.mask);
        let width = if self.is_ipv4() { 32 } else { 128 };
        let ones = m.count_ones();
        // Contiguous: the ones are the top `ones` bits of the family's width.
        let expect = if ones == 0 {
            0
        } else {
            (u128::MAX << (128 - ones)) >> (128 - width)
        };
        (m == expect).then_some(ones as u8)
    }
    /// Whether it is a single address.
    pub fn is_host(&self) -> bool {
        self.prefix() == Some(Self::max_prefix_of(&self.addr))
    }
    /// Whether it is an IPv4 network.
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }
    fn max_prefix_of(addr: &IpAddr) -> u8 {
        if addr.is_ipv4() { 32 } else { 128 }
    }
    /// The address bytes in network order.
    pub fn octets(&self) -> Vec<u8> {
        octets_of(self.addr)
    }
    /// The netmask bytes in network order.
    pub fn mask_octets(&self) -> Vec<u8> {
        octets_of(self.mask)
    }
    /// Builds a net from address bytes and a netmask (any mask); `None` when the lengths
    /// differ or the address has bits outside the mask.
    pub fn from_octets_and_mask(addr: &[u8], mask: &[u8]) -> Option<Self> {
        let ip = ip_from_octets(addr)?;
        let m = ip_from_octets(mask)?;
        let net = IpNet::with_mask(ip, m).ok()?;
        (net.addr == ip).then_some(net)
    }
}

fn octets_of(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// The address as an integer, right-aligned.
fn bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u32::from(a).into(),
        IpAddr::V6(a) => a.into(),
    }
}

fn prefix_mask(v4: bool, prefix: u8) -> IpAddr {
    if v4 {
        let m = if prefix == 0 {
            0
        } else {
            u32::MAX << (32 - prefix)
        };
        IpAddr::V4(m.into())
    } else {
        let m = if prefix == 0 {
            0
        } else {
            u128::MAX << (128 - prefix)
        };
        IpAddr::V6(m.into())
    }
}

fn apply_mask(addr: IpAddr, mask: IpAddr) -> IpAddr {
    match (addr, mask) {
        (IpAddr::V4(a), IpAddr::V4(m)) => IpAddr::V4((u32::from(a) & u32::from(m)).into()),
        (IpAddr::V6(a), IpAddr::V6(m)) => IpAddr::V6((u128::from(a) & u128::from(m)).into()),
        _ => addr,
    }
}

/// The address that 4 (IPv4) or 16 (IPv6) bytes in network order spell; `None` for any
/// other length.
pub fn ip_from_octets(b: &[u8]) -> Option<IpAddr> {
    match b.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(b).ok()?)),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(b).ok()?)),
        _ => None,
    }
}

impl FromStr for IpNet {
    type Err = Error;
    /// `addr`, `addr/len` or `addr/mask` (dotted IPv4 mask, as iptables accepts).
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::InvalidInput(format!("invalid address {s:?}"));
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a.parse().map_err(|_| bad())?;
        match p {
            None => Ok(IpNet::host(addr)),
            Some(p) => {
                if let Ok(len) = p.parse::<u8>() {
                    return IpNet::new(addr, len);
                }
                let m: IpAddr = p.parse().map_err(|_| bad())?;
                IpNet::with_mask(addr, m).map_err(|_| bad())
            }
        }
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // iptables' form: a prefix length, or the mask itself when it is not contiguous.
        match self.prefix() {
            Some(p) => write!(f, "{}/{p}", self.addr),
            None => write!(f, "{}/{}", self.addr, self.mask),
        }
    }
}

/// A port or an inclusive port range; `first <= last`, both in 1..=65535 unless the range
/// is given by a caller that wants port 0 explicitly (nft allows it, iptables does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortRange {
    first: u16,
    last: u16,
}

impl PortRange {
    /// One port.
    pub fn single(port: u16) -> Self {
        PortRange {
            first: port,
            last: port,
        }
    }
    /// The ports `first..=last`; refuses `first > last`.
    pub fn new(first: u16, last: u16) -> crate::Result<Self> {
        if first > last {
            return Err(Error::InvalidInput(format!(
                "port range {first}-{last} is reversed"
            )));
        }
        Ok(PortRange { first, last })
    }
    /// The first port.
    pub fn first(&self) -> u16 {
        self.first
    }
    /// The last port.
    pub fn last(&self) -> u16 {
        self.last
    }
    /// Whether it is one port.
    pub fn is_single(&self) -> bool {
        self.first == self.last
    }
}

impl FromStr for PortRange {
    type Err = Error;
    /// `p`, `a-b` or `a:b`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| Error::InvalidInput(format!("invalid port {p:?} (expected 0-65535)")))
        };
        match s.split_once(['-', ':']) {
            Some((a, b)) => PortRange::new(port(a)?, port(b)?),
            None => Ok(PortRange::single(port(s)?)),
        }
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_single() {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_clear_host_bits_and_round_trip_masks() {
        let n: IpNet = "10.1.2.3/20".parse().unwrap();
        assert_eq!(n.to_string(), "10.1.0.0/20");
        assert_eq!(n.mask_octets(), vec![255, 255, 240, 0]);
        let back = IpNet::from_octets_and_mask(&n.octets(), &n.mask_octets()).unwrap();
        assert_eq!(back, n);
        let m: IpNet = "10.1.2.3/255.255.255.0".parse().unwrap();
        assert_eq!(m.to_string(), "10.1.2.0/24");
        let nc: IpNet = "10.11.12.13/255.0.255.0".parse().unwrap();
        assert_eq!(nc.to_string(), "10.0.12.0/255.0.255.0");
        assert_eq!(nc.prefix(), None);
        assert_eq!(
            IpNet::from_octets_and_mask(&nc.octets(), &nc.mask_octets()),
            Some(nc)
        );
        assert_eq!(
            IpNet::from_octets_and_mask(&[10, 11, 12, 0], &[255, 0, 255, 0]),
            None
        );
        let nc6: IpNet = "2001:db8::1/ffff:0:ffff::".parse().unwrap();
        assert_eq!(nc6.to_string(), "2001::/ffff:0:ffff::");
        assert!("10.0.0.0/ffff::".parse::<IpNet>().is_err());
        assert_eq!("0.0.0.0/0".parse::<IpNet>().unwrap().prefix(), Some(0));
        assert!("10.0.0.0/33".parse::<IpNet>().is_err());
        let v6: IpNet = "2001:db8::1/32".parse().unwrap();
        assert_eq!(v6.to_string(), "2001:db8::/32");
        assert_eq!(v6.mask_octets()[..5], [255, 255, 255, 255, 0]);
    }

    #[test]
    fn port_ranges() {
        assert_eq!("80".parse::<PortRange>().unwrap(), PortRange::single(80));
        assert_eq!(
            "1000:2000".parse::<PortRange>().unwrap().to_string(),
            "1000-2000"
        );
        assert!("2000-1000".parse::<PortRange>().is_err());
        assert!("65536".parse::<PortRange>().is_err());
        assert!("x".parse::<PortRange>().is_err());
    }
}
