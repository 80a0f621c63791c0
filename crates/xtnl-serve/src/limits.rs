//! What one connection of `xtnl serve` may hold: its place among the connections (in all,
//! per uid, root's reserve, the pool of refused callers), its reading (idle and half-line
//! timeouts, a permit for a long line), and the memory a request line may cost before it is
//! parsed. See docs/serve.md, "Bounds".

use std::collections::HashMap;
use std::io::BufRead;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::request::{self, Request};
use crate::error::Error;

/// The soft limit on open files (`/proc/self/limits`), if it can be read.
pub(super) fn fd_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `--max-clients`, lowered to what the descriptor limit allows (each client takes two, the
/// engine keeps [`super::ENGINE_FDS`]): past the limit, accept would fail with EMFILE.
pub(super) fn clamp_clients(max_clients: usize, limit: Option<usize>) -> usize {
    let Some(limit) = limit else {
        return max_clients;
    };
    let room = limit.saturating_sub(super::ENGINE_FDS) / 2;
    let room = room.saturating_sub(super::REFUSED_CLIENTS + super::ROOT_RESERVE);
    max_clients.min(room.max(1))
}

/// Connections open now: in all, per uid, of root, and of callers being refused.
#[derive(Default)]
pub(super) struct Conns {
    total: usize,
    per_uid: HashMap<u32, usize>,
    root: usize,
    refused: usize,
}

/// Which count a connection holds a place in.
#[derive(Clone, Copy)]
pub(super) enum Place {
    Uid(u32),
    Root,
    Refused,
}

/// A connection's place, given back when its thread ends, however it ends (a panic too).
pub(super) struct Slot {
    conns: Arc<Mutex<Conns>>,
    place: Place,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        match self.place {
            Place::Uid(uid) => {
                c.total = c.total.saturating_sub(1);
                if let Some(n) = c.per_uid.get_mut(&uid) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        c.per_uid.remove(&uid);
                    }
                }
            }
            Place::Root => {
                c.total = c.total.saturating_sub(1);
                c.root = c.root.saturating_sub(1);
            }
            Place::Refused => c.refused = c.refused.saturating_sub(1),
        }
    }
}

/// Takes a place for a connection, or says why there is none.
pub(super) fn admit(
    conns: &Arc<Mutex<Conns>>,
    place: Place,
    max_clients: usize,
    per_uid: usize,
) -> std::result::Result<Slot, String> {
    let mut c = conns.lock().unwrap_or_else(|p| p.into_inner());
    match place {
        Place::Uid(uid) => {
            let mine = c.per_uid.get(&uid).copied().unwrap_or(0);
            if c.total >= max_clients {
                return Err(format!(
                    "too many clients (the limit is {max_clients}); try again later"
                ));
            }
            if mine >= per_uid {
                return Err(format!(
                    "too many connections of uid {uid} (the limit is {per_uid} per uid); \
                     try again later"
                ));
            }
            c.total += 1;
            *c.per_uid.entry(uid).or_insert(0) += 1;
        }
        Place::Root => {
            // Root takes a client place while there is one, else one of its reserve.
            if c.total >= max_clients + super::ROOT_RESERVE {
                return Err(format!(
                    "too many clients (the limit is {max_clients}); try again later"
                ));
            }
            c.total += 1;
            c.root += 1;
        }
        Place::Refused => {
            if c.refused >= super::REFUSED_CLIENTS {
                return Err("too many connections refused at once; closing".into());
            }
            c.refused += 1;
        }
    }
    Ok(Slot {
        conns: conns.clone(),
        place,
    })
}

/// Permits for lines longer than [`super::SMALL_LINE`]: [`super::LARGE_LINES`] in all, one
/// per uid.
#[derive(Default)]
pub(super) struct Large {
    holders: Mutex<Vec<u32>>,
}

impl Large {
    fn take(&self, uid: u32) -> bool {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        if h.len() >= super::LARGE_LINES || h.contains(&uid) {
            return false;
        }
        h.push(uid);
        true
    }
    fn give_back(&self, uid: u32) {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = h.iter().position(|u| *u == uid) {
            h.swap_remove(i);
        }
    }
}

/// What a connection's reading is held to: timeouts, and permits for long lines.
pub(super) trait Gate {
    /// Before each read: `mid_line` when part of a line has arrived.
    fn before_read(&mut self, mid_line: bool) -> std::io::Result<()>;
    /// Whether the line may grow to `len` bytes (`false`: it is refused and dropped).
    fn may_grow(&mut self, len: usize) -> bool;
    /// The line was taken whole (or dropped): the next one starts.
    fn line_done(&mut self);
}

/// Standard input: no timeouts (the caller is the one who started the service), no permits.
pub(super) struct NoGate;

impl Gate for NoGate {
    fn before_read(&mut self, _: bool) -> std::io::Result<()> {
        Ok(())
    }
    fn may_grow(&mut self, _: usize) -> bool {
        true
    }
    fn line_done(&mut self) {}
}

/// A socket connection's: an idle timeout between lines, one for a started line to arrive
/// whole (a fixed deadline, however slowly its bytes come), and a [`Large`] permit for a line
/// past [`super::SMALL_LINE`] (root's lines need none: `uid` is `None`).
pub(super) struct SocketGate {
    pub(super) stream: Option<UnixStream>,
    pub(super) idle: Option<Duration>,
    pub(super) line: Duration,
    pub(super) deadline: Option<Instant>,
    pub(super) large: Arc<Large>,
    pub(super) uid: Option<u32>,
    pub(super) holds: bool,
    /// The deadline is the connection's, not its line's (a refused caller's whole life).
    pub(super) fixed: bool,
}

impl Gate for SocketGate {
    fn before_read(&mut self, mid_line: bool) -> std::io::Result<()> {
        let now = Instant::now();
        let timeout = match (mid_line, self.deadline) {
            (_, Some(d)) => Some(d.saturating_duration_since(now)),
            (true, None) => {
                self.deadline = Some(now + self.line);
                Some(self.line)
            }
            (false, None) => self.idle,
        };
        if timeout.is_some_and(|t| t.is_zero()) {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        match &self.stream {
            Some(s) => s.set_read_timeout(timeout),
            None => Ok(()),
        }
    }
    fn may_grow(&mut self, len: usize) -> bool {
        if len <= super::SMALL_LINE || self.holds {
            return true;
        }
        match self.uid {
            None => true,
            Some(uid) => {
                self.holds = self.large.take(uid);
                self.holds
            }
        }
    }
    fn line_done(&mut self) {
        // A refused caller's deadline is its connection's, and stays.
        if !self.fixed {
            self.deadline = None;
        }
        if self.holds
            && let Some(uid) = self.uid
        {
            self.large.give_back(uid);
            self.holds = false;
        }
    }
}

impl Drop for SocketGate {
    fn drop(&mut self) {
        self.line_done();
    }
}

/// A line read with a bound: its bytes, or why it was dropped unread.
pub(super) enum Line {
    /// A whole line.
    Text(Vec<u8>),
    TooLong,
    /// Past [`super::SMALL_LINE`] with no permit for a long line free.
    Busy,
}

/// Reads up to the next newline (dropped), at most `max` bytes kept; `None` at the end. A line
/// over the bound, or one the gate will not let grow, is read to its end and dropped.
pub(super) fn read_line(
    r: &mut impl BufRead,
    max: usize,
    gate: &mut dyn Gate,
) -> std::io::Result<Option<Line>> {
    gate.line_done();
    let mut line = Vec::new();
    let mut dropped: Option<Line> = None;
    let mut any = false;
    loop {
        gate.before_read(any)?;
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(match (any, dropped) {
                (false, _) => None,
                (true, Some(d)) => Some(d),
                (true, None) => Some(Line::Text(line)),
            });
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if dropped.is_none() {
            let len = line.len() + chunk.len();
            if len > max {
                dropped = Some(Line::TooLong);
                line = Vec::new();
            } else if !gate.may_grow(len) {
                dropped = Some(Line::Busy);
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(Some(dropped.unwrap_or(Line::Text(line))));
        }
    }
}

/// The `id` of a line for an error response: read only from a short line (a long one's may
/// cost more to parse than it is worth answering).
pub(super) fn short_id(line: &[u8]) -> Value {
    if line.len() <= super::SMALL_LINE {
        request::id_of(line)
    } else {
        Value::Null
    }
}

/// The JSON structure a line holds (`[`, `{`, `,` and `:` outside strings): about one for
/// each value it parses into.
pub(super) fn json_tokens(line: &[u8]) -> usize {
    let (mut n, mut in_str, mut esc) = (0usize, false, false);
    for &b in line {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_str = true,
                b'[' | b'{' | b',' | b':' => n += 1,
                _ => {}
            }
        }
    }
    n
}

/// Parses a request line, with its memory bounded by its size: at most 4,096 JSON values
/// plus one per 4 bytes (a real request needs far fewer: `["-t","nat","-N","x"]` is 5 bytes a
/// value), counted before it is parsed, and an `id` of at most [`super::MAX_ID_BYTES`].
pub(super) fn parse_bounded(t: &[u8]) -> std::result::Result<Request, Value> {
    let tokens = json_tokens(t);
    let bound = 4096 + t.len() / 4;
    if tokens > bound {
        return Err(request::error_response(
            &Value::Null,
            &Error::InvalidInput(format!(
                "invalid request: {tokens} JSON values in {} bytes (at most {bound}); nothing \
                 was done",
                t.len()
            )),
        ));
    }
    let req = request::parse(t).map_err(|e| request::error_response(&short_id(t), &e))?;
    let id_len = serde_json::to_string(&req.id).map_or(usize::MAX, |s| s.len());
    if id_len > super::MAX_ID_BYTES {
        return Err(request::error_response(
            &Value::Null,
            &Error::InvalidInput(format!(
                "invalid request: its id is {id_len} bytes of JSON (at most {}); nothing was \
                 done",
                super::MAX_ID_BYTES
            )),
        ));
    }
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_the_rest_of_a_long_one_is_skipped() {
        let data = b"abc\n0123456789ABC\nxy\nlast";
        let mut r = std::io::BufReader::with_capacity(4, &data[..]);
        let mut got = Vec::new();
        while let Some(l) = read_line(&mut r, 8, &mut NoGate).unwrap() {
            got.push(match l {
                Line::Text(t) => String::from_utf8(t).unwrap(),
                Line::TooLong | Line::Busy => "<long>".into(),
            });
        }
        assert_eq!(got, ["abc", "<long>", "xy", "last"]);
    }
    #[test]
    fn a_panic_is_an_error_and_a_panicking_client_thread_frees_its_place() {
        let conns = Arc::new(Mutex::new(Conns::default()));
        let slot = admit(&conns, Place::Uid(1001), 2, 1).unwrap();
        // One per uid: a second of 1001 is refused, another uid's is not.
        let why = admit(&conns, Place::Uid(1001), 2, 1).err().unwrap();
        assert!(why.contains("uid 1001"), "{why}");
        let other = admit(&conns, Place::Uid(1002), 2, 1).unwrap();
        assert!(admit(&conns, Place::Uid(1003), 2, 1).is_err(), "full");
        // Root has places of its own past the limit.
        let roots: Vec<Slot> = (0..crate::serve::ROOT_RESERVE)
            .map(|_| admit(&conns, Place::Root, 2, 1).unwrap())
            .collect();
        assert!(admit(&conns, Place::Root, 2, 1).is_err());
        drop(roots);
        // A thread that panics holding its place gives it back.
        let t = std::thread::spawn(move || {
            let _slot = slot;
            panic!("client bug");
        });
        assert!(t.join().is_err());
        assert!(admit(&conns, Place::Uid(1001), 2, 1).is_ok());
        drop(other);
        let c = conns.lock().unwrap();
        assert_eq!((c.total, c.root, c.per_uid.len()), (0, 0, 0));
    }

    #[test]
    fn long_lines_need_a_permit_one_per_uid_and_are_dropped_without_one() {
        let large = Arc::new(Large::default());
        let gate = |uid| SocketGate {
            stream: None,
            idle: None,
            line: Duration::from_secs(30),
            deadline: None,
            large: large.clone(),
            uid,
            holds: false,
            fixed: false,
        };
        let long = vec![b'x'; crate::serve::SMALL_LINE + 10];
        let mut data = long.clone();
        data.extend_from_slice(b"\n{}\n");
        let read = |g: &mut SocketGate| {
            let mut r = std::io::BufReader::with_capacity(4096, &data[..]);
            let first = read_line(&mut r, 1 << 20, g).unwrap().unwrap();
            let second = read_line(&mut r, 1 << 20, g).unwrap().unwrap();
            (first, second)
        };
        let mut a = gate(Some(1001));
        assert!(a.may_grow(crate::serve::SMALL_LINE + 1));
        // 1001 holds its permit: its other connection's long line is dropped, not held.
        let mut b = gate(Some(1001));
        let (first, second) = read(&mut b);
        assert!(matches!(first, Line::Busy));
        assert!(matches!(second, Line::Text(t) if t == b"{}"));
        a.line_done();
        let (first, _) = read(&mut b);
        assert!(matches!(first, Line::Text(t) if t.len() == long.len()));
        // The permits run out across uids; root's lines need none.
        let mut held: Vec<SocketGate> = (0..crate::serve::LARGE_LINES as u32)
            .map(|u| {
                let mut g = gate(Some(2000 + u));
                assert!(g.may_grow(crate::serve::SMALL_LINE + 1));
                g
            })
            .collect();
        assert!(matches!(read(&mut gate(Some(3000))).0, Line::Busy));
        assert!(matches!(read(&mut gate(None)).0, Line::Text(_)));
        held.clear();
        assert!(matches!(read(&mut gate(Some(3000))).0, Line::Text(_)));
    }

    #[test]
    fn request_memory_is_bounded_by_its_size_before_it_is_parsed() {
        assert_eq!(json_tokens(br#"{"a":[1,2],"b":"x,[{:"}"#), 6);
        assert_eq!(json_tokens(br#"["a\"[,", 1]"#), 2);
        // 4 million zeros as an id: refused by counting, not by parsing.
        let mut line = b"{\"id\":[0".to_vec();
        for _ in 0..100_000 {
            line.extend_from_slice(b",0");
        }
        line.extend_from_slice(b"],\"ping\":{}}");
        let e = parse_bounded(&line).err().unwrap();
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("JSON values"),
            "{e}"
        );
        let big_id = format!("{{\"id\":\"{}\",\"ping\":{{}}}}", "z".repeat(2000));
        let e = parse_bounded(big_id.as_bytes()).err().unwrap();
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("its id is"),
            "{e}"
        );
        assert!(parse_bounded(br#"{"id":[1,2,3],"iptables":["-t","nat","-N","x"]}"#).is_ok());
        // Nesting is bounded by the parser (128 levels): an error, not a stack overflow.
        let deep = format!(
            "{{\"id\":{}0{},\"ping\":{{}}}}",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(parse_bounded(deep.as_bytes()).is_err());
    }

    #[test]
    fn max_clients_is_lowered_to_what_the_descriptor_limit_allows() {
        assert_eq!(clamp_clients(256, None), 256);
        assert_eq!(clamp_clients(256, Some(1 << 20)), 256);
        // 1024: (1024 - 256) / 2 - 16 - 16 = 352.
        assert_eq!(clamp_clients(1000, Some(1024)), 352);
        assert_eq!(clamp_clients(10, Some(5)), 1);
        assert!(fd_limit().is_some_and(|n| n > 0));
    }
}
