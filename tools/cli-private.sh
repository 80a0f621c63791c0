#!/usr/bin/env bash
# Issue 14 (api): the command line is a module of the `xtnl` binary, not of the library.
# Rewrites every path into the library in src/cli/** from `crate::X` to `xtnl::X`, except
# the binary's own modules: `crate::cli::...` (the CLI itself) and `crate::scratch::...`
# (src/scratch.rs, the scratch-namespace guards). The scratch guards that used to be
# `crate::netns::{enter_new, refuse_initial, in_initial, current_id}` become
# `crate::scratch::...`; `crate::netns::Netns` (library API) becomes `xtnl::netns::Netns`.
# The two safe wrappers of src/sys.rs the CLI calls (`crate::sys::{reset_environment,
# get_xattr}`) are public as `xtnl::privilege::{reset_environment, get_xattr}`.
# `pub(crate)`, `$crate::` and `super::` are left alone. Idempotent: run it again on a
# changed src/cli and it rewrites only what is new.
set -euo pipefail
cd "$(dirname "$0")/.."
find src/cli -name '*.rs' -print0 | xargs -0 perl -pi -e '
    s/(?<![\$\w])crate::netns::(enter_new|refuse_initial|in_initial|current_id)\b/crate::scratch::$1/g;
    s/(?<![\$\w])crate::sys::(reset_environment|get_xattr)\b/xtnl::privilege::$1/g;
    s/(?<![\$\w])crate::(?!cli::|scratch::)/xtnl::/g;
'
