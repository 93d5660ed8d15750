"""Resource acquisition end to end (issue 13): nothing played by hand.

Two real clusters, each with tenantgate's webhook and signer as host processes: the provider's
signer with the provider controllers (Tenants, approval, the replicated slices' authentication
and resources, Renew answers), the consumer's with the consumer controllers (keys, nonce
signing, Identities, the local slices' requests, Renews, and the replicator that copies them to
the provider with the ControlPlane kubeconfig and brings the status back). The consumer is
authenticated with `kubectl tenantgate authenticate`; every slice is made with `kubectl
tenantgate create resourceslice` on the consumer, and what the test reads is what the two
signers did with it:

  accepted     CLI exit 0 -> the copy on the provider -> Identity resourceslice-NAME (type
               ResourceSlice, owned by the slice) -> its kubeconfig authenticates on the
               provider as <name>-<12 hex of sha256(consumer)> in group <consumer>
  over quota   the provider's class policy refuses it: the CLI exits 1 with the provider's
               message, which names the resource and the excess
  deleted      Identity, kubeconfig Secret, the provider's copy and its certificate cache Secret
               all go (the slice user has no rights of its own, as under Liqo)
  restarts     both signers killed (SIGKILL) after the request and before the verdict: after
               the restart exactly one Identity, one copy and one CSR for the slice
  renewal      a slice certificate with a short lifetime is renewed by the provider and the new
               one reaches the consumer's kubeconfig Secret

Each controller's own details (admission reasons, Cordoned/Drained, the Renew answer, the
replicator's label rewriting) are in test_slice_admission.py, test_slice_consumer.py and the
two controllers' own files; this file is the integration."""

import base64
import contextlib
import hashlib
import json
import time
from pathlib import Path

import pytest

from tenantgate_services import (INSTALL_NAMESPACE, WEBHOOK_SA, Webhook,  # noqa: F401
                                 WebhookInstall, built, webhook, webhook_install)
from test_signer import CONSUMER_ID, NS, PROVIDER_ID, SA, Signer, installed  # noqa: F401
from bed import delete_namespaces, free_port, openssl, wait_for

GROUP = "authentication.liqo.io"
PROVIDER_CONTROLLERS = "nonce,tenant,approver,signer,remoteresourceslice,remoterenew"
CONSUMER_CONTROLLERS = "keys,noncesigner,identity,resourceslice,renew,replicator"
# The provider's per-class policy (signer/provider_resourceslice.c).
POLICY_CONFIGMAP = "tenantgate-resourceslice-policy"
EXIT_REJECTED = 1
CNS = f"liqo-tenant-{PROVIDER_ID}"        # the provider's tenant namespace on the consumer
PNS = f"liqo-tenant-{CONSUMER_ID}"        # the consumer's tenant namespace on the provider


def slice_user(name):
    return f"{name}-{hashlib.sha256(CONSUMER_ID.encode()).hexdigest()[:12]}"


# --- the two sides ---------------------------------------------------------------------------

def _signer(cluster, signer_bin, log_dir, name, cluster_id, controllers):
    kc = cluster.serviceaccount_kubeconfig(NS, SA, duration="6h")
    return Signer(signer_bin, cluster, kc, log_dir, name, "--cluster-id", cluster_id,
                  "--controllers", controllers).start()


@pytest.fixture(scope="module")
def provider_signer(provider, installed, signer_bin, tmp_path_factory):
    s = _signer(provider, signer_bin, tmp_path_factory.mktemp("flow-signer-p"), "signer-provider",
                PROVIDER_ID, PROVIDER_CONTROLLERS)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def consumer_signer(consumer, installed, signer_bin, tmp_path_factory):
    s = _signer(consumer, signer_bin, tmp_path_factory.mktemp("flow-signer-c"), "signer-consumer",
                CONSUMER_ID, CONSUMER_CONTROLLERS)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def consumer_webhook(consumer, installed, build_dir, source_dir, tmp_path_factory):
    """tenantgate's webhook on the consumer too (Liqo runs its slice webhook on both sides):
    the local slices the CLI applies pass through it."""
    inst = WebhookInstall(consumer, source_dir, tmp_path_factory.mktemp("flow-webhook-c"), free_port())
    inst.install()
    hook = Webhook(built(build_dir, "webhook/tenantgate-webhook"), inst,
                   consumer.serviceaccount_kubeconfig(INSTALL_NAMESPACE, WEBHOOK_SA, duration="6h"),
                   tmp_path_factory.mktemp("flow-webhook-c-logs"))
    try:
        with hook.running():
            yield hook
    finally:
        inst.uninstall(namespace=False)     # the consumer's signer still runs in it


@pytest.fixture(scope="module")
def peered(cli, provider, consumer, webhook, consumer_webhook, provider_signer, consumer_signer):
    """The consumer authenticated with the provider (ControlPlane Identity), once per module.
    Afterwards every slice, the peering and both tenant namespaces are gone."""
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig)
    rc, out, err = cli("authenticate", *both, "--cluster-id", CONSUMER_ID,
                       "--remote-cluster-id", PROVIDER_ID, "--timeout", "120s")
    assert rc == 0, out + err
    yield
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", CNS, "--wait=true",
                     "--timeout=60s", check=False, timeout=90)
    cli("unauthenticate", *both, "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID,
        "--wait", "--timeout", "60s")
    for c, ns in ((provider, PNS), (consumer, CNS)):
        c.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", ns, "--wait=false", check=False)
    # a namespace left terminating fails here, not in the next module that makes it again
    delete_namespaces(((provider, PNS), (consumer, CNS)), check=True)


@pytest.fixture
def slices(cli, consumer, peered):
    """create(name, *flags, timeout="120s") -> (exit, stdout, stderr) of `kubectl tenantgate
    create resourceslice` on the consumer; every slice made is deleted after the test."""
    made = []

    def create(name, *flags, timeout="120s"):
        made.append(name)
        return cli("create", "resourceslice", name, "--remote-cluster-id", PROVIDER_ID, *flags,
                   "--timeout", timeout, "--kubeconfig", consumer.kubeconfig)
    yield create
    for name in made:
        cli("delete", "resourceslice", name, "--remote-cluster-id", PROVIDER_ID, "--wait",
            "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)


# --- reading both sides ----------------------------------------------------------------------

def get_or_none(cluster, *args):
    return cluster.get_json(*args) if cluster.exists(*args) else None


def kubeconfig_of(consumer, name, tmp_path):
    """The slice Identity's kubeconfig Secret, written to a file; (path, client certificate PEM)."""
    secret = wait_for(lambda: get_or_none(consumer, "secret", f"kubeconfig-resourceslice-{name}", "-n", CNS),
                      timeout=30, what=f"Secret kubeconfig-resourceslice-{name}")
    text = base64.b64decode(secret["data"]["kubeconfig"])
    path = tmp_path / f"{name}.kubeconfig"
    path.write_bytes(text)
    return path, client_cert(text)


def client_cert(kubeconfig_text):
    line = next(x for x in kubeconfig_text.decode().splitlines() if "client-certificate-data" in x)
    return base64.b64decode(line.split(":", 1)[1].strip())


def whoami(provider, kubeconfig):
    info = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kubeconfig).stdout)
    return info["status"]["userInfo"]


def slice_csrs(provider, name):
    """The provider's CertificateSigningRequests whose request names the slice's user."""
    user = slice_user(name).encode()
    out = []
    for csr in provider.get_json("csr")["items"]:
        pem = base64.b64decode(csr["spec"]["request"])
        der = b"".join(base64.b64decode(line) for line in pem.splitlines()
                       if line and not line.startswith(b"-----"))
        if user in der:
            out.append(csr)
    return out


def user_bindings(provider, user):
    """(kind, namespace/name) of every RoleBinding and ClusterRoleBinding naming User user."""
    found = []
    for kind, args in (("rolebinding", ("-A",)), ("clusterrolebinding", ())):
        for b in provider.get_json(kind, *args)["items"]:
            if any(s.get("kind") == "User" and s.get("name") == user for s in b.get("subjects") or []):
                found.append((kind, f"{b['metadata'].get('namespace', '')}/{b['metadata']['name']}"))
    return found


def can_list(provider, kubeconfig, ns):
    """`kubectl auth can-i --list -n ns` as that kubeconfig: its rule lines."""
    out = provider.kubectl("auth", "can-i", "--list", "-n", ns, kubeconfig=kubeconfig).stdout
    return [tuple(line.split()) for line in out.splitlines()[1:] if line.strip()]


def condition(obj, kind):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return {}


# --- tests -----------------------------------------------------------------------------------

def test_slice_accepted_authenticates_then_deleted_leaves_nothing(cli, provider, consumer, slices,
                                                                  tmp_path):
    rc, out, err = slices("pool-a", "--cpu", "2", "--memory", "4Gi")
    assert rc == 0, err
    assert "ResourceSlice authentication: Accepted" in err and "ResourceSlice resources: Accepted" in err

    # The copy on the provider, answered there.
    copy = provider.get_json("rslice", "pool-a", "-n", PNS)
    labels = copy["metadata"]["labels"]
    assert labels["liqo.io/replicated"] == "true" and labels["liqo.io/originID"] == CONSUMER_ID
    assert condition(copy, "Authentication")["status"] == "Accepted"
    assert condition(copy, "Resources")["status"] == "Accepted"
    granted = copy["status"]["resources"]
    assert granted["cpu"] == "2" and granted["memory"] == "4Gi" and "pods" in granted

    # The consumer's Identity for it, and who its kubeconfig is on the provider.
    ident = wait_for(lambda: get_or_none(consumer, "identity", "resourceslice-pool-a", "-n", CNS),
                     timeout=30, what="Identity resourceslice-pool-a")
    assert ident["spec"]["type"] == "ResourceSlice" and ident["spec"]["clusterID"] == PROVIDER_ID
    owner = ident["metadata"]["ownerReferences"][0]
    local = consumer.get_json("rslice", "pool-a", "-n", CNS)
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == \
        ("ResourceSlice", "pool-a", local["metadata"]["uid"], True)
    kc, _ = kubeconfig_of(consumer, "pool-a", tmp_path)
    user = whoami(provider, kc)
    assert user["username"] == slice_user("pool-a")
    assert CONSUMER_ID in user["groups"]

    # What exists for it on the provider before the delete: the certificate cache and the CSR;
    # as under Liqo's provider, no binding names the slice's user (docs/LIQO.md, "Rights").
    cache = "liqo-remote-certificate-pool-a"
    assert provider.get_json("secret", cache, "-n", PNS)["metadata"]["ownerReferences"][0]["uid"] == \
        copy["metadata"]["uid"]
    assert len(slice_csrs(provider, "pool-a")) == 1
    assert not user_bindings(provider, slice_user("pool-a"))
    can_before = can_list(provider, kc, PNS)

    # Deleted on the consumer: everything for it goes, on both sides.
    rc, out, err = cli("delete", "resourceslice", "pool-a", "--remote-cluster-id", PROVIDER_ID, "--wait",
                       "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, err
    wait_for(lambda: not consumer.exists("identity", "resourceslice-pool-a", "-n", CNS)
             and not consumer.exists("secret", "kubeconfig-resourceslice-pool-a", "-n", CNS),
             timeout=60, what="Identity and kubeconfig Secret gone on the consumer")
    wait_for(lambda: not provider.exists("rslice", "pool-a", "-n", PNS), timeout=60,
             what="the copy gone on the provider")
    wait_for(lambda: not provider.exists("secret", cache, "-n", PNS), timeout=60,
             what=f"Secret {cache} gone on the provider")
    # Acting as the slice's user (its certificate still authenticates: nothing revokes it): its
    # rights are the group's, as before the delete; none came from the slice.
    assert not user_bindings(provider, slice_user("pool-a"))
    assert can_list(provider, kc, PNS) == can_before


@contextlib.contextmanager
def class_policy(provider, cls, policy):
    """The provider's policy for one slice class, removed afterwards."""
    provider.apply({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": POLICY_CONFIGMAP, "namespace": NS},
                    "data": {cls: json.dumps(policy)}})
    try:
        yield
    finally:
        provider.kubectl("delete", "configmap", POLICY_CONFIGMAP, "-n", NS, "--ignore-not-found",
                         check=False)


def test_over_quota_slice_is_denied_with_the_resource_and_the_excess(provider, consumer, slices):
    with class_policy(provider, "default", {"maxPerSlice": {"cpu": "4"}, "maxPerTenant": {"memory": "6Gi"}}):
        # (memory asked too: Liqo's default of 8Gi would be past maxPerTenant on its own)
        rc, out, err = slices("big-cpu", "--cpu", "6", "--memory", "1Gi", timeout="60s")
        assert rc == EXIT_REJECTED, err
        assert "ResourceSlice resources: Denied by the provider" in err, err
        assert "cpu: 6 asked, at most 4 per slice (2 over)" in err, err

        # Within the slice limit; the consumer's accepted slices add up against maxPerTenant.
        rc, out, err = slices("mem-1", "--cpu", "1", "--memory", "4Gi", timeout="60s")
        assert rc == 0, err
        rc, out, err = slices("mem-2", "--cpu", "1", "--memory", "4Gi", timeout="60s")
        assert rc == EXIT_REJECTED, err
        assert "memory: 4Gi asked with 4Gi already granted to this consumer, at most 6Gi per consumer " \
            "(2Gi over)" in err, err
        # The refusal is the provider's: its copy says the same.
        copy = provider.get_json("rslice", "mem-2", "-n", PNS)
        assert condition(copy, "Resources")["status"] == "Denied"
        assert "2Gi over" in condition(copy, "Resources")["message"]


def test_signers_killed_mid_flow_leave_one_identity_and_one_csr(provider, consumer, slices,
                                                                provider_signer, consumer_signer):
    """SIGKILL both signers after the consumer's request and the provider's CSR exist, before
    any verdict; after the restart the slice is accepted once: one CSR, one copy, one Identity."""
    provider_signer.stop()
    provider_signer.start("--controllers", "remoteresourceslice")      # CSRs made, none approved
    try:
        rc, out, err = slices("pool-r", "--cpu", "1", timeout="1s")
        assert rc == 4, err                                               # no verdict yet
        wait_for(lambda: provider.exists("rslice", "pool-r", "-n", PNS), timeout=30,
                 what="the copy on the provider")
        wait_for(lambda: len(slice_csrs(provider, "pool-r")) == 1, timeout=30,
                 what="the provider's CSR for the slice")
        local = consumer.get_json("rslice", "pool-r", "-n", CNS)
        assert not condition(local, "Authentication"), local.get("status")
        provider_signer.kill()
        consumer_signer.kill()
    finally:
        provider_signer.start()           # all its controllers again (the module's flags)
        consumer_signer.start()

    ident = wait_for(lambda: get_or_none(consumer, "identity", "resourceslice-pool-r", "-n", CNS),
                     timeout=60, what="Identity resourceslice-pool-r after the restarts")
    local = consumer.get_json("rslice", "pool-r", "-n", CNS)
    assert condition(local, "Authentication")["status"] == "Accepted"
    assert ident["metadata"]["ownerReferences"][0]["uid"] == local["metadata"]["uid"]
    time.sleep(3)                         # and nothing more comes
    assert len(slice_csrs(provider, "pool-r")) == 1
    idents = [i for i in consumer.get_json("identity", "-n", CNS)["items"]
              if (i["metadata"].get("labels") or {}).get("liqo.io/resourceslice-name") == "pool-r"]
    assert len(idents) == 1
    assert len([s for s in provider.get_json("rslice", "-n", PNS)["items"]
                if s["metadata"]["name"] == "pool-r"]) == 1


def test_renewed_slice_certificate_reaches_the_consumers_kubeconfig(provider, consumer, slices,
                                                                   provider_signer, tmp_path):
    """Own-signer mode with a 90 s maximum lifetime: the provider re-signs the slice's CSR at
    two thirds of it, the new certificate comes back in the slice's status, and the consumer's
    signer writes it into the Identity and its kubeconfig Secret. Signed with the provider's
    cluster CA, which its API server trusts: the consumer writes a renewed kubeconfig only once
    it authenticates there (docs/signer.md, renewal you can watch)."""
    ca = Path(provider.ca_file).parent / "ca.crt"
    provider_signer.stop()
    provider_signer.start("--signer-name", "tenantgate.io/identity", "--ca-cert", ca,
                          "--ca-key", ca.parent / "ca.key", "--max-cert-lifetime", "90")
    try:
        rc, out, err = slices("pool-n", "--cpu", "1", timeout="60s")
        assert rc == 0, err
        _, first = kubeconfig_of(consumer, "pool-n", tmp_path)
        assert "OK" in openssl("verify", "-CAfile", str(ca), input=first).decode()
        t0 = time.monotonic()

        def renewed():
            _, cert = kubeconfig_of(consumer, "pool-n", tmp_path)
            return cert if cert != first else None
        second = wait_for(renewed, timeout=90, interval=1, what="the renewed certificate in the kubeconfig")
        took = time.monotonic() - t0
        assert took < 80, f"renewed after {took:.0f} s"
        subject = openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", input=second).decode()
        assert f"CN={slice_user('pool-n')}" in subject and f"O={CONSUMER_ID}" in subject
        assert "OK" in openssl("verify", "-CAfile", str(ca), input=second).decode()
        ident = consumer.get_json("identity", "resourceslice-pool-n", "-n", CNS)
        assert base64.b64decode(ident["spec"]["authParams"]["signedCRT"]) == second
    finally:
        provider_signer.stop()
        provider_signer.start()


# --- what a consumer's own writes may wake (docs/threat-model.md) ---------------------------

def controlplane_kubeconfig_text(consumer):
    """The consumer's ControlPlane kubeconfig for the provider (its Identity's Secret), or None
    while there is none."""
    name = f"controlplane-{PROVIDER_ID}"
    if not consumer.exists("identity", name, "-n", CNS):
        return None
    ref = ((consumer.get_json("identity", name, "-n", CNS).get("status") or {})
           .get("kubeconfigSecretRef") or {}).get("name")
    if not ref or not consumer.exists("secret", ref, "-n", CNS):
        return None
    return base64.b64decode(consumer.get_json("secret", ref, "-n", CNS)["data"]["kubeconfig"]).decode()


def controlplane_kubeconfig(consumer, tmp_path):
    """The consumer's ControlPlane kubeconfig for the provider, as a file."""
    text = controlplane_kubeconfig_text(consumer)
    assert text, "the consumer has no ControlPlane kubeconfig"
    path = tmp_path / "controlplane.kubeconfig"
    path.write_text(text)
    return path


def tenant_reconciles(signer):
    return sum(v for (name, labels), v in signer.metrics().items()
               if name == "tenantgate_signer_reconciles_total" and ("controller", "tenant") in labels)


def _renews(names_and_origins):
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": f"{GROUP}/v1beta1", "kind": "Renew",
         "metadata": {"name": name, "namespace": PNS,
                      "labels": {"liqo.io/replicated": "true", "liqo.io/originID": origin}},
         "spec": {"consumerClusterID": CONSUMER_ID, "identityType": "ControlPlane"}}
        for name, origin in names_and_origins]}


def test_a_consumers_renews_wake_only_its_own_tenant(provider, consumer, provider_signer, peered, tmp_path):
    """The consumer's ControlPlane identity may write Renews, labels included, in its tenant
    namespace on the provider. A Renew wakes the Tenant its liqo.io/originID names, and a
    wake-up is queued ahead of new work (signer/workqueue.c): only the id the namespace's name
    fixes counts, so 40 Renews naming other ids, made with the consumer's own certificate,
    reconcile no Tenant, and one naming the consumer still wakes its own."""
    kc = controlplane_kubeconfig(consumer, tmp_path)
    assert whoami(provider, kc)["username"] == CONSUMER_ID
    forged = [(f"forged-{i}", f"cl-forged-{i}") for i in range(40)]
    before = tenant_reconciles(provider_signer)
    try:
        provider.kubectl("create", "-f", "-", input=json.dumps(_renews(forged)), kubeconfig=kc)
        time.sleep(3)       # the 40 events reach the signer well within this
        woken = tenant_reconciles(provider_signer) - before
        assert woken < 10, f"{woken} Tenant reconciles after 40 Renews naming other ids"
        before = tenant_reconciles(provider_signer)
        provider.kubectl("create", "-f", "-", input=json.dumps(_renews([("own", CONSUMER_ID)])), kubeconfig=kc)
        wait_for(lambda: tenant_reconciles(provider_signer) > before, timeout=10,
                 what="the consumer's own Tenant woken by its Renew")
    finally:
        provider.kubectl("delete", f"renews.{GROUP}", "-n", PNS, "--ignore-not-found",
                         *[n for n, _ in forged], "own", check=False)
