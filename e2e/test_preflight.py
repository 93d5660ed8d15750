"""`kubectl tenantgate preflight` against the two real clusters (docs/cli.md, "Preflight before
peering").

A healthy pair (the admin kubeconfigs) is ready: each check PASS, Liqo's version SKIP (the bed has
no Liqo), the provider's API server takes a client certificate of each key type (handshake done,
its unknown CA answered 401), and kube-controller-manager's kubernetes.io/kube-apiserver-client
signer signs a throwaway CSR, which is deleted again.  A provider kubeconfig of a ServiceAccount
with no rights is not ready: the rights FAIL, naming what `authenticate` needs, and the CSR round
trip it may not make is SKIP, never PASS.  With the one-string token line of a running
tenantgate-auth, what needs the provider's API server is SKIP, the rest is checked, and the token
is not spent."""

import re
import shlex
import uuid
from pathlib import Path

import pytest

from test_auth_server import CONSUMER_ROLE, AuthServer, rbac_in
from test_auth_v1 import rbac_v1_in

EXIT_NOT_READY = 1


@pytest.fixture
def ids():
    tag = uuid.uuid4().hex[:6]
    return f"pf-consumer-{tag}", f"pf-provider-{tag}"


def preflight(cli, consumer, provider_kc, ids, *extra):
    cid, pid = ids
    rc, out, err = cli("preflight", "--kubeconfig", str(consumer.kubeconfig), "--provider-kubeconfig",
                       str(provider_kc), "--cluster-id", cid, "--remote-cluster-id", pid, *extra)
    lines = out.splitlines()
    checks = {}
    for line in lines[:-1]:
        m = re.fullmatch(r"(PASS|WARN|FAIL|SKIP) ([a-z-]+): (.*)", line)
        assert m, f"not a check line: {line!r}\n{out}"
        checks[m.group(2)] = (m.group(1), m.group(3))
    return rc, checks, lines[-1] if lines else "", out + err


def preflight_csrs(provider):
    return provider.get_json("csr", "-l", "tenantgate.io/preflight=true")["items"]


@pytest.mark.parametrize("key_type", ["ed25519", "ecdsa-p256", "rsa2048"])
def test_healthy_pair_is_ready(cli, provider, consumer, crds, ids, key_type):
    rc, checks, last, text = preflight(cli, consumer, provider.kubeconfig, ids, "--key-type", key_type)
    assert rc == 0, text
    assert last == "verdict: ready", text
    for name in ("api-consumer", "api-provider", "key-type", "clock-skew", "csr-signer", "crds-consumer",
                 "crds-provider", "crd-versions", "rights-consumer", "rights-provider"):
        assert checks[name][0] == "PASS", text
    assert f"took an {key_type} client certificate" in checks["key-type"][1]
    assert "unknown CA answered 401" in checks["key-type"][1]
    assert f"{key_type} key" in checks["csr-signer"][1]
    assert checks["crd-versions"][1] == "both serve authentication.liqo.io/v1beta1"
    assert checks["clock-skew"][1].startswith("provider +0s against the consumer")
    assert f"tenant namespace liqo-tenant-{ids[0]}" in checks["rights-provider"][1]
    # no Liqo on the bed: said, and not passed
    assert checks["liqo-version"] == ("SKIP", "nothing to compare (deployment liqo/liqo-controller-manager: "
                                      "consumer no Liqo, provider no Liqo)"), text
    assert preflight_csrs(provider) == [], "the throwaway CSR was left behind"


@pytest.fixture
def rightless_provider_kubeconfig(provider, namespace):
    """A ServiceAccount of the provider with no binding: it authenticates, and may do only what
    every authenticated user may (discovery, self reviews)."""
    ns = namespace(provider, "pf")
    return provider.serviceaccount_kubeconfig(ns, "peer"), ns


def test_provider_kubeconfig_with_too_few_rights_is_not_ready(cli, provider, consumer, crds, ids,
                                                               rightless_provider_kubeconfig):
    kc, ns = rightless_provider_kubeconfig
    rc, checks, last, text = preflight(cli, consumer, kc, ids)
    assert rc == EXIT_NOT_READY, text
    assert last == "verdict: not ready (1 failed)", text
    result, detail = checks["rights-provider"]
    assert result == "FAIL", text
    assert detail.startswith("authenticate needs: list namespaces, create namespaces, create secrets in "
                             f"liqo-tenant-{ids[0]}"), text
    assert "patch tenants.authentication.liqo.io" in detail
    # the CSR round trip it may not make is SKIP, not PASS
    result, detail = checks["csr-signer"]
    assert result == "SKIP", text
    assert "may not create certificatesigningrequests.certificates.k8s.io" in detail
    # what it can see is still checked
    assert checks["key-type"][0] == "PASS" and checks["crd-versions"][0] == "PASS", text
    assert checks["rights-consumer"][0] == "PASS", text
    assert preflight_csrs(provider) == []


@pytest.fixture(scope="module")
def auth_server(provider, crds, source_dir, build_dir, tmp_path_factory):
    """tenantgate-auth as test_auth_v1.py runs it (its RBAC in a namespace of this module)."""
    ns = "pf-auth-" + uuid.uuid4().hex[:8]
    provider.create_namespace(ns)
    made_role = not provider.exists("clusterrole", CONSUMER_ROLE)
    if made_role:
        provider.apply((Path(source_dir) / "manifests" / "signer" / "remote-consumer-clusterrole.yaml").read_text())
    provider.apply(rbac_in(source_dir, ns))
    server = AuthServer(provider, str(build_dir / "auth" / "tenantgate-auth"), ns,
                        tmp_path_factory.mktemp("pfauth"))
    provider.apply(rbac_v1_in(source_dir, ns, server.tokens_ns))
    server.url = f"https://127.0.0.1:{server.port}"
    yield server
    server.stop()
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "tenantgate-auth-v1",
                     "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrolebinding", "tenantgate-auth-tenant-namespace-labeler",
                     "--ignore-not-found", check=False)
    if made_role:
        provider.kubectl("delete", "clusterrole", CONSUMER_ROLE, "--ignore-not-found", check=False)
    provider.delete_namespace(server.tokens_ns)
    provider.delete_namespace(ns)


def test_token_line_checks_what_it_can_and_skips_the_rest(cli, provider, consumer, crds, auth_server):
    rc, out, err = cli("create", "token", "-n", auth_server.tokens_ns, "--auth-url", auth_server.url,
                       "--single-use", "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    line = out.strip()
    token_id = shlex.split(line)[shlex.split(line).index("--token") + 1].split(".")[0]
    secret = f"tenantgate-token-{token_id}"
    before = provider.get_json("secret", secret, "-n", auth_server.tokens_ns)["metadata"]["resourceVersion"]
    rc, out, err = cli("preflight", "--kubeconfig", str(consumer.kubeconfig), "--token-line", line,
                       "--cluster-id", "pf-consumer-line")
    text = out + err
    lines = out.splitlines()
    checks = {m.group(2): (m.group(1), m.group(3)) for m in
              (re.fullmatch(r"(PASS|WARN|FAIL|SKIP) ([a-z-]+): (.*)", x) for x in lines[:-1])}
    assert rc == 0 and lines[-1] == "verdict: ready", text
    assert checks["auth-server"] == ("PASS", f"{auth_server.url} presents the pinned CA and answers "
                                             f"(provider {auth_server.cluster_id})"), text
    for name in ("api-consumer", "clock-skew", "crds-consumer", "rights-consumer"):
        assert checks[name][0] == "PASS", text
    assert "auth server +0s" in checks["clock-skew"][1]
    assert f"liqo-tenant-{auth_server.cluster_id}" in checks["rights-consumer"][1]
    for name in ("key-type", "csr-signer", "crds-provider", "crd-versions", "liqo-version", "rights-provider"):
        assert checks[name][0] == "SKIP", text
    assert "api-provider" not in checks
    # the token was only shown, not spent
    after = provider.get_json("secret", secret, "-n", auth_server.tokens_ns)["metadata"]["resourceVersion"]
    assert after == before
    # a line whose pin is not the server's: FAIL, and nothing after it is trusted
    bad = re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, line)
    rc, out, err = cli("preflight", "--kubeconfig", str(consumer.kubeconfig), "--token-line", bad)
    assert rc == EXIT_NOT_READY and out.splitlines()[-1] == "verdict: not ready (1 failed)", out + err
    assert "FAIL auth-server: " in out


def liqo_deployment(cluster, ns, tag):
    """What liqo-version reads: the controller-manager's image (no node runs it here)."""
    cluster.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "liqo-controller-manager", "namespace": ns},
                   "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "pf"}},
                            "template": {"metadata": {"labels": {"app": "pf"}},
                                         "spec": {"containers": [{
                                             "name": "controller-manager",
                                             "image": f"ghcr.io/liqotech/liqo-controller-manager:{tag}"}]}}}})


def test_liqo_versions_are_compared(cli, provider, consumer, crds, ids):
    """In namespaces of this test given as Liqo's (-n): equal tags PASS, different ones WARN."""
    ns = f"pf-liqo-{uuid.uuid4().hex[:6]}"
    provider.create_namespace(ns)
    consumer.create_namespace(ns)
    try:
        liqo_deployment(provider, ns, "v1.2.0")
        liqo_deployment(consumer, ns, "v1.2.0")
        rc, checks, last, text = preflight(cli, consumer, provider.kubeconfig, ids, "-n", ns)
        assert rc == 0 and checks["liqo-version"] == ("PASS", "Liqo v1.2.0 on both sides"), text
        liqo_deployment(consumer, ns, "v1.0.1")
        rc, checks, last, text = preflight(cli, consumer, provider.kubeconfig, ids, "-n", ns)
        assert rc == 0 and checks["liqo-version"][0] == "WARN", text
        assert checks["liqo-version"][1].startswith("consumer v1.0.1, provider v1.2.0"), text
    finally:
        provider.delete_namespace(ns)
        consumer.delete_namespace(ns)
