//! Every bound on caller input, in one place, with where each number comes from (vendor-notes.md
//! has the evidence). Checks live next to the code that parses each input; they all use these.

/// nf_tables' `NFT_NAME_MAXLEN` (256) less the NUL: tables and chains in any table.
pub use crate::model::MAX_NAME_LEN;

/// iptables' chain names: `XT_EXTENSION_MAXNAMELEN` (29) less the NUL. iptables 1.8.9 refuses
/// longer names with "chain name `...' too long (must be under 29 chars)"; xtnl refuses them
/// in iptables' own tables too, so that every chain it makes there iptables can name.
pub const MAX_IPTABLES_CHAIN_LEN: usize = 28;

/// `XT_MAX_COMMENT_LEN` (256, `<linux/netfilter/xt_comment.h>`) less the NUL: the longest
/// `-m comment` text (iptables: "COMMENT must be shorter than 256 characters").
pub const MAX_IPTABLES_COMMENT_LEN: usize = 256 - 1;

/// Comments of natively encoded rules (one udata TLV with its NUL; nft caps them likewise).
pub use crate::model::MAX_COMMENT_LEN;

/// Ports or ranges in one anonymous port set.
pub use crate::model::MAX_SET_ELEMENTS;

/// The largest iptables-restore file: 256 MiB, far above a 100,000-rule ruleset (about
/// 15 MB) yet bounded: it is parsed line by line, but its commands are held until the commit.
pub const MAX_RESTORE_BYTES: u64 = 256 * 1024 * 1024;

/// The longest line of a restore file (a line is held whole while it is parsed).
pub const MAX_RESTORE_LINE: usize = 4 << 20;

/// The largest `xtnl apply` JSON document: 8 MiB (a document is parsed into a tree whole,
/// several times its size in memory; 10,000 operations take well under 8 MiB).
pub const MAX_JSON_DOCUMENT_BYTES: usize = 8 * 1024 * 1024;

/// Operations in one transaction of a JSON document.
pub const MAX_JSON_OPERATIONS: usize = 10_000;

/// Operations in one transaction, whatever a policy says: each becomes a netlink message held
/// in memory until the commit, and the kernel keeps the whole transaction until it ends.
pub const MAX_TRANSACTION_OPS: usize = 1 << 20;

/// The largest policy file (a policy is a few dozen lines).
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// Whether a name contains a NUL or another control character (refused in every name).
pub fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// Checks a chain name for a table: the nf_tables limit everywhere, and iptables' own limit
/// in iptables' tables (`ip`/`ip6` filter, nat, mangle, raw, security).
pub fn check_chain_name(
    family: crate::model::Family,
    table: &str,
    name: &str,
) -> crate::Result<()> {
    crate::model::validate_name("chain", name)?;
    let iptables_table = matches!(
        family,
        crate::model::Family::Ipv4 | crate::model::Family::Ipv6
    ) && crate::ipt::tables::is_iptables_table(table);
    if iptables_table && name.len() > MAX_IPTABLES_CHAIN_LEN {
        return Err(crate::Error::InvalidInput(format!(
            "chain name {name:?} is {} bytes; iptables' table {table} holds names of at most \
             {MAX_IPTABLES_CHAIN_LEN} bytes",
            name.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Family;

    #[test]
    fn chain_names() {
        assert!(check_chain_name(Family::Ipv4, "nat", &"c".repeat(28)).is_ok());
        assert!(check_chain_name(Family::Ipv4, "nat", &"c".repeat(29)).is_err());
        assert!(check_chain_name(Family::Ipv4, "xtnl", &"c".repeat(255)).is_ok());
        assert!(check_chain_name(Family::Inet, "nat", &"c".repeat(29)).is_ok());
        assert!(check_chain_name(Family::Ipv4, "xtnl", &"c".repeat(256)).is_err());
        assert!(check_chain_name(Family::Ipv4, "xtnl", "a\0b").is_err());
        assert!(check_chain_name(Family::Ipv4, "xtnl", "a\nb").is_err());
        assert_eq!(MAX_IPTABLES_COMMENT_LEN, 255);
    }
}
