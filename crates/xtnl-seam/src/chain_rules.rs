//! Rule-number addressing of one chain's rules, written once for every table that applies
//! the interpreter's [`Edit`](crate::Edit)s to a `Vec` of its own rules: the x_tables table
//! (the library's `xtnl::legacy`), nf_tables' planner ([`crate::ipt::exec::Planner`], over
//! its rule slots) and the in-memory table ([`crate::memory`]). Rule numbers start at 1, as
//! iptables' `-I`/`-R`/`-D CHAIN N` count them.
//!
//! The interpreter refuses a number the chain does not have first, in iptables' words
//! ("Index of insertion too big.", [`crate::ipt::messages`]); the refusal here ("no rule N
//! in chain C", [`Error::InvalidInput`]) is the backstop for an edit given to a table
//! directly, and never panics on a number a caller chose (0 included).
//!
//! ```
//! use xtnl_seam::chain_rules::{append, delete_at, insert_at, replace_at};
//!
//! let mut rules = vec!["a", "c"];
//! insert_at(&mut rules, "INPUT", 2, "b")?;
//! append(&mut rules, "d");
//! assert_eq!(replace_at(&mut rules, "INPUT", 4, "D")?, "d");
//! assert_eq!(delete_at(&mut rules, "INPUT", 1)?, "a");
//! assert_eq!(rules, ["b", "c", "D"]);
//! let e = insert_at(&mut rules, "INPUT", 5, "x").unwrap_err();
//! assert_eq!(e.to_string(), "invalid input: no rule 5 in chain INPUT");
//! # Ok::<(), xtnl_core::Error>(())
//! ```

use crate::error::{Error, Result};

/// The refusal of rule `index` of `chain`, which the chain does not have.
fn no_rule(chain: &str, index: usize) -> Error {
    Error::InvalidInput(format!("no rule {index} in chain {chain}"))
}

/// `-A`: `rule` at the end of `rules`.
///
/// Small chains grow 1, 2, 4 rules, not straight to the 4 a vector starts with:
/// kube-proxy's endpoint chains hold 2 rules each, a third of a restore's chains (some
/// 4 MiB of 100-byte x_tables rules never used at 10,000 services).
pub fn append<R>(rules: &mut Vec<R>, rule: R) {
    if rules.len() == rules.capacity() && rules.len() < 4 {
        rules.reserve_exact(rules.len().max(1));
    }
    rules.push(rule);
}

/// Whether a rule can be inserted as rule `index` of a chain of `len` rules (1 to `len` +
/// 1; `len` + 1 appends); the refusal otherwise.
pub fn check_insert(len: usize, chain: &str, index: usize) -> Result<()> {
    if index == 0 || index > len + 1 {
        return Err(no_rule(chain, index));
    }
    Ok(())
}

/// `-I CHAIN N`: `rule` becomes rule `index` of `rules` ([`check_insert`]).
pub fn insert_at<R>(rules: &mut Vec<R>, chain: &str, index: usize, rule: R) -> Result<()> {
    check_insert(rules.len(), chain, index)?;
    rules.insert(index - 1, rule);
    Ok(())
}

/// Rule `index` of `rules`, to change in place.
pub fn rule_at_mut<'a, R>(rules: &'a mut [R], chain: &str, index: usize) -> Result<&'a mut R> {
    index
        .checked_sub(1)
        .and_then(|i| rules.get_mut(i))
        .ok_or_else(|| no_rule(chain, index))
}

/// `-R CHAIN N`: rule `index` of `rules` replaced by `rule`; the rule it was.
pub fn replace_at<R>(rules: &mut [R], chain: &str, index: usize, rule: R) -> Result<R> {
    Ok(std::mem::replace(rule_at_mut(rules, chain, index)?, rule))
}

/// `-D CHAIN N`: rule `index` of `rules` removed; the rule it was.
pub fn delete_at<R>(rules: &mut Vec<R>, chain: &str, index: usize) -> Result<R> {
    if index == 0 || index > rules.len() {
        return Err(no_rule(chain, index));
    }
    Ok(rules.remove(index - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_outside_the_chain_are_refused_and_change_nothing() {
        let mut rules = vec![1, 2, 3];
        for index in [0, 5, usize::MAX] {
            assert_eq!(
                insert_at(&mut rules, "c", index, 9)
                    .unwrap_err()
                    .to_string(),
                format!("invalid input: no rule {index} in chain c")
            );
        }
        for index in [0, 4, usize::MAX] {
            assert!(replace_at(&mut rules, "c", index, 9).is_err());
            assert!(delete_at(&mut rules, "c", index).is_err());
        }
        assert_eq!(rules, [1, 2, 3]);
        // len + 1 inserts at the end.
        insert_at(&mut rules, "c", 4, 4).unwrap();
        assert_eq!(rules, [1, 2, 3, 4]);
    }

    #[test]
    fn append_grows_small_chains_one_two_four() {
        let mut rules = Vec::new();
        let mut capacities = Vec::new();
        for r in 0..6 {
            append(&mut rules, r);
            capacities.push(rules.capacity());
        }
        assert_eq!(&capacities[..3], [1, 2, 4]);
        assert_eq!(rules, [0, 1, 2, 3, 4, 5]);
    }
}
