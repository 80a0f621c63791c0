//! Links the `xtnl` and `xtnl-bench` binaries with packed relative relocations
//! (`-z pack-relative-relocs`, DT_RELR) on Linux/glibc: a static-pie binary relocates itself
//! at every start, and the 11,689 RELA entries (280 KB of `.rela.dyn`, 24 bytes each) it read
//! to do so became 3 KB of RELR bitmaps. Peak RSS of a small command (`xtnl -I INPUT ...` in
//! a fresh namespace) went from 6,164 to 5,384 KiB. glibc handles DT_RELR from 2.36 (the
//! static start code included), GNU ld writes it from 2.38; an older ld ignores the option
//! with a warning. Only the binaries are linked with it (the library's users link their
//! own), and no crate's rustflags change, so no build cache is invalidated.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
