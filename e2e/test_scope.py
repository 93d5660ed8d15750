"""Scope as structure (issue 36): a user who may create objects in ONE namespace of the
consumer gets nothing made under the consumer's cluster key.

The user is a ServiceAccount bound, in its own namespace only, to the `admin` ClusterRole plus
a Role on Liqo's authentication objects there (what an aggregated admin role would give). It
replays the two attacks of the issue against a consumer running tenantgate-signer:

(a) an Identity in its namespace with any certificate in spec.authParams.signedCRT: the
    identity controller would write kubeconfig-<identity> there, with the cluster's private key;
(b) a ResourceSlice labelled for replication in its namespace, for another consumer, whose
    /status it sets to Accepted: the resourceslice controller would make a CSR under the cluster
    key, Identity resourceslice-<n> and Secret kubeconfig-resourceslice-<n>.

The namespace is no tenant namespace (its labels are the trust anchor, and the user cannot
label its Namespace): both are dropped before any reconcile, logged once and counted in
tenantgate_signer_out_of_scope_total{controller}."""

import base64
import json
import time
import uuid

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import (PROVIDER_ID, consumer_signer, installed, out_of_scope,  # noqa: F401
                         provider_signer)
from bed import openssl, wait_for

GROUP = "authentication.liqo.io"
# Long enough for a reconcile that would act to have acted: the signer fills a slice's CSR and
# writes a kubeconfig well under a second after the event in the other tests.
SETTLE_S = 5


def _b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


@pytest.fixture
def namespace_user(consumer, tmp_path):
    """(namespace, kubeconfig) of a user with admin rights in that one namespace only."""
    ns = f"team-{uuid.uuid4().hex[:6]}"
    consumer.create_namespace(ns, {"liqo.io/remote-cluster-id": PROVIDER_ID})   # a label, not a tenant ns
    consumer.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": "liqo-auth-objects", "namespace": ns},
                    "rules": [{"apiGroups": [GROUP],
                               "resources": ["identities", "resourceslices", "resourceslices/status"],
                               "verbs": ["get", "list", "create", "update", "patch", "delete"]}]})
    for kind, role in (("ClusterRole", "admin"), ("Role", "liqo-auth-objects")):
        consumer.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": {"name": f"user-{role}", "namespace": ns},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
                        "subjects": [{"kind": "ServiceAccount", "name": "user", "namespace": ns}]})
    kc = consumer.serviceaccount_kubeconfig(ns, "user")
    # the user is what the issue says: namespace rights, no more
    for verb, what, where in (("create", "identities." + GROUP, ns), ("patch", "namespaces", None),
                              ("create", "identities." + GROUP, "default")):
        args = ["auth", "can-i", verb, what] + (["-n", where] if where else [])
        got = consumer.kubectl(*args, kubeconfig=kc, check=False).stdout.strip()
        assert got == ("yes" if where == ns else "no"), (verb, what, where, got)
    yield ns, kc
    consumer.delete_namespace(ns)


def _any_certificate(tmp_path):
    key = tmp_path / "any.key"
    key.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    cfg = tmp_path / "any.cnf"
    cfg.write_text("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=anyone\n")
    return openssl("req", "-x509", "-new", "-key", str(key), "-days", "1", "-config", str(cfg))


def _as_user(consumer, kc, obj):
    p = consumer.kubectl("create", "-f", "-", input=obj, kubeconfig=kc, check=False)
    assert p.returncode == 0, p.stderr


def _logged_once(signer, controller, ns, name):
    lines = [ln for ln in signer.log().splitlines()
             if f'"controller":"{controller}","namespace":"{ns}","name":"{name}"' in ln]
    return len(lines)


def test_identity_in_a_users_namespace_gets_no_kubeconfig(consumer, consumer_signer, namespace_user,
                                                          tmp_path):
    """Attack (a): no kubeconfig Secret with the cluster key in the user's namespace."""
    ns, kc = namespace_user
    before = out_of_scope(consumer_signer, "identity")
    _as_user(consumer, kc, {
        "apiVersion": f"{GROUP}/v1beta1", "kind": "Identity",
        "metadata": {"name": "grab", "namespace": ns, "labels": {"liqo.io/remote-cluster-id": PROVIDER_ID}},
        "spec": {"clusterID": PROVIDER_ID, "type": "ControlPlane", "namespace": "liqo-tenant-x",
                 "authParams": {"signedCRT": _b64(_any_certificate(tmp_path)), "apiServer": "https://1.2.3.4"}}})
    # a second event of the same object: still one log line, one count
    consumer.kubectl("label", "identity", "grab", "-n", ns, "again=1", kubeconfig=kc)
    time.sleep(SETTLE_S)
    kubeconfigs = [s["metadata"]["name"] for s in consumer.get_json("secrets", "-n", ns)["items"]
                   if "kubeconfig" in (s.get("data") or {})]
    assert kubeconfigs == [], f"the cluster key was written into {ns}: {kubeconfigs}"
    assert "status" not in consumer.get_json("identity", "grab", "-n", ns)
    wait_for(lambda: out_of_scope(consumer_signer, "identity") > before, timeout=30,
             what="the identity controller to count the Identity out of scope")
    assert out_of_scope(consumer_signer, "identity") == before + 1
    assert _logged_once(consumer_signer, "identity", ns, "grab") == 1


def test_accepted_slice_in_a_users_namespace_gets_no_csr_identity_or_kubeconfig(
        consumer, consumer_signer, namespace_user, tmp_path):
    """Attack (b): no CSR under the cluster key, no Identity, no kubeconfig, even once the user
    writes Accepted with a certificate into the slice's status."""
    ns, kc = namespace_user
    name = "grab"
    before = out_of_scope(consumer_signer, "resourceslice")
    _as_user(consumer, kc, {
        "apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"liqo.io/replication": "true", "liqo.io/remoteID": PROVIDER_ID,
                                "liqo.io/remote-cluster-id": PROVIDER_ID}},
        "spec": {"class": "default", "consumerClusterID": "cl-someone-else", "providerClusterID": PROVIDER_ID}})
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = {"conditions": [{"type": "Authentication", "status": "Accepted", "lastTransitionTime": now,
                              "reason": "ResourceSliceAuthenticationAccepted", "message": "accepted"}],
              "authParams": {"signedCRT": _b64(_any_certificate(tmp_path)), "apiServer": "https://1.2.3.4"}}
    p = consumer.kubectl("patch", "rslice", name, "-n", ns, "--subresource=status", "--type=merge",
                         "-p", json.dumps({"status": status}), kubeconfig=kc, check=False)
    assert p.returncode == 0, p.stderr
    time.sleep(SETTLE_S)
    assert "csr" not in consumer.get_json("rslice", name, "-n", ns)["spec"], "a CSR under the cluster key"
    assert not consumer.exists("identity", f"resourceslice-{name}", "-n", ns)
    assert not consumer.exists("secret", f"kubeconfig-resourceslice-{name}", "-n", ns)
    wait_for(lambda: out_of_scope(consumer_signer, "resourceslice") > before, timeout=30,
             what="the resourceslice controller to count the slice out of scope")
    assert _logged_once(consumer_signer, "resourceslice", ns, name) == 1
