#!/usr/bin/env python3
"""Writes the fuzz drivers' seed corpora (tests/fuzz/corpus/<driver>/) from the bodies the
tests already hold: the string literals of the unit tests (preprocessed, so their macros
are expanded and adjacent literals joined), the JSON bodies the integration tests send,
and the .bin bodies tests/epee_bodies.sh makes. Each seed is named by the SHA-1 of its
bytes, as libFuzzer names the inputs it adds, so running this again adds nothing twice.

    tests/fuzz/seeds.py            # from the repository root

Seeds for the drivers that read split points (fuzz.h) get the prefix too: "\\0" (all at
once) and a few fixed splits, and flag variants for the front end."""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
MAX_SEED = 8192
MAX_PER_DRIVER = 400

LITERAL = re.compile(rb'"((?:[^"\\\n]|\\.)*)"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
ESCAPES = {b"n": 10, b"r": 13, b"t": 9, b"a": 7, b"b": 8, b"f": 12, b"v": 11, b"\\": 92,
           b'"': 34, b"'": 39, b"?": 63, b"e": 27}


def unescape(body):
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i:i + 1]
        if c != b"\\":
            out += c
            i += 1
            continue
        e = body[i + 1:i + 2]
        if e in ESCAPES:
            out.append(ESCAPES[e])
            i += 2
        elif e == b"x":
            m = re.match(rb"[0-9a-fA-F]+", body[i + 2:])
            out.append(int(m.group(0), 16) & 255)
            i += 2 + len(m.group(0))
        elif e.isdigit():
            m = re.match(rb"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(0), 8) & 255)
            i += 1 + len(m.group(0))
        else:
            out += e
            i += 2
    return bytes(out)


def own_text(path):
    """The preprocessed text of a C file that comes from the file itself."""
    cpp = subprocess.run(
        ["cc", "-E", "-D_GNU_SOURCE", "-Icommon", "-Igateway", "-Ibilling", "-Itests/unit",
         "-Ibuild/release/gen", path] +
        subprocess.run(["pkg-config", "--cflags", "jansson", "libmicrohttpd", "libpq"],
                       capture_output=True, text=True).stdout.split(),
        cwd=ROOT, capture_output=True, check=True).stdout
    keep, ours = [], False
    for line in cpp.split(b"\n"):
        m = re.match(rb'# \d+ "([^"]*)"', line)
        if m:
            ours = m.group(1) == path.encode()
        elif ours:
            keep.append(line)
    return b"\n".join(keep)


def literals(path):
    """The string literals of a unit test, adjacent ones joined, unescaped."""
    text = own_text(path)
    out, run, end = [], None, -1
    for m in LITERAL.finditer(text):
        if m.group(1) is None:
            continue
        joined = run is not None and text[end:m.start()].strip() == b""
        piece = unescape(m.group(1))
        run = run + piece if joined else piece
        if joined:
            out[-1] = run
        else:
            out.append(run)
        end = m.end()
    return out


def unit(*names):
    out = []
    for n in names:
        out += literals(os.path.join("tests", "unit", n))
    return out


def shell_json(*globs):
    """Single-quoted JSON objects in the integration tests' shell scripts."""
    out = []
    idir = os.path.join(ROOT, "tests", "integration")
    for name in sorted(os.listdir(idir)):
        if not name.endswith(".sh") or not any(g in name for g in globs):
            continue
        with open(os.path.join(idir, name), "rb") as f:
            out += re.findall(rb"'(\{[^'\n]*)'", f.read())
    return out


def epee_bodies():
    script = os.path.join(ROOT, "tests", "epee_bodies.sh")
    calls = ["epee_heights_body 0", "epee_heights_body 3000000", "epee_outs_body 7",
             "epee_outs_body 123456789", "epee_blocks_body " + "ab" * 32]
    out = []
    for call in calls:
        out.append(subprocess.run(["bash", "-c", '. "$0"; ' + call, script],
                                  capture_output=True, check=True).stdout)
    return out


def is_json(b):
    try:
        json.loads(b)
        return True
    except ValueError:
        return False


def write(driver, seeds):
    d = os.path.join(CORPUS, driver)
    os.makedirs(d, exist_ok=True)
    seen = set()
    for s in seeds:
        if len(seen) == MAX_PER_DRIVER:
            break
        if len(s) > MAX_SEED or s in seen:
            continue
        seen.add(s)
        with open(os.path.join(d, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)
    print(f"{driver}: {len(seen)} seeds")


SPLITS = [b"\x00", b"\x01\x00", b"\x03\x00\x04\x0f"]  # whole; byte by byte; 1, 5, 16


def split_variants(bodies, prefixes=SPLITS):
    return [p + b for b in bodies for p in prefixes]


def main():
    epee_header = b"\x01\x11\x01\x01\x01\x01\x02\x01"

    # Requests as clients send them: every literal that holds a request line.
    request_line = re.compile(rb"^(\r?\n)*[A-Z]+ \S* HTTP/\d\.\d\r?\n")
    requests = [s for s in unit("test_hreq.c", "test_front.c") if request_line.match(s)]
    write("hreq", split_variants(requests) + [b"\x08" + r for r in requests])

    chunked = [s for s in unit("test_hreq.c") if re.match(rb"^[0-9a-fA-F]+(;[^\r\n]*)?\r\n", s)]
    for r in requests:
        head, sep, body = r.partition(b"\r\n\r\n")
        if sep and b"chunked" in head.lower() and body:
            chunked.append(body)
    write("hreq_chunked", split_variants(chunked))

    # The front end: the same requests, pipelined in pairs, down each handler path.
    tails = [r.replace(b" / ", b" /d ", 1) for r in requests[:20]]
    tails += [r.replace(b" / ", b" /x ", 1) for r in requests[:10]]
    pairs = [a + b for a, b in zip(requests, requests[1:])][:40]
    front = requests + tails + pairs
    write("front", [p + b for b in front for p in (b"\x00", b"\x08", b"\x13\x00\x02\x06",
                                                    b"\x20", b"\x0b\x00\x06\x1f")])

    answers = [s for s in unit("test_http1.c", "test_nodeconn.c") if s.startswith(b"HTTP/1.")]
    write("http1", split_variants(answers) + [b"\x10" + a for a in answers] +
          [b"\x08" + a for a in answers])

    bins = [s for s in unit("test_epee.c", "test_proxy.c") if s.startswith(epee_header)]
    write("epee", epee_bodies() + bins)

    # Credentials: each Authorization value the tests send, on a root and an agent path.
    auth_lits = unit("test_auth.c", "test_digest.c", "test_xmr402.c")
    schemes = (b"Digest ", b"Basic ", b"Bearer ", b"XMR402 ", b"digest ", b"basic ")
    headers = [s for s in auth_lits if s.startswith(schemes)]
    paths = [s for s in auth_lits if s.startswith(b"/") and len(s) < 200]
    auth = [b"\x01/json_rpc\n" + h + b"\n\n" for h in headers]
    auth += [b"\x71/json_rpc\n" + h + b"\n\n/json_rpc" for h in headers if h.startswith(b"Digest")]
    auth += [b"\x00" + p for p in paths]
    auth += [b"\x04/get_info\n\n" + m.group(0) for m in
             (re.search(rb"xg_[A-Za-z0-9_-]+", p) for p in paths) if m]
    tokens = sorted({m.group(0) for s in auth_lits
                     for m in re.finditer(rb"xg_[A-Za-z0-9_-]{43}", s)})[:4]
    for t in tokens:
        for user in (b"", b"t_fuzz"):
            auth.append(b"\x01/json_rpc\nBasic " + base64.b64encode(user + b":" + t) + b"\n\n")
        auth.append(b"\x01/json_rpc\nBearer " + t + b"\n\n")
        auth.append(b"\x00/v1/" + t + b"/get_info")
    write("auth", auth)

    params = [s for s in unit("test_xmr402.c") if b"txid" in s or b"proof" in s]
    write("xmr402", params + [h[len(b"XMR402 "):] for h in headers if h.startswith(b"XMR402 ")])

    json_lits = [s for s in unit("test_jsonrpc.c", "test_cache.c", "test_proxy.c",
                                 "test_methods.c", "test_limits.c")
                 if s[:1] in (b"{", b"[") and is_json(s)]
    write("jsonrpc", json_lits)
    write("cache_key", [s for s in json_lits if s.startswith(b"{")])

    price_lits = unit("test_pricing.c")
    pricing = [price_lits[i + 1] + b"\n" + price_lits[i] for i in range(len(price_lits) - 1)
               if price_lits[i][:1] in (b"{", b"[", b"1") and b"\n" not in price_lits[i + 1]
               and len(price_lits[i + 1]) < 64]
    pricing += [b"\n" + s for s in price_lits if re.match(rb"^[0-9.]+$", s)]
    write("pricing", pricing)

    invoices = [s for s in shell_json("billing", "limits", "ops", "stack") if b"tier" in s]
    write("api_invoice", invoices + [b'{"tier":"free"}', b'{"tier":"wallet","months":3,'
                                     b'"channel":"web"}',
                                     b'{"tier":"wallet","webhook_url":"https://[::1]:8443/h?x"}'])

    txid = next(s for s in unit("test_xmr402.c") if re.fullmatch(rb"[0-9a-f]{64}", s))
    proof = next(s for s in unit("test_xmr402.c") if s.startswith(b"OutProofV"))
    xmr402 = [b'{"tier":"wallet"}', b"{}", b""]
    xmr402 += [b'{"txid":"%s","proof":"%s"}' % (txid, proof),
             b'{"txid":"%s","proof":"%s","invoice":"123e4567-e89b-12d3-a456-426614174000"}'
             % (txid.upper(), proof)]
    xmr402 += [s for s in shell_json("xmr402") if b"tier" in s or b"txid" in s]
    write("api_xmr402", xmr402)
    return 0


if __name__ == "__main__":
    sys.exit(main())
