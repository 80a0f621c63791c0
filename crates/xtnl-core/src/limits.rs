//! Every bound on caller input, in one place, with where each number comes from (vendor-notes.md
//! has the evidence). Checks live next to the code that parses each input; they all use these.

#![deny(missing_docs)]

/// nf_tables' `NFT_NAME_MAXLEN` (256) less the NUL: tables, chains and sets in any table.
pub const MAX_NAME_LEN: usize = 255;

/// `XT_EXTENSION_MAXNAMELEN` (`<linux/netfilter/x_tables.h>`): the name field of an x_tables
/// match or target, NUL included.
pub const XT_EXTENSION_MAXNAMELEN: usize = 29;

/// `XT_FUNCTION_MAXNAMELEN`: `xt_error_target.errorname`, which names a user chain in an
/// x_tables blob, NUL included (one more than [`XT_EXTENSION_MAXNAMELEN`]: the kernel's room,
/// not iptables' rule).
pub const XT_FUNCTION_MAXNAMELEN: usize = 30;

/// iptables' chain names: `XT_EXTENSION_MAXNAMELEN` (29) less the NUL. iptables 1.8.9 refuses
/// longer names with "chain name `...' too long (must be under 29 chars)" (a chain is also a
/// jump target, whose name field is an extension name); xtnl refuses them in iptables' own
/// tables too, so that every chain it makes there iptables can name.
pub const MAX_IPTABLES_CHAIN_LEN: usize = XT_EXTENSION_MAXNAMELEN - 1;

/// `XT_MAX_COMMENT_LEN` (256, `<linux/netfilter/xt_comment.h>`) less the NUL: the longest
/// `-m comment` text (iptables: "COMMENT must be shorter than 256 characters").
pub const MAX_IPTABLES_COMMENT_LEN: usize = 256 - 1;

/// Comments of natively encoded rules: what fits in one udata TLV with its NUL (nft and
/// iptables-nft cap comments at 255/256 likewise).
pub const MAX_COMMENT_LEN: usize = 254;

/// Ports or ranges in one anonymous port set (bounds the batch a single rule can make).
pub const MAX_SET_ELEMENTS: usize = 4096;

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
    // A byte at a time, one pass: `char::is_control`'s ASCII members are 0x00-0x1f and 0x7f
    // (no byte of a multi-byte character is below 0x80); the others (0x80-0x9f) are looked
    // for only in a name that is not ASCII.
    let mut ascii = true;
    for b in s.bytes() {
        if b.is_ascii_control() {
            return true;
        }
        ascii &= b.is_ascii();
    }
    !ascii && s.chars().any(char::is_control)
}

/// Whether `s` holds a blank (`char::is_whitespace`), ASCII a byte at a time.
fn has_blank(s: &str) -> bool {
    // char::is_whitespace's ASCII members (u8::is_ascii_whitespace leaves out 0x0b).
    let mut ascii = true;
    for b in s.bytes() {
        if matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') {
            return true;
        }
        ascii &= b.is_ascii();
    }
    !ascii && s.chars().any(char::is_whitespace)
}

/// Object names in nf_tables (tables, sets, and chains referred to): 1 to [`MAX_NAME_LEN`]
/// bytes, no NUL or control character. `kind` names the object in the message.
pub fn check_name(kind: &str, name: &str) -> crate::Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(crate::Error::InvalidInput(format!(
            "{kind} name {name:?} must be 1 to {MAX_NAME_LEN} bytes"
        )));
    }
    if has_control(name) {
        return Err(crate::Error::InvalidInput(format!(
            "{kind} name {name:?} holds a NUL or control character"
        )));
    }
    Ok(())
}

/// Whose rules a chain name follows. The caller, who knows the table, passes it in: this
/// module knows bounds, not which tables are iptables'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameDialect {
    /// nf_tables: 1 to [`MAX_NAME_LEN`] bytes, no NUL or control character.
    Nftables,
    /// A chain an agent names on a command line in an nf_tables table: as
    /// [`NameDialect::Nftables`], and no blank and no leading `-` or `!` (it would read as an
    /// option or a negation).
    NftablesCommand,
    /// iptables' tables: 1 to [`MAX_IPTABLES_CHAIN_LEN`] bytes, no blank, NUL or control
    /// character (iptables: "Invalid chain name").
    Iptables,
    /// A chain iptables is asked to create (`-N`, a NAT-host reservation in iptables' tables,
    /// a chain made by the library there): as [`NameDialect::Iptables`], and no leading `-`
    /// ("chain name not allowed to start with `-'") or `!` ("Invalid chain name").
    IptablesNew,
}

impl NameDialect {
    /// The dialect of a chain created in a table: `iptables_table` says whether it is one of
    /// iptables' own (which only the caller's layer knows).
    pub fn new_chain(iptables_table: bool) -> NameDialect {
        if iptables_table {
            NameDialect::IptablesNew
        } else {
            NameDialect::Nftables
        }
    }

    /// The dialect of a chain named on an agent's command line (NAT-host reservations).
    pub fn command(iptables_table: bool) -> NameDialect {
        if iptables_table {
            NameDialect::IptablesNew
        } else {
            NameDialect::NftablesCommand
        }
    }

    /// The longest chain name in bytes.
    pub const fn max_len(self) -> usize {
        match self {
            NameDialect::Nftables | NameDialect::NftablesCommand => MAX_NAME_LEN,
            NameDialect::Iptables | NameDialect::IptablesNew => MAX_IPTABLES_CHAIN_LEN,
        }
    }

    fn refuses_blanks(self) -> bool {
        !matches!(self, NameDialect::Nftables)
    }

    fn refuses_leading(self) -> bool {
        matches!(
            self,
            NameDialect::NftablesCommand | NameDialect::IptablesNew
        )
    }
}

/// What is wrong with a chain name (see [`chain_name_problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// It starts with `-`.
    LeadingDash,
    /// It is `len` bytes long; the dialect allows `max`.
    TooLong {
        /// The name's length in bytes.
        len: usize,
        /// The dialect's limit.
        max: usize,
    },
    /// It holds a NUL or another control character.
    Control,
    /// It holds a blank (space, tab, ...).
    Blank,
    /// It starts with `!`.
    LeadingBang,
}

/// The one chain-name check: the first problem of `name` in `dialect`, in the order iptables
/// reports them (empty, leading `-`, length, characters, leading `!`), or `None`.
pub fn chain_name_problem(dialect: NameDialect, name: &str) -> Option<NameProblem> {
    let leading = dialect.refuses_leading();
    if name.is_empty() {
        Some(NameProblem::Empty)
    } else if leading && name.starts_with('-') {
        Some(NameProblem::LeadingDash)
    } else if name.len() > dialect.max_len() {
        Some(NameProblem::TooLong {
            len: name.len(),
            max: dialect.max_len(),
        })
    } else if has_control(name) {
        Some(NameProblem::Control)
    } else if dialect.refuses_blanks() && has_blank(name) {
        Some(NameProblem::Blank)
    } else if leading && name.starts_with('!') {
        Some(NameProblem::LeadingBang)
    } else {
        None
    }
}

/// [`chain_name_problem`] in xtnl's words, for a chain of `table`.
pub fn check_chain_name(dialect: NameDialect, table: &str, name: &str) -> crate::Result<()> {
    let Some(problem) = chain_name_problem(dialect, name) else {
        return Ok(());
    };
    let what = match problem {
        NameProblem::Empty => "is empty".to_string(),
        NameProblem::TooLong { len, max } => {
            let whose = match dialect {
                NameDialect::Iptables | NameDialect::IptablesNew => "iptables' tables",
                NameDialect::Nftables | NameDialect::NftablesCommand => "nf_tables",
            };
            format!(
                "is {len} bytes long; the limit in table {table} is {max} ({whose} hold names \
                 of at most {max} bytes)"
            )
        }
        NameProblem::Control => "holds a NUL or control character".to_string(),
        NameProblem::Blank => "holds a blank".to_string(),
        NameProblem::LeadingDash | NameProblem::LeadingBang => "starts with '-' or '!'".to_string(),
    };
    Err(crate::Error::InvalidInput(format!(
        "chain name {name:?} {what}"
    )))
}

/// [`chain_name_problem`] in iptables' words (its command line, its restore format and the
/// x_tables backend say these).
pub fn check_iptables_chain_name(dialect: NameDialect, name: &str) -> crate::Result<()> {
    let Some(problem) = chain_name_problem(dialect, name) else {
        return Ok(());
    };
    Err(crate::Error::InvalidInput(match problem {
        NameProblem::Empty => "chain name expected".to_string(),
        NameProblem::LeadingDash => "chain name not allowed to start with `-'".to_string(),
        NameProblem::TooLong { max, .. } => {
            format!(
                "chain name `{name}' too long (must be under {} chars)",
                max + 1
            )
        }
        NameProblem::Control | NameProblem::Blank | NameProblem::LeadingBang => {
            format!("Invalid chain name `{name}'")
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(r: crate::Result<()>) -> String {
        match r {
            Err(crate::Error::InvalidInput(m)) => m,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn chain_names() {
        let ipt = NameDialect::new_chain(true);
        let nft = NameDialect::new_chain(false);
        assert!(check_chain_name(ipt, "nat", &"c".repeat(28)).is_ok());
        let long = msg(check_chain_name(ipt, "nat", &"c".repeat(29)));
        assert!(long.contains("at most 28 bytes"), "{long}");
        assert!(long.contains("the limit in table nat is 28"), "{long}");
        assert!(check_chain_name(nft, "xtnl", &"c".repeat(255)).is_ok());
        assert!(check_chain_name(nft, "xtnl", &"c".repeat(256)).is_err());
        assert!(msg(check_chain_name(nft, "xtnl", "a\0b")).contains("control character"));
        assert!(check_chain_name(nft, "xtnl", "a\nb").is_err());
        assert!(check_chain_name(nft, "xtnl", "a b").is_ok());
        assert!(check_chain_name(ipt, "nat", "a b").is_err());
        assert!(check_chain_name(NameDialect::NftablesCommand, "t", "-a").is_err());
        assert!(check_chain_name(NameDialect::NftablesCommand, "t", "a b").is_err());
        assert!(check_chain_name(nft, "t", "-a").is_ok());
        assert_eq!(MAX_IPTABLES_COMMENT_LEN, 255);
    }

    #[test]
    fn ascii_checks_answer_as_the_char_checks() {
        for b in 0..=0x7fu8 {
            let s = format!("a{}b", b as char);
            assert_eq!(has_control(&s), s.chars().any(char::is_control), "{b:#x}");
            assert_eq!(has_blank(&s), s.chars().any(char::is_whitespace), "{b:#x}");
        }
        for s in ["a\u{85}b", "a\u{a0}b", "a\u{2028}b", "é", "a\u{9f}"] {
            assert_eq!(has_control(s), s.chars().any(char::is_control), "{s:?}");
            assert_eq!(has_blank(s), s.chars().any(char::is_whitespace), "{s:?}");
        }
    }

    #[test]
    fn iptables_words() {
        let d = NameDialect::Iptables;
        assert_eq!(msg(check_iptables_chain_name(d, "")), "chain name expected");
        assert_eq!(
            msg(check_iptables_chain_name(d, &"x".repeat(29))),
            format!(
                "chain name `{}' too long (must be under 29 chars)",
                "x".repeat(29)
            )
        );
        assert_eq!(
            msg(check_iptables_chain_name(d, "a b")),
            "Invalid chain name `a b'"
        );
        assert!(check_iptables_chain_name(d, "!a").is_ok());
        let n = NameDialect::IptablesNew;
        assert_eq!(
            msg(check_iptables_chain_name(n, "-a b")),
            "chain name not allowed to start with `-'"
        );
        assert_eq!(
            msg(check_iptables_chain_name(n, "!a")),
            "Invalid chain name `!a'"
        );
        assert!(check_iptables_chain_name(n, &"x".repeat(28)).is_ok());
    }
}
