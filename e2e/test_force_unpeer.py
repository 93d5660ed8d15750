"""Unpeering from a provider that is gone (issue 45 item 6, liqotech/liqo#3051), two real
clusters with both signers (the fixtures of test_slice_flow.py).

The consumer is peered and holds an Accepted ResourceSlice; then the provider is gone for it:
the ControlPlane Identity and the kubeconfig Secret the replicator uses point at a closed port,
and so does the provider kubeconfig the CLI gets. The replicator's finalizers then wait
forever for copies it cannot delete.

  without the feature  plain `unauthenticate` exits 3 (unreachable), and deleting the tenant
                       namespace by hand leaves it terminating, held by those finalizers
  --force              exit 0; nothing of the peering is left on the consumer (namespace,
                       objects, finalizers), one printed line per object left on the provider
                       (the Tenant, the slice's copy); another peering's namespace, holding the
                       same finalizer, is untouched
  --provider-side      on the provider: no Tenant, no tenant namespace (slices, Renews,
                       RoleBindings), no CSR and no ClusterRoleBinding for that consumer;
                       another consumer's ClusterRoleBinding is untouched
  no signer            --provider-side with the provider's signer stopped takes the Tenant's
                       finalizer off after its 30 s grace; --force without a provider
                       kubeconfig names the Tenant as left
  provider answers     --force with a working provider kubeconfig clears both sides, no line
                       names anything left"""

import base64
import json
import time

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import CONSUMER_ID, PROVIDER_ID, installed  # noqa: F401
from test_slice_flow import (CNS, GROUP, PNS, consumer_signer, consumer_webhook,  # noqa: F401
                             peered, provider_signer, slices)
from bed import free_port, wait_for

IDENTITY = f"controlplane-{PROVIDER_ID}"
SECRET = f"kubeconfig-{IDENTITY}"
REPL_FINALIZER = "crdreplicator.liqo.io/resource"
OTHER_PROVIDER = "cl-other-provider"
OTHER_CONSUMER = "cl-other-consumer"
CRB = "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"
HELD_S = 15       # how long the hand-deleted namespace is watched staying


def dead_server():
    return f"https://127.0.0.1:{free_port()}"


def dead_kubeconfig(cluster, path, server):
    """The cluster's admin kubeconfig with its server on a closed port."""
    text = open(cluster.kubeconfig).read()
    path.write_text(text.replace(cluster.server, server))
    return str(path)


def names(cluster, kind, ns):
    out = cluster.kubectl("get", kind, "-n", ns, "-o", "json", check=False)
    return [o["metadata"]["name"] for o in json.loads(out.stdout)["items"]] if out.returncode == 0 else []


@pytest.fixture
def other_peering(consumer, provider):
    """Another provider's tenant namespace on the consumer, holding a Secret with the
    replicator's finalizer and a label naming our provider; another consumer's
    ClusterRoleBinding on the provider. Both must survive; removed afterwards."""
    ns = f"liqo-tenant-{OTHER_PROVIDER}"
    consumer.create_namespace(ns, labels={"liqo.io/tenant-namespace": "true",
                                          "liqo.io/remote-cluster-id": OTHER_PROVIDER})
    consumer.create({"apiVersion": "v1", "kind": "Secret",
                     "metadata": {"name": "decoy", "namespace": ns,
                                  "labels": {"liqo.io/remote-cluster-id": PROVIDER_ID},
                                  "finalizers": ["crdreplicator.liqo.io/operator"]}})
    provider.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                     "metadata": {"name": CRB + OTHER_CONSUMER},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                 "name": "view"},
                     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                   "name": OTHER_CONSUMER}]})
    yield ns
    consumer.kubectl("patch", "secret", "decoy", "-n", ns, "--type=merge", "-p",
                     '{"metadata":{"finalizers":null}}', check=False)
    consumer.delete_namespace(ns)
    provider.kubectl("delete", "clusterrolebinding", CRB + OTHER_CONSUMER, check=False)


def cut_off_provider(consumer, server):
    """The consumer's view of the provider points at a closed port: the Identity's API server,
    and the kubeconfig Secret the replicator uses, rewritten here as the Identity renders it
    (the signer writes no new kubeconfig that fails its trial on the provider, docs/signer.md:
    it would keep the working one)."""
    before = consumer.get_json("identity", IDENTITY, "-n", CNS)["spec"]["authParams"]["apiServer"]
    kc = base64.b64decode(consumer.get_json("secret", SECRET, "-n", CNS)["data"]["kubeconfig"]).decode()
    assert before in kc
    consumer.kubectl("patch", "secret", SECRET, "-n", CNS, "--type=merge", "-p", json.dumps(
        {"data": {"kubeconfig": base64.b64encode(kc.replace(before, server).encode()).decode()}}))
    consumer.kubectl("patch", "identity", IDENTITY, "-n", CNS, "--type=merge", "-p",
                     json.dumps({"spec": {"authParams": {"apiServer": server}}}))

    def rewritten():
        sec = consumer.get_json("secret", SECRET, "-n", CNS)
        return server in base64.b64decode(sec["data"]["kubeconfig"]).decode()
    wait_for(rewritten, timeout=60, what=f"Secret {SECRET} rewritten for {server}")


def test_force_unpeer_from_a_gone_provider_then_provider_side(cli, provider, consumer, slices,
                                                              other_peering, tmp_path):
    rc, out, err = slices("pool-f", "--cpu", "1", "--memory", "1Gi")
    assert rc == 0, err
    assert "ResourceSlice resources: Accepted" in err
    wait_for(lambda: provider.exists(f"resourceslices.{GROUP}", "pool-f", "-n", PNS), timeout=30,
             what="the slice's copy on the provider")
    server = dead_server()
    cut_off_provider(consumer, server)
    dead = dead_kubeconfig(provider, tmp_path / "dead.kubeconfig", server)
    ids = ("--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)

    # Without the feature: the plain command cannot reach the provider ...
    rc, out, err = cli("unauthenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       dead, *ids, "--timeout", "10s")
    assert rc == 3, out + err
    # ... and what an admin tries by hand stays terminating: the replicator's finalizers wait
    # for the provider.
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "pool-f", "-n", CNS, "--wait=false")
    consumer.kubectl("delete", "namespace", CNS, "--wait=false")
    time.sleep(HELD_S)
    assert consumer.exists("namespace", CNS)
    held = consumer.get_json(f"resourceslices.{GROUP}", "pool-f", "-n", CNS)
    assert held["metadata"].get("deletionTimestamp") and REPL_FINALIZER in held["metadata"]["finalizers"]

    # --force: the consumer's side is clear, what the provider keeps is named.
    t0 = time.monotonic()
    rc, out, err = cli("unauthenticate", "--force", "--kubeconfig", consumer.kubeconfig,
                       "--remote-kubeconfig", dead, *ids, "--timeout", "90s", timeout=150)
    assert rc == 0, out + err
    assert time.monotonic() - t0 < 90
    cmd = f"run `kubectl tenantgate unauthenticate --provider-side --remote-cluster-id {CONSUMER_ID}` on the provider"
    assert f"provider unreachable: Tenant {PNS}/{CONSUMER_ID} left: {cmd}" in out, out
    assert f"provider unreachable: ResourceSlice {PNS}/pool-f left: {cmd}" in out, out
    assert not consumer.exists("namespace", CNS)
    for kind in (f"resourceslices.{GROUP}", f"identities.{GROUP}", f"renews.{GROUP}"):
        assert names(consumer, kind, CNS) == [], kind
    # Another peering's namespace keeps its object and its finalizer.
    decoy = consumer.get_json("secret", "decoy", "-n", other_peering)
    assert decoy["metadata"]["finalizers"] == ["crdreplicator.liqo.io/operator"]
    assert not decoy["metadata"].get("deletionTimestamp")

    # The provider still holds the consumer's side ...
    assert provider.exists(f"tenants.{GROUP}", CONSUMER_ID, "-n", PNS)
    assert provider.exists("clusterrolebinding", CRB + CONSUMER_ID)
    # ... which its admin clears with one command.
    rc, out, err = cli("unauthenticate", "--provider-side", "--remote-cluster-id", CONSUMER_ID,
                       "--kubeconfig", provider.kubeconfig, "--timeout", "120s", timeout=180)
    assert rc == 0, out + err
    assert not provider.exists(f"tenants.{GROUP}", CONSUMER_ID, "-n", PNS)
    assert not provider.exists("namespace", PNS)
    assert not provider.exists("clusterrolebinding", CRB + CONSUMER_ID)
    csrs = provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={CONSUMER_ID}")["items"]
    assert csrs == []
    crbs = provider.get_json("clusterrolebindings")["items"]
    assert not [b["metadata"]["name"] for b in crbs
                if any(s.get("name") == CONSUMER_ID for s in b.get("subjects") or [])]
    assert provider.exists("clusterrolebinding", CRB + OTHER_CONSUMER)


def test_provider_side_without_the_signer_takes_the_tenant_finalizer_off(cli, provider, consumer, peered,
                                                                          provider_signer):
    """No signer to run the Tenant's finalizer: --provider-side waits its grace, takes the
    finalizer off and says so; then --force without any provider kubeconfig clears the
    consumer, naming the Tenant as left (it is not: the provider's admin went first)."""
    ids = ("--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)
    rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       provider.kubeconfig, *ids, "--timeout", "120s")
    assert rc == 0, out + err
    provider_signer.stop()
    try:
        rc, out, err = cli("unauthenticate", "--provider-side", "--remote-cluster-id", CONSUMER_ID,
                           "--kubeconfig", provider.kubeconfig, "--timeout", "120s", timeout=180)
    finally:
        provider_signer.start()
    assert rc == 0, out + err
    assert "Tenant still held after the 30s grace" in out and "its finalizer removed" in out, out
    assert not provider.exists(f"tenants.{GROUP}", CONSUMER_ID, "-n", PNS)
    assert not provider.exists("namespace", PNS)
    assert not provider.exists("clusterrolebinding", CRB + CONSUMER_ID)

    rc, out, err = cli("unauthenticate", "--force", "--kubeconfig", consumer.kubeconfig, *ids,
                       "--timeout", "90s", timeout=150)
    assert rc == 0, out + err
    assert f"provider not asked (no --remote-kubeconfig): Tenant {PNS}/{CONSUMER_ID} left" in out, out
    assert not consumer.exists("namespace", CNS)


def test_force_with_a_provider_that_answers_clears_both_sides(cli, provider, consumer, peered):
    """--force with a working provider kubeconfig: its one try at the provider clears the
    provider's side too (the signer releases the Tenant), so no line names anything left."""
    ids = ("--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)
    rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       provider.kubeconfig, *ids, "--timeout", "120s")
    assert rc == 0, out + err
    rc, out, err = cli("unauthenticate", "--force", "--kubeconfig", consumer.kubeconfig,
                       "--remote-kubeconfig", provider.kubeconfig, *ids, "--timeout", "90s", timeout=150)
    assert rc == 0, out + err
    assert " left: " not in out, out
    assert "Tenant deleted (its finalizer ran)" in out, out
    assert not consumer.exists("namespace", CNS)
    assert not provider.exists("namespace", PNS)
    assert not provider.exists("clusterrolebinding", CRB + CONSUMER_ID)
