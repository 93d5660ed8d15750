"""tenantgate-auth on the bed's provider (docs/auth.md), driven by a small client written
from Liqo v0.10's wire format, as Liqo's discovery component speaks it:

    GET  /ids                    -> {"clusterId","clusterName"}
    POST /identity/certificate   {"cluster":{"clusterID","clusterName"},"originClusterToken",
                                  "destinationClusterToken","certificateSigningRequest"}
                                 -> 202 {"namespace","certificate","apiServerUrl","apiServerCA","aws"}

As Liqo v0.10.3 sends it: the provider's token is destinationClusterToken (the one checked), the
consumer's own token originClusterToken (left out when empty), which the server keeps.

The server runs as a host process with its ServiceAccount's token and exactly the RBAC of
manifests/auth/rbac.yaml (moved to a namespace of this test). The certificate is signed by
the bed's kube-controller-manager and must work against the bed's API server.
"""
import base64
import concurrent.futures
import datetime
import json
import re
import secrets
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from bed import HostProcess, free_port, mint_serving_cert, openssl, wait_for
from tenantgate_services import built, http_get
from test_slice_provider import OID_CN, OID_O, ed25519_csr

SA = "tenantgate-auth"
CONSUMER_ROLE = "tenantgate-remote-consumer"


# --- the consumer's side: a v0.10 client ------------------------------------------------------

class LiqoV010Client:
    """What Liqo v0.10's discovery does against a foreign auth server, and the
    authentication status it would record (docs: Pending, EmptyDenied, Established, Denied)."""

    def __init__(self, url, ca_file, work_dir):
        self.url = url
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.work_dir = Path(work_dir)

    def _call(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, data=body, method=method,
                                     headers={"Content-Type": "application/json"} if body else {})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def ids(self):
        status, body = self._call("GET", "/ids")
        return status, json.loads(body)

    def new_key_and_csr(self, cluster_id):
        key = self.work_dir / f"{cluster_id}.key"
        openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
        csr = openssl("req", "-new", "-key", str(key), "-subj", f"/O=liqo.io/CN={cluster_id}")
        return key, csr

    def identity(self, cluster_id, token, csr_pem=None, raw_body=None, own_token=""):
        """(HTTP status, answer dict or raw bytes, key path, status Liqo would record)."""
        key = None
        if raw_body is None:
            if csr_pem is None:
                key, csr_pem = self.new_key_and_csr(cluster_id)
            body = {"cluster": {"clusterID": cluster_id, "clusterName": "consumer-" + cluster_id[:6]}}
            if own_token:                                  # omitempty
                body["originClusterToken"] = own_token
            body["destinationClusterToken"] = token
            body["certificateSigningRequest"] = base64.b64encode(csr_pem).decode()
            raw_body = json.dumps(body, separators=(",", ":")).encode()
        status, body = self._call("POST", "/identity/certificate", raw_body)
        try:
            answer = json.loads(body)
        except ValueError:
            answer = body
        if status == 202:
            auth_status = "Established"
        elif status == 401 and not token:
            auth_status = "EmptyDenied"
        elif status in (401, 403):
            auth_status = "Denied"
        else:
            auth_status = "Pending"
        return status, answer, key, auth_status


# --- the server ---------------------------------------------------------------------------------

class AuthServer:
    def __init__(self, provider, binary, ns, work_dir, *extra):
        self.provider = provider
        self.ns = ns
        self.serving = mint_serving_cert(Path(work_dir) / "serving")
        self.cluster_id = "provider-" + uuid.uuid4().hex[:8]
        self.tokens_ns = token_ns_of(ns)
        # Ports are free when picked, not held: another process on this shared machine may
        # take one before the server binds it. Start again on new ports, twice at most.
        for attempt in (1, 2, 3):
            try:
                self._start(binary, work_dir, extra)
                break
            except RuntimeError as e:
                if attempt == 3 or "Address already in use" not in str(e):
                    raise
        self.client = LiqoV010Client(f"https://127.0.0.1:{self.port}", self.serving["ca"], work_dir)

    def _start(self, binary, work_dir, extra):
        self.port, self.metrics_port = free_port(), free_port()
        provider, ns = self.provider, self.ns
        kubeconfig = provider.serviceaccount_kubeconfig(ns, SA)
        self.process = HostProcess(
            [binary, "--token-namespace", self.tokens_ns, "--cert", self.serving["cert"], "--key", self.serving["key"],
             "--listen", f"127.0.0.1:{self.port}", "--metrics-listen", f"127.0.0.1:{self.metrics_port}",
             "--kubeconfig", kubeconfig, "--namespace", ns, "--cluster-id", self.cluster_id,
             "--cluster-name", "bed-provider", "--api-server-url", provider.server,
             "--api-server-ca", provider.ca_file, "--token-check-interval", "1",
             "--free-failures", "100", "--burst", "100", "--rate", "100", *extra],
            Path(work_dir) / f"tenantgate-auth-{self.port}.log")
        self.process.name = "tenantgate-auth"
        wait_for(self._ready, timeout=30, interval=0.05, what="tenantgate-auth /readyz 200")

    def _ready(self):
        if not self.process.alive():
            raise RuntimeError("tenantgate-auth exited:\n" + self.process.log_tail(20))
        return http_get(self.metrics_port, "/readyz")[0] == 200

    def token(self):
        s = self.provider.get_json("secret", "auth-token", "-n", self.tokens_ns)
        return base64.b64decode(s["data"]["token"]).decode()

    def log_lines(self):
        return [json.loads(x) for x in self.process.log_path.read_text().splitlines() if x.startswith("{")]

    def stop(self):
        return self.process.stop()


def token_ns_of(ns):
    """The test's stand-in for tenantgate-tokens beside install namespace ns."""
    return f"{ns}-tokens"


def rbac_in(source_dir, ns):
    """manifests/auth/rbac.yaml with its namespace `liqo` moved to ns, and tenantgate-tokens
    to token_ns_of(ns)."""
    text = (Path(source_dir) / "manifests" / "auth" / "rbac.yaml").read_text()
    text = re.sub(r"(?m)^(\s*)(name|namespace): tenantgate-tokens$", rf"\1\2: {token_ns_of(ns)}", text)
    return re.sub(r"(?m)^(\s*)namespace: liqo$", rf"\1namespace: {ns}", text)


@pytest.fixture(scope="module")
def auth_env(provider, crds, source_dir, build_dir, tmp_path_factory):
    ns = "auth-" + uuid.uuid4().hex[:8]
    provider.create_namespace(ns)
    made_role = not provider.exists("clusterrole", CONSUMER_ROLE)
    if made_role:
        provider.apply((Path(source_dir) / "manifests" / "signer" / "remote-consumer-clusterrole.yaml").read_text())
    provider.apply(rbac_in(source_dir, ns))
    tokens_ns = token_ns_of(ns)
    env = {"ns": ns, "binary": built(build_dir, "auth/tenantgate-auth"), "work": tmp_path_factory.mktemp("auth"),
           "servers": [], "clusters": [], "tokens_ns": tokens_ns}
    yield env
    for s in env["servers"]:
        s.stop()
    for cid in env["clusters"]:
        provider.kubectl("delete", "namespace", f"liqo-tenant-{cid}", "--ignore-not-found", "--wait=false")
    provider.kubectl("delete", "csr", "-l", "tenantgate.io/auth-identity=true", "--ignore-not-found")
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "--ignore-not-found")
    provider.kubectl("delete", "clusterrolebinding", "tenantgate-auth-tenant-namespace-labeler", "--ignore-not-found")
    if made_role:
        provider.kubectl("delete", "clusterrole", CONSUMER_ROLE, "--ignore-not-found")
    provider.delete_namespace(tokens_ns)
    provider.delete_namespace(ns)


@pytest.fixture(scope="module")
def server(provider, auth_env):
    s = AuthServer(provider, auth_env["binary"], auth_env["ns"], auth_env["work"], "--token-namespace",
                   auth_env["tokens_ns"])
    auth_env["servers"].append(s)
    return s


def new_cluster_id(auth_env):
    cid = str(uuid.uuid4())
    auth_env["clusters"].append(cid)
    return cid


# --- tests --------------------------------------------------------------------------------------

def test_ids(server):
    status, ids = server.client.ids()
    assert status == 200 and ids == {"clusterId": server.cluster_id, "clusterName": "bed-provider"}


def test_token_secret_is_made_and_remade(provider, server):
    token = wait_for(lambda: server.token(), timeout=10, what="auth-token Secret")
    assert re.fullmatch(r"[0-9a-f]{128}", token)
    provider.kubectl("delete", "secret", "auth-token", "-n", server.tokens_ns)
    new = wait_for(lambda: provider.exists("secret", "auth-token", "-n", server.tokens_ns) and server.token(),
                   timeout=15, what="auth-token recreated")
    assert re.fullmatch(r"[0-9a-f]{128}", new) and new != token
    # the server compares against the new one
    wait_for(lambda: any(x.get("msg") == "peering token changed" for x in server.log_lines()), timeout=10,
             what="new token loaded")


def self_access(provider, kubeconfig, verb, group, resource, ns):
    """A SelfSubjectAccessReview as that identity (no discovery: the CRDs need not be here)."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": verb, "group": group, "resource": resource,
                                              "namespace": ns}}}
    out = provider.kubectl("create", "--validate=false", "-f", "-", "-o", "json", input=review,
                           kubeconfig=kubeconfig)
    return json.loads(out.stdout)["status"].get("allowed", False)


def lifetime_seconds(cert):
    """NotAfter - NotBefore of a PEM certificate file."""
    dates = dict(line.split("=", 1) for line in
                 openssl("x509", "-in", str(cert), "-noout", "-startdate", "-enddate").decode().splitlines())
    parse = lambda v: datetime.datetime.strptime(v.strip(), "%b %d %H:%M:%S %Y %Z")
    return (parse(dates["notAfter"]) - parse(dates["notBefore"])).total_seconds()


def test_good_token_gets_an_identity_that_works(provider, server, auth_env, tmp_path):
    cid = new_cluster_id(auth_env)
    own = secrets.token_hex(64)
    status, answer, key, auth_status = server.client.identity(cid, server.token(), own_token=own)
    assert status == 202, answer
    assert auth_status == "Established"
    # the consumer's own token is kept as Liqo v0.10.3 keeps it, in the token namespace
    kept = wait_for(lambda: provider.exists("secret", f"remote-token-{cid}", "-n", auth_env["tokens_ns"]) and
                    provider.get_json("secret", f"remote-token-{cid}", "-n", auth_env["tokens_ns"]),
                    timeout=15, what="the consumer's token kept")
    assert base64.b64decode(kept["data"]["token"]).decode() == own and kept["type"] == "Opaque"
    assert kept["metadata"]["labels"] == {"discovery.liqo.io/cluster-id": cid, "discovery.liqo.io/auth-token": ""}
    assert answer["aws"] == {"accessKeyID": "", "secretAccessKey": "", "region": "", "eksClusterID": "",
                             "iamUserArn": ""}
    assert answer["namespace"] == f"liqo-tenant-{cid}"
    assert answer["apiServerUrl"] == provider.server
    assert base64.b64decode(answer["apiServerCA"]) == Path(provider.ca_file).read_bytes()
    cert = tmp_path / "identity.crt"
    cert.write_bytes(base64.b64decode(answer["certificate"]))
    subject = openssl("x509", "-in", str(cert), "-noout", "-subject", "-nameopt", "RFC2253").decode()
    assert f"CN={cid}" in subject and "O=liqo.io" in subject
    # short-lived by default (issue 44, finding 6): at most 7 days, plus the 5 minutes
    # kube-controller-manager backdates NotBefore by, where its own default is 365 days
    assert lifetime_seconds(cert) <= 7 * 86400 + 5 * 60 + 60
    # the identity works against the bed's API server: whoami, and its rights are the documents'
    kc = provider.cert_kubeconfig(cid, cert, key, path=tmp_path / "identity.kubeconfig")
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
    assert who["status"]["userInfo"]["username"] == cid
    assert "liqo.io" in who["status"]["userInfo"]["groups"]
    tenant_ns = f"liqo-tenant-{cid}"
    assert self_access(provider, kc, "create", "authentication.liqo.io", "resourceslices", tenant_ns)
    assert not self_access(provider, kc, "create", "authentication.liqo.io", "resourceslices", "default")
    assert not self_access(provider, kc, "get", "", "secrets", tenant_ns)
    # approved only because the token matched, with its own reason
    csrs = provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]
    assert len(csrs) == 1
    reasons = [c.get("reason") for c in csrs[0]["status"]["conditions"] if c["type"] == "Approved"]
    assert reasons == ["TenantgateTokenMatched"]
    rb = provider.get_json("rolebinding", "tenantgate-auth-identity", "-n", tenant_ns)
    assert rb["roleRef"]["name"] == CONSUMER_ROLE and rb["subjects"][0]["name"] == cid
    # a second request for the same cluster: 403, and no second CSR
    status, answer, _, auth_status = server.client.identity(cid, server.token())
    assert status == 403 and answer["reason"] == "IdentityAlreadyIssued" and auth_status == "Denied"
    assert len(provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]) == 1


def revocable_identity(provider, server, cid, group, tmp_path):
    """(status, answer, kubeconfig or None): a v0.10 request whose CSR carries group beside
    O=liqo.io, as the consumer signer's authtoken controller sends it with annotation
    tenantgate.io/revocable "true" (assembled here: openssl req refuses the long O)."""
    key = tmp_path / f"{cid}-{group[-6:]}.key"
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
    csr = ed25519_csr(key, [(OID_O, "liqo.io"), (OID_O, group), (OID_CN, cid)], tmp_path).encode()
    status, answer, _, _ = server.client.identity(cid, server.token(), csr_pem=csr)
    if status != 202:
        return status, answer, None
    cert = tmp_path / f"{cid}.crt"
    cert.write_bytes(base64.b64decode(answer["certificate"]))
    return status, answer, provider.cert_kubeconfig(cid, cert, key, path=tmp_path / f"{cid}.kubeconfig")


def slices_as(provider, kubeconfig, cid):
    """GET the tenant namespace's ResourceSlices AS the certificate's holder: the kubectl result."""
    return provider.kubectl("get", "resourceslices.authentication.liqo.io", "-n", f"liqo-tenant-{cid}",
                            kubeconfig=kubeconfig, check=False)


def test_revocable_certificate_is_revoked_at_once(provider, server, auth_env, cli, tmp_path):
    """Issue 48 item 1, Liqo v0.10's token path: a CSR with a per-certificate group gets
    RoleBinding tenantgate-auth-identity of that group alone; `revoke` of certificate A ends A's
    rights at once (403 AS A) while certificate B keeps its own; A's group is never bound again
    (NameRevoked), read from the signer's records in the server's namespace."""
    a_id, b_id = new_cluster_id(auth_env), new_cluster_id(auth_env)
    group_a = f"tenantgate.io/cert:{a_id}:{secrets.token_hex(16)}"
    status, answer, kc_a = revocable_identity(provider, server, a_id, group_a, tmp_path)
    assert status == 202, answer
    status, answer, kc_b = revocable_identity(provider, server, b_id,
                                              f"tenantgate.io/cert:{b_id}:{secrets.token_hex(16)}", tmp_path)
    assert status == 202, answer
    rb = provider.get_json("rolebinding", "tenantgate-auth-identity", "-n", f"liqo-tenant-{a_id}")
    assert [(x["kind"], x["name"]) for x in rb["subjects"]] == [("Group", group_a)]
    assert slices_as(provider, kc_a, a_id).returncode == 0

    rc, out, err = cli("revoke", "--certificate", tmp_path / f"{a_id}.crt", "--kubeconfig", provider.kubeconfig,
                       "--namespace", auth_env["ns"])
    assert rc == 0, out + err
    assert f"revoked {group_a} (user {a_id})" in out and "tenantgate-auth-identity" in out, out
    r = wait_for(lambda: (lambda r: r if r.returncode != 0 else None)(slices_as(provider, kc_a, a_id)),
                 timeout=10, interval=0.1, what="certificate A refused")
    assert "forbidden" in r.stderr.lower(), r
    assert slices_as(provider, kc_b, b_id).returncode == 0

    # the revoked group again, once the identity's binding is gone (a peering removed and redone):
    # refused before anything is written
    provider.kubectl("delete", "rolebinding", "tenantgate-auth-identity", "-n", f"liqo-tenant-{a_id}")
    status, answer, _ = revocable_identity(provider, server, a_id, group_a, tmp_path)
    assert status == 403 and answer["reason"] == "NameRevoked" and group_a in answer["message"], answer
    assert not provider.exists("rolebinding", "tenantgate-auth-identity", "-n", f"liqo-tenant-{a_id}")


def test_racing_requests_for_one_cluster_get_one_identity(provider, server, auth_env):
    """Two consumers racing with the same cluster id (and the token): the RoleBinding's
    create decides, one identity is issued, the other request is 403."""
    cid = new_cluster_id(auth_env)
    token = server.token()
    bodies = [server.client.new_key_and_csr(cid)[1] for _ in range(4)]
    with concurrent.futures.ThreadPoolExecutor(len(bodies)) as pool:
        results = list(pool.map(lambda csr: server.client.identity(cid, token, csr_pem=csr), bodies))
    assert sorted(r[0] for r in results) == [202, 403, 403, 403]
    assert len(provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]) == 1


def test_wrong_empty_and_malformed(provider, server, auth_env):
    cid = new_cluster_id(auth_env)
    token = server.token()
    wrong = secrets.token_hex(64)
    status, answer, _, auth_status = server.client.identity(cid, wrong)
    assert (status, answer["reason"], auth_status) == (401, "TokenMismatch", "Denied")
    status, answer, _, auth_status = server.client.identity(cid, "")
    assert (status, answer["reason"], auth_status) == (401, "EmptyToken", "EmptyDenied")
    # the provider's token in the consumer's own field (the wiring before issue 45) is no token
    status, answer, _, auth_status = server.client.identity(cid, "", own_token=token)
    assert (status, answer["reason"]) == (401, "EmptyToken")
    status, answer, _, _ = server.client.identity(cid, token, raw_body=b'{"cluster": {"clusterID": ')
    assert (status, answer["reason"]) == (400, "MalformedRequest")
    # nothing was written for a refused request, and no token reached the log
    assert not provider.exists("namespace", f"liqo-tenant-{cid}")
    log = server.process.log_path.read_text()
    assert wrong not in log and token not in log
    refused = [x for x in server.log_lines() if x.get("msg") == "auth request" and x.get("cluster_id") == cid]
    assert [x["status"] for x in refused] == [401, 401, 401]    # the malformed one had no cluster id to name


# openssl genpkey options per consumer key: the --key-type values and two weak keys
KEY_OPTIONS = {"rsa2048": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"),
               "ecdsa-p256": ("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
               "rsa1024": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"),
               "secp256k1": ("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1")}


def key_and_csr(work_dir, cluster_id, kind):
    key = work_dir / f"{cluster_id}.key"
    openssl("genpkey", *KEY_OPTIONS[kind], "-out", str(key))
    return key, openssl("req", "-new", "-key", str(key), "-subj", f"/O=liqo.io/CN={cluster_id}")


def test_rsa_and_ecdsa_csrs_get_identities_weak_keys_are_refused(provider, server, auth_env, tmp_path):
    """Issue 45 item 4: the CSR of an RSA-2048 or P-256 consumer key (tenantgate-signer
    --key-type, Liqo's --tls-compatibility-mode) gets an identity that works; a consumer holding
    the good token and sending an RSA-1024 or secp256k1 CSR is refused (WeakKey), nothing made."""
    token = server.token()
    for kind in ("rsa2048", "ecdsa-p256"):
        cid = new_cluster_id(auth_env)
        key, csr = key_and_csr(server.client.work_dir, cid, kind)
        status, answer, _, _ = server.client.identity(cid, token, csr_pem=csr)
        assert status == 202, (kind, answer)
        cert = tmp_path / f"{kind}.crt"
        cert.write_bytes(base64.b64decode(answer["certificate"]))
        kc = provider.cert_kubeconfig(cid, cert, key, path=tmp_path / f"{kind}.kubeconfig")
        who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
        assert who["status"]["userInfo"]["username"] == cid, kind
    for kind in ("rsa1024", "secp256k1"):
        cid = new_cluster_id(auth_env)
        _, csr = key_and_csr(server.client.work_dir, cid, kind)
        status, answer, _, _ = server.client.identity(cid, token, csr_pem=csr)
        assert (status, answer["reason"]) == (400, "WeakKey"), (kind, answer)
        assert not provider.exists("namespace", f"liqo-tenant-{cid}")
        assert not provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]


def test_authentication_off_accepts_an_empty_token(provider, auth_env):
    s = AuthServer(provider, auth_env["binary"], auth_env["ns"], auth_env["work"], "--authentication", "off")
    auth_env["servers"].append(s)
    cid = new_cluster_id(auth_env)
    status, answer, _, auth_status = s.client.identity(cid, "")
    assert status == 202 and auth_status == "Established", answer
    assert any(x.get("msg", "").startswith("authentication is disabled") for x in s.log_lines())
    s.stop()


def may(provider, ns, verb, resource, name="", namespace="", subresource=""):
    """Whether the auth server's ServiceAccount may: a SubjectAccessReview (what
    `kubectl auth can-i --as` asks, with the subresources and signer names it cannot spell).
    resource is "group/resource" or a core "resource"."""
    group, _, res = resource.rpartition("/")
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": f"system:serviceaccount:{ns}:{SA}",
                       "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}",
                                  "system:authenticated"],
                       "resourceAttributes": {"verb": verb, "group": group, "resource": res, "name": name,
                                              "namespace": namespace, "subresource": subresource}}}
    out = provider.kubectl("create", "--validate=false", "-f", "-", "-o", "json", input=review)
    return json.loads(out.stdout)["status"].get("allowed", False)


RBAC = "rbac.authorization.k8s.io/"
CERTS = "certificates.k8s.io/"


def test_the_auth_server_identity_can_do_no_more(provider, auth_env):
    ns, t, tokens = auth_env["ns"], "liqo-tenant-x", token_ns_of(auth_env["ns"])
    allowed = [
        dict(verb="get", resource="secrets", name="auth-token", namespace=tokens),
        dict(verb="create", resource="secrets", namespace=tokens),
        dict(verb="create", resource="namespaces"),
        dict(verb="create", resource=RBAC + "rolebindings", namespace=t),
        dict(verb="delete", resource=RBAC + "rolebindings", name="tenantgate-auth-identity", namespace=t),
        dict(verb="bind", resource=RBAC + "clusterroles", name=CONSUMER_ROLE),
        dict(verb="create", resource=CERTS + "certificatesigningrequests"),
        dict(verb="get", resource=CERTS + "certificatesigningrequests", name="tenantgate-auth-x-abcde"),
        dict(verb="update", resource=CERTS + "certificatesigningrequests", subresource="approval", name="x"),
        dict(verb="approve", resource=CERTS + "signers", name="kubernetes.io/kube-apiserver-client"),
        dict(verb="create", resource="secrets", namespace=auth_env["tokens_ns"]),
        dict(verb="patch", resource="secrets", name="remote-token-x", namespace=auth_env["tokens_ns"]),
        # one owner per name: the reads before anything is written, and the claim
        dict(verb="get", resource="namespaces", name=t),
        dict(verb="list", resource=RBAC + "rolebindings"),
        dict(verb="list", resource=RBAC + "clusterrolebindings"),
        dict(verb="list", resource="authentication.liqo.io/tenants"),
        dict(verb="list", resource="authentication.liqo.io/resourceslices"),
        dict(verb="create", resource="tenantgate.io/nameclaims"),
        dict(verb="get", resource="tenantgate.io/nameclaims", name="n-x"),
    ]
    denied = [
        dict(verb="get", resource="secrets", name="other", namespace=tokens),
        # issue 44 finding 7: no Secret made where a ServiceAccount worth minting lives
        dict(verb="create", resource="secrets", namespace=ns),
        dict(verb="get", resource="secrets", name="auth-token", namespace=ns),
        dict(verb="list", resource="secrets", namespace=ns),
        dict(verb="get", resource="secrets", name="auth-token", namespace="kube-system"),
        dict(verb="create", resource="secrets", namespace="default"),
        dict(verb="delete", resource="namespaces", name=t), dict(verb="list", resource="namespaces"),
        dict(verb="update", resource="tenantgate.io/nameclaims", name="n-x"),
        dict(verb="delete", resource="tenantgate.io/nameclaims", name="n-x"),
        dict(verb="get", resource=RBAC + "rolebindings", name="x", namespace=t),
        dict(verb="delete", resource=RBAC + "rolebindings", name="other", namespace=t),
        dict(verb="update", resource=RBAC + "rolebindings", name="tenantgate-auth-identity", namespace=t),
        dict(verb="create", resource=RBAC + "clusterrolebindings"),
        dict(verb="create", resource=RBAC + "roles", namespace=t),
        dict(verb="bind", resource=RBAC + "clusterroles", name="cluster-admin"),
        dict(verb="escalate", resource=RBAC + "clusterroles", name=CONSUMER_ROLE),
        dict(verb="list", resource=CERTS + "certificatesigningrequests"),
        dict(verb="delete", resource=CERTS + "certificatesigningrequests", name="x"),
        dict(verb="update", resource=CERTS + "certificatesigningrequests", subresource="status", name="x"),
        dict(verb="approve", resource=CERTS + "signers", name="kubernetes.io/kubelet-serving"),
        dict(verb="approve", resource=CERTS + "signers", name="tenantgate.io/identity"),
        dict(verb="sign", resource=CERTS + "signers", name="kubernetes.io/kube-apiserver-client"),
        dict(verb="create", resource="pods", namespace=ns),
        dict(verb="create", resource="serviceaccounts", subresource="token", name="x", namespace=ns),
        dict(verb="impersonate", resource="users", name="admin"),
    ]
    assert [a for a in allowed if not may(provider, ns, **a)] == []
    assert [d for d in denied if may(provider, ns, **d)] == []
    # and the escalation check holds: no binding to cluster-admin through its `create rolebindings`
    user = f"system:serviceaccount:{ns}:{SA}"
    out = provider.kubectl("create", "rolebinding", "x", "--clusterrole=cluster-admin", "--user=y", "-n", ns,
                           "--dry-run=server", "--as", user, check=False)
    assert out.returncode != 0 and "forbidden" in out.stderr
