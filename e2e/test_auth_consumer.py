"""The consumer side of Liqo's first token flow (docs/auth.md "Consumer side") on two clusters:
tenantgate-auth runs on the provider (test_auth_server.py's fixtures), tenantgate-signer with
the `authtoken` controller on the consumer, as a host process with its own ServiceAccount's
token and only the RBAC of manifests/signer. A Secret in `liqo` labelled
discovery.liqo.io/auth-token and discovery.liqo.io/cluster-id=<provider> starts the procedure;
the status is read from that Secret's annotations, the identity from remote-identity-<provider>.
Each test runs its own signer with a fresh cluster id (the provider issues one identity per id)."""

import base64
import json
import time
import uuid
from pathlib import Path

import pytest

from bed import free_port, openssl, wait_for
from test_auth_server import AuthServer, auth_env, server  # noqa: F401  (fixtures)
from test_signer import Signer
from tenantgate_services import http_get

NS = "liqo"
SA = "tenantgate-signer"
STATUS = "tenantgate.io/auth-status"
REASON = "tenantgate.io/auth-reason"


@pytest.fixture(scope="module")
def consumer_rbac(consumer, source_dir):
    d = Path(source_dir) / "manifests" / "signer"
    consumer.create_namespace(NS)
    for f in ("serviceaccount.yaml", "rbac.yaml"):
        consumer.kubectl("apply", "-f", d / f)
    yield
    consumer.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-signer", "--ignore-not-found",
                     check=False)
    consumer.kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true", "--timeout=120s",
                     check=False, timeout=150)


def clean_secrets(consumer):
    consumer.kubectl("delete", "secret", "-n", NS, "-l", "discovery.liqo.io/auth-token", "--ignore-not-found")
    consumer.kubectl("delete", "secret", "-n", NS, "-l", "tenantgate.io/auth-identity", "--ignore-not-found")


@pytest.fixture
def signer(consumer, consumer_rbac, signer_bin, auth_env, tmp_path):
    """The consumer's signer, authtoken controller only, with a fresh UUID cluster id (.cid)."""
    clean_secrets(consumer)
    cid = str(uuid.uuid4())
    auth_env["clusters"].append(cid)
    kc = consumer.serviceaccount_kubeconfig(NS, SA, duration="2h")
    s = Signer(signer_bin, consumer, kc, tmp_path, "signer-authtoken", "--cluster-id", cid,
               "--controllers", "authtoken", "--token-namespace", NS).start()
    s.cid = cid
    yield s
    s.stop()
    for log in s.log_dir.glob("signer-authtoken-*.log"):
        assert "PRIVATE KEY" not in log.read_text(errors="replace"), f"the key in {log}"
    clean_secrets(consumer)


def token_secret(consumer, auth, token, name="remote-token-p", ca=True, url=None, revocable=False):
    data = {} if token is None else {"token": base64.b64encode(token.encode()).decode()}
    ann = {"tenantgate.io/auth-url": url or auth.client.url}
    if revocable:
        ann["tenantgate.io/revocable"] = "true"
    if ca:
        ann["tenantgate.io/auth-ca"] = Path(auth.serving["ca"]).read_text()
    consumer.apply({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": name, "namespace": NS, "annotations": ann,
                                 "labels": {"discovery.liqo.io/auth-token": "true",
                                            "discovery.liqo.io/cluster-id": auth.cluster_id}},
                    "data": data})


def status_of(consumer, name="remote-token-p"):
    s = consumer.get_json("secret", name, "-n", NS)
    ann = s["metadata"].get("annotations") or {}
    return ann.get(STATUS), ann.get(REASON, "")


def wait_status(consumer, signer, want, timeout=60, name="remote-token-p"):
    def reached():
        st, reason = status_of(consumer, name)
        return (st, reason) if st == want else None
    try:
        return wait_for(reached, timeout=timeout, interval=0.25, what=f"auth status {want}")
    except TimeoutError:
        raise AssertionError(f"status {status_of(consumer, name)}; signer log:\n{signer.log()[-3000:]}")


def csrs_for(provider, cid):
    return provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]


def result_data(consumer, auth):
    s = consumer.get_json("secret", f"remote-identity-{auth.cluster_id}", "-n", NS)
    return {k: base64.b64decode(v) for k, v in s["data"].items()}


@pytest.fixture
def own_token(consumer, consumer_rbac):
    """The consumer's own token: auth-token in the signer's --token-namespace (NS here), where this
    cluster's tenantgate-auth keeps it."""
    token = uuid.uuid4().hex * 4
    consumer.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "auth-token", "namespace": NS},
                    "data": {"token": base64.b64encode(token.encode()).decode()}})
    yield token
    consumer.kubectl("delete", "secret", "auth-token", "-n", NS, "--ignore-not-found")


def test_good_token_establishes_an_identity_that_works(provider, consumer, server, signer, own_token, auth_env,
                                                       tmp_path):
    token_secret(consumer, server, server.token())
    _, reason = wait_status(consumer, signer, "Established")
    # Liqo v0.10.3's fields: the provider's token checked as destinationClusterToken, ours sent as
    # originClusterToken and kept by the provider in its token namespace
    kept = wait_for(lambda: provider.exists("secret", f"remote-token-{signer.cid}", "-n", auth_env["tokens_ns"]) and
                    provider.get_json("secret", f"remote-token-{signer.cid}", "-n", auth_env["tokens_ns"]),
                    timeout=15, what="our token kept by the provider")
    assert base64.b64decode(kept["data"]["token"]).decode() == own_token
    assert f"remote-identity-{server.cluster_id}" in reason
    data = result_data(consumer, server)
    assert set(data) >= {"private.key", "certificate", "apiServerUrl", "apiServerCa", "namespace", "kubeconfig"}
    assert data["apiServerUrl"].decode() == provider.server
    assert data["namespace"].decode() == f"liqo-tenant-{signer.cid}"
    assert b"BEGIN PRIVATE KEY" in data["private.key"]
    key = tmp_path / "k.pem"
    key.write_bytes(data["private.key"])
    assert "ED25519" in openssl("pkey", "-in", str(key), "-noout", "-text").decode().upper()
    # the kubeconfig in the result Secret works on the provider, as our cluster id
    kc = tmp_path / "identity.kubeconfig"
    kc.write_bytes(data["kubeconfig"])
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
    assert who["status"]["userInfo"]["username"] == signer.cid
    assert "liqo.io" in who["status"]["userInfo"]["groups"]
    # a restart resumes from the Secrets: no second key, no second request
    signer.stop()
    signer.start()
    wait_for(lambda: http_get(signer.metrics_port, "/readyz")[0] == 200, timeout=30, what="signer ready")
    time.sleep(2)    # its informers' first events reconciled
    assert status_of(consumer)[0] == "Established"
    assert result_data(consumer, server)["private.key"] == data["private.key"]
    assert len(csrs_for(provider, signer.cid)) == 1
    for log in signer.log_dir.glob("signer-authtoken-*.log"):     # both starts
        text = log.read_text(errors="replace")
        assert server.token() not in text and "PRIVATE KEY" not in text, log


def test_revocable_identity_is_revoked_at_once(provider, consumer, server, signer, auth_env, cli, tmp_path):
    """Issue 48 item 1 with the signer's own CSR: tenantgate.io/revocable on the token Secret gives
    a certificate carrying a group of our id, bound by the provider instead of the user; `revoke`
    of the result kubeconfig ends its rights at once (the request AS it is forbidden)."""
    token_secret(consumer, server, server.token(), revocable=True)
    wait_status(consumer, signer, "Established")
    kc = tmp_path / "identity.kubeconfig"
    kc.write_bytes(result_data(consumer, server)["kubeconfig"])
    subject = openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253",
                      input=result_data(consumer, server)["certificate"]).decode()
    assert f"O=tenantgate.io/cert:{signer.cid}:" in subject, subject
    get = ("get", "resourceslices.authentication.liqo.io", "-n", f"liqo-tenant-{signer.cid}")
    assert provider.kubectl(*get, kubeconfig=kc, check=False).returncode == 0
    rc, out, err = cli("revoke", "--certificate", kc, "--kubeconfig", provider.kubeconfig,
                       "--namespace", auth_env["ns"])
    assert rc == 0, out + err
    r = wait_for(lambda: (lambda r: r if r.returncode != 0 else None)(provider.kubectl(*get, kubeconfig=kc,
                                                                                       check=False)),
                 timeout=10, interval=0.1, what="the revoked certificate refused")
    assert "forbidden" in r.stderr.lower(), r


def test_wrong_token_is_denied(consumer, server, signer):
    token_secret(consumer, server, "0" * 128)
    _, reason = wait_status(consumer, signer, "Denied")
    assert "401" in reason and "0" * 128 not in reason and "0" * 128 not in signer.log()
    assert "certificate" not in result_data(consumer, server)


def test_empty_token_is_empty_denied(consumer, server, signer):
    token_secret(consumer, server, "")
    wait_status(consumer, signer, "EmptyDenied")


def test_no_ca_sends_nothing(provider, consumer, server, signer):
    token_secret(consumer, server, server.token(), ca=False)
    _, reason = wait_status(consumer, signer, "None")
    assert reason.startswith("AuthCAUnknown")
    assert csrs_for(provider, signer.cid) == []


def test_authentication_off_establishes_with_an_empty_token(provider, consumer, auth_env, signer):
    off = AuthServer(provider, auth_env["binary"], auth_env["ns"], auth_env["work"], "--authentication", "off")
    auth_env["servers"].append(off)
    token_secret(consumer, off, "")
    wait_status(consumer, signer, "Established")
    assert b"BEGIN CERTIFICATE" in result_data(consumer, off)["certificate"]
    off.stop()


def test_deleting_and_recreating_the_token_secret(provider, consumer, server, signer):
    token_secret(consumer, server, server.token())
    wait_status(consumer, signer, "Established")
    first = result_data(consumer, server)
    consumer.kubectl("delete", "secret", "remote-token-p", "-n", NS)
    token_secret(consumer, server, server.token())
    wait_status(consumer, signer, "Established")
    # the identity is kept (the provider issues it once): same key and certificate, one CSR
    again = result_data(consumer, server)
    assert again["certificate"] == first["certificate"] and again["private.key"] == first["private.key"]
    assert len(csrs_for(provider, signer.cid)) == 1


def test_a_pending_procedure_resumes_with_its_key_after_a_restart(provider, consumer, server, signer):
    """Nobody listens at the URL: Pending, the key already in the result Secret. The signer
    stops, the URL is fixed while it is down, and the restarted signer finishes with that key."""
    token_secret(consumer, server, server.token(), url=f"https://127.0.0.1:{free_port()}")
    _, reason = wait_status(consumer, signer, "Pending")
    wait_for(lambda: status_of(consumer)[1].startswith("AuthServerUnreachable"), timeout=30,
             what="AuthServerUnreachable")
    pending_key = result_data(consumer, server)["private.key"]
    assert set(result_data(consumer, server)) == {"private.key"}
    signer.stop()
    token_secret(consumer, server, server.token())
    signer.start()
    wait_status(consumer, signer, "Established")
    assert result_data(consumer, server)["private.key"] == pending_key
    assert len(csrs_for(provider, signer.cid)) == 1
