//! `struct xt_log_info` (same as `ipt_log_info` and `ip6t_log_info`): `-j LOG`.

use super::{Out, c_string, check_c_string, sized};
use xtnl_wire::WireError;

/// `XT_LOG_*` bits of `logflags`.
pub mod log_flags {
    /// `XT_LOG_TCPSEQ`: `--log-tcp-sequence`.
    pub const TCPSEQ: u8 = 0x01;
    /// `XT_LOG_TCPOPT`: `--log-tcp-options`.
    pub const TCPOPT: u8 = 0x02;
    /// `XT_LOG_IPOPT`: `--log-ip-options`.
    pub const IPOPT: u8 = 0x04;
    /// `XT_LOG_UID`: `--log-uid`.
    pub const UID: u8 = 0x08;
    /// Unsupported by the kernel; never set by iptables.
    pub const NFLOG: u8 = 0x10;
    /// `XT_LOG_MACDECODE`: `--log-macdecode`.
    pub const MACDECODE: u8 = 0x20;
    /// `XT_LOG_MASK`: every bit the kernel accepts.
    pub const MASK: u8 = 0x2f;
}

pub(super) mod field {
    pub const LEVEL: usize = 0;
    pub const LOGFLAGS: usize = 1;
    pub const PREFIX: usize = 2;
    pub const PREFIX_LEN: usize = 30;
    pub const SIZE: usize = 32;
}

const WHAT: &str = "xt_log_info";

/// `-j LOG`: level, flags and prefix, checked on construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    level: u8,
    flags: u8,
    prefix: String,
}

impl Log {
    /// `LOG_WARNING`, iptables' default `--log-level`.
    pub const DEFAULT_LEVEL: u8 = 4;

    /// Refuses a prefix over 29 bytes (iptables refuses it too) or holding a NUL.
    pub fn new(level: u8, flags: u8, prefix: impl Into<String>) -> Result<Log, WireError> {
        let prefix = prefix.into();
        check_c_string(&prefix, field::PREFIX_LEN, "xt_log_info prefix")?;
        Ok(Log {
            level,
            flags,
            prefix,
        })
    }

    /// The syslog level, 0 (emerg) to 7 (debug); the kernel refuses more.
    pub fn level(&self) -> u8 {
        self.level
    }
    /// [`log_flags`]; unknown bits are kept (the kernel refuses them).
    pub fn flags(&self) -> u8 {
        self.flags
    }
    /// The `--log-prefix` text (at most 29 bytes).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(field::SIZE)
            .u8(field::LEVEL, self.level)
            .u8(field::LOGFLAGS, self.flags)
            .put(field::PREFIX, self.prefix.as_bytes())
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<Log, WireError> {
        let f = sized(info, field::SIZE, WHAT)?;
        Ok(Log {
            level: f.u8(field::LEVEL)?,
            flags: f.u8(field::LOGFLAGS)?,
            prefix: c_string(f.slice(field::PREFIX, field::PREFIX_LEN)?, &f)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-j LOG --log-prefix "x: " --log-level 4` from iptables-nft 1.8.9.
    #[test]
    fn matches_captured_bytes() {
        let l = Log::new(4, 0, "x: ").unwrap();
        let mut want = vec![0u8; 32];
        want[..5].copy_from_slice(&[4, 0, b'x', b':', b' ']);
        assert_eq!(l.encode(), want);
        assert_eq!(Log::decode(&want).unwrap(), l);
    }

    #[test]
    fn longest_prefix_and_all_flags() {
        let p = "abcdefghijklmnopqrstuvwxyz012";
        let l = Log::new(7, log_flags::MASK, p).unwrap();
        let b = l.encode();
        assert_eq!(b[1], 0x2f);
        assert_eq!(&b[2..31], p.as_bytes());
        assert_eq!(b[31], 0);
        assert_eq!(Log::decode(&b).unwrap(), l);
        assert!(Log::new(4, 0, format!("{p}3")).is_err());
    }

    #[test]
    fn unterminated_prefix_is_refused() {
        let mut b = vec![b'a'; 32];
        b[0] = 4;
        b[1] = 0;
        assert!(Log::decode(&b).is_err());
    }
}
