"""The manifests as shipped, from the images `make images` builds, on a real node (issue 14).

A cluster with a node (`node_provider`: kubelet, containerd, runc, bridge CNI, in the bed's own
network namespace) imports the oci-archives from build/images, gets `kubectl apply -k` of an
overlay that only names the images, and the cert step (certs/tenantgate-certs --apply).  Then:
  - both Deployments become Available through their own readiness probes;
  - every container runs as uid 65532, with no capabilities, no new privileges, a read-only
    root and the memory limit of the manifest (read from the kernel, not from the API);
  - the apiserver calls the webhook through its Service (aggregator routing: Service ->
    EndpointSlice -> pod IP) and the webhook answers from its in-cluster config;
  - a consumer cluster authenticates to this one end to end (kubectl tenantgate authenticate)
    with the signer running in-cluster;
  - a rolling update of the webhook under a steady stream of admissions loses none;
  - the signer's two replicas hold one Lease; deleting the leader's pod hands it over.

Marked `node`: run with `make test-node` or `e2e/run -m node test_deploy.py` (ctest label
e2e-node).  Needs root, `make images` and e2e/node-bin (see e2e/README.md)."""

import json
import os
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from tenantgate_services import denial, tenant_namespace_manifest
from testbed import wait_for

pytestmark = pytest.mark.node

NS = "liqo"
PROVIDER_ID = "cl-node-provider"
CONSUMER_ID = "cl-node-consumer"
WEBHOOK = "tenantgate-webhook"
SIGNER = "tenantgate-signer"
UID = 65532


def version(source_dir):
    text = (source_dir / "cli" / "cli.h").read_text()
    return re.search(r'#define TG_VERSION "([^"]+)"', text).group(1)


@pytest.fixture(scope="module")
def image_archives(source_dir, build_dir):
    v = version(source_dir)
    paths = [build_dir / "images" / f"tenantgate-{n}-{v}.oci.tar" for n in ("webhook", "signer")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"no image archives {missing}: run `make images` first")
    return paths


def write_overlay(cluster, source_dir, v):
    """The shipped manifests with only the image references set (kustomize `images:`)."""
    d = cluster.work_dir / "install"
    d.mkdir(parents=True, exist_ok=True)
    base = os.path.relpath(source_dir / "manifests", d)
    (d / "kustomization.yaml").write_text(
        "# written by e2e/test_deploy.py: the shipped install, images named, nothing else\n"
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {base}\n"
        "images:\n"
        f"  - name: tenantgate/webhook\n    newName: tenantgate/webhook\n    newTag: \"{v}\"\n"
        f"  - name: tenantgate/signer\n    newName: tenantgate/signer\n    newTag: \"{v}\"\n")
    return d


@pytest.fixture(scope="module")
def deployed(node_provider, image_archives, source_dir, build_dir):
    """The install, as README's Install section says; returns the seconds it took."""
    c = node_provider
    t0 = time.monotonic()
    c.import_images(*image_archives)
    c.kubectl("apply", "-k", write_overlay(c, source_dir, version(source_dir)))
    # The signer finds the cluster id where Liqo keeps it; without Liqo, `install` writes it.
    proc = subprocess.run([str(build_dir / "cli" / "kubectl-tenantgate"), "install", "--kubeconfig",
                           c.kubeconfig, "--cluster-id", PROVIDER_ID],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for f in sorted((Path(__file__).parent / "testdata").glob("*.yaml")):
        c.kubectl("apply", "-f", f)
    env = dict(os.environ, KUBECTL=c.kubectl_path)
    proc = subprocess.run([str(source_dir / "certs" / "tenantgate-certs"), "--out",
                           str(c.work_dir / "certs"), "--apply", "--kubeconfig", c.kubeconfig],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for d in (WEBHOOK, SIGNER):
        c.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=240s", timeout=260)
    return time.monotonic() - t0


def pods(cluster, app):
    items = cluster.get_json("pods", "-n", NS, "-l", f"app.kubernetes.io/name={app}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def ready(pod):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod.get("status", {}).get("conditions", []))


def container_pid(cluster, pod):
    """The host PID of the pod's (only) container, from the node's containerd, and the
    memory cgroup the kernel has it in."""
    cid = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    node = cluster.state_dir / "node"
    out = subprocess.run([(node / "bindir").read_text().strip() + "/ctr", "--address",
                          str(node / "containerd.sock"), "--namespace", "k8s.io", "tasks", "ls"],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    pids = [int(f[1]) for f in (line.split() for line in out.splitlines()[1:]) if f[0] == cid]
    assert pids, f"containerd runs no task {cid}:\n{out}"
    cgroups = {}
    for line in Path(f"/proc/{pids[0]}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for ctl in controllers.split(","):
            cgroups[ctl] = path
    return pids[0], Path("/sys/fs/cgroup/memory") / cgroups["memory"].lstrip("/")


def status_fields(pid):
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out


def http(ip, port, path):
    """GET http://ip:port/path of a pod, over the host's route into the node's pod subnet
    (the way the apiserver reaches the webhook)."""
    out = subprocess.run(["curl", "-sS", "--max-time", "5", "-w", "\n%{http_code}",
                          f"http://{ip}:{port}{path}"], capture_output=True, text=True,
                         timeout=10).stdout
    body, _, code = out.rpartition("\n")
    return int(code or 0), body


def http_ok(ip, port, path):
    code, body = http(ip, port, path)
    assert code == 200, (ip, port, path, code, body)
    return body


def tenant_in_wrong_namespace(name):
    """A Tenant the webhook refuses whatever its content: outside any tenant namespace."""
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"clusterID": name}}


# --- the tests -------------------------------------------------------------------------------

def test_pods_ready_through_their_probes(node_provider, deployed):
    c = node_provider
    for app in (WEBHOOK, SIGNER):
        ps = pods(c, app)
        assert len(ps) == 2 and all(ready(p) for p in ps), [p["status"] for p in ps]
        for p in ps:
            assert p["spec"]["nodeName"] == c.node_name
            # A pod address from the node's bridge, not the node's own (no hostNetwork).
            assert p["status"]["podIP"].startswith("10.251.") and p["status"]["podIP"] != c.node_ip
            probe = p["spec"]["containers"][0]["readinessProbe"]["httpGet"]
            # What the kubelet's probe reads, read the same way.
            assert probe["port"] == "metrics"      # containerPort 8080
            http_ok(p["status"]["podIP"], 8080, probe["path"])
    print(f"install to all pods Ready: {deployed:.1f} s")


def test_containers_are_confined(node_provider, deployed):
    c = node_provider
    for app in (WEBHOOK, SIGNER):
        for p in pods(c, app):
            pid, mem = container_pid(c, p)
            print(f"{p['metadata']['name']}: pid {pid}, memory cgroup {mem}")
            st = status_fields(pid)
            assert st["Uid"].split() == [str(UID)] * 4, st["Uid"]
            assert st["Gid"].split() == [str(UID)] * 4, st["Gid"]
            assert int(st["CapEff"], 16) == 0 and int(st["CapPrm"], 16) == 0, st
            assert int(st["CapBnd"], 16) == 0, st["CapBnd"]
            assert st["NoNewPrivs"] == "1"
            assert st["Seccomp"] == "2", "RuntimeDefault seccomp filter expected"
            root = next(line.split() for line in
                        Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
                        if line.split()[4] == "/")
            assert "ro" in root[5].split(","), f"root mount options {root[5]}"
            limit = int((mem / "memory.limit_in_bytes").read_text())
            assert limit == 64 * 1024 * 1024, limit
            peak = int((mem / "memory.max_usage_in_bytes").read_text())
            assert peak < limit, (peak, limit)
            assert p["status"]["containerStatuses"][0]["restartCount"] == 0


def test_webhook_reached_through_its_service(node_provider, deployed):
    c = node_provider
    r = c.apply(tenant_in_wrong_namespace(f"t-{uuid.uuid4().hex[:6]}"), check=False)
    reason, message = denial(r.stderr)
    assert r.returncode != 0 and reason, r.stderr
    # The Service's endpoints are the pods: the apiserver dialled one of them.
    slices = c.get_json("endpointslices", "-n", NS, "-l", f"kubernetes.io/service-name={WEBHOOK}")
    ips = {a for s in slices["items"] for e in s.get("endpoints") or [] for a in e["addresses"]}
    assert ips == {p["status"]["podIP"] for p in pods(c, WEBHOOK)}
    served = 0
    for p in pods(c, WEBHOOK):
        text = http_ok(p["status"]["podIP"], 8080, "/metrics")
        served += sum(float(v) for v in re.findall(
            rf'^tenantgate_webhook_requests_total{{[^}}]*reason="{reason}"[^}}]*}} (\S+)$', text, re.M))
    assert served >= 1


def test_in_cluster_config(node_provider, deployed):
    """No kubeconfig anywhere: both services list through the mounted ServiceAccount token
    and the `kubernetes` Service's address from the environment."""
    c = node_provider
    for app in (WEBHOOK, SIGNER):
        p = pods(c, app)[0]
        assert "--kubeconfig" not in " ".join(p["spec"]["containers"][0].get("args", []))
        pid, _ = container_pid(c, p)
        env = dict(kv.split("=", 1) for kv in
                   Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if "=" in kv)
        assert env["KUBERNETES_SERVICE_HOST"] == c.server.split("//")[1].split(":")[0]
        token = Path(f"/proc/{pid}/root/var/run/secrets/kubernetes.io/serviceaccount/token")
        assert token.read_text().count(".") == 2
    # The webhooks' watches run on that config: a new tenant namespace reaches both caches.
    name = f"liqo-tenant-incluster-{uuid.uuid4().hex[:6]}"
    c.apply(tenant_namespace_manifest(name[len("liqo-tenant-"):], name=name))
    try:
        for p in pods(c, WEBHOOK):
            def cached():
                text = http_ok(p["status"]["podIP"], 8080, "/metrics")
                m = re.search(r'^tenantgate_webhook_cache_objects\{cache="namespaces"\} (\S+)$', text, re.M)
                return m and float(m.group(1)) >= 1
            wait_for(cached, timeout=30, what=f"{p['metadata']['name']} to cache the new namespace")
    finally:
        c.delete_namespace(name)


def test_authentication_from_a_second_cluster(node_provider, deployed, consumer, build_dir,
                                              source_dir, tmp_path):
    from test_signer import Signer, _apply_signer_rbac  # the consumer side is the host-process one
    p = node_provider
    cli = build_dir / "cli" / "kubectl-tenantgate"
    _apply_signer_rbac(consumer, source_dir)
    from conftest import install_crds
    install_crds(consumer, source_dir)
    kc = consumer.serviceaccount_kubeconfig(NS, SIGNER, duration="1h")
    signer = Signer(build_dir / "signer" / "tenantgate-signer", consumer, kc, tmp_path,
                    "signer-consumer", "--cluster-id", CONSUMER_ID,
                    "--controllers", "keys,noncesigner,identity").start()
    try:
        cid, pid = f"c-{uuid.uuid4().hex[:6]}", f"p-{uuid.uuid4().hex[:6]}"
        both = ["--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", p.kubeconfig,
                "--cluster-id", cid, "--remote-cluster-id", pid]
        r = subprocess.run([str(cli), "authenticate", *both], capture_output=True, text=True,
                           timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr + signer.log()[-2000:]
        ns = f"liqo-tenant-{pid}"
        ref = consumer.get_json("identity", f"controlplane-{pid}", "-n", ns)["status"]["kubeconfigSecretRef"]["name"]
        import base64
        kcfg = tmp_path / "remote.kubeconfig"
        kcfg.write_bytes(base64.b64decode(consumer.get_json("secret", ref, "-n", ns)["data"]["kubeconfig"]))
        # The signer in the pod wrote the apiserver address pods use, which is the real one.
        r = p.kubectl("get", "resourceslices.authentication.liqo.io", "-n", f"liqo-tenant-{cid}",
                      kubeconfig=kcfg, check=False)
        assert r.returncode == 0, r.stderr
        tenant = p.get_json("tenant", cid, "-n", f"liqo-tenant-{cid}")
        assert tenant["spec"]["clusterID"] == cid
        subprocess.run([str(cli), "unauthenticate", *both, "--wait"], capture_output=True,
                       timeout=120)
    finally:
        signer.stop()


def test_rolling_update_loses_no_admission(node_provider, deployed):
    """A steady stream of admissions (each one answered by the webhook with its denial)
    while the webhook Deployment rolls: every answer must be the webhook's own."""
    c = node_provider
    stop = threading.Event()
    results = {"denied": 0, "other": []}

    def stream():
        i = 0
        while not stop.is_set():
            i += 1
            r = c.apply(tenant_in_wrong_namespace(f"roll-{i}"), "--dry-run=server", check=False)
            reason, _ = denial(r.stderr)
            if r.returncode != 0 and reason:
                results["denied"] += 1
            else:
                results["other"].append(r.stderr.strip() or r.stdout.strip())

    before = {p["metadata"]["name"] for p in pods(c, WEBHOOK)}
    t = threading.Thread(target=stream, daemon=True)
    t.start()
    try:
        time.sleep(3)
        t0 = time.monotonic()
        c.kubectl("rollout", "restart", f"deployment/{WEBHOOK}", "-n", NS)
        c.kubectl("rollout", "status", f"deployment/{WEBHOOK}", "-n", NS, "--timeout=240s",
                  timeout=260)
        rolled = time.monotonic() - t0
        # Old pods finish their preStop and drain after the rollout reports done.
        wait_for(lambda: not (before & {p["metadata"]["name"] for p in
                                        c.get_json("pods", "-n", NS, "-l",
                                                   f"app.kubernetes.io/name={WEBHOOK}")["items"]}),
                 timeout=90, what="old webhook pods gone")
        time.sleep(3)
    finally:
        stop.set()
        t.join(timeout=60)
    after = {p["metadata"]["name"] for p in pods(c, WEBHOOK)}
    assert not (before & after) and len(after) == 2
    assert results["other"] == [], results["other"][:5]
    assert results["denied"] >= 20, results
    print(f"rolling update: {rolled:.1f} s, {results['denied']} admissions, none failed")


def lease_holder(c):
    return c.get_json("lease", SIGNER, "-n", NS)["spec"].get("holderIdentity")


def leaders(c):
    out = {}
    for p in pods(c, SIGNER):
        ip = p.get("status", {}).get("podIP")
        code, text = http(ip, 8080, "/metrics") if ip else (0, "")
        m = code == 200 and re.search(r"^tenantgate_signer_leader (\S+)$", text, re.M)
        out[p["metadata"]["name"]] = float(m.group(1)) if m else None
    return out


def test_signer_leader_election(node_provider, deployed):
    c = node_provider
    holder = wait_for(lambda: lease_holder(c), timeout=60, what="a signer Lease holder")
    states = wait_for(lambda: (lambda s: s if sorted(s.values()) == [0.0, 1.0] else None)(leaders(c)),
                      timeout=60, what="one leader and one standby")
    leader = next(n for n, v in states.items() if v == 1.0)
    assert leader in holder, (leader, holder)
    t0 = time.monotonic()
    c.kubectl("delete", "pod", leader, "-n", NS, "--wait=false")
    new = wait_for(lambda: (lambda h: h if h and leader not in h else None)(lease_holder(c)),
                   timeout=60, what="the Lease to move to another replica")
    took = time.monotonic() - t0
    c.kubectl("rollout", "status", f"deployment/{SIGNER}", "-n", NS, "--timeout=180s", timeout=200)
    states = wait_for(lambda: (lambda s: s if sorted(s.values()) == [0.0, 1.0] else None)(leaders(c)),
                      timeout=60, what="one leader and one standby again")
    assert next(n for n, v in states.items() if v == 1.0) in new
    print(f"signer Lease handed over in {took:.1f} s")
