#!/usr/bin/env python3
"""Slow and many clients against a listener, for test_gateway_slowclients.sh.

Each subcommand prints one word the test compares (and details on stderr):
  slow-head PORT SRC            trickles a request head, one byte every 0.4 s, from SRC;
                                prints "408" when answered so, "closed" when the server
                                closed without an answer, "open" if still open after 20 s
  slow-body PORT SRC PATH [LEN] sends a whole head (Content-Length LEN, 100000) for PATH, then
                                the body one byte every 0.4 s: as slow-head
  cap PORT SRC OTHER N PATH     holds N connections from SRC, then tries one more from SRC
                                and one from OTHER, each sending GET PATH; prints
                                "<extra> <other> <again>": the status (or "refused") of the
                                extra connection, of OTHER's, and of one from SRC after
                                one of the N closed
  head-only PORT PATH [HEADER]  sends only the head of a 1 MB POST to PATH and prints the
                                status answered without a byte of its body ("none" when
                                nothing came within 5 s)
"""
import socket
import sys
import time


def connect(port, src="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def status_of(data):
    if data.startswith(b"HTTP/1."):
        return data.split(b" ", 2)[1].decode()
    return "closed"


def answer(s, wait):
    """What the server sent before it closed, within wait seconds (b"" for none)."""
    s.settimeout(wait)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return got


def trickle(s, data, limit=20.0):
    """Sends data one byte every 0.4 s; returns what the server answered when it closed,
    or None when it was still open after limit seconds."""
    s.setblocking(False)
    start = time.time()
    got = b""
    for b in data:
        if time.time() - start > limit:
            return None
        try:
            s.send(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            return got
        deadline = time.time() + 0.4
        while time.time() < deadline:
            try:
                chunk = s.recv(65536)
                if not chunk:
                    return got
                got += chunk
            except BlockingIOError:
                time.sleep(0.05)
            except ConnectionResetError:
                return got
    return None


def slow_head(port, src):
    s = connect(port, src)
    head = b"GET /get_height HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000 + b"\r\n\r\n"
    got = trickle(s, head)
    print("open" if got is None else status_of(got))


def slow_body(port, src, path, length=100000):
    s = connect(port, src)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, length)).encode())
    got = trickle(s, b" " * length)
    print("open" if got is None else status_of(got))


def request_status(s, path):
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    except (BrokenPipeError, ConnectionResetError):
        return "refused"
    s.settimeout(10)
    try:
        data = s.recv(65536)
    except (socket.timeout, ConnectionResetError):
        return "refused"
    st = status_of(data)
    return "refused" if st in ("closed", "503") else st


def cap(port, src, other, n, path):
    held = [connect(port, src) for _ in range(int(n))]
    time.sleep(0.5)  # the server took them all
    try:
        extra = request_status(connect(port, src), path)
    except OSError:
        extra = "refused"
    other_status = request_status(connect(port, other), path)
    held.pop().close()
    again = "refused"
    for _ in range(20):  # the close reaches the server's loop soon
        time.sleep(0.25)
        again = request_status(connect(port, src), path)
        if again != "refused":
            break
    print(extra, other_status, again)
    for s in held:
        s.close()


def head_only(port, path, header=None):
    s = connect(port)
    extra = header + "\r\n" if header else ""
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: 1000000\r\n%s\r\n" % (path, extra)).encode())
    s.settimeout(5)
    try:
        data = s.recv(65536)
    except socket.timeout:
        print("none")
        return
    print(status_of(data) if data else "closed")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "slow-head":
        slow_head(int(args[0]), args[1])
    elif cmd == "slow-body":
        slow_body(int(args[0]), args[1], args[2], int(args[3]) if len(args) > 3 else 100000)
    elif cmd == "cap":
        cap(int(args[0]), args[1], args[2], args[3], args[4])
    elif cmd == "head-only":
        head_only(int(args[0]), args[1], args[2] if len(args) > 2 else None)
    else:
        sys.exit("unknown subcommand " + cmd)
