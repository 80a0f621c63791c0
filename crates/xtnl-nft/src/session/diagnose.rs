//! What a transaction refused with ENOENT lacks: its table, its chain, a jump target or a
//! kernel module.

use super::*;

/// Expressions every nf_tables kernel has (nf_tables' core); any other one may be a module
/// the kernel lacks.
pub(super) const CORE_EXPRESSIONS: &[&str] = &[
    "payload",
    "meta",
    "cmp",
    "range",
    "bitwise",
    "immediate",
    "lookup",
    "counter",
];

/// nf_tables answers ENOENT to a rule for its chain, for the chain it jumps to, and for an
/// expression type or x_tables extension the kernel lacks (no module to load). When the
/// rule's chain exists, the error names the missing jump target, or else says that the
/// kernel lacks what the rule needs, naming it.
pub(super) fn missing_extension(sock: &mut Conn, tx: &Transaction, e: Error) -> Error {
    let Some(f) = e.op_failure().filter(|f| f.errno == libc::ENOENT) else {
        return e;
    };
    if let Some(named) = missing_container(sock, tx, f) {
        return named;
    }
    let exprs = match tx.ops().get(f.index) {
        Some(
            crate::nft::Op::AddEncodedRule { chain, rule, .. }
            | crate::nft::Op::ReplaceEncodedRule { chain, rule, .. },
        ) => (chain, rule.exprs.clone()),
        Some(
            crate::nft::Op::AddRule { chain, rule, .. }
            | crate::nft::Op::ReplaceRule { chain, rule, .. },
        ) => match crate::nft::codec::encode_native(rule, chain.table.family) {
            Ok(n) => (chain, n.exprs),
            Err(_) => return e,
        },
        _ => return e,
    };
    let (chain, exprs) = exprs;
    if !matches!(get_chain(sock, chain), Ok(Some(_))) {
        return e;
    }
    // The chain is there: the jump target may not be.
    for x in &exprs {
        if let crate::wire::expr::Expr::Immediate(i) = x
            && let crate::wire::expr::ImmediateData::Verdict(
                crate::wire::expr::Verdict::Jump(target) | crate::wire::expr::Verdict::Goto(target),
            ) = &i.data
            && matches!(
                get_chain(sock, &chain.table.chain(target.clone())),
                Ok(None)
            )
        {
            let mut f = f.clone();
            f.op = format!("{}, whose jump target chain {target} does not exist", f.op);
            return Error::NotFound(f);
        }
    }
    let needs: Vec<String> = exprs
        .iter()
        .filter_map(|x| match x {
            crate::wire::expr::Expr::Match(m) => {
                Some(format!("x_tables match {} rev {}", m.name, m.rev))
            }
            crate::wire::expr::Expr::Target(t) => {
                Some(format!("x_tables target {} rev {}", t.name, t.rev))
            }
            other if !CORE_EXPRESSIONS.contains(&other.name()) => {
                Some(format!("expression {}", other.name()))
            }
            _ => None,
        })
        .collect();
    if needs.is_empty() {
        return e;
    }
    let mut f = f.clone();
    f.op = format!("{}, which needs {}", f.op, needs.join(", "));
    Error::Unsupported(f)
}

/// The table or chain an operation refused with ENOENT goes into, when the kernel has no
/// such table or chain and no earlier operation of the transaction creates it: the error
/// names it (`add chain ip nat vcld-5205, whose table ip nat does not exist`). `None` when
/// both are there (the cause is elsewhere) or cannot be read.
fn missing_container(
    sock: &mut Conn,
    tx: &Transaction,
    f: &crate::error::OpFailure,
) -> Option<Error> {
    use crate::nft::Op;
    let (table, chain) = match tx.ops().get(f.index)? {
        Op::EnsureChain { table, .. } | Op::CreateChain { table, .. } => (table, None),
        Op::DeleteTable(t) | Op::FlushTable(t) => (t, None),
        Op::FlushChain(c)
        | Op::DeleteChain(c)
        | Op::RenameChain { chain: c, .. }
        | Op::AddEncodedRule { chain: c, .. }
        | Op::ReplaceEncodedRule { chain: c, .. }
        | Op::AddRule { chain: c, .. }
        | Op::DeleteRule { chain: c, .. }
        | Op::ReplaceRule { chain: c, .. } => (&c.table, Some(c)),
        _ => return None,
    };
    let earlier = tx.ops().get(..f.index)?;
    let table_made = earlier.iter().any(|op| match op {
        Op::EnsureTable(t) => t == table,
        Op::EnsureIptablesChain(c) => c.table == *table,
        _ => false,
    });
    let what = if !table_made && !get_table_exists(sock, table).ok()? {
        format!("table {table}")
    } else {
        let c = chain?;
        let chain_made = earlier.iter().any(|op| match op {
            Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => {
                *table == c.table && chain.name == c.name
            }
            Op::EnsureIptablesChain(made) => made == c,
            _ => false,
        });
        if chain_made || get_chain(sock, c).ok()?.is_some() {
            return None;
        }
        format!("chain {c}")
    };
    let mut f = f.clone();
    f.op = format!("{}, whose {what} does not exist", f.op);
    Some(Error::NotFound(f))
}
