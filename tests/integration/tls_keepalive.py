#!/usr/bin/env python3
"""tls_keepalive — one HTTPS keep-alive connection held across a certificate reload.

    tls_keepalive.py HOST PORT PATH GO_FILE

Connects once (no verification: the test compares fingerprints itself), sends GET PATH,
prints `before <status> <sha256 of the peer certificate> <local port>`, waits (up to 60 s)
for GO_FILE to exist, sends GET PATH again on the same connection and prints `after
<status> <sha256> <local port>`. Exits 1 when the connection was closed in between."""
import hashlib
import http.client
import os
import ssl
import sys
import time


def main():
    host, port, path, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=30)

    def ask(label):
        conn.request("GET", path, headers={"Connection": "keep-alive"})
        resp = conn.getresponse()
        resp.read()
        fp = hashlib.sha256(conn.sock.getpeercert(binary_form=True)).hexdigest()
        print(label, resp.status, fp, conn.sock.getsockname()[1], flush=True)
        return conn.sock

    first = ask("before")
    deadline = time.monotonic() + 60
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            print("no go file", flush=True)
            return 1
        time.sleep(0.05)
    conn.auto_open = 0  # a closed connection must fail, not silently reconnect
    try:
        second = ask("after")
    except (http.client.HTTPException, OSError) as e:
        print("after failed", type(e).__name__, e, flush=True)
        return 1
    return 0 if second is first else 1


if __name__ == "__main__":
    sys.exit(main())
