"""Replace mode down to a Ready virtual node and a pod Running on the provider (issue 38).

The provider is a bed cluster with a real node (`node_provider`: kube-scheduler, containerd,
kubelet, pods in the bed's network namespace).  It runs Liqo v1.2.0 with its authentication
off (test_liqo_replace.py's setup), tenantgate-webhook, and tenantgate-signer with the
provider controllers in own-signer mode with `--max-cert-lifetime 90`, so the slice's
certificate is renewed within the test.  The consumer (a plain bed cluster) runs Liqo fully on.

After `liqoctl authenticate` and `liqoctl create resourceslice`, the consumer's VirtualNode
controller writes the virtual-kubelet Deployment `vk-<slice>`; the consumer has no kubelet, so
the test runs that Deployment's container on the host (liqo_processes.virtual_kubelet_process:
its arguments and environment, a token of its ServiceAccount, POD_IP 127.0.0.1).  The
virtual-kubelet reaches the provider with the slice kubeconfig tenantgate issued (Secret
`kubeconfig-resourceslice-<slice>`, read by the virtual-kubelet itself).  Then, each step timed:

- the virtual node becomes Ready on the consumer;
- a pod in a namespace offloaded with `liqoctl offload namespace` becomes a ShadowPod on the
  provider, and a Pod Running on the provider's real node (the bed's pause image); its status
  comes back to the consumer's pod;
- the slice certificate is renewed and the first one expires; the virtual-kubelet takes the
  new one ("Updated remote cluster client certificate") and a second pod still runs;
- unoffload, delete the slice, `liqoctl unauthenticate` (the consumer's crd-replicator paused
  3 s across it, so the replicated Renew is deleted after the Tenant: docs/LIQO.md, "Unpeering
  and the consumer's replicas"): nothing of the peering is left on the provider; `liqoctl
  authenticate` again works.

Liqo's ShadowPod webhook (resource enforcement on, the chart's default) admits a ShadowPod
only against an `offloading.liqo.io` Quota of the slice user, which in replace mode
tenantgate's signer makes as Liqo's quotacreator would (break 2 of issue 38); the test waits
for it and reads its user and resources.

The virtual-kubelet keeps its kubelet serving certificate under the fixed path /tmp/certs
(Liqo's); the test removes its files there afterwards.  Marked `node`: ctest label
`e2e-liqo-node`, `make test-liqo-node`; needs root, e2e/node-bin and e2e/liqo-bin.
"""

import base64
import hashlib
import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from bed import free_port, wait_for
from liqo_processes import LIQO_NS, virtual_kubelet_process
from liqo_replace_mode import GROUP, NEWEST, liqo_root, own_signer_args, replace_mode
from tenantgate_services import Webhook, WebhookInstall, WEBHOOK_SA, built
from test_liqo import Liqo
from test_liqo_renewal import _cert_facts

pytestmark = pytest.mark.node

SLICE = "vkpool"
LIFETIME_S = 90                 # the signer's --max-cert-lifetime (its minimum)
OFFLOADING = "offloading.liqo.io"
VK_CERTS = Path("/tmp/certs")   # virtual-kubelet's serving certificate store (fixed in Liqo)
VK_CERT_UPDATED = "Updated remote cluster client certificate"
# The consumer's crd-replicator is paused this long across `liqoctl unauthenticate` (below
# the signer's 10 s unpeering grace, signer/unpeer_plan.h).
REPLICATOR_PAUSE_S = 3


# --- the bed ------------------------------------------------------------------------------------

class Bed:
    """Both sides' Liqo, tenantgate on the provider, and the virtual-kubelet once started."""

    def __init__(self, liqo, prov, cons, signer, webhook, work):
        self.liqo, self.prov, self.cons = liqo, prov, cons
        self.signer, self.webhook, self.work = signer, webhook, work
        self.vk = None

    def logs(self, lines=20):
        out = [f"--- {s.cluster.name} {n}:\n{p.process.log_tail(lines)}"
               for s in (self.prov, self.cons) for n, p in s.processes.items()]
        out.append(f"--- tenantgate-signer:\n{self.signer.process.log_tail(lines)}")
        out.append(f"--- tenantgate-webhook:\n{self.webhook.log_tail(lines)}")
        if self.vk:
            out.append(f"--- virtual-kubelet:\n{self.vk.process.log_tail(lines)}")
        return "\n".join(out)


def _webhook_on(cluster, source_dir, build_dir, work):
    """tenantgate-webhook on the node cluster, as tenantgate_services' session fixtures set it
    up on the plain provider (those are tied to that cluster)."""
    inst = WebhookInstall(cluster, source_dir, work / "webhook-install", free_port())
    inst.install()
    kubeconfig = cluster.serviceaccount_kubeconfig(LIQO_NS, WEBHOOK_SA, duration="6h")
    hook = Webhook(built(build_dir, "webhook/tenantgate-webhook"), inst, kubeconfig,
                   work / "webhook-logs")
    (work / "webhook-logs").mkdir(parents=True, exist_ok=True)
    hook.start()
    hook.wait_ready()
    return inst, hook


@pytest.fixture(scope="module")
def bed(node_provider, consumer, source_dir, build_dir, signer_bin, tmp_path_factory):
    from conftest import install_crds     # conftest's own module, as pytest loaded it
    work = tmp_path_factory.mktemp("liqo-node")
    for cluster in (node_provider, consumer):
        install_crds(cluster, source_dir)
    inst = hook = None
    try:
        inst, hook = _webhook_on(node_provider, source_dir, build_dir, work)
        with replace_mode(node_provider, consumer, source_dir, signer_bin, work, "v",
                          own_signer=True, signer_args=own_signer_args(node_provider, LIFETIME_S)) \
                as (prov, cons, signer):
            b = Bed(Liqo(liqo_root(), NEWEST), prov, cons, signer, hook, work)
            try:
                yield b
            finally:
                if b.vk:
                    print(f"virtual-kubelet exit status {b.vk.stop()}")
    finally:
        if hook:
            hook.stop()
        if inst:
            inst.uninstall()
        for f in VK_CERTS.glob("virtual-kubelet-*.pem"):
            f.unlink()
        if VK_CERTS.is_dir() and not any(VK_CERTS.iterdir()):
            VK_CERTS.rmdir()


# --- observations -------------------------------------------------------------------------------

def _ok(fn):
    """A step that passes when fn returns (its value is the output) and fails if it raises."""
    return lambda: (0, f"{fn()}\n")


def _wait(predicate, timeout, what):
    def step():
        return 0, f"{wait_for(predicate, timeout=timeout, interval=1, what=what)}\n"
    return step


def _ctl(b, *args, timeout=180):
    def step():
        rc, out, err = b.liqo.ctl(*args, timeout=timeout)
        return rc, out + err
    return step


def _kubectl(cluster, *args, timeout=150):
    def step():
        p = cluster.kubectl(*args, check=False, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    return step


def _get(cluster, *args):
    """kubectl get ... -o json, or None when it fails (absent)."""
    p = cluster.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(p.stdout) if p.returncode == 0 else None


def _kubeconfig_text(cons, pid, identity):
    sec = _get(cons.cluster, "secret", f"kubeconfig-{identity}", "-n", f"liqo-tenant-{pid}")
    data = (sec or {}).get("data") or {}
    return base64.b64decode(data["kubeconfig"]).decode() if data.get("kubeconfig") else None


def _condition(obj, kind):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c.get("status")
    return None


def _slice_accepted(cons, pid):
    rs = _get(cons.cluster, f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}")
    return any(c.get("type") == "Authentication" and c.get("status") == "Accepted"
               for c in ((rs or {}).get("status") or {}).get("conditions") or [])


def _quota_of(prov, user):
    items = _get(prov.cluster, f"quotas.{OFFLOADING}", "-A")["items"]
    return next((q for q in items if (q.get("spec") or {}).get("user") == user), None)


def _pod(name, namespace, node, image):
    """A pod bound to the virtual node (the consumer has no scheduler), the bed's pause image."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeName": node, "automountServiceAccountToken": False,
                     "terminationGracePeriodSeconds": 1,
                     "tolerations": [{"key": "virtual-node.liqo.io/not-allowed",
                                      "operator": "Exists", "effect": "NoExecute"}],
                     "containers": [{"name": "pause", "image": image,
                                     "imagePullPolicy": "IfNotPresent",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"},
                                                   "limits": {"cpu": "50m", "memory": "32Mi"}}}]}}


def _pause_image(cluster):
    """The reference of the pause image e2e/node-bin built and the node imported."""
    bindir = Path((cluster.state_dir / "node" / "bindir").read_text().strip())
    return (bindir / "pause.image").read_text().strip()


def _shadowpod(prov, name):
    items = _get(prov.cluster, f"shadowpods.{OFFLOADING}", "-A")["items"]
    return next((s for s in items if s["metadata"]["name"] == name), None)


def _running_on_provider(prov, namespace, name):
    """(phase, node) of the provider's Pod once it runs on the bed's node, else None."""
    pod = _get(prov.cluster, "pod", name, "-n", namespace)
    st = (pod or {}).get("status") or {}
    if st.get("phase") == "Running" and pod["spec"].get("nodeName") == prov.cluster.node_name:
        return st["phase"], pod["spec"]["nodeName"]
    return None


def _running_on_consumer(cons, namespace, name):
    pod = _get(cons.cluster, "pod", name, "-n", namespace)
    return "Running" if ((pod or {}).get("status") or {}).get("phase") == "Running" else None


def _node_ready(cons, node):
    return _condition(_get(cons.cluster, "node", node), "Ready") == "True"


def _left_on_provider(prov, cid, slice_user, remote_ns):
    """What of the peering is still on the provider: {kind: [names]}."""
    c = prov.cluster
    ns = f"liqo-tenant-{cid}"
    left = {}

    def names(*args):
        return [o["metadata"]["name"] for o in (_get(c, *args) or {}).get("items", [])]
    if c.exists("namespace", ns):
        for kind in (f"tenants.{GROUP}", f"resourceslices.{GROUP}", f"renews.{GROUP}",
                     f"quotas.{OFFLOADING}", f"shadowpods.{OFFLOADING}",
                     f"namespacemaps.{OFFLOADING}", "rolebindings", "roles", "pods"):
            left[kind] = names(kind, "-n", ns)
        left["secrets"] = [n for n in names("secrets", "-n", ns) if n != "liqo-nonce"]
    if remote_ns and c.exists("namespace", remote_ns):
        left["offloaded namespace"] = [remote_ns]
    left["shadowpods anywhere"] = names(f"shadowpods.{OFFLOADING}", "-A")
    left["clusterrolebindings"] = [
        b["metadata"]["name"] for b in _get(c, "clusterrolebindings")["items"]
        if any(s.get("name") in (cid, slice_user) for s in b.get("subjects") or [])]
    left["pending csrs"] = [
        r["metadata"]["name"] for r in _get(c, "csr")["items"]
        if not (r.get("status") or {}).get("conditions")
        and (r["spec"].get("username") in (cid, slice_user)
             or (r["metadata"].get("labels") or {}).get("liqo.io/remote-cluster-id") == cid)]
    return {k: v for k, v in left.items() if v}


# --- the flow -----------------------------------------------------------------------------------

class Flow:
    """Per step (rc, output, seconds) and what was seen between steps."""

    def __init__(self, bed):
        self.bed = bed
        self.steps = {}
        self.seen = {}

    def run(self, step, fn):
        t0 = time.monotonic()
        try:
            rc, out = fn()
        except Exception as e:      # an observation that could not be made fails its step
            rc, out = 1, f"{type(e).__name__}: {e}"
        self.steps[step] = (rc, out, time.monotonic() - t0)
        print(f"{step}: rc {rc} in {self.steps[step][2]:.1f}s\n{out}")
        return rc == 0

    def observe(self, key, fn):
        def step():
            self.seen[key] = fn()
            return 0, f"{key}: {self.seen[key]}\n"
        return step


def _start_vk(b, pid):
    """The virtual-kubelet of the Deployment the consumer's VirtualNode controller wrote."""
    ns = f"liqo-tenant-{pid}"
    dep = _get(b.cons.cluster, "deployment", f"vk-{SLICE}", "-n", ns)
    sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
    kubeconfig = b.cons.cluster.serviceaccount_kubeconfig(ns, sa, duration="6h")
    b.vk = virtual_kubelet_process(dep, b.prov.bin_dir / "virtual-kubelet", kubeconfig,
                                   b.work / "virtual-kubelet.log").start()
    shown = ("POD_IP", "POD_NAME", "POD_NAMESPACE", "VIRTUALNODE_NAME")
    return f"args {b.vk.args[1:]}\nenv { {k: b.vk.env.get(k) for k in shown} }"


def _stop_vk(b):
    return f"exit status {b.vk.stop()}"


def _renewed(b, pid, first):
    """The slice kubeconfig's serial once it changed and the first certificate has expired."""
    text = _kubeconfig_text(b.cons, pid, f"resourceslice-{SLICE}")
    serial, _ = _cert_facts(text)
    return serial if serial != first[0] and time.time() > first[1] + 5 else None


@pytest.fixture(scope="module")
def flow(bed, node_provider):
    b = bed
    cid, pid = b.cons.cluster_id, b.prov.cluster_id
    cons_c, prov_c = b.cons.cluster, b.prov.cluster
    slice_user = f"{SLICE}-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"
    offloaded = f"vk-{uuid.uuid4().hex[:6]}"
    image = _pause_image(node_provider)
    both = ("--kubeconfig", cons_c.kubeconfig, "--remote-kubeconfig", prov_c.kubeconfig,
            "--timeout", "120s")
    f = Flow(b)
    f.seen.update({"slice user": slice_user, "image": image, "remote namespace": None})
    t_start = time.monotonic()

    def quota():
        """The signer's Quota for the slice user, as Liqo's quotacreator makes it."""
        q = wait_for(lambda: _quota_of(b.prov, slice_user), timeout=60, interval=1,
                     what=f"a Quota of {slice_user} made by tenantgate-signer")
        f.seen["quota"] = q["spec"]
        return 0, json.dumps(q["spec"])

    def offload():
        cons_c.create_namespace(offloaded)
        return _ctl(b, "offload", "namespace", offloaded, "--pod-offloading-strategy", "Remote",
                    "--timeout", "120s", "--kubeconfig", cons_c.kubeconfig)()

    def nothing_left():
        """Wait for the provider to hold nothing of the peering; what was left is kept."""
        last = {}

        def gone():
            last.clear()
            last.update(_left_on_provider(b.prov, cid, slice_user, f.seen["remote namespace"]))
            return not last
        try:
            wait_for(gone, timeout=90, interval=1, what="the peering gone from the provider")
            return 0, "nothing left"
        except TimeoutError as e:
            return 1, f"{e}; left: {last}"
        finally:
            f.seen["left"] = dict(last)

    def unauthenticate():
        """`liqoctl unauthenticate` with the consumer's crd-replicator paused for a moment: it
        deletes its replicated Renew on the provider only after the Tenant's deletion reached
        tenantgate-signer, as a consumer under load does. The order that once left the Renew
        behind for good (a signer unbinding the consumer first), made certain."""
        repl = b.cons.processes["crd-replicator"].process
        os.kill(repl.pid, signal.SIGSTOP)
        try:
            rc, out = _ctl(b, "unauthenticate", *both)()
            time.sleep(REPLICATOR_PAUSE_S)
        finally:
            os.kill(repl.pid, signal.SIGCONT)
        return rc, out + f"(crd-replicator paused {REPLICATOR_PAUSE_S}s)\n"

    def remote_ns():
        sp = _shadowpod(b.prov, "p1")
        f.seen["remote namespace"] = sp and sp["metadata"]["namespace"]
        return sp

    steps = [
        ("authenticate", _ctl(b, "authenticate", *both)),
        ("create resourceslice", _ctl(
            b, "create", "resourceslice", SLICE, "--remote-cluster-id", pid, "--cpu", "2",
            "--memory", "4Gi", "--pods", "10", "--kubeconfig", cons_c.kubeconfig)),
        ("slice accepted", _wait(lambda: _slice_accepted(b.cons, pid), 90, "slice Accepted")),
        ("slice kubeconfig", _wait(
            lambda: _kubeconfig_text(b.cons, pid, f"resourceslice-{SLICE}"), 90,
            "slice kubeconfig Secret")),
        ("first slice certificate", f.observe("first cert", lambda: _cert_facts(
            _kubeconfig_text(b.cons, pid, f"resourceslice-{SLICE}")))),
        ("provider quota", quota),
        ("virtual-kubelet deployment", _wait(lambda: _get(
            cons_c, "deployment", f"vk-{SLICE}", "-n", f"liqo-tenant-{pid}"), 90,
            f"Deployment vk-{SLICE} on the consumer")),
        ("start virtual-kubelet", _ok(lambda: _start_vk(b, pid))),
        ("virtual node ready", _wait(lambda: _node_ready(b.cons, SLICE), 120,
                                     f"node {SLICE} Ready on the consumer")),
        ("node capacity", f.observe("capacity", lambda: _get(cons_c, "node", SLICE)
                                    ["status"]["capacity"])),
        ("offload namespace", offload),
        ("pod created", _ok(lambda: cons_c.apply(_pod("p1", offloaded, SLICE, image)).stdout)),
        ("shadowpod on provider", _wait(remote_ns, 120, "ShadowPod p1 on the provider")),
        ("pod running on provider", lambda: _wait(lambda: _running_on_provider(
            b.prov, f.seen["remote namespace"], "p1"), 180, "Pod p1 Running on the node")()),
        ("pod running on consumer", _wait(lambda: _running_on_consumer(b.cons, offloaded, "p1"),
                                          120, "consumer pod p1 Running")),
        ("slice certificate renewed", lambda: _wait(
            lambda: _renewed(b, pid, f.seen["first cert"]), 3 * LIFETIME_S,
            "a renewed slice certificate and the first one expired")()),
        ("virtual-kubelet took it", _wait(lambda: VK_CERT_UPDATED in b.vk.log(), 60,
                                          "the virtual-kubelet's certificate update")),
        ("pod after renewal", _ok(
            lambda: cons_c.apply(_pod("p2", offloaded, SLICE, image)).stdout)),
        ("pod after renewal running on provider", lambda: _wait(lambda: _running_on_provider(
            b.prov, f.seen["remote namespace"], "p2"), 180, "Pod p2 Running on the node")()),
        ("pod after renewal running on consumer", _wait(
            lambda: _running_on_consumer(b.cons, offloaded, "p2"), 120, "consumer pod p2 Running")),
        ("node ready after renewal", _wait(lambda: _node_ready(b.cons, SLICE), 30,
                                           f"node {SLICE} still Ready")),
        ("delete pods", _kubectl(cons_c, "delete", "pod", "p1", "p2", "-n", offloaded,
                                 "--ignore-not-found", "--timeout=120s")),
        ("unoffload namespace", _ctl(b, "unoffload", "namespace", offloaded, "--skip-confirm",
                                     "--kubeconfig", cons_c.kubeconfig)),
        ("delete resourceslice", _kubectl(cons_c, "delete", f"resourceslices.{GROUP}", SLICE,
                                          "-n", f"liqo-tenant-{pid}", "--wait=false")),
        ("virtual-kubelet deployment gone", _wait(lambda: not _get(
            cons_c, "deployment", f"vk-{SLICE}", "-n", f"liqo-tenant-{pid}"), 120,
            f"Deployment vk-{SLICE} deleted")),
        ("stop virtual-kubelet", _ok(lambda: _stop_vk(b))),
        ("resourceslice gone", _wait(lambda: not _get(
            cons_c, f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}"), 120,
            "the ResourceSlice deleted on the consumer")),
        ("virtual node gone", _wait(lambda: not _get(cons_c, "node", SLICE), 60,
                                    f"node {SLICE} deleted on the consumer")),
        ("unauthenticate", unauthenticate),
        ("left behind", nothing_left),
        ("authenticate again", _ctl(b, "authenticate", *both)),
    ]
    lenient = ("left behind", "node capacity", "virtual-kubelet took it")
    for step, fn in steps:
        if not f.run(step, fn) and step not in lenient:
            break
    f.seen["flow seconds"] = time.monotonic() - t_start
    print(f"flow: {f.seen['flow seconds']:.0f}s; seen {f.seen}")
    yield f
    if b.vk and b.vk.alive():
        b.vk.stop()
    b.liqo.ctl("unauthenticate", *both)
    cons_c.delete_namespace(offloaded)


def _passes(flow, *steps):
    for step in steps:
        rc, out, _ = flow.steps.get(step, (None, "(not run)", 0))
        assert rc == 0, f"{step} failed:\n{out}\n{flow.bed.logs()}"


def test_virtual_kubelet_runs_from_the_consumers_deployment(flow):
    _passes(flow, "authenticate", "create resourceslice", "slice accepted", "slice kubeconfig",
            "virtual-kubelet deployment", "start virtual-kubelet")
    args = flow.bed.vk.args
    assert any(str(a).startswith("--foreign-kubeconfig-secret-name=kubeconfig-resourceslice-")
               for a in args), args


def test_virtual_node_becomes_ready(flow):
    _passes(flow, "virtual node ready")
    cap = flow.seen.get("capacity") or {}
    assert cap.get("cpu") == "2" and cap.get("memory") == "4Gi", cap


def test_provider_has_liqos_quota_for_the_slice_user(flow):
    _passes(flow, "provider quota")
    q = flow.seen["quota"]
    assert q["user"] == flow.seen["slice user"], q
    assert q["resources"].get("cpu") == "2" and q["resources"].get("memory") == "4Gi", q


def test_offloaded_pod_runs_on_the_providers_node(flow):
    _passes(flow, "offload namespace", "pod created", "shadowpod on provider",
            "pod running on provider", "pod running on consumer")


def test_virtual_kubelet_keeps_access_across_renewal(flow):
    _passes(flow, "slice certificate renewed", "virtual-kubelet took it", "pod after renewal",
            "pod after renewal running on provider", "pod after renewal running on consumer",
            "node ready after renewal")


def test_unpeering_leaves_nothing_on_the_provider(flow):
    _passes(flow, "delete pods", "unoffload namespace", "delete resourceslice",
            "virtual-kubelet deployment gone", "stop virtual-kubelet", "resourceslice gone",
            "virtual node gone", "unauthenticate")
    _passes(flow, "left behind")
    assert not flow.seen["left"], flow.seen["left"]


def test_authenticate_again(flow):
    _passes(flow, "authenticate again")
