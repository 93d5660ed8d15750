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


def csr_b64(cn=CLUSTER, org="liqo.io", group=None):
    key = ed25519.Ed25519PrivateKey.generate()
    names = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)]
    if group:   # past X.509's advisory 64-character bound, as tenantgate writes it (docs/revocation.md)
        names.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, group, _validate=False))
    names.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(key, None)
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def identity_body(token, cluster=CLUSTER, csr=None):
    # Liqo v0.10.3: the provider's token is destinationClusterToken; origin is the consumer's own
    return json.dumps({"cluster": {"clusterID": cluster, "clusterName": "home"}, "originClusterToken": "cd" * 64,
                       "destinationClusterToken": token, "certificateSigningRequest": csr or csr_b64(cluster)})


class TokenOnlyAPI(http.server.BaseHTTPRequestHandler):
    """Answers GET of Secret liqo/auth-token; 503 to everything else."""
    def _answer(self):
        if self.command == "GET" and self.path == "/api/v1/namespaces/tenantgate-tokens/secrets/auth-token":
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

    def request(self, method, path, body=None, headers=None, timeout=10):
        c = http.client.HTTPSConnection("localhost", self.port, context=self.ctx(), timeout=timeout)
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
    # a per-certificate group of another identity buys that identity's rights: refused
    other = "tenantgate.io/cert:someone-else:" + "0f" * 16
    status, body, _ = auth.post(identity_body(TOKEN, csr=csr_b64(group=other)))
    assert status == 403 and body["reason"] == "NameReserved" and "expected" in body["message"]
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


def hold_idle(a, source, n):
    """n TLS connections from source that each had one answered /ids and now
    wait, kept alive, holding their slots."""
    held = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", a.port), timeout=10, source_address=(source, 0))
        s = a.ctx().wrap_socket(s, server_hostname="localhost")
        s.sendall(b"GET /ids HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        held.append(s)
    return held


def test_idle_connections_make_room_for_a_new_client(tmp_path, api):
    # issue 44, finding 8: 17 addresses holding 16 idle connections each (the
    # per-peer cap) fill the 256 slots; a new client's /ids and POST still
    # get their answers, an idle connection being evicted for each
    a = Auth(tmp_path, api, "--request-timeout", "120", "--free-failures", "1000")
    held = []
    try:
        a.wait_ready()
        for i in range(17):
            held += hold_idle(a, "127.0.9.%d" % (i + 1), 16)
        assert "tenantgate_auth_connections 256" in a.metrics()
        r, data = a.request("GET", "/ids")
        assert r.status == 200 and json.loads(data)["clusterId"] == "provider-1"
        assert a.post(identity_body("00" * 64))[0] == 401
        m = a.metrics()
        assert 'tenantgate_auth_connections_rejected_total{why="max_connections"}' not in m
        evicted = [float(line.split()[-1]) for line in m.splitlines()
                   if line.startswith("tenantgate_auth_connections_evicted_total")]
        assert evicted and evicted[0] >= 16 + 1    # the 17th address evicted 16, the newcomer one
    finally:
        for s in held:
            s.close()
        a.stop()


def test_certificate_lifetime_above_7_days_is_refused_at_start(tmp_path):
    # issue 44, finding 6: without expirationSeconds the cluster's signer gives 365 days
    cert, key = mint_cert(str(tmp_path), "x", "tls")
    for value in ("0", "599", "604801", "31536000"):
        r = subprocess.run([BIN, "--cert", cert, "--key", key, "--csr-expiration-seconds", value],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and "expected 600 to 604800 seconds" in r.stderr, (value, r.stderr)
    assert "default 604800" in subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout


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


# --- v1 one-string peering (docs/auth.md "v1 one-string peering") --------------------------------
#
# A second stand-in API, with state: bootstrap token Secrets (a DELETE honours uid and
# resourceVersion preconditions under a lock, as the API server does), the tenant namespace,
# the nonce Secret (filled at once, as the signer's nonce controller would) and Tenants (signed
# at once). What the webhook and the signer do is e2e/test_auth_v1.py's.

import hashlib  # noqa: E402
import re  # noqa: E402
import secrets as pysecrets  # noqa: E402
import concurrent.futures  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402

V1_CONSUMER = "c-" + "5" * 8


class V1State:
    def __init__(self):
        self.lock = threading.Lock()
        self.tokens = {}           # id -> Secret
        self.tenants = {}
        self.namespaces = []       # as POSTed
        self.rv = 1
        self.rolebindings, self.clusterrolebindings = [], []
        self.claims = {}           # object name -> NameClaim
        self.too_many = 0          # answer this many 429s to the RoleBindings' list

    def add_token(self, usage="reusable", ttl=3600):
        tid = "".join(pysecrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))
        secret = "".join(pysecrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
        exp = (datetime.now(timezone.utc) + timedelta(seconds=ttl)).strftime("%Y-%m-%dT%H:%M:%SZ")
        data = {"token-id": tid, "secret-sha256": hashlib.sha256(secret.encode()).hexdigest(), "expiration": exp,
                "usage": usage}
        with self.lock:
            self.rv += 1
            self.tokens[tid] = {"kind": "Secret", "type": "tenantgate.io/bootstrap-token",
                                "metadata": {"name": "tenantgate-token-" + tid, "uid": "uid-" + tid,
                                             "resourceVersion": str(self.rv)},
                                "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}
        return f"{tid}.{secret}"


def names_api(state, method, p, body):
    """The reads and the claim of one owner per name (docs/auth.md "Names"): (code, obj) or None."""
    rbac = "/apis/rbac.authorization.k8s.io/v1/"
    if method == "GET" and p == rbac + "rolebindings":
        with state.lock:
            if state.too_many > 0:     # a watch cache still initializing
                state.too_many -= 1
                return 429, {"kind": "Status", "code": 429}
        return 200, {"items": state.rolebindings}
    if method == "GET" and p == rbac + "clusterrolebindings":
        return 200, {"items": state.clusterrolebindings}
    if method == "GET" and p.startswith("/apis/authentication.liqo.io/v1beta1/resourceslices?"):
        return 200, {"items": []}
    m = re.fullmatch(r"/api/v1/namespaces/(liqo-tenant-[a-z0-9-]+)", p)
    if m and method == "GET":
        return 200, {"kind": "Namespace", "metadata": {"name": m.group(1), "uid": "uid-" + m.group(1)}}
    claims = "/apis/tenantgate.io/v1alpha1/nameclaims"
    with state.lock:
        if p == claims and method == "POST":
            name = body["metadata"]["name"]
            if name in state.claims:
                return 409, {"kind": "Status", "code": 409}
            state.claims[name] = body
            return 201, body
        m = re.fullmatch(claims + r"/(n-[0-9a-f]{64})", p)
        if m and method == "GET":
            c = state.claims.get(m.group(1))
            return (200, c) if c else (404, {"kind": "Status", "code": 404})
    return None


def claim_name(name):
    return "n-" + hashlib.sha256(name.encode()).hexdigest()


def v1_handler(state):
    class V1API(http.server.BaseHTTPRequestHandler):
        def _send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(n)) if n else None

        def _answer(self):
            body, p = self._body(), self.path
            if p == "/api/v1/namespaces/tenantgate-tokens/secrets/auth-token" and self.command == "GET":
                return self._send(200, {"kind": "Secret", "data": {"token": base64.b64encode(TOKEN.encode()).decode()}})
            m = re.fullmatch(r"/api/v1/namespaces/tenantgate-tokens/secrets/tenantgate-token-([a-z0-9]+)", p)
            if m:
                with state.lock:
                    sec = state.tokens.get(m.group(1))
                    if sec is None:
                        return self._send(404, {"kind": "Status", "code": 404})
                    if self.command == "GET":
                        return self._send(200, sec)
                    if self.command == "PATCH":      # the nonce record: resourceVersion precondition
                        meta = body.get("metadata", {})
                        if meta.get("resourceVersion") != sec["metadata"]["resourceVersion"]:
                            return self._send(409, {"kind": "Status", "code": 409})
                        state.rv += 1
                        sec["metadata"]["resourceVersion"] = str(state.rv)
                        sec["metadata"].setdefault("annotations", {}).update(meta.get("annotations", {}))
                        return self._send(200, sec)
                    pre = (body or {}).get("preconditions") or {}
                    if pre.get("uid") != sec["metadata"]["uid"] or \
                            pre.get("resourceVersion") != sec["metadata"]["resourceVersion"]:
                        return self._send(409, {"kind": "Status", "code": 409})
                    del state.tokens[m.group(1)]
                    return self._send(200, {"kind": "Status", "status": "Success"})
            if p == "/api/v1/namespaces" and self.command == "POST":
                with state.lock:
                    state.namespaces.append(body)
                return self._send(201, body)
            got = names_api(state, self.command, p, body)
            if got:
                return self._send(*got)
            ns = f"liqo-tenant-{V1_CONSUMER}"
            if re.fullmatch(r"/api/v1/namespaces/liqo-tenant-[a-z0-9-]+/secrets/liqo-nonce", p):
                return self._send(200, {"kind": "Secret", "data": {"nonce": base64.b64encode(b"N" * 88).decode()}})
            tp = f"/apis/authentication.liqo.io/v1beta1/namespaces/{ns}/tenants"
            if p == tp and self.command == "POST":
                with state.lock:
                    if V1_CONSUMER in state.tenants:
                        return self._send(409, {"kind": "Status", "code": 409, "message": "exists"})
                    body["status"] = {"tenantNamespace": ns, "authParams": {"signedCRT": "Y2VydA=="}}
                    state.tenants[V1_CONSUMER] = body
                return self._send(201, body)
            if p == f"{tp}/{V1_CONSUMER}" and self.command == "GET":
                return self._send(200, state.tenants[V1_CONSUMER])
            return self._send(503, {"kind": "Status", "code": 503})
        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

        def log_message(self, *a):
            pass
    return V1API


@pytest.fixture
def v1(tmp_path):
    state = V1State()
    cert, key = mint_cert(str(tmp_path), "api", "v1api")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), v1_handler(state))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    a = Auth(tmp_path, "https://127.0.0.1:%d" % srv.server_address[1], "--free-failures", "1000", "--burst", "1000",
             "--rate", "1000")
    a.wait_ready()
    a.state = state
    yield a
    a.stop()
    srv.shutdown()


def v1_post(a, path, obj=None, raw=None):
    r, data = a.request("POST", path, raw if raw is not None else json.dumps(obj),
                        {"Content-Type": "application/json"})
    return r.status, (json.loads(data) if data.startswith(b"{") else data)


def v1_tenant(token, cluster=V1_CONSUMER, **extra):
    t = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
         "metadata": {"name": cluster, "namespace": "kube-system"}, "spec": {"clusterID": cluster, **extra}}
    return {"token": token, "tenant": t}


def test_v1_good_token_gets_the_nonce_then_the_signed_tenant(v1):
    token = v1.state.add_token()
    status, body = v1_post(v1, "/v1/nonce", {"token": token, "clusterID": V1_CONSUMER})
    assert status == 200 and body == {"clusterID": "provider-1", "nonce": "N" * 88}, body
    status, body = v1_post(v1, "/v1/tenant", v1_tenant(token))
    assert status == 201, body
    assert body["tenant"]["metadata"]["namespace"] == f"liqo-tenant-{V1_CONSUMER}"   # not the body's
    assert body["tenant"]["status"]["authParams"]["signedCRT"] == "Y2VydA=="
    assert body["clusterID"] == "provider-1" and body["apiServerUrl"] == "https://provider.example:6443"
    # a second Tenant for the same consumer
    status, body = v1_post(v1, "/v1/tenant", v1_tenant(token))
    assert status == 409 and body["reason"] == "TenantExists"
    assert token.split(".")[1] not in open(v1.stderr_path).read()


def test_v1_hostile_bodies(v1):
    token = v1.state.add_token()
    cases = [
        ("/v1/nonce", b"", "MalformedRequest"),
        ("/v1/nonce", b"[1]", "MalformedRequest"),
        ("/v1/nonce", b'{"token":"%s","clusterID":"a","clusterID":"b"}' % token.encode(), "MalformedRequest"),
        ("/v1/nonce", json.dumps({"token": token, "clusterID": "../../etc"}).encode(), "InvalidClusterID"),
        ("/v1/nonce", json.dumps({"token": token, "clusterID": "provider-1"}).encode(), "InvalidClusterID"),
        ("/v1/nonce", json.dumps({"token": token, "clusterID": "x" * 64}).encode(), "InvalidClusterID"),
        ("/v1/nonce", json.dumps({"token": {"a": 1}, "clusterID": V1_CONSUMER}).encode(), "MalformedRequest"),
        ("/v1/tenant", json.dumps({"token": token}).encode(), "MalformedRequest"),
        ("/v1/tenant", json.dumps({"token": token, "tenant": {"kind": "Secret"}}).encode(), "MalformedRequest"),
        ("/v1/tenant", json.dumps(v1_tenant(token, cluster="UPPER")).encode(), "InvalidClusterID"),
        ("/v1/tenant", b"\xff\xfe" * 100, "MalformedRequest"),
        ("/v1/tenant", b'{"token":' * 5000, "MalformedRequest"),
    ]
    for path, raw, reason in cases:
        status, body = v1_post(v1, path, raw=raw)
        assert status == 400 and body["reason"] == reason and body["message"].startswith("expected"), (raw[:60], body)
    r, _ = v1.request("GET", "/v1/nonce")
    assert r.status == 405 and r.getheader("Allow") == "POST"
    status, body = v1_post(v1, "/v1/tenant", raw=b"{" + b" " * (70 << 10) + b"}")
    assert status == 413
    assert v1.state.tenants == {}


def test_v1_brute_force_on_token_ids_gets_one_answer_then_backs_off(tmp_path, v1):
    real = v1.state.add_token()
    tid, secret = real.split(".")
    answers = set()
    guesses = [f"{pysecrets.token_hex(3)}.{secret}" for _ in range(20)] + \
              [f"{tid}.{pysecrets.token_hex(16)}", "short", f"{tid}.{secret[:-1]}"]
    for guess in guesses:
        status, body = v1_post(v1, "/v1/nonce", {"token": guess, "clusterID": V1_CONSUMER})
        answers.add((status, json.dumps(body, sort_keys=True)))
    assert len(answers) == 1 and next(iter(answers))[0] == 401, answers
    assert json.loads(next(iter(answers))[1])["reason"] == "InvalidToken"
    assert secret not in open(v1.stderr_path).read()
    assert 'tenantgate_auth_requests_total{path="/v1/nonce",code="401",reason="InvalidToken"} 23' in v1.metrics()


def test_v1_failures_back_off(tmp_path):
    state = V1State()
    cert, key = mint_cert(str(tmp_path), "api", "v1api")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), v1_handler(state))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    a = Auth(tmp_path, "https://127.0.0.1:%d" % srv.server_address[1], "--burst", "100", "--rate", "100")
    try:
        a.wait_ready()
        seen = [v1_post(a, "/v1/nonce", {"token": "aaaaaa." + "b" * 32, "clusterID": V1_CONSUMER})[0]
                for _ in range(6)]
        assert seen[:3] == [401, 401, 401] and 429 in seen[3:], seen
    finally:
        a.stop()
        srv.shutdown()


def test_v1_single_use_token_is_spent_once_even_racing(v1):
    token = v1.state.add_token(usage="single-use")
    status, _ = v1_post(v1, "/v1/nonce", {"token": token, "clusterID": V1_CONSUMER})
    assert status == 200                           # the nonce does not spend it
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: v1_post(v1, "/v1/tenant", v1_tenant(token)), range(8)))
    codes = sorted(s for s, _ in got)
    assert codes.count(201) == 1 and codes.count(401) == 7, codes
    assert v1.state.tokens == {}
    # the replay is answered as an unknown token is
    replay = v1_post(v1, "/v1/nonce", {"token": token, "clusterID": V1_CONSUMER})
    unknown = v1_post(v1, "/v1/nonce", {"token": "zzzzzz." + token.split(".")[1], "clusterID": V1_CONSUMER})
    assert replay == unknown and replay[0] == 401


def test_v1_expired_token_is_the_same_answer(v1):
    token = v1.state.add_token(ttl=-1)
    unknown = v1_post(v1, "/v1/nonce", {"token": "zzzzzz." + "a" * 32, "clusterID": V1_CONSUMER})
    assert v1_post(v1, "/v1/nonce", {"token": token, "clusterID": V1_CONSUMER}) == unknown


def test_v1_nonce_places_are_bounded_per_token_even_racing(v1):
    """A single-use token makes one tenant namespace (retries for its id are fine); a reusable
    one --max-nonces-per-token (3), however many requests race for new ids."""
    once = v1.state.add_token(usage="single-use")
    got = [v1_post(v1, "/v1/nonce", {"token": once, "clusterID": cid}) for cid in (V1_CONSUMER, "other-1", V1_CONSUMER)]
    assert [s for s, _ in got] == [200, 403, 200], got
    assert got[1][1]["reason"] == "TokenExhausted" and "bound of 1" in got[1][1]["message"]
    made = [n["metadata"]["name"] for n in v1.state.namespaces]
    assert made == [f"liqo-tenant-{V1_CONSUMER}"] * 2, made
    assert v1.state.namespaces[0]["metadata"]["labels"]["tenantgate.io/bootstrap-token-id"] == once.split(".")[0]
    many = v1.state.add_token()
    ids = [f"racer-{i}" for i in range(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda cid: v1_post(v1, "/v1/nonce", {"token": many, "clusterID": cid}), ids))
    codes = sorted(s for s, _ in got)
    assert codes == [200] * 3 + [403] * 5, got
    recorded = v1.state.tokens[many.split(".")[0]]["metadata"]["annotations"]["tenantgate.io/nonce-cluster-ids"]
    assert len(recorded.split(",")) == 3
    assert sorted(n["metadata"]["name"] for n in v1.state.namespaces[2:]) == \
        sorted(f"liqo-tenant-{c}" for c in recorded.split(","))


def binding(kind, name, subject, ns=None, subject_kind="User"):
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "metadata": meta, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": subject_kind, "name": subject}]}


def test_v1_names_reserved_bound_owned_before_anything_is_written(v1):
    token = v1.state.add_token(usage="single-use")
    nonce = lambda cid: v1_post(v1, "/v1/nonce", {"token": token, "clusterID": cid})   # noqa: E731
    # reserved: Liqo's peering users
    status, body = nonce("liqo-peer-user-" + V1_CONSUMER)
    assert (status, body["reason"]) == (403, "NameReserved") and body["message"].startswith("expected"), body
    # bound: a user an admin bound to view (a ClusterRoleBinding), or a group in some namespace
    v1.state.clusterrolebindings.append(binding("ClusterRoleBinding", "ops-view", "ops"))
    v1.state.rolebindings.append(binding("RoleBinding", "team", "team-a", ns="apps", subject_kind="Group"))
    for cid in ("ops", "team-a"):
        status, body = nonce(cid)
        assert (status, body["reason"]) == (403, "NameBound") and "found " in body["message"], body
    # owned: tenantgate-auth's RoleBinding of the token path, or a claim of it
    v1.state.rolebindings.append(binding("RoleBinding", "tenantgate-auth-identity", "c-issued",
                                         ns="liqo-tenant-c-issued"))
    status, body = nonce("c-issued")
    assert (status, body["reason"]) == (403, "NameOwned") and "of path token" in body["message"], body
    v1.state.claims[claim_name(V1_CONSUMER)] = {"spec": {"name": V1_CONSUMER, "path": "token",
                                                          "holder": V1_CONSUMER}}
    for path, obj in (("/v1/nonce", {"token": token, "clusterID": V1_CONSUMER}), ("/v1/tenant", v1_tenant(token))):
        status, body = v1_post(v1, path, obj)
        assert (status, body["reason"]) == (403, "NameOwned") and "token " + V1_CONSUMER in body["message"], body
    # nothing was written, and the single-use token is not spent
    assert v1.state.tenants == {} and len(v1.state.tokens) == 1
    # its own claim (the Tenant flow's, this holder) is no obstacle
    v1.state.claims.clear()
    status, body = v1_post(v1, "/v1/tenant", v1_tenant(token))
    assert status == 201, body
    assert v1.state.claims[claim_name(V1_CONSUMER)]["spec"] == {"name": V1_CONSUMER, "path": "tenant",
                                                                "holder": V1_CONSUMER}
    assert v1.state.claims[claim_name(V1_CONSUMER)]["metadata"]["ownerReferences"][0]["name"] == \
        "liqo-tenant-" + V1_CONSUMER


def test_v1_names_read_again_after_429_then_fail_closed(v1):
    token = v1.state.add_token()
    v1.state.too_many = 3
    status, body = v1_post(v1, "/v1/nonce", {"token": token, "clusterID": V1_CONSUMER})
    assert status == 200, body
    v1.state.too_many = 1000          # 40 reads 250 ms apart
    r, data = v1.request("POST", "/v1/nonce", json.dumps({"token": token, "clusterID": V1_CONSUMER}),
                         {"Content-Type": "application/json"}, timeout=30)
    status, body = r.status, json.loads(data)
    assert (status, body["reason"]) == (500, "IssuanceFailed") and "HTTP 429" in body["message"], body
