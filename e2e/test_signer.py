"""tenantgate-signer on two real clusters (PROTOCOL.md 6 and 7).

The provider runs the webhook (tenantgate_services fixtures) and a signer with the provider
controllers (nonce, tenant, approver, signer); the consumer runs a signer with the consumer
controllers (keys, noncesigner, identity).  Both signers are host processes with their own
ServiceAccount's token, bound only by manifests/signer/.  The whole onboarding is real: the
consumer's keys are created by its signer, the nonce by the provider's, the consumer's signer
signs it, the Tenant passes the webhook, the controller-manager signs the approved CSR, and
the kubeconfig the consumer's signer writes is used for real requests."""

import base64
import contextlib
import hashlib
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tenantgate_services import (denial, http_get, parse_prometheus,  # noqa: F401
                                 tenant_namespace_manifest, webhook, webhook_install)
from bed import HostProcess, free_port, openssl, wait_for

NS = "liqo"
SA = "tenantgate-signer"
CLUSTER_ROLES = ("tenantgate-signer", "tenantgate-signer-own-signer", "tenantgate-remote-consumer",
                 "liqo-virtual-kubelet-remote-clusterwide")
# No ClusterRole is labelled remote-controlplane here (no Liqo): the consumer's binding is to
# tenantgate's own role, under Liqo's naming (docs/LIQO.md, "Rights").
CONSUMER_BINDING = "liqo-binding-tenantgate-remote-consumer"
# NamespaceMaps belong to Liqo's offloading module: a minimal CRD from e2e/testdata, for RBAC checks.
TEST_CRDS = ("namespacemaps.offloading.liqo.io",)
PROVIDER_ID = "cl-provider"
# the provider signer's --cluster-labels, offered in accepted slices' status.nodeLabels
NODE_LABELS = {"topology.kubernetes.io/region": "e2e-west", "tenantgate.io/tier": ""}
CONSUMER_ID = "cl-consumer"
PROVIDER_CONTROLLERS = "nonce,tenant,approver,signer,remoterenew,remoteresourceslice"
CONSUMER_CONTROLLERS = "keys,noncesigner,identity,resourceslice,renew"


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def unb64(text):
    return base64.b64decode(text)


class Signer:
    """tenantgate-signer as a host process; restartable with other flags."""

    def __init__(self, binary, cluster, kubeconfig, log_dir, name, *args):
        self.binary, self.cluster, self.kubeconfig = binary, cluster, kubeconfig
        self.log_dir, self.name, self.base_args = Path(log_dir), name, list(args)
        self.process = None
        self.starts = 0

    def start(self, *extra):
        self.starts += 1
        self.metrics_port = free_port()
        args = [self.binary, "--kubeconfig", self.kubeconfig, "--log-level", "debug",
                "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.base_args, *extra]
        self.process = HostProcess(args, self.log_dir / f"{self.name}-{self.starts}.log")
        self.process.name = self.name
        return self

    def stop(self):
        return self.process.stop() if self.process else None

    def kill(self):
        self.process.proc.kill()
        self.process.proc.wait()

    def metrics(self):
        status, body = http_get(self.metrics_port, "/metrics")
        assert status == 200, body
        return parse_prometheus(body)

    def log(self):
        return self.process.log_path.read_text(errors="replace") if self.process else ""


def _apply_signer_rbac(cluster, source_dir):
    d = source_dir / "manifests" / "signer"
    cluster.create_namespace(NS)
    for f in ("serviceaccount.yaml", "rbac.yaml", "remote-consumer-clusterrole.yaml",
              "own-signer-rbac.yaml"):
        cluster.kubectl("apply", "-f", d / f)
    for f in sorted((Path(__file__).parent / "testdata").glob("*.yaml")):
        cluster.kubectl("apply", "-f", f)
    for crd in TEST_CRDS:
        cluster.wait_established(crd, timeout=30)


def _remove_signer_rbac(cluster):
    for name in CLUSTER_ROLES:
        cluster.kubectl("delete", "clusterrolebinding", name, "--ignore-not-found", check=False)
        cluster.kubectl("delete", "clusterrole", name, "--ignore-not-found", check=False)
    for crd in TEST_CRDS:
        cluster.kubectl("delete", "crd", crd, "--ignore-not-found", "--wait=false", check=False)


@pytest.fixture(scope="module")
def installed(provider, consumer, crds, webhook, source_dir):
    try:
        for c in (provider, consumer):
            _apply_signer_rbac(c, source_dir)
        yield
    finally:
        for c in (provider, consumer):
            _remove_signer_rbac(c)
        # Wait until it is gone: the next module that installs the signer creates it
        # again at once, and a namespace still terminating refuses new content.
        consumer.kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true",
                         "--timeout=120s", check=False, timeout=150)


@pytest.fixture(scope="module")
def provider_signer(provider, installed, signer_bin, tmp_path_factory):
    kc = provider.serviceaccount_kubeconfig(NS, SA, duration="6h")
    s = Signer(signer_bin, provider, kc, tmp_path_factory.mktemp("signer-p"), "signer-provider",
               "--cluster-id", PROVIDER_ID, "--controllers", PROVIDER_CONTROLLERS,
               "--cluster-labels", ",".join(f"{k}={v}" for k, v in NODE_LABELS.items())).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def consumer_signer(consumer, installed, signer_bin, tmp_path_factory):
    kc = consumer.serviceaccount_kubeconfig(NS, SA, duration="6h")
    s = Signer(signer_bin, consumer, kc, tmp_path_factory.mktemp("signer-c"), "signer-consumer",
               "--cluster-id", CONSUMER_ID, "--controllers", CONSUMER_CONTROLLERS).start()
    # The cluster key is made at the signer's first start (the previous module's teardown
    # removed it with namespace liqo); commands that read it must not race that start.
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    yield s
    s.stop()


@pytest.fixture
def cid():
    """A fresh consumer cluster id per test, so tests never share a tenant namespace."""
    return f"c-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def tenant_space(provider, consumer, cid):
    """Tenant namespace on the provider (liqo-tenant-<cid>) and on the consumer
    (liqo-tenant-<provider>: the name is the anchor, so one per provider); deleted afterwards,
    the consumer's waited for, as the next test makes it again."""
    pns = f"liqo-tenant-{cid}"
    cns = f"liqo-tenant-{PROVIDER_ID}"
    provider.apply(tenant_namespace_manifest(cid))
    consumer.apply(tenant_namespace_manifest(PROVIDER_ID, name=cns))
    yield pns, cns
    provider.kubectl("delete", "tenant", "--all", "-n", pns, "--wait=false", check=False)
    provider.delete_namespace(pns)
    consumer.kubectl("delete", "namespace", cns, "--ignore-not-found", "--wait=true", "--timeout=120s",
                     timeout=150)


# --- the onboarding steps -----------------------------------------------------------------

def provider_nonce(provider, cid, pns, timeout=10):
    """Create the labelled, empty liqo-nonce; the provider signer fills it."""
    provider.apply({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "liqo-nonce", "namespace": pns,
                                 "labels": {"liqo.io/nonce": "true",
                                            "liqo.io/remote-cluster-id": cid}}})

    def filled():
        d = provider.get_json("secret", "liqo-nonce", "-n", pns).get("data") or {}
        return unb64(d["nonce"]).decode() if d.get("nonce") else None
    return wait_for(filled, timeout=timeout, what="nonce filled by the signer")


def consumer_signed_nonce(consumer, cns, nonce, timeout=10):
    consumer.apply({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "liqo-signed-nonce", "namespace": cns,
                                 "labels": {"liqo.io/signed-nonce": "true",
                                            "liqo.io/remote-cluster-id": PROVIDER_ID}},
                    "data": {"nonce": b64(nonce)}})

    def signed():
        d = consumer.get_json("secret", "liqo-signed-nonce", "-n", cns).get("data") or {}
        return d.get("signedNonce")
    return wait_for(signed, timeout=timeout, what="signedNonce filled by the consumer signer")


def consumer_keys(consumer, tmp_path, timeout=10):
    def keys():
        if not consumer.exists("secret", "authentication-keys", "-n", NS):
            return None
        return consumer.get_json("secret", "authentication-keys", "-n", NS)["data"]
    d = wait_for(keys, timeout=timeout, what="authentication-keys created by the consumer signer")
    key = tmp_path / "cluster.key"
    key.write_bytes(unb64(d["privateKey"]))
    return key, unb64(d["publicKey"]).decode()


def make_csr(key_file, cn, tmp_path, org="liqo.io"):
    cfg = tmp_path / "req.cnf"
    cfg.write_text("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\n")
    return openssl("req", "-new", "-key", str(key_file), "-subj", f"/O={org}/CN={cn}",
                   "-config", str(cfg)).decode()


def tenant_manifest(cid, pns, pubkey_pem, csr_pem, signed_nonce_b64):
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
            "metadata": {"name": cid, "namespace": pns,
                         "labels": {"liqo.io/remote-cluster-id": cid}},
            "spec": {"clusterID": cid, "publicKey": b64(pubkey_pem), "csr": b64(csr_pem),
                     "signature": signed_nonce_b64}}


def tenant_ready(provider, cid, pns):
    t = provider.get_json("tenant", cid, "-n", pns)
    st = t.get("status") or {}
    return t if (st.get("authParams") or {}).get("signedCRT") else None


def tenant_csrs(provider, cid):
    return provider.get_json("csr", "-l", f"liqo.io/remote-tenant-csr=true,"
                                           f"liqo.io/remote-cluster-id={cid}")["items"]


def csr_condition(csr):
    for c in (csr.get("status") or {}).get("conditions") or []:
        if c["type"] in ("Approved", "Denied"):
            return c["type"], c.get("reason")
    return None


def signed_proof(provider, consumer, cid, pns, cns, tmp_path):
    """Nonce -> signed nonce, with the consumer's cluster key: (key file, public key PEM,
    signature) for a Tenant."""
    nonce = provider_nonce(provider, cid, pns)
    key, pub = consumer_keys(consumer, tmp_path)
    return key, pub, consumer_signed_nonce(consumer, cns, nonce)


@contextlib.contextmanager
def tenant_controller_only(signer):
    """Inside the block the provider signer runs only the Tenant controller: it makes CSRs
    and nobody approves them. All provider controllers again afterwards."""
    signer.stop()
    signer.start("--controllers", "tenant")
    try:
        yield
    finally:
        signer.stop()
        signer.start()


def onboard(provider, consumer, cid, pns, cns, tmp_path):
    """Nonce -> signed nonce -> Tenant applied. Returns (tenant manifest, key file)."""
    key, pub, sig = signed_proof(provider, consumer, cid, pns, cns, tmp_path)
    tenant = tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path), sig)
    provider.apply(tenant)
    return tenant, key


def identity_from(tenant_status, cid, cns):
    ap = tenant_status["authParams"]
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Identity",
            "metadata": {"name": f"controlplane-{PROVIDER_ID}", "namespace": cns,
                         "labels": {"liqo.io/remote-cluster-id": PROVIDER_ID}},
            "spec": {"clusterID": PROVIDER_ID, "type": "ControlPlane",
                     "namespace": tenant_status["tenantNamespace"],
                     "authParams": {k: ap[k] for k in ("ca", "signedCRT", "apiServer", "proxyURL")
                                    if ap.get(k)}}}


def out_of_scope(signer, controller):
    """tenantgate_signer_out_of_scope_total{controller}: objects dropped before any reconcile."""
    return signer.metrics().get(("tenantgate_signer_out_of_scope_total",
                                 frozenset({("controller", controller)})), 0)


def kubectl_as(cluster, kubeconfig, *args):
    return cluster.kubectl(*args, kubeconfig=kubeconfig, check=False)


# --- tests ---------------------------------------------------------------------------------

def test_full_onboarding_and_consumer_rights(provider, consumer, provider_signer, consumer_signer,
                                             cid, tenant_space, tmp_path):
    pns, cns = tenant_space
    tenant, _ = onboard(provider, consumer, cid, pns, cns, tmp_path)
    t0 = time.monotonic()
    t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, interval=0.05,
                 what="Tenant status.authParams.signedCRT")
    took = time.monotonic() - t0
    assert took < 2.0, f"Tenant status took {took:.2f}s"

    st = t["status"]
    assert st["tenantNamespace"] == pns
    assert st["authParams"]["apiServer"] == provider.server
    assert unb64(st["authParams"]["ca"]) == Path(provider.ca_file).read_bytes()
    # The verdict is an Event and a metric, not status (Liqo's status has no conditions).
    assert set(st) == {"tenantNamespace", "authParams"}, st
    events = provider.get_json("events", "-n", pns, "--field-selector",
                               f"involvedObject.uid={t['metadata']['uid']}")["items"]
    assert "IdentityIssued" in [e["reason"] for e in events if e["type"] == "Normal"], events
    verdicts = provider_signer.metrics()
    assert verdicts[("tenantgate_signer_tenant_verdicts_total",
                     frozenset({("verdict", "accepted"), ("reason", "")}))] >= 1, verdicts
    assert "tenant.liqo.io/finalizer" in t["metadata"]["finalizers"]

    csrs = tenant_csrs(provider, cid)
    assert len(csrs) == 1
    assert csr_condition(csrs[0]) == ("Approved", "TenantValidated")
    assert csrs[0]["spec"]["request"] == tenant["spec"]["csr"]
    # issue 36 #9: 7 days by default (renewed at two thirds), not a year
    assert csrs[0]["spec"]["expirationSeconds"] == 7 * 86400
    cert = unb64(st["authParams"]["signedCRT"])
    subj = openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", input=cert).decode()
    assert f"CN={cid}" in subj and "O=liqo.io" in subj

    rb = provider.get_json("rolebinding", CONSUMER_BINDING, "-n", pns)
    assert rb["roleRef"]["name"] == "tenantgate-remote-consumer"
    assert rb["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": cid}]

    # Identity on the consumer -> kubeconfig Secret owned by it
    consumer.apply(identity_from(st, cid, cns))
    idname = f"controlplane-{PROVIDER_ID}"
    ref = wait_for(lambda: ((consumer.get_json("identity", idname, "-n", cns).get("status") or {})
                            .get("kubeconfigSecretRef") or {}).get("name"),
                   timeout=10, what="Identity status.kubeconfigSecretRef")
    assert ref == f"kubeconfig-{idname}"
    sec = consumer.get_json("secret", ref, "-n", cns)
    assert sec["metadata"]["labels"] == {"liqo.io/remote-cluster-id": PROVIDER_ID,
                                         "liqo.io/identity-type": "ControlPlane"}
    # what Liqo's CRD replicator and identity manager read: the provider's tenant namespace
    assert sec["metadata"]["annotations"] == {"liqo.io/remote-tenant-namespace": pns}
    # a ResourceSlice Identity's Secret has no such annotation (Liqo sets it for ControlPlane only)
    rs = identity_from(st, cid, cns)
    rs["metadata"]["name"], rs["spec"]["type"] = "resourceslice-e2e", "ResourceSlice"
    consumer.apply(rs)
    rs_sec = wait_for(lambda: consumer.exists("secret", "kubeconfig-resourceslice-e2e", "-n", cns)
                      and consumer.get_json("secret", "kubeconfig-resourceslice-e2e", "-n", cns),
                      timeout=10, what="ResourceSlice kubeconfig Secret")
    assert rs_sec["metadata"]["labels"]["liqo.io/identity-type"] == "ResourceSlice"
    assert "annotations" not in rs_sec["metadata"]
    owner = sec["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Identity", idname, True)
    kc = tmp_path / "remote.kubeconfig"
    kc.write_bytes(unb64(sec["data"]["kubeconfig"]))

    # real requests with that kubeconfig against the provider
    # (Asked, not a bare slice written: the webhook, when installed, refuses a consumer's
    # slice that is not a replicated copy, PROTOCOL.md 5a.)
    ok = provider.kubectl("auth", "can-i", "create", "resourceslices.authentication.liqo.io",
                          "-n", pns, kubeconfig=kc, check=False)
    assert ok.returncode == 0 and ok.stdout.strip() == "yes", ok.stdout + ok.stderr
    who = kubectl_as(provider, kc, "auth", "whoami", "-o", "json")
    if who.returncode == 0:
        info = json.loads(who.stdout)["status"]["userInfo"]
        assert info["username"] == cid and "liqo.io" in info["groups"]
    denied = kubectl_as(provider, kc, "get", "secrets", "-n", pns)
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower()
    other = kubectl_as(provider, kc, "get", "resourceslices.authentication.liqo.io", "-n", "default")
    assert other.returncode != 0 and "forbidden" in other.stderr.lower()
    assert kubectl_as(provider, kc, "get", "namespacemaps.offloading.liqo.io", "-n", pns).returncode == 0
    # Issue 36 #6: the status of these objects is the provider's verdict; the consumer may
    # not write it (a status.resources.cpu=100 it wrote used to stay). The slice is the
    # provider admin's: the consumer's own would have to be a replicated copy.
    provider.kubectl("apply", "-f", "-", input={
        "apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
        "metadata": {"name": "rs1", "namespace": pns}, "spec": {"class": "default"}})
    forged = kubectl_as(provider, kc, "patch", "resourceslices.authentication.liqo.io", "rs1", "-n", pns,
                        "--subresource=status", "--type=merge",
                        "-p", json.dumps({"status": {"resources": {"cpu": "100"}}}))
    assert forged.returncode != 0 and "forbidden" in forged.stderr.lower(), forged.stderr
    rs1 = provider.get_json("resourceslices.authentication.liqo.io", "rs1", "-n", pns)
    assert ((rs1.get("status") or {}).get("resources") or {}).get("cpu") != "100"
    for res in ("resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
                "namespacemaps.offloading.liqo.io"):
        for verb in ("update", "patch"):
            can = kubectl_as(provider, kc, "auth", "can-i", verb, res, "--subresource=status", "-n", pns)
            assert can.stdout.strip() == "no", (verb, res, can.stdout, can.stderr)
        # the object itself stays writable (the replicators send spec that way)
        assert kubectl_as(provider, kc, "auth", "can-i", "update", res, "-n", pns).stdout.strip() == "yes"


def test_mismatching_labelled_csr_is_denied(provider, consumer, provider_signer, consumer_signer,
                                            cid, tenant_space, tmp_path):
    pns, cns = tenant_space
    onboard(provider, consumer, cid, pns, cns, tmp_path)
    wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="Tenant status")
    # a CSR for the same cluster id with another key, labelled like ours
    other = tmp_path / "other.key"
    other.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    name = f"rogue-{cid}"
    provider.create({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                     "metadata": {"name": name,
                                  "labels": {"liqo.io/remote-tenant-csr": "true",
                                             "liqo.io/remote-cluster-id": cid,
                                             "tenantgate.io/tenant-namespace": pns}},
                     "spec": {"request": b64(make_csr(other, cid, tmp_path)),
                              "signerName": "kubernetes.io/kube-apiserver-client",
                              "usages": ["digital signature", "key encipherment", "client auth"]}})
    try:
        cond = wait_for(lambda: csr_condition(provider.get_json("csr", name)), timeout=10,
                        what="rogue CSR decided")
        assert cond == ("Denied", "CSRPublicKeyMismatch")
        events = provider.get_json("events", "-n", "default",
                                   "--field-selector", f"involvedObject.name={name}")["items"]
        assert [e["reason"] for e in events] == ["CSRPublicKeyMismatch"]
        assert events[0]["type"] == "Warning" and events[0]["source"]["component"] == "tenantgate-signer"
        # and one labelled for a cluster without a Tenant
        name2 = f"orphan-{cid}"
        provider.create({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                         "metadata": {"name": name2, "labels": {"liqo.io/remote-tenant-csr": "true"}},
                         "spec": {"request": b64(make_csr(other, "nobody", tmp_path)),
                                  "signerName": "kubernetes.io/kube-apiserver-client",
                                  "usages": ["digital signature", "client auth"]}})
        cond = wait_for(lambda: csr_condition(provider.get_json("csr", name2)), timeout=10,
                        what="orphan CSR decided")
        assert cond == ("Denied", "NoMatchingTenant")
        provider.kubectl("delete", "csr", name2, check=False)
    finally:
        provider.kubectl("delete", "csr", name, check=False)
    # the genuine Tenant is still fine and only its own CSR is approved
    assert [csr_condition(c) for c in tenant_csrs(provider, cid)
            if c["metadata"]["name"] != name] == [("Approved", "TenantValidated")]


def test_restart_between_csr_and_status_makes_no_second_csr(provider, consumer, provider_signer,
                                                            consumer_signer, cid, tenant_space,
                                                            tmp_path):
    pns, cns = tenant_space
    key, pub, sig = signed_proof(provider, consumer, cid, pns, cns, tmp_path)
    # only the Tenant controller: it creates the CSR, nobody approves it yet
    with tenant_controller_only(provider_signer):
        provider.apply(tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path), sig))
        wait_for(lambda: len(tenant_csrs(provider, cid)) == 1, timeout=10, what="CSR created")
        provider_signer.kill()                    # dies before any status was written
        assert tenant_ready(provider, cid, pns) is None
    wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="status after restart")
    assert len(tenant_csrs(provider, cid)) == 1


def test_deleted_tenant_loses_access_and_cannot_be_replayed(provider, consumer, provider_signer,
                                                            consumer_signer, cid, tenant_space,
                                                            tmp_path):
    pns, cns = tenant_space
    tenant, key = onboard(provider, consumer, cid, pns, cns, tmp_path)
    t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="Tenant status")
    cert = tmp_path / "tenant.crt"
    cert.write_bytes(unb64(t["status"]["authParams"]["signedCRT"]))
    kc = provider.cert_kubeconfig(cid, cert, key, path=tmp_path / "cert.kubeconfig")
    assert kubectl_as(provider, kc, "get", "resourceslices.authentication.liqo.io", "-n", pns).returncode == 0
    nonce_before = provider.get_json("secret", "liqo-nonce", "-n", pns)["data"]["nonce"]

    provider.kubectl("delete", "tenant", cid, "-n", pns, "--timeout=20s")
    assert not provider.exists("tenant", cid, "-n", pns)
    assert not provider.exists("rolebinding", CONSUMER_BINDING, "-n", pns)
    after = provider.get_json("secret", "liqo-nonce", "-n", pns)["data"]["nonce"]
    assert after != nonce_before
    r = kubectl_as(provider, kc, "get", "resourceslices.authentication.liqo.io", "-n", pns)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower()

    replay = provider.apply(tenant, check=False)
    assert replay.returncode != 0
    assert denial(replay.stderr)[0] == "SignatureVerificationFailed", replay.stderr


def test_nonce_controller_fills_only_the_tenant_namespaces_liqo_nonce(provider, provider_signer,
                                                                     cid, tenant_space):
    """The nonce label is no permission: whoever may create a Secret in `default`, or one under
    another name in the tenant namespace, gets no nonce written into it.  Only liqo-nonce in
    a tenant namespace labelled for <cid> is filled (signer/scope_rule.h): a labelled
    liqo-nonce elsewhere is dropped before any reconcile, logged and counted; a Secret of
    another name is not even listed (field selector)."""
    pns, _ = tenant_space
    labels = {"liqo.io/nonce": "true", "liqo.io/remote-cluster-id": cid}
    rogue = ("default", "liqo-nonce", "namespace")
    unlisted = (pns, f"nonce-{cid}")

    def skips(reason):
        return out_of_scope(provider_signer, "nonce")

    def filled(ns, name):
        return bool((provider.get_json("secret", name, "-n", ns).get("data") or {}).get("nonce"))

    before = skips(rogue[2])
    try:
        for ns, name in (rogue[:2], unlisted):
            provider.kubectl("delete", "secret", name, "-n", ns, "--ignore-not-found", "--wait=true")
            provider.apply({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": name, "namespace": ns, "labels": labels}})
        # created after the rogues: once it is filled, they have been seen too
        assert len(unb64(provider_nonce(provider, cid, pns))) == 64
        wait_for(lambda: skips(rogue[2]) > before or filled(*rogue[:2]),
                 timeout=10, what="the signer to skip (or fill) the labelled Secret in default")
        for ns, name in (rogue[:2], unlisted):
            assert not filled(ns, name), f"the signer wrote a nonce into {ns}/{name}"
        ignored = set()
        for line in provider_signer.log().splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("msg", "").startswith("object out of the controller's scope") and \
                    e.get("controller") == "nonce":
                ignored.add((e.get("namespace"), e.get("name"), e.get("reason")))
        assert rogue in ignored, (rogue, ignored)
        assert not [i for i in ignored if i[:2] == unlisted], ignored
    finally:
        for ns, name in (rogue[:2], unlisted):
            provider.kubectl("delete", "secret", name, "-n", ns, "--ignore-not-found", check=False)


def test_nonce_signer_signs_only_liqo_signed_nonce_in_a_tenant_namespace(provider, consumer, consumer_signer,
                                                                       provider_signer, cid, tenant_space):
    """The signed-nonce label is no permission either: a Secret that asks for a signature in
    `default`, or under another name in the tenant namespace, is not signed with the cluster
    key (anyone who may create a Secret there could otherwise get a nonce of their choice
    signed).  liqo-signed-nonce in the consumer's tenant namespace still is."""
    pns, cns = tenant_space
    nonce = provider_nonce(provider, cid, pns)
    labels = {"liqo.io/signed-nonce": "true", "liqo.io/remote-cluster-id": PROVIDER_ID}
    rogue = ("default", "liqo-signed-nonce")
    unlisted = (cns, f"signed-nonce-{cid}")

    def skips():
        return out_of_scope(consumer_signer, "noncesigner")

    def signed(ns, name):
        return bool((consumer.get_json("secret", name, "-n", ns).get("data") or {}).get("signedNonce"))

    before = skips()
    try:
        for ns, name in (rogue, unlisted):
            consumer.kubectl("delete", "secret", name, "-n", ns, "--ignore-not-found", "--wait=true")
            consumer.apply({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": name, "namespace": ns, "labels": labels},
                            "data": {"nonce": b64(nonce)}})
        # the real one, created after: once it is signed, the others have been seen
        assert consumer_signed_nonce(consumer, cns, nonce)
        wait_for(lambda: skips() > before or signed(*rogue), timeout=10,
                 what="the consumer signer to skip (or sign) the Secret in default")
        for ns, name in (rogue, unlisted):
            assert not signed(ns, name), f"the cluster key signed {ns}/{name}"
        assert "object out of the controller's scope" in consumer_signer.log()
    finally:
        for ns, name in (rogue, unlisted):
            consumer.kubectl("delete", "secret", name, "-n", ns, "--ignore-not-found", check=False)


def _restart_in_own_signer_mode(signer, tmp_path, max_lifetime):
    """Mint an Ed25519 CA in tmp_path and restart the signer signing with it
    (--signer-name tenantgate.io/identity). Returns the CA certificate's path."""
    ca_key, ca_crt = tmp_path / "ca.key", tmp_path / "ca.crt"
    ca_key.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    cfg = tmp_path / "ca.cnf"
    cfg.write_text("[req]\ndistinguished_name=dn\nprompt=no\nx509_extensions=v3\n[dn]\nCN=own-ca\n"
                   "[v3]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n"
                   "subjectKeyIdentifier=hash\n")
    ca_crt.write_bytes(openssl("req", "-x509", "-new", "-key", str(ca_key), "-days", "2",
                               "-config", str(cfg)))
    signer.stop()
    signer.start("--signer-name", "tenantgate.io/identity", "--ca-cert", ca_crt,
                 "--ca-key", ca_key, "--max-cert-lifetime", max_lifetime)
    return ca_crt


def test_own_signer_mode_end_to_end(provider, consumer, provider_signer, consumer_signer, cid,
                                    tenant_space, tmp_path):
    pns, cns = tenant_space
    ca_crt = _restart_in_own_signer_mode(provider_signer, tmp_path, max_lifetime="7200")
    try:
        onboard(provider, consumer, cid, pns, cns, tmp_path)
        t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="own-signer status")
        cert = unb64(t["status"]["authParams"]["signedCRT"])
        out = openssl("verify", "-CAfile", str(ca_crt), input=cert).decode()
        assert "OK" in out
        text = openssl("x509", "-noout", "-text", input=cert).decode()
        assert "TLS Web Client Authentication" in text and "CA:FALSE" in text
        csr = tenant_csrs(provider, cid)[0]
        assert csr["spec"]["signerName"] == "tenantgate.io/identity"
    finally:
        provider_signer.stop()
        provider_signer.start()


def _leading(signer):
    return "leadership acquired" in signer.log()


def test_two_signers_exactly_one_acts_and_the_other_takes_over(provider, consumer,
                                                               provider_signer, consumer_signer,
                                                               signer_bin, cid, tenant_space,
                                                               tmp_path):
    pns, cns = tenant_space
    provider.kubectl("delete", "lease", "tenantgate-signer", "-n", NS, "--ignore-not-found")
    kc = provider.serviceaccount_kubeconfig(NS, SA, duration="1h")
    provider_signer.stop()
    pair = [Signer(signer_bin, provider, kc, tmp_path, f"signer-{i}", "--cluster-id", PROVIDER_ID,
                   "--controllers", PROVIDER_CONTROLLERS, "--leader-elect").start()
            for i in (1, 2)]
    cid2 = f"{cid}-b"
    pns2 = f"liqo-tenant-{cid2}"
    try:
        wait_for(lambda: any(_leading(s) for s in pair), timeout=20, what="a leader")
        time.sleep(3)                       # a retry period: the other must still be waiting
        leaders = [s for s in pair if _leading(s)]
        assert len(leaders) == 1
        leader, other = leaders[0], next(s for s in pair if s is not leaders[0])
        holder = provider.get_json("lease", "tenantgate-signer", "-n", NS)["spec"]["holderIdentity"]
        assert holder.endswith(f"_{leader.process.pid}")

        onboard(provider, consumer, cid, pns, cns, tmp_path)
        wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="Tenant status")
        assert "tenant identity issued" in leader.log() and "csr approved" in leader.log()
        assert "csr approved" not in other.log() and "csr created" not in other.log()
        assert "nonce created" not in other.log()

        # the leader dies without releasing: the other acts within the lease time
        leader.kill()
        provider.apply(tenant_namespace_manifest(cid2))
        # one tenant namespace per provider on the consumer: the second nonce goes there too
        consumer.kubectl("delete", "secret", "liqo-signed-nonce", "-n", cns, "--wait=true")
        t0 = time.monotonic()
        nonce = provider_nonce(provider, cid2, pns2, timeout=30)
        key, pub = consumer_keys(consumer, tmp_path)
        sig = consumer_signed_nonce(consumer, cns, nonce)
        provider.apply(tenant_manifest(cid2, pns2, pub, make_csr(key, cid2, tmp_path), sig))
        wait_for(lambda: tenant_ready(provider, cid2, pns2), timeout=30, what="status from the new leader")
        took = time.monotonic() - t0
        assert took < 15 + 2 + 5, f"takeover took {took:.1f}s"
        assert _leading(other) and "tenant identity issued" in other.log()
    finally:
        for s in pair:
            s.stop()
        provider.kubectl("delete", "tenant", "--all", "-n", pns2, "--wait=false", check=False)
        provider.delete_namespace(pns2)
        provider_signer.start()


def test_probes_metrics_and_clean_stop(provider, consumer, provider_signer, consumer_signer,
                                       cid, tenant_space, tmp_path):
    pns, cns = tenant_space
    port = provider_signer.metrics_port
    assert wait_for(lambda: http_get(port, "/readyz")[0] == 200, timeout=10, what="/readyz 200")
    assert http_get(port, "/healthz")[0] == 200
    assert http_get(port, "/nope")[0] == 404
    onboard(provider, consumer, cid, pns, cns, tmp_path)
    t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="Tenant status")
    m = provider_signer.metrics()
    key = ("tenantgate_signer_csr_decisions_total",
           frozenset({("decision", "approved"), ("reason", "TenantValidated")}))
    assert m.get(key, 0) >= 1
    assert m.get(("tenantgate_signer_reconciles_total",
                  frozenset({("controller", "tenant"), ("result", "requeue")})), 0) >= 1
    assert m.get(("tenantgate_signer_tenant_issue_seconds_count", frozenset()), 0) >= 1
    # The watch events of the signer's own writes (the status it wrote, the approval it
    # gave) are recognised from the informers and cost no GET (signer/settled.h).
    for controller in ("tenant", "csr"):
        skips = ("tenantgate_signer_settled_skips_total", frozenset({("controller", controller)}))
        assert wait_for(lambda: provider_signer.metrics().get(skips, 0) >= 1, timeout=10,
                        what=f"a settled skip of the {controller} controller")
    na = m[("tenantgate_signer_certificate_expiry_timestamp_seconds", frozenset({("cluster_id", cid)}))]
    assert na > time.time() + 86400
    assert ("tenantgate_signer_queue_depth", frozenset()) in m
    # the logs never carry key material, nonces, signatures or certificates
    nonce = unb64(provider.get_json("secret", "liqo-nonce", "-n", pns)["data"]["nonce"]).decode()
    for s in (provider_signer, consumer_signer):
        text = s.log()
        assert "PRIVATE KEY" not in text and "CERTIFICATE" not in text and nonce not in text
        assert t["spec"]["signature"] not in text
    rss = [l for l in Path(f"/proc/{provider_signer.process.pid}/status").read_text().splitlines()
           if l.startswith("VmRSS")]
    print(f"provider signer {rss}")
    # SIGTERM: prompt, clean exit
    t0 = time.monotonic()
    assert provider_signer.stop() == 0
    assert time.monotonic() - t0 < 5
    provider_signer.start()


def test_certificate_is_renewed_before_expiry(provider, consumer, provider_signer, consumer_signer,
                                              cid, tenant_space, tmp_path):
    """Own-signer mode with a 90 s maximum lifetime: renewal is due 25 s after issue
    (NotAfter - lifetime/3, the 5-minute backdate not counted as lifetime)."""
    pns, cns = tenant_space
    _restart_in_own_signer_mode(provider_signer, tmp_path, max_lifetime="90")
    try:
        onboard(provider, consumer, cid, pns, cns, tmp_path)
        first = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10,
                         what="first certificate")["status"]["authParams"]["signedCRT"]
        t0 = time.monotonic()
        # not at once: still the same certificate 15 s later
        time.sleep(15)
        assert tenant_ready(provider, cid, pns)["status"]["authParams"]["signedCRT"] == first
        second = wait_for(lambda: (lambda c: c if c != first else None)(
            tenant_ready(provider, cid, pns)["status"]["authParams"]["signedCRT"]),
            timeout=30, interval=0.5, what="renewed certificate")
        took = time.monotonic() - t0
        assert 20 < took < 40, f"renewed after {took:.1f}s"
        assert len(tenant_csrs(provider, cid)) == 2
        assert f"CN={cid}" in openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253",
                                      input=unb64(second)).decode()
        time.sleep(5)                     # and it does not loop
        assert len(tenant_csrs(provider, cid)) == 2
        assert provider_signer.log().count("csr created for renewal") == 1
    finally:
        provider_signer.stop()
        provider_signer.start()


def test_drained_tenant_loses_its_binding_and_active_gets_it_back(provider, consumer,
                                                                  provider_signer, consumer_signer,
                                                                  cid, tenant_space, tmp_path):
    pns, cns = tenant_space
    onboard(provider, consumer, cid, pns, cns, tmp_path)
    wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="Tenant status")
    rb = CONSUMER_BINDING
    crb = f"liqo-binding-liqo-virtual-kubelet-remote-clusterwide-{cid}"
    assert provider.exists("rolebinding", rb, "-n", pns)

    def group_can_scrape():
        # any certificate of the consumer (ControlPlane or ResourceSlice) is in group <cid>; asked
        # as a SubjectAccessReview (kubectl auth can-i resolves unknown resource names its own way)
        sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {"user": "someone", "groups": [cid, "system:authenticated"],
                        "resourceAttributes": {"group": "metrics.liqo.io", "resource": "scrape",
                                               "subresource": "metrics", "verb": "get"}}}
        out = provider.kubectl("create", "-o", "json", "-f", "-", input=sar).stdout
        return json.loads(out)["status"].get("allowed", False)
    subjects = provider.get_json("clusterrolebinding", crb)["subjects"]
    assert subjects == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": cid}]
    # the apiserver's RBAC authorizer reads bindings from a cache: a new one counts within ~1 s
    wait_for(group_can_scrape, timeout=10, what="group rights from the ClusterRoleBinding")
    for condition, present in (("Cordoned", True), ("Drained", False), ("Active", True)):
        provider.kubectl("patch", "tenant", cid, "-n", pns, "--type", "merge",
                         "-p", json.dumps({"spec": {"tenantCondition": condition}}))
        wait_for(lambda: provider.exists("rolebinding", rb, "-n", pns) == present
                 and provider.exists("clusterrolebinding", crb) == present, timeout=10,
                 what=f"bindings {'kept' if present else 'removed'} for {condition}")
        time.sleep(1)
        assert provider.exists("rolebinding", rb, "-n", pns) == present
        wait_for(lambda: group_can_scrape() == present, timeout=10,
                 what=f"group rights {'kept' if present else 'gone'} for {condition}")
    assert len(tenant_csrs(provider, cid)) == 1
    provider.kubectl("delete", "tenant", cid, "-n", pns, "--timeout=20s")
    assert not provider.exists("clusterrolebinding", crb)


def new_cluster_key(tmp_path, name):
    """A fresh Ed25519 key the way a consumer rotating its keys would make one:
    returns (key file, public key PEM text)."""
    key = tmp_path / f"{name}.key"
    key.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    return key, openssl("pkey", "-in", str(key), "-pubout").decode()


def sign_nonce(key_file, nonce, tmp_path):
    """Ed25519 signature of the nonce text (what the consumer's signer signs), base64."""
    msg = tmp_path / "nonce.txt"
    msg.write_text(nonce)
    return b64(openssl("pkeyutl", "-sign", "-rawin", "-inkey", str(key_file), "-in", str(msg)))


def _write(path, data):
    path.write_bytes(data)
    return path


def cert_public_key(signed_crt_b64):
    return openssl("x509", "-noout", "-pubkey", input=unb64(signed_crt_b64)).decode()


def test_key_rotation_replaces_the_certificate_at_once(provider, consumer, provider_signer,
                                                       consumer_signer, cid, tenant_space, tmp_path):
    """A new proof (publicKey, csr, signature) admitted for an authenticated Tenant gets a
    certificate for the new key within 2 s, not at the old certificate's renewal point."""
    pns, cns = tenant_space
    tenant, old_key = onboard(provider, consumer, cid, pns, cns, tmp_path)
    first = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10,
                     what="first certificate")["status"]["authParams"]["signedCRT"]
    old_pub = openssl("pkey", "-in", str(old_key), "-pubout").decode()
    assert cert_public_key(first) == old_pub

    nonce = unb64(provider.get_json("secret", "liqo-nonce", "-n", pns)["data"]["nonce"]).decode()
    key, pub = new_cluster_key(tmp_path, "rotated")
    rotated = tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path),
                              sign_nonce(key, nonce, tmp_path))
    provider.apply(rotated)                      # the webhook admits the new proof
    t0 = time.monotonic()
    t = wait_for(lambda: (lambda t: t if cert_public_key(
        t["status"]["authParams"]["signedCRT"]) == pub else None)(tenant_ready(provider, cid, pns)),
        timeout=10, interval=0.05, what="signedCRT for the new key")
    took = time.monotonic() - t0
    assert took < 2.0, f"the new key's certificate took {took:.2f}s"
    crt = unb64(t["status"]["authParams"]["signedCRT"])
    assert f"CN={cid}" in openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253",
                                  input=crt).decode()
    # the new certificate authenticates with the new key only
    kc = provider.cert_kubeconfig(cid, _write(tmp_path / "new.crt", crt), key,
                                  path=tmp_path / "new.kubeconfig")
    assert kubectl_as(provider, kc, "get", "resourceslices.authentication.liqo.io", "-n",
                      pns).returncode == 0
    # creationTimestamp has one-second resolution and both CSRs may share it: tell them apart
    # by what they ask for, not by age
    csrs = {c["spec"]["request"]: c for c in tenant_csrs(provider, cid)}
    assert sorted(csrs) == sorted([tenant["spec"]["csr"], rotated["spec"]["csr"]])
    assert csr_condition(csrs[rotated["spec"]["csr"]]) == ("Approved", "TenantValidated")
    assert provider_signer.log().count("csr created for a new key") == 1
    time.sleep(3)                                 # and it settles: no more CSRs
    assert len(tenant_csrs(provider, cid)) == 2
    assert tenant_ready(provider, cid, pns)["status"]["authParams"]["signedCRT"] == b64(crt)


def test_denied_csr_does_not_block_the_tenant(provider, consumer, provider_signer,
                                              consumer_signer, cid, tenant_space, tmp_path):
    """A denied CSR for the Tenant's request is followed by a fresh one at once; a second
    denial by one after a back-off (not a loop); and the Tenant ends with a certificate."""
    pns, cns = tenant_space
    key, pub, sig = signed_proof(provider, consumer, cid, pns, cns, tmp_path)
    # only the Tenant controller: nobody approves, the test denies
    with tenant_controller_only(provider_signer):
        provider.apply(tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path), sig))
        first = wait_for(lambda: (tenant_csrs(provider, cid) or [None])[0], timeout=10,
                         what="first CSR")["metadata"]["name"]
        provider.kubectl("certificate", "deny", first)
        second = wait_for(lambda: [c["metadata"]["name"] for c in tenant_csrs(provider, cid)
                                   if c["metadata"]["name"] != first],
                          timeout=5, interval=0.1, what="a fresh CSR after the denial")
        assert len(second) == 1
        provider.kubectl("certificate", "deny", second[0])
        t_deny = time.monotonic()
        time.sleep(2)
        assert len(tenant_csrs(provider, cid)) == 2, "a second denial must back off"
        wait_for(lambda: len(tenant_csrs(provider, cid)) == 3, timeout=15, interval=0.2,
                 what="the CSR after the back-off")
        waited = time.monotonic() - t_deny
        assert 2 < waited < 12, f"third CSR after {waited:.1f}s"
        assert "csr denied again, next one later" in provider_signer.log()
    t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=10, what="certificate at last")
    assert cert_public_key(t["status"]["authParams"]["signedCRT"]) == pub
    decided = sorted(csr_condition(c)[0] for c in tenant_csrs(provider, cid))
    assert decided == ["Approved", "Denied", "Denied"], decided


def test_csrs_another_user_made_hold_no_tenant_back(provider, consumer, provider_signer,
                                                    consumer_signer, cid, tenant_space, tmp_path):
    """Three copies of what the Tenant controller would make (our labels, the Tenant's request
    hash, far-future created-ms) with another key's request, made by someone allowed to create
    CSRs (the admin), before the Tenant: the approver denies them, and the Tenant controller,
    which counts only CSRs whose spec.username is the signer's, makes one CSR and gets the
    certificate at once instead of backing off after "denials" that were not its own."""
    pns, cns = tenant_space
    key, pub, sig = signed_proof(provider, consumer, cid, pns, cns, tmp_path)
    tenant = tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path), sig)
    request_hash = hashlib.sha256(tenant["spec"]["csr"].encode()).hexdigest()[:32]
    other = tmp_path / "forger.key"
    other.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    forged = [f"forged-{i}-{cid}" for i in range(3)]
    for i, name in enumerate(forged):
        provider.create({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                         "metadata": {"name": name,
                                      "labels": {"liqo.io/remote-tenant-csr": "true",
                                                 "liqo.io/remote-cluster-id": cid,
                                                 "tenantgate.io/tenant-namespace": pns,
                                                 "tenantgate.io/request-sha256": request_hash,
                                                 "tenantgate.io/created-ms": str(int(time.time() * 1000) + 10**9 + i)}},
                         "spec": {"request": b64(make_csr(other, cid, tmp_path)),
                                  "signerName": "kubernetes.io/kube-apiserver-client",
                                  "usages": ["digital signature", "key encipherment", "client auth"]}})
    try:
        for name in forged:
            assert wait_for(lambda: csr_condition(provider.get_json("csr", name)), timeout=15,
                            what=f"{name} decided")[0] == "Denied"
        provider.apply(tenant)
        t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=8, what="the Tenant's certificate")
        assert cert_public_key(t["status"]["authParams"]["signedCRT"]) == pub
        own = [c for c in tenant_csrs(provider, cid) if c["metadata"]["name"] not in forged]
        assert [(c["spec"]["username"], csr_condition(c)) for c in own] == [
            (f"system:serviceaccount:{NS}:{SA}", ("Approved", "TenantValidated"))]
        assert "csr with the signer's labels made by another user" in provider_signer.log()
    finally:
        provider.kubectl("delete", "csr", *forged, "--ignore-not-found", check=False)


CLUSTERID_LABEL = "app.kubernetes.io/name=clusterid-configmap"


def clusterid_configmap(name, cid):
    """The ConfigMap Liqo keeps its cluster id in (its chart names it liqo-clusterid-configmap)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS,
                         "labels": {"app.kubernetes.io/name": "clusterid-configmap"}},
            "data": {"CLUSTER_ID": cid}}


def _started_as(signer):
    for line in signer.log().splitlines():
        if '"signer starting"' in line:
            return json.loads(line)["cluster_id"]
    return None


def test_cluster_id_from_liqos_configmap(provider, installed, signer_bin, tmp_path):
    """Without --cluster-id the signer reads CLUSTER_ID from the ConfigMap labelled
    app.kubernetes.io/name=clusterid-configmap in its namespace, with a Role that allows
    exactly that LIST; the flag wins; none or two such ConfigMaps stop it with a clear error."""
    kc = provider.serviceaccount_kubeconfig(NS, SA, duration="1h")
    # least privilege, asked as the signer's own identity
    for args, want in ((("list", "configmaps", "-n", NS), "yes"),
                       (("get", "configmaps", "-n", NS), "no"),
                       (("watch", "configmaps", "-n", NS), "no"),
                       (("list", "configmaps", "-n", "default"), "no")):
        got = provider.kubectl("auth", "can-i", *args, kubeconfig=kc, check=False).stdout.strip()
        assert got == want, (args, got)
    # another test module may have installed one: keep it aside
    saved = provider.get_json("configmaps", "-n", NS, "-l", CLUSTERID_LABEL)["items"]
    for cm in saved:
        provider.kubectl("delete", "configmap", cm["metadata"]["name"], "-n", NS)

    def run(name, *args):
        return Signer(signer_bin, provider, kc, tmp_path, name, "--controllers", "identity",
                      *args).start()
    try:
        none = run("no-id")
        wait_for(lambda: not none.process.alive(), timeout=15, what="exit without a cluster id")
        assert none.stop() == 1
        assert "no cluster id" in none.log() and "clusterid-configmap" in none.log()

        provider.apply(clusterid_configmap("liqo-clusterid-configmap", "cl-from-liqo"))
        found = run("from-cm")
        try:
            wait_for(lambda: _started_as(found), timeout=15, what="signer started")
            assert _started_as(found) == "cl-from-liqo"
            assert "cluster id read from the clusterid ConfigMap" in found.log()
        finally:
            assert found.stop() == 0
        flag = run("flag", "--cluster-id", "cl-flag")
        try:
            wait_for(lambda: _started_as(flag), timeout=15, what="signer started")
            assert _started_as(flag) == "cl-flag"
            assert "read from the clusterid ConfigMap" not in flag.log()
        finally:
            flag.stop()

        provider.apply(clusterid_configmap("second-clusterid", "cl-other"))
        two = run("two")
        wait_for(lambda: not two.process.alive(), timeout=15, what="exit with two ConfigMaps")
        assert two.stop() == 1 and "no cluster id" in two.log()
    finally:
        for name in ("liqo-clusterid-configmap", "second-clusterid"):
            provider.kubectl("delete", "configmap", name, "-n", NS, "--ignore-not-found", check=False)
        for cm in saved:
            meta = {k: cm["metadata"][k] for k in ("name", "namespace", "labels") if k in cm["metadata"]}
            provider.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                            "data": cm.get("data") or {}})


def test_kubeconfig_secret_carries_aws_keys(consumer, consumer_signer, tmp_path):
    """An Identity with spec.authParams.awsConfig: its kubeconfig Secret has the five keys
    Liqo's identity manager reads for EKS (identityManager/const.go), under Liqo's names."""
    eks = f"eks-{uuid.uuid4().hex[:6]}"
    ns = f"liqo-tenant-{eks}"
    # the tenant namespace of provider eks-...: key material goes nowhere else (signer/scope_rule.h)
    consumer.create_namespace(ns, {"liqo.io/tenant-namespace": "true", "liqo.io/remote-cluster-id": eks})
    try:
        key = tmp_path / "ca.key"
        key.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
        cfg = tmp_path / "ca.cnf"
        cfg.write_text("[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=eks\n")
        crt = openssl("req", "-x509", "-new", "-key", str(key), "-days", "1", "-config", str(cfg))
        aws = {"awsAccessKeyID": "AKIAEXAMPLE", "awsSecretAccessKey": "not-a-real-secret",
               "awsRegion": "eu-west-1", "awsClusterName": "eks-1",
               "awsUserArn": "arn:aws:iam::123456789012:user/liqo"}
        consumer.apply({"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Identity",
                        "metadata": {"name": "controlplane-eks", "namespace": ns},
                        "spec": {"clusterID": eks, "type": "ControlPlane", "namespace": "liqo-tenant-x",
                                 "authParams": {"ca": b64(crt), "signedCRT": b64(crt),
                                                "apiServer": "https://127.0.0.1:1",
                                                "awsConfig": aws}}})
        sec = wait_for(lambda: consumer.exists("secret", "kubeconfig-controlplane-eks", "-n", ns)
                       and consumer.get_json("secret", "kubeconfig-controlplane-eks", "-n", ns),
                       timeout=10, what="kubeconfig Secret")
        data = {k: unb64(v).decode() for k, v in sec["data"].items() if k != "kubeconfig"}
        assert data == {"awsAccessKeyID": "AKIAEXAMPLE", "awsSecretAccessKey": "not-a-real-secret",
                        "awsRegion": "eu-west-1", "awsEksClusterID": "eks-1",
                        "awsIamUserArn": "arn:aws:iam::123456789012:user/liqo"}
        assert sec["metadata"]["annotations"] == {"liqo.io/remote-tenant-namespace": "liqo-tenant-x"}
        assert "not-a-real-secret" not in consumer_signer.log()
    finally:
        consumer.delete_namespace(ns)
