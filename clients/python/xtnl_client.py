#!/usr/bin/env python3
"""A client of `xtnl serve` with Python's standard library only.

    with Client.connect("/run/xtnl/xtnl.sock") as x:        # or Client.spawn(["xtnl", "serve", "--stdio"])
        x.request({"operations": [{"op": "teardown", "chain": "vcld-5205"}]})

Run as a script it sets up or tears down a reservation (see --help) and prints the responses.
"""
import argparse
import itertools
import json
import socket
import subprocess
import sys


class Client:
    def __init__(self, reader, writer, proc=None):
        self._r, self._w, self._proc = reader, writer, proc
        self._ids = itertools.count(1)

    @classmethod
    def connect(cls, path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return cls(s.makefile("rb"), s.makefile("wb"))

    @classmethod
    def spawn(cls, argv):
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return cls(p.stdout, p.stdin, p)

    def request(self, req):
        """Sends one request (a dict); returns its response (ok, and error when not)."""
        rid = next(self._ids)
        self._w.write(json.dumps(dict(req, id=rid)).encode() + b"\n")
        self._w.flush()
        line = self._r.readline()
        if not line:
            raise ConnectionError("xtnl serve closed the connection")
        resp = json.loads(line)
        if resp.get("id") != rid:
            raise ValueError(f"response {resp.get('id')} to request {rid}")
        return resp

    def iptables(self, *args):
        """The drop-in for subprocess.call(["iptables", ...]): iptables' exit status."""
        r = self.request({"iptables": list(args)})
        return 0 if r["ok"] else r["error"]["status"]

    def close(self):
        self._w.close()
        if self._proc:
            return self._proc.wait()
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket")
    where.add_argument("--stdio", metavar="XTNL")
    ap.add_argument("what", choices=["setup", "teardown"])
    ap.add_argument("chain")
    ap.add_argument("rest", nargs="*", help="setup: IF PUBLIC_PORT ADDR:PORT")
    a = ap.parse_args()
    x = Client.connect(a.socket) if a.socket else Client.spawn([a.stdio, "serve", "--stdio"])
    if a.what == "setup":
        iface, port, to = a.rest
        op = {"op": "reservation_setup", "chain": a.chain, "jump_comment": f"VCL: jump to {a.chain}",
              "forwards": [{"protocol": "tcp", "public_port": int(port), "to": to, "in_interface": iface}]}
    else:
        op = {"op": "teardown", "chain": a.chain}
    r = x.request({"operations": [op]})
    print(json.dumps(r, sort_keys=True))
    status = x.close()
    sys.exit(0 if r["ok"] and status == 0 else 1)


if __name__ == "__main__":
    main()
