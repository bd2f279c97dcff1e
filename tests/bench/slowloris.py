#!/usr/bin/env python3
"""Holds COUNT slow client connections to 127.0.0.1:PORT for SECONDS, spread over the
source addresses given (e.g. 127.0.0.2-9), for tests/bench/slowclients.sh.

  slowloris.py PORT COUNT SECONDS MODE PATH ADDR...

MODE head: each connection trickles a request head, one byte a second; body: each sends
the head of a POST to PATH with Content-Length 100000, then its body one byte a second.
A connection the gateway closes (a 408, a 503 at accept, a reset) is opened again at
once, so COUNT are always trying. Prints one line of JSON: connections opened, answers
by status, closes without an answer, and the most held open at once.
"""
import asyncio
import json
import sys
import time

stats = {"opened": 0, "answers": {}, "closed_unanswered": 0, "connect_failed": 0,
         "held_max": 0}
held = 0


async def one(port, src, mode, path, until):
    global held
    while time.time() < until:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(src, 0))
        except OSError:
            stats["connect_failed"] += 1
            await asyncio.sleep(0.5)
            continue
        stats["opened"] += 1
        held += 1
        stats["held_max"] = max(stats["held_max"], held)
        if mode == "head":
            data = b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000
        else:
            writer.write(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                          % path).encode())
            data = b" " * 100000
        answer = b""
        try:
            for b in data:
                if time.time() >= until:
                    break
                writer.write(bytes([b]))
                await writer.drain()
                try:
                    answer = await asyncio.wait_for(reader.read(4096), 1.0)
                    break  # an answer or the end: the server let go
                except asyncio.TimeoutError:
                    pass
        except (ConnectionError, OSError):
            pass
        held -= 1
        if answer.startswith(b"HTTP/1."):
            st = answer.split(b" ", 2)[1].decode()
            stats["answers"][st] = stats["answers"].get(st, 0) + 1
        elif time.time() < until:
            stats["closed_unanswered"] += 1
        writer.close()
        if not answer:
            await asyncio.sleep(1.0)  # refused or reset: do not spin


async def main():
    port, count, seconds, mode, path = (int(sys.argv[1]), int(sys.argv[2]),
                                        float(sys.argv[3]), sys.argv[4], sys.argv[5])
    addrs = sys.argv[6:]
    until = time.time() + seconds
    tasks = []
    for i in range(count):
        tasks.append(asyncio.create_task(one(port, addrs[i % len(addrs)], mode, path, until)))
        if i % 100 == 99:
            await asyncio.sleep(0.05)  # a ramp, not one SYN flood
    await asyncio.gather(*tasks)
    print(json.dumps(stats))


asyncio.run(main())
