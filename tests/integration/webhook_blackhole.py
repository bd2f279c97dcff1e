#!/usr/bin/env python3
"""A webhook receiver that is black-holed, for test_billing_webhook_fairness.sh.

    webhook_blackhole.py PORT STATS_FILE

Listens on 127.0.0.1:PORT, accepts every connection, reads what it is sent and never
answers. STATS_FILE is rewritten as one JSON object on every change:
{"connections": accepted so far, "open": held now, "max_open": the most held at once}.
Only the standard library.
"""
import json
import os
import selectors
import socket
import sys


def main():
    port, stats_path = int(sys.argv[1]), sys.argv[2]
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", port))
    lsock.listen(128)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ)
    stats = {"connections": 0, "open": 0, "max_open": 0}

    def write():
        tmp = stats_path + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            json.dump(stats, f)
        os.replace(tmp, stats_path)

    write()
    while True:
        for key, _ in sel.select():
            if key.fileobj is lsock:
                c, _ = lsock.accept()
                sel.register(c, selectors.EVENT_READ)
                stats["connections"] += 1
                stats["open"] += 1
                stats["max_open"] = max(stats["max_open"], stats["open"])
                write()
                continue
            try:
                data = key.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                stats["open"] -= 1
                write()


if __name__ == "__main__":
    main()
