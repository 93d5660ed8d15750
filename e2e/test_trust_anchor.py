"""Trust anchors a namespace owner cannot write (issue 44, findings 1 and 2, fix A).

The attacker is a namespace owner: a ServiceAccount with a `*`-on-`*` Role bound in its own
namespace, acting with its own token through the real API server.  Kubernetes lets such a Role
patch the Namespace object of its own name, so it can label its namespace; the tenant labels
alone were the anchor of the signer and the webhook.  The anchor now is the name
`liqo-tenant-<id>` (creating a Namespace is cluster-scoped) with labels guarded at admission by
the API server itself (manifests/policy, no webhook involved):

(a) the owner labelling its namespace as a tenant namespace is refused by the policy
    (TenantLabelForbidden), while an unrelated label on the same Namespace passes (RBAC lets
    it) and the admin may set the tenant labels on `liqo-tenant-<id>`; a misnamed tenant
    namespace is refused even to the admin (TenantNamespaceMisnamed);
(b) finding 1, as if the policy were missing (the admin labels the owner's namespace X with the
    policy's binding removed): on the consumer an Identity ControlPlane for the provider in X
    gets no kubeconfig with the cluster key, and a liqo-signed-nonce in X is never signed;
(c) finding 2, likewise on the provider: in the owner's namespace P labelled for a name NAME
    the owner chose, a labelled liqo-nonce is never filled, the owner's Tenant made with
    `kubectl tenantgate generate tenant --offline` is refused at `kubectl apply`
    (WrongNamespace), and the same Tenant created by the admin with the webhook bypassed is
    never signed: no CSR for CN=NAME is approved, no ClusterRoleBinding names Group NAME.

Objects are dropped before any reconcile and counted in tenantgate_signer_out_of_scope_total,
which is what the tests wait for before checking that nothing was written."""

import base64
import contextlib
import json
import os
import time
import uuid

import pytest

from tenantgate_services import denial, tenant_policy_suspended, webhook, webhook_install  # noqa: F401
from test_signer import (PROVIDER_ID, consumer_signer, installed, out_of_scope,  # noqa: F401
                         provider_signer)
from bed import openssl, wait_for

GROUP = "authentication.liqo.io"
WEBHOOK_CONFIG = "tenantgate"
# Long enough for a reconcile that would act to have acted (test_scope.py: well under a
# second in the other tests); the tests also wait for the out-of-scope count first.
SETTLE_S = 5


def _b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def _role_binding_all(cluster, ns, sa):
    cluster.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                   "metadata": {"name": "owner", "namespace": ns},
                   "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]})
    cluster.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "owner", "namespace": ns},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "owner"},
                   "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]})


@contextlib.contextmanager
def _owner(cluster):
    """(namespace, kubeconfig) of a namespace owner: `*` on `*` in that one namespace."""
    ns = f"team-{uuid.uuid4().hex[:6]}"
    cluster.create_namespace(ns)
    try:
        _role_binding_all(cluster, ns, "owner")
        kc = cluster.serviceaccount_kubeconfig(ns, "owner")
        yield ns, kc
    finally:
        cluster.delete_namespace(ns)


@pytest.fixture
def consumer_owner(consumer, crds):
    with _owner(consumer) as o:
        yield o


@pytest.fixture
def provider_owner(provider, crds):
    with _owner(provider) as o:
        yield o


def _label_as(cluster, kc, ns, *labels, dry_run=False):
    extra = ["--dry-run=server"] if dry_run else []
    return cluster.kubectl("label", "namespace", ns, "--overwrite", *labels, *extra, kubeconfig=kc, check=False)


def _label_tenant_as_admin(cluster, ns, peer):
    """The tenant labels on the owner's namespace, set by the admin with the policy suspended."""
    with tenant_policy_suspended(cluster):
        cluster.kubectl("label", "namespace", ns, "--overwrite", "liqo.io/tenant-namespace=true",
                        f"liqo.io/remote-cluster-id={peer}")


def _as(cluster, kc, obj):
    p = cluster.kubectl("create", "-f", "-", input=obj, kubeconfig=kc, check=False)
    assert p.returncode == 0, p.stderr


# --- (a) the policy ---------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["consumer", "provider"])
def test_namespace_owner_cannot_label_its_namespace_as_a_tenant_namespace(request, side):
    cluster = request.getfixturevalue(side)
    ns, kc = request.getfixturevalue(f"{side}_owner")
    peer = "cl-provider" if side == "consumer" else f"victim-{uuid.uuid4().hex[:6]}"
    # RBAC lets the owner label its own Namespace: what follows is the policy, not RBAC
    p = _label_as(cluster, kc, ns, "team=a")
    assert p.returncode == 0, p.stderr
    for labels in (("liqo.io/tenant-namespace=true", f"liqo.io/remote-cluster-id={peer}"),
                   ("tenantgate.io/tenant-namespace=true",)):
        p = _label_as(cluster, kc, ns, *labels)
        assert p.returncode != 0, f"{labels} set by the namespace owner"
        assert "TenantLabelForbidden" in p.stderr, p.stderr
        assert "tenantgate-tenant-namespace-labeler" in p.stderr and ns in p.stderr, p.stderr
    labels = cluster.get_json("namespace", ns)["metadata"].get("labels") or {}
    assert not {"liqo.io/tenant-namespace", "tenantgate.io/tenant-namespace"} & set(labels), labels
    # the peer label alone makes no tenant namespace, and Liqo marks the namespaces it offloads
    # with it: allowed; the tenant label on top of it is not
    p = _label_as(cluster, kc, ns, f"liqo.io/remote-cluster-id={peer}")
    assert p.returncode == 0, p.stderr
    p = _label_as(cluster, kc, ns, "liqo.io/tenant-namespace=true")
    assert p.returncode != 0 and "TenantLabelForbidden" in p.stderr, p.stderr
    _label_as(cluster, kc, ns, "liqo.io/remote-cluster-id-")

    # the same request as the cluster admin, on a scratch tenant namespace of that name
    scratch = f"liqo-tenant-{peer}-{uuid.uuid4().hex[:4]}"
    scratch_id = scratch[len("liqo-tenant-"):]
    cluster.create_namespace(scratch)
    try:
        p = cluster.kubectl("label", "namespace", scratch, "liqo.io/tenant-namespace=true",
                            f"liqo.io/remote-cluster-id={scratch_id}", check=False)
        assert p.returncode == 0, p.stderr
        # ...but not a name that is not liqo-tenant-<id>, not even for the admin
        p = cluster.kubectl("label", "namespace", scratch, "--overwrite", f"liqo.io/remote-cluster-id={peer}",
                            check=False)
        assert p.returncode != 0 and "TenantNamespaceMisnamed" in p.stderr, p.stderr
        assert f"liqo-tenant-{peer}" in p.stderr, p.stderr
    finally:
        cluster.delete_namespace(scratch)


# --- (b) finding 1: the consumer's cluster key ------------------------------------------------

def _any_certificate(tmp_path):
    key = tmp_path / "any.key"
    key.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    cfg = tmp_path / "any.cnf"
    cfg.write_text("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=anyone\n")
    return openssl("req", "-x509", "-new", "-key", str(key), "-days", "1", "-config", str(cfg))


def test_consumer_namespace_labelled_for_the_provider_gets_no_key_material(
        consumer, consumer_signer, consumer_owner, tmp_path):
    ns, kc = consumer_owner
    _label_tenant_as_admin(consumer, ns, PROVIDER_ID)
    ident0, signer0 = out_of_scope(consumer_signer, "identity"), out_of_scope(consumer_signer, "noncesigner")
    _as(consumer, kc, {
        "apiVersion": f"{GROUP}/v1beta1", "kind": "Identity",
        "metadata": {"name": f"controlplane-{PROVIDER_ID}", "namespace": ns,
                     "labels": {"liqo.io/remote-cluster-id": PROVIDER_ID}},
        "spec": {"clusterID": PROVIDER_ID, "type": "ControlPlane", "namespace": f"liqo-tenant-{PROVIDER_ID}",
                 "authParams": {"signedCRT": _b64(_any_certificate(tmp_path)), "apiServer": "https://1.2.3.4"}}})
    _as(consumer, kc, {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "liqo-signed-nonce", "namespace": ns,
                     "labels": {"liqo.io/signed-nonce": "true", "liqo.io/remote-cluster-id": PROVIDER_ID}},
        "data": {"nonce": _b64(_b64(os.urandom(64)))}})

    def written():
        secrets = consumer.get_json("secrets", "-n", ns)["items"]
        return ([s["metadata"]["name"] for s in secrets if "kubeconfig" in (s.get("data") or {})] +
                [s["metadata"]["name"] for s in secrets if "signedNonce" in (s.get("data") or {})])

    wait_for(lambda: written() or (out_of_scope(consumer_signer, "identity") > ident0 and
                                   out_of_scope(consumer_signer, "noncesigner") > signer0), timeout=30,
             what="the identity and nonce-signer controllers to drop the objects (or act)")
    time.sleep(SETTLE_S)
    assert written() == [], f"the cluster key was written into {ns} or signed a nonce there: {written()}"


# --- (c) finding 2: a certificate for a name the owner chose ----------------------------------

@contextlib.contextmanager
def _webhook_bypassed(cluster):
    """tenantgate's webhook configurations removed for the block and put back as they were."""
    saved = []
    for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
        obj = cluster.get_json(kind, WEBHOOK_CONFIG)
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
            obj["metadata"].pop(key, None)
        saved.append((kind, obj))
    try:
        for kind, _ in saved:
            cluster.kubectl("delete", kind, WEBHOOK_CONFIG)
        yield
    finally:
        for kind, obj in saved:
            cluster.kubectl("delete", kind, WEBHOOK_CONFIG, "--ignore-not-found", check=False)
            cluster.create(obj)


def _approved_csrs_for(cluster, name):
    out = []
    for csr in cluster.get_json("csr")["items"]:
        req = base64.b64decode(csr["spec"]["request"])
        subject = openssl("req", "-noout", "-subject", "-nameopt", "RFC2253", input=req).decode()
        approved = any(c["type"] == "Approved" for c in (csr.get("status") or {}).get("conditions") or [])
        if approved and f"CN={name}" in subject:
            out.append(csr["metadata"]["name"])
    return out


def _bindings_naming(cluster, name):
    return [b["metadata"]["name"] for b in cluster.get_json("clusterrolebindings")["items"]
            if any(s.get("kind") == "Group" and s.get("name") == name for s in b.get("subjects") or [])]


def test_provider_namespace_labelled_for_a_chosen_name_gets_no_certificate(
        provider, provider_signer, provider_owner, cli, tmp_path):
    ns, kc = provider_owner
    name = f"victim-{uuid.uuid4().hex[:6]}"           # any user name the owner wants a certificate for
    _label_tenant_as_admin(provider, ns, name)
    nonce0, tenant0 = out_of_scope(provider_signer, "nonce"), out_of_scope(provider_signer, "tenant")
    problems = []                                      # every step is tried, whatever came before

    def filled_nonce():
        d = provider.get_json("secret", "liqo-nonce", "-n", ns).get("data") or {}
        return base64.b64decode(d["nonce"]).decode() if d.get("nonce") else None

    # a labelled, empty liqo-nonce: the nonce controller would fill it in a tenant namespace
    _as(provider, kc, {"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "liqo-nonce", "namespace": ns,
                                    "labels": {"liqo.io/nonce": "true", "liqo.io/remote-cluster-id": name}}})
    time.sleep(SETTLE_S)
    nonce = filled_nonce()
    if nonce:
        problems.append(f"the nonce controller filled {ns}/liqo-nonce")
    else:
        # the owner writes a nonce of its own
        nonce = _b64(os.urandom(64))
        provider.kubectl("patch", "secret", "liqo-nonce", "-n", ns, "--type=merge",
                         "-p", json.dumps({"stringData": {"nonce": nonce}}), kubeconfig=kc)
    # a Tenant signed over it with a key of the owner's own
    rc, _, err = cli("keygen", "--out", tmp_path / "keys")
    assert rc == 0, err
    rc, out, err = cli("generate", "tenant", "--offline", "--key", tmp_path / "keys" / "privateKey.pem",
                       "--cluster-id", name, "--nonce", nonce, "-o", "json")
    assert rc == 0, err
    tenant = json.loads(out)
    tenant["metadata"]["namespace"] = ns
    p = provider.kubectl("apply", "-f", "-", input=tenant, kubeconfig=kc, check=False)
    reason, message = denial(p.stderr)
    if p.returncode == 0:
        problems.append("the webhook admitted the owner's Tenant")
    else:
        assert reason == "WrongNamespace" and f"liqo-tenant-{name}" in message, p.stderr
        # the webhook bypassed: the signer must not act on it either
        with _webhook_bypassed(provider):
            provider.create(tenant)

    def signed():
        return _approved_csrs_for(provider, name) + _bindings_naming(provider, name)

    try:
        wait_for(lambda: signed() or out_of_scope(provider_signer, "tenant") > tenant0, timeout=30,
                 what="the tenant controller to drop the Tenant (or sign it)")
        time.sleep(SETTLE_S)
        if out_of_scope(provider_signer, "nonce") <= nonce0:
            problems.append("the nonce controller did not drop liqo-nonce as out of scope")
        if _approved_csrs_for(provider, name):
            problems.append(f"a certificate for CN={name} was approved")
        if _bindings_naming(provider, name):
            problems.append(f"Group {name} was bound cluster-wide: {_bindings_naming(provider, name)}")
        t = provider.get_json("tenant", name, "-n", ns)
        if ((t.get("status") or {}).get("authParams") or {}).get("signedCRT"):
            problems.append("the Tenant's status carries a certificate")
        assert problems == [], problems
    finally:
        provider.kubectl("delete", "tenant", name, "-n", ns, "--ignore-not-found", "--wait=false", check=False)
        for b in _bindings_naming(provider, name):
            provider.kubectl("delete", "clusterrolebinding", b, "--ignore-not-found", check=False)
