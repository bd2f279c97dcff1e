#!/usr/bin/env python3
"""Connections to a PROXY-protocol listener for test_proxy_reader.sh; prints one JSON object.

  cap PORT PER_NETWORK UNTRUSTED_ROOM
      From 127.0.0.2 opens PER_NETWORK + 1 connections that send nothing: the last one is
      closed at accept (its network is full), the others wait. Then fills the untrusted
      places from 127.0.0.3, 127.0.0.4, ... (PER_NETWORK each) and opens one more from
      127.0.0.250 (closed: no untrusted place left), then the balancer (127.0.0.1) sends a
      PROXY header and a request and gets its answer.
  deadline PORT
      The balancer sends half a PROXY header and stops; prints how long until the close.
  hold PORT N
      Opens up to N connections from the balancer, each with a PROXY header naming its own
      client (10.9.x.y) and nothing more, until connect fails or N are open; prints how
      many, then keeps them open until stdin closes.
"""
import json
import socket
import sys
import time


def conn(src, port, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_soon(s, within):
    """True when the peer closes s (EOF or reset) within `within` seconds."""
    s.settimeout(within)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def answer(s, header):
    s.settimeout(10)
    s.sendall(header + b"GET /api/tiers HTTP/1.0\r\nHost: x\r\n\r\n")
    try:
        return s.recv(64).decode(errors="replace")[:12]
    except OSError:
        return ""


def cap(port, per_network, room):
    out = {}
    mine = [conn("127.0.0.2", port) for _ in range(per_network + 1)]
    out["over_network_closed"] = closed_soon(mine[-1], 1.0)
    out["in_network_open"] = sum(not closed_soon(s, 0.05) for s in mine[:-1])
    held = mine[:-1]
    n, i = per_network, 3
    while n < room:
        for _ in range(min(per_network, room - n)):
            held.append(conn("127.0.0.%d" % i, port))
            n += 1
        i += 1
    out["untrusted_held"] = n
    out["addresses"] = i - 2
    extra = conn("127.0.0.250", port)
    out["over_room_closed"] = closed_soon(extra, 1.0)
    out["still_open"] = sum(not closed_soon(s, 0.01) for s in held)
    lb = conn("127.0.0.1", port)
    out["balancer"] = answer(lb, b"PROXY TCP4 198.51.100.7 127.0.0.1 40000 80\r\n")
    print(json.dumps(out))


def deadline(port):
    s = conn("127.0.0.1", port)
    t0 = time.monotonic()
    s.sendall(b"PROXY TCP4 198.51.")
    closed = closed_soon(s, 15.0)
    print(json.dumps({"closed": closed, "after_ms": int((time.monotonic() - t0) * 1000)}))


def hold(port, n):
    held = []
    try:
        for i in range(n):
            s = conn("127.0.0.1", port, timeout=2.0)
            s.sendall(b"PROXY TCP4 10.9.%d.%d 127.0.0.1 40000 80\r\n" % (i // 250, i % 250 + 1))
            held.append(s)
    except OSError:
        pass
    print(json.dumps({"open": len(held)}), flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "cap":
        cap(port, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "deadline":
        deadline(port)
    else:
        hold(port, int(sys.argv[3]))
