# bash completion for xtnl (and xtnl6): its own commands and, after an option, iptables'.
# Installed as /usr/share/bash-completion/completions/xtnl (loaded on first use of `xtnl`);
# /etc/bash_completion.d/xtnl-iptables registers the iptables part for the iptables names
# when they run xtnl. tests/packaging.rs loads this file and checks what it offers.

_xtnl_commands="demo list restore save apply serve doctor reservation forward teardown sweep host migrate version help"
_xtnl_iptables_cmds="-A --append -I --insert -D --delete -R --replace -C --check -N --new-chain
    -X --delete-chain -F --flush -Z --zero -P --policy -E --rename-chain -S --list-rules
    -L --list"
_xtnl_iptables_opts="-4 -6 -t --table -w --wait -W --wait-interval -v --verbose -n --numeric
    -x --exact --line-numbers -c --set-counters -s --source --src -d --destination --dst
    -i --in-interface -o --out-interface -p --protocol -f --fragment -m --match -j --jump
    -g --goto --json --backend"
_xtnl_match_opts="--sport --source-port --dport --destination-port --sports --source-ports
    --dports --destination-ports --ports --comment --state --ctstate"
_xtnl_target_opts="--to-destination --to-source --to-ports --reject-with --log-prefix
    --log-level"
_xtnl_tables="filter nat mangle raw security"
_xtnl_targets="ACCEPT DROP RETURN DNAT SNAT MASQUERADE REDIRECT REJECT LOG"
_xtnl_matches="tcp udp multiport comment state conntrack"

# The iptables part: options, tables, matches, targets.
_xtnl_iptables() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -t|--table) mapfile -t COMPREPLY < <(compgen -W "$_xtnl_tables" -- "$cur"); return ;;
        -m|--match) mapfile -t COMPREPLY < <(compgen -W "$_xtnl_matches" -- "$cur"); return ;;
        -j|--jump) mapfile -t COMPREPLY < <(compgen -W "$_xtnl_targets" -- "$cur"); return ;;
        -p|--protocol) mapfile -t COMPREPLY < <(compgen -W "tcp udp icmp icmpv6 all" -- "$cur"); return ;;
        --backend) mapfile -t COMPREPLY < <(compgen -W "nft legacy auto" -- "$cur"); return ;;
        --state|--ctstate) mapfile -t COMPREPLY < <(compgen -W "NEW ESTABLISHED RELATED INVALID UNTRACKED" -- "$cur"); return ;;
        -i|--in-interface|-o|--out-interface)
            mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"); return ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$_xtnl_iptables_cmds $_xtnl_iptables_opts $_xtnl_match_opts $_xtnl_target_opts" -- "$cur")
}

_xtnl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    # The first word that is not a global option decides.
    local i=1 cmd=""
    while ((i < COMP_CWORD)); do
        case ${COMP_WORDS[i]} in
            --policy-file|--audit|--backend) ((i += 2)); continue ;;
            --policy-file=*|--audit=*|--backend=*) ((i += 1)); continue ;;
        esac
        cmd=${COMP_WORDS[i]}
        break
    done
    case $prev in
        --policy-file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        --audit) mapfile -t COMPREPLY < <(compgen -W "syslog stderr off" -- "$cur"); return ;;
        --backend) mapfile -t COMPREPLY < <(compgen -W "nft legacy auto" -- "$cur"); return ;;
    esac
    case $cmd in
        "")
            if [[ $cur == -* ]]; then
                _xtnl_iptables
                mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "--policy-file --audit --backend --netns --help --version" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -W "$_xtnl_commands" -- "$cur")
            fi
            ;;
        -*) _xtnl_iptables ;;
        list) mapfile -t COMPREPLY < <(compgen -W "ip ip6 inet" -- "$cur") ;;
        restore) mapfile -t COMPREPLY < <(compgen -W "--noflush -w --wait -4 -6" -- "$cur")
                 [[ $cur != -* ]] && mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
        save) if [[ $prev == -t ]]; then mapfile -t COMPREPLY < <(compgen -W "$_xtnl_tables" -- "$cur")
              else mapfile -t COMPREPLY < <(compgen -W "-t -4 -6 --json" -- "$cur"); fi ;;
        apply) mapfile -t COMPREPLY < <(compgen -W "-w --wait -" -- "$cur")
               [[ $cur != -* ]] && mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
        reservation) if ((COMP_CWORD == i + 1)); then mapfile -t COMPREPLY < <(compgen -W "setup" -- "$cur")
                     else mapfile -t COMPREPLY < <(compgen -W "--entry --forward -i --comment-prefix --no-comments --layout -4 -6 -t -w --json" -- "$cur"); fi ;;
        forward) if ((COMP_CWORD == i + 1)); then mapfile -t COMPREPLY < <(compgen -W "add remove list" -- "$cur")
                 else mapfile -t COMPREPLY < <(compgen -W "-i --comment-prefix --layout -4 -6 -t -w --json" -- "$cur"); fi ;;
        teardown) mapfile -t COMPREPLY < <(compgen -W "--entry --layout --forward -4 -6 -t -w --json" -- "$cur") ;;
        migrate) mapfile -t COMPREPLY < <(compgen -W "--to --prefix --entry --comment-prefix --layout -4 -6 -t -w --json" -- "$cur") ;;
        serve) mapfile -t COMPREPLY < <(compgen -W "--stdio --socket --help" -- "$cur") ;;
        sweep) mapfile -t COMPREPLY < <(compgen -W "--prefix --keep --layout -4 -6 -t -w --json" -- "$cur") ;;
        host) if ((COMP_CWORD == i + 1)); then mapfile -t COMPREPLY < <(compgen -W "setup" -- "$cur")
              else mapfile -t COMPREPLY < <(compgen -W "--public-interface --private-interface --private-network --public-address --ports --chain --comment-prefix --layout -4 -6 -t -w --json" -- "$cur"); fi ;;
    esac
}

complete -F _xtnl xtnl xtnl6
