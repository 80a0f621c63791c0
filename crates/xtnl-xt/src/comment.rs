//! `struct xt_comment_info { char comment[XT_MAX_COMMENT_LEN]; }`: `-m comment`, which
//! matches everything; the text is there for people reading `iptables -S`.

use super::{Out, c_string, check_c_string, sized};
use xtnl_wire::WireError;

/// `XT_MAX_COMMENT_LEN`, NUL included.
pub const XT_MAX_COMMENT_LEN: usize = 256;

const WHAT: &str = "xt_comment_info";

/// `-m comment --comment TEXT`: a text of at most 255 bytes with no NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    text: String,
}

impl Comment {
    /// Refuses a text that would not fit with its NUL (255 bytes at most) or holds a NUL,
    /// which the kernel would cut it at.
    pub fn new(text: impl Into<String>) -> Result<Comment, WireError> {
        let text = text.into();
        check_c_string(&text, XT_MAX_COMMENT_LEN, WHAT)?;
        Ok(Comment { text })
    }

    /// The comment's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(XT_MAX_COMMENT_LEN)
            .put(0, self.text.as_bytes())
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<Comment, WireError> {
        let f = sized(info, XT_MAX_COMMENT_LEN, WHAT)?;
        let text = c_string(f.slice(0, XT_MAX_COMMENT_LEN)?, &f)?;
        Ok(Comment { text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_iptables_does() {
        let b = Comment::new("x y").unwrap().encode();
        assert_eq!(b.len(), 256);
        assert_eq!(&b[..4], b"x y\0");
        assert!(b[3..].iter().all(|&x| x == 0));
        assert_eq!(Comment::decode(&b).unwrap().text(), "x y");
    }

    #[test]
    fn longest_comment_fits_and_one_more_does_not() {
        let c = Comment::new("c".repeat(255)).unwrap();
        let b = c.encode();
        assert_eq!(b[255], 0);
        assert_eq!(Comment::decode(&b).unwrap(), c);
        assert!(Comment::new("c".repeat(256)).is_err());
        assert!(Comment::new("a\0b").is_err());
    }

    #[test]
    fn unterminated_or_non_utf8_is_refused() {
        let err = Comment::decode(&[b'x'; 256]).unwrap_err();
        assert!(err.to_string().contains("NUL"), "{err}");
        let mut b = [0u8; 256];
        b[0] = 0xff;
        assert!(Comment::decode(&b).is_err());
    }

    #[test]
    fn bytes_after_the_nul_are_not_kept() {
        let mut b = Comment::new("a").unwrap().encode();
        b[100] = 7;
        let c = Comment::decode(&b).unwrap();
        assert_eq!(c.text(), "a");
        assert_eq!(c.encode()[100], 0);
    }
}
