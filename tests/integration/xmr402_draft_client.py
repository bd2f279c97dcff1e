#!/usr/bin/env python3
"""A client written to the public XMR402 draft (xmr402.org, "Draft v2.0" and the v2.1
draft), not to xmrgate: it knows 200, 402, 400 and 403 and nothing else.

    xmr402_draft_client.py URL WALLET_RPC_URL [--source ADDRESS] [--max-piconero N]
                           [--ttl SECONDS] [--sse] [--leave-after-accepted]

The loop, as the draft words it: POST a JSON-RPC request to URL; on 402 read
WWW-Authenticate: XMR402 address="…", amount="<piconero>", message="<nonce>",
timestamp="<unix ms>" (parsed leniently, (\\w+)="([^"]*)"); refuse a challenge older than
the TTL (300 s, v2.1) or dearer than the spending cap (0.1 XMR, the reference gateway's
MAX_XMR_PER_REQUEST); pay it with the wallet's `transfer`, sign `get_tx_proof` over the
address and message, and repeat the request at once with
    Authorization: XMR402 txid="<txid>", proof="<signature>"
which must be answered 200 with the resource. Only the standard library.

With --sse (v2.1 streaming) the challenge must carry features="sse"; the retry adds
Accept: text/event-stream and reads the answer as a stream of events: `event: accepted`
with {"status":"mempool","access_token":…} first, then `event: confirmed`, then the
stream's end. Each event is printed as one JSON line as it arrives ({"event", "data",
"at"}), so that a caller can act on it while the stream stays open; the summary object
comes last. --leave-after-accepted closes the connection right after `accepted`.

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


def read_events(resp, on_event):
    """Reads text/event-stream from resp until it ends, calling on_event(name, data) for
    each event (the WHATWG framing: field lines, a blank line ends an event, ':' starts
    a comment); stops early when on_event returns False. Returns the events read."""
    events, name, data = [], None, []
    while True:
        raw = resp.fp.readline()
        if not raw:
            return events
        line = raw.decode().rstrip("\r\n")
        if line == "":
            if data or name:
                ev = (name or "message", "\n".join(data))
                events.append(ev)
                name, data = None, []
                if on_event(*ev) is False:
                    return events
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)


def stream(url, body, headers, source, leave_after_accepted):
    """POSTs body with Accept: text/event-stream; prints each event as a JSON line as it
    comes. Returns (status, headers, events, text when no stream)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600,
                                      source_address=(source, 0) if source else None)
    path = u.path + ("?" + u.query if u.query else "")
    try:
        conn.request("POST", path, body=body, headers=dict(
            {"Content-Type": "application/json", "Accept": "text/event-stream"}, **headers))
        r = conn.getresponse()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        if r.status != 200 or not hdrs.get("content-type", "").startswith("text/event-stream"):
            return r.status, hdrs, [], r.read().decode()

        def on_event(name, data):
            print(json.dumps({"event": name, "data": json.loads(data), "at": time.time()}),
                  flush=True)
            return not (leave_after_accepted and name == "accepted")

        return r.status, hdrs, read_events(r, on_event), None
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
    ap.add_argument("--sse", action="store_true")
    ap.add_argument("--leave-after-accepted", action="store_true")
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
    if args.sse and "sse" not in ch.get("features", "").split(","):
        out.update(status=status, error="the challenge offers no event stream")
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

    if args.sse:
        print(json.dumps({"paid": txid, "authorization": authorization}), flush=True)
        status, headers, events, text = stream(args.url, request,
                                               {"Authorization": authorization}, args.source,
                                               args.leave_after_accepted)
        names = [name for name, _ in events]
        out.update(status=status, headers=headers, body=text, events=names,
                   ended_at=time.time())
        want = ["accepted"] if args.leave_after_accepted else ["accepted", "confirmed"]
        if status != 200:
            out["error"] = "no event stream"
        elif names != want:
            out["error"] = "the events were not " + " then ".join(want)
        print(json.dumps(out))
        return 0 if "error" not in out else 1
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
