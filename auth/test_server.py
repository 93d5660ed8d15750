"""Black-box tests of the tenantgate-auth binary on 127.0.0.1 (hostile clients).

The binary runs as shipped against a stand-in API server of this file that
only knows the token Secret (every other call gets 503): everything up to the
issuance is tested here - wire format, token check, limits, back-off, TLS,
slow and oversized clients, metrics, logs. The issuance itself runs against a
real kube-apiserver in e2e/test_auth_server.py. Env: TG_AUTH_BIN.
"""
import base64
import http.client
import http.server
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import NameOID

BIN = os.environ.get("TG_AUTH_BIN", "tenantgate-auth")
TOKEN = "ab" * 64
CLUSTER = "3114c478-173d-4344-8f01-eb21efb95aea"


def mint_cert(directory, cn, name):
    cert, key = os.path.join(directory, name + ".crt"), os.path.join(directory, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + cn,
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def csr_b64(cn=CLUSTER, org="liqo.io"):
    key = ed25519.Ed25519PrivateKey.generate()
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, org), x509.NameAttribute(NameOID.COMMON_NAME, cn)])).sign(key, None)
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def identity_body(token, cluster=CLUSTER, csr=None):
    return json.dumps({"cluster": {"clusterID": cluster, "clusterName": "home"}, "originClusterToken": token,
                       "destinationClusterToken": "", "certificateSigningRequest": csr or csr_b64(cluster)})


class TokenOnlyAPI(http.server.BaseHTTPRequestHandler):
    """Answers GET of Secret liqo/auth-token; 503 to everything else."""
    def _answer(self):
        if self.command == "GET" and self.path == "/api/v1/namespaces/liqo/secrets/auth-token":
            body = json.dumps({"kind": "Secret", "data": {"token": base64.b64encode(TOKEN.encode()).decode()}})
            code = 200
        else:
            body, code = '{"kind":"Status","code":503}', 503
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())
    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *a):
        pass


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("api"))
    cert, key = mint_cert(d, "api", "api")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenOnlyAPI)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield "https://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()


class Auth:
    def __init__(self, tmp_path, api_url, *extra):
        self.dir = str(tmp_path)
        self.cert, self.key = mint_cert(self.dir, "first", "tls")
        kubeconfig = os.path.join(self.dir, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{api_url}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: test-token}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
""")
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [BIN, "--cert", self.cert, "--key", self.key, "--listen", "127.0.0.1:0", "--metrics-listen",
             "127.0.0.1:0", "--kubeconfig", kubeconfig, "--cluster-id", "provider-1", "--cluster-name", "prov",
             "--api-server-url", "https://provider.example:6443", "--cert-check-interval", "1",
             "--certificate-wait", "1", *extra], stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.port = None
        deadline = time.time() + 10
        while time.time() < deadline and self.port is None:
            for line in self.log_lines():
                if line.get("msg") == "serving":
                    self.port, self.metrics_port = line["port"], line["metrics_port"]
            if self.proc.poll() is not None:
                raise RuntimeError("exited: " + open(self.stderr_path).read())
            time.sleep(0.05)
        assert self.port

    def log_lines(self):
        with open(self.stderr_path, "rb") as f:
            return [json.loads(raw) for raw in f]

    def ctx(self, **kw):
        c = ssl.create_default_context(cafile=self.cert)
        for k, v in kw.items():
            setattr(c, k, v)
        return c

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPSConnection("localhost", self.port, context=self.ctx(), timeout=10)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data

    def post(self, body):
        r, data = self.request("POST", "/identity/certificate", body, {"Content-Type": "application/json"})
        return r.status, (json.loads(data) if data.startswith(b"{") else data), r

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        return text

    def wait_ready(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            c = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return
            time.sleep(0.1)
        raise AssertionError("never ready")

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
def auth(tmp_path, api):
    a = Auth(tmp_path, api, "--free-failures", "1000")
    a.wait_ready()
    yield a
    a.stop()


def test_ids(auth):
    r, data = auth.request("GET", "/ids")
    assert r.status == 200
    assert json.loads(data) == {"clusterId": "provider-1", "clusterName": "prov"}
    r, _ = auth.request("POST", "/ids", "{}")
    assert r.status == 405
    r, data = auth.request("GET", "/identity/certificate")
    assert r.status == 405 and r.getheader("Allow") == "POST"
    r, data = auth.request("GET", "/etc/passwd")
    assert r.status == 404 and json.loads(data)["reason"] == "NotFound"


def test_wrong_and_empty_tokens_are_401_and_never_logged(auth):
    status, body, _ = auth.post(identity_body("cd" * 64))
    assert status == 401 and body["reason"] == "TokenMismatch"
    assert body["message"].startswith("expected")
    status, body, _ = auth.post(identity_body(""))
    assert status == 401 and body["reason"] == "EmptyToken"
    # a token of another length is the same TokenMismatch: nothing learnt from its length
    status, body, _ = auth.post(identity_body(TOKEN[:-1]))
    assert status == 401 and body["reason"] == "TokenMismatch"
    logged = open(auth.stderr_path).read()
    assert "cd" * 64 not in logged and TOKEN not in logged and TOKEN[:-1] not in logged
    lines = [x for x in auth.log_lines() if x.get("msg") == "auth request" and x.get("status") == 401]
    assert len(lines) == 3 and all(x["source"] == "127.0.0.1" for x in lines)


def test_malformed_bodies_are_400(auth):
    for body, reason in [("{", "MalformedRequest"), ("[]", "MalformedRequest"), ("", "MalformedRequest"),
                         ('{"cluster":{"clusterID":"../x"},"certificateSigningRequest":"QQ=="}', "InvalidClusterID"),
                         ('{"cluster":{"clusterID":"a"},"certificateSigningRequest":"%%%"}', "MalformedRequest"),
                         ("\xff\xfe" * 10, "MalformedRequest")]:
        status, answer, _ = auth.post(body.encode("latin-1"))
        assert status == 400 and answer["reason"] == reason, (body, answer)


def test_only_uuid_ids_and_never_our_own(tmp_path_factory, api, auth):
    # a token holder cannot ask for a user name such as "admin"
    status, body, _ = auth.post(identity_body(TOKEN, cluster="admin"))
    assert status == 400 and body["reason"] == "InvalidClusterID" and "UUID" in body["message"]
    a = Auth(tmp_path_factory.mktemp("any"), api, "--any-cluster-id")
    try:
        a.wait_ready()
        status, body, _ = a.post(identity_body(TOKEN, cluster="admin"))
        assert status == 500 and body["reason"] == "IssuanceFailed"      # past every check
        status, body, _ = a.post(identity_body(TOKEN, cluster="provider-1"))
        assert status == 400 and body["reason"] == "InvalidClusterID" and "own" in body["message"]
    finally:
        a.stop()


def test_good_token_reaches_the_csr_check_and_the_issuance(auth):
    # only after the token matched is the CSR looked at
    status, body, _ = auth.post(identity_body(TOKEN, csr=csr_b64(cn="someone-else")))
    assert status == 400 and body["reason"] == "CSRSubjectMismatch"
    status, body, _ = auth.post(identity_body(TOKEN, csr=csr_b64(org="system:masters")))
    assert status == 400 and body["reason"] == "CSRSubjectMismatch"
    # the stand-in API refuses the namespace: the issuance fails, it is not a verdict on the token
    status, body, _ = auth.post(identity_body(TOKEN))
    assert status == 500 and body["reason"] == "IssuanceFailed"
    assert 'tenantgate_auth_requests_total{path="/identity/certificate",code="500",reason="IssuanceFailed"} 1' \
        in auth.metrics()


def test_brute_force_backs_off(tmp_path, api):
    a = Auth(tmp_path, api, "--free-failures", "2", "--backoff-base", "5", "--burst", "100", "--rate", "100")
    try:
        a.wait_ready()
        for _ in range(3):
            assert a.post(identity_body("00" * 64))[0] == 401
        # in back-off: even the right token waits, and learns nothing
        status, body, r = a.post(identity_body(TOKEN))
        assert status == 429 and body["reason"] == "RateLimited"
        assert 1 <= int(r.getheader("Retry-After")) <= 5
        m = a.metrics()
        assert 'code="401",reason="TokenMismatch"} 3' in m and 'code="429",reason="RateLimited"} 1' in m
    finally:
        a.stop()


def test_request_budget_per_source(tmp_path, api):
    a = Auth(tmp_path, api, "--burst", "3", "--rate", "1", "--free-failures", "100")
    try:
        a.wait_ready()
        codes = [a.post(identity_body("00" * 64))[0] for _ in range(5)]
        assert codes[:3] == [401] * 3 and 429 in codes[3:]
        assert a.request("GET", "/ids")[0].status == 200    # /ids is not the brute-force target
    finally:
        a.stop()


def tls_socket(auth, **kw):
    s = socket.create_connection(("127.0.0.1", auth.port), timeout=10)
    return auth.ctx(**kw).wrap_socket(s, server_hostname="localhost")


def test_oversized_body_is_413(auth):
    # refused on its Content-Length, before the body is read
    s = tls_socket(auth)
    s.sendall(b"POST /identity/certificate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (1 << 20))
    s.settimeout(5)
    assert s.recv(4096).startswith(b"HTTP/1.1 413")
    s.close()
    # one the handler sees: answered, logged and counted like any other
    status, body, _ = auth.post('{"x":"' + "A" * (70 << 10) + '"}')
    assert status == 413 and body["reason"] == "PayloadTooLarge"
    assert 'code="413",reason="PayloadTooLarge"} 1' in auth.metrics()
    # and a chunked body that grows past the limit
    s = tls_socket(auth)
    s.sendall(b"POST /identity/certificate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    answer = b""
    try:
        for _ in range(80):
            s.sendall(b"400\r\n" + b"A" * 1024 + b"\r\n")
        s.sendall(b"0\r\n\r\n")
        answer = s.recv(4096)
    except (ConnectionError, ssl.SSLError):
        pass
    assert answer.startswith(b"HTTP/1.1 413") or answer == b""
    s.close()
    assert auth.request("GET", "/ids")[0].status == 200


def test_huge_headers_are_refused(auth):
    s = tls_socket(auth)
    s.sendall(b"GET /ids HTTP/1.1\r\nHost: x\r\n" + b"X-Junk: " + b"a" * 200000 + b"\r\n\r\n")
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionError, ssl.SSLError, socket.timeout):
        pass
    assert data.startswith(b"HTTP/1.1 431") or not data
    s.close()
    assert auth.request("GET", "/ids")[0].status == 200


def closed_within(s, seconds):
    s.settimeout(seconds)
    start = time.time()
    try:
        while s.recv(4096):
            pass
    except (ConnectionError, ssl.SSLError):
        pass
    except socket.timeout:
        return None
    return time.time() - start


def test_slow_clients_are_closed_and_do_not_block_others(tmp_path, api):
    a = Auth(tmp_path, api, "--request-timeout", "1")
    try:
        a.wait_ready()
        # headers that never end, a body that never comes, a handshake never started
        s1 = tls_socket(a)
        s1.sendall(b"POST /identity/certificate HTTP/1.1\r\nHost: x\r\n")
        s2 = tls_socket(a)
        s2.sendall(b"POST /identity/certificate HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{")
        s3 = socket.create_connection(("127.0.0.1", a.port))
        assert a.request("GET", "/ids")[0].status == 200
        for s in (s1, s2):
            t = closed_within(s, 5)
            assert t is not None and t < 4
        s3.settimeout(5)
        assert s3.recv(10) == b""
    finally:
        a.stop()


def test_tls_1_2_minimum(auth):
    with pytest.raises(ssl.SSLError):
        tls_socket(auth, minimum_version=ssl.TLSVersion.TLSv1, maximum_version=ssl.TLSVersion.TLSv1_1)
    s = tls_socket(auth, maximum_version=ssl.TLSVersion.TLSv1_2)
    assert s.version() == "TLSv1.2"
    s.close()


def test_certificate_rotation(auth):
    def served_cn():
        s = tls_socket(auth)
        der = s.getpeercert(binary_form=True)
        s.close()
        return x509.load_der_x509_certificate(der).subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert served_cn() == "first"
    cert, key = mint_cert(auth.dir, "second", "second")
    for src, dst in ((key, auth.key), (cert, auth.cert)):
        os.replace(src, dst)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            if served_cn() == "second":
                return
        except ssl.SSLError:
            pass    # the client still trusts the old file's copy
        time.sleep(0.2)
    raise AssertionError("certificate not reloaded")


def test_authentication_off_only_when_said_and_logged_every_time(tmp_path, api):
    bad = subprocess.run([BIN, "--cert", "x", "--key", "y", "--authentication", "maybe"], capture_output=True)
    assert bad.returncode == 2
    a = Auth(tmp_path, api, "--authentication", "off")
    try:
        for _ in range(2):
            status, body, _ = a.post(identity_body(""))
            assert status == 500 and body["reason"] == "IssuanceFailed"   # past the token step
        warned = [x for x in a.log_lines() if x.get("msg", "").startswith("authentication is disabled")]
        assert len(warned) == 2
        assert "tenantgate_auth_authentication_disabled 1" in a.metrics()
    finally:
        a.stop()


def test_no_token_read_means_503_not_open(tmp_path):
    a = Auth(tmp_path, "https://127.0.0.1:9")
    try:
        status, body, _ = a.post(identity_body(""))
        assert status == 503 and body["reason"] == "TokenUnavailable"
        status, body, _ = a.post(identity_body(TOKEN))
        assert status == 503
    finally:
        a.stop()


def test_sigterm_exits(auth):
    auth.proc.send_signal(signal.SIGTERM)
    assert auth.proc.wait(10) == 0
