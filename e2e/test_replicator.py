"""The consumer's CRD replicator (signer controller `replicator`, PROTOCOL.md 7) on two real clusters.

The consumer's signer runs the consumer controllers plus `replicator`; the provider runs the
webhook and the provider controllers.  A local ResourceSlice or Renew labelled for replication
is copied into the provider's tenant namespace with the consumer's ControlPlane kubeconfig
(Liqo's labels, the consumer-filled spec, admitted by the provider's webhook), the status written
on the provider comes back into the local object, and deleting the local object deletes the copy
first (finalizer crdreplicator.liqo.io/resource).  The provider's answers are real: its
`remoteresourceslice` controller signs the slice's CSR and sets the conditions, its `remoterenew`
controller answers the Renew; the consumer's slice controller turns the answer into an Identity."""

import base64
import json
import re
import time
import uuid

import pytest

from tenantgate_services import parse_prometheus, tenant_policy_suspended, webhook, webhook_install  # noqa: F401
from test_signer import (CONSUMER_CONTROLLERS, CONSUMER_ID, NS, SA, Signer, installed,  # noqa: F401
                         provider_signer)
from test_slice_consumer import _filled, _kubeconfig_of, _sign, peered  # noqa: F401
from bed import wait_for

GROUP = "authentication.liqo.io"
FINALIZER = "crdreplicator.liqo.io/resource"


@pytest.fixture(scope="module")
def consumer_signer(consumer, installed, signer_bin, tmp_path_factory):  # noqa: F811
    """The consumer's signer with the replicator (overrides test_signer's for `peered`)."""
    kc = consumer.serviceaccount_kubeconfig(NS, SA, duration="6h")
    s = Signer(signer_bin, consumer, kc, tmp_path_factory.mktemp("signer-c"), "signer-consumer",
               "--cluster-id", CONSUMER_ID, "--controllers", CONSUMER_CONTROLLERS + ",replicator").start()
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    yield s
    s.stop()


@pytest.fixture
def peer(consumer, peered):  # noqa: F811
    """`peered`, unpeered from the consumer's side first: the local slices are deleted (the
    replicator deletes their copies, then its finalizers go), then the ControlPlane Identity (its
    Renew and kubeconfig Secret with it; the Secret is held until the Renew's copy is gone),
    while the provider still grants the consumer its rights."""
    cid, pid, kc = peered
    yield peered
    cns = f"liqo-tenant-{pid}"
    consumer.kubectl("delete", "rslice", "--all", "-n", cns, "--wait=true", "--timeout=60s", check=False,
                     timeout=90)
    consumer.kubectl("delete", "identity", f"controlplane-{pid}", "-n", cns, "--wait=true", "--timeout=60s",
                     check=False, timeout=90)
    wait_for(lambda: not consumer.exists("renew", f"controlplane-{pid}", "-n", cns)
             and not consumer.exists("secret", f"kubeconfig-controlplane-{pid}", "-n", cns), timeout=60,
             what="the Renew and the kubeconfig Secret gone (finalizers released)")


def _expected_labels(local_labels, cid):
    want = {k: v for k, v in local_labels.items() if k != "liqo.io/ownership"}
    want.update({"liqo.io/replication": "false", "liqo.io/replicated": "true", "liqo.io/originID": cid,
                 "liqo.io/remote-cluster-id": cid})
    return want


def _get(cluster, kind, name, ns):
    return cluster.get_json(kind, name, "-n", ns) if cluster.exists(kind, name, "-n", ns) else None


def _create_slice(cli, consumer, pid, name, cpu="2"):
    rc, out, err = cli("create", "resourceslice", name, "--remote-cluster-id", pid, "--cpu", cpu,
                       "--kubeconfig", consumer.kubeconfig, "--timeout", "1s")
    assert rc in (0, 4), err            # 4: no verdict within the timeout
    return _filled(consumer, f"liqo-tenant-{pid}", name)


def _copy(provider, cid, name, kind="rslice", timeout=30):
    return wait_for(lambda: _get(provider, kind, name, f"liqo-tenant-{cid}"), timeout=timeout,
                    what=f"the copy of {kind} {name} on the provider")


def _status_back(consumer, provider, cid, pid, name, kind="rslice", timeout=10):
    """The local status equals the copy's (and the copy has one)."""
    def same():
        remote = (_get(provider, kind, name, f"liqo-tenant-{cid}") or {}).get("status")
        local = (_get(consumer, kind, name, f"liqo-tenant-{pid}") or {}).get("status")
        return local if remote and local == remote else None
    return wait_for(same, timeout=timeout, what=f"the provider's status of {kind} {name} back on the consumer")


def _accepted_back(consumer, provider, cid, pid, name, timeout=60):
    """The provider's Authentication=Accepted, with the same status on both sides."""
    def accepted():
        st = _status_back(consumer, provider, cid, pid, name, timeout=timeout)
        conds = {c["type"]: c["status"] for c in st.get("conditions", [])}
        return st if conds.get("Authentication") == "Accepted" else None
    return wait_for(accepted, timeout=timeout, what=f"slice {name} accepted by the provider, status back here")


def _delete_and_wait(consumer, provider, cid, pid, name, kind="rslice", timeout=60):
    consumer.kubectl("delete", kind, name, "-n", f"liqo-tenant-{pid}", "--wait=false", check=False)
    wait_for(lambda: not consumer.exists(kind, name, "-n", f"liqo-tenant-{pid}")
             and not provider.exists(kind, name, "-n", f"liqo-tenant-{cid}"), timeout=timeout,
             what=f"{kind} {name} gone on both sides")


def _creates(signer, kind="resourceslices"):
    m = signer.metrics()
    return m.get(("tenantgate_signer_replicated_total", frozenset({("kind", kind), ("action", "create")})), 0)


def test_slice_is_replicated_and_its_status_comes_back(cli, provider, consumer, consumer_signer, peer,
                                                       tmp_path):
    cid, pid, _ = peer
    cns, pns = f"liqo-tenant-{pid}", f"liqo-tenant-{cid}"
    spec = _create_slice(cli, consumer, pid, "mypool")

    # The copy: same name, Liqo's labels, the consumer-filled spec, admitted by the provider's
    # webhook (which checks the CSR against the Tenant); the local object holds the finalizer.
    copy = _copy(provider, cid, "mypool")
    local = consumer.get_json("rslice", "mypool", "-n", cns)
    assert copy["metadata"]["labels"] == _expected_labels(local["metadata"]["labels"], cid)
    assert copy["metadata"]["labels"]["liqo.io/remoteID"] == pid
    assert copy["spec"] == spec == local["spec"]
    assert FINALIZER in local["metadata"]["finalizers"]
    assert "ownerReferences" not in copy["metadata"]

    # The provider's verdict comes back, and the consumer's slice controller turns it into an
    # Identity whose kubeconfig authenticates on the provider.
    status = _accepted_back(consumer, provider, cid, pid, "mypool")
    assert status["authParams"]["signedCRT"]
    kc = tmp_path / "slice.kubeconfig"
    kc.write_bytes(_kubeconfig_of(consumer, cns, "resourceslice-mypool"))
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
    assert cid in who["status"]["userInfo"]["groups"]

    # Spec goes down when it changes; the local spec is never taken from the provider.
    consumer.kubectl("patch", "rslice", "mypool", "-n", cns, "--type=merge",
                     "-p", '{"spec":{"resources":{"cpu":"3"}}}')
    wait_for(lambda: provider.get_json("rslice", "mypool", "-n", pns)["spec"]["resources"] == {"cpu": "3"},
             timeout=10, what="the new spec on the provider")
    wait_for(lambda: ((_status_back(consumer, provider, cid, pid, "mypool", timeout=30).get("resources") or {})
                      .get("cpu") == "3"), timeout=30, what="the provider's grant for the new spec back here")
    provider.kubectl("patch", "rslice", "mypool", "-n", pns, "--type=merge",
                     "-p", '{"spec":{"class":"gold"}}')
    wait_for(lambda: provider.get_json("rslice", "mypool", "-n", pns)["spec"].get("class") == "default",
             timeout=10, what="the provider-side spec change undone (spec goes down only)")
    assert consumer.get_json("rslice", "mypool", "-n", cns)["spec"].get("class") == "default"

    # Deleting the local slice deletes the copy first, then the local object.
    consumer.kubectl("delete", "rslice", "mypool", "-n", cns, "--wait=false")
    wait_for(lambda: not provider.exists("rslice", "mypool", "-n", pns), timeout=30,
             what="the copy deleted on the provider")
    wait_for(lambda: not consumer.exists("rslice", "mypool", "-n", cns), timeout=30,
             what="the local slice gone once its finalizer is removed")
    assert _creates(consumer_signer) >= 1


def test_renew_is_replicated_and_the_providers_answer_comes_back(provider, consumer, consumer_signer,
                                                                 provider_signer, peer):
    """The consumer's Renew reaches the provider as the consumer's ControlPlane user, the provider's
    remoterenew controller answers it from the Tenant, and the answer comes back."""
    cid, pid, _ = peer
    name = f"controlplane-{pid}"
    local = wait_for(lambda: _get(consumer, "renew", name, f"liqo-tenant-{pid}"), timeout=30, what="Renew")
    copy = _copy(provider, cid, name, kind="renew")
    assert copy["metadata"]["labels"] == _expected_labels(local["metadata"]["labels"], cid)
    assert copy["spec"] == {"consumerClusterID": cid, "identityType": "ControlPlane"}
    tenant = provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
    status = _status_back(consumer, provider, cid, pid, name, kind="renew", timeout=30)
    assert status["authParams"]["signedCRT"] == tenant["status"]["authParams"]["signedCRT"]
    assert FINALIZER in consumer.get_json("renew", name, "-n", f"liqo-tenant-{pid}")["metadata"]["finalizers"]


def test_namespacemap_is_replicated_and_its_status_comes_back(provider, consumer, consumer_signer,
                                                              provider_signer, peer):
    """NamespaceMaps (Liqo's offloading module; the bed serves a minimal CRD from e2e/testdata on
    both sides) travel like slices: the copy, with Liqo's labels and the spec, in the provider's
    tenant namespace as the consumer's ControlPlane user; the status the provider's offloading
    module writes comes back; deleting the local map deletes the copy first."""
    cid, pid, _ = peer
    name = f"nsmap-{uuid.uuid4().hex[:6]}"
    cns = f"liqo-tenant-{pid}"
    labels = {"liqo.io/replication": "true", "liqo.io/remoteID": pid, "liqo.io/remote-cluster-id": pid}
    spec = {"desiredMapping": {"default": f"default-{cid}"}}
    consumer.kubectl("apply", "-f", "-", input={
        "apiVersion": "offloading.liqo.io/v1beta1", "kind": "NamespaceMap",
        "metadata": {"name": name, "namespace": cns, "labels": labels}, "spec": spec})
    copy = _copy(provider, cid, name, kind="namespacemap")
    assert copy["metadata"]["labels"] == _expected_labels(labels, cid)
    assert copy["spec"] == spec
    assert FINALIZER in consumer.get_json("namespacemap", name, "-n", cns)["metadata"]["finalizers"]
    answer = {"currentMapping": {"default": {"remoteNamespace": f"default-{cid}", "phase": "Accepted"}}}
    provider.kubectl("patch", "namespacemap", name, "-n", f"liqo-tenant-{cid}", "--subresource=status",
                     "--type=merge", "-p", json.dumps({"status": answer}))
    assert _status_back(consumer, provider, cid, pid, name, kind="namespacemap", timeout=30) == answer
    assert _creates(consumer_signer, kind="namespacemaps") >= 1
    _delete_and_wait(consumer, provider, cid, pid, name, kind="namespacemap")


def _ignored(signer):
    """What the replicator's watches dropped as out of its scope (the one scope metric)."""
    return signer.metrics().get(("tenantgate_signer_out_of_scope_total",
                                 frozenset({("controller", "replicator")})), 0)


def _logged_once(signer, ns, name, reason):
    return len([ln for ln in signer.log().splitlines()
                if f'"controller":"replicator","namespace":"{ns}","name":"{name}","reason":"{reason}"' in ln])


def test_labelled_secret_outside_its_tenant_namespace_is_never_used(provider, consumer, consumer_signer, peer):
    """Whoever may create Secrets in some namespace cannot point the replicator at a server (and
    have its answers written into the /status of that namespace's objects): only liqo-tenant-P,
    labelled as P's tenant namespace, holds P's ControlPlane kubeconfig, labelled for P.  Here
    the real kubeconfig, so that using it would visibly work: copied into a user namespace, into
    liqo-tenant-P labelled for another cluster, and into a namespace labelled as P's tenant
    namespace under another name; a NamespaceMap beside each is neither replicated nor given a
    finalizer.  The replicator's watches are judged by the signer's one scope rule (issue 36):
    each Secret and map is logged once and counted in out_of_scope_total{controller=replicator}."""
    cid, pid, _ = peer
    cns, pns = f"liqo-tenant-{pid}", f"liqo-tenant-{cid}"
    rogue_ns, other = f"team-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:4]}"
    labelled_ns = f"tenant-{uuid.uuid4().hex[:6]}"
    kubeconfig = consumer.get_json("secret", f"kubeconfig-controlplane-{pid}", "-n", cns)["data"]["kubeconfig"]
    consumer.kubectl("create", "namespace", rogue_ns)
    with tenant_policy_suspended(consumer):   # the signer's own rule, as if the policy were missing
        consumer.create_namespace(labelled_ns, {"liqo.io/tenant-namespace": "true", "liqo.io/remote-cluster-id": pid})
    cases = [(rogue_ns, pid, "namespace"), (cns, other, "peer"), (labelled_ns, pid, "namespace")]
    before = _ignored(consumer_signer)
    try:
        for ns, labelled_for, _ in cases:
            consumer.kubectl("apply", "-f", "-", input={
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": f"stolen-{labelled_for}", "namespace": ns,
                             "labels": {"liqo.io/identity-type": "ControlPlane",
                                        "liqo.io/remote-cluster-id": labelled_for},
                             "annotations": {"liqo.io/remote-tenant-namespace": pns}},
                "data": {"kubeconfig": kubeconfig}})
            consumer.kubectl("apply", "-f", "-", input={
                "apiVersion": "offloading.liqo.io/v1beta1", "kind": "NamespaceMap",
                "metadata": {"name": f"rogue-{labelled_for}", "namespace": ns,
                             "labels": {"liqo.io/replication": "true", "liqo.io/remoteID": labelled_for,
                                        "liqo.io/remote-cluster-id": labelled_for}},
                "spec": {"desiredMapping": {"default": "stolen"}}})
        wait_for(lambda: _ignored(consumer_signer) >= before + 2 * len(cases), timeout=15,
                 what="the replicator counting each Secret and map out of its scope")
        time.sleep(5)                     # what the replicator would have done by now, it did not
        for ns, labelled_for, reason in cases:
            assert not provider.exists("namespacemap", f"rogue-{labelled_for}", "-n", pns)
            local = consumer.get_json("namespacemap", f"rogue-{labelled_for}", "-n", ns)
            assert FINALIZER not in local["metadata"].get("finalizers", []), ns
            assert not consumer.get_json("secret", f"stolen-{labelled_for}", "-n", ns)["metadata"].get("finalizers")
            assert _logged_once(consumer_signer, ns, f"stolen-{labelled_for}", reason) == 1, (ns, reason)
            assert _logged_once(consumer_signer, ns, f"rogue-{labelled_for}", reason) == 1, (ns, reason)
        assert _ignored(consumer_signer) == before + 2 * len(cases)
        assert not [ln for ln in consumer_signer.log().splitlines()
                    if "watching the remote tenant namespace" in ln and "stolen-" in ln]
    finally:
        consumer.kubectl("delete", "namespace", rogue_ns, labelled_ns, "--wait=false", check=False)
        consumer.kubectl("delete", "secret,namespacemap", f"stolen-{other}", f"rogue-{other}", "-n", cns,
                         "--ignore-not-found", "--wait=false", check=False)


def test_consumer_signer_restart_and_provider_apiserver_restart_lose_and_duplicate_nothing(
        cli, provider, consumer, consumer_signer, peer):
    cid, pid, _ = peer
    cns, pns = f"liqo-tenant-{pid}", f"liqo-tenant-{cid}"
    specs = {}
    for n in ("keep", "gone"):
        specs[n] = _create_slice(cli, consumer, pid, n)
        _copy(provider, cid, n)
    uids = {n: provider.get_json("rslice", n, "-n", pns)["metadata"]["uid"] for n in ("keep", "gone")}

    # The signer dies mid-flow (the provider answers meanwhile); one slice is deleted locally
    # (its finalizer holds it), and a third slice is created.
    consumer_signer.kill()
    consumer.kubectl("delete", "rslice", "gone", "-n", cns, "--wait=false")
    rc, out, err = cli("create", "resourceslice", "late", "--remote-cluster-id", pid,
                       "--kubeconfig", consumer.kubeconfig, "--timeout", "1s")
    assert rc == 4, err
    time.sleep(1)
    assert consumer.exists("rslice", "gone", "-n", cns)       # held by the finalizer
    consumer_signer.start()
    _accepted_back(consumer, provider, cid, pid, "keep")
    wait_for(lambda: not consumer.exists("rslice", "gone", "-n", cns)
             and not provider.exists("rslice", "gone", "-n", pns), timeout=60, what="'gone' gone on both sides")
    _copy(provider, cid, "late", timeout=60)
    # Nothing duplicated: the surviving copy is the same object, and the restarted signer
    # created only the one it had never seen.
    assert provider.get_json("rslice", "keep", "-n", pns)["metadata"]["uid"] == uids["keep"]
    assert _creates(consumer_signer) == 1
    names = sorted(i["metadata"]["name"] for i in provider.get_json("rslice", "-n", pns)["items"])
    assert names == ["keep", "late"], names

    _accepted_back(consumer, provider, cid, pid, "late")

    # The provider's apiserver restarts: the remote watch resumes; a spec change made afterwards
    # goes down, and the provider's new grant comes back.
    provider.restart_apiserver()
    consumer.kubectl("patch", "rslice", "late", "-n", cns, "--type=merge", "-p", '{"spec":{"resources":{"pods":"5"}}}')
    wait_for(lambda: provider.get_json("rslice", "late", "-n", pns)["spec"].get("resources") == {"pods": "5"},
             timeout=90, what="the spec change after the provider restart")
    wait_for(lambda: ((_status_back(consumer, provider, cid, pid, "late", timeout=90).get("resources") or {})
                      .get("pods") == "5"), timeout=90, what="the provider's new grant back after its restart")
    assert _creates(consumer_signer) == 1

    # The consumer's apiserver restarts: the local informers and the Secret watch list again; a
    # slice made afterwards is copied and accepted, and nothing already copied is made twice.
    consumer.restart_apiserver()
    _create_slice(cli, consumer, pid, "after")
    _copy(provider, cid, "after", timeout=90)
    _accepted_back(consumer, provider, cid, pid, "after", timeout=90)
    assert _creates(consumer_signer) == 2
    assert provider.get_json("rslice", "keep", "-n", pns)["metadata"]["uid"] == uids["keep"]
    for n in ("keep", "late", "after"):
        _delete_and_wait(consumer, provider, cid, pid, n)


def _with(kubeconfig_b64, key, value):
    """The kubeconfig text with one scalar replaced (the signer writes one key per line)."""
    text = base64.b64decode(kubeconfig_b64).decode()
    out = re.sub(rf"(?m)^(\s*{re.escape(key)}:\s*).*$", lambda m: m.group(1) + value, text)
    assert out != text, key
    return base64.b64encode(out.encode()).decode()


def test_replaced_controlplane_kubeconfig_is_picked_up(cli, provider, consumer, consumer_signer, peer):
    """The ControlPlane kubeconfig Secret changes: the remote client is rebuilt from its new
    content.  A Secret pointing nowhere stops replication; a renewed one (a new certificate for
    the same key, as a renewal brings it) resumes it."""
    cid, pid, _ = peer
    cns, pns = f"liqo-tenant-{pid}", f"liqo-tenant-{cid}"
    secret = f"kubeconfig-controlplane-{pid}"
    _create_slice(cli, consumer, pid, "before")
    _copy(provider, cid, "before")
    good = consumer.get_json("secret", secret, "-n", cns)["data"]["kubeconfig"]

    def put(kc_b64):
        consumer.kubectl("patch", "secret", secret, "-n", cns, "--type=merge",
                         "-p", json.dumps({"data": {"kubeconfig": kc_b64}}))

    put(_with(good, "server", "https://127.0.0.1:9"))        # nothing listens there
    _create_slice(cli, consumer, pid, "blocked")
    time.sleep(5)
    assert not provider.exists("rslice", "blocked", "-n", pns), "replicated with a kubeconfig pointing nowhere"

    tenant = provider.get_json("tenant", cid, "-n", pns)
    cert = _sign(provider, base64.b64decode(tenant["spec"]["csr"]), uuid.uuid4().hex[:6])
    renewed = _with(good, "client-certificate-data", base64.b64encode(cert).decode())
    assert renewed != good
    put(renewed)
    _copy(provider, cid, "blocked", timeout=60)
    assert consumer_signer.log().count("ControlPlane kubeconfig changed") >= 2
    log = consumer_signer.log()
    assert "client-key-data" not in log and base64.b64encode(cert).decode()[:40] not in log   # never logged

    for n in ("before", "blocked"):
        _delete_and_wait(consumer, provider, cid, pid, n)
