#!/usr/bin/env python3
"""delay_proxy — a TCP forwarder that delays every byte by a fixed time each way: the
distance between two regions, for a machine whose kernel has no netem.

    delay_proxy.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS

Each direction of each connection is a delay line: what is read at time t is written at
t + DELAY_MS, in order, without holding back what is read meanwhile (latency, not a
bandwidth limit); a round trip through it costs 2 × DELAY_MS more. A side that closes is
closed on the other side after the delay. Runs until killed."""
import asyncio
import sys


async def line(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((loop.time() + delay, b""))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    host, port, thost, tport, delay_ms = sys.argv[1:6]
    delay = int(delay_ms) / 1000.0

    async def on_client(creader, cwriter):
        try:
            treader, twriter = await asyncio.open_connection(thost, int(tport))
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(line(creader, twriter, delay), line(treader, cwriter, delay))

    server = await asyncio.start_server(on_client, host, int(port))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
