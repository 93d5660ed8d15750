"""tenantgate's own services on the e2e bed, as session fixtures other test files reuse.

Import the fixtures you need by name into your test module (pytest finds them there):

    from tenantgate_services import webhook, webhook_install  # noqa: F401

Session fixtures
----------------
webhook_install -> WebhookInstall
        The provider set up the way an operator does it, minus the Deployment:
        `kubectl apply -k` of manifests/overlays/local (namespace `liqo`, ServiceAccount
        `tenantgate-webhook`, its ClusterRole/Binding, both webhook configurations named
        `tenantgate`), then `certs/tenantgate-certs --ip 127.0.0.1 --apply`.  The overlay points
        the webhooks at https://127.0.0.1:18443; here a thin overlay on top of it moves that to
        a free port (.port) so concurrent runs on one machine do not collide.  Teardown deletes
        the cluster-scoped objects and the `liqo` namespace (not the CRDs: `crds` owns them).
        .port .url .cert_dir (ca.crt tls.crt tls.key) .ca_file .cert_file .key_file
        .renew_cert() -> serial (int) of the new serving cert, same CA (re-runs the cert tool)
webhook -> Webhook
        build/webhook/tenantgate-webhook running on the host with a token of its own
        ServiceAccount (liqo/tenantgate-webhook; nothing else grants it rights), listening on
        webhook_install.port, metrics on a free port; ready (/readyz 200) when handed out.
        .start(*extra_args, kubeconfig=None) .stop() -> exit status
        .restart(*extra_args, kubeconfig=None) -> s until ready   .wait_ready() -> s
        .process (bed.HostProcess or None) .args .kubeconfig (the SA's) .metrics_port
        .readyz() -> (status, body) .metrics() -> {(name, frozenset(labels)): value}
        .counter(name, **labels) -> float (0 when absent) .served_serial() -> int
        .log_tail(lines) .problems (unclean exits / sanitizer reports; teardown fails on any)
        A test that restarts it with other flags must restore the default (.restart()).

Helpers (plain functions)
-------------------------
tenant_namespace_manifest(cluster_id, name=None, labels=...) / nonce_secret_manifest(...)
load_vector(vectors_dir, name) -> (tenant dict, nonce text);  read_index(vectors_dir[, scopes])
HoldingProxy(upstream_port): a TCP relay whose existing connections can be frozen (stale
informer caches on demand); parse_prometheus(text); http_get(port, path)
denial(stderr, slices=False) -> (reason code, message) of our validating webhook (slices=True: the
        ResourceSlice one), or (None, None)
policy_enforced(cluster) -> bool: the tenant-namespace policy is in force (a misnamed tenant
        namespace refused, server-side dry run)
tenant_policy_suspended(cluster): context manager; manifests/policy's binding removed for the
        block (as if the install lacked the policy: only for tests of the signer's or webhook's
        own checks), put back after; each change waited for
"""

import contextlib
import json
import os
import re
import socket
import ssl
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from bed import HostProcess, free_port, openssl, wait_for

INSTALL_NAMESPACE = "liqo"
WEBHOOK_SA = "tenantgate-webhook"
WEBHOOK_USER = f"system:serviceaccount:{INSTALL_NAMESPACE}:{WEBHOOK_SA}"
WEBHOOK_CONFIG = "tenantgate"
VALIDATING_WEBHOOK = "tenants.validate.tenantgate.io"
MUTATING_WEBHOOK = "tenants.mutate.tenantgate.io"

LABEL_TENANT_NS = "liqo.io/tenant-namespace"
LABEL_CLUSTER_ID = "liqo.io/remote-cluster-id"
LABEL_NONCE = "liqo.io/nonce"

SLICE_WEBHOOK = "resourceslices.validate.tenantgate.io"


def _denial_re(webhook_name):
    return re.compile(r'admission webhook "' + re.escape(webhook_name) +
                      r'" denied the request: ([A-Za-z]+): (.*)')


_DENIAL = _denial_re(VALIDATING_WEBHOOK)
_SLICE_DENIAL = _denial_re(SLICE_WEBHOOK)


# --- manifests and vectors -------------------------------------------------------------------

def tenant_namespace_manifest(cluster_id, name=None, labels=None):
    """A tenant namespace as PROTOCOL.md 3 names and labels it (labels= replaces the labels)."""
    if labels is None:
        labels = {LABEL_TENANT_NS: "true", LABEL_CLUSTER_ID: cluster_id}
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name or f"liqo-tenant-{cluster_id}", "labels": labels}}


def nonce_secret_manifest(cluster_id, nonce, namespace=None):
    """The provider's nonce Secret for cluster_id (PROTOCOL.md 3), nonce = its text."""
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "liqo-nonce", "namespace": namespace or f"liqo-tenant-{cluster_id}",
                         "labels": {LABEL_NONCE: "true", LABEL_CLUSTER_ID: cluster_id}},
            "stringData": {"nonce": nonce}}


def read_index(vectors_dir, scopes=("cluster", "webhook")):
    """[(name, verdict, reason)] from the vectors' index.tsv, the rows whose scope is one of
    scopes (docs/PROTOCOL.md 10; a row without a scope counts as "cluster")."""
    rows = []
    for line in (Path(vectors_dir) / "index.tsv").read_text().splitlines()[1:]:
        if line.strip():
            name, verdict, reason, scope = (line.split("\t") + ["", "", ""])[:4]
            if (scope.strip() or "cluster") in scopes:
                rows.append((name, verdict, reason.strip()))
    return rows


def load_vector(vectors_dir, name):
    """(Tenant dict, nonce text) of vector NAME."""
    d = Path(vectors_dir)
    return json.loads((d / f"{name}.json").read_text()), (d / f"{name}.nonce").read_text().strip()


def denial(stderr, slices=False):
    """(reason code, message) when our validating webhook denied the request, else (None, None).
    slices=True: the ResourceSlice webhook's denial."""
    m = (_SLICE_DENIAL if slices else _DENIAL).search(stderr or "")
    return (m.group(1), m.group(2)) if m else (None, None)


# --- the tenant-namespace policy (manifests/policy) -----------------------------------------

POLICY_BINDING = "tenantgate-tenant-namespaces"


def policy_enforced(cluster):
    """A misnamed tenant namespace is refused (server-side dry run, as the admin)."""
    probe = tenant_namespace_manifest("probe", name=f"probe-{uuid.uuid4().hex[:6]}")
    p = cluster.create(probe, "--dry-run=server", check=False)
    return p.returncode != 0 and "TenantNamespaceMisnamed" in p.stderr


@contextlib.contextmanager
def tenant_policy_suspended(cluster):
    saved = cluster.get_json("validatingadmissionpolicybinding", POLICY_BINDING)
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
        saved["metadata"].pop(key, None)
    saved.pop("status", None)
    cluster.kubectl("delete", "validatingadmissionpolicybinding", POLICY_BINDING)
    try:
        # admission policies are read from an informer: wait for each change to show
        wait_for(lambda: not policy_enforced(cluster), timeout=30, what="the policy binding gone")
        yield
    finally:
        cluster.kubectl("delete", "validatingadmissionpolicybinding", POLICY_BINDING, "--ignore-not-found",
                        check=False)
        cluster.create(saved)
        wait_for(lambda: policy_enforced(cluster), timeout=30, what="the policy binding back")


# --- the install -----------------------------------------------------------------------------

class WebhookInstall:
    def __init__(self, cluster, source_dir, work_dir, port):
        self.cluster = cluster
        self.source_dir = Path(source_dir)
        self.port = port
        self.url = f"https://127.0.0.1:{port}"
        self.overlay_dir = Path(work_dir) / "overlay"
        self.cert_dir = Path(work_dir) / "certs"
        self.ca_file = self.cert_dir / "ca.crt"
        self.cert_file = self.cert_dir / "tls.crt"
        self.key_file = self.cert_dir / "tls.key"

    def _write_overlay(self):
        """manifests/overlays/local as is, with only the port of both URLs replaced.

        kustomize refuses absolute paths to a base, hence the relative one."""
        self.overlay_dir.mkdir(parents=True, exist_ok=True)
        base = os.path.relpath(self.source_dir / "manifests" / "overlays" / "local", self.overlay_dir)
        patches = []
        for kind, paths in (("ValidatingWebhookConfiguration",
                             ("validate/tenants", "validate/resourceslices")),
                            ("MutatingWebhookConfiguration", ("mutate/tenants",))):
            ops = "".join(f"      - op: replace\n        path: /webhooks/{i}/clientConfig/url\n"
                          f"        value: {self.url}/{path}\n" for i, path in enumerate(paths))
            patches.append(
                f"  - target:\n      kind: {kind}\n      name: {WEBHOOK_CONFIG}\n"
                f"    patch: |-\n{ops}")
        (self.overlay_dir / "kustomization.yaml").write_text(
            "# written by e2e/tenantgate_services.py: the local overlay on a free port\n"
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources:\n  - {base}\npatches:\n" + "".join(patches))

    def install(self):
        self._write_overlay()
        self.cluster.kubectl("apply", "-k", self.overlay_dir)
        self.run_cert_tool()

    def run_cert_tool(self):
        env = dict(os.environ, KUBECTL=self.cluster.kubectl_path)
        proc = subprocess.run([str(self.source_dir / "certs" / "tenantgate-certs"),
                               "--out", str(self.cert_dir), "--ip", "127.0.0.1", "--apply",
                               "--kubeconfig", str(self.cluster.kubeconfig)],
                              env=env, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"certs/tenantgate-certs failed ({proc.returncode}):\n"
                               f"{proc.stdout}{proc.stderr}")
        return proc.stdout

    def cert_serial(self):
        out = openssl("x509", "-in", str(self.cert_file), "-noout", "-serial").decode()
        return int(out.strip().split("=", 1)[1], 16)

    def renew_cert(self):
        """A new serving cert under the same CA, written where the webhook reads it."""
        ca_before = self.ca_file.read_bytes()
        self.run_cert_tool()
        assert self.ca_file.read_bytes() == ca_before, "certs/tenantgate-certs replaced the CA"
        return self.cert_serial()

    def uninstall(self, namespace=True):
        """Remove the webhook's configurations and cluster RBAC; namespace=False keeps the
        install namespace, for a bed where other parts (the signer) still run in it."""
        k = self.cluster.kubectl
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            k("delete", kind, WEBHOOK_CONFIG, "--ignore-not-found", check=False)
        for kind in ("clusterrolebinding", "clusterrole"):
            k("delete", kind, WEBHOOK_SA, "--ignore-not-found", check=False)
        if namespace:
            k("delete", "namespace", INSTALL_NAMESPACE, "--ignore-not-found", "--wait=false",
              check=False)


# --- the host process ------------------------------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_prometheus(text):
    """Prometheus text format -> {(name, frozenset(label items)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m:
            labels = frozenset(_LABEL.findall(m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def http_get(port, path, timeout=2.0):
    """(status, body) of a plain HTTP GET on 127.0.0.1:port; (0, error) when it cannot connect."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError as exc:
        return 0, str(exc)
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0, data.decode(errors="replace")
    return status, body.decode(errors="replace")


def built(build_dir, relpath):
    """A binary of the build, or the test fails saying which target to build."""
    path = Path(build_dir) / relpath
    if not path.exists():
        pytest.fail(f"{path} not built (cmake --build {build_dir} --target {path.name})")
    return path


class Webhook:
    def __init__(self, binary, install, kubeconfig, log_dir):
        self.binary = Path(binary)
        self.install = install
        self.kubeconfig = kubeconfig
        self.log_dir = Path(log_dir)
        self.port = install.port
        self.metrics_port = free_port()
        self.process = None
        self.args = []
        self.starts = 0
        self.problems = []             # unclean exits and sanitizer reports, one text each

    def start(self, *extra, kubeconfig=None):
        """Start it with the default flags plus extra; kubeconfig= overrides the SA's
        kubeconfig for this run only."""
        assert self.process is None or not self.process.alive(), "already running"
        self.args = [self.binary, "--kubeconfig", kubeconfig or self.kubeconfig,
                     "--cert", self.install.cert_file, "--key", self.install.key_file,
                     "--listen", f"127.0.0.1:{self.port}",
                     "--metrics-listen", f"127.0.0.1:{self.metrics_port}",
                     "--threads", "2", "--shutdown-grace", "3", *extra]
        self.starts += 1
        env = dict(os.environ)
        supp = self.install.source_dir / "webhook" / "lsan.supp"
        if supp.exists():              # matters only for a TG_SANITIZE build
            env.setdefault("LSAN_OPTIONS", f"suppressions={supp}:print_suppressions=0")
        self.process = HostProcess(self.args, self.log_dir / f"tenantgate-webhook-{self.starts}.log",
                                   env=env)
        self.process.name = "tenantgate-webhook"
        return self.process

    @contextlib.contextmanager
    def running(self):
        """Started and ready for the with-block; stopped after it, however it ends."""
        self.start()
        try:
            self.wait_ready()
            yield self
        finally:
            self.stop()

    def stop(self):
        """SIGTERM (SIGKILL after 10 s); returns the exit status.  Anything but a clean exit
        0, and any sanitizer report in the log, is recorded in .problems."""
        if self.process is None:
            return None
        was_running = self.process.alive()
        status = self.process.stop()
        log = self.process.log_path.read_text(errors="replace")
        if (was_running and status != 0) or "Sanitizer" in log or "runtime error:" in log:
            self.problems.append(f"{self.process.log_path}: exit status {status}\n"
                                 f"{self.process.log_tail(30)}")
        return status

    def readyz(self):
        return http_get(self.metrics_port, "/readyz")

    def wait_ready(self, timeout=30):
        """Seconds from now until /readyz answers 200; fails if the process dies first."""
        t0 = time.monotonic()

        def ready():
            if not self.process.alive():
                raise RuntimeError(f"tenantgate-webhook exited ({self.process.proc.returncode}):\n"
                                   f"{self.process.log_tail(20)}")
            return self.readyz()[0] == 200
        wait_for(ready, timeout=timeout, interval=0.01, what="tenantgate-webhook /readyz 200")
        return time.monotonic() - t0

    def restart(self, *extra, kubeconfig=None):
        self.stop()
        self.start(*extra, kubeconfig=kubeconfig)
        return self.wait_ready()

    def metrics(self):
        status, body = http_get(self.metrics_port, "/metrics")
        assert status == 200, f"/metrics: {status} {body[:200]}"
        return parse_prometheus(body)

    @contextlib.contextmanager
    def unsynced_until_granted(self, cluster):
        """Restarted as a fresh ServiceAccount with no rights, so it serves but its caches
        cannot sync (every review: CacheNotSynced).  Yields grant(): binds the webhook's
        ClusterRole and its slice policy Role to that ServiceAccount, after which the
        informers' next retry syncs.
        Afterwards the binding and the ServiceAccount are deleted and the webhook is
        restarted as usual (ready)."""
        sa = f"{WEBHOOK_SA}-late-{uuid.uuid4().hex[:6]}"
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": sa},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                               "name": WEBHOOK_SA},
                   "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": INSTALL_NAMESPACE}]}
        policy_binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                          "metadata": {"name": sa, "namespace": INSTALL_NAMESPACE},
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": f"{WEBHOOK_SA}-slice-policy"},
                          "subjects": [{"kind": "ServiceAccount", "name": sa,
                                        "namespace": INSTALL_NAMESPACE}]}
        kubeconfig = cluster.serviceaccount_kubeconfig(INSTALL_NAMESPACE, sa)
        try:
            self.stop()
            self.start(kubeconfig=kubeconfig)
            wait_for(lambda: self.readyz()[0] == 503, timeout=10, interval=0.05,
                     what="tenantgate-webhook serving, not ready")
            yield lambda: (cluster.apply(policy_binding), cluster.apply(binding))
        finally:
            cluster.kubectl("delete", "rolebinding", sa, "-n", INSTALL_NAMESPACE, "--ignore-not-found",
                            check=False)
            cluster.kubectl("delete", "clusterrolebinding", sa, "--ignore-not-found", check=False)
            cluster.kubectl("delete", "serviceaccount", sa, "-n", INSTALL_NAMESPACE,
                            "--ignore-not-found", check=False)
            self.stop()
            self.start()
            self.wait_ready()

    def counter(self, name, metrics=None, **labels):
        metrics = self.metrics() if metrics is None else metrics
        return metrics.get((name, frozenset(labels.items())), 0.0)

    def served_serial(self):
        """Serial number of the certificate the webhook serves now (verified against the CA)."""
        ctx = ssl.create_default_context(cafile=str(self.install.ca_file))
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                return int(tls.getpeercert()["serialNumber"], 16)

    def log_tail(self, lines=40):
        return self.process.log_tail(lines) if self.process else "(not started)"


class HoldingProxy:
    """A TCP relay to 127.0.0.1:upstream_port that can freeze chosen connections.

    hold(conns) stops relaying server-to-client bytes on those connections (the peer sees a
    silent server, nothing is lost: the bytes wait in the kernel's buffers) until release().
    Point a kubeconfig's server at .port to make a client's existing streams (an informer's
    watches) fall behind while its new connections work.  TLS passes through untouched."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = []          # [_Relay], in accept order
        self._lock = threading.Lock()
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def _accept_loop(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            relay = _Relay(client, upstream)
            with self._lock:
                self.connections.append(relay)

    def snapshot(self):
        with self._lock:
            return list(self.connections)

    def hold(self, relays):
        for r in relays:
            r.gate.clear()

    def release(self):
        for r in self.snapshot():
            r.gate.set()

    def close(self):
        self.release()
        self.listener.close()
        for r in self.snapshot():
            r.close()


class _Relay:
    def __init__(self, client, upstream):
        self.client, self.upstream = client, upstream
        self.gate = threading.Event()
        self.gate.set()
        threading.Thread(target=self._pump, args=(client, upstream, None), daemon=True).start()
        threading.Thread(target=self._pump, args=(upstream, client, self.gate), daemon=True).start()

    @staticmethod
    def _pump(src, dst, gate):
        try:
            while data := src.recv(65536):
                if gate is not None:
                    gate.wait()
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        for s in (self.client, self.upstream):
            try:
                s.close()
            except OSError:
                pass


# --- fixtures --------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def webhook_install(provider, crds, source_dir, tmp_path_factory):
    inst = WebhookInstall(provider, source_dir, tmp_path_factory.mktemp("webhook-install"),
                          free_port())
    try:
        inst.install()
        yield inst
    finally:
        inst.uninstall()


@pytest.fixture(scope="session")
def webhook(provider, build_dir, webhook_install, tmp_path_factory):
    binary = built(build_dir, "webhook/tenantgate-webhook")
    # The bed's apiserver issues tokens of any length asked for; the run may take an hour+.
    kubeconfig = provider.serviceaccount_kubeconfig(INSTALL_NAMESPACE, WEBHOOK_SA, duration="6h")
    hook = Webhook(binary, webhook_install, kubeconfig, tmp_path_factory.mktemp("webhook-logs"))
    with hook.running():
        yield hook
    if hook.problems:
        pytest.fail("tenantgate-webhook did not exit cleanly:\n" + "\n".join(hook.problems))


@pytest.fixture(autouse=True)
def webhook_log_on_failure(request):
    """Attach the webhook's log tail to a failed test's report (conftest's hook reads
    item._tg_host_processes); only for tests that use the webhook fixture."""
    if "webhook" in request.fixturenames:
        hook = request.getfixturevalue("webhook")
        procs = getattr(request.node, "_tg_host_processes", None)
        if procs is None:
            procs = request.node._tg_host_processes = []

        class _Current:         # the process running when the report is made
            name = "tenantgate-webhook"

            @property
            def pid(self):
                return hook.process.pid if hook.process else None

            def log_tail(self, lines=40):
                return hook.log_tail(lines)
        procs.append(_Current())
    yield
