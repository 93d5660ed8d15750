#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_kube_h1_response (kube/fuzz/h1_response/).
Each seed is one byte (the piece size less one) and then a response as an
API server sends it: a list with Content-Length, a chunked watch, an error
Status, an interim 100 before the answer, and a close-framed body."""
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "h1_response")

LIST = b'{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[]}'
EVENTS = [b'{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"a","resourceVersion":"43"}}}\n',
          b'{"type":"BOOKMARK","object":{"kind":"Secret","metadata":{"resourceVersion":"44"}}}\n']
STATUS = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}'


def chunked(parts):
    out = b""
    for p in parts:
        out += b"%x\r\n" % len(p) + p + b"\r\n"
    return out + b"0\r\n\r\n"


SEEDS = {
    "list-content-length": (255, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(LIST) + LIST),
    "watch-chunked": (7, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n" + chunked(EVENTS)),
    "forbidden-status": (31, b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(STATUS) + STATUS),
    "interim-then-ok": (0, b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"),
    "close-framed": (63, b"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n" + LIST),
}

os.makedirs(HERE, exist_ok=True)
for name, (piece, wire) in SEEDS.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(bytes([piece]) + wire)
