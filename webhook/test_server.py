"""Black-box tests of the tenantgate-webhook binary on 127.0.0.1.

The binary runs as shipped: a real kubeconfig pointing at an API server that
is not there, so the caches never sync. Everything tested here needs no
cluster: HTTP errors, AdmissionReview handling, TLS, HTTP/2, hot reload,
hostile clients, shutdown. Env: TG_WEBHOOK_BIN (the binary).
"""
import base64
import http.client
import json
import os
import re
import resource
import signal
import socket
import ssl
import struct
import subprocess
import threading
import time

import pytest

from wire_client import (H2_PREFACE, burst, closed_by_server, h1_post, h2_connect, h2_frame, h2_post,  # noqa: E402
                         idle_after_one_request, raw_tls, stalled_h2_streams, tls_records)

BIN = os.environ.get("TG_WEBHOOK_BIN", "tenantgate-webhook")
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
MiB = 1 << 20

# The burst tests hold a few thousand sockets (and so does the server, which
# inherits the limit): raise the soft limit as far as the hard one allows.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft != resource.RLIM_INFINITY and (_hard == resource.RLIM_INFINITY or _soft < _hard):
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, _hard) if _hard != resource.RLIM_INFINITY else 8192, _hard))
FDS = resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def mint_cert(directory, cn, name="serving"):
    """A self-signed P-256 cert for localhost/127.0.0.1; returns (cert, key) paths."""
    cert = os.path.join(directory, name + ".crt")
    key = os.path.join(directory, name + ".key")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + cn,
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True)
    return cert, key


def replace_atomically(src, dst):
    tmp = dst + ".tmp"
    with open(src, "rb") as f, open(tmp, "wb") as g:
        g.write(f.read())
    os.rename(tmp, dst)


class Webhook:
    server_hostname = "localhost"

    def __init__(self, tmp_path, *extra, kubeconfig=None):
        self.dir = str(tmp_path)
        src_cert, src_key = mint_cert(self.dir, "first", "first")
        self.cert = os.path.join(self.dir, "tls.crt")
        self.key = os.path.join(self.dir, "tls.key")
        replace_atomically(src_cert, self.cert)
        replace_atomically(src_key, self.key)
        if kubeconfig is None:
            kubeconfig = os.path.join(self.dir, "kubeconfig")
            with open(kubeconfig, "w") as f:
                f.write("""apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
""")
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [BIN, "--cert", self.cert, "--key", self.key, "--listen", "127.0.0.1:0",
             "--metrics-listen", "127.0.0.1:0", "--threads", "2", "--kubeconfig", kubeconfig,
             "--cert-check-interval", "1", *extra],
            stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.port = self.metrics_port = None
        deadline = time.time() + 10
        while time.time() < deadline and self.port is None:
            for line in self.log_lines():
                if line.get("msg") == "serving":
                    self.port, self.metrics_port = line["port"], line["metrics_port"]
            if self.proc.poll() is not None:
                raise RuntimeError("webhook exited: " + open(self.stderr_path).read())
            time.sleep(0.05)
        assert self.port, "no 'serving' log line"

    def log_lines(self):
        lines = []
        with open(self.stderr_path, "rb") as f:
            for raw in f:
                lines.append(json.loads(raw))   # every line must be JSON
        return lines

    def ssl_context(self, alpn=("http/1.1",), min_v=None, max_v=None):
        ctx = ssl.create_default_context(cafile=self.cert)
        ctx.set_alpn_protocols(list(alpn))
        if min_v:
            ctx.minimum_version = min_v
        if max_v:
            ctx.maximum_version = max_v
        return ctx

    def connect(self, **kw):
        return http.client.HTTPSConnection("localhost", self.port, context=self.ssl_context(**kw), timeout=10)

    def post(self, path, body, content_type="application/json", conn=None):
        c = conn or self.connect()
        c.request("POST", path, body=body, headers={"Content-Type": content_type})
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r, data

    def metrics_get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
        c.request("GET", path)
        r = c.getresponse()
        data = r.read().decode()
        c.close()
        return r.status, data

    def metric(self, name):
        """The value of one series of /metrics (0 when absent)."""
        _, text = self.metrics_get("/metrics")
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def sanitized(self):
        with open(f"/proc/{self.proc.pid}/maps") as f:
            return "libasan" in f.read()

    def alive(self):
        return self.proc.poll() is None and self.metrics_get("/healthz")[0] == 200

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


@pytest.fixture
def webhook(tmp_path):
    w = Webhook(tmp_path)
    yield w
    w.stop()
    # every log line is JSON and none carries a secret of the fixtures
    for line in w.log_lines():
        text = json.dumps(line)
        for secret in ("test-token", "BEGIN", "LS0tLS1"):
            assert secret not in text


def fixture(name):
    with open(os.path.join(TESTDATA, name), "rb") as f:
        return f.read()


def review_of(data):
    doc = json.loads(data)
    assert doc["kind"] == "AdmissionReview"
    return doc["response"]


def test_http_errors(webhook):
    c = webhook.connect()
    c.request("GET", "/nope")
    r = c.getresponse(); r.read()
    assert r.status == 404
    c = webhook.connect()
    c.request("GET", "/validate/tenants")
    r = c.getresponse(); r.read()
    assert r.status == 405 and r.getheader("Allow") == "POST"
    r, _ = webhook.post("/validate/tenants", b"{}", content_type="text/plain")
    assert r.status == 415
    r, _ = webhook.post("/validate/tenants?timeout=10s", b"{}", content_type="application/json; charset=utf-8")
    assert r.status == 200          # the API server's query string and a charset are fine


def early_answer(s):
    """What the server has answered so far, without waiting: None if nothing
    yet (TLS 1.3 session tickets alone make the socket readable, so a bare
    select would stop a sender too soon), b"" if it closed."""
    timeout = s.gettimeout()
    s.setblocking(False)
    try:
        return s.recv(4096)
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
        return None
    finally:
        s.settimeout(timeout)


def raw_exchange(webhook, head, body_chunks):
    """Send a request by hand, keep sending the body while the server reads,
    and return the status line of the answer (h2o may answer 413 before the
    body is in and close)."""
    s = webhook.ssl_context().wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)),
                                          server_hostname="localhost")
    s.settimeout(10)
    data = b""
    try:
        s.sendall(head)
        for chunk in body_chunks:
            # Stop once the answer is there: h2o closes right after its 413, and a
            # client still sending then races that close (a reset, or a failed TLS
            # write, can cost the answer: seen once in CI under ASan, 11-28).
            got = early_answer(s)
            if got is not None:
                data = got
                break
            s.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        pass
    try:
        while b"\r\n" not in data:
            got = s.recv(4096)
            if not got:
                break
            data += got
    except (ConnectionResetError, ssl.SSLError):
        pass
    s.close()
    return data.split(b"\r\n", 1)[0]


def test_body_over_3mib_is_413(webhook):
    four = 4 * MiB
    head = (b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % four)
    assert raw_exchange(webhook, head, [b"x" * 65536] * (four // 65536)) == b"HTTP/1.1 413 Request Entity Too Large"
    # chunked, no length announced
    head = (b"POST /mutate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    body = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 64 + [b"0\r\n\r\n"]
    assert raw_exchange(webhook, head, body) == b"HTTP/1.1 413 Request Entity Too Large"
    # just under the limit is read and judged
    r, data = webhook.post("/validate/tenants", b'{"a":"' + b"x" * (3 * MiB - 100) + b'"}')
    assert r.status == 200 and review_of(data)["status"]["code"] == 400
    assert webhook.alive()


def test_malformed_and_wrong_kind(webhook):
    for body in (b"", b"{", b"[]", b"null", b'{"kind":"AdmissionReview"', b"\xff\xfe"):
        r, data = webhook.post("/validate/tenants", body)
        assert r.status == 200
        resp = review_of(data)
        assert resp["allowed"] is False and resp["uid"] == ""
        assert resp["status"]["code"] == 400
        assert resp["status"]["message"].startswith("MalformedTenant: ")
    wrong = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "Pod", "request": {"uid": "u-1"}})
    r, data = webhook.post("/validate/tenants", wrong.encode())
    resp = review_of(data)
    assert resp["uid"] == "u-1" and resp["allowed"] is False
    assert resp["status"]["message"].startswith("MalformedTenant: kind")


def test_unsynced_caches_are_an_error_not_a_verdict(webhook):
    r, data = webhook.post("/validate/tenants", fixture("review-v1-create-seed-cl01-pemkey.json"))
    resp = review_of(data)
    assert r.status == 200 and resp["uid"] == "uid-seed-cl01-pemkey"
    assert resp["allowed"] is False and resp["status"]["code"] == 500
    assert resp["status"]["message"].startswith("CacheNotSynced: ")
    # a Tenant that fails decoding is still judged offline
    doc = json.loads(fixture("review-v1beta1-create-seed-cl01-pemkey.json"))
    doc["request"]["object"]["spec"]["csr"] = "%%%"
    r, data = webhook.post("/validate/tenants", json.dumps(doc).encode())
    raw = json.loads(data)
    assert raw["apiVersion"] == "admission.k8s.io/v1beta1"
    assert raw["response"]["status"]["message"].startswith("MalformedTenant: ")
    # not ours: allowed whatever the caches
    for name in ("review-v1-delete.json", "review-v1-status-update.json"):
        r, data = webhook.post("/validate/tenants", fixture(name))
        assert review_of(data)["allowed"] is True
    assert webhook.metrics_get("/readyz") == (503, "caches not synced\n")
    assert webhook.metrics_get("/healthz") == (200, "ok\n")


def test_mutate_adds_the_label(webhook):
    r, data = webhook.post("/mutate/tenants", fixture("review-v1-create-no-labels.json"))
    resp = review_of(data)
    assert resp["allowed"] is True and resp["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(resp["patch"]))
    assert patch == [{"op": "add", "path": "/metadata/labels",
                      "value": {"liqo.io/remote-cluster-id": "cl01"}}]
    r, data = webhook.post("/mutate/tenants", fixture("review-v1-create-other-labels.json"))
    patch = json.loads(base64.b64decode(review_of(data)["patch"]))
    assert patch[0]["path"] == "/metadata/labels/liqo.io~1remote-cluster-id"
    r, data = webhook.post("/mutate/tenants", fixture("review-v1-create-seed-cl01-pemkey.json"))
    assert "patch" not in review_of(data)


def test_keep_alive(webhook):
    c = webhook.connect()
    r, _ = webhook.post("/mutate/tenants", fixture("review-v1-delete.json"), conn=c)
    sock = c.sock
    for _ in range(20):
        r, data = webhook.post("/validate/tenants", fixture("review-v1-delete.json"), conn=c)
        assert r.status == 200 and r.getheader("Connection", "keep-alive").lower() == "keep-alive"
        assert c.sock is sock       # the same TLS connection throughout
    c.close()


def tls_version(webhook, min_v, max_v):
    ctx = webhook.ssl_context(min_v=min_v, max_v=max_v)
    with socket.create_connection(("127.0.0.1", webhook.port)) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.version()


def test_tls_versions_and_alpn(webhook):
    assert tls_version(webhook, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert tls_version(webhook, ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    assert tls_version(webhook, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.MAXIMUM_SUPPORTED) == "TLSv1.3"
    # TLS 1.1 refused (openssl s_client: Python's own OpenSSL may not even offer it)
    out = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{webhook.port}", "-tls1_1"],
                         input=b"", capture_output=True, timeout=10)
    assert b"Protocol  : TLSv1.1" not in out.stdout or b"Cipher is (NONE)" in out.stdout
    assert b"Cipher is (NONE)" in out.stdout or out.returncode != 0
    # HTTP/2 is off by default: a client offering h2 gets http/1.1
    for offer in (["h2", "http/1.1"], ["http/1.1"]):
        assert alpn_selected(webhook, offer) == "http/1.1"


def alpn_selected(webhook, offer):
    ctx = webhook.ssl_context(alpn=offer)
    with socket.create_connection(("127.0.0.1", webhook.port)) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.selected_alpn_protocol()


def curl_h2(webhook):
    out = subprocess.run(["curl", "-s", "--http2", "--cacert", webhook.cert, "-o", "/dev/null",
                          "-w", "%{http_version} %{http_code}", "-H", "Content-Type: application/json",
                          "--data-binary", "@" + os.path.join(TESTDATA, "review-v1-delete.json"),
                          f"https://localhost:{webhook.port}/validate/tenants",
                          "--resolve", f"localhost:{webhook.port}:127.0.0.1"],
                         capture_output=True, timeout=10)
    return out.stdout


def test_http2_only_with_the_flag(tmp_path):
    w = Webhook(tmp_path, "--http2")
    try:
        assert alpn_selected(w, ["h2", "http/1.1"]) == "h2"
        assert alpn_selected(w, ["http/1.1"]) == "http/1.1"
        assert curl_h2(w) == b"2 200"          # a whole request over HTTP/2
    finally:
        w.stop()
    # --no-http2 is still accepted (the default now)
    (tmp_path / "no").mkdir()
    w = Webhook(tmp_path / "no", "--no-http2")
    try:
        assert alpn_selected(w, ["h2", "http/1.1"]) == "http/1.1"
    finally:
        w.stop()


def served_cn(webhook):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", webhook.port)) as raw:
        with ctx.wrap_socket(raw) as s:
            der = s.getpeercert(binary_form=True)
    out = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-subject"], input=der,
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


def wait_for(pred, seconds=5):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def test_cert_hot_reload(webhook):
    assert served_cn(webhook).endswith("CN = first")
    cert2, key2 = mint_cert(webhook.dir, "second", "second")
    replace_atomically(key2, webhook.key)
    replace_atomically(cert2, webhook.cert)
    assert wait_for(lambda: served_cn(webhook).endswith("CN = second"))
    # a broken pair is refused and the good one kept
    with open(webhook.cert, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nnot a cert\n-----END CERTIFICATE-----\n")
    assert wait_for(lambda: any(l.get("msg", "").startswith("serving certificate reload failed")
                                for l in webhook.log_lines()))
    # a cert whose key does not match: refused too
    cert3, _ = mint_cert(webhook.dir, "third", "third")
    replace_atomically(cert3, webhook.cert)
    assert wait_for(lambda: sum(l.get("msg", "").startswith("serving certificate reload failed")
                                for l in webhook.log_lines()) >= 2)
    assert served_cn(webhook).endswith("CN = second")
    status, text = webhook.metrics_get("/metrics")
    assert 'tenantgate_webhook_cert_reloads_total{result="error"} 2' in text
    assert "tenantgate_webhook_serving_cert_expiry_timestamp_seconds " in text


def garbage_worker(webhook, n, errors):
    try:
        c = webhook.connect()
        for i in range(n):
            body = os.urandom(64 + i % 512) if i % 3 == 0 else (b'{"apiVersion":' * (i % 50))
            r, data = webhook.post("/validate/tenants", body, conn=c)
            if r.status != 200 or review_of(data)["status"]["code"] != 400:
                errors.append(r.status)
        c.close()
    except Exception as e:          # noqa: BLE001 - reported by the test
        errors.append(repr(e))


def test_garbage_flood_and_memory(webhook):
    def flood(total, conns):
        errors = []
        threads = [threading.Thread(target=garbage_worker, args=(webhook, total // conns, errors))
                   for _ in range(conns)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
    idle = webhook.rss_kib()
    flood(1000, 10)
    warm = webhook.rss_kib()
    flood(9000, 30)
    # broken TLS and broken HTTP on raw sockets
    for i in range(100):
        with socket.create_connection(("127.0.0.1", webhook.port)) as s:
            s.sendall(os.urandom(300) if i % 2 else b"GET / HTTP/1.1\r\n\r\n")
    for i in range(100):
        with webhook.ssl_context().wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)),
                                               server_hostname="localhost") as s:
            s.sendall(b"POST /validate/tenants HTTP/1.1\r\nContent-Length: zz\r\n\r\n" if i % 2
                      else b"\x00" * 100 + b"\r\n\r\n")
            try:
                s.recv(100)
            except OSError:
                pass
    assert webhook.alive()
    time.sleep(0.5)
    after = webhook.rss_kib()
    # no growth with the number of requests, and close to where it started
    # (not under ASan: its quarantine holds freed memory on purpose)
    if not webhook.sanitized():
        assert after - warm < 8 * 1024, (idle, warm, after)
        assert after - idle < 32 * 1024, (idle, warm, after)
    status, text = webhook.metrics_get("/metrics")
    assert 'reason="MalformedTenant"} 10000' in text
    # counted every one, but not a log line each: 10 a second per worker, then a summary
    lines = webhook.log_lines()
    logged = sum(1 for l in lines if l.get("msg") == "admission")
    assert logged < 2000, logged
    assert any(l.get("msg") == "admission lines held back" for l in lines)


def open_sockets(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return n


def test_connections_reset_by_the_client_are_closed(webhook):
    """A client that resets its kept-alive connection (what a load tool, or an
    API server restarting, does) must not leave the connection behind: h2o
    2.2 waited forever to send its TLS close_notify to the reset socket, and
    kept the fd and ~44 KB per connection (tls.c: quiet shutdown)."""
    before = open_sockets(webhook.proc.pid)
    body = fixture("review-v1-delete.json")
    req = (b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body)) + body
    for _ in range(20):
        raw = socket.create_connection(("127.0.0.1", webhook.port))
        # RST instead of FIN at close: SO_LINGER on, 0 s
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s = webhook.ssl_context().wrap_socket(raw, server_hostname="localhost")
        s.sendall(req)
        assert b" 200 " in s.recv(4096)
        s.close()
    assert wait_for(lambda: open_sockets(webhook.proc.pid) <= before), (before, open_sockets(webhook.proc.pid))
    assert webhook.alive()


def test_slow_and_truncated_clients_do_not_block_others(webhook):
    ctx = webhook.ssl_context()
    slow = ctx.wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)), server_hostname="localhost")
    request = b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    stop = threading.Event()

    def drip():
        for b in request[:-3]:
            if stop.is_set():
                return
            slow.send(bytes([b]))
            time.sleep(0.02)
    t = threading.Thread(target=drip)
    t.start()
    try:
        for _ in range(20):
            start = time.time()
            r, _ = webhook.post("/validate/tenants", fixture("review-v1-delete.json"))
            assert r.status == 200 and time.time() - start < 1.0
    finally:
        stop.set()
        t.join()
        slow.close()
    # a body cut short: the connection goes, the server stays
    for _ in range(20):
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)), server_hostname="localhost")
        s.sendall(b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 5000\r\n\r\n{\"apiVersion\"")
        s.close()
    assert webhook.alive()


def closed_reason(w, *reasons):
    """Connections the server closed for any of these reasons (the metric's sum)."""
    return sum(w.metric(f'tenantgate_webhook_connections_closed_total{{reason="{r}"}}') for r in reasons)


def connection_series(w):
    """The connection series of /metrics, for a failure message."""
    return [l for l in w.metrics_get("/metrics")[1].splitlines()
            if "connections" in l and not l.startswith("#")]


def read_h1_answer(s):
    """One whole HTTP/1.1 answer (head and Content-Length body) from s."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk, data
        rest += chunk
    return head + b"\r\n\r\n" + rest


def test_a_kept_alive_connection_waits_the_idle_timeout_not_the_request_timeout(tmp_path):
    """kube-apiserver keeps an idle connection up to 90 s and sends its next POST on it; a
    server that closed it first makes that POST fail with EOF (Go does not send a written
    POST again). --request-timeout 1 --idle-timeout 3: after 2 s idle the connection still
    answers, after 3 s idle the server closes it, and the default is over 90 s."""
    w = Webhook(tmp_path, "--request-timeout", "1", "--idle-timeout", "3")
    body = fixture("review-v1-delete.json")
    try:
        s = raw_tls(w)
        for _ in range(2):
            s.sendall(h1_post(body))
            assert read_h1_answer(s).startswith(b"HTTP/1.1 200")
            time.sleep(2)
        start = time.time()
        assert closed_by_server(s, 3)
        assert 0.5 < time.time() - start < 2.5
        s.close()
        assert w.metric('tenantgate_webhook_connections_closed_total{reason="slow_request"}') == 0
    finally:
        w.stop()
    help_text = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    assert re.search(r"--idle-timeout SECONDS .*\(default\s+120", help_text, re.S)


@pytest.mark.parametrize("sent", [
    b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\n",                                  # headers never end
    h1_post(b'{"apiVersion":"admission.k8s.io/v1"}')[:-10],                               # a body cut short
])
def test_a_request_still_arriving_after_the_request_timeout_is_closed(tmp_path, sent):
    """--request-timeout 1 bounds a request's arrival from its first byte, while a kept-alive
    connection that sends nothing after its first request waits out the idle timeout (120 s
    by default)."""
    w = Webhook(tmp_path, "--request-timeout", "1")
    try:
        quiet, slow = raw_tls(w), raw_tls(w)
        quiet.sendall(h1_post(fixture("review-v1-delete.json")))
        assert read_h1_answer(quiet).startswith(b"HTTP/1.1 200")
        slow.sendall(sent)
        start = time.time()
        assert closed_by_server(slow, 4)
        assert 0.9 < time.time() - start < 2.5
        # from its first byte, or from the accept (no request yet): whichever comes first
        assert wait_for(lambda: closed_reason(w, "slow_request", "no_request") == 1)
        assert not closed_by_server(quiet, 1)
        quiet.sendall(h1_post(fixture("review-v1-delete.json")))
        assert read_h1_answer(quiet).startswith(b"HTTP/1.1 200")
        quiet.close()
        slow.close()
    finally:
        w.stop()


def test_a_tls_record_trickled_byte_by_byte_is_closed_at_the_request_timeout(tmp_path):
    """Bytes that never complete a TLS record never reach the HTTP parser, but h2o still tells
    HTTP/1.1 that bytes came, and that stamps the request's start: so a client trickling one
    byte of a record every 0.2 s is cut at --request-timeout (1 s), not at --idle-timeout (30 s)."""
    w = Webhook(tmp_path, "--request-timeout", "1", "--idle-timeout", "30")
    try:
        s, records = tls_records(w, h1_post(fixture("review-v1-delete.json")))
        assert len(records) > 100
        s.settimeout(0.2)
        start, sent, closed = time.time(), 0, False
        while not closed and sent < 100 and time.time() - start < 5:
            try:
                s.sendall(records[sent:sent + 1])
                sent += 1
                closed = s.recv(65536) == b""          # TLS 1.3 session tickets come first
            except (socket.timeout, TimeoutError):
                pass
            except OSError:
                closed = True
        assert closed, f"still open after {sent} bytes in {time.time() - start:.1f} s"
        assert 0.9 < time.time() - start < 2.5
        assert wait_for(lambda: closed_reason(w, "slow_request", "no_request") == 1)
        s.close()
    finally:
        w.stop()


def test_sigterm_drains_and_exits(tmp_path):
    w = Webhook(tmp_path, "--shutdown-grace", "5")
    try:
        idle = w.connect()
        r, _ = w.post("/validate/tenants", fixture("review-v1-delete.json"), conn=idle)
        assert r.status == 200
        start = time.time()
        w.proc.send_signal(signal.SIGTERM)
        assert w.proc.wait(10) == 0
        # the idle keep-alive connection did not hold the exit to the grace period
        assert time.time() - start < 2.0
        msgs = [l.get("msg") for l in w.log_lines()]
        assert "shutting down" in msgs and "shutdown complete" in msgs
    finally:
        w.stop()


def test_sigterm_exits_cleanly_every_time(tmp_path):
    # A clean exit at every phase of the wall-clock second, in steps of 25 ms.
    # h2o's dispose frees the context's timestamp and then runs the loop once;
    # a connection watch still open then, reading the time on every tick, made
    # it a double free (SIGABRT under ASan) in the shutdowns sent 950-975 ms
    # into a second, and this test failed 6 runs of 6. Shutdown now closes the
    # watch first, and the watch reads the time only with connections open
    # (none are at a clean exit), so either guard alone keeps this green.
    steps = 40
    for i in range(steps):
        (tmp_path / str(i)).mkdir()
        w = Webhook(tmp_path / str(i), "--shutdown-grace", "5")
        try:
            r, _ = w.post("/validate/tenants", fixture("review-v1-delete.json"), conn=w.connect())
            assert r.status == 200
            time.sleep((i / steps - time.time() % 1) % 1)
            w.proc.send_signal(signal.SIGTERM)
            assert w.proc.wait(10) == 0, f"cycle {i}: exit {w.proc.returncode}"
        finally:
            w.stop()


def test_sigterm_grace_bounds_a_stuck_client(tmp_path):
    w = Webhook(tmp_path, "--shutdown-grace", "2")
    try:
        s = w.ssl_context().wrap_socket(socket.create_connection(("127.0.0.1", w.port)),
                                        server_hostname="localhost")
        s.sendall(b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\n")   # headers never finish
        time.sleep(0.2)
        start = time.time()
        w.proc.send_signal(signal.SIGTERM)
        assert w.proc.wait(10) == 0
        # waited for the request to finish arriving, and still exited at the grace period;
        # the 0.5 s over it is process exit under ASan on a loaded machine (2.02 s seen)
        assert 1.4 < time.time() - start < 2.5
        s.close()
    finally:
        w.stop()


# ---------- connection limits, HTTP/2 hardening, shutdown, memory ----------

def test_http2_stalled_streams_are_closed(tmp_path):
    w = Webhook(tmp_path, "--http2", "--request-timeout", "1")
    body = fixture("review-v1-delete.json")
    try:
        with stalled_h2_streams(w, body) as stalled:
            start = time.time()
            assert all(closed_by_server(s, 6) for s in stalled)
            assert time.time() - start < 6
        # the server counts a close just after shutdown(2): the client may see it first
        assert wait_for(lambda: w.metric('tenantgate_webhook_connections_closed_total{reason="stalled_stream"}') == 20)
        # a healthy client is served
        assert curl_h2(w) == b"2 200"
        assert w.alive()
    finally:
        w.stop()


def test_http2_rapid_reset_closes_the_connection(tmp_path):
    w = Webhook(tmp_path, "--http2")
    body = fixture("review-v1-delete.json")
    try:
        # a few cancelled requests are normal
        calm = h2_connect(w)
        calm.sendall(b"".join(h2_post(2 * i + 1, body) + h2_frame(3, 0, 2 * i + 1, struct.pack(">I", 8))
                              for i in range(10)))
        # a burst of them is an attack: each reset frees the stream's slot
        burst = h2_connect(w)
        for k in range(0, 300, 50):
            try:
                burst.sendall(b"".join(h2_post(2 * i + 1, body) + h2_frame(3, 0, 2 * i + 1, struct.pack(">I", 8))
                                       for i in range(k, k + 50)))
            except OSError:
                break
        assert closed_by_server(burst, 5)
        assert not closed_by_server(calm, 1)
        assert wait_for(lambda: w.metric('tenantgate_webhook_connections_closed_total{reason="stream_resets"}') == 1)
        assert w.metric("tenantgate_webhook_http2_stream_resets_total") > 100
        calm.close()
        assert w.alive()
    finally:
        w.stop()


def tls_from(w, source, alpn=("http/1.1",)):
    """A TLS connection from a given loopback source address (127.0.0.0/8 is all local)."""
    raw = socket.create_connection(("127.0.0.1", w.port), timeout=5, source_address=(source, 0))
    return w.ssl_context(alpn=alpn).wrap_socket(raw, server_hostname="localhost")


def served_from(w, source):
    """A kept-alive connection from source that has had one answered request."""
    s = tls_from(w, source)
    s.sendall(h1_post(fixture("review-v1-delete.json")))
    assert read_h1_answer(s).startswith(b"HTTP/1.1 200")
    return s


def closed_at_once(socks, wait=2):
    """How many of socks the server has closed (EOF or reset) within wait seconds."""
    deadline, closed = time.time() + wait, 0
    for s in socks:
        s.settimeout(max(0.05, deadline - time.time()))
        try:
            if s.recv(1) == b"":
                closed += 1
        except (socket.timeout, TimeoutError):
            pass
        except OSError:
            closed += 1
    return closed


@pytest.mark.skipif(FDS < 4500, reason="needs 4,500 file descriptors")
def test_max_connections(tmp_path):
    """50 connections that have had a request cannot be evicted: at --max-connections 50 the
    next 2,000 are closed at accept, before any TLS work."""
    w = Webhook(tmp_path, "--max-connections", "50", "--max-connections-per-peer", "0")
    try:
        held = [served_from(w, "127.0.0.1") for _ in range(50)]
        socks = [socket.create_connection(("127.0.0.1", w.port)) for _ in range(2000)]
        deadline = time.time() + 10
        while time.time() < deadline and w.metric("tenantgate_webhook_connections_rejected_total") < 2000:
            time.sleep(0.1)
        assert w.metric("tenantgate_webhook_connections_rejected_total") == 2000
        assert w.metric("tenantgate_webhook_connections") == 50
        assert closed_at_once(socks, 5) == 2000
        assert closed_reason(w, "evicted") == 0
        for s in socks + held:
            s.close()
        # room again once they are gone
        assert wait_for(lambda: w.metric("tenantgate_webhook_connections") == 0)
        r, _ = w.post("/validate/tenants", fixture("review-v1-delete.json"))
        assert r.status == 200
    finally:
        w.stop()


def test_a_slow_handshake_is_closed_at_the_request_timeout(tmp_path):
    """A TLS handshake that never finishes holds its slot for --request-timeout (1 s), not
    --idle-timeout (30 s), and is counted as no_request."""
    w = Webhook(tmp_path, "--request-timeout", "1", "--idle-timeout", "30")
    try:
        s = socket.create_connection(("127.0.0.1", w.port))
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00")        # the start of a ClientHello, no more
        start = time.time()
        assert closed_by_server(s, 4)
        assert 0.8 < time.time() - start < 2.5
        assert wait_for(lambda: closed_reason(w, "no_request") == 1)
        s.close()
    finally:
        w.stop()


def test_an_idle_connection_without_a_request_is_closed_at_the_request_timeout(tmp_path):
    """After its TLS handshake a connection gets --request-timeout (1 s) for its first request,
    not --idle-timeout (30 s); one that has had a request waits the idle timeout."""
    w = Webhook(tmp_path, "--request-timeout", "1", "--idle-timeout", "30")
    try:
        served = served_from(w, "127.0.0.1")
        idle = raw_tls(w)
        start = time.time()
        assert closed_by_server(idle, 4)
        assert 0.8 < time.time() - start < 2.5
        assert wait_for(lambda: closed_reason(w, "no_request") == 1)
        assert not closed_by_server(served, 1)
        served.sendall(h1_post(fixture("review-v1-delete.json")))
        assert read_h1_answer(served).startswith(b"HTTP/1.1 200")
        served.close()
        idle.close()
    finally:
        w.stop()


def test_one_address_holds_at_most_max_connections_per_peer(tmp_path):
    w = Webhook(tmp_path, "--max-connections-per-peer", "5", "--request-timeout", "30")
    try:
        held = [socket.create_connection(("127.0.0.1", w.port), source_address=("127.0.0.2", 0))
                for _ in range(5)]
        assert wait_for(lambda: w.metric("tenantgate_webhook_connections") == 5)
        sixth = socket.create_connection(("127.0.0.1", w.port), source_address=("127.0.0.2", 0))
        assert closed_at_once([sixth]) == 1
        assert closed_at_once(held, 0.5) == 0
        assert w.metric("tenantgate_webhook_connections_rejected_per_peer_total") == 1
        assert w.metric("tenantgate_webhook_connection_peers") == 1
        # another address is not held back, and a slot freed is usable again
        other = served_from(w, "127.0.0.3")
        held.pop().close()
        assert wait_for(lambda: w.metric("tenantgate_webhook_connections") == 5)
        again = socket.create_connection(("127.0.0.1", w.port), source_address=("127.0.0.2", 0))
        assert closed_at_once([again], 0.5) == 0
        assert w.metric("tenantgate_webhook_connections_rejected_per_peer_total") == 1
        for s in held + [sixth, other, again]:
            s.close()
    finally:
        w.stop()
    help_text = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    assert re.search(r"--max-connections-per-peer N .*\(default\s+250", help_text, re.S)


def test_at_the_limit_idle_connections_are_evicted_for_newcomers(tmp_path):
    """--max-connections 20, 5 kept-alive connections that have had a request, then 100 idle
    ones spread over 10 addresses (10 each: the per-peer cap of 10 is never what refuses them).
    Each newcomer evicts the oldest connection without a request, so a new client is still
    answered and the 5 keep theirs; only when all 20 have had a request is one refused."""
    w = Webhook(tmp_path, "--max-connections", "20", "--max-connections-per-peer", "10",
                "--request-timeout", "30")
    flood = []
    try:
        served = [served_from(w, "127.0.0.1") for _ in range(5)]
        for i in range(100):
            flood.append(socket.create_connection(("127.0.0.1", w.port),
                                                  source_address=(f"127.0.1.{i % 10 + 1}", 0)))
        # The whole flood taken in first (105 accepted, 20 kept): a flood connection still in
        # a worker's accept queue could evict the newcomer while it is in its handshake, once
        # it is that worker's oldest connection without a request.
        # Under load one worker may take the first 20 slots alone: the other then has nothing
        # of its own to evict and has the first one evict for it (it failed 5 runs in 6 so).
        assert wait_for(lambda: closed_reason(w, "evicted") >= 85), connection_series(w)
        newcomer = served_from(w, "127.0.0.1")
        for s in served:
            s.sendall(h1_post(fixture("review-v1-delete.json")))
            assert read_h1_answer(s).startswith(b"HTTP/1.1 200")
        assert w.metric("tenantgate_webhook_connections_rejected_total") == 0
        assert w.metric("tenantgate_webhook_connections_rejected_per_peer_total") == 0
        assert closed_reason(w, "evicted") >= 80
        assert wait_for(lambda: w.metric("tenantgate_webhook_connections") <= 20)
        assert closed_at_once(flood, 2) >= 80
        for s in flood:
            s.close()
        flood = []
        assert wait_for(lambda: w.metric("tenantgate_webhook_connections") == 6)
        served += [newcomer] + [served_from(w, f"127.0.2.{i % 2 + 1}") for i in range(14)]
        late = socket.create_connection(("127.0.0.1", w.port), source_address=("127.0.3.1", 0))
        assert closed_at_once([late]) == 1
        assert w.metric("tenantgate_webhook_connections_rejected_total") == 1
        assert closed_at_once(served, 0.5) == 0
        for s in served + [late]:
            s.close()
        limited = [l for l in w.log_lines() if l.get("msg") == "connections limited"]
        assert len(limited) <= 2 * 2     # a line per worker per 10 s at most, not one per connection
    finally:
        for s in flood:
            s.close()
        w.stop()


def h2_frames_read(s, wait=3):
    """What the server sends within wait seconds, until it closes or answers a HEADERS frame:
    (bytes, [(type, flags, stream) of each whole frame], closed)."""
    data, frames, closed = b"", [], False
    s.settimeout(wait)
    deadline = time.time() + wait
    try:
        while time.time() < deadline and not any(f[0] == 1 for f in frames):
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            data += chunk
            frames, rest = [], data
            while len(rest) >= 9:
                length = int.from_bytes(rest[:3], "big")
                frames.append((rest[3], rest[4], int.from_bytes(rest[5:9], "big") & 0x7fffffff))
                rest = rest[9 + length:]
    except (socket.timeout, TimeoutError):
        pass
    except OSError:
        closed = True
    return data, frames, closed


def prior_knowledge(w, alpn):
    """A TLS connection that did not negotiate h2 (ALPN http/1.1, or no ALPN at all) and sends
    the HTTP/2 preface and SETTINGS: HTTP/2 "by prior knowledge"."""
    ctx = ssl.create_default_context(cafile=w.cert)
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", w.port), timeout=5),
                        server_hostname="localhost")
    assert s.selected_alpn_protocol() in (None, "http/1.1")
    s.sendall(H2_PREFACE + h2_frame(4, 0, 0))
    return s


@pytest.mark.parametrize("alpn", [("http/1.1",), ()], ids=["alpn-http1.1", "no-alpn"])
def test_http2_by_prior_knowledge_is_refused_without_the_flag(tmp_path, alpn):
    """h2o's HTTP/1.1 switched to HTTP/2 on a PRI preface and answered admissions over it even
    without --http2 (and outside the reset guard). Now: closed, no HTTP/2 frame answered."""
    w = Webhook(tmp_path)
    try:
        s = prior_knowledge(w, alpn)
        s.sendall(h2_post(1, fixture("review-v1-delete.json")))
        data, frames, closed = h2_frames_read(s)
        assert closed and data == b"", data[:64]
        assert closed_reason(w, "http2_refused") == 1
        assert not [l for l in w.log_lines() if l.get("msg") == "admission"]
        s.close()
        r, _ = w.post("/validate/tenants", fixture("review-v1-delete.json"))
        assert r.status == 200
    finally:
        w.stop()


@pytest.mark.parametrize("alpn", [("http/1.1",), ()], ids=["alpn-http1.1", "no-alpn"])
def test_http2_by_prior_knowledge_is_served_and_reset_guarded_with_the_flag(tmp_path, alpn):
    """With --http2 a prior-knowledge connection is HTTP/2 like an ALPN h2 one: answered, and a
    burst of RST_STREAM closes it (before: counted nowhere, 200,000 resets in 2.9 s served)."""
    w = Webhook(tmp_path, "--http2")
    body = fixture("review-v1-delete.json")
    try:
        s = prior_knowledge(w, alpn)
        s.sendall(h2_post(1, body))
        data, frames, closed = h2_frames_read(s)
        assert not closed and (1, 4, 1) in [(t, f & 4, st) for t, f, st in frames], frames
        for k in range(0, 300, 50):
            try:
                s.sendall(b"".join(h2_post(2 * i + 3, body) + h2_frame(3, 0, 2 * i + 3, struct.pack(">I", 8))
                                   for i in range(k, k + 50)))
            except OSError:
                break
        assert closed_by_server(s, 5)
        # counted by the worker right after its shutdown(2): the client may see the close first
        assert wait_for(lambda: w.metric('tenantgate_webhook_connections_closed_total{reason="stream_resets"}') == 1)
        assert w.metric("tenantgate_webhook_http2_stream_resets_total") > 100
        s.close()
        assert w.alive()
    finally:
        w.stop()


def read_answers(s):
    """Everything the server sends until it closes (or 2 s of silence)."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data, True
            data += chunk
    except (socket.timeout, TimeoutError):
        return data, False
    except (ConnectionResetError, ssl.SSLError):
        return data, True


def test_ambiguous_body_length_is_400_and_closes(webhook):
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    heads = [
        b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n",
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    ]
    for tail in heads:
        s = raw_tls(webhook)
        s.settimeout(2)
        s.sendall(b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + tail +
                  smuggled)
        data, closed = read_answers(s)
        s.close()
        assert data.startswith(b"HTTP/1.1 400 "), data[:200]
        assert b"connection: close" in data.lower()
        assert data.count(b"HTTP/1.1 ") == 1          # the smuggled request is never answered
        assert closed
    # the same length twice is fine
    s = raw_tls(webhook)
    s.sendall(b"POST /validate/tenants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}")
    assert s.recv(100).startswith(b"HTTP/1.1 200 ")
    s.close()
    assert webhook.metric('tenantgate_webhook_requests_total{path="other",verdict="rejected",'
                          'reason="AmbiguousLength"}') == 3


def test_sigterm_closes_idle_connections_at_once(tmp_path):
    w = Webhook(tmp_path, "--shutdown-grace", "4", "--http2")
    body = fixture("review-v1-delete.json")
    try:
        # peers that reset after their answer must not hold the exit either
        keep = idle_after_one_request(w, body)
        time.sleep(0.5)
        start = time.time()
        w.proc.send_signal(signal.SIGTERM)
        assert w.proc.wait(10) == 0
        took = time.time() - start
        assert took < 1.5, took
        msgs = [l.get("msg") for l in w.log_lines()]
        assert "shutdown complete" in msgs
        assert all(closed_by_server(s, 1) for s in keep)
    finally:
        w.stop()


@pytest.mark.skipif(FDS < 4500, reason="needs 4,500 file descriptors")
def test_memory_returns_after_bursts(tmp_path):
    w = Webhook(tmp_path, "--max-connections", "3000", "--max-connections-per-peer", "0")
    body = fixture("review-v1-delete.json")
    request = h1_post(body)
    try:
        if w.sanitized():
            pytest.skip("ASan's quarantine holds freed memory on purpose")
        # idle = after the first few connections (TLS code paged in, caches warm)
        burst(w, 20, request)
        time.sleep(2)
        idle = w.rss_kib()

        def settled():
            return w.rss_kib() - idle < 2048
        burst(w, 2000, request)
        peak = w.rss_kib()
        assert wait_for(settled, 5), (idle, peak, w.rss_kib())
        assert wait_for(lambda: w.open_fds() < 40, 5)    # every connection really closed
        big = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "x": "y" * (3 * MiB - 200)}).encode()
        threads = [threading.Thread(target=w.post, args=("/validate/tenants", big)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert wait_for(settled, 5), (idle, w.rss_kib())
    finally:
        w.stop()


def test_kubeconfig_with_a_proxy_is_refused_at_start(tmp_path):
    """The webhook's API client (kube/client_h1.c) has no proxy support: a kubeconfig that
    names one stops the start with that reason, rather than going around the proxy."""
    cert, key = mint_cert(str(tmp_path), "first", "first")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("""apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", proxy-url: "http://127.0.0.1:3128",
            insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
""")
    out = subprocess.run([BIN, "--cert", cert, "--key", key, "--listen", "127.0.0.1:0",
                          "--metrics-listen", "127.0.0.1:0", "--kubeconfig", str(kubeconfig)],
                         capture_output=True, timeout=20)
    assert out.returncode == 1
    errors = [json.loads(line).get("error", "") for line in out.stderr.splitlines()]
    assert any("proxy-url is not supported" in e for e in errors), out.stderr


def informer_failures(w):
    return [line for line in w.log_lines() if line.get("msg") == "informer failed"]


def test_why_the_caches_cannot_sync_is_logged(tmp_path):
    """A webhook whose caches never sync says why in its log, one WARN line per retry,
    naming the collection, the reason and the backoff: here an apiserver certificate
    that does not name the address the kubeconfig dials."""
    cert, key = mint_cert(str(tmp_path), "elsewhere", "apiserver")
    # the CA trusts this certificate, but it names localhost and 127.0.0.1, not 127.0.0.2
    srv = socket.socket()
    srv.bind(("127.0.0.2", 0))
    srv.listen(16)
    port = srv.getsockname()[1]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    handshakes = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            try:
                with ctx.wrap_socket(conn, server_side=True) as s:
                    s.recv(1)
                handshakes.append("completed")
            except (OSError, ssl.SSLError) as e:
                handshakes.append(type(e).__name__)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    kubeconfig = tmp_path / "kubeconfig-mismatch"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.2:{port}", certificate-authority: "{cert}"}}}}]
users: [{{name: u, user: {{token: test-token}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
""")
    w = Webhook(tmp_path, kubeconfig=str(kubeconfig))
    try:
        assert wait_for(lambda: len(informer_failures(w)) >= 4, 10), w.log_lines()
        lines = informer_failures(w)
        assert all(line["level"] == "warn" for line in lines)
        assert {"/api/v1/namespaces", "/api/v1/secrets"} <= {line["resource"] for line in lines}
        for line in lines:
            assert "certificate was not accepted" in line["error"] and "127.0.0.2" in line["error"], line
            assert line["next"] == "list" and line["retry_ms"] > 0 and line["failures"] >= 1
        assert w.metrics_get("/readyz")[0] == 503
        # and counted, per cache, for alerts
        _, text = w.metrics_get("/metrics")
        counted = dict(re.findall(r'^tenantgate_webhook_informer_failures_total\{cache="(\w+)"\} (\d+)$', text, re.M))
        assert set(counted) == {"namespaces", "tenants", "nonce_secrets", "local_slices",
                                "replicated_slices", "name_claims", "slice_policy"}, text
        assert all(int(v) >= 1 for v in counted.values()), counted
        # each of those caches also reports its objects (none yet)
        objects = dict(re.findall(r'^tenantgate_webhook_cache_objects\{cache="(\w+)"\} (\d+)$', text, re.M))
        assert objects == {name: "0" for name in counted}, text
        # refused before a byte of the request, token included, was sent
        assert "completed" not in handshakes
    finally:
        w.stop()
        srv.close()
    for line in w.log_lines():
        assert "test-token" not in json.dumps(line)
