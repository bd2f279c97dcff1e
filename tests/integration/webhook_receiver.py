#!/usr/bin/env python3
"""A webhook receiver written to docs/BILLING.md "Webhooks", for test_billing_webhooks.sh.

    webhook_receiver.py PORT SECRETS_FILE LOG_FILE

Listens on 127.0.0.1:PORT. Each POST is checked as the contract tells a receiver to:
the secret of the invoice named in the body (SECRETS_FILE holds "<invoice id> <secret>"
lines, re-read at each request), the Xmrgate-Signature header "t=<unix>,v1=<hex>" with
hex = HMAC-SHA256(secret, "<t>.<body>") compared in constant time, t within 300 s of
now, and the Xmrgate-Event-Id header equal to the body's id. A valid delivery is
answered 200, anything else 400. Every delivery is appended to LOG_FILE as one JSON line:
{"event_id", "type", "confirmations", "invoice", "valid", "why", "t", "received"}.
Only the standard library.
"""
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_S = 300


def load_secrets(path):
    secrets = {}
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    secrets[parts[0]] = parts[1]
    except FileNotFoundError:
        pass
    return secrets


def verify(secret, header, body):
    fields = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    if set(fields) != {"t", "v1"} or not fields["t"].isdigit():
        return False, "malformed signature header", None
    t = int(fields["t"])
    if abs(time.time() - t) > TOLERANCE_S:
        return False, "timestamp outside the tolerance", t
    want = hmac.new(secret.encode(), str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, fields["v1"]):
        return False, "signature mismatch", t
    return True, "", t


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        record = {"received": time.time(), "valid": False}
        try:
            doc = json.loads(body)
            inv = doc["invoice"]["id"]
            record.update(event_id=doc["id"], type=doc["type"], invoice=inv,
                          confirmations=doc["invoice"]["confirmations"])
            secret = load_secrets(self.server.secrets_path).get(inv)
            if secret is None:
                record["why"] = "no secret for this invoice"
            elif self.headers.get("Xmrgate-Event-Id") != doc["id"]:
                record["why"] = "Xmrgate-Event-Id differs from the body's id"
            else:
                ok, why, t = verify(secret, self.headers.get("Xmrgate-Signature", ""), body)
                record.update(valid=ok, why=why, t=t)
        except (ValueError, KeyError, TypeError) as e:
            record["why"] = "unreadable body: %s" % e
        with open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(200 if record["valid"] else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.secrets_path = sys.argv[2]
    server.log_path = sys.argv[3]
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
