"""pytest fixtures for the tenantgate e2e test bed.  THIS DOCSTRING IS THE FIXTURE CONTRACT.

Run with `make e2e`, `ctest -L e2e` in a build dir, or `e2e/run [pytest args]`.

Session fixtures
----------------
source_dir -> pathlib.Path   repository root (env TG_SOURCE_DIR, else this file's parent's parent)
build_dir  -> pathlib.Path   CMake build dir holding our C binaries (env TG_BUILD_DIR, else
                             <source_dir>/build); e.g. build_dir / "webhook" / "tenantgate-webhook"
vectors_dir -> pathlib.Path  Tenant test vectors (env TG_VECTORS_DIR, else
                             <source_dir>/pki/testdata/vectors; docs/PROTOCOL.md 10)
k8s_bin    -> pathlib.Path   dir with the pinned kube-apiserver, kube-controller-manager,
                             kubectl, etcd (built once by e2e/k8s-bin)
provider   -> Cluster        a real control plane, started on first use, once per run
consumer   -> Cluster        a second, independent one (own CA, etcd, ports)
crds       -> None           manifests/crds applied to provider and consumer, established, and
                             manifests/policy/liqo (the tenant-namespace policy, its labeler
                             ClusterRole bound to tenantgate's and Liqo's ServiceAccounts): a
                             Namespace named and labelled as a tenant namespace is made by
                             the admin kubeconfig (system:masters passes) or those accounts
cli_bin    -> pathlib.Path   <build_dir>/cli/kubectl-tenantgate (the test fails if it is not built)
cli        -> run(*args, env=None, timeout=180) -> (exit status, stdout, stderr) of cli_bin
node_provider -> Cluster     a third control plane with a real node (e2e/cluster up NAME --node:
                             kube-scheduler, containerd, kubelet, pods in the bed's own network
                             namespace); its apiserver is at https://10.250.N.1:443.  Only the
                             tests marked `node` use it (make test-node, ctest -L e2e-node):
                             it needs e2e/node-bin and root; e2e/node/preflight checks those
                             and the kernel features first and fails in one line naming what
                             is missing.

Both clusters are torn down at the end of the run, whatever happens (failure, Ctrl-C,
SIGTERM); clusters left by a run that was SIGKILLed are reaped at the start of the next one.
Cluster names are e2e-<pid>-provider / e2e-<pid>-consumer, so concurrent runs do not collide.

Function fixtures
-----------------
namespace  -> factory(cluster, prefix="t", labels=None) -> str
              creates a uniquely named namespace, deleted after the test.

Cluster (see bed.py)
------------------------
.name .server (https://127.0.0.1:PORT) .ca_file (PEM cluster CA = csrsigning CA)
.kubeconfig == .admin_kubeconfig (cluster-admin, group system:masters)
.kubectl_path .bin_dir .state_dir .logs_dir .work_dir (scratch, removed with the cluster)
.kubectl(*args, input=None, check=True, as_user=None, as_groups=(), kubeconfig=None,
         timeout=60) -> subprocess.CompletedProcess (text); input may be a dict (sent as JSON);
         check=True raises bed.ClusterError with kubectl's stderr
.apply(obj_or_text, *extra_args, check=True, **kubectl_kw)     kubectl apply -f -
.create(obj_or_text, *extra_args, check=True, **kubectl_kw)    kubectl create -f -
.get_json(*args, **kubectl_kw) -> dict                         kubectl get ... -o json
.exists(*args) -> bool
.create_namespace(name, labels=None) / .delete_namespace(name, wait=False)
         (several to wait for: bed.delete_namespaces([(cluster, ns), ...], timeout=120)
         starts every deletion, then waits for all: they run at once)
.serviceaccount_kubeconfig(namespace, name, duration="1h") -> path of a kubeconfig with a
         fresh bound token of that ServiceAccount (created if missing), context namespace set;
         give it rights with your own Role/ClusterRole bindings.  For running our C services
         as host processes.
.serviceaccount_token(namespace, name, duration="1h", audience=None) -> str
.cert_kubeconfig(user, cert_file, key_file, path=None) -> path (client-cert kubeconfig)
.wait_csr_certificate(csr_name, timeout=30) -> PEM bytes once the CSR is issued
.log_tail(component="kube-apiserver", lines=40) -> str   (also "etcd", "kube-controller-manager")
.pids() -> {component: pid}   .ports() -> {role: port}
.node_name .node_ip .node_netns   (None unless started with --node)
.import_images(*oci_archives)     load images into the node's containerd (--node only)
.restart_apiserver(timeout=120) -> (old pid, new pid, seconds): stops the kube-apiserver (TERM,
         KILL after 5 s) and starts it with the same flags and port, back when /readyz is ok;
         every client connection (watches too) is cut.  The cluster is shared: only restart it
         in a test that can wait for it (~5-25 s), and never leave it down.

host_process -> factory(args, name=None, env=None, cwd=None) -> bed.HostProcess
              runs one of our services on the host (own session, output in a log file);
              stopped (TERM, then KILL) after the test, log tail attached on failure.
              HostProcess: .pid .alive() .stop(timeout=10) -> exit status .log_path .log_tail()
              For a module- or session-wide service, build bed.HostProcess in your own
              fixture and stop() it in its teardown.

Helpers in bed: wait_for(predicate, timeout=30, interval=0.25, what=...),
openssl(*args, input=None) -> bytes, free_port() -> int,
mint_serving_cert(dir, ips=("127.0.0.1",), dns=(), cn=None) -> {"ca","cert","key","ca_pem"}
(a throwaway CA + serving cert: ca_pem is the caBundle for a webhook at https://127.0.0.1:PORT).

Rules for test files (e2e/test_<area>.py): the clusters are shared by the whole run, so work
in your own namespaces (use the `namespace` fixture) and remove any cluster-scoped object you
create (webhook configurations, ClusterRoles, CRDs other than ours) before your test ends,
e.g. with a yield fixture.  Scope webhook configurations with a namespaceSelector.
On a failed test the tail of each started cluster's apiserver log is attached to the report.
"""

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bed import (E2E_DIR, RUN_TAG, Cluster, ClusterError, HostProcess, wait_for,  # noqa: E402
                     cluster_tool)
from tenantgate_services import built, policy_enforced  # noqa: E402

STATE_ROOT = Path(os.environ.get("TG_E2E_STATE", "/tmp/tenantgate-e2e"))

_started = {}      # name -> Cluster, for teardown and failure reports


def _reap_stale_clusters():
    """`down` the clusters of earlier runs whose pytest process no longer exists."""
    if not STATE_ROOT.is_dir():
        return
    for entry in STATE_ROOT.iterdir():
        m = re.fullmatch(r"e2e-(\d+)-.+", entry.name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            cluster_tool("down", entry.name, check=False)


def _down_all():
    while _started:
        name, _ = _started.popitem()
        cluster_tool("down", name, check=False)


def _on_sigterm(signum, frame):
    # Let pytest unwind like on Ctrl-C, so session fixtures are finalized.
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # A shell starts background jobs with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt: restore it so an interrupt always unwinds through the teardown.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sigterm)
    _reap_stale_clusters()


def pytest_unconfigure(config):
    _down_all()     # last resort if a session fixture's finalizer did not run


def _start_cluster(role, *up_args):
    name = f"{RUN_TAG}-{role}"
    # Ports are picked free but not held until the daemons bind them; another process on
    # this shared machine may take one in between.  `up` cleans up after itself; retry once.
    for attempt in (1, 2):
        try:
            cluster_tool("up", name, *up_args)
            break
        except ClusterError:
            cluster_tool("down", name, check=False)
            if attempt == 2:
                raise
        except BaseException:
            cluster_tool("down", name, check=False)
            raise
    cluster = Cluster(name)
    _started[name] = cluster
    return cluster


@pytest.fixture(scope="session")
def source_dir():
    return Path(os.environ.get("TG_SOURCE_DIR", E2E_DIR.parent)).resolve()


@pytest.fixture(scope="session")
def build_dir(source_dir):
    return Path(os.environ.get("TG_BUILD_DIR", source_dir / "build")).resolve()


@pytest.fixture(scope="session")
def cli_bin(build_dir):
    return built(build_dir, "cli/kubectl-tenantgate")


@pytest.fixture(scope="session")
def signer_bin(build_dir):
    return built(build_dir, "signer/tenantgate-signer")


@pytest.fixture(scope="session")
def cli(cli_bin):
    def run(*args, env=None, timeout=180):
        p = subprocess.run([str(cli_bin), *map(str, args)], capture_output=True, text=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.fixture(scope="session")
def vectors_dir(source_dir):
    return Path(os.environ.get("TG_VECTORS_DIR",
                               source_dir / "pki" / "testdata" / "vectors")).resolve()


@pytest.fixture(scope="session")
def k8s_bin():
    out = subprocess.run([str(E2E_DIR / "k8s-bin")], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.fail(f"e2e/k8s-bin failed:\n{out.stderr[-3000:]}")
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def provider(k8s_bin):
    cluster = _start_cluster("provider")
    yield cluster
    _started.pop(cluster.name, None)
    cluster_tool("down", cluster.name, check=False)


@pytest.fixture(scope="session")
def consumer(k8s_bin):
    cluster = _start_cluster("consumer")
    yield cluster
    _started.pop(cluster.name, None)
    cluster_tool("down", cluster.name, check=False)


def node_preflight():
    """e2e/node/preflight: root, the kernel features and the tools the node needs. What is
    missing fails the test in one line, before any cluster starts (never a hang)."""
    p = subprocess.run([str(E2E_DIR / "node" / "preflight")], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        pytest.fail((p.stderr or p.stdout).strip() or f"node preflight: exit status {p.returncode}",
                    pytrace=False)


@pytest.fixture(scope="session")
def node_provider(k8s_bin):
    node_preflight()
    cluster = _start_cluster("node", "--node")
    yield cluster
    _started.pop(cluster.name, None)
    cluster_tool("down", cluster.name, check=False)


def install_crds(cluster, source_dir):
    crds = source_dir / "manifests" / "crds"
    cluster.kubectl("apply", "--server-side", "-k", crds)
    cluster.wait_established("tenants.authentication.liqo.io", "identities.authentication.liqo.io",
                             "resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
                             "nameclaims.tenantgate.io")


def install_policy(cluster, source_dir):
    """The tenant-namespace admission policy, as every install has it (docs/operations.md)."""
    cluster.kubectl("apply", "-k", source_dir / "manifests" / "policy" / "liqo")
    # the API server reads policies from an informer: in force a moment later
    wait_for(lambda: policy_enforced(cluster), timeout=60, what="the tenant-namespace policy in force")


@pytest.fixture(scope="session")
def crds(provider, consumer, source_dir):
    for cluster in (provider, consumer):
        install_crds(cluster, source_dir)
        install_policy(cluster, source_dir)


@pytest.fixture
def namespace():
    made = []

    def make(cluster, prefix="t", labels=None):
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        cluster.create_namespace(name, labels)
        made.append((cluster, name))
        return name

    yield make
    for cluster, name in made:
        try:
            cluster.delete_namespace(name)
        except ClusterError:
            pass


@pytest.fixture
def host_process(request, tmp_path):
    procs = []

    def start(args, name=None, env=None, cwd=None):
        name = name or Path(str(args[0])).name
        proc = HostProcess(args, tmp_path / f"{name}-{len(procs)}.log", env=env, cwd=cwd)
        proc.name = name
        procs.append(proc)
        return proc

    request.node._tg_host_processes = procs
    yield start
    for proc in procs:
        proc.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when in ("setup", "call"):
        for proc in getattr(item, "_tg_host_processes", []):
            report.sections.append((f"log tail of {proc.name} (pid {proc.pid})",
                                    proc.log_tail(40)))
        for cluster in list(_started.values()):
            report.sections.append((f"kube-apiserver log tail ({cluster.name})",
                                    cluster.log_tail("kube-apiserver", 40)))
