//! A restore's input as `restore` reads it: lines checked as they come (the input's size,
//! each line's length, UTF-8), read again from the start when a plan is made anew (a
//! regular file is read again and must read alike; piped input is kept, compressed in
//! blocks as it is read: [`Packer`]), and, for an input of one table on x_tables, parsed
//! line by line as it is planned ([`xtnl::legacy::restore_streamed`]).

use std::io::{BufRead, Read, Seek, SeekFrom};

use xtnl::error::{Error, Result};
use xtnl::ipt::restore::{self, Line};
use xtnl::model::Family;

/// Restore inputs larger than this are refused as they are read.
pub(super) const MAX_INPUT: u64 = xtnl::limits::MAX_RESTORE_BYTES;

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

/// A digest of a restore input's lines, to tell that a second reading of it (a plan made
/// anew, or the plan after the first look) read what the first did: 64-bit multiply-xor
/// over 8-byte words, a few milliseconds for the 52 MiB of a cluster of 50,000 services.
/// Not a defence against a chosen collision, nor does it need to be: whoever can change
/// the file chooses what it says anyway.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Digest(u64);

impl Digest {
    fn line(&mut self, b: &[u8]) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
        }
        let mut a = [0u8; 8];
        let rest = words.remainder();
        a[..rest.len()].copy_from_slice(rest);
        // The length ends the line: "ab" + "c" and "a" + "bc" differ.
        let last = u64::from_le_bytes(a) ^ ((b.len() as u64) << 56);
        self.0 = (self.0.rotate_left(5) ^ last).wrapping_mul(K);
    }
}

/// The lines of a restore input, each checked as it is read: the input's size
/// ([`MAX_INPUT`]), the line's length ([`xtnl::limits::MAX_RESTORE_LINE`]), UTF-8; its
/// line end (`\n`, `\r\n`) removed; the digest of the lines so far kept.
pub(super) struct Lines<'n, R> {
    input: R,
    name: &'n str,
    buf: Vec<u8>,
    total: u64,
    /// Lines read so far.
    pub(super) count: usize,
    pub(super) digest: Digest,
}

impl<'n, R: BufRead> Lines<'n, R> {
    pub(super) fn new(input: R, name: &'n str) -> Self {
        Lines {
            input,
            name,
            buf: Vec::new(),
            total: 0,
            count: 0,
            digest: Digest::default(),
        }
    }

    /// The next line, `None` at the end of the input.
    pub(super) fn next_line(&mut self) -> Result<Option<&str>> {
        let max_line = xtnl::limits::MAX_RESTORE_LINE;
        self.buf.clear();
        let n = (&mut self.input)
            .take(max_line as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| bad(format!("cannot read {}: {e}", self.name)))?;
        if n == 0 {
            return Ok(None);
        }
        self.total += n as u64;
        if self.total > MAX_INPUT {
            return Err(bad(format!("input larger than {} MiB", MAX_INPUT >> 20)));
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if n > max_line {
            return Err(bad(format!(
                "line {}: longer than {} MiB",
                self.count + 1,
                max_line >> 20
            )));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        let line = std::str::from_utf8(&self.buf).map_err(|e| {
            bad(format!(
                "input is not UTF-8 (byte {})",
                self.total - n as u64 + e.valid_up_to() as u64
            ))
        })?;
        self.count += 1;
        self.digest.line(line.as_bytes());
        Ok(Some(line))
    }
}

/// Text gathered into a block before it is compressed: lz4's matches reach 64 KiB back, so
/// larger blocks compress hardly better, and a reading holds one block's text at a time.
const PACK_BLOCK: usize = 64 << 10;

/// One compressed block of [`Packed`] text.
struct PackedBlock {
    /// The length of its text.
    len: usize,
    /// Whether `bytes` is the text as it was (compression failed).
    stored: bool,
    /// The text, lz4's block format (unless `stored`).
    bytes: Box<[u8]>,
}

/// Piped input kept for a plan made anew, compressed: its lines (each ended by `\n`) in
/// blocks of some [`PACK_BLOCK`] bytes, each compressed on its own (lz4's block format) as
/// it fills. kube-proxy's restore input shrinks about 6 times (10.3 MiB to 1.7 MiB at
/// 10,000 services); compressing it is 0.8% of that restore's CPU (some 7 ms, `perf`).
#[derive(Default)]
pub(super) struct Packed {
    blocks: Vec<PackedBlock>,
    /// The digest of the lines kept, checked when they are read again.
    digest: Digest,
}

/// Gathers lines into [`Packed`] text.
#[derive(Default)]
pub(super) struct Packer {
    packed: Packed,
    text: Vec<u8>,
    scratch: Vec<u8>,
}

impl Packer {
    /// Keeps `line` (without its line end).
    pub(super) fn line(&mut self, line: &str) {
        self.text.extend_from_slice(line.as_bytes());
        self.text.push(b'\n');
        if self.text.len() >= PACK_BLOCK {
            self.seal();
        }
    }

    fn seal(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let max = lz4_flex::block::get_maximum_output_size(self.text.len());
        if self.scratch.len() < max {
            self.scratch.resize(max, 0);
        }
        // The scratch buffer holds the largest output of any input: this cannot fail.
        let (stored, bytes) = match lz4_flex::block::compress_into(&self.text, &mut self.scratch) {
            Ok(n) => (false, Box::from(&self.scratch[..n])),
            Err(_) => (true, Box::from(&self.text[..])),
        };
        self.packed.blocks.push(PackedBlock {
            len: self.text.len(),
            stored,
            bytes,
        });
        self.text.clear();
    }

    /// The text kept, for a reading whose lines had digest `digest`.
    pub(super) fn finish(mut self, digest: Digest) -> Packed {
        self.seal();
        self.packed.digest = digest;
        self.packed.blocks.shrink_to_fit();
        self.packed
    }
}

/// A reading of [`Packed`] text: one block's text at a time.
struct PackedReader<'p> {
    blocks: std::slice::Iter<'p, PackedBlock>,
    text: Vec<u8>,
    at: usize,
}

impl Read for PackedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PackedReader<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.text.len() {
            let Some(b) = self.blocks.next() else {
                break;
            };
            self.text.resize(b.len, 0);
            self.at = 0;
            // The digest check finds any difference from the first reading.
            let ok = match b.stored && b.bytes.len() == b.len {
                true => {
                    self.text.copy_from_slice(&b.bytes);
                    true
                }
                false => lz4_flex::block::decompress_into(&b.bytes, &mut self.text)
                    .is_ok_and(|n| n == b.len),
            };
            if !ok {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the kept input does not decompress",
                ));
            }
        }
        Ok(&self.text[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.text.len());
    }
}

/// Where the text of a restore comes from each time it is read.
pub(super) enum Source {
    /// Piped input, read once: its lines were kept, compressed.
    Packed(Packed),
    /// A regular file (named, or standard input redirected from one), read again from the
    /// offset it was first read from; its lines must have the digest of the first reading.
    File {
        file: std::fs::File,
        start: u64,
        digest: Digest,
    },
}

impl Source {
    /// The input from its start.
    pub(super) fn reader(&self, name: &str) -> Result<Box<dyn BufRead + '_>> {
        match self {
            Source::Packed(p) => Ok(Box::new(PackedReader {
                blocks: p.blocks.iter(),
                text: Vec::new(),
                at: 0,
            })),
            Source::File { file, start, .. } => {
                let mut f = file;
                f.seek(SeekFrom::Start(*start))
                    .map_err(|e| bad(format!("cannot read {name} again: {e}")))?;
                Ok(Box::new(std::io::BufReader::new(f)))
            }
        }
    }

    /// Whether a reading whose lines have digest `d` read what the first did.
    pub(super) fn check(&self, d: Digest, name: &str) -> Result<()> {
        match self {
            Source::File { digest, .. } if *digest != d => Err(bad(format!(
                "{name} changed while it was restored (it is read again to plan the \
                 restore); nothing was committed"
            ))),
            Source::Packed(p) if p.digest != d => Err(bad(format!(
                "{name} as kept for a plan made anew does not read as it was read; nothing \
                 was committed"
            ))),
            _ => Ok(()),
        }
    }
}

/// `f` with its current offset, when it is a regular file (which a second reading reads
/// alike); `f` back for a pipe, a socket, a terminal or a device.
pub(super) fn rereadable(
    f: std::fs::File,
) -> std::result::Result<(std::fs::File, u64), std::fs::File> {
    if !f.metadata().is_ok_and(|m| m.file_type().is_file()) {
        return Err(f);
    }
    match (&f).stream_position() {
        Ok(start) => Ok((f, start)),
        Err(_) => Err(f),
    }
}

/// What a first look at a restore input found, before any line is parsed.
pub(super) struct Scan {
    /// The input's lines (piped input, kept).
    pub(super) text: Option<Packed>,
    pub(super) digest: Digest,
    /// `*table` lines.
    pub(super) tables: usize,
    /// The first `*table` line's number and table, when it is the input's first line that
    /// is neither empty nor a comment.
    pub(super) first: Option<(usize, String)>,
    /// The first error reading the input (its size, a line's length, UTF-8): the input is
    /// then parsed as before, whole, so that an earlier line's parse error is named first.
    pub(super) error: Option<Error>,
}

/// Reads the input once without parsing it: whether it is one table's block, and (when
/// `keep`) its text.
pub(super) fn scan(input: impl BufRead, name: &str, keep: bool) -> Scan {
    let mut lines = Lines::new(input, name);
    let mut text = Packer::default();
    let (mut tables, mut first, mut content) = (0, None, false);
    let error = loop {
        let number = lines.count + 1;
        let line = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        if keep {
            text.line(line);
        }
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(t) = l.strip_prefix('*') {
            tables += 1;
            if !content {
                first = Some((number, t.to_string()));
            }
        }
        content = true;
    };
    Scan {
        text: keep.then(|| text.finish(lines.digest)),
        digest: lines.digest,
        tables,
        first,
        error,
    }
}

/// The one block of an input, parsed line by line as the plan takes it.
pub(super) struct Streamed<'s> {
    source: &'s Source,
    name: &'s str,
    family: Family,
    counters: bool,
    lines: Lines<'s, Box<dyn BufRead + 's>>,
    parser: restore::Parser,
    error: Option<Error>,
    ended: bool,
}

impl<'s> Streamed<'s> {
    pub(super) fn new(
        source: &'s Source,
        name: &'s str,
        family: Family,
        counters: bool,
    ) -> Result<Self> {
        Ok(Streamed {
            source,
            name,
            family,
            counters,
            lines: Lines::new(source.reader(name)?, name),
            parser: restore::Parser::new(family).with_counters(counters),
            error: None,
            ended: false,
        })
    }
}

impl xtnl::legacy::BlockSource for Streamed<'_> {
    fn next_line(&mut self) -> Option<(usize, Line)> {
        loop {
            if let Some(l) = self.parser.pop_line() {
                return Some(l);
            }
            if self.ended || self.error.is_some() {
                return None;
            }
            let parsed = match self.lines.next_line() {
                Ok(Some(text)) => self.parser.line(text),
                Ok(None) => {
                    self.ended = true;
                    Ok(())
                }
                Err(e) => Err(e),
            };
            let parsed = parsed.and_then(|()| {
                if self.parser.changes() > xtnl::limits::MAX_TRANSACTION_OPS {
                    return Err(bad(format!(
                        "line {}: more than {} operations; at most that many fit in one transaction",
                        self.parser.line_number(),
                        xtnl::limits::MAX_TRANSACTION_OPS
                    )));
                }
                Ok(())
            });
            if let Err(e) = parsed {
                self.error = Some(e);
            }
        }
    }

    fn rewind(&mut self) -> Result<()> {
        *self = Streamed::new(self.source, self.name, self.family, self.counters)?;
        Ok(())
    }

    fn finish(&mut self) -> Result<usize> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let parser = std::mem::replace(&mut self.parser, restore::Parser::new(self.family));
        let blocks = parser.finish()?;
        self.source.check(self.lines.digest, self.name)?;
        match blocks.as_slice() {
            [b] => Ok(b.commit_line),
            _ => Err(bad(format!("{} changed while it was restored", self.name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `source` reads from its start, and their digest.
    fn read_all(source: &Source) -> (Vec<String>, Digest) {
        let mut lines = Lines::new(source.reader("input").expect("reader"), "input");
        let mut got = Vec::new();
        while let Some(l) = lines.next_line().expect("line") {
            got.push(l.to_owned());
        }
        (got, lines.digest)
    }

    /// Piped input kept compressed reads back line for line, across many blocks, with a
    /// line longer than a block, CRLF line ends and no line end at the very end; it is
    /// smaller than the text; and the digest of the reading is the first reading's.
    #[test]
    fn packed_input_reads_back_as_it_was_read() {
        let mut text = String::from("*nat\r\n:KUBE-SERVICES - [0:0]\n");
        for i in 0..20_000 {
            text.push_str(&format!(
                "-A KUBE-SVC-{i:06} -m comment --comment \"ns{i}/svc{i}:http\" -j KUBE-SEP-{i:06}\n"
            ));
        }
        text.push_str(&format!(
            "-A LONG -m comment --comment \"{}\"\n",
            "x".repeat(3 * PACK_BLOCK)
        ));
        text.push_str("\n\nCOMMIT");
        let look = scan(text.as_bytes(), "input", true);
        assert!(look.error.is_none());
        let packed = look.text.expect("kept");
        assert!(packed.blocks.len() > 10, "{} blocks", packed.blocks.len());
        let size: usize = packed.blocks.iter().map(|b| b.bytes.len()).sum();
        assert!(size * 3 < text.len(), "{size} of {}", text.len());
        let source = Source::Packed(packed);
        let (got, digest) = read_all(&source);
        let want: Vec<&str> = text.lines().collect();
        assert_eq!(got, want);
        assert!(digest == look.digest);
        source.check(digest, "input").expect("same digest");
        // Read twice (a second plan made anew): the same again.
        assert_eq!(read_all(&source).0, want);
    }

    /// A reading of kept input whose lines differ from the first reading's is refused.
    #[test]
    fn packed_input_read_differently_is_refused() {
        let mut packer = Packer::default();
        packer.line("*nat");
        let source = Source::Packed(packer.finish(Digest(7)));
        let (_, digest) = read_all(&source);
        let e = source
            .check(digest, "standard input")
            .expect_err("digest differs");
        assert!(e.to_string().contains("nothing was committed"), "{e}");
    }
}
