"""The Helm chart's node-bed part of `make test` (issue 46): lean, on the node suite's bed.

`make test` runs this file in the same pytest session as test_liqo_node.py (ctest
e2e-liqo-node), after it, so the one `node_provider` cluster (kubelet, containerd, runc, bridge
CNI) serves both; test_liqo_node.py runs on the bed as started, and this file waits for the
namespace it deletes.  From the oci-archives `make images` builds (webhook, signer):

  - `helm install` of manifests/chart/tenantgate, mode standalone (the one mode that runs
    without Liqo; guard and replace beside Liqo are test_liqo_guard.py's server-side dry runs),
    certs.source=job: the chart's certificate Job runs the certs image (certs/tenantgate-certs)
    before install (the serving Secret and the CA's Secret) and after it (the caBundle);
  - the serving certificate is the CA's and both webhook configurations carry that CA; both
    Deployments Ready through their probes; a forged Tenant sent through the API server is
    denied by the webhook pods with a reason code; the signer's replicas hold one Lease and
    exactly one reports itself leader;
  - `helm upgrade` to a changed webhook image reference (the same archive tagged <v>-next in
    the node's containerd: images/build's layers are reproducible, so a rebuilt -next image
    would have the same bytes) and `helm rollback 1`, each under a stream of admissions with
    none failed; the upgrade's Job, far from expiry, leaves the certificate and caBundle;
  - an upgrade with the renewal window wider than the certificate's life (the tool's own
    --renew-before-days check) rotates the serving certificate under the same CA, and the
    webhook still admits;
  - `helm uninstall --wait` leaves nothing labelled part-of=tenantgate and no release Secret,
    only the CRDs (kept, as Helm does) and the cluster's key Secret; the Secrets the Job
    wrote (the tool's, not Helm's) are deleted by the post-delete hook (docs/helm.md).

The module's teardown deletes those CRDs and the `liqo` namespace (`make test-liqo-node` may be
followed by other files).  The heavier node-bed checks (confinement, load, token
rotation, a second cluster) stay in test_deploy.py (`make test-node`).  Marked `node`; needs
root, e2e/node-bin and `make images`."""

import base64
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from bed import openssl, wait_for
from tenantgate_services import denial
from test_deploy import (NS, SIGNER, WEBHOOK, helm, leaders, lease_holder, pods, ready,
                         roll_under_admissions, tenant_in_wrong_namespace, version, webhook_image)
from test_helm import _ours

pytestmark = pytest.mark.node

CLUSTER_ID = "cl-helm-node"
TENANTGATE_CRDS = ("tenants.authentication.liqo.io", "identities.authentication.liqo.io",
                   "resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
                   "nameclaims.tenantgate.io")


CA_SECRET = "tenantgate-webhook-ca"
TLS_SECRET = "tenantgate-webhook-tls"


def _image_archives(source_dir, build_dir):
    v = version(source_dir)
    paths = [build_dir / "images" / f"tenantgate-{n}-{v}.oci.tar"
             for n in ("webhook", "signer", "certs")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"no image archives {missing}: run `make images` first", pytrace=False)
    return paths


def _tag_in_node(cluster, source, target):
    """A second reference to an image already in the node's containerd (namespace k8s.io)."""
    node = cluster.state_dir / "node"
    ctr = (node / "bindir").read_text().strip() + "/ctr"
    subprocess.run([ctr, "--address", str(node / "containerd.sock"), "--namespace", "k8s.io",
                    "images", "tag", "--force", source, target],
                   check=True, capture_output=True, text=True, timeout=60)


def _cleanup(c):
    """Back to the bed as started, for any file after this one: the release (if a test failed before uninstalling it), the CRDs Helm keeps, the namespace."""
    helm_bin = subprocess.run([str(Path(__file__).parent / "helm-bin")], capture_output=True,
                              text=True).stdout.strip()
    if helm_bin:
        subprocess.run([helm_bin, "uninstall", "tenantgate", "-n", NS, "--wait",
                        "--ignore-not-found"], env=_helm_env(c), capture_output=True,
                       timeout=180)
    c.kubectl("delete", "crd", *TENANTGATE_CRDS, "--ignore-not-found", "--wait=true",
              timeout=120, check=False)
    c.kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true", timeout=180,
              check=False)


def _helm_env(c):
    home = c.work_dir / "helm"
    return dict(os.environ, KUBECONFIG=str(c.kubeconfig), HELM_CACHE_HOME=str(home / "cache"),
                HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))


def _secret_pem(c, name):
    return base64.b64decode(c.get_json("secret", name, "-n", NS)["data"]["tls.crt"])


def _ca_bundles(c):
    """The caBundle of every webhook of both configurations, decoded."""
    return {base64.b64decode(h["clientConfig"].get("caBundle", ""))
            for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
            for h in c.get_json(kind, "tenantgate")["webhooks"]}


def _certs(c, tmp):
    """(CA PEM, serving PEM) after checking that the serving certificate is the CA's and that
    every webhook of both configurations trusts exactly that CA."""
    ca, tls = _secret_pem(c, CA_SECRET), _secret_pem(c, TLS_SECRET)
    (tmp / "ca.crt").write_bytes(ca)
    (tmp / "tls.crt").write_bytes(tls)
    openssl("verify", "-CAfile", str(tmp / "ca.crt"), str(tmp / "tls.crt"))
    assert _ca_bundles(c) == {ca}, "a webhook configuration does not carry the Job's CA"
    return ca, tls


def _job_state(c):
    """What the certificate Job's pods did, for a failed install."""
    out = c.kubectl("get", "jobs,pods", "-n", NS, "-o", "wide", check=False).stdout
    logs = c.kubectl("logs", "-n", NS, "-l", "app.kubernetes.io/name=tenantgate-certs",
                     "--tail=40", check=False)
    events = c.kubectl("get", "events", "-n", NS, "--sort-by=.lastTimestamp", check=False)
    return f"{out}\n{logs.stdout}{logs.stderr}\n{events.stdout[-3000:]}"


@pytest.fixture(scope="module")
def released(node_provider, source_dir, build_dir):
    """helm install (standalone, certs.source=job) from the images, both rollouts done."""
    c = node_provider
    v = version(source_dir)
    c.import_images(*_image_archives(source_dir, build_dir))
    # test_liqo_node.py, before this file, deletes the namespace without waiting.
    wait_for(lambda: not c.exists("namespace", NS), timeout=180,
             what=f"namespace {NS} of the previous file gone")
    try:
        try:
            # test_liqo_node.py leaves the tenant-namespace policy it applied with kubectl
            # apply -k: the chart adopts it (docs/helm.md, "Moving from kubectl apply -k"),
            # its fields too (server-side apply's conflict with kubectl's manager).
            helm(c, source_dir, "install", "--create-namespace", "--timeout", "150s",
                 "--take-ownership", "--force-conflicts",
                 "--set", f"clusterID={CLUSTER_ID}", "--set", "certs.source=job",
                 "--set", f"images.certs.tag={v}", "--set", f"images.webhook.tag={v}",
                 "--set", f"images.signer.tag={v}")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{_job_state(c)}") from None
        for d in (WEBHOOK, SIGNER):
            c.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=240s",
                      timeout=260)
        yield v
    finally:
        _cleanup(c)


def test_helm_install_webhook_admits_and_signer_leads(node_provider, released, tmp_path):
    c = node_provider
    _certs(c, tmp_path)
    for app in (WEBHOOK, SIGNER):
        ps = pods(c, app)
        assert len(ps) == 2 and all(ready(p) for p in ps), [p["status"] for p in ps]
    # Admitting: a Tenant outside any tenant namespace, sent through the API server to the
    # webhook Service, is refused with the webhook's reason code.
    r = c.apply(tenant_in_wrong_namespace(f"t-{uuid.uuid4().hex[:6]}"), check=False)
    reason, _ = denial(r.stderr)
    assert r.returncode != 0 and reason, r.stderr
    # Leading: one Lease holder, and of the two replicas exactly one says it leads.
    holder = wait_for(lambda: lease_holder(c), timeout=60, what="a signer Lease holder")
    states = wait_for(lambda: (lambda s: s if sorted(s.values()) == [0.0, 1.0] else None)(
        leaders(c)), timeout=60, what="one signer leader and one standby")
    leader = next(n for n, v in states.items() if v == 1.0)
    assert leader in holder, (leader, holder)


def test_helm_upgrade_and_rollback_lose_no_admission(node_provider, released, source_dir,
                                                     tmp_path):
    c = node_provider
    v = released
    before = _certs(c, tmp_path)
    _tag_in_node(c, f"docker.io/tenantgate/webhook:{v}", f"docker.io/tenantgate/webhook:{v}-next")
    rolled, n = roll_under_admissions(c, lambda: helm(
        c, source_dir, "upgrade", "--reuse-values", "--set", f"images.webhook.tag={v}-next"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}-next")
    assert _certs(c, tmp_path) == before, "the pre-upgrade Job renewed a certificate not due"
    print(f"helm upgrade: {rolled:.1f} s, {n} admissions, none failed")
    rolled, n = roll_under_admissions(c, lambda: helm(c, source_dir, "rollback", "1"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}")
    print(f"helm rollback: {rolled:.1f} s, {n} admissions, none failed")


def test_helm_upgrade_rotates_a_certificate_due(node_provider, released, source_dir, tmp_path):
    """certs.job.days is 365: a renewal window of 400 days makes the live certificate due."""
    c = node_provider
    ca, tls = _certs(c, tmp_path)
    helm(c, source_dir, "upgrade", "--reuse-values", "--set", "certs.job.renewBeforeDays=400")
    ca2, tls2 = _certs(c, tmp_path)
    assert ca2 == ca and tls2 != tls, "the serving certificate was not rotated under its CA"
    r = c.apply(tenant_in_wrong_namespace(f"t-{uuid.uuid4().hex[:6]}"), check=False)
    reason, _ = denial(r.stderr)
    assert r.returncode != 0 and reason, r.stderr


@pytest.mark.parametrize("mode, signer", [("guard", False), ("replace", True), ("standalone", True)])
def test_helm_upgrade_switches_mode(node_provider, released, source_dir, mode, signer):
    """`helm upgrade --set mode=...` (docs/LIQO.md): guard drops the signer, replace brings it
    back with the provider controllers only, standalone with all; the webhook admits in each."""
    c = node_provider
    helm(c, source_dir, "upgrade", "--reuse-values", "--set", f"mode={mode}",
         "--set", "apiServer.address=https://127.0.0.1:6443")
    assert c.exists("deployment", SIGNER, "-n", NS) == signer, mode
    if signer:
        c.kubectl("rollout", "status", f"deployment/{SIGNER}", "-n", NS, "--timeout=240s",
                  timeout=260)
        args = c.get_json("deployment", SIGNER, "-n", NS)["spec"]["template"]["spec"][
            "containers"][0]["args"]
        assert any(a.startswith("--controllers=") for a in args) == (mode == "replace"), args
        # the Lease outlives guard mode's removal: its holder must be one of the new pods
        wait_for(lambda: any(p["metadata"]["name"] in (lease_holder(c) or "") for p in pods(c, SIGNER)),
                 timeout=90, what=f"a {mode} signer pod holding the Lease")
    else:
        wait_for(lambda: not pods(c, SIGNER), timeout=120, what="the signer pods gone")
    r = c.apply(tenant_in_wrong_namespace(f"t-{uuid.uuid4().hex[:6]}"), check=False)
    reason, _ = denial(r.stderr)
    assert r.returncode != 0 and reason, (mode, r.stderr)


def test_helm_uninstall_leaves_only_the_crds(node_provider, released, source_dir):
    c = node_provider
    t0 = time.monotonic()
    helm(c, source_dir, "uninstall", "--wait")
    left = {k for k in _ours(c) if k != ("Namespace", NS)}
    assert not left, left
    assert not c.get_json("secrets", "-n", NS, "-l", "owner=helm")["items"]
    # The Job's Secrets (the tool's, not Helm's) go with the post-delete hook; left on
    # purpose: the cluster's key that the signer's keys controller made (Liqo's Secret name;
    # docs/helm.md).
    secrets = {i["metadata"]["name"] for i in c.get_json("secrets", "-n", NS)["items"]}
    assert secrets == {"authentication-keys"}, secrets
    wait_for(lambda: not pods(c, WEBHOOK) and not pods(c, SIGNER), timeout=120,
             what="the webhook and signer pods gone")
    for crd in TENANTGATE_CRDS:
        assert c.exists("crd", crd), crd        # Helm keeps CRDs
    print(f"helm uninstall to no pods: {time.monotonic() - t0:.1f} s")
