"""The consumer's half of resource acquisition, on the two real clusters.

tenantgate-signer's resourceslice controller fills a local slice's request (consumerClusterID,
providerClusterID, and a CSR for CN <name>-<12 hex of sha256(consumer)>, O <consumer> under the
cluster key), and turns the provider's verdict into Identity resourceslice-<name>, whose
kubeconfig the Identity controller writes.

The replication and the provider's slice controller are not in tenantgate yet, so this test
plays both: it copies the slice into the provider's tenant namespace with the consumer's own
ControlPlane kubeconfig (so the provider's webhook checks the CSR against the Tenant, for real),
has the provider's API server sign the CSR, and writes the verdict back into the consumer's
slice status, as the replicator would. What is checked is what tenantgate does with it: the
request, the Identity, and a kubeconfig that authenticates on the provider as the slice's user
in the consumer's group."""

import base64
import hashlib
import json
import re
import time
import uuid
from pathlib import Path

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import CONSUMER_ID, consumer_signer, installed, provider_signer  # noqa: F401
from bed import openssl, wait_for

GROUP = "authentication.liqo.io"


@pytest.fixture
def peered(cli, provider, consumer, provider_signer, consumer_signer, tmp_path):
    """A consumer authenticated with the provider: (cid, pid, ControlPlane kubeconfig path).
    The consumer's id is its signer's (the slice and Renew controllers write it); the provider's
    is fresh per test, and the provider's tenant namespace is gone before the next test."""
    cid, pid = CONSUMER_ID, f"p-{uuid.uuid4().hex[:6]}"
    # The consumer's signer makes the cluster key at its first start.
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", "liqo"), timeout=60,
             what="the consumer signer's authentication-keys")
    rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       provider.kubeconfig, "--cluster-id", cid, "--remote-cluster-id", pid)
    assert rc == 0, out + err
    kc = tmp_path / "controlplane.kubeconfig"
    kc.write_bytes(_kubeconfig_of(consumer, f"liqo-tenant-{pid}", f"controlplane-{pid}"))
    yield cid, pid, kc
    for c, ns in ((provider, f"liqo-tenant-{cid}"), (consumer, f"liqo-tenant-{pid}")):
        c.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", ns, "--wait=false", check=False)
    provider.kubectl("delete", "tenant", "--all", "-n", f"liqo-tenant-{cid}", "--wait=true",
                     "--timeout=60s", check=False)
    provider.kubectl("delete", "namespace", f"liqo-tenant-{cid}", "--wait=true", "--timeout=120s",
                     check=False, timeout=150)
    consumer.kubectl("delete", "namespace", f"liqo-tenant-{pid}", "--wait=false", check=False)


def _kubeconfig_of(consumer, ns, identity):
    ref = wait_for(lambda: ((consumer.get_json("identity", identity, "-n", ns).get("status") or {})
                            .get("kubeconfigSecretRef") or {}).get("name"),
                   timeout=30, what=f"Identity {identity} status.kubeconfigSecretRef")
    return base64.b64decode(consumer.get_json("secret", ref, "-n", ns)["data"]["kubeconfig"])


def _filled(consumer, ns, name):
    def look():
        spec = consumer.get_json("rslice", name, "-n", ns)["spec"]
        return spec if all(spec.get(k) for k in ("consumerClusterID", "providerClusterID", "csr")) else None
    return wait_for(look, timeout=30, what="the consumer signer to fill the slice's request")


def _replicate(provider, kc, cid, slice_obj):
    """What Liqo's replicator does, as the consumer's ControlPlane user."""
    copy = {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": slice_obj["metadata"]["name"], "namespace": f"liqo-tenant-{cid}",
                         "labels": {**slice_obj["metadata"]["labels"], "liqo.io/replication": "false",
                                    "liqo.io/replicated": "true", "liqo.io/originID": cid,
                                    "liqo.io/remote-cluster-id": cid}},
            "spec": slice_obj["spec"]}
    return provider.kubectl("create", "-f", "-", input=copy, kubeconfig=kc, check=False)


def _sign(provider, csr_pem, tag):
    """The provider's API server signs the request (the provider controller's job, still to come)."""
    name = f"slice-{tag}"
    provider.create({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                     "metadata": {"name": name},
                     "spec": {"request": base64.b64encode(csr_pem).decode(),
                              "signerName": "kubernetes.io/kube-apiserver-client",
                              "expirationSeconds": 3600, "usages": ["digital signature", "client auth"]}})
    provider.kubectl("certificate", "approve", name)
    cert = provider.wait_csr_certificate(name)
    provider.kubectl("delete", "csr", name, check=False)
    return cert


def _verdict(consumer, ns, name, auth, cert=None, provider=None):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = {"conditions": [{"type": "Authentication", "status": auth, "lastTransitionTime": now,
                              "reason": f"ResourceSliceAuthentication{auth}",
                              "message": f"ResourceSlice authentication {auth.lower()}"}]}
    if cert is not None:
        status["authParams"] = {"signedCRT": base64.b64encode(cert).decode(),
                                "ca": base64.b64encode(Path(provider.ca_file).read_bytes()).decode(),
                                "apiServer": provider.server}
    consumer.kubectl("patch", "rslice", name, "-n", ns, "--subresource=status", "--type=merge",
                     "-p", json.dumps({"status": status}))


def test_slice_request_identity_and_kubeconfig(cli, provider, consumer, peered, tmp_path):
    cid, pid, kc = peered
    ns = f"liqo-tenant-{pid}"
    rc, out, err = cli("create", "resourceslice", "mypool", "--remote-cluster-id", pid, "--cpu", "2",
                       "--kubeconfig", consumer.kubeconfig, "--timeout", "2s")
    assert rc == 4, err                         # no provider controller answers yet
    spec = _filled(consumer, ns, "mypool")
    user = f"mypool-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"
    assert spec["consumerClusterID"] == cid and spec["providerClusterID"] == pid
    csr_pem = base64.b64decode(spec["csr"])
    subject = openssl("req", "-in", "/dev/stdin", "-noout", "-subject", input=csr_pem).decode()
    assert subject.strip() == f"subject=O = {cid}, CN = {user}", subject

    # The CSR is never regenerated: a later update keeps it.
    consumer.kubectl("patch", "rslice", "mypool", "-n", ns, "--type=merge",
                     "-p", '{"spec":{"resources":{"cpu":"3"}}}')
    time.sleep(1)
    assert consumer.get_json("rslice", "mypool", "-n", ns)["spec"]["csr"] == spec["csr"]

    # The provider's webhook admits the replicated copy: CN, O and key match the Tenant.
    obj = consumer.get_json("rslice", "mypool", "-n", ns)
    proc = _replicate(provider, kc, cid, obj)
    assert proc.returncode == 0, proc.stderr

    # Accepted -> Identity resourceslice-mypool -> kubeconfig -> whoami on the provider.
    cert = _sign(provider, csr_pem, uuid.uuid4().hex[:6])
    _verdict(consumer, ns, "mypool", "Accepted", cert, provider)
    ident = wait_for(lambda: consumer.get_json("identity", "resourceslice-mypool", "-n", ns)
                     if consumer.exists("identity", "resourceslice-mypool", "-n", ns) else None,
                     timeout=30, what="Identity resourceslice-mypool")
    assert ident["spec"]["type"] == "ResourceSlice" and ident["spec"]["clusterID"] == pid
    assert ident["metadata"]["labels"] == {"liqo.io/remote-cluster-id": pid,
                                           "liqo.io/resourceslice-name": "mypool"}
    owner = ident["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "ResourceSlice" and owner["name"] == "mypool" and owner["controller"]
    slice_kc = tmp_path / "slice.kubeconfig"
    slice_kc.write_bytes(_kubeconfig_of(consumer, ns, "resourceslice-mypool"))
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=slice_kc).stdout)
    assert who["status"]["userInfo"]["username"] == user
    assert cid in who["status"]["userInfo"]["groups"]

    # Denied -> the Identity goes.
    _verdict(consumer, ns, "mypool", "Denied")
    wait_for(lambda: not consumer.exists("identity", "resourceslice-mypool", "-n", ns), timeout=30,
             what="Identity resourceslice-mypool deleted")

    # Accepted again, then the slice deleted -> Identity and kubeconfig garbage-collected.
    _verdict(consumer, ns, "mypool", "Accepted", cert, provider)
    _kubeconfig_of(consumer, ns, "resourceslice-mypool")
    rc, out, err = cli("delete", "resourceslice", "mypool", "--remote-cluster-id", pid, "--wait",
                       "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, err
    wait_for(lambda: not consumer.exists("identity", "resourceslice-mypool", "-n", ns)
             and not consumer.exists("secret", "kubeconfig-resourceslice-mypool", "-n", ns),
             timeout=60, what="Identity and kubeconfig garbage-collected")


def test_revocable_slice_request(cli, provider, consumer, peered):
    """`create resourceslice --revocable`: the consumer signer's CSR carries a fresh group of the
    slice user in place of O=<consumer> (docs/revocation.md "Slices"), and the provider's webhook
    admits the replicated copy."""
    cid, pid, kc = peered
    ns = f"liqo-tenant-{pid}"
    rc, out, err = cli("create", "resourceslice", "revpool", "--remote-cluster-id", pid, "--revocable",
                       "--kubeconfig", consumer.kubeconfig, "--timeout", "1s")
    assert rc == 4, err                         # no provider controller answers here
    spec = _filled(consumer, ns, "revpool")
    user = f"revpool-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"
    subject = openssl("req", "-in", "/dev/stdin", "-noout", "-subject", "-nameopt", "RFC2253",
                      input=base64.b64decode(spec["csr"])).decode().strip()
    assert re.fullmatch(rf"subject=CN={user},O=tenantgate.io/cert:{user}:[0-9a-f]{{32}}", subject), subject
    proc = _replicate(provider, kc, cid, consumer.get_json("rslice", "revpool", "-n", ns))
    assert proc.returncode == 0, proc.stderr
    provider.kubectl("delete", "rslice", "revpool", "-n", f"liqo-tenant-{cid}")
    consumer.kubectl("delete", "rslice", "revpool", "-n", ns)


def test_slice_of_unknown_provider_is_left_alone_with_a_reason(cli, consumer, consumer_signer, namespace):
    """A local slice whose provider cannot be told (no label on it or its namespace) gets no CSR:
    its namespace is no tenant namespace, so the slice is out of the controller's scope."""
    ns = namespace(consumer, "rsnolabel")
    consumer.create({"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
                     "metadata": {"name": "lost", "namespace": ns,
                                  "labels": {"liqo.io/replication": "true", "liqo.io/remoteID": "x"}},
                     "spec": {"class": "default"}})
    wait_for(lambda: any(f'"controller":"resourceslice","namespace":"{ns}","name":"lost"' in line
                         for line in consumer_signer.log().splitlines()), timeout=30,
             what="the signer to log why it cannot fill the slice")
    assert "csr" not in consumer.get_json("rslice", "lost", "-n", ns)["spec"]


def test_controlplane_renew_brings_the_new_certificate(provider, consumer, peered, tmp_path):
    """Liqo v1.2: the consumer keeps a Renew per ControlPlane Identity; when the provider's
    answer (replicated back into its status) carries another certificate, the Identity and
    its kubeconfig take it. The test signs the Tenant's CSR again, as the provider's renewal
    does, and plays the replicator."""
    cid, pid, _ = peered
    ns, name = f"liqo-tenant-{pid}", f"controlplane-{pid}"
    renew = wait_for(lambda: consumer.get_json("renew", name, "-n", ns)
                     if consumer.exists("renew", name, "-n", ns) else None,
                     timeout=30, what=f"Renew {name}")
    assert renew["metadata"]["labels"] == {"liqo.io/replication": "true", "liqo.io/remoteID": pid,
                                           "liqo.io/remote-cluster-id": pid}
    assert renew["spec"] == {"consumerClusterID": cid, "identityType": "ControlPlane"}
    owner = renew["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "Identity" and owner["name"] == name and owner["controller"]

    tenant = provider.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
    old = consumer.get_json("identity", name, "-n", ns)["spec"]["authParams"]
    cert = _sign(provider, base64.b64decode(tenant["spec"]["csr"]), uuid.uuid4().hex[:6])
    new_crt = base64.b64encode(cert).decode()
    assert new_crt != old["signedCRT"]
    answer = {**tenant["status"]["authParams"], "signedCRT": new_crt}
    consumer.kubectl("patch", "renew", name, "-n", ns, "--subresource=status", "--type=merge",
                     "-p", json.dumps({"status": {"authParams": answer}}))
    wait_for(lambda: consumer.get_json("identity", name, "-n", ns)["spec"]["authParams"]["signedCRT"]
             == new_crt, timeout=30, what="the Identity to take the renewed certificate")

    def kubeconfig_has_new_cert():
        kc = _kubeconfig_of(consumer, ns, name)
        return kc if cert.decode().strip().splitlines()[1] in base64.b64decode(
            [line.split(":", 1)[1].strip() for line in kc.decode().splitlines()
             if "client-certificate-data" in line][0]).decode() else None
    kc_bytes = wait_for(kubeconfig_has_new_cert, timeout=30, what="the kubeconfig to carry the new certificate")
    path = tmp_path / "renewed.kubeconfig"
    path.write_bytes(kc_bytes)
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=path).stdout)
    assert who["status"]["userInfo"]["username"] == cid


def test_provider_answers_a_replicated_renew_from_the_tenant(provider, consumer, peered):
    """The provider's remoterenew controller fills a consumer's replicated Renew with the
    Tenant's current credentials, and puts them back when they drift."""
    cid, pid, kc = peered
    cns, pns, name = f"liqo-tenant-{pid}", f"liqo-tenant-{cid}", f"controlplane-{pid}"
    renew = wait_for(lambda: consumer.get_json("renew", name, "-n", cns)
                     if consumer.exists("renew", name, "-n", cns) else None, timeout=30, what="Renew")
    copy = {"apiVersion": f"{GROUP}/v1beta1", "kind": "Renew",
            "metadata": {"name": name, "namespace": pns,
                         "labels": {**renew["metadata"]["labels"], "liqo.io/replication": "false",
                                    "liqo.io/replicated": "true", "liqo.io/originID": cid,
                                    "liqo.io/remote-cluster-id": cid}},
            "spec": renew["spec"]}
    proc = provider.kubectl("create", "-f", "-", input=copy, kubeconfig=kc, check=False)
    assert proc.returncode == 0, proc.stderr          # the consumer's own rights suffice
    want = provider.get_json("tenant", cid, "-n", pns)["status"]["authParams"]

    def answered():
        got = (provider.get_json("renew", name, "-n", pns).get("status") or {}).get("authParams")
        return got if got and got.get("signedCRT") == want["signedCRT"] else None
    got = wait_for(answered, timeout=30, what="the provider to answer the Renew")
    assert got == want
    provider.kubectl("patch", "renew", name, "-n", pns, "--subresource=status", "--type=merge",
                     "-p", json.dumps({"status": {"authParams": {"signedCRT": base64.b64encode(b"x").decode()}}}))
    wait_for(answered, timeout=30, what="the provider to put the Tenant's certificate back")
