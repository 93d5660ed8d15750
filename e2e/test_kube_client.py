"""The kube client (kube/) against a real kube-apiserver, through kube/tg-kube-probe.

Covers what unit tests cannot: TLS with the cluster CA, client-certificate and
ServiceAccount-token credentials (inline and tokenFile), list+watch with a label
selector, resuming after the server ends a watch (short timeoutSeconds) without
missing events, and the 410 Gone path (a watch from resourceVersion "1")."""

import queue
import re
import subprocess
import threading
import time

import pytest
import yaml

from tenantgate_services import built
from bed import wait_for

SELECTOR = "liqo.io/nonce=true"


@pytest.fixture(scope="module")
def probe_bin(build_dir):
    return built(build_dir, "kube/tg-kube-probe")


class Probe:
    """tg-kube-probe running an informer; its output lines are read on a thread."""

    def __init__(self, binary, kubeconfig, path, *args):
        self.lines = queue.Queue()
        self.seen = []
        self.proc = subprocess.Popen([str(binary), "-k", str(kubeconfig), "informer", path, *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, pattern, timeout=20):
        """The first new line matching pattern (regex); fails on timeout or exit."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line matching {pattern!r} in {timeout}s; seen: {self.seen[-20:]}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"probe exited ({self.proc.wait()}) before {pattern!r}: "
                                     f"{self.proc.stderr.read()[-2000:]}; seen: {self.seen[-20:]}")
            self.seen.append(line)
            m = rx.search(line)
            if m:
                return m

    def stop(self):
        """Close stdin (the probe's signal to stop); returns every line it printed."""
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=20)
        while True:
            line = self.lines.get(timeout=5)
            if line is None:
                break
            self.seen.append(line)
        assert rc == 0, f"probe exit {rc}: {self.proc.stderr.read()[-2000:]}"
        return self.seen

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def probes():
    started = []
    yield started
    for p in started:
        p.kill()


def secret(ns, name, labelled=True, value="djE="):
    labels = {"liqo.io/nonce": "true", "liqo.io/remote-cluster-id": name} if labelled else {}
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {"nonce": value}}


def run_get(probe_bin, kubeconfig, path):
    return subprocess.run([str(probe_bin), "-k", str(kubeconfig), "get", path],
                          capture_output=True, text=True, timeout=60)


def test_client_certificate_kubeconfig(provider, probe_bin):
    cfg = yaml.safe_load(open(provider.admin_kubeconfig))
    users = [u["user"] for u in cfg["users"]]
    assert any("client-certificate-data" in u or "client-certificate" in u for u in users)
    out = run_get(probe_bin, provider.admin_kubeconfig, "/api/v1/namespaces/default")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("STATUS 200\n")
    assert '"name":"default"' in out.stdout


def test_serviceaccount_token_kubeconfig(provider, probe_bin, namespace):
    ns = namespace(provider, "kc")
    provider.kubectl("create", "role", "read-secrets", "-n", ns, "--verb=get,list,watch",
                     "--resource=secrets")
    provider.kubectl("create", "rolebinding", "read-secrets", "-n", ns, "--role=read-secrets",
                     f"--serviceaccount={ns}:probe")
    kubeconfig = provider.serviceaccount_kubeconfig(ns, "probe")
    out = run_get(probe_bin, kubeconfig, f"/api/v1/namespaces/{ns}/secrets")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("STATUS 200\n")
    # It really is the ServiceAccount speaking, not some fallback credential.
    out = run_get(probe_bin, kubeconfig, "/api/v1/secrets")
    assert out.stdout.startswith("STATUS 403\n"), out.stdout[:300]
    assert f"system:serviceaccount:{ns}:probe" in out.stdout

    # The same token from a tokenFile (how rotating tokens are mounted).
    token_file = provider.work_dir / f"token-{ns}"
    token_file.write_text(provider.serviceaccount_token(ns, "probe") + "\n")
    cfg = yaml.safe_load(open(kubeconfig))
    user = cfg["users"][0]["user"]
    user.pop("token")
    user["tokenFile"] = str(token_file)
    path = provider.work_dir / f"tokenfile-{ns}.kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    out = run_get(probe_bin, path, f"/api/v1/namespaces/{ns}/secrets")
    assert out.returncode == 0, out.stderr

    # A wrong token is refused by the server, and the probe says so.
    token_file.write_text("not-a-token\n")
    out = run_get(probe_bin, path, f"/api/v1/namespaces/{ns}/secrets")
    assert out.stdout.startswith("STATUS 401\n")


def test_token_file_reread_after_401(provider, probe_bin, namespace, probes):
    """A rotated token is picked up: a 401 makes the client re-read tokenFile."""
    ns = namespace(provider, "rot")
    provider.kubectl("create", "role", "read-secrets", "-n", ns, "--verb=get,list,watch",
                     "--resource=secrets")
    provider.kubectl("create", "rolebinding", "read-secrets", "-n", ns, "--role=read-secrets",
                     f"--serviceaccount={ns}:probe")
    good = provider.serviceaccount_token(ns, "probe")
    token_file = provider.work_dir / f"token-rot-{ns}"
    token_file.write_text("expired-token\n")
    cfg = yaml.safe_load(open(provider.serviceaccount_kubeconfig(ns, "probe")))
    user = cfg["users"][0]["user"]
    user.pop("token")
    user["tokenFile"] = str(token_file)
    path = provider.work_dir / f"rot-{ns}.kubeconfig"
    path.write_text(yaml.safe_dump(cfg))

    p = Probe(probe_bin, path, f"/api/v1/namespaces/{ns}/secrets", "-l", SELECTOR)
    probes.append(p)
    p.expect(r"^STATS .*failures=[1-9].*HTTP 401")
    token_file.write_text(good + "\n")     # the kubelet rotates the projected token
    p.expect(r"^SYNCED 0$", timeout=15)
    provider.create(secret(ns, "cl01"))
    p.expect(rf"^ADD {ns}/cl01 \d+$")
    p.stop()


def test_response_size_cap(provider, probe_bin):
    out = run_get(probe_bin, provider.admin_kubeconfig, "/api/v1/namespaces")
    assert out.returncode == 0
    size = len(out.stdout.split("\n", 1)[1].strip())
    capped = subprocess.run([str(probe_bin), "-k", str(provider.admin_kubeconfig), "get",
                             "/api/v1/namespaces", "-m", str(size // 2)],
                            capture_output=True, text=True, timeout=60)
    assert capped.returncode == 1
    assert "over the size limit" in capped.stderr, capped.stderr


def test_bad_kubeconfig_is_a_clear_error(provider, probe_bin, tmp_path):
    path = tmp_path / "config"
    path.write_text("current-context: nope\n")
    out = run_get(probe_bin, path, "/api")
    assert out.returncode == 2
    assert 'context "nope" not found' in out.stderr


def variant(cluster, tmp_path, name, change):
    """A copy of the admin kubeconfig with its cluster entry changed."""
    cfg = yaml.safe_load(open(cluster.admin_kubeconfig))
    change(cfg["clusters"][0]["cluster"])
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return path


def without_ca(c):
    c.pop("certificate-authority-data", None)
    c.pop("certificate-authority", None)


def test_tls_is_verified(provider, probe_bin, tmp_path):
    # No CA: the system trust store does not know the cluster CA.
    out = run_get(probe_bin, variant(provider, tmp_path, "noca", without_ca), "/version")
    assert out.returncode == 1 and "certificate" in out.stderr, out.stderr
    # The certificate must name the host we verify.
    out = run_get(probe_bin, variant(provider, tmp_path, "badname",
                                     lambda c: c.update({"tls-server-name": "evil.example"})), "/version")
    assert out.returncode == 1 and "evil.example" in out.stderr, out.stderr
    out = run_get(probe_bin, variant(provider, tmp_path, "goodname",
                                     lambda c: c.update({"tls-server-name": "kubernetes"})), "/version")
    assert out.returncode == 0, out.stderr
    # Only an explicit insecure-skip-tls-verify turns verification off.
    out = run_get(probe_bin, variant(provider, tmp_path, "insecure",
                                     lambda c: (without_ca(c), c.update({"insecure-skip-tls-verify": True}))),
                  "/version")
    assert out.returncode == 0, out.stderr


def test_informer_sees_create_update_delete(provider, probe_bin, namespace, probes):
    ns = namespace(provider, "inf")
    provider.create(secret(ns, "before"))
    provider.create(secret(ns, "unlabelled-before", labelled=False))
    p = Probe(probe_bin, provider.admin_kubeconfig, f"/api/v1/namespaces/{ns}/secrets",
              "-l", SELECTOR, "-i", "liqo.io/remote-cluster-id")
    probes.append(p)
    p.expect(r"^SYNCED 1$")
    provider.create(secret(ns, "cl01"))
    p.expect(rf"^ADD {ns}/cl01 \d+$")
    provider.kubectl("patch", "secret", "cl01", "-n", ns, "--type=merge", "-p", '{"data":{"nonce":"djI="}}')
    p.expect(rf"^UPDATE {ns}/cl01 \d+$")
    provider.create(secret(ns, "unlabelled", labelled=False))
    provider.kubectl("delete", "secret", "cl01", "-n", ns)
    p.expect(rf"^DELETE {ns}/cl01$")
    # Dropping the label takes the object out of the selector: a deletion for us.
    provider.kubectl("label", "secret", "before", "-n", ns, "liqo.io/nonce-")
    p.expect(rf"^DELETE {ns}/before$")
    lines = p.stop()
    assert not [line for line in lines if "unlabelled" in line], lines


def test_paged_list(provider, probe_bin, namespace, probes):
    ns = namespace(provider, "page")
    provider.create({"apiVersion": "v1", "kind": "List",
                     "items": [secret(ns, f"p{i}") for i in range(7)]})
    p = Probe(probe_bin, provider.admin_kubeconfig, f"/api/v1/namespaces/{ns}/secrets",
              "-l", SELECTOR, "-p", "2")
    probes.append(p)
    p.expect(r"^SYNCED 7$")
    lines = p.stop()
    assert len([line for line in lines if line.startswith("ADD ")]) == 7
    stats = [line for line in lines if line.startswith("STATS")][-1]
    assert "lists=1 pages=4 " in stats, stats   # 2+2+2+1, continued with the server's token


def test_watch_resumes_after_server_closes_it(provider, probe_bin, namespace, probes):
    ns = namespace(provider, "resume")
    # timeoutSeconds=2: the server ends every watch after two seconds; the
    # informer must resume from its resourceVersion and miss nothing.
    p = Probe(probe_bin, provider.admin_kubeconfig, f"/api/v1/namespaces/{ns}/secrets",
              "-l", SELECTOR, "-t", "2")
    probes.append(p)
    p.expect(r"^SYNCED 0$")
    names = [f"s{i:02d}" for i in range(12)]
    for name in names:
        provider.create(secret(ns, name))
        time.sleep(0.3)
    added = set()
    deadline = time.monotonic() + 30
    while added != set(names) and time.monotonic() < deadline:
        m = p.expect(r"^(ADD|STATS) (\S+)", timeout=max(1, deadline - time.monotonic()))
        if m.group(1) == "ADD":
            added.add(m.group(2).split("/")[1])
    assert added == set(names)
    lines = p.stop()
    stats = [line for line in lines if line.startswith("STATS")][-1]
    watches = int(re.search(r"watches=(\d+)", stats).group(1))
    assert watches >= 3, stats                 # the server really did end watches
    assert "lists=1 " in stats, stats          # resumed by watching, never relisted
    assert "failures=0 " in stats, stats       # an ended watch is not a failure
    assert len([line for line in lines if line.startswith("ADD ")]) == len(names)


def tenant(ns, name):
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
            "metadata": {"name": name, "namespace": ns}, "spec": {"clusterID": name}}


def test_410_gone_relists(consumer, probe_bin, namespace, probes, crds):
    # On the consumer: the provider may have the Tenant webhook installed by
    # another test file, and these bare Tenants are only watch fodder.
    ns = namespace(consumer, "gone")
    consumer.create(tenant(ns, "present"))
    # The Tenant CRD's watch cache began long after resourceVersion "1": resuming
    # from it gets 410 Gone (an ERROR event; an HTTP 410 takes the same path) and
    # the informer must relist and go on watching from the list's version.
    path = f"/apis/authentication.liqo.io/v1beta1/namespaces/{ns}/tenants"
    p = Probe(probe_bin, consumer.admin_kubeconfig, path, "-r", "1")
    probes.append(p)
    p.expect(rf"^ADD {ns}/present \d+$")
    consumer.create(tenant(ns, "after"))
    p.expect(rf"^ADD {ns}/after \d+$")
    lines = p.stop()
    stats = [line for line in lines if line.startswith("STATS")][-1]
    assert re.search(r"gone=[1-9]", stats), lines
    assert "lists=1 " in stats, stats
    assert "410" in stats, stats
