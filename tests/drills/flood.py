#!/usr/bin/env python3
"""The attackers of the flood drill (tests/drills/test_flood.sh), only the standard library.

    flood.py GATEWAY_URL BILLING_URL TXID [--addresses N] [--threads T] [--seconds S]
             [--prefix6 P]

For S seconds, T threads each take the next of N source addresses (loopback ones,
127.0.100.2 … in /24s of 250; with --prefix6, P::2 … P::N+1 of one IPv6 /64, which the
caller has put on an interface) and send, in turn:
  challenge  POST GATEWAY/v1/json_rpc without a credential (an XMR402 challenge)
  verify     POST BILLING/api/xmr402/verify: TXID (public) with a junk proof
  unknown    the same with a made-up txid, which billing holds until unseen_hold
  free       POST BILLING/api/invoices {"tier":"free"} (a free tenant)
  slowbody   POST BILLING/api/invoices announcing 8,000 bytes (under max_body), sending
             100, then waiting for billing to end it
  trickle    the same, sending 6,000 at once, then a byte every 2 s
             (slowbody and trickle: one thread in eight)
Prints one JSON object: answers by kind and status ("error" for no answer), the addresses
used, and the seconds it ran. Stops by itself after S seconds (and each call's timeout)."""

import argparse
import http.client
import json
import random
import socket
import string
import threading
import time
import urllib.parse

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def address(i, prefix6=None):
    if prefix6:
        return "%s::%x" % (prefix6, i + 2)
    return "127.0.%d.%d" % (100 + i // 250, i % 250 + 2)


def post(url, path, body, source, timeout=10):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return str(r.status)
    except (OSError, http.client.HTTPException):
        return "error"
    finally:
        conn.close()


def slow_body(url, source, hold_s, burst=100, trickle_s=0):
    u = urllib.parse.urlsplit(url)
    try:
        s = socket.create_connection((u.hostname, u.port), timeout=hold_s + 5,
                                     source_address=(source, 0))
    except OSError:
        return "error"
    try:
        s.sendall(b"POST /api/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 8000\r\n\r\n" + b" " * burst)
        end = time.monotonic() + hold_s
        data = b""
        while not data:  # the server ends it (408) or the hold runs out
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            s.settimeout(min(left, trickle_s) if trickle_s else left)
            try:
                data = s.recv(4096)
                if not data:
                    return "closed"
            except socket.timeout:
                if not trickle_s or time.monotonic() >= end:
                    raise
                s.sendall(b" ")
        return data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "closed"
    except socket.timeout:
        return "held"
    except OSError:
        return "closed"
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gateway")
    ap.add_argument("billing")
    ap.add_argument("txid")
    ap.add_argument("--addresses", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--prefix6", help="the first 64 bits of the sources, as fd00:1:2:3")
    a = ap.parse_args()
    proof = "OutProofV2" + "".join(random.choice(B58) for _ in range(180))
    verify_body = json.dumps({"txid": a.txid, "proof": proof})
    counts, used, lock = {}, set(), threading.Lock()
    nxt = [0]
    end = time.monotonic() + a.seconds

    def count(kind, status, src):
        with lock:
            k = counts.setdefault(kind, {})
            k[status] = k.get(status, 0) + 1
            used.add(src)

    def worker(n):
        kinds = ["slowbody", "trickle"] if n % 8 == 7 else ["challenge", "verify", "unknown", "free"]
        turn = n
        while time.monotonic() < end:
            with lock:
                src = address(nxt[0] % a.addresses, a.prefix6)
                nxt[0] += 1
            kind = kinds[turn % len(kinds)]
            turn += 1
            if kind == "challenge":
                st = post(a.gateway, "/v1/json_rpc",
                          '{"jsonrpc":"2.0","id":1,"method":"get_info"}', src)
            elif kind == "verify":
                st = post(a.billing, "/api/xmr402/verify", verify_body, src)
            elif kind == "unknown":
                made_up = json.dumps({"txid": "%064x" % random.getrandbits(256), "proof": proof})
                st = post(a.billing, "/api/xmr402/verify", made_up, src)
            elif kind == "free":
                st = post(a.billing, "/api/invoices", '{"tier":"free"}', src)
            else:
                hold = max(1.0, min(30.0, end - time.monotonic()))
                if kind == "trickle":
                    st = slow_body(a.billing, src, hold, burst=6000, trickle_s=2.0)
                else:
                    st = slow_body(a.billing, src, hold)
            count(kind, st, src)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"answers": counts, "addresses": len(used),
                      "seconds": round(time.monotonic() - started, 1)}))


if __name__ == "__main__":
    main()
