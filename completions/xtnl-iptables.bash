# bash completion of the iptables names (iptables, ip6tables) when they run xtnl, i.e. after
# `update-alternatives --set iptables /usr/sbin/xtnl`. Installed as
# /etc/bash_completion.d/xtnl-iptables, which bash-completion reads at shell start; it
# registers nothing while the names run iptables-nft or iptables-legacy, whose own
# completion (from bash-completion) then stays in charge.
for _xtnl_name in iptables ip6tables; do
    if [[ $(readlink -f "/usr/sbin/$_xtnl_name" 2>/dev/null) == */xtnl ]]; then
        if ! declare -F _xtnl_iptables >/dev/null; then
            # shellcheck source=/dev/null
            . /usr/share/bash-completion/completions/xtnl 2>/dev/null || break
        fi
        complete -F _xtnl_iptables "$_xtnl_name"
    fi
done
unset _xtnl_name
