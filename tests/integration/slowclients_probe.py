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
  burst-trickle PORT SRC PATH   declares 1000000 bytes, sends all but 100 at once, then one
                                byte every 2 s: prints "408 SECONDS" (or "closed SECONDS")
                                when the server gave up SECONDS after the burst, "open"
                                if still open after 60 s
  steady PORT SRC PATH SECONDS  sends a get_info body padded to 3000 bytes a second for
                                SECONDS, 300 bytes every 0.1 s: prints the status
  slow-reader PORT PATH BODY    POSTs BODY (JSON) to PATH with a 4 KiB receive buffer, then
                                reads 100 bytes a second: prints "closed SECONDS GOT/LENGTH"
                                when the server closed (reset) before the whole answer
                                (the socket's TCP state, since a reset leaves the bytes
                                already received readable), "whole" if
                                all of it came, "open" after 60 s
  hold PORT PATH N SECONDS      opens N connections (sources 127.0.1.1..), each sending a
                                head declaring 64 MiB and 1 KiB of body, holds them
                                SECONDS (prints "held N" once all are sent), then closes
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


def burst_trickle(port, src, path):
    length = 1000000
    s = connect(port, src)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, length)).encode())
    s.sendall(b" " * (length - 100))
    start = time.time()
    s.setblocking(False)
    got = b""
    while time.time() - start < 60:
        try:
            s.send(b" ")
        except (BrokenPipeError, ConnectionResetError):
            break
        deadline = time.time() + 2
        closed = False
        while time.time() < deadline:
            try:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                got += chunk
            except BlockingIOError:
                time.sleep(0.05)
            except ConnectionResetError:
                closed = True
                break
        if closed:
            break
    else:
        print("open")
        return
    print(status_of(got), "%.1f" % (time.time() - start))


def steady(port, src, path, seconds):
    per = 300
    length = per * 10 * int(seconds)
    body = b'{"jsonrpc":"2.0","id":1,"method":"get_info"}'
    body += b" " * (length - len(body))
    s = connect(port, src)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, length)).encode())
    try:
        for i in range(0, length, per):
            s.sendall(body[i:i + per])
            time.sleep(0.1)
    except (BrokenPipeError, ConnectionResetError):
        print("closed")
        return
    print(status_of(answer(s, 20)))


def slow_reader(port, path, body):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    data = body.encode()
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, len(data))).encode() + data)
    got = b""
    length = None
    start = time.time()
    s.settimeout(2)
    while time.time() - start < 60:
        try:
            chunk = s.recv(100)
        except socket.timeout:
            continue
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            break
        got += chunk
        # A reset leaves what the kernel already holds readable: the state tells the close.
        if s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != 1:  # not ESTABLISHED
            break
        if length is None and b"\r\n\r\n" in got:
            head, _, _ = got.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = len(head) + 4 + int(line.split(b":")[1])
        if length is not None and len(got) >= length:
            print("whole")
            return
        time.sleep(1)
    else:
        print("open")
        return
    print("closed", "%.1f" % (time.time() - start), "%d/%s" % (len(got), length))


def hold(port, path, n, seconds):
    held = []
    for i in range(int(n)):
        s = connect(port, "127.0.1.%d" % (i % 250 + 1) if i < 250 else "127.0.2.%d" % (i - 249))
        s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Content-Length: %d\r\n\r\n" % (path, 64 << 20)).encode() + b" " * 1024)
        held.append(s)
    print("held", len(held), flush=True)
    time.sleep(float(seconds))
    for s in held:
        s.close()


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
    elif cmd == "burst-trickle":
        burst_trickle(int(args[0]), args[1], args[2])
    elif cmd == "steady":
        steady(int(args[0]), args[1], args[2], args[3])
    elif cmd == "slow-reader":
        slow_reader(int(args[0]), args[1], args[2])
    elif cmd == "hold":
        hold(int(args[0]), args[1], args[2], args[3])
    else:
        sys.exit("unknown subcommand " + cmd)
