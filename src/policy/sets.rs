//! What operations on named sets touch: the set verbs, with the set's name where chain
//! touches name a chain (an `[[allow]]` entry scopes them with `sets = [...]`).

use super::{Touch, Verb};
use crate::nft::set::SetOp;

pub(super) fn touches(index: usize, desc: &str, op: &SetOp) -> Vec<Touch> {
    let t = op.table();
    let verb = match op {
        SetOp::Ensure { .. } => Verb::CreateSet,
        SetOp::Delete { .. } => Verb::DeleteSet,
        SetOp::AddElements { .. } => Verb::AddElement,
        SetOp::DeleteElements { .. } | SetOp::Flush { .. } => Verb::DeleteElement,
    };
    vec![Touch {
        op_index: index,
        op: desc.to_owned(),
        ..Touch::new(t.family, &t.name, Some(op.set_name()), verb)
    }]
}
