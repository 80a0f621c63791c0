//! The one dispatch of an iptables invocation, for every backend: the listings (`-S`,
//! `-L`) rendered from the chains the backend reads, in its iptables' words; `-L -Z`,
//! `-Z CHAIN N` and every change handed to the backend, which carries them through the one
//! interpreter ([`super::interpret`]) and commits them its way.

use super::Flavour;
use crate::error::{Error, Result};
use crate::ipt::listing::{ChainListing, render_rules, render_table};
use crate::ipt::messages;
use crate::ipt::parse::{Command, Invocation};
use crate::model::Family;

/// What [`execute`] asks of a backend to run an iptables invocation.
pub trait IptCommands {
    /// Which iptables this backend answers as.
    fn flavour(&self) -> Flavour;
    /// The chains of `table` for a listing, in iptables' listing order; `only` is a hint
    /// (a backend may read that chain alone); whether it exists is checked by the
    /// renderer.
    fn read_listing(
        &mut self,
        family: Family,
        table: &str,
        only: Option<&str>,
    ) -> Result<Vec<ChainListing>>;
    /// `-L [CHAIN] -Z`: the listing, then its chains' counters zeroed (with `-v`, `-Z`'s
    /// `Zeroing chain` lines after it).
    fn list_and_zero(&mut self, inv: &Invocation, chain: Option<&str>) -> Result<String>;
    /// `-Z CHAIN N`: one rule's counters zeroed.
    fn zero_rule(&mut self, inv: &Invocation, chain: &str, n: usize) -> Result<String>;
    /// Any other command: checked and applied through the interpreter and committed; what
    /// `-v` prints.
    fn change(&mut self, inv: &Invocation) -> Result<String>;
}

/// Runs one iptables invocation on `b`; returns what iptables prints on standard output.
pub fn execute(b: &mut impl IptCommands, inv: &Invocation) -> Result<String> {
    match (&inv.command, inv.rule_number) {
        (Command::Zero(Some(chain)), Some(n)) => b.zero_rule(inv, chain, n),
        (Command::List(chain), _) if inv.zero_after_list => b.list_and_zero(inv, chain.as_deref()),
        (Command::ListRules(_) | Command::List(_), _) => list(b, inv),
        _ => b.change(inv),
    }
}

/// `-S [CHAIN]` or `-L [CHAIN]` (without `-Z`), as the backend's iptables prints it.
pub fn list(b: &mut impl IptCommands, inv: &Invocation) -> Result<String> {
    let flavour = b.flavour();
    let text = match &inv.command {
        Command::ListRules(chain) => b
            .read_listing(inv.family, &inv.table, chain.as_deref())
            .and_then(|c| render_rules(&c, chain.as_deref(), inv.verbose)),
        Command::List(chain) => b
            .read_listing(inv.family, &inv.table, None)
            .and_then(|c| render_table(&c, chain.as_deref(), inv, inv.family, flavour)),
        _ => Err(Error::InvalidInput("not a listing".into())),
    };
    text.map_err(|e| listing_words(e, inv, flavour))
}

/// A listing's refusal in iptables' words. Under iptables' names on nf_tables a listed
/// chain that is missing names its table too: the report says what iptables-nft 1.8.9 says
/// of it (`chain `X' in table `filter' is incompatible, use 'nft' tool.`, which ufw reads).
pub fn listing_words(e: Error, inv: &Invocation, flavour: Flavour) -> Error {
    let e = match e {
        Error::NotFound(f) if flavour == Flavour::Nft && f.op.starts_with("list chain ") => {
            Error::NotFound(messages::failure(
                f.errno,
                format!("{} in table {}", f.op, inv.table),
            ))
        }
        other => other,
    };
    messages::kernel_words(e, inv.family, false)
}

/// A change's kernel refusal in the words iptables uses for it (callers match on these),
/// on either backend.
pub fn change_words(e: Error, inv: &Invocation) -> Error {
    messages::kernel_words(
        e,
        inv.family,
        matches!(inv.command, Command::DeleteChain(_)),
    )
}
