"""kubectl-tenantgate's online commands on the two real clusters (PROTOCOL.md 8, seeds/003).

The manual four-step flow (create nonce, generate tenant, apply + generate identity, apply) and
the one-shot `authenticate` both end with a consumer kubeconfig that really works against the
provider; `unauthenticate` takes that access away and a second `authenticate` restores it.
The error paths (unreachable cluster, missing CRDs, no nonce, RBAC forbidden, timeout) are
provoked and their messages and exit codes checked.

The flows need tenantgate-signer on both clusters: the signer fixtures of test_signer.py are
reused.  Those tests skip (with the reason) only when the signer binary is not built."""

import base64
import contextlib
import http.server
import json
import re
import ssl
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import consumer_signer, installed, provider_signer  # noqa: F401
from bed import RUN_TAG, Cluster, cluster_tool, free_port, openssl, wait_for

EXIT_REJECTED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_TIMEOUT = 1, 2, 3, 4

SEED_AUTHENTICATE_LINES = [
    " INFO   (local) Tenant namespace correctly ensured",
    " INFO   (remote) Tenant namespace correctly ensured",
    " INFO   (remote) Nonce secret ensured",
    " INFO   (remote) Nonce generated successfully",
    " INFO   (remote) Nonce retrieved",
    " INFO   (local) Signed nonce secret ensured",
    " INFO   (local) Nonce is signed",
    " INFO   (local) Signed nonce retrieved",
    " INFO   (local) Tenant correctly generated",
    " INFO   (remote) Tenant correctly applied on provider cluster",
    " INFO   (remote) Tenant status is filled",
    " INFO   (remote) Identity correctly generated",
    " INFO   (local) Identity correctly applied on consumer cluster",
    " INFO   (local) Identity status is filled",
]


@pytest.fixture(scope="module")
def signer_bin(build_dir):
    """Overrides test_signer's: skip (never fail) when the signer is not built."""
    path = build_dir / "signer" / "tenantgate-signer"
    if not path.exists():
        pytest.skip(f"tenantgate-signer not built at {path}: the online flows need it")
    return path


@pytest.fixture
def ids():
    """Fresh cluster ids per test: tenant namespaces are never shared between tests."""
    tag = uuid.uuid4().hex[:6]
    return f"c-{tag}", f"p-{tag}"


@pytest.fixture
def cleanup(provider, consumer, ids):
    cid, pid = ids
    yield
    provider.kubectl("delete", "resourceslices.authentication.liqo.io", "--all", "-n",
                     f"liqo-tenant-{cid}", "--ignore-not-found", check=False)
    provider.kubectl("delete", "tenant", "--all", "-n", f"liqo-tenant-{cid}", "--wait=false",
                     "--ignore-not-found", check=False)
    provider.kubectl("delete", "namespace", f"liqo-tenant-{cid}", "--wait=false",
                     "--ignore-not-found", check=False)
    consumer.kubectl("delete", "namespace", f"liqo-tenant-{pid}", "--wait=false",
                     "--ignore-not-found", check=False)


def consumer_kubeconfig(consumer, pid, tmp_path, name="remote.kubeconfig"):
    ns = f"liqo-tenant-{pid}"
    ref = wait_for(lambda: ((consumer.get_json("identity", f"controlplane-{pid}", "-n", ns)
                             .get("status") or {}).get("kubeconfigSecretRef") or {}).get("name"),
                   timeout=30, what="Identity status.kubeconfigSecretRef")
    data = consumer.get_json("secret", ref, "-n", ns)["data"]["kubeconfig"]
    path = tmp_path / name
    path.write_bytes(base64.b64decode(data))
    return path


def cluster_public_key(cluster, namespace="liqo"):
    """(raw 32 bytes, PEM text) of the cluster key in Secret authentication-keys."""
    pem = base64.b64decode(cluster.get_json("secret", "authentication-keys", "-n", namespace)
                           ["data"]["publicKey"]).decode()
    der = base64.b64decode("".join(pem.strip().splitlines()[1:-1]))
    return der[-32:], pem


def resourceslice(name, ns):
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": name, "namespace": ns}, "spec": {"class": "default"}}


def assert_access(provider, kc, cid):
    """The consumer's kubeconfig really works: it may manage ResourceSlices in its namespace."""
    ns = f"liqo-tenant-{cid}"
    r = provider.kubectl("get", "resourceslices.authentication.liqo.io", "-n", ns, kubeconfig=kc,
                         check=False)
    assert r.returncode == 0, r.stderr


# --- the flows ---------------------------------------------------------------------------

def test_manual_four_step_flow(cli, provider, consumer, provider_signer, consumer_signer, ids,
                               cleanup, tmp_path):
    cid, pid = ids
    # 1. provider: nonce
    rc, nonce, err = cli("create", "nonce", "--remote-cluster-id", cid,
                         "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    nonce = nonce.strip()
    assert len(nonce) == 88 and base64.b64decode(nonce, validate=True)
    assert err.splitlines() == [" INFO  Nonce created", " INFO  Nonce generated successfully",
                                " INFO  Nonce retrieved"]
    assert nonce not in err
    ns = provider.get_json("namespace", f"liqo-tenant-{cid}")
    assert ns["metadata"]["labels"]["liqo.io/tenant-namespace"] == "true"
    assert ns["metadata"]["labels"]["liqo.io/remote-cluster-id"] == cid
    sec = provider.get_json("secret", "liqo-nonce", "-n", f"liqo-tenant-{cid}")
    assert sec["metadata"]["labels"] == {"liqo.io/nonce": "true", "liqo.io/remote-cluster-id": cid}
    rc, again, err = cli("get", "nonce", "--remote-cluster-id", cid, "--kubeconfig",
                         provider.kubeconfig)
    assert rc == 0, err
    assert again == nonce + "\n"

    # 2. consumer: Tenant (nonce from a file, as the seed's summary does)
    nonce_file = tmp_path / "nonce.txt"
    nonce_file.write_text(again)
    rc, tenant_yaml, err = cli("generate", "tenant", "--remote-cluster-id", pid, "--cluster-id",
                               cid, "--nonce-file", nonce_file, "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, err
    tenant = yaml.safe_load(tenant_yaml)
    assert tenant["kind"] == "Tenant" and tenant["metadata"]["name"] == cid
    assert tenant["spec"]["clusterID"] == cid
    signed = consumer.get_json("secret", "liqo-signed-nonce", "-n", f"liqo-tenant-{pid}")
    assert signed["metadata"]["labels"] == {"liqo.io/signed-nonce": "true",
                                            "liqo.io/remote-cluster-id": pid}
    assert base64.b64decode(signed["data"]["nonce"]).decode() == nonce
    assert tenant["spec"]["signature"] == signed["data"]["signedNonce"]
    assert "PRIVATE KEY" not in tenant_yaml + err
    # Ed25519 keys go out raw by default (what Liqo 1.0.0/1.0.1 providers read)
    raw, pem = cluster_public_key(consumer)
    assert base64.b64decode(tenant["spec"]["publicKey"]) == raw

    # 3. provider: apply (through the webhook) and generate the Identity
    (tmp_path / "tenant.yaml").write_text(tenant_yaml)
    provider.kubectl("apply", "-f", tmp_path / "tenant.yaml")
    assert provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")["spec"]["publicKey"] == \
        tenant["spec"]["publicKey"]
    rc, identity_yaml, err = cli("generate", "identity", "--remote-cluster-id", cid,
                                 "--cluster-id", pid, "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    identity = yaml.safe_load(identity_yaml)
    assert identity["metadata"]["name"] == f"controlplane-{pid}"
    assert identity["metadata"]["namespace"] == f"liqo-tenant-{pid}"
    assert identity["spec"]["type"] == "ControlPlane" and identity["spec"]["clusterID"] == pid
    assert identity["spec"]["namespace"] == f"liqo-tenant-{cid}"
    assert identity["spec"]["authParams"]["apiServer"] == provider.server
    rc, identity_json, _ = cli("generate", "identity", "--remote-cluster-id", cid, "--cluster-id",
                               pid, "--kubeconfig", provider.kubeconfig, "-o", "json")
    assert rc == 0 and yaml.safe_load(identity_json) == identity

    # 4. consumer: apply the Identity -> a working kubeconfig
    (tmp_path / "identity.yaml").write_text(identity_yaml)
    consumer.kubectl("apply", "-f", tmp_path / "identity.yaml")
    kc = consumer_kubeconfig(consumer, pid, tmp_path)
    assert_access(provider, kc, cid)
    r = provider.kubectl("get", "secrets", "-n", f"liqo-tenant-{cid}", kubeconfig=kc, check=False)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower()


def test_authenticate_unauthenticate_and_again(cli, provider, consumer, provider_signer,
                                               consumer_signer, ids, cleanup, tmp_path):
    cid, pid = ids
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", cid, "--remote-cluster-id", pid)
    rc, out, err = cli("authenticate", *both)
    assert rc == 0, out + err
    assert out.splitlines() == SEED_AUTHENTICATE_LINES
    kc = consumer_kubeconfig(consumer, pid, tmp_path)
    assert_access(provider, kc, cid)
    stored = provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
    assert stored["spec"]["clusterID"] == cid
    raw, pem = cluster_public_key(consumer)
    assert base64.b64decode(stored["spec"]["publicKey"]) == raw       # raw by default

    # refused while a ResourceSlice remains
    pns = f"liqo-tenant-{cid}"
    # The provider's admin writes it: the webhook refuses a consumer's slice that is not a
    # replicated copy (PROTOCOL.md 5a), and any slice left in the namespace counts here.
    provider.apply(resourceslice("rs1", pns))
    rc, out, err = cli("unauthenticate", *both)
    assert rc == EXIT_REJECTED
    assert f"1 ResourceSlice(s) remain in namespace {pns}" in err and "(remote)" in err
    # the printed hint works as printed: kubectl's bare `resourceslices` is resource.k8s.io's
    # (DRA, Kubernetes 1.34+), which would show "No resources found" here
    hint = re.search(r"\(kubectl (get [^)]*)\)", err)
    assert hint, err
    shown = provider.kubectl(*hint.group(1).split())
    assert "rs1" in shown.stdout and "No resources found" not in shown.stdout + shown.stderr, shown
    assert consumer.exists("identity", f"controlplane-{pid}", "-n", f"liqo-tenant-{pid}")
    provider.kubectl("delete", "resourceslices.authentication.liqo.io", "rs1", "-n", pns)

    rc, out, err = cli("unauthenticate", *both, "--wait", "--timeout", "60s")
    assert rc == 0, out + err
    assert out.splitlines() == [" INFO   (local) Identity deleted", " INFO   (remote) Tenant deleted"]
    assert not consumer.exists("identity", f"controlplane-{pid}", "-n", f"liqo-tenant-{pid}")
    assert not provider.exists("tenant", cid, "-n", pns)
    # the consumer's next request is refused
    r = wait_for(lambda: (lambda p: p if p.returncode != 0 else None)(
        provider.kubectl("get", "resourceslices.authentication.liqo.io", "-n", pns,
                         kubeconfig=kc, check=False)), timeout=20, what="access revoked")
    assert "forbidden" in r.stderr.lower()

    # idempotent, then a second authenticate works again (new nonce, new certificate), this
    # time with the key as PEM
    rc, out, err = cli("unauthenticate", *both)
    assert rc == 0 and "Identity already absent" in out and "Tenant already absent" in out, err
    rc, out, err = cli("authenticate", *both, "--public-key-format", "pem")
    assert rc == 0, out + err
    assert out.splitlines() == SEED_AUTHENTICATE_LINES
    stored = provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
    assert base64.b64decode(stored["spec"]["publicKey"]).decode() == pem
    kc2 = consumer_kubeconfig(consumer, pid, tmp_path, "again.kubeconfig")
    assert_access(provider, kc2, cid)
    rc, out, err = cli("unauthenticate", *both, "--wait")
    assert rc == 0, err


# --- revocation at once (docs/revocation.md) -------------------------------------------

CERT_GROUP = re.compile(r"tenantgate\.io/cert:[^,\s/]+:[0-9a-f]{32}")


def cert_group_of(pem):
    subject = openssl("x509", "-noout", "-subject", input=pem).decode()
    found = CERT_GROUP.findall(subject)
    assert len(found) == 1, subject
    return found[0]


def kubeconfig_cert(path):
    user = yaml.safe_load(Path(path).read_text())["users"][0]["user"]
    return base64.b64decode(user["client-certificate-data"])


def with_cert(path, pem, out):
    """The kubeconfig at path with its client certificate replaced (same key)."""
    kc = yaml.safe_load(Path(path).read_text())
    kc["users"][0]["user"]["client-certificate-data"] = base64.b64encode(pem).decode()
    out.write_text(yaml.safe_dump(kc))
    return out


def test_revoke_one_certificate_at_once(cli, provider, consumer, provider_signer, consumer_signer,
                                        ids, cleanup, tmp_path):
    """Issue 48 item 1, ControlPlane: certificate A, then B (a new request: a new group), then
    `revoke` A: A's next request AS A gets 403 through the real API server, B keeps working;
    the revoked group is never signed again (NameRevoked) and another identity's group is
    refused at admission (NameReserved)."""
    cid, pid = ids
    pns = f"liqo-tenant-{cid}"
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", cid, "--remote-cluster-id", pid)
    rc, out, err = cli("authenticate", *both, "--revocable")
    assert rc == 0, out + err
    kc_a = consumer_kubeconfig(consumer, pid, tmp_path, "a.kubeconfig")
    cert_a = kubeconfig_cert(kc_a)
    group_a = cert_group_of(cert_a)
    assert group_a.startswith(f"tenantgate.io/cert:{cid}:")
    assert_access(provider, kc_a, cid)
    # the rights are the group's, not the user name's (a revoked certificate still carries it)
    rb = provider.get_json("rolebinding", "liqo-binding-tenantgate-remote-consumer", "-n", pns)
    assert rb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                               "name": group_a}], rb["subjects"]
    tenant_a = provider.get_json("tenant", cid, "-n", pns)

    # certificate B: the same key, a new request with a new group, issued at once
    rc, out, err = cli("authenticate", *both, "--revocable")
    assert rc == 0, out + err

    def issued_b():
        crt = (provider.get_json("tenant", cid, "-n", pns).get("status", {})
               .get("authParams", {}).get("signedCRT"))
        pem = base64.b64decode(crt) if crt else b""
        return pem if pem and cert_group_of(pem) != group_a else None
    cert_b = wait_for(issued_b, timeout=60, what="certificate B with a new group")
    kc_b = with_cert(kc_a, cert_b, tmp_path / "b.kubeconfig")
    assert_access(provider, kc_b, cid)
    assert_access(provider, kc_a, cid)        # A is still bound: the consumer may be switching

    rc, out, err = cli("revoke", "--certificate", kc_a, "--kubeconfig", provider.kubeconfig)
    assert rc == 0, out + err
    assert f"revoked {group_a} (user {cid})" in out, out
    assert f"removed from RoleBinding {pns}/liqo-binding-tenantgate-remote-consumer" in out, out
    r = provider.kubectl("get", "resourceslices.authentication.liqo.io", "-n", pns, kubeconfig=kc_a,
                         check=False)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower(), r
    assert_access(provider, kc_b, cid)

    # the consumer's key signs a request carrying the revoked group again (as the holder of the
    # leaked credential would ask): its CSR is denied, B keeps working
    key = base64.b64decode(consumer.get_json("secret", "authentication-keys", "-n", "liqo")
                           ["data"]["privateKey"])
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(key)

    def tenant_with_group(group):
        csr = openssl("req", "-new", "-key", str(key_file), "-subj",
                      f"/O={group.replace('/', chr(92) + '/')}/O=liqo.io/CN={cid}")
        t = {k: tenant_a[k] for k in ("apiVersion", "kind", "spec")}
        t["metadata"] = {"name": cid, "namespace": pns}
        t["spec"] = dict(t["spec"], csr=base64.b64encode(csr).decode())
        return t
    provider.apply(tenant_with_group(group_a))

    def denied_revoked():
        for csr in provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]:
            for c in (csr.get("status") or {}).get("conditions") or []:
                if c.get("type") == "Denied" and c.get("reason") == "NameRevoked":
                    return c
        return None
    denied = wait_for(denied_revoked, timeout=60, what="the revoked group's CSR denied NameRevoked")
    assert group_a in denied["message"] and "expected a fresh certificate group" in denied["message"]
    assert_access(provider, kc_b, cid)
    r = provider.kubectl("get", "resourceslices.authentication.liqo.io", "-n", pns, kubeconfig=kc_a,
                         check=False)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower(), r

    # a request carrying another identity's group (nonce signature valid) is refused at apply
    r = provider.apply(tenant_with_group("tenantgate.io/cert:c-other:" + "0" * 32), check=False)
    assert r.returncode != 0 and "NameReserved" in r.stderr, r
    assert "expected a certificate group of " + cid in r.stderr, r

    # a certificate without a group (Liqo's consumers) is refused, saying why
    plain = tmp_path / "plain.pem"
    plain.write_bytes(openssl("req", "-x509", "-key", str(key_file), "-subj", f"/O=liqo.io/CN={cid}",
                              "-days", "1"))
    rc, out, err = cli("revoke", "--certificate", plain, "--kubeconfig", provider.kubeconfig)
    assert rc == EXIT_REJECTED and "carries no per-certificate group" in err, out + err


# What `openssl ... -text` prints for each --key-type's public key (docs/cli.md "Key types")
KEY_TYPE_TEXT = {"rsa2048": "Public-Key: (2048 bit)", "ecdsa-p256": "NIST CURVE: P-256"}


@contextlib.contextmanager
def consumer_key_of_type(consumer, consumer_signer, key_type):
    """The consumer's signer restarted with --key-type and no authentication-keys, so its keys
    controller makes a key of that type; afterwards the bed's own key and signer are back."""
    saved = consumer.get_json("secret", "authentication-keys", "-n", "liqo")
    consumer_signer.stop()
    try:
        consumer.kubectl("delete", "secret", "authentication-keys", "-n", "liqo")
        consumer_signer.start("--key-type", key_type)
        wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", "liqo"), timeout=30,
                 what=f"authentication-keys made with --key-type {key_type}")
        yield
    finally:
        consumer_signer.stop()
        consumer.kubectl("delete", "secret", "authentication-keys", "-n", "liqo",
                         "--ignore-not-found")
        consumer.create({"apiVersion": "v1", "kind": "Secret",
                         "metadata": {"name": "authentication-keys", "namespace": "liqo"},
                         "data": saved["data"]})
        consumer_signer.start()


@pytest.mark.parametrize("key_type", ["rsa2048", "ecdsa-p256"])
def test_authenticate_with_key_type(cli, provider, consumer, provider_signer, consumer_signer, ids,
                                    cleanup, tmp_path, key_type):
    """tenantgate-signer --key-type makes the consumer's cluster key of that type (issue 45 item
    4, for API servers that refuse Ed25519 client certificates); authenticate peers with it, the
    certificate the provider's API server issued is for that key, and the kubeconfig works."""
    cid, pid = ids
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", cid, "--remote-cluster-id", pid)
    with consumer_key_of_type(consumer, consumer_signer, key_type):
        _, pem = cluster_public_key(consumer)
        assert KEY_TYPE_TEXT[key_type] in openssl("pkey", "-pubin", "-noout", "-text",
                                                  input=pem.encode()).decode()
        # asked for another type than the cluster has: refused, naming both, nothing peered
        rc, out, err = cli("authenticate", *both, "--key-type", "ed25519")
        assert rc == EXIT_REJECTED, out + err
        assert f"to be ed25519, found {key_type}" in err
        assert not provider.exists("tenant", cid, "-n", f"liqo-tenant-{cid}")

        rc, out, err = cli("authenticate", *both, "--key-type", key_type)
        assert rc == 0, out + err
        stored = provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
        assert base64.b64decode(stored["spec"]["publicKey"]).decode() == pem   # always PEM
        kc = consumer_kubeconfig(consumer, pid, tmp_path)
        who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
        assert who["status"]["userInfo"]["username"] == cid
        cert = base64.b64decode(yaml.safe_load(kc.read_text())["users"][0]["user"]
                                ["client-certificate-data"])
        text = openssl("x509", "-noout", "-text", input=cert).decode()
        assert KEY_TYPE_TEXT[key_type] in text, text
        assert_access(provider, kc, cid)


CLUSTERID_SELECTOR = "app.kubernetes.io/name=clusterid-configmap"


@pytest.fixture
def recorded_ids(provider, consumer):
    """Removes every clusterid ConfigMap the test recorded in namespace liqo (the bed's other
    tests pass ids as flags and must not find one)."""
    yield
    for c in (provider, consumer):
        c.kubectl("delete", "configmap", "-n", "liqo", "-l", CLUSTERID_SELECTOR,
                  "--ignore-not-found", check=False)


def test_install_and_cluster_id_discovery(cli, provider, consumer, provider_signer,
                                          consumer_signer, ids, cleanup, recorded_ids, tmp_path):
    """`install` records each cluster's id as Liqo does (idempotent, never changing it); then
    authenticate, generate identity and unauthenticate run without any id flag, finding both ids
    in the clusters' clusterid ConfigMaps, and a flag still wins."""
    cid, pid = ids
    rc, out, err = cli("install", "--cluster-id", cid, "--kubeconfig", consumer.kubeconfig)
    assert rc == 0 and out == "", err
    assert err.splitlines() == [" INFO  Cluster id ConfigMap created"]
    cm = consumer.get_json("configmap", "liqo-clusterid-configmap", "-n", "liqo")
    assert cm["data"] == {"CLUSTER_ID": cid}
    assert cm["metadata"]["labels"]["app.kubernetes.io/name"] == "clusterid-configmap"
    rc, out, err = cli("install", "--cluster-id", cid, "--kubeconfig", consumer.kubeconfig)
    assert rc == 0 and err.splitlines() == [" INFO  Cluster id already recorded"], err
    rc, out, err = cli("install", "--cluster-id", "someone-else", "--kubeconfig",
                       consumer.kubeconfig)
    assert rc == EXIT_REJECTED, err
    assert f"this cluster's id is already {cid}" in err and "refusing to change it" in err
    assert consumer.get_json("configmap", "liqo-clusterid-configmap", "-n", "liqo")["data"] == \
        {"CLUSTER_ID": cid}
    rc, out, err = cli("install", "--cluster-id", pid, "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err

    # both ids found in the clusters
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig)
    rc, out, err = cli("authenticate", *both)
    assert rc == 0, out + err
    assert out.splitlines() == SEED_AUTHENTICATE_LINES
    assert provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")["spec"]["clusterID"] == cid
    assert consumer.exists("identity", f"controlplane-{pid}", "-n", f"liqo-tenant-{pid}")
    assert_access(provider, consumer_kubeconfig(consumer, pid, tmp_path), cid)
    rc, out, err = cli("generate", "identity", "--remote-cluster-id", cid, "--kubeconfig",
                       provider.kubeconfig, "-o", "json")
    assert rc == 0, err
    assert yaml.safe_load(out)["spec"]["clusterID"] == pid
    rc, out, err = cli("generate", "identity", "--remote-cluster-id", cid, "--cluster-id",
                       "flag-wins", "--kubeconfig", provider.kubeconfig, "-o", "json")
    assert rc == 0 and yaml.safe_load(out)["spec"]["clusterID"] == "flag-wins", err

    # the provider's Liqo namespace elsewhere: its id is looked for there, and not found
    rc, out, err = cli("unauthenticate", *both, "--remote-namespace", "no-such-ns")
    assert rc == EXIT_USAGE, out + err
    assert ("(remote) no cluster id: --remote-cluster-id was not given and there is no ConfigMap "
            "labelled app.kubernetes.io/name=clusterid-configmap in namespace no-such-ns") in err
    rc, out, err = cli("unauthenticate", *both, "--wait")
    assert rc == 0, out + err
    assert out.splitlines() == [" INFO   (local) Identity deleted", " INFO   (remote) Tenant deleted"]

    # neither the flag nor the ConfigMap: a clear usage error, nothing changed
    consumer.kubectl("delete", "configmap", "liqo-clusterid-configmap", "-n", "liqo")
    rc, out, err = cli("generate", "tenant", "--remote-cluster-id", pid, "--nonce", "A" * 86 + "==",
                       "--kubeconfig", consumer.kubeconfig)
    assert rc == EXIT_USAGE and out == "", err
    assert "no cluster id: --cluster-id was not given" in err and "install --cluster-id" in err
    rc, out, err = cli("authenticate", *both)
    assert rc == EXIT_USAGE and "(local) no cluster id" in err, out + err


def test_install_edge_cases(cli, provider, consumer, ids, tmp_path):
    """A namespace of its own is created; an unlabelled ConfigMap of Liqo's name is not
    overwritten; two labelled ConfigMaps make the id ambiguous, which install and discovery
    refuse."""
    cid, _ = ids
    ns = f"tg-install-{cid}"
    try:
        rc, out, err = cli("install", "--cluster-id", cid, "-n", ns, "--kubeconfig",
                           provider.kubeconfig)
        assert rc == 0, err
        assert err.splitlines() == [" INFO  Namespace created", " INFO  Cluster id ConfigMap created"]
        provider.apply({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "second", "namespace": ns,
                                     "labels": {"app.kubernetes.io/name": "clusterid-configmap"}},
                        "data": {"CLUSTER_ID": "other"}})
        rc, out, err = cli("install", "--cluster-id", cid, "-n", ns, "--kubeconfig",
                           provider.kubeconfig)
        assert rc == EXIT_REJECTED and "2 ConfigMaps labelled" in err, err
        rc, out, err = cli("generate", "identity", "--remote-cluster-id", "c-x", "-n", ns,
                           "--kubeconfig", provider.kubeconfig, "--timeout", "2s")
        assert rc == EXIT_REJECTED and "2 ConfigMaps labelled" in err, err
        provider.kubectl("delete", "configmap", "--all", "-n", ns)
        provider.apply({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "liqo-clusterid-configmap", "namespace": ns},
                        "data": {"CLUSTER_ID": "unlabelled"}})
        rc, out, err = cli("install", "--cluster-id", cid, "-n", ns, "--kubeconfig",
                           provider.kubeconfig)
        assert rc == EXIT_REJECTED and "exists without the label" in err, err
        assert provider.get_json("configmap", "liqo-clusterid-configmap", "-n", ns)["data"] == \
            {"CLUSTER_ID": "unlabelled"}
        rc, out, err = cli("install", "--cluster-id", "Bad_ID", "--kubeconfig", provider.kubeconfig)
        assert rc == EXIT_USAGE and "--cluster-id" in err
        rc, out, err = cli("install", "--kubeconfig", provider.kubeconfig)
        assert rc == EXIT_USAGE and "--cluster-id is required" in err
    finally:
        provider.kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found",
                         check=False)


def test_kubeconfig_search_and_context(cli, provider, consumer, provider_signer, ids, cleanup,
                                       tmp_path):
    """$KUBECONFIG with several files (an empty entry and a missing-context file are skipped as
    kubectl does) and --context picking the provider's context out of a merged list."""
    cid, _ = ids
    ctx = provider.kubectl("config", "current-context", "--kubeconfig", provider.kubeconfig).stdout.strip()
    other = tmp_path / "other.kubeconfig"
    doc = yaml.safe_load(Path(consumer.kubeconfig).read_text())
    # rename the consumer's entries so they do not collide with the provider's
    for section, key in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
        for item in doc[section]:
            item["name"] = "consumer-" + item["name"]
    for item in doc["contexts"]:
        item["context"]["cluster"] = "consumer-" + item["context"]["cluster"]
        item["context"]["user"] = "consumer-" + item["context"]["user"]
    doc["current-context"] = "consumer-" + doc["current-context"]
    other.write_text(yaml.safe_dump(doc))
    import os
    env = dict(os.environ, KUBECONFIG=f"{other}::{provider.kubeconfig}")
    rc, nonce, err = cli("create", "nonce", "--remote-cluster-id", cid, "--context", ctx, env=env)
    assert rc == 0, err
    assert provider.exists("secret", "liqo-nonce", "-n", f"liqo-tenant-{cid}")
    assert not consumer.exists("namespace", f"liqo-tenant-{cid}")
    rc, _, err = cli("get", "nonce", "--remote-cluster-id", cid, "--context", "nope", env=env)
    assert rc == EXIT_USAGE and "nope" in err


# --- errors a person can act on ------------------------------------------------------------

def test_missing_signer_is_named(cli, provider, consumer, provider_signer, consumer_signer, ids,
                                 cleanup):
    """No provider signer: `create nonce` and `authenticate` stop at --timeout and say which
    service did not act, on which cluster, and what it should have filled."""
    cid, pid = ids
    provider_signer.stop()
    try:
        rc, out, err = cli("create", "nonce", "--remote-cluster-id", cid, "--kubeconfig",
                           provider.kubeconfig, "--timeout", "2s")
        assert rc == EXIT_TIMEOUT and out == "", err
        assert (f"timed out after 2s waiting for tenantgate-signer (nonce controller) to fill "
                f"data.nonce of Secret liqo-tenant-{cid}/liqo-nonce") in err
        rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig,
                           "--remote-kubeconfig", provider.kubeconfig, "--cluster-id", cid,
                           "--remote-cluster-id", pid, "--timeout", "3s")
        assert rc == EXIT_TIMEOUT, err
        assert out.splitlines()[-1] == " INFO   (remote) Nonce secret ensured"
        assert "(remote) timed out after 3s waiting for tenantgate-signer (nonce controller)" in err
    finally:
        provider_signer.start()


def test_missing_webhook_is_named(cli, provider, consumer, provider_signer, consumer_signer,
                                  webhook, ids, cleanup):
    """The admission webhook down (failurePolicy Fail): the Tenant cannot be applied and the
    message names the webhook."""
    cid, pid = ids
    webhook.stop()
    try:
        rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig,
                           "--remote-kubeconfig", provider.kubeconfig, "--cluster-id", cid,
                           "--remote-cluster-id", pid, "--timeout", "60s")
        assert rc == EXIT_REJECTED, out + err
        assert out.splitlines()[-1] == " INFO   (local) Tenant correctly generated"
        assert "(remote) the API server could not call the tenantgate admission webhook" in err
        assert not provider.exists("tenant", cid, "-n", f"liqo-tenant-{cid}")
    finally:
        webhook.start()
        webhook.wait_ready()


def test_webhook_still_syncing_is_waited_for(cli, provider, consumer, provider_signer,
                                            consumer_signer, webhook, ids, cleanup):
    """The provider's webhook up but not synced yet: it answers the Tenant with CacheNotSynced
    and status.details.retryAfterSeconds (500 through the API server).  The CLI asks again
    after that many seconds, as kubectl does, and the authentication completes once the
    webhook has synced: no error for the user to act on."""
    cid, pid = ids
    unsynced = dict(path="/validate/tenants", verdict="error", reason="CacheNotSynced")
    outcome = {}
    with webhook.unsynced_until_granted(provider) as grant:
        t0 = time.monotonic()
        flow = threading.Thread(target=lambda: outcome.update(result=cli(
            "authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
            provider.kubeconfig, "--cluster-id", cid, "--remote-cluster-id", pid,
            "--timeout", "60s")))
        flow.start()
        wait_for(lambda: webhook.counter("tenantgate_webhook_requests_total", **unsynced) >= 1,
                 timeout=60, interval=0.05, what="the CLI's Tenant answered CacheNotSynced")
        t_first = time.monotonic()
        time.sleep(1.5)
        assert flow.is_alive(), outcome["result"]
        retried = webhook.counter("tenantgate_webhook_requests_total", **unsynced)
        # The webhook's informers have backed off since it started (0.5 s doubling, so the
        # next try comes at most about as long after the grant as they have been failing
        # before it): the steps before the Tenant take a few seconds, well inside the CLI's
        # 15 s of retries.
        t_grant = time.monotonic()
        grant()
        flow.join(90)
        t_done = time.monotonic()
    print(f"\nwebhook unsynced: the Tenant first answered CacheNotSynced {t_first - t0:.1f} s after "
          f"the start, {retried:.0f} such answers before the grant, done {t_done - t_grant:.1f} s after it")
    rc, out, err = outcome["result"]
    assert rc == 0, out + err
    assert out.splitlines() == SEED_AUTHENTICATE_LINES, out
    assert retried >= 2, retried
    assert provider.exists("tenant", cid, "-n", f"liqo-tenant-{cid}")
    # While it waited it said why, on stderr (stdout keeps Liqo's progress lines).
    waits = [line for line in err.splitlines() if "asked to be asked again" in line]
    assert len(waits) >= retried and all(
        line.startswith("kubectl-tenantgate authenticate: (remote) the API server answered HTTP 500 (")
        and "CacheNotSynced" in line and line.endswith("asking again in 1.0s") for line in waits), err


class PleaseComeBack:
    """A TLS server on this machine that answers every request 500 with a Status asking to be
    asked again after `seconds` (as a busy webhook behind an API server would), or with
    silent=True reads each request and never answers: what a misbehaving or hostile API server
    can do to the CLI.  .requests counts what it got."""
    def __init__(self, tmp_path, seconds, silent=False):
        self.requests = 0
        self.stop = threading.Event()
        key, crt = tmp_path / "come-back.key", tmp_path / "come-back.crt"
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=127.0.0.1", "-days", "1", "-keyout", str(key), "-out", str(crt))
        body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500,
                           "reason": "InternalError", "message": "come back later",
                           "details": {"retryAfterSeconds": seconds}}).encode()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                outer.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if silent:
                    outer.stop.wait(120)
                    return
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Retry-After", str(seconds))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            do_GET = do_POST = do_PATCH = do_PUT = answer

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "x",
               "clusters": [{"name": "x", "cluster": {"server": f"https://127.0.0.1:{self.port}",
                                                      "insecure-skip-tls-verify": True}}],
               "users": [{"name": "x", "user": {"token": "not-a-secret"}}],
               "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]}
        self.kubeconfig = tmp_path / "come-back.kubeconfig"
        self.kubeconfig.write_text(yaml.safe_dump(doc))

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def timed_against(cli, server, what, *args):
    """The CLI with args against server (closed afterwards), its timing printed under what:
    rc, stdout, stderr, seconds."""
    try:
        t0 = time.monotonic()
        rc, out, err = cli(*args, "--kubeconfig", server.kubeconfig)
        elapsed = time.monotonic() - t0
    finally:
        server.close()
    print(f"\n{what}: {server.requests} requests, rc {rc} after {elapsed:.1f} s")
    return rc, out, err, elapsed


def test_an_api_server_that_keeps_asking_to_come_back_is_given_up_on(cli, tmp_path):
    """The CLI retries an answer that asks for it, as kubectl does, but sleeps at most 15 s in
    all per call: an API server answering "retry after 10 s" forever gets one retry, and the
    command then reports the answer instead of hanging."""
    server = PleaseComeBack(tmp_path, 10)
    rc, out, err, elapsed = timed_against(cli, server, "an API server asking to come back after 10 s",
                                          "get", "nonce", "--remote-cluster-id", "c1")
    assert rc == EXIT_REJECTED and out == "", err
    assert "come back later" in err, err
    assert server.requests == 2, server.requests
    assert 10 <= elapsed < 14, elapsed
    # while it waited, it said why, once per wait
    waits = [line for line in err.splitlines() if "asked to be asked again" in line]
    assert waits == ["kubectl-tenantgate get nonce: the API server answered HTTP 500 (come back "
                     "later) and asked to be asked again: asking again in 10.0s"], err


def test_timeout_bounds_the_wait_the_api_server_asks_for(cli, tmp_path):
    """--timeout is for the whole command: a "retry after 10 s" that would outlast it is not
    slept on; the CLI reports the API server's answer at once."""
    server = PleaseComeBack(tmp_path, 10)
    rc, out, err, elapsed = timed_against(cli, server, "--timeout 5s, an API server asking to come "
                                          "back after 10 s", "create", "nonce", "--remote-cluster-id", "c1",
                                          "--timeout", "5s")
    assert rc == EXIT_REJECTED and out == "", err
    assert "come back later" in err and "asked to be asked again" not in err, err
    assert server.requests == 1, server.requests
    assert elapsed < 3, elapsed


def test_timeout_bounds_a_request_the_api_server_never_answers(cli, tmp_path):
    """An API server that takes the request and never answers holds the CLI for --timeout, not
    for the client's own 20 s per request, and the exit code says it timed out."""
    server = PleaseComeBack(tmp_path, 0, silent=True)
    rc, out, err, elapsed = timed_against(cli, server, "--timeout 3s, an API server that never "
                                          "answers", "create", "nonce", "--remote-cluster-id", "c1",
                                          "--timeout", "3s")
    assert rc == EXIT_TIMEOUT and out == "", err
    assert "timed out after 3s waiting for an answer" in err, err
    assert server.requests == 1, server.requests
    assert 3 <= elapsed < 6, elapsed


def test_unreachable_cluster(cli, provider, tmp_path):
    doc = yaml.safe_load(Path(provider.kubeconfig).read_text())
    port = free_port()
    for c in doc["clusters"]:
        c["cluster"]["server"] = f"https://127.0.0.1:{port}"
    kc = tmp_path / "dead.kubeconfig"
    kc.write_text(yaml.safe_dump(doc))
    rc, out, err = cli("get", "nonce", "--remote-cluster-id", "c1", "--kubeconfig", kc)
    assert rc == EXIT_UNREACHABLE, err
    assert f"cannot reach the API server https://127.0.0.1:{port}" in err
    rc, out, err = cli("authenticate", "--kubeconfig", provider.kubeconfig, "--remote-kubeconfig",
                       kc, "--cluster-id", "c1", "--remote-cluster-id", "p1")
    assert rc == EXIT_UNREACHABLE and "(remote) cannot reach the API server" in err, err
    assert out == ""


def test_tls_trust_as_the_kubeconfig_says(cli, provider, consumer, tmp_path):
    """CA from a file works; another cluster's CA is refused (no silent fallback to insecure);
    insecure-skip-tls-verify works only when the kubeconfig sets it."""
    def variant(name, edit):
        doc = yaml.safe_load(Path(provider.kubeconfig).read_text())
        for c in doc["clusters"]:
            c["cluster"].pop("certificate-authority-data", None)
            edit(c["cluster"])
        path = tmp_path / name
        path.write_text(yaml.safe_dump(doc))
        return cli("get", "nonce", "--remote-cluster-id", "nobody-here", "--kubeconfig", path)

    # reaching the server is proven by the answer: no tenant namespace for that id
    rc, _, err = variant("ca-file", lambda c: c.update({"certificate-authority": str(provider.ca_file)}))
    assert rc == EXIT_REJECTED and "no nonce for cluster nobody-here" in err, err
    rc, _, err = variant("wrong-ca", lambda c: c.update({"certificate-authority": str(consumer.ca_file)}))
    assert rc == EXIT_UNREACHABLE and "cannot reach the API server" in err, err
    rc, _, err = variant("insecure", lambda c: c.update({"insecure-skip-tls-verify": True}))
    assert rc == EXIT_REJECTED and "no nonce for cluster nobody-here" in err, err


def test_missing_kubeconfig_is_a_usage_error(cli, tmp_path):
    rc, out, err = cli("create", "nonce", "--remote-cluster-id", "c1", "--kubeconfig",
                       tmp_path / "absent")
    assert rc == EXIT_USAGE and "cannot load the kubeconfig" in err and "absent" in err


def test_missing_crds(cli, k8s_bin, tmp_path):
    """A real control plane without the tenantgate CRDs: every command says which is missing."""
    name = f"{RUN_TAG}-clibare"
    cluster_tool("up", name)
    try:
        bare = Cluster(name)
        rc, out, err = cli("generate", "identity", "--kubeconfig", bare.kubeconfig, "--cluster-id",
                           "p1", "--remote-cluster-id", "c1")
        assert rc == EXIT_REJECTED, err
        assert "does not serve authentication.liqo.io/v1beta1" in err
        assert "CustomResourceDefinitions (tenants) are not installed" in err
        rc, out, err = cli("authenticate", "--kubeconfig", bare.kubeconfig, "--remote-kubeconfig",
                           bare.kubeconfig, "--cluster-id", "c1", "--remote-cluster-id", "p1")
        assert rc == EXIT_REJECTED and "(local)" in err and "(identities)" in err, err
        # nothing was created before the check failed
        assert not bare.exists("namespace", "liqo-tenant-p1")
    finally:
        cluster_tool("down", name, check=False)


def test_no_nonce(cli, provider, ids, cleanup):
    cid, _ = ids
    rc, out, err = cli("get", "nonce", "--remote-cluster-id", cid, "--kubeconfig",
                       provider.kubeconfig)
    assert rc == EXIT_REJECTED and out == ""
    assert f"no nonce for cluster {cid}" in err and "create nonce" in err
    # a tenant namespace without the Secret
    provider.apply({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": f"liqo-tenant-{cid}",
                                 "labels": {"liqo.io/tenant-namespace": "true",
                                            "liqo.io/remote-cluster-id": cid}}})
    rc, out, err = cli("get", "nonce", "--remote-cluster-id", cid, "--kubeconfig",
                       provider.kubeconfig)
    assert rc == EXIT_REJECTED
    assert f"no nonce: Secret liqo-tenant-{cid}/liqo-nonce does not exist" in err
    # and generate tenant refuses a nonce that is not one, before touching the cluster
    rc, out, err = cli("generate", "tenant", "--remote-cluster-id", "p1", "--cluster-id", cid,
                       "--nonce", "short", "--kubeconfig", provider.kubeconfig)
    assert rc == EXIT_USAGE and "88 characters" in err


@pytest.fixture
def limited_user(provider):
    """A ServiceAccount that may list and create (tenant) namespaces, and nothing else: the
    tenant labels need the tenant-namespace policy's verb (manifests/policy)."""
    name = f"cli-limited-{uuid.uuid4().hex[:6]}"
    provider.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": name},
                    "rules": [{"apiGroups": [""], "resources": ["namespaces"],
                               "verbs": ["get", "list", "create", "patch"]},
                              {"apiGroups": ["tenantgate.io"], "resources": ["tenantnamespaces"],
                               "verbs": ["label"]}]})
    provider.kubectl("create", "namespace", name)
    provider.kubectl("create", "clusterrolebinding", name, f"--clusterrole={name}",
                     f"--serviceaccount={name}:{name}")
    kc = provider.serviceaccount_kubeconfig(name, name)
    yield kc, name
    provider.kubectl("delete", "clusterrolebinding", name, "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrole", name, "--ignore-not-found", check=False)
    provider.delete_namespace(name)


def test_rbac_forbidden(cli, provider, limited_user, ids, cleanup, tmp_path):
    kc, name = limited_user
    cid, _ = ids
    rc, out, err = cli("create", "nonce", "--remote-cluster-id", cid, "--kubeconfig", kc)
    assert rc == EXIT_REJECTED, err
    assert (f"forbidden: the kubeconfig's user may not create secrets in namespace "
            f"liqo-tenant-{cid}") in err
    assert f"system:serviceaccount:{name}:{name}" in err
    # with no rights at all: the namespace list is the first refusal
    nobody = provider.serviceaccount_kubeconfig(name, "nobody")
    rc, out, err = cli("get", "nonce", "--remote-cluster-id", cid, "--kubeconfig", nobody)
    assert rc == EXIT_REJECTED and "may not list namespaces" in err, err


def test_timeout_names_the_step(cli, provider, ids, cleanup):
    """generate identity for a consumer whose Tenant never comes: the wait ends at --timeout and
    says what it waited for."""
    cid, pid = ids
    provider.apply({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": f"liqo-tenant-{cid}",
                                 "labels": {"liqo.io/tenant-namespace": "true",
                                            "liqo.io/remote-cluster-id": cid}}})
    rc, out, err = cli("generate", "identity", "--remote-cluster-id", cid, "--cluster-id", pid,
                       "--kubeconfig", provider.kubeconfig, "--timeout", "2s")
    assert rc == EXIT_TIMEOUT, err
    assert f"timed out after 2s waiting for Tenant {cid} in namespace liqo-tenant-{cid}" in err
    rc, out, err = cli("generate", "identity", "--remote-cluster-id", cid, "--cluster-id", pid,
                       "--kubeconfig", provider.kubeconfig, "--timeout", "soon")
    assert rc == EXIT_USAGE and "--timeout" in err


def test_usage_and_help(cli):
    for args in (("create", "--help"), ("create", "nonce", "--help"), ("get", "nonce", "--help"),
                 ("generate", "tenant", "--help"), ("generate", "identity", "--help"),
                 ("authenticate", "--help"), ("unauthenticate", "--help"), ("install", "--help")):
        rc, out, err = cli(*args)
        assert rc == 0 and out.startswith("Usage:"), args
    rc, out, err = cli("authenticate", "--cluster-id", "c1", "--remote-cluster-id", "p1")
    assert rc == EXIT_USAGE and "--remote-kubeconfig (or --auth-url and --token) is required" in err
    rc, out, err = cli("create", "nonce", "--remote-cluster-id", "Bad_ID")
    assert rc == EXIT_USAGE and "--remote-cluster-id" in err
    rc, out, err = cli("get", "nonce", "--remote-cluster-id", "c1", "--wait")
    assert rc == EXIT_USAGE and "does not apply" in err


def test_runs_as_a_kubectl_plugin(build_dir, k8s_bin, provider, tmp_path):
    """`kubectl tenantgate ...` finds the binary on PATH and hands it every flag."""
    import os
    env = dict(os.environ, PATH=f"{build_dir / 'cli'}:{os.environ.get('PATH', '')}")
    p = subprocess.run([str(k8s_bin / "kubectl"), "plugin", "list"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert "kubectl-tenantgate" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([str(k8s_bin / "kubectl"), "tenantgate", "get", "nonce",
                        "--remote-cluster-id", "nobody-here", "--kubeconfig", str(provider.kubeconfig)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == EXIT_REJECTED and "no nonce for cluster nobody-here" in p.stderr, p.stderr
