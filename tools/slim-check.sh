#!/usr/bin/env bash
# The NAT-host-only build (docs/layers.md, "A NAT-host-only build"): checks that
# `cargo build -p xtnl --no-default-features --lib` builds and compiles none of the extension
# registry, and prints what each build compiles of xtnl-ipt.
#
# For each feature set it builds the library (release, as the tests), takes xtnl-ipt's artifact from cargo's
# messages and reads
#   - the source files rustc compiled for it (its dep-info `.d` file) and their lines;
#   - the registry's code in the object files: symbols of `xtnl_ipt::ext::<extension>::`
#     (`nm -C`), in every rlib of the workspace the library is built from (xtnl-ipt's, the
#     crates above it: seam, nathost, legacy, backend, json, serve, and the library's own),
#     since generic or inlined registry code would be instantiated in the crate that calls it.
# The default build must hold registry symbols (so the probe can see them) and the slim one
# none, nor any of the registry's files.
#
#   tools/slim-check.sh            # check and print the lines (.ci/run runs this)
#   tools/slim-check.sh --time     # also rebuild xtnl-ipt alone both ways, timed
#   tools/slim-check.sh --tests    # first run the tests that build without the feature
#                                  # (xtnl-ipt's unit tests, tests/slim.rs), as .ci/run does
# Needs cargo, python3 and nm (binutils).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --tests ]]; then
    shift
    cargo test -p xtnl-ipt --no-default-features --release --locked
    cargo test -p xtnl --no-default-features --release --test slim --locked
fi

# The artifact files of package $1 in the build `cargo build $2...` makes (JSON messages).
artifacts() {
    local pkg=$1
    shift
    cargo build --release --lib --message-format=json "$@" 2>/dev/null | python3 -c '
import json, sys
pkg = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == pkg and "lib" in m["target"]["kind"]:
        for f in m["filenames"]:
            if f.endswith(".rlib"):
                print(f)
' "$pkg"
}

# Every rlib of the workspace's crates (names xtnl*) in the build `cargo build $1...` makes.
workspace_rlibs() {
    cargo build --release --lib --message-format=json "$@" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"].startswith("xtnl") and "lib" in m["target"]["kind"]:
        for f in m["filenames"]:
            if f.endswith(".rlib"):
                print(f)
'
}

# The .rs files rustc read for an rlib (its dep-info file beside it).
sources() {
    local rlib=$1
    local b d
    b=$(basename "$rlib" .rlib)
    d="$(dirname "$rlib")/${b#lib}.d"
    [[ -f $d ]] || { echo "no dep-info $d for $rlib" >&2; exit 1; }
    grep -E '\.rs:$' "$d" | sed 's/:$//' | sort -u
}

# The registry's extension modules: ext/'s files but its frame (the trait and hooks in
# mod.rs, the by-name index, the option collector), LOG's level names and TRACE's native
# expressions, which the backends call with or without the registry, and the tests.
frame='mod|index|pending|log|trace|tests.*'
modules=$(cd crates/xtnl-ipt/src/ext && ls ./*.rs | sed 's|^\./||; s|\.rs$||' | grep -vxE "$frame" | paste -sd'|')
registry_re="xtnl_ipt::ext::($modules)::"

registry_symbols() {
    { nm -C "$@" 2>/dev/null || true; } | grep -cE "$registry_re" || true
}

status=0
for build in default slim; do
    if [[ $build == default ]]; then flags=(-p xtnl); else flags=(-p xtnl --no-default-features); fi
    ipt=$(artifacts xtnl_ipt "${flags[@]}")
    lib=$(artifacts xtnl "${flags[@]}")
    [[ -n $ipt && -n $lib ]] || { echo "$build: cargo build ${flags[*]} --lib gave no artifacts" >&2; exit 1; }
    mapfile -t rlibs < <(workspace_rlibs "${flags[@]}")
    for crate in xtnl_seam xtnl_legacy xtnl_nathost; do
        printf '%s\n' "${rlibs[@]}" | grep -q "/lib${crate}-" || { echo "$build: no rlib of $crate in the build" >&2; exit 1; }
    done
    mapfile -t files < <(sources "$ipt")
    lines=$(cat "${files[@]}" | wc -l)
    ext_files=$(printf '%s\n' "${files[@]}" | grep -c '/src/ext/' || true)
    ext_lines=$(printf '%s\n' "${files[@]}" | grep '/src/ext/' | xargs -r cat | wc -l)
    syms=$(registry_symbols "${rlibs[@]}")
    printf '%-7s xtnl-ipt: %3d files, %6d lines compiled (ext/: %2d files, %5d lines); registry symbols in %d workspace rlibs: %d\n' \
        "$build" "${#files[@]}" "$lines" "$ext_files" "$ext_lines" "${#rlibs[@]}" "$syms"
    if [[ $build == default && $syms -eq 0 ]]; then
        echo "the default build shows no registry symbols: the probe sees nothing" >&2
        status=1
    fi
    if [[ $build == slim ]]; then
        # Only the registry's frame may be compiled (above).
        extra=$(printf '%s\n' "${files[@]}" | grep '/src/ext/' | grep -vE "/ext/($frame)\\.rs\$" || true)
        if [[ -n $extra ]]; then
            echo "the slim build compiles registry files:" >&2
            echo "$extra" >&2
            status=1
        fi
        if [[ $syms -ne 0 ]]; then
            echo "the slim build holds $syms registry symbols:" >&2
            { nm -C "${rlibs[@]}" 2>/dev/null || true; } | grep -E "$registry_re" | sed 10q >&2
            status=1
        fi
    fi
done

if [[ ${1:-} == --time ]]; then
    for build in default slim; do
        if [[ $build == default ]]; then flags=(); else flags=(--no-default-features); fi
        for profile in dev release; do
            # Everything xtnl-ipt needs first, so that the timed build is xtnl-ipt alone,
            # from scratch (no incremental cache).
            CARGO_INCREMENTAL=0 cargo build -p xtnl-ipt --lib --profile "$profile" "${flags[@]}" 2>/dev/null
            touch crates/xtnl-ipt/src/lib.rs
            CARGO_INCREMENTAL=0 /usr/bin/time -f "$build $profile xtnl-ipt alone: %e s wall, %U s user" \
                cargo build -p xtnl-ipt --lib --profile "$profile" "${flags[@]}" 2>&1 | grep -E 'wall'
        done
    done
fi
exit $status
