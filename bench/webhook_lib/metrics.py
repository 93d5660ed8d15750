"""The servers' and the apiserver's Prometheus metrics: the request counters that check
every run's verdicts, and histograms as deltas over a burst."""
import re
import socket

from .names import VALIDATE_PATH


def http_get(port, path, timeout=2.0):
    """Plain HTTP/1.0 GET on 127.0.0.1 (the metrics port): (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def request_counters(metrics_port):
    """tenantgate_webhook_requests_total for the validate path: {(verdict, reason): n}."""
    _, text = http_get(metrics_port, "/metrics")
    out = {}
    for line in text.splitlines():
        if not line.startswith("tenantgate_webhook_requests_total{"):
            continue
        labels, value = line.rsplit(" ", 1)
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if lab.get("path") == VALIDATE_PATH:
            out[(lab["verdict"], lab["reason"])] = out.get((lab["verdict"], lab["reason"]), 0) + float(value)
    return out


def counter_delta(before, after):
    return {k: int(after.get(k, 0) - before.get(k, 0)) for k in after if after.get(k, 0) != before.get(k, 0)}


def histogram(text, metric, match):
    """One Prometheus histogram from a text exposition, summed over the series
    whose labels include match: {"buckets": {le: cumulative}, "sum", "count"}."""
    h = {"buckets": {}, "sum": 0.0, "count": 0.0}
    for line in text.splitlines():
        if not line.startswith(metric + "_"):
            continue
        series, value = line.rsplit(" ", 1)
        lab = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if any(lab.get(k) != v for k, v in match.items()):
            continue
        kind = series.split("{", 1)[0][len(metric) + 1:]
        if kind == "bucket":
            le = float("inf") if lab["le"] == "+Inf" else float(lab["le"])
            h["buckets"][le] = h["buckets"].get(le, 0.0) + float(value)
        elif kind in ("sum", "count"):
            h[kind] += float(value)
    return h


def histogram_delta(after, before):
    return {"buckets": {le: n - before["buckets"].get(le, 0.0) for le, n in after["buckets"].items()},
            "sum": after["sum"] - before["sum"], "count": after["count"] - before["count"]}
