#!/usr/bin/env bash
# Issue 14 (api): kernel tests that `cargo test` runs as a user report "test needs root
# (...): not run" instead of failing on EPERM. Tests whose whole body is one `()` closure in
# `common::in_netns` get that from in_netns itself; the tests listed here (they use what the
# namespace body returns, or need root outside one) get `common::require_kernel!();` as their
# first line. Idempotent; re-run it after a merge (a test that moved is reported, not guessed).
# The list is what failed when every test binary ran as nobody (setpriv --reuid=nobody
# --bounding-set=-all) before the guards: see docs/public-api.md, "Tests without root".
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "$@" <<'PY'
import re, sys
guards = """
bench_quick quick_run_writes_a_full_report_and_a_well_formed_plot
dataplane reservation_dnat_forwards_tcp_and_teardown_stops_it
detached_close closing_after_a_flush_does_not_make_the_caller_wait
dropin_client library_client_runs_unchanged_legacy
dropin_client library_client_runs_unchanged_nft
dropin_grammar grammar_as_iptables_legacy
dropin_grammar grammar_as_iptables_nft
dropin_save_restore restore_and_save_as_iptables_legacy
dropin_save_restore restore_and_save_as_iptables_nft
dropin_save_restore restore_c_sets_builtin_policy_counters_on_x_tables
ext_diff ipv4_extensions_against_iptables_legacy
ext_diff ipv4_extensions_against_iptables_nft
ext_diff ipv6_extensions_against_ip6tables_legacy
ext_diff ipv6_extensions_against_ip6tables_nft
ext_rulesets rulesets_on_nf_tables_like_iptables_nft
ext_rulesets rulesets_on_x_tables_like_iptables_legacy
iptables_commands built_in_chains_not_created_yet
iptables_commands delete_and_replace_by_number
iptables_commands delete_chain_refusals_like_iptables
iptables_commands error_statuses_and_phrases_like_iptables_nft
iptables_commands flush_a_chain_a_table_and_a_missing_chain
iptables_commands insert_at_every_kind_of_position
iptables_commands ipv6_as_xtnl6_like_ip6tables_nft
iptables_commands ipv6_with_dash_6_like_ip6tables_nft
iptables_commands list_and_zero_in_one_command_like_iptables_nft
iptables_commands list_columns_exactly_like_iptables_nft
iptables_commands list_numeric_like_iptables_nft
iptables_commands list_rules_verbose_prints_counters_like_iptables_nft
iptables_commands list_rules_of_one_chain
iptables_commands list_with_names_like_iptables_nft
iptables_commands nat_table_inhibits_drop_like_iptables_nft
iptables_commands new_chain_and_delete_chain
iptables_commands policies_of_built_in_and_other_chains
iptables_commands rename_chains
iptables_commands verbose_changes_print_like_iptables_nft
iptables_commands zero_counters_after_real_traffic
iptables_diff nat_host_commands_verbatim_give_the_same_tables
legacy_diff every_command_as_iptables_legacy_runs_it
legacy_diff five_thousand_rule_table
legacy_diff ip6tables_commands_as_ip6tables_legacy_runs_them
legacy_diff restore_and_save_as_iptables_legacy
legacy_nathost reservation_setup_and_teardown_as_the_agent_does_them_with_iptables_legacy
lock real_default_lock_interops_with_flock
nathost setup_matches_the_agents_iptables_commands_and_each_recognises_the_other
nathost_map map_layout_forwards_count_and_stop_after_teardown_ipv4_and_ipv6
nathost_map migration_keeps_a_forwarded_connection_and_the_map_wins_over_chains
nathost_map the_map_wins_over_iptables_legacy_nat_and_migrate_refuses_a_legacy_host
nft_oracle nft_and_xtnl_agree_on_every_rule_of_the_corpus
packaging the_debian_package_installs_works_and_leaves_no_trace
restore restore_gives_the_tables_iptables_nft_restore_gives
serve_clients perl_agent_sets_up_and_tears_down_reservations_over_the_socket_and_stdio
"""
GUARD = "common::require_kernel!();"
missing = 0
by_file = {}
for line in guards.split("\n"):
    if line.strip():
        f, name = line.split()
        by_file.setdefault(f, []).append(name)
for f, names in by_file.items():
    path = f"tests/{f}.rs"
    lines = open(path).read().split("\n")
    for name in names:
        pat = re.compile(r"^(\s*)fn " + re.escape(name) + r"\(\)\s*\{\s*$")
        at = [i for i, l in enumerate(lines) if pat.match(l)]
        if len(at) != 1:
            print(f"{path}: test {name} not found (once) - guard it by hand", file=sys.stderr)
            missing += 1
            continue
        i = at[0]
        if GUARD in lines[i + 1]:
            continue
        indent = pat.match(lines[i]).group(1) + "    "
        lines.insert(i + 1, indent + GUARD)
    open(path, "w").write("\n".join(lines))
sys.exit(1 if missing else 0)
PY
