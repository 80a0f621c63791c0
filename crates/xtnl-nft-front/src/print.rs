//! A document as nft prints it: jansson's default layout, `", "` between items and `": "`
//! after keys, on one line.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

/// jansson's `json_dumpf(root, fp, 0)` layout.
struct NftFormatter;

impl Formatter for NftFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// `value` as nft prints JSON (without the final newline).
pub fn to_nft_text(value: &impl Serialize) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, NftFormatter);
    value.serialize(&mut ser)?;
    // serde_json writes valid UTF-8.
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_is_janssons() {
        let v = serde_json::json!({"nftables": [{"a": 1}, {"b": [1, 2], "c": null}]});
        assert_eq!(
            super::to_nft_text(&v).unwrap(),
            r#"{"nftables": [{"a": 1}, {"b": [1, 2], "c": null}]}"#
        );
    }
}
