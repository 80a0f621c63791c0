//! The registry indexed by kernel name, for [`by_wire`]: every payload a listing decodes and
//! prints is looked up twice, and a scan of the whole registry with two dynamic calls per
//! entry was about a tenth of `xtnl save`'s time on 10,000 rules.

use std::collections::HashMap;

use xtnl_core::hash::Fnv;

use super::{Ext, REGISTRY, fits};
use crate::model::Family;

/// The extension that reads a kernel payload of this name and revision.
pub(super) fn by_wire(
    name: &str,
    rev: u32,
    target: bool,
    family: Family,
) -> Option<&'static dyn Ext> {
    // Each name's list in registry order, so the first that fits is the one a scan finds.
    type Index = HashMap<&'static str, Vec<&'static dyn Ext>, Fnv>;
    static BY_WIRE: std::sync::LazyLock<Index> = std::sync::LazyLock::new(|| {
        let mut m = Index::default();
        for e in REGISTRY {
            m.entry(e.wire_name()).or_default().push(*e);
        }
        m
    });
    BY_WIRE
        .get(name)?
        .iter()
        .copied()
        .find(|e| e.is_target() == target && e.reads(rev) && fits(*e, family))
}
