#!/usr/bin/env python3
"""A client that drives iptables the way libraries do (coreos/go-iptables, python-iptables'
command wrappers): it parses `--version` at construction, then creates, lists, checks and
deletes through the command line and parses what it prints.

Usage: iptables_client.py IPTABLES-PROGRAM
Prints a JSON transcript of every call and its parsed result on standard output; exits 1
(with the reason on stderr) when the program does not behave as iptables does. The test
tests/dropin_client.rs runs it against iptables-nft and against xtnl installed as
`iptables`, in a scratch network namespace, and compares the transcripts.

Written for xtnl from the documented behaviour of iptables; Python standard library only.
"""

import json
import re
import subprocess
import sys


class IptablesError(Exception):
    def __init__(self, args, status, stderr):
        super().__init__(f"{args}: exit {status}: {stderr.strip()}")
        self.status = status
        self.stderr = stderr

    def not_exist(self):
        # go-iptables' IsNotExist: status 1 with one of these messages.
        return self.status == 1 and (
            "No chain/target/match by that name" in self.stderr
            or "Bad rule (does a matching rule exist in that chain?)" in self.stderr
            or "does not exist" in self.stderr
            or "incompatible, use 'nft' tool" in self.stderr
        )


VERSION_RE = re.compile(r"v([0-9]+)\.([0-9]+)\.([0-9]+)(?:\s+\((\w+))?")


class Iptables:
    def __init__(self, program):
        self.program = program
        out = subprocess.run([program, "--version"], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"--version failed: {out.stderr}")
        m = VERSION_RE.search(out.stdout)
        if not m:
            raise RuntimeError(f"no version in {out.stdout!r}")
        self.version = tuple(int(x) for x in m.group(1, 2, 3))
        self.mode = m.group(4) or "legacy"
        if self.mode not in ("nf_tables", "legacy"):
            raise RuntimeError(f"unknown mode {self.mode!r}")
        # -w exists since 1.4.20, --random-fully since 1.6.2 (what go-iptables checks).
        self.has_wait = self.version >= (1, 4, 20)
        self.has_random_fully = self.version >= (1, 6, 2)

    def run(self, *args):
        cmd = [self.program] + (["--wait"] if self.has_wait else []) + list(args)
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise IptablesError(list(args), out.returncode, out.stderr)
        return out.stdout

    def new_chain(self, table, chain):
        self.run("-t", table, "-N", chain)

    def chain_exists(self, table, chain):
        try:
            self.run("-t", table, "-S", chain, "1")
            return True
        except IptablesError as e:
            if e.not_exist():
                return False
            raise

    def list_chains(self, table):
        chains = []
        for line in self.run("-t", table, "-S").splitlines():
            f = line.split()
            if len(f) >= 2 and f[0] in ("-P", "-N"):
                chains.append(f[1])
        return chains

    def append(self, table, chain, *rule):
        self.run("-t", table, "-A", chain, *rule)

    def insert(self, table, chain, pos, *rule):
        self.run("-t", table, "-I", chain, str(pos), *rule)

    def exists(self, table, chain, *rule):
        try:
            self.run("-t", table, "-C", chain, *rule)
            return True
        except IptablesError as e:
            if e.not_exist():
                return False
            raise

    def list(self, table, chain):
        return self.run("-t", table, "-S", chain).splitlines()

    def list_rule(self, table, chain, n):
        return self.run("-t", table, "-S", chain, str(n)).splitlines()

    def stats(self, table, chain):
        """`-L CHAIN -n -v -x` parsed into fields, as go-iptables' Stats does."""
        lines = self.run("-t", table, "-L", chain, "-n", "-v", "-x").splitlines()
        if len(lines) < 2 or not lines[0].startswith("Chain "):
            raise RuntimeError(f"unexpected listing head: {lines[:2]}")
        header = lines[1].split()
        if header[:4] != ["pkts", "bytes", "target", "prot"]:
            raise RuntimeError(f"unexpected column header: {lines[1]!r}")
        rows = []
        for line in lines[2:]:
            f = line.split(None, 9)
            if len(f) < 9:
                raise RuntimeError(f"short stats row: {line!r}")
            row = {
                "pkts": int(f[0]),
                "bytes": int(f[1]),
                "target": f[2],
                "prot": f[3],
                "opt": f[4],
                "in": f[5],
                "out": f[6],
                "source": f[7],
                "destination": f[8],
                "options": f[9].strip() if len(f) > 9 else "",
            }
            rows.append(row)
        return rows

    def delete(self, table, chain, *rule):
        self.run("-t", table, "-D", chain, *rule)

    def delete_if_exists(self, table, chain, *rule):
        if self.exists(table, chain, *rule):
            self.delete(table, chain, *rule)

    def clear_chain(self, table, chain):
        if self.chain_exists(table, chain):
            self.run("-t", table, "-F", chain)
        else:
            self.new_chain(table, chain)

    def delete_chain(self, table, chain):
        self.run("-t", table, "-X", chain)


def main():
    ipt = Iptables(sys.argv[1])
    log = [{"call": "version", "version": list(ipt.version), "mode": ipt.mode}]

    def record(call, value):
        log.append({"call": call, "value": value})

    def expect(cond, what):
        if not cond:
            sys.stderr.write(f"client expectation failed: {what}\n{json.dumps(log, indent=1)}\n")
            sys.exit(1)

    expect(ipt.version == (1, 8, 9), "version 1.8.9")
    expect(ipt.has_random_fully, "--random-fully support detected")

    chain = "vcld-5205"
    record("chain_exists before", ipt.chain_exists("nat", chain))
    expect(not log[-1]["value"], "chain absent at first")
    ipt.clear_chain("nat", chain)  # creates it
    record("chain_exists after", ipt.chain_exists("nat", chain))
    expect(log[-1]["value"], "chain present after clear_chain")
    record("list_chains", ipt.list_chains("nat"))
    expect(chain in log[-1]["value"], "list_chains names it")

    dnat = ["-i", "eth1", "-p", "tcp", "-m", "tcp", "--dport", "50443", "-m", "comment",
            "--comment", "VCL: forward eth1:tcp/50443", "-j", "DNAT",
            "--to-destination", "192.0.2.3:3389"]
    ipt.append("nat", chain, *dnat)
    ipt.insert("nat", chain, 1, "-s", "198.51.100.0/24", "-p", "udp", "--dport", "53",
               "-j", "RETURN")
    jump = ["-m", "comment", "--comment", "VCL: jump", "-j", chain]
    ipt.insert("nat", "PREROUTING", 1, *jump)
    record("exists dnat", ipt.exists("nat", chain, *dnat))
    expect(log[-1]["value"], "-C finds the DNAT rule")
    record("exists other", ipt.exists("nat", chain, "-p", "udp", "-j", "RETURN"))
    expect(not log[-1]["value"], "-C does not find another rule")
    record("list", ipt.list("nat", chain))
    record("list_rule 1", ipt.list_rule("nat", chain, 1))
    record("list_rule 2", ipt.list_rule("nat", chain, 2))
    record("list_rule 3", ipt.list_rule("nat", chain, 3))
    expect(log[-1]["value"] == [], "-S CHAIN 3 past the end is empty")
    stats = ipt.stats("nat", chain)
    record("stats", stats)
    expect(len(stats) == 2 and stats[1]["target"] == "DNAT", "stats rows")
    expect(stats[0]["pkts"] == 0 and stats[0]["source"] == "198.51.100.0/24", "stats fields")
    record("stats PREROUTING", ipt.stats("nat", "PREROUTING"))

    try:
        ipt.new_chain("nat", chain)
        expect(False, "-N of an existing chain fails")
    except IptablesError as e:
        record("new_chain again", [e.status, e.stderr])
    try:
        ipt.delete_chain("nat", chain)
        expect(False, "-X of a referenced chain fails")
    except IptablesError:
        # Only the failure: iptables-nft 1.8.9 says "CHAIN_DEL failed (Device or resource
        # busy)" with status 4, iptables-legacy (and xtnl on both backends) "Too many links."
        # with status 1; libraries only test for an error here.
        record("delete_chain referenced", "failed")

    ipt.delete_if_exists("nat", "PREROUTING", *jump)
    ipt.delete_if_exists("nat", "PREROUTING", *jump)  # idempotent
    ipt.delete("nat", chain, *dnat)
    try:
        ipt.delete("nat", chain, *dnat)
        expect(False, "-D of a missing rule fails")
    except IptablesError as e:
        record("delete missing", [e.status, e.stderr, e.not_exist()])
        expect(e.not_exist(), "a missing rule is IsNotExist")
    ipt.clear_chain("nat", chain)
    record("list after clear", ipt.list("nat", chain))
    ipt.delete_chain("nat", chain)
    record("chain_exists at end", ipt.chain_exists("nat", chain))
    expect(not log[-1]["value"], "chain gone at the end")
    json.dump(log, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
