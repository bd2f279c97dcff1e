#!/usr/bin/env python3
"""A client written to the public XMR402 draft (xmr402.org, "Draft v2.0" and the v2.1
draft), not to xmrgate: it knows 200, 402, 400 and 403 and nothing else.

    xmr402_draft_client.py URL WALLET_RPC_URL [--source ADDRESS] [--max-piconero N]
                           [--ttl SECONDS]

The loop, as the draft words it: POST a JSON-RPC request to URL; on 402 read
WWW-Authenticate: XMR402 address="…", amount="<piconero>", message="<nonce>",
timestamp="<unix ms>" (parsed leniently, (\\w+)="([^"]*)"); refuse a challenge older than
the TTL (300 s, v2.1) or dearer than the spending cap (0.1 XMR, the reference gateway's
MAX_XMR_PER_REQUEST); pay it with the wallet's `transfer`, sign `get_tx_proof` over the
address and message, and repeat the request at once with
    Authorization: XMR402 txid="<txid>", proof="<signature>"
which must be answered 200 with the resource. Only the standard library.

Prints one JSON object on stdout: the final status, the body, the headers, the
challenge, txid, and the wall-clock times of the payment and the answer. Exit status 0
when the paid request got 200, 1 otherwise, 2 on usage errors.
"""

import argparse
import http.client
import json
import re
import sys
import time
import urllib.parse

PARAM = re.compile(r'(\w+)="([^"]*)"')
DEFAULT_CAP = 100_000_000_000  # 0.1 XMR in piconero


def post(url, body, headers, source):
    """POST body to url from the source address; returns (status, headers, text)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=60,
                                      source_address=(source, 0) if source else None)
    path = u.path + ("?" + u.query if u.query else "")
    try:
        conn.request("POST", path, body=body,
                     headers=dict({"Content-Type": "application/json"}, **headers))
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


def wallet(url, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": "0", "method": method, "params": params})
    status, _, text = post(url.rstrip("/") + "/json_rpc", body, {}, None)
    doc = json.loads(text)
    if status != 200 or "error" in doc:
        raise RuntimeError(f"wallet {method}: {text[:300]}")
    return doc["result"]


def challenge_of(headers):
    value = headers.get("www-authenticate", "")
    if not value.startswith("XMR402"):
        return None
    return dict(PARAM.findall(value))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("wallet")
    ap.add_argument("--source", default=None)
    ap.add_argument("--max-piconero", type=int, default=DEFAULT_CAP)
    ap.add_argument("--ttl", type=int, default=300)
    args = ap.parse_args()

    request = json.dumps({"jsonrpc": "2.0", "id": "draft", "method": "get_info"})
    out = {}
    status, headers, text = post(args.url, request, {}, args.source)
    out["first_status"] = status
    if status != 402:
        out.update(status=status, body=text, error="expected 402")
        print(json.dumps(out))
        return 1
    ch = challenge_of(headers)
    out["challenge"] = ch
    if not ch or not all(k in ch for k in ("address", "amount", "message", "timestamp")):
        out.update(status=status, error="no XMR402 challenge")
        print(json.dumps(out))
        return 1
    age_ms = time.time() * 1000 - int(ch["timestamp"])
    out["challenge_age_ms"] = age_ms
    if age_ms > args.ttl * 1000 or age_ms < -60_000:
        out.update(status=status, error="challenge expired (timestamp is unix ms)")
        print(json.dumps(out))
        return 1
    amount = int(ch["amount"])
    if amount > args.max_piconero:
        out.update(status=status, error="over the spending cap")
        print(json.dumps(out))
        return 1

    paid = wallet(args.wallet, "transfer", {
        "destinations": [{"address": ch["address"], "amount": amount}],
        "account_index": 0, "priority": 0})
    txid = paid["tx_hash"]
    out["txid"] = txid
    out["paid_at"] = time.time()
    proof = wallet(args.wallet, "get_tx_proof", {
        "txid": txid, "address": ch["address"], "message": ch["message"]})["signature"]
    authorization = f'XMR402 txid="{txid}", proof="{proof}"'
    out.update(authorization=authorization, proof=proof)

    status, headers, text = post(args.url, request, {"Authorization": authorization},
                                 args.source)
    out.update(status=status, headers=headers, body=text, answered_at=time.time())
    if status == 200:
        out["answer"] = json.loads(text)
    elif status in (400, 403):
        out["error"] = "refused"
    elif status == 402:
        out["error"] = "asked to pay again"
    else:
        out["error"] = "a status the draft does not define"
    print(json.dumps(out))
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
