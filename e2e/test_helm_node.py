"""The Helm chart's node-bed part of `make test` (issue 46): lean, on the node suite's bed.

`make test` runs this file in the same pytest session as test_liqo_node.py (ctest
e2e-liqo-node), first, so the one `node_provider` cluster (kubelet, containerd, runc, bridge
CNI) serves both.  From the oci-archives `make images` builds (webhook, signer):

  - `helm install` of manifests/chart/tenantgate, mode standalone (the one mode that runs
    without Liqo; guard and replace beside Liqo are test_liqo_guard.py's server-side dry runs),
    the serving certificate from certs/tenantgate-certs --apply (certs.source=secret);
  - both Deployments Ready through their probes; a forged Tenant sent through the API server
    is denied by the webhook pods with a reason code; the signer's replicas hold one Lease
    and exactly one reports itself leader;
  - `helm upgrade` to a changed webhook image reference (the same archive tagged <v>-next in
    the node's containerd: images/build's layers are reproducible, so a rebuilt -next image
    would have the same bytes) and `helm rollback 1`, each under a stream of admissions with
    none failed;
  - `helm uninstall --wait` leaves nothing labelled part-of=tenantgate and no release Secret,
    only the CRDs (kept, as Helm does).

The module's teardown deletes those CRDs and the `liqo` namespace, so test_liqo_node.py finds
the bed as the cluster started.  The heavier node-bed checks (confinement, load, token
rotation, a second cluster) stay in test_deploy.py (`make test-node`).  Marked `node`; needs
root, e2e/node-bin and `make images`."""

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from bed import wait_for
from tenantgate_services import denial
from test_deploy import (NS, SIGNER, WEBHOOK, helm, leaders, lease_holder, pods, ready,
                         roll_under_admissions, tenant_in_wrong_namespace, version, webhook_image)
from test_helm import _ours

pytestmark = pytest.mark.node

CLUSTER_ID = "cl-helm-node"
TENANTGATE_CRDS = ("tenants.authentication.liqo.io", "identities.authentication.liqo.io",
                   "resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
                   "nameclaims.tenantgate.io")


def _image_archives(source_dir, build_dir):
    v = version(source_dir)
    paths = [build_dir / "images" / f"tenantgate-{n}-{v}.oci.tar" for n in ("webhook", "signer")]
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
    """Back to the bed as started, for the next file of the session (test_liqo_node.py):
    the release (if a test failed before uninstalling it), the CRDs Helm keeps, the namespace."""
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


@pytest.fixture(scope="module")
def released(node_provider, source_dir, build_dir):
    """helm install (standalone) from the images, the cert tool's --apply, both rollouts done."""
    c = node_provider
    v = version(source_dir)
    c.import_images(*_image_archives(source_dir, build_dir))
    try:
        helm(c, source_dir, "install", "--create-namespace", "--set", f"clusterID={CLUSTER_ID}",
             "--set", f"images.webhook.tag={v}", "--set", f"images.signer.tag={v}")
        env = dict(os.environ, KUBECTL=c.kubectl_path)
        p = subprocess.run([str(source_dir / "certs" / "tenantgate-certs"), "--out",
                            str(c.work_dir / "helm-node-certs"), "--apply", "--kubeconfig",
                            c.kubeconfig], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        for d in (WEBHOOK, SIGNER):
            c.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=240s",
                      timeout=260)
        yield v
    finally:
        _cleanup(c)


def test_helm_install_webhook_admits_and_signer_leads(node_provider, released):
    c = node_provider
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


def test_helm_upgrade_and_rollback_lose_no_admission(node_provider, released, source_dir):
    c = node_provider
    v = released
    _tag_in_node(c, f"docker.io/tenantgate/webhook:{v}", f"docker.io/tenantgate/webhook:{v}-next")
    rolled, n = roll_under_admissions(c, lambda: helm(
        c, source_dir, "upgrade", "--reuse-values", "--set", f"images.webhook.tag={v}-next"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}-next")
    print(f"helm upgrade: {rolled:.1f} s, {n} admissions, none failed")
    rolled, n = roll_under_admissions(c, lambda: helm(c, source_dir, "rollback", "1"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}")
    print(f"helm rollback: {rolled:.1f} s, {n} admissions, none failed")


def test_helm_uninstall_leaves_only_the_crds(node_provider, released, source_dir):
    c = node_provider
    t0 = time.monotonic()
    helm(c, source_dir, "uninstall", "--wait")
    left = {k for k in _ours(c) if k != ("Namespace", NS)}
    assert not left, left
    assert not c.get_json("secrets", "-n", NS, "-l", "owner=helm")["items"]
    wait_for(lambda: not pods(c, WEBHOOK) and not pods(c, SIGNER), timeout=120,
             what="the webhook and signer pods gone")
    for crd in TENANTGATE_CRDS:
        assert c.exists("crd", crd), crd        # Helm keeps CRDs
    print(f"helm uninstall to no pods: {time.monotonic() - t0:.1f} s")
