use super::*;

fn p(s: &str) -> Result<Invocation> {
    let args: Vec<String> = split_words(s)?;
    parse(&args, Family::Ipv4)
}

fn spec(s: &str) -> String {
    match p(s).unwrap().command {
        Command::Append { chain, rule } | Command::Insert { chain, rule, .. } => {
            crate::ipt::print::append_line(&chain, &rule, false)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nat_host_commands_parse_in_any_option_order() {
    let s = spec(
        "--insert vcld-5205 --table nat --in-interface eth1 --protocol tcp --match comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" --match tcp --destination-port 50443 --jump DNAT --to-destination 10.1.2.3:3389",
    );
    assert_eq!(
        s,
        "-A vcld-5205 -i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" -m tcp --dport 50443 -j DNAT --to-destination 10.1.2.3:3389"
    );
    let s = spec(
        "--insert vcl-nat_host --table filter --destination 152.1.1.1 --in-interface eth1 --jump ACCEPT --protocol tcp --match comment --comment \"c\" --match multiport --destination-ports 5700:6500,9696:9701,49152:65535 --match state --state NEW,RELATED,ESTABLISHED",
    );
    assert_eq!(
        s,
        "-A vcl-nat_host -d 152.1.1.1/32 -i eth1 -p tcp -m comment --comment c -m multiport --dports 5700:6500,9696:9701,49152:65535 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT"
    );
    let s = spec(
        "--insert vcl-nat_host --table nat ! --destination 10.0.0.0/20 --jump MASQUERADE --out-interface eth1",
    );
    assert_eq!(s, "-A vcl-nat_host ! -d 10.0.0.0/20 -o eth1 -j MASQUERADE");
}

#[test]
fn implicit_tcp_match_goes_where_its_first_option_is() {
    assert_eq!(
        spec("-A INPUT -p tcp --dport 80 -m comment --comment x -j DROP"),
        "-A INPUT -p tcp -m tcp --dport 80 -m comment --comment x -j DROP"
    );
    assert_eq!(
        spec("-A INPUT -p tcp ! --sport 1:1024 -j ACCEPT"),
        "-A INPUT -p tcp -m tcp ! --sport 1:1024 -j ACCEPT"
    );
}

#[test]
fn commands_and_errors() {
    assert!(
        matches!(p("-t nat -N vcld-1").unwrap().command, Command::NewChain(c) if c == "vcld-1")
    );
    assert!(matches!(p("-F").unwrap().command, Command::Flush(None)));
    assert!(matches!(
        p("-I INPUT 3 -j ACCEPT").unwrap().command,
        Command::Insert { index: 3, .. }
    ));
    assert!(matches!(
        p("-D INPUT 2").unwrap().command,
        Command::DeleteIndex { index: 2, .. }
    ));
    assert_eq!(p("-w -F").unwrap().wait, WaitPolicy::Forever);
    assert_eq!(
        p("-w 5 -F").unwrap().wait,
        WaitPolicy::Timeout(Duration::from_secs(5))
    );
    assert_eq!(p("-F -w").unwrap().wait, WaitPolicy::Forever);
    for (cmd, needle) in [
        (
            "-A INPUT --dport 80 -j ACCEPT",
            "unknown option \"--dport\"",
        ),
        ("-A INPUT -p tcp --bogus", "unknown option \"--bogus\""),
        ("-A INPUT -F", "Can't use -F with -A"),
        ("-A INPUT -o eth0 -j ACCEPT", "Can't use -o with INPUT"),
        (
            "-A INPUT -p tcp --dport 65536 -j ACCEPT",
            "invalid port/service `65536'",
        ),
        (
            "-A INPUT -p tcp --dport 2000:1000 -j ACCEPT",
            "invalid portrange",
        ),
        (
            "-A INPUT -s 300.1.1.1 -j ACCEPT",
            "host/network `300.1.1.1' not found",
        ),
        ("-A INPUT -m foo -j ACCEPT", "Couldn't load match `foo'"),
        ("-A INPUT -j DNAT", "--to-destination\" must be specified"),
        (
            "-A INPUT -j REJECT --reject-with tcp-reset",
            "TCP_RESET invalid",
        ),
        ("-N ACCEPT", "clash"),
        (
            "-A INPUT -m multiport --dports 1,2 -j ACCEPT",
            "multiport needs",
        ),
        ("-A", "requires an argument"),
        ("", "no command"),
    ] {
        let err = p(cmd).unwrap_err();
        assert!(err.to_string().contains(needle), "{cmd}: {err}");
        assert_eq!(err.exit_status(), 2, "{cmd}");
    }
}

/// `split_words` as it was, a character at a time: the reference for the one that copies
/// runs of plain characters a slice at a time.
fn split_words_by_char(line: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => match chars.next() {
                Some(e) => cur.push(e),
                None => return Err(bad("a backslash ends the line")),
            },
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(bad("unterminated quote"));
    }
    if any {
        out.push(cur);
    }
    Ok(out)
}

#[test]
fn words_split_a_slice_at_a_time_are_the_words_split_a_character_at_a_time() {
    // Every piece that matters to the split: blanks ASCII and not, quotes, backslashes,
    // characters of two, three and four bytes. 20,000 lines made of them (a fixed
    // pseudo-random sequence), and some written out.
    let pieces = [
        "a",
        "-A",
        "--dport",
        " ",
        "  ",
        "\t",
        "\r",
        "\u{b}",
        "\u{c}",
        "\n",
        "\"",
        "\\",
        "\u{a0}",
        "\u{85}",
        "\u{3000}",
        "\u{2003}",
        "é",
        "€",
        "😀",
        "x y",
        "1.2.3.4/32",
    ];
    let mut lines: Vec<String> = [
        "",
        " ",
        "-A c -m comment --comment \"a \\\"b\\\" c\" -j ACCEPT",
        "\"\"",
        "a\u{a0}b",
        "\"a\u{a0}b\"",
        "\"x\\",
        "\"open",
        "a\\b \"c\\\\d\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..20_000 {
        let mut l = String::new();
        for _ in 0..(seed % 12) {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            l.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        lines.push(l);
    }
    let mut failed = 0;
    for l in &lines {
        let (new, old) = (split_words(l), split_words_by_char(l));
        match (&new, &old) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{l:?}"),
            (Err(a), Err(b)) => {
                failed += 1;
                assert_eq!(a.to_string(), b.to_string(), "{l:?}");
            }
            _ => panic!("{l:?}: {new:?} against {old:?}"),
        }
    }
    assert!(
        failed > 100 && failed < lines.len() - 100,
        "{failed} of {}",
        lines.len()
    );
}
