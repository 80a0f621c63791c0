//! The conversion behind `iptables-xml` (cli/xml.rs): iptables-save lines in, iptables'
//! XML out, with iptables 1.8.9's tokenizer, tags, indentation and messages.

use std::io::Write;

/// A failed conversion: what goes to stderr, and the exit status.
#[derive(Debug)]
pub struct Failure {
    pub message: Vec<u8>,
    pub status: i32,
}

struct Chain {
    name: Vec<u8>,
    policy: Vec<u8>,
    counters: (u64, u64),
    created: bool,
}

/// The state iptables-xml keeps between lines.
pub struct Converter {
    combine: bool,
    verbose: bool,
    close_action: bool,
    close_rule: bool,
    table: Vec<u8>,
    chain: Vec<u8>,
    chains: Vec<Chain>,
    old: Vec<Vec<u8>>,
    line: u32,
    /// The last counters a chain line gave (iptables reuses them when one gives none).
    counters: (u64, u64),
}

type Arg = (Vec<u8>, bool);

fn encode(out: &mut Vec<u8>, text: &[u8]) {
    for &b in text {
        match b {
            127.. => {
                let _ = write!(out, "&#{b};");
            }
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(b),
        }
    }
}

fn comment_escape(out: &mut Vec<u8>, text: &[u8]) {
    let mut hyphens = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'-' {
            hyphens += 1;
            if hyphens >= 2 {
                hyphens = 0;
                out.push(b' ');
            }
            out.push(b'*');
        }
        if !(b == b'\n' && i + 1 == text.len()) {
            out.push(b);
        }
    }
}

fn comment(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(b"<!-- ");
    comment_escape(out, text);
    out.extend_from_slice(b" -->\n");
}

fn attr(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    let _ = write!(out, "{name}=\"");
    encode(out, value);
    out.extend_from_slice(b"\" ");
}

fn is_target(a: &[u8]) -> bool {
    matches!(a, b"-j" | b"--jump" | b"-g" | b"--goto")
}

fn is_module(a: &[u8]) -> bool {
    matches!(a, b"-m" | b"--module")
}

/// C's strtok on a NUL-terminated buffer: the token's range, and where the next call starts.
fn strtok(buf: &mut [u8], from: usize, delims: &[u8]) -> Option<(usize, usize, usize)> {
    let end_of = |i: usize| i >= buf.len() || buf[i] == 0;
    let mut s = from;
    while !end_of(s) && delims.contains(&buf[s]) {
        s += 1;
    }
    if end_of(s) {
        return None;
    }
    let mut e = s;
    while !end_of(e) && !delims.contains(&buf[e]) {
        e += 1;
    }
    let next = if end_of(e) {
        e
    } else {
        buf[e] = 0;
        e + 1
    };
    Some((s, e, next))
}

/// sscanf(s, "[%llu:%llu]"): assigns what it converts and leaves the rest as they were
/// (iptables keeps the counters of a previous chain line when a later one has none that
/// parse). `%llu` is strtoull's: a sign is taken, `-N` wraps, overflow saturates.
fn scan_counters(s: &[u8], c: &mut (u64, u64)) {
    fn num(s: &[u8]) -> Option<(u64, usize)> {
        let mut i = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let negative = s.get(i) == Some(&b'-');
        if matches!(s.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let digits = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let v = s[i..i + digits].iter().try_fold(0u64, |v, d| {
            v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        });
        let v = v.map_or(u64::MAX, |v| if negative { v.wrapping_neg() } else { v });
        Some((v, i + digits))
    }
    let Some(rest) = s.strip_prefix(b"[") else {
        return;
    };
    let Some((p, n)) = num(rest) else { return };
    c.0 = p;
    let Some(rest) = rest[n..].strip_prefix(b":") else {
        return;
    };
    if let Some((b, _)) = num(rest) {
        c.1 = b;
    }
}

/// iptables' add_param_to_argv: words, quotes, and backslash escapes inside quotes; a word
/// of 1024 bytes or more, or a 255th word, is iptables' parameter problem.
fn tokenize(s: &[u8]) -> Result<Vec<Arg>, &'static str> {
    const PARAM_MAX: usize = 1023;
    const ARGC_MAX: usize = 254;
    fn push(param: &mut Vec<u8>, c: u8) -> Result<(), &'static str> {
        if param.len() >= PARAM_MAX {
            return Err("Parameter too long!");
        }
        param.push(c);
        Ok(())
    }
    fn add(args: &mut Vec<Arg>, param: Vec<u8>, quoted: bool) -> Result<(), &'static str> {
        if args.len() >= ARGC_MAX {
            return Err("Parser cannot handle more arguments");
        }
        args.push((param, quoted));
        Ok(())
    }
    let mut args = Vec::new();
    let (mut open, mut escaped, mut quoted) = (false, false, false);
    let mut param = Vec::new();
    for &c in s {
        // Where the counters' strtok ended a C string (`[12] -A X:y`).
        if c == 0 {
            break;
        }
        if open {
            if escaped {
                push(&mut param, c)?;
                escaped = false;
                continue;
            } else if c == b'\\' {
                escaped = true;
                continue;
            } else if c != b'"' {
                push(&mut param, c)?;
                continue;
            }
            open = false;
        } else if c == b'"' {
            open = true;
            quoted = true;
            continue;
        }
        match c {
            b'"' => {}
            b' ' | b'\t' | b'\n' => {
                if param.is_empty() {
                    continue;
                }
            }
            _ => {
                push(&mut param, c)?;
                continue;
            }
        }
        add(&mut args, std::mem::take(&mut param), quoted)?;
        quoted = false;
    }
    if !param.is_empty() {
        add(&mut args, param, false)?;
    }
    Ok(args)
}

/// fgets(buffer, 10240): lines, a longer one in pieces of 10239 bytes; each as C reads it,
/// up to a NUL byte.
fn lines(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    const FGETS_MAX: usize = 10239;
    let mut rest = input;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .take(FGETS_MAX)
            .position(|&b| b == b'\n')
            .map_or(FGETS_MAX.min(rest.len()), |i| i + 1);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece.split(|&b| b == 0).next().unwrap_or(&[]))
    })
}

impl Converter {
    /// A converter with iptables-xml's `-c` and `-v` settings.
    pub fn new(combine: bool, verbose: bool) -> Self {
        Converter {
            combine,
            verbose,
            close_action: false,
            close_rule: false,
            table: Vec::new(),
            chain: Vec::new(),
            chains: Vec::new(),
            old: Vec::new(),
            line: 0,
            counters: (0, 0),
        }
    }

    fn problem(&self, msg: &str) -> Failure {
        Failure {
            message: format!(
                "iptables-xml v1.8.9: {msg}\nError occurred at line: {}\nTry `iptables-xml -h' or 'iptables-xml --help' for more information.\n",
                self.line
            )
            .into_bytes(),
            status: 2,
        }
    }

    fn fail(msg: String) -> Failure {
        Failure {
            message: msg.into_bytes(),
            status: 1,
        }
    }

    fn close_tags(&mut self, out: &mut Vec<u8>) {
        if self.close_action {
            out.extend_from_slice(b"       </actions>\n\n");
        }
        self.close_action = false;
        if self.close_rule {
            out.extend_from_slice(b"      </rule>\n\n");
        }
        self.close_rule = false;
    }

    fn close_chain(&mut self, out: &mut Vec<u8>) {
        if self.chain.is_empty() {
            return;
        }
        self.close_tags(out);
        out.extend_from_slice(b"    </chain>\n");
        self.chain.clear();
    }

    fn open_chain(&mut self, out: &mut Vec<u8>, i: usize, close: bool) {
        self.close_chain(out);
        let c = &self.chains[i];
        // iptables keeps the current chain's name in 32 bytes (XT_TABLE_MAXNAMELEN).
        self.chain = c.name[..c.name.len().min(32)].to_vec();
        out.extend_from_slice(b"    <chain ");
        attr(out, "name", &self.chain);
        if c.policy != b"-" {
            attr(out, "policy", &c.policy);
        }
        let _ = write!(
            out,
            "packet-count=\"{}\" byte-count=\"{}\" ",
            c.counters.0 as i64, c.counters.1 as i64
        );
        if close {
            out.push(b'/');
            self.chain.clear();
        }
        out.extend_from_slice(b">\n");
    }

    fn close_table(&mut self, out: &mut Vec<u8>) {
        self.close_chain(out);
        for i in 0..self.chains.len() {
            if !self.chains[i].created {
                self.open_chain(out, i, true);
            }
        }
        self.chains.clear();
        if !self.table.is_empty() {
            out.extend_from_slice(b"  </table>\n");
        }
        self.table.clear();
    }

    fn exists_chain(&self, name: &[u8]) -> bool {
        self.chain == name || self.chains.iter().any(|c| c.name == name)
    }

    /// Converts `input` into `out` (between the `<iptables-rules>` tags).
    pub fn convert(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), Failure> {
        for raw in lines(input) {
            self.line += 1;
            if raw.first() == Some(&b'\n') {
                continue;
            } else if raw.first() == Some(&b'#') {
                comment(out, raw);
                continue;
            }
            if self.verbose {
                let _ = write!(out, "<!-- line {} ", self.line);
                comment_escape(out, raw);
                out.extend_from_slice(b" -->\n");
            }
            let mut buf = raw.to_vec();
            if raw == b"COMMIT\n" && !self.table.is_empty() {
                self.close_table(out);
            } else if raw.first() == Some(&b'*') {
                let Some((s, e, _)) = strtok(&mut buf, 1, b" \t\n") else {
                    let line = self.line;
                    return Err(
                        self.problem(&format!("iptables-xml: line {line} table name invalid"))
                    );
                };
                self.close_table(out);
                self.table = buf[s..e.min(s + 32)].to_vec();
                out.extend_from_slice(b"  <table ");
                attr(out, "name", &self.table);
                out.extend_from_slice(b">\n");
            } else if raw.first() == Some(&b':') && !self.table.is_empty() {
                let line = self.line;
                let Some((s, e, next)) = strtok(&mut buf, 1, b" \t\n") else {
                    return Err(
                        self.problem(&format!("iptables-xml: line {line} chain name invalid"))
                    );
                };
                let name = buf[s..e].to_vec();
                let Some((ps, pe, next)) = strtok(&mut buf, next, b" \t\n") else {
                    return Err(self.problem(&format!("iptables-xml: line {line} policy invalid")));
                };
                let policy = buf[ps..pe].to_vec();
                if let Some((cs, ce, _)) = strtok(&mut buf, next, b" \t\n") {
                    scan_counters(&buf[cs..ce], &mut self.counters);
                }
                let counters = self.counters;
                self.chains.push(Chain {
                    name,
                    policy,
                    counters,
                    created: false,
                });
            } else if !self.table.is_empty() {
                self.rule_line(&mut buf, out)?;
            } else {
                return Err(Self::fail(format!(
                    "iptables-xml: line {} failed\n",
                    self.line
                )));
            }
        }
        if !self.table.is_empty() {
            return Err(Self::fail(format!(
                "iptables-xml: COMMIT expected at line {}\n",
                self.line + 1
            )));
        }
        Ok(())
    }

    fn rule_line(&mut self, buf: &mut [u8], out: &mut Vec<u8>) -> Result<(), Failure> {
        let line = self.line;
        let mut start = 0;
        let mut counters = None;
        if buf.first() == Some(&b'[') {
            let Some(close) = buf.iter().position(|&b| b == b']') else {
                return Err(self.problem(&format!("Bad line {line}: need ]")));
            };
            let Some((ps, pe, next)) = strtok(buf, 1, b":") else {
                return Err(self.problem(&format!("Bad line {line}: need :")));
            };
            let Some((bs, be, _)) = strtok(buf, next, b"]") else {
                return Err(self.problem(&format!("Bad line {line}: need ]")));
            };
            counters = Some((buf[ps..pe].to_vec(), buf[bs..be].to_vec()));
            start = close + 1;
        }
        let args = tokenize(&buf[start..]).map_err(|msg| self.problem(msg))?;
        // The word after the first `-A` (quoted or not) names the chain.
        let chain = args
            .windows(2)
            .find(|w| w[0].0 == b"-A")
            .map(|w| w[1].0.clone());
        let Some(chain) = chain else {
            return Err(Self::fail(format!(
                "iptables-xml: line {line} failed - no chain found\n"
            )));
        };
        // iptables' needChain opens every declaration of the name, in turn.
        if self.chain != chain {
            for i in 0..self.chains.len() {
                if self.chains[i].name == chain {
                    self.open_chain(out, i, false);
                    self.chains[i].created = true;
                }
            }
        }
        self.rule(out, counters, &args);
        self.old = args.into_iter().map(|a| a.0).collect();
        Ok(())
    }

    /// iptables' compareRules: the same words up to both targets, and the previous rule's
    /// action did not end it (a terminating verdict or a goto).
    fn same_conditions(&self, new: &[Arg]) -> bool {
        for (i, (o, n)) in self.old.iter().zip(new).enumerate() {
            if is_target(o) && is_target(&n.0) {
                let terminating = (o == b"-j" || o == b"--jump")
                    && self.old.get(i + 1).is_some_and(|t| {
                        matches!(t.as_slice(), b"ACCEPT" | b"DROP" | b"QUEUE" | b"RETURN")
                    });
                return !(terminating || o == b"-g" || o == b"--goto");
            }
            if *o != n.0 {
                return false;
            }
        }
        false
    }

    fn rule(&mut self, out: &mut Vec<u8>, counters: Option<(Vec<u8>, Vec<u8>)>, args: &[Arg]) {
        if self.combine && args.len() > 2 && !is_target(&args[2].0) && self.same_conditions(args) {
            comment(out, b"Combine action from next rule");
        } else {
            self.close_tags(out);
            out.extend_from_slice(b"      <rule ");
            if let Some((p, b)) = &counters {
                attr(out, "packet-count", p);
                attr(out, "byte-count", b);
            }
            out.extend_from_slice(b">\n");
            self.close_rule = true;
            if args.len() >= 3 && !is_target(&args[2].0) {
                out.extend_from_slice(b"       <conditions>\n");
                self.rule_part(out, true, args);
                out.extend_from_slice(b"       </conditions>\n");
            }
        }
        if !self.close_action {
            out.extend_from_slice(b"       <actions>\n");
            self.close_action = true;
        }
        self.rule_part(out, false, args);
    }

    /// iptables' do_rule_part: `conditions` writes up to the target, else from it on.
    fn rule_part(&self, out: &mut Vec<u8>, conditions: bool, args: &[Arg]) {
        const IND1: &[u8] = b"        ";
        const IND2: &[u8] = b"          ";
        let argc = args.len();
        let mut arg = 2;
        let mut invert = false;
        let mut spacer: &[u8] = b"";
        let mut level1: Option<&[u8]> = None;
        let mut level2: Option<&[u8]> = None;
        let open = |out: &mut Vec<u8>, ind: &[u8], tag: &[u8]| {
            out.extend_from_slice(ind);
            out.push(b'<');
            out.extend_from_slice(tag);
            out.push(b' ');
        };
        let close = |out: &mut Vec<u8>, level: &mut Option<&[u8]>| {
            if let Some(t) = level.take() {
                out.extend_from_slice(b"</");
                out.extend_from_slice(t);
                out.extend_from_slice(b">\n");
            }
        };
        if !conditions {
            while arg < argc && (args[arg].1 || !is_target(&args[arg].0)) {
                arg += 1;
            }
        }
        let i = if arg < argc && args[arg].0 == b"!" {
            arg + 1
        } else {
            arg
        };
        if i < argc
            && args[i].0.first() == Some(&b'-')
            && !is_target(&args[i].0)
            && args[i].0 != b"-m"
        {
            level1 = Some(b"match");
            open(out, IND1, b"match");
            out.extend_from_slice(b">\n");
        }
        let starts_dash = |k: usize| args[k].0.first() == Some(&b'-');
        while arg < argc {
            let (a, q) = (&args[arg].0, args[arg].1);
            if conditions && !q && is_target(a) {
                break;
            } else if !q && a == b"!" {
                if arg + 1 < argc && starts_dash(arg + 1) {
                    invert = true;
                } else {
                    out.extend_from_slice(spacer);
                    out.extend_from_slice(a);
                }
                spacer = b" ";
            } else if !q && is_target(a) && arg + 1 < argc && self.exists_chain(&args[arg + 1].0) {
                close(out, &mut level2);
                if level1.is_some() {
                    out.extend_from_slice(IND1);
                }
                close(out, &mut level1);
                spacer = b"";
                invert = false;
                let tag: &[u8] = if a == b"-g" || a == b"--goto" {
                    b"goto"
                } else {
                    b"call"
                };
                open(out, IND1, tag);
                level1 = Some(tag);
                out.extend_from_slice(b">\n");
                arg += 1;
                open(out, IND2, &args[arg].0);
                out.extend_from_slice(b"/>\n");
            } else if !q && (is_target(a) || is_module(a)) {
                if arg + 1 >= argc {
                    break;
                }
                close(out, &mut level2);
                if level1.is_some() {
                    out.extend_from_slice(IND1);
                }
                close(out, &mut level1);
                spacer = b"";
                invert = false;
                arg += 1;
                open(out, IND1, &args[arg].0);
                level1 = Some(&args[arg].0);
                if arg + 1 >= argc
                    || (!args[arg + 1].1
                        && (is_target(&args[arg + 1].0) || is_module(&args[arg + 1].0)))
                {
                    out.extend_from_slice(b" />\n");
                    level1 = None;
                } else {
                    out.extend_from_slice(b">\n");
                }
            } else if !q && a.first() == Some(&b'-') {
                close(out, &mut level2);
                let tag = &a[a.iter().take_while(|&&b| b == b'-').count()..];
                spacer = b"";
                open(out, IND2, tag);
                level2 = Some(tag);
                if invert {
                    out.extend_from_slice(b" invert=\"1\"");
                }
                invert = false;
                if arg + 1 >= argc || starts_dash(arg + 1) {
                    out.extend_from_slice(b" />\n");
                    level2 = None;
                } else {
                    out.push(b'>');
                }
            } else {
                out.extend_from_slice(spacer);
                let quote = a.contains(&b' ') || q;
                if quote {
                    out.extend_from_slice(b"&quot;");
                }
                encode(out, a);
                if quote {
                    out.extend_from_slice(b"&quot;");
                }
                spacer = b" ";
            }
            arg += 1;
        }
        close(out, &mut level2);
        if level1.is_some() {
            out.extend_from_slice(IND1);
        }
        close(out, &mut level1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(text: &str, combine: bool) -> String {
        let mut out = Vec::new();
        Converter::new(combine, false)
            .convert(text.as_bytes(), &mut out)
            .map_err(|e| String::from_utf8_lossy(&e.message).into_owned())
            .expect("converts");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_rule_becomes_conditions_and_actions() {
        let out = convert(
            "*filter\n:INPUT ACCEPT [1:2]\n-A INPUT ! -s 192.0.2.1 -m comment --comment \"a <b>\" -j ACCEPT\nCOMMIT\n",
            false,
        );
        assert!(
            out.contains(
                "<chain name=\"INPUT\" policy=\"ACCEPT\" packet-count=\"1\" byte-count=\"2\" >"
            ),
            "{out}"
        );
        assert!(out.contains("<s  invert=\"1\">192.0.2.1</s>"), "{out}");
        assert!(
            out.contains("<comment >&quot;a &lt;b&gt;&quot;</comment>"),
            "{out}"
        );
        assert!(out.contains("<ACCEPT  />"), "{out}");
    }

    #[test]
    fn combine_merges_actions_until_a_terminating_target() {
        let text = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp -j LOG\n-A INPUT -p tcp -j ACCEPT\n-A INPUT -p tcp -j DROP\nCOMMIT\n";
        assert_eq!(convert(text, true).matches("<rule >").count(), 2);
        assert_eq!(convert(text, false).matches("<rule >").count(), 3);
    }

    #[test]
    fn quotes_escape_and_counters_scan_as_iptables_does() {
        assert_eq!(
            tokenize(b"-A X \"a \\\" b\" c\n").expect("tokenizes"),
            [
                (b"-A".to_vec(), false),
                (b"X".to_vec(), false),
                (b"a \" b".to_vec(), true),
                (b"c".to_vec(), false)
            ]
        );
        let mut c = (7, 8);
        scan_counters(b"[-5:x]", &mut c);
        assert_eq!(c, (u64::MAX - 4, 8));
        scan_counters(b"[99999999999999999999:+3]", &mut c);
        assert_eq!(c, (u64::MAX, 3));
    }
}
