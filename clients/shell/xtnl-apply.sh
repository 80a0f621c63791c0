#!/bin/sh
# Applies `xtnl apply` documents, one per line of standard input, through `xtnl serve`: over
# its unix socket with socat, or through a `serve --stdio` of its own. One response line per
# document on standard output; exits 1 if any was not ok.
#
#   xtnl-apply.sh --socket /run/xtnl/xtnl.sock < documents
#   xtnl-apply.sh --stdio /usr/sbin/xtnl < documents        (also: --stdio "ssh nathost xtnl")
set -eu
case "${1:-}" in
    --socket) [ $# -eq 2 ] || exit 2; out=$(socat -t 30 - "UNIX-CONNECT:$2") ;;
    --stdio) [ $# -eq 2 ] || exit 2; out=$($2 serve --stdio) ;;
    *) echo "usage: $0 --socket PATH | --stdio XTNL < documents" >&2; exit 2 ;;
esac
printf '%s\n' "$out"
case "$out" in *'"ok":false'*) exit 1 ;; esac
exit 0
