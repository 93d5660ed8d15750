"""The manifests as shipped, from the images `make images` builds, on a real node (issue 14).

A cluster with a node (`node_provider`: kubelet, containerd, runc, bridge CNI, in the bed's own
network namespace) imports the oci-archives from build/images, gets `helm install` of the chart
(manifests/chart/tenantgate) with only the images' tags set, and the cert step
(certs/tenantgate-certs --apply).  Then:
  - both Deployments become Available through their own readiness probes;
  - every container runs as uid 65532, with no capabilities, no new privileges, a read-only
    root and the memory limit of the manifest (read from the kernel, not from the API);
  - the apiserver calls the webhook through its Service (aggregator routing: Service ->
    EndpointSlice -> pod IP) and the webhook answers from its in-cluster config;
  - a consumer cluster authenticates to this one end to end (kubectl tenantgate authenticate)
    with the signer running in-cluster;
  - a rolling update of the webhook under a steady stream of admissions loses none;
  - the signer's two replicas hold one Lease; deleting the leader's pod hands it over.
  - under a burst of admissions no container passes its memory limit, is OOM killed or restarts
    (peaks and CPU throttling read from each container's cgroup);
  - a rotated ServiceAccount token (written into the pods' projected volumes the way the
    kubelet's atomic writer does) is re-read: revoking the old one breaks nothing, revoking
    the new one without a replacement makes the signer leader lose its Lease.

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
from bed import wait_for

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


def helm(cluster, source_dir, verb, *args):
    """The pinned helm (e2e/helm-bin) on cluster: verb release [chart] args, in NS."""
    binary = subprocess.run([str(Path(__file__).parent / "helm-bin")], capture_output=True,
                            text=True, check=True).stdout.strip()
    home = cluster.work_dir / "helm"
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig),
               HELM_CACHE_HOME=str(home / "cache"), HELM_CONFIG_HOME=str(home / "config"),
               HELM_DATA_HOME=str(home / "data"))
    chart = [str(source_dir / "manifests" / "chart" / "tenantgate")] if verb in (
        "install", "upgrade") else []
    proc = subprocess.run([binary, verb, "tenantgate", *chart, "-n", NS, *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"helm {verb}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def helm_install(cluster, source_dir, v):
    """The chart as docs/operations.md installs it, with only the images' tags set."""
    helm(cluster, source_dir, "install", "--create-namespace",
         "--set", f"images.webhook.tag={v}", "--set", f"images.signer.tag={v}")


@pytest.fixture(scope="module")
def deployed(node_provider, image_archives, source_dir, build_dir):
    """The install, as docs/operations.md says; returns the seconds it took."""
    c = node_provider
    t0 = time.monotonic()
    c.import_images(*image_archives)
    helm_install(c, source_dir, version(source_dir))
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


def new_namespace_reaches_webhooks(cluster, tag):
    """Create a tenant namespace and wait until every webhook pod's watch has cached it
    (its count of cached namespaces goes up by one)."""
    def count(p):
        text = http_ok(p["status"]["podIP"], 8080, "/metrics")
        m = re.search(r'^tenantgate_webhook_cache_objects\{cache="namespaces"\} (\S+)$', text, re.M)
        return float(m.group(1)) if m else None
    before = {p["metadata"]["name"]: count(p) or 0.0 for p in pods(cluster, WEBHOOK)}
    name = f"liqo-tenant-{tag}-{uuid.uuid4().hex[:6]}"
    cluster.apply(tenant_namespace_manifest(name[len("liqo-tenant-"):], name=name))
    try:
        for p in pods(cluster, WEBHOOK):
            wait_for(lambda: (count(p) or 0.0) >= before[p["metadata"]["name"]] + 1, timeout=30,
                     what=f"{p['metadata']['name']} to cache {name}")
    finally:
        cluster.delete_namespace(name)


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
    new_namespace_reaches_webhooks(c, "incluster")


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


def roll_under_admissions(c, roll):
    """roll() while a steady stream of admissions (each answered by the webhook with its
    denial) runs, until every old webhook pod is gone; every answer must be the webhook's
    own. Returns (seconds roll() took, admissions answered)."""
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
        roll()
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
    return rolled, results["denied"]


def test_rolling_update_loses_no_admission(node_provider, deployed):
    """The webhook Deployment restarted (kubectl rollout restart) under admissions."""
    c = node_provider
    rolled, n = roll_under_admissions(c, lambda: c.kubectl(
        "rollout", "restart", f"deployment/{WEBHOOK}", "-n", NS))
    print(f"rolling update: {rolled:.1f} s, {n} admissions, none failed")


def webhook_image(c):
    d = c.get_json("deployment", WEBHOOK, "-n", NS)
    return d["spec"]["template"]["spec"]["containers"][0]["image"]


def test_helm_upgrade_and_rollback_lose_no_admission(node_provider, deployed, source_dir,
                                                     build_dir):
    """`helm upgrade` to another image of the webhook (images/build --version <v>-next), then
    `helm rollback` to the installed revision, each under admissions: none fails."""
    c = node_provider
    v = version(source_dir)
    subprocess.run([str(source_dir / "images" / "build"), "--build", str(build_dir),
                    "--version", f"{v}-next", "webhook"], check=True, capture_output=True,
                   timeout=300)
    c.import_images(build_dir / "images" / f"tenantgate-webhook-{v}-next.oci.tar")
    rolled, n = roll_under_admissions(c, lambda: helm(
        c, source_dir, "upgrade", "--reuse-values", "--set", f"images.webhook.tag={v}-next"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}-next")
    print(f"helm upgrade: {rolled:.1f} s, {n} admissions, none failed")
    rolled, n = roll_under_admissions(c, lambda: helm(c, source_dir, "rollback", "1"))
    assert webhook_image(c).endswith(f"tenantgate/webhook:{v}")
    print(f"helm rollback: {rolled:.1f} s, {n} admissions, none failed")


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


# --- under load: the containers' own cgroup numbers --------------------------------------------

LOAD_REQUESTS = 1000
LOAD_WORKERS = 8


def cgroup_dir(pid, controller):
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return Path("/sys/fs/cgroup") / controllers / path.lstrip("/")
    raise AssertionError(f"pid {pid} has no {controller} cgroup")


def kv_file(path):
    return {k: int(v) for k, v in (line.split() for line in path.read_text().splitlines())}


def memory_limit(cluster, deployment):
    spec = cluster.get_json("deployment", deployment, "-n", NS)["spec"]["template"]["spec"]
    value = spec["containers"][0]["resources"]["limits"]["memory"]
    m = re.fullmatch(r"(\d+)Mi", value)
    assert m, value
    return int(m.group(1)) * 1024 * 1024


def admission_burst(cluster, n, workers):
    """n Tenant creates straight to the apiserver (no kubectl per request), `workers` at a
    time over kept-alive TLS connections; each one is sent to a webhook pod and denied."""
    import http.client
    import ssl
    sa = "tg-load"
    token = cluster.serviceaccount_token("default", sa, duration="10m")
    if not cluster.exists("clusterrolebinding", sa):
        cluster.kubectl("create", "clusterrolebinding", sa, "--clusterrole", "cluster-admin",
                        f"--serviceaccount=default:{sa}")
    host, port = cluster.server.split("//")[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(cluster.ca_file))
    counts = {"denied": 0, "other": []}
    lock = threading.Lock()
    todo = iter(range(n))

    def worker():
        conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
        try:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                body = json.dumps(tenant_in_wrong_namespace(f"load-{i}"))
                conn.request("POST", "/apis/authentication.liqo.io/v1beta1/namespaces/default/tenants",
                             body=body, headers={"Authorization": f"Bearer {token}",
                                                 "Content-Type": "application/json"})
                r = conn.getresponse()
                text = r.read().decode(errors="replace")
                with lock:
                    if r.status in (400, 403) and "denied the request" in text:
                        counts["denied"] += 1
                    else:
                        counts["other"].append((r.status, text[:200]))
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "admission burst did not finish in 300 s"
    return counts, time.monotonic() - t0


def test_limits_hold_under_an_admission_burst(node_provider, deployed):
    """LOAD_REQUESTS admissions through the apiserver to the webhook pods; then each
    container's memory peak and CPU throttling from its own cgroup (v1), against the
    Deployment's limit; no restart, no OOM kill."""
    c = node_provider
    before = {p["metadata"]["name"]: p for p in pods(c, WEBHOOK)}
    served0 = {}
    for name, p in before.items():
        text = http_ok(p["status"]["podIP"], 8080, "/metrics")
        served0[name] = sum(float(v) for v in re.findall(
            r'^tenantgate_webhook_requests_total\{[^}]*\} (\S+)$', text, re.M))
    counts, took = admission_burst(c, LOAD_REQUESTS, LOAD_WORKERS)
    assert counts["other"] == [], counts["other"][:5]
    assert counts["denied"] == LOAD_REQUESTS
    print(f"admission burst: {LOAD_REQUESTS} denials, {LOAD_WORKERS} at a time, {took:.1f} s")
    served = 0.0
    for app in (WEBHOOK, SIGNER):
        limit = memory_limit(c, app)
        for p in pods(c, app):
            name = p["metadata"]["name"]
            st = p["status"]["containerStatuses"][0]
            assert st["restartCount"] == 0, st
            assert "terminated" not in st.get("lastState", {}), st["lastState"]
            pid, mem = container_pid(c, p)
            assert int((mem / "memory.limit_in_bytes").read_text()) == limit
            peak = int((mem / "memory.max_usage_in_bytes").read_text())
            oom = kv_file(mem / "memory.oom_control")
            cpu = kv_file(cgroup_dir(pid, "cpu") / "cpu.stat")
            print(f"{name}: memory peak {peak / 2**20:.1f} MiB of {limit / 2**20:.0f} MiB, "
                  f"failcnt {int((mem / 'memory.failcnt').read_text())}, "
                  f"oom_kill {oom.get('oom_kill', 0)}, cpu periods {cpu['nr_periods']} "
                  f"throttled {cpu['nr_throttled']} ({cpu['throttled_time'] / 1e6:.0f} ms)")
            assert peak < limit, (name, peak, limit)
            assert oom.get("oom_kill", 0) == 0, oom
            if app == WEBHOOK:
                assert name in before, "a webhook pod was replaced during the burst"
                text = http_ok(p["status"]["podIP"], 8080, "/metrics")
                served += sum(float(v) for v in re.findall(
                    r'^tenantgate_webhook_requests_total\{[^}]*\} (\S+)$', text, re.M)) - served0[name]
    # Every admission of the burst was answered by one of these two pods.
    assert served >= LOAD_REQUESTS, served


# --- a rotated ServiceAccount token ------------------------------------------------------------

def token_volume(cluster, pod):
    """The pod's projected ServiceAccount token volume, in the kubelet's root dir on the host."""
    base = cluster.state_dir / "node" / "kubelet" / "pods" / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~projected"
    vols = [d for d in base.iterdir() if d.name.startswith("kube-api-access-")]
    assert len(vols) == 1, vols
    return vols[0]


def install_token(volume, token):
    """Replace the volume's token the way the kubelet's atomic writer does: a new timestamped
    directory with every file, a `..data_tmp` symlink renamed over `..data`, the old directory
    removed.  Owners and modes are the old files' (the kubelet made them readable by the
    container's uid)."""
    import shutil
    old = os.readlink(volume / "..data")
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns() % 10**9:09d}"
    new = volume / stamp
    new.mkdir()
    st = (volume / old).stat()
    os.chown(new, st.st_uid, st.st_gid)
    os.chmod(new, st.st_mode & 0o7777)
    for f in (volume / old).iterdir():
        data = token.encode() if f.name == "token" else f.read_bytes()
        fs = f.stat()
        (new / f.name).write_bytes(data)
        os.chown(new / f.name, fs.st_uid, fs.st_gid)
        os.chmod(new / f.name, fs.st_mode & 0o7777)
    os.symlink(stamp, volume / "..data_tmp")
    os.rename(volume / "..data_tmp", volume / "..data")
    shutil.rmtree(volume / old)


def bound_tokens(cluster, secret):
    """A fresh Secret and, for each ServiceAccount, a token bound to it (deleting the Secret
    revokes them)."""
    cluster.kubectl("create", "secret", "generic", secret, "-n", NS, "--from-literal=x=y")
    return {sa: cluster.kubectl("create", "token", sa, "-n", NS, "--bound-object-kind", "Secret",
                                "--bound-object-name", secret, "--duration", "10m").stdout.strip()
            for sa in (WEBHOOK, SIGNER)}


def install_everywhere(cluster, tokens):
    for app in (WEBHOOK, SIGNER):
        for p in pods(cluster, app):
            install_token(token_volume(cluster, p), tokens[app])
            pid, _ = container_pid(cluster, p)
            seen = Path(f"/proc/{pid}/root/var/run/secrets/kubernetes.io/serviceaccount/token")
            assert seen.read_text() == tokens[app], "the container does not see the new token"


def lease_renewed(cluster, after):
    """The Lease's renewTime (RFC 3339, microseconds) once it is later than `after`."""
    t = cluster.get_json("lease", SIGNER, "-n", NS)["spec"].get("renewTime", "")
    return t if t > after else None


def webhook_still_works(cluster):
    r = cluster.apply(tenant_in_wrong_namespace(f"t-{uuid.uuid4().hex[:6]}"), check=False)
    reason, _ = denial(r.stderr)
    assert r.returncode != 0 and reason, r.stderr
    new_namespace_reaches_webhooks(cluster, "rot")


def restarts(cluster):
    return {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"]
            for app in (WEBHOOK, SIGNER) for p in pods(cluster, app)}


def test_rotated_token_is_reread(node_provider, deployed):
    """The kubelet's rotation of the projected token, done by hand (it rotates only after 80%
    of a TTL of at least 10 min): token A, bound to Secret A, is installed in every pod and
    used; then B is installed and A revoked (Secret A deleted): the signer keeps renewing its
    Lease and the webhook keeps admitting and watching, with no restart.  Then B is revoked
    with nothing new installed: the signer leader must lose its Lease and restart, which shows
    the services really authenticate with the file's token (the pod's own token stays valid
    all along) and that this test can fail.  The pods are replaced afterwards."""
    c = node_provider
    wait_for(lambda: lease_holder(c), timeout=60, what="a signer Lease holder")
    try:
        a = bound_tokens(c, "tg-rotation-a")
        install_everywhere(c, a)
        # The client re-reads the file at most every TG_KUBE_TOKEN_REREAD_MS (60 s) or on a
        # 401; past that, the signer's renewals (every 2 s) carry A.
        time.sleep(65)
        b = bound_tokens(c, "tg-rotation-b")
        install_everywhere(c, b)
        c.kubectl("delete", "secret", "tg-rotation-a", "-n", NS)
        t0 = c.get_json("lease", SIGNER, "-n", NS)["spec"]["renewTime"]
        time.sleep(20)  # two renew deadlines: a leader on A would have exited by now
        holder = lease_holder(c)
        wait_for(lambda: lease_renewed(c, t0), timeout=10, what="Lease renewals on token B")
        assert lease_holder(c) == holder
        webhook_still_works(c)
        assert set(restarts(c).values()) == {0}, restarts(c)
        # The other way: revoke B and give nothing new.
        t1 = time.monotonic()
        c.kubectl("delete", "secret", "tg-rotation-b", "-n", NS)
        wait_for(lambda: any(n > 0 for n in restarts(c).values()), timeout=60,
                 what="the signer leader to lose its Lease once its token is revoked")
        print(f"token A -> B with A revoked: no restart; B revoked: a restart after "
              f"{time.monotonic() - t1:.1f} s")
    finally:
        for s in ("tg-rotation-a", "tg-rotation-b"):
            c.kubectl("delete", "secret", s, "-n", NS, "--ignore-not-found")
        # Fresh pods get fresh volumes with the kubelet's own token.
        for d in (WEBHOOK, SIGNER):
            c.kubectl("rollout", "restart", f"deployment/{d}", "-n", NS)
        for d in (WEBHOOK, SIGNER):
            c.kubectl("rollout", "status", f"deployment/{d}", "-n", NS, "--timeout=180s",
                      timeout=200)
