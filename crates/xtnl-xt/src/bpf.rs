//! `-m bpf` rev 1 (`struct xt_bpf_info_v1`, include/uapi/linux/netfilter/xt_bpf.h):
//!
//! ```text
//! mode u16 @0, bpf_program_num_elem u16 @2, fd s32 @4,
//! union { struct sock_filter bpf_program[64]; char path[512]; } @8,
//! struct bpf_prog *filter @520 (aligned 8; the kernel's, handed back as zeros)
//! ```
//!
//! 528 bytes. A `sock_filter` is `{ code: u16 @0, jt: u8 @2, jf: u8 @3, k: u32 @4 }`.
//! In bytecode mode the instructions past the count and the fd are zeros in what iptables
//! writes and are not kept; in pinned mode the path is kept with the fd (iptables'
//! `-C`/`-D` compare it, as everything before `filter`).

use super::{Out, sized};
use xtnl_wire::WireError;

/// `XT_BPF_MAX_NUM_INSTR`.
pub const BPF_MAX_INSTR: usize = 64;
/// `XT_BPF_MODE_BYTECODE`.
pub const XT_BPF_MODE_BYTECODE: u16 = 0;
/// `XT_BPF_MODE_FD_PINNED`.
pub const XT_BPF_MODE_FD_PINNED: u16 = 1;
const PROG_AT: usize = 8;
const PATH_MAX: usize = 512;
const SIZE: usize = 528;

/// One classic BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SockFilter {
    /// The opcode.
    pub code: u16,
    /// Jump offset when true.
    pub jt: u8,
    /// Jump offset when false.
    pub jf: u8,
    /// The operand.
    pub k: u32,
}

/// What the union holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BpfProgram {
    /// Mode 0: the instructions (`--bytecode`); at most 64.
    Bytecode(Vec<SockFilter>),
    /// Mode 1: a pinned object's path (`--object-pinned`) and the fd the writer opened;
    /// `count` is the instruction count field, which this mode leaves as it is.
    Pinned {
        /// The path, up to its NUL.
        path: Vec<u8>,
        /// The writer's file descriptor.
        fd: i32,
        /// `bpf_program_num_elem`.
        count: u16,
    },
    /// Any other mode: the whole 520 bytes before the kernel's pointer.
    Other(Vec<u8>),
}

/// The whole match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BpfV1 {
    /// The program or the object.
    pub program: BpfProgram,
}

impl BpfV1 {
    /// The kernel's 528 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(SIZE);
        match &self.program {
            BpfProgram::Bytecode(p) => {
                o.u16_ne(0, XT_BPF_MODE_BYTECODE);
                o.u16_ne(2, p.len().min(BPF_MAX_INSTR) as u16);
                for (i, f) in p.iter().take(BPF_MAX_INSTR).enumerate() {
                    let at = PROG_AT + 8 * i;
                    o.u16_ne(at, f.code).u8(at + 2, f.jt).u8(at + 3, f.jf);
                    o.u32_ne(at + 4, f.k);
                }
            }
            BpfProgram::Pinned { path, fd, count } => {
                o.u16_ne(0, XT_BPF_MODE_FD_PINNED).u16_ne(2, *count);
                o.put(4, &fd.to_ne_bytes());
                o.put(PROG_AT, &path[..path.len().min(PATH_MAX - 1)]);
            }
            BpfProgram::Other(b) => {
                o.put(0, &b[..b.len().min(PROG_AT + PATH_MAX)]);
            }
        }
        o.done()
    }

    /// Reads the mode and what it uses; a bytecode count over 64 is refused, as the kernel
    /// refuses it.
    pub fn decode(info: &[u8]) -> Result<Self, WireError> {
        let f = sized(info, SIZE, "xt_bpf_info_v1")?;
        let mode = f.u16_ne(0)?;
        let count = f.u16_ne(2)?;
        let program = match mode {
            XT_BPF_MODE_BYTECODE => {
                if usize::from(count) > BPF_MAX_INSTR {
                    return Err(f.bad(format!("{count} instructions, at most {BPF_MAX_INSTR}")));
                }
                let mut p = Vec::new();
                for i in 0..usize::from(count) {
                    let at = PROG_AT + 8 * i;
                    p.push(SockFilter {
                        code: f.u16_ne(at)?,
                        jt: f.u8(at + 2)?,
                        jf: f.u8(at + 3)?,
                        k: f.u32_ne(at + 4)?,
                    });
                }
                BpfProgram::Bytecode(p)
            }
            XT_BPF_MODE_FD_PINNED => {
                let raw = f.slice(PROG_AT, PATH_MAX)?;
                let end = raw
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or_else(|| f.bad("path is not NUL-terminated"))?;
                BpfProgram::Pinned {
                    path: raw[..end].to_vec(),
                    fd: i32::from_ne_bytes(f.bytes(4)?),
                    count,
                }
            }
            _ => BpfProgram::Other(f.slice(0, PROG_AT + PATH_MAX)?.to_vec()),
        };
        Ok(BpfV1 { program })
    }
}
