//! FNV-1a, the hash of xtnl's maps keyed by short names of its own: the extension registry's
//! indexes (names from the registry) and the x_tables table's chain-name maps. Nothing a
//! caller chooses can make their lookups collide on purpose in a way that matters (the keys
//! are bounded names of one table or the registry), so SipHash's protection buys nothing
//! there and cost a good part of laying out a large table (docs/benchmarks.md, "x_tables
//! save and layout at cluster scale") and of looking up each line's extensions in a
//! restore ("(branch nftcpu3)").
//!
//! ```
//! use std::collections::HashMap;
//! use xtnl_core::hash::Fnv;
//!
//! let mut chains: HashMap<&str, usize, Fnv> = HashMap::default();
//! chains.insert("KUBE-SERVICES", 0);
//! assert_eq!(chains.get("KUBE-SERVICES"), Some(&0));
//! ```

/// The FNV-1a hasher (64 bits).
#[derive(Clone, Copy)]
pub struct FnvHasher(u64);

impl Default for FnvHasher {
    fn default() -> Self {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The `BuildHasher` of maps hashed with [`FnvHasher`].
pub type Fnv = std::hash::BuildHasherDefault<FnvHasher>;

#[cfg(test)]
mod tests {
    use std::hash::Hasher;

    use super::FnvHasher;

    /// The published FNV-1a test vectors (64 bits): "" and "a", "foobar".
    #[test]
    fn fnv1a_test_vectors() {
        let h = |s: &str| {
            let mut f = FnvHasher::default();
            f.write(s.as_bytes());
            f.finish()
        };
        assert_eq!(h(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(h("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(h("foobar"), 0x8594_4171_f739_67e8);
    }
}
