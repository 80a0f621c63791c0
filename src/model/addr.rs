use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use crate::Error;

/// An address with a prefix length, e.g. `10.0.0.0/24`; host bits are cleared on creation
/// (as iptables and nft do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    pub fn new(addr: IpAddr, prefix: u8) -> crate::Result<Self> {
        let max = Self::max_prefix_of(&addr);
        if prefix > max {
            return Err(Error::InvalidInput(format!(
                "prefix length /{prefix} is longer than {max} for {addr}"
            )));
        }
        Ok(IpNet {
            addr: mask(addr, prefix),
            prefix,
        })
    }
    pub fn host(addr: IpAddr) -> Self {
        IpNet {
            addr,
            prefix: Self::max_prefix_of(&addr),
        }
    }
    pub fn addr(&self) -> IpAddr {
        self.addr
    }
    pub fn prefix(&self) -> u8 {
        self.prefix
    }
    pub fn is_host(&self) -> bool {
        self.prefix == Self::max_prefix_of(&self.addr)
    }
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }
    fn max_prefix_of(addr: &IpAddr) -> u8 {
        if addr.is_ipv4() { 32 } else { 128 }
    }
    /// The address bytes in network order.
    pub fn octets(&self) -> Vec<u8> {
        match self.addr {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        }
    }
    /// The netmask bytes in network order.
    pub fn mask_octets(&self) -> Vec<u8> {
        let len = if self.is_ipv4() { 4 } else { 16 };
        (0..len)
            .map(|i| {
                let bits = (self.prefix as i32 - i * 8).clamp(0, 8);
                if bits == 0 { 0 } else { 0xffu8 << (8 - bits) }
            })
            .collect()
    }
    /// Builds a net from address bytes and a netmask that must be contiguous.
    pub fn from_octets_and_mask(addr: &[u8], mask: &[u8]) -> Option<Self> {
        let ip = ip_from_octets(addr)?;
        if mask.len() != addr.len() {
            return None;
        }
        let ones: u32 = mask.iter().map(|b| b.count_ones()).sum();
        let contiguous = mask.iter().enumerate().all(|(i, &b)| {
            let bits = (ones as i32 - i as i32 * 8).clamp(0, 8);
            b == if bits == 0 { 0 } else { 0xffu8 << (8 - bits) }
        });
        if !contiguous {
            return None;
        }
        let net = IpNet::new(ip, ones as u8).ok()?;
        (net.addr == ip).then_some(net)
    }
}

pub(crate) fn ip_from_octets(b: &[u8]) -> Option<IpAddr> {
    match b.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(b).ok()?)),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(b).ok()?)),
        _ => None,
    }
}

fn mask(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix)
            };
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix)
            };
            IpAddr::V6((u128::from(a) & m).into())
        }
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
                let mb = match m {
                    IpAddr::V4(m) => m.octets().to_vec(),
                    IpAddr::V6(m) => m.octets().to_vec(),
                };
                let ab = IpNet::host(addr).octets();
                if mb.len() != ab.len() {
                    return Err(bad());
                }
                let masked: Vec<u8> = ab.iter().zip(&mb).map(|(a, m)| a & m).collect();
                IpNet::from_octets_and_mask(&masked, &mb).ok_or_else(|| {
                    Error::InvalidInput(format!("netmask in {s:?} is not contiguous"))
                })
            }
        }
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
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
    pub fn single(port: u16) -> Self {
        PortRange {
            first: port,
            last: port,
        }
    }
    pub fn new(first: u16, last: u16) -> crate::Result<Self> {
        if first > last {
            return Err(Error::InvalidInput(format!(
                "port range {first}-{last} is reversed"
            )));
        }
        Ok(PortRange { first, last })
    }
    pub fn first(&self) -> u16 {
        self.first
    }
    pub fn last(&self) -> u16 {
        self.last
    }
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
        assert!("10.0.0.0/255.0.255.0".parse::<IpNet>().is_err());
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
