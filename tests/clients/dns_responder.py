#!/usr/bin/env python3
"""A tiny authoritative DNS responder for tests/dropin_dns.rs (Python standard library only).

    dns_responder.py ADDRESS ZONE.json LOG

Answers A and AAAA questions over UDP and TCP on ADDRESS port 53 from ZONE.json:
{"name": {"A": [...], "AAAA": [...], "CNAME": "target", "truncate": true, "servfail": true}}
(names lower case, without the final dot). A name not in the zone is NXDOMAIN; a name with
"truncate" gets an empty answer with the TC flag over UDP and its records over TCP; with
"servfail", SERVFAIL. CNAMEs are followed within the zone and put before the addresses.
Each question is appended to LOG as `PROTO QNAME QTYPE`, so a test can compare the questions
two resolvers asked. Writes `ready` to stdout once both sockets listen. Runs until killed.
"""

import json
import socket
import struct
import sys
import threading

TYPES = {1: "A", 28: "AAAA", 5: "CNAME"}


def read_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels), off
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n


def encode_name(name):
    out = b""
    for label in name.split("."):
        if label:
            out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def answer(query, zone, proto, log, lock):
    ident, flags, qd = struct.unpack("!HHH", query[:6])
    qname, off = read_name(query, 12)
    qtype, qclass = struct.unpack("!HH", query[off:off + 4])
    question = query[12:off + 4]
    with lock, open(log, "a") as f:
        f.write(f"{proto} {qname.lower()} {TYPES.get(qtype, qtype)}\n")
    rd = flags & 0x0100
    name = qname.lower().rstrip(".")
    records = []
    rcode = 0
    tc = 0
    entry = zone.get(name)
    if entry is None:
        rcode = 3
    elif entry.get("servfail"):
        rcode = 2
    elif entry.get("truncate") and proto == "udp":
        tc = 0x0200
    else:
        seen = set()
        while entry is not None and "CNAME" in entry and name not in seen:
            seen.add(name)
            target = entry["CNAME"]
            records.append((name, 5, encode_name(target)))
            name = target
            entry = zone.get(name)
        if entry is not None:
            want = TYPES.get(qtype)
            for a in entry.get(want, []) if want in ("A", "AAAA") else []:
                fam = socket.AF_INET if want == "A" else socket.AF_INET6
                records.append((name, qtype, socket.inet_pton(fam, a)))
    body = b""
    for owner, rtype, data in records:
        body += encode_name(owner) + struct.pack("!HHIH", rtype, 1, 60, len(data)) + data
    head = struct.pack("!HHHHHH", ident, 0x8000 | 0x0400 | tc | rd | 0x0080 | rcode,
                       1, len(records), 0, 0)
    return head + question + body


def serve_udp(sock, zone, log, lock):
    while True:
        query, peer = sock.recvfrom(4096)
        try:
            sock.sendto(answer(query, zone, "udp", log, lock), peer)
        except (IndexError, struct.error):
            pass


def serve_tcp(sock, zone, log, lock):
    while True:
        conn, _ = sock.accept()
        with conn:
            try:
                head = conn.recv(2, socket.MSG_WAITALL)
                (n,) = struct.unpack("!H", head)
                query = conn.recv(n, socket.MSG_WAITALL)
                reply = answer(query, zone, "tcp", log, lock)
                conn.sendall(struct.pack("!H", len(reply)) + reply)
            except (IndexError, struct.error, OSError):
                pass


def main():
    addr, zone_path, log = sys.argv[1:4]
    with open(zone_path) as f:
        zone = json.load(f)
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    udp = socket.socket(fam, socket.SOCK_DGRAM)
    udp.bind((addr, 53))
    tcp = socket.socket(fam, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((addr, 53))
    tcp.listen(8)
    lock = threading.Lock()
    threading.Thread(target=serve_tcp, args=(tcp, zone, log, lock), daemon=True).start()
    print("ready", flush=True)
    serve_udp(udp, zone, log, lock)


if __name__ == "__main__":
    main()
