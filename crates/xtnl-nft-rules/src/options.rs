//! The headers and options `exthdr` reads and writes, as nft names them (nftables'
//! src/exthdr.c, src/tcpopt.c, src/ipopt.c): IPv6 extension headers (`{"exthdr": ...}`), TCP
//! options (`{"tcp option": ...}`), IPv4 options (`{"ip option": ...}`), with their
//! byte-aligned fields.

use xtnl_nft_json::{ExprObject, Exthdr as JExthdr};
use xtnl_wire::expr::Exthdr;

/// One header or option: the `exthdr` op, its JSON key, name, number and fields (name,
/// offset, length in bytes).
pub(crate) struct Opt {
    pub op: u32,
    pub json: &'static str,
    pub name: &'static str,
    pub kind: u8,
    pub fields: &'static [(&'static str, u32, u32)],
}

const fn o(
    op: u32,
    json: &'static str,
    name: &'static str,
    kind: u8,
    fields: &'static [(&'static str, u32, u32)],
) -> Opt {
    Opt {
        op,
        json,
        name,
        kind,
        fields,
    }
}

const V6: u32 = Exthdr::OP_IPV6;
const TCP: u32 = Exthdr::OP_TCPOPT;
const V4: u32 = Exthdr::OP_IPV4;
const NH: &[(&str, u32, u32)] = &[("nexthdr", 0, 1), ("hdrlength", 1, 1)];
const KL: &[(&str, u32, u32)] = &[("kind", 0, 1), ("length", 1, 1)];

pub(crate) const OPTS: &[Opt] = &[
    o(V6, "exthdr", "hbh", 0, NH),
    o(
        V6,
        "exthdr",
        "rt",
        43,
        &[
            ("nexthdr", 0, 1),
            ("hdrlength", 1, 1),
            ("type", 2, 1),
            ("seg-left", 3, 1),
        ],
    ),
    o(
        V6,
        "exthdr",
        "frag",
        44,
        &[("nexthdr", 0, 1), ("reserved", 1, 1), ("id", 4, 4)],
    ),
    o(V6, "exthdr", "dst", 60, NH),
    o(
        V6,
        "exthdr",
        "mh",
        135,
        &[
            ("nexthdr", 0, 1),
            ("hdrlength", 1, 1),
            ("type", 2, 1),
            ("checksum", 4, 2),
        ],
    ),
    o(TCP, "tcp option", "eol", 0, &[("kind", 0, 1)]),
    o(TCP, "tcp option", "nop", 1, &[("kind", 0, 1)]),
    o(
        TCP,
        "tcp option",
        "maxseg",
        2,
        &[("kind", 0, 1), ("length", 1, 1), ("size", 2, 2)],
    ),
    o(
        TCP,
        "tcp option",
        "window",
        3,
        &[("kind", 0, 1), ("length", 1, 1), ("count", 2, 1)],
    ),
    o(TCP, "tcp option", "sack-perm", 4, KL),
    o(
        TCP,
        "tcp option",
        "sack",
        5,
        &[
            ("kind", 0, 1),
            ("length", 1, 1),
            ("left", 2, 4),
            ("right", 6, 4),
        ],
    ),
    o(
        TCP,
        "tcp option",
        "timestamp",
        8,
        &[
            ("kind", 0, 1),
            ("length", 1, 1),
            ("tsval", 2, 4),
            ("tsecr", 6, 4),
        ],
    ),
    o(
        V4,
        "ip option",
        "lsrr",
        131,
        &[
            ("type", 0, 1),
            ("length", 1, 1),
            ("ptr", 2, 1),
            ("addr", 3, 4),
        ],
    ),
    o(
        V4,
        "ip option",
        "rr",
        7,
        &[
            ("type", 0, 1),
            ("length", 1, 1),
            ("ptr", 2, 1),
            ("addr", 3, 4),
        ],
    ),
    o(
        V4,
        "ip option",
        "ssrr",
        137,
        &[
            ("type", 0, 1),
            ("length", 1, 1),
            ("ptr", 2, 1),
            ("addr", 3, 4),
        ],
    ),
    o(
        V4,
        "ip option",
        "ra",
        148,
        &[("type", 0, 1), ("length", 1, 1), ("value", 2, 2)],
    ),
];

/// The header or option an `exthdr` expression reads or writes.
pub(crate) fn by_number(op: u32, kind: u8) -> Option<&'static Opt> {
    OPTS.iter().find(|x| x.op == op && x.kind == kind)
}

/// The header or option of a JSON expression, and the field it names (`None`: an existence
/// test), or `None` if the expression is not one of these.
pub(crate) fn of_json(e: &ExprObject) -> Option<(&'static str, &JExthdr)> {
    match e {
        ExprObject::Exthdr(x) => Some(("exthdr", x)),
        ExprObject::TcpOption(x) => Some(("tcp option", x)),
        ExprObject::IpOption(x) => Some(("ip option", x)),
        _ => None,
    }
}

/// The option named `name` under the JSON key `json`.
pub(crate) fn by_name(json: &str, name: &str) -> Option<&'static Opt> {
    OPTS.iter().find(|x| x.json == json && x.name == name)
}

/// The JSON expression for an option and an optional field.
pub(crate) fn json_of(opt: &Opt, field: Option<&str>) -> ExprObject {
    let x = JExthdr {
        name: opt.name.into(),
        field: field.map(str::to_owned),
        offset: None,
    };
    match opt.json {
        "exthdr" => ExprObject::Exthdr(x),
        "tcp option" => ExprObject::TcpOption(x),
        _ => ExprObject::IpOption(x),
    }
}
