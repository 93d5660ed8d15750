"""What every part of bench/onboard shares: errors, subprocesses, /proc readings, the API
server's own request accounting."""
import http.client
import os
import re
import socket
import ssl
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)
CLUSTER_TOOL = os.path.join(REPO, "e2e", "cluster")
NS = "liqo"
PROVIDER_ID = "bench-provider"


class BenchError(Exception):
    """A step went wrong: the numbers would mean nothing."""


def log(msg):
    print(f"bench/onboard: {msg}", file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    p = subprocess.run([str(c) for c in cmd], text=True, capture_output=True, **kw)
    if check and p.returncode != 0:
        raise BenchError(f"{' '.join(map(str, cmd[:4]))} ... exited {p.returncode}:\n"
                         f"{(p.stderr or '')[-2000:]}{(p.stdout or '')[-500:]}")
    return p


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def http_get(port, path, timeout=2.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(val.split()[0]) / 1024.0
    return out


def quantile(values, q):
    """Nearest-rank quantile (p99 of 10 values is the largest)."""
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(-(-q * len(v) // 1)) - 1))]


def metric_values(text, name):
    """{labels text: value} of one metric family in a Prometheus exposition."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            series, value = line.rsplit(" ", 1)
            out[series[len(name):]] = float(value)
    return out


def apiserver_requests(env):
    """The apiserver's own request accounting: {(verb, resource/subresource): [count, seconds]}
    from apiserver_request_duration_seconds, plus the admission webhooks' under
    ("webhook", name/operation)."""
    pki = os.path.join(env["KUBE_STATE_DIR"], "pki")
    ctx = ssl.create_default_context(cafile=env["KUBE_CA_FILE"])
    ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
    host, port = env["KUBE_APISERVER"].split("//", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode(errors="replace")
    conn.close()
    out = {}
    for line in text.splitlines():
        for fam, key in (("apiserver_request_duration_seconds_", ("verb", "resource", "subresource")),
                         ("apiserver_admission_webhook_admission_duration_seconds_", ("name", "operation", None))):
            if not line.startswith(fam):
                continue
            series, value = line.rsplit(" ", 1)
            kind = series.split("{", 1)[0][len(fam):]
            if kind not in ("sum", "count"):
                continue
            lab = dict(re.findall(r'(\w+)="([^"]*)"', series))
            if key[2] is None:
                k = ("webhook", f"{lab.get('name', '').split('.')[1]}/{lab.get(key[1], '')}")
            else:
                sub = lab.get(key[2], "")
                k = (lab.get(key[0], ""), lab.get(key[1], "") + (f"/{sub}" if sub else ""))
            e = out.setdefault(k, [0.0, 0.0])
            e[0 if kind == "count" else 1] += float(value)
    return out


def histogram_buckets(text, name):
    """{labels without le: {le: cumulative count}} of one histogram family."""
    out = {}
    for line in text.splitlines():
        if not line.startswith(name + "_bucket{"):
            continue
        series, value = line.rsplit(" ", 1)
        lab = dict(re.findall(r'(\w+)="([^"]*)"', series))
        le = float(lab.pop("le"))
        key = ",".join(f"{k}={v}" for k, v in sorted(lab.items()))
        out.setdefault(key, {})[le] = float(value)
    return out


def histogram_delta_quantile(before, after, q):
    """{series: (count, q-quantile in s)} of the observations made between two scrapes
    (histogram_buckets of each), interpolated linearly inside the bucket that holds it, as
    Prometheus' histogram_quantile does (the largest finite bound when it is above them all)."""
    out = {}
    for key, b1 in after.items():
        b0 = before.get(key, {})
        delta = sorted((le, c - b0.get(le, 0.0)) for le, c in b1.items())
        total = delta[-1][1] if delta else 0.0
        if total <= 0:
            continue
        rank, lo, below = q * total, 0.0, 0.0
        for le, c in delta:
            if c >= rank:
                value = lo if le == float("inf") else lo + (le - lo) * (rank - below) / max(c - below, 1e-9)
                break
            lo, below = le, c
        out[key] = (total, value)
    return out
