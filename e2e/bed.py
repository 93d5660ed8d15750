"""bed.py - the test side of the e2e bed: a handle on one control plane started by
e2e/cluster, and the helpers the tests share (the bed's own tests are test_bed.py).

Only test code lives here (the product is C).  conftest.py builds Cluster objects and hands
them to tests as fixtures; tests may also import the helpers directly:

    from bed import Cluster, wait_for, openssl

A Cluster shells out to the pinned kubectl with the cluster-admin kubeconfig unless told
otherwise, and keeps every file it writes inside the cluster's state directory, so
`e2e/cluster down` removes it all.
"""

import base64
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

E2E_DIR = Path(__file__).resolve().parent
CLUSTER_TOOL = E2E_DIR / "cluster"
# Prefix of the cluster names of this test run (one pytest process).
RUN_TAG = f"e2e-{os.getpid()}"


class ClusterError(RuntimeError):
    pass


def wait_for(predicate, timeout=30.0, interval=0.25, what="condition"):
    """Poll predicate() until it returns something truthy; return that value.

    Raises TimeoutError naming `what` when it never does."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def openssl(*args, input=None):
    """Run the openssl CLI; return stdout (bytes).  Raises CalledProcessError with stderr."""
    return subprocess.run(["openssl", *args], input=input, capture_output=True,
                          check=True).stdout


def _env_assignments(text):
    """Parse `NAME=value` lines printed by `e2e/cluster env` (values are shell-quoted)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            words = shlex.split(value)
            out[key] = words[0] if words else ""
    return out


def cluster_tool(verb, name, *args, check=True, timeout=None, env=None):
    """Run `e2e/cluster VERB NAME [ARGS...]`; return the CompletedProcess (text)."""
    proc = subprocess.run([str(CLUSTER_TOOL), verb, name, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise ClusterError(f"e2e/cluster {verb} {name} {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    return proc


class Cluster:
    """One running control plane: etcd + kube-apiserver + kube-controller-manager."""

    def __init__(self, name):
        self.name = name
        env = _env_assignments(cluster_tool("env", name).stdout)
        self.kubeconfig = env["KUBECONFIG"]           # cluster-admin (O=system:masters)
        self.admin_kubeconfig = self.kubeconfig
        self.kubectl_path = env["KUBECTL"]
        self.bin_dir = str(Path(self.kubectl_path).parent)
        self.server = env["KUBE_APISERVER"]           # https://127.0.0.1:PORT
        self.ca_file = env["KUBE_CA_FILE"]            # PEM cluster CA (also the csrsigning CA)
        self.state_dir = Path(env["KUBE_STATE_DIR"])
        self.logs_dir = self.state_dir / "logs"
        self.work_dir = self.state_dir / "work"       # scratch files tests write
        self.work_dir.mkdir(exist_ok=True)
        # Set only for a cluster started with a node (e2e/cluster up NAME --node).
        self.node_name = env.get("KUBE_NODE_NAME")
        self.node_ip = env.get("KUBE_NODE_IP")
        self.node_netns = env.get("KUBE_NODE_NETNS")

    def __repr__(self):
        return f"Cluster({self.name!r}, {self.server})"

    # --- kubectl ------------------------------------------------------------------------

    def kubectl(self, *args, input=None, check=True, as_user=None, as_groups=(),
                kubeconfig=None, timeout=60):
        """Run kubectl against this cluster; return CompletedProcess (text stdout/stderr).

        as_user/as_groups impersonate (admin credentials); kubeconfig= uses other
        credentials instead.  input may be str, bytes-like text, or a dict (sent as JSON).
        With check=True a non-zero exit raises ClusterError carrying stderr."""
        cmd = [self.kubectl_path, "--kubeconfig", str(kubeconfig or self.kubeconfig)]
        if as_user:
            cmd += ["--as", as_user]
        for group in as_groups:
            cmd += ["--as-group", group]
        cmd += [str(a) for a in args]
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        proc = subprocess.run(cmd, input=input, capture_output=True, text=True,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(cmd[3:])} failed ({proc.returncode}): "
                               f"{proc.stderr.strip()}")
        return proc

    def import_images(self, *archives):
        """Load oci-archive images into the node's containerd (a --node cluster only)."""
        cluster_tool("import", self.name, *archives, timeout=300)

    def apply(self, obj, *extra, check=True, **kw):
        """kubectl apply -f - with a dict (JSON) or YAML/JSON text; extra args appended
        (e.g. "--server-side", "--dry-run=server")."""
        return self.kubectl("apply", "-f", "-", *extra, input=obj, check=check, **kw)

    def create(self, obj, *extra, check=True, **kw):
        return self.kubectl("create", "-f", "-", *extra, input=obj, check=check, **kw)

    def get_json(self, *args, **kw):
        """kubectl get ARGS -o json, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json", **kw).stdout)

    def wait_established(self, *crds, timeout=60):
        """Wait until each CRD (full name) is served. Polled here rather than with `kubectl
        wait --for=condition=Established`, which fails at once ("status.conditions accessor
        error") on a CRD so fresh that the API server has not written its status yet.  One
        kubectl get for all of them per look: a chart brings dozens, and a kubectl process
        costs a good part of a second on a loaded bed."""
        pending = set(crds)

        def established():
            p = self.kubectl("get", "crd", *sorted(pending), "--ignore-not-found", "-o", "json",
                             check=False)
            got = json.loads(p.stdout) if p.stdout.strip() else {"items": []}
            items = got["items"] if "items" in got else [got]    # one name: the object alone
            for crd in items:
                conds = (crd.get("status") or {}).get("conditions") or []
                if any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
                    pending.discard(crd["metadata"]["name"])
            return not pending
        try:
            wait_for(established, timeout=timeout, interval=0.2, what="CRDs established")
        except TimeoutError as e:
            raise TimeoutError(f"{e}; not established: {' '.join(sorted(pending))}") from None

    def exists(self, *args, **kw):
        return self.kubectl("get", *args, "-o", "name", check=False, **kw).returncode == 0

    def create_namespace(self, name, labels=None):
        """Create (or update the labels of) a namespace; returns its name."""
        self.apply({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": dict(labels or {})}})
        return name

    def delete_namespace(self, name, wait=False):
        self.kubectl("delete", "namespace", name, "--ignore-not-found",
                     f"--wait={'true' if wait else 'false'}")

    # --- credentials ------------------------------------------------------------------------

    def _write_kubeconfig(self, path, user, user_args, namespace=None):
        self.kubectl("config", "set-cluster", self.name, "--server", self.server,
                     "--certificate-authority", self.ca_file, "--embed-certs", kubeconfig=path)
        self.kubectl("config", "set-credentials", user, *user_args, kubeconfig=path)
        ctx = ["--namespace", namespace] if namespace else []
        self.kubectl("config", "set-context", self.name, "--cluster", self.name,
                     "--user", user, *ctx, kubeconfig=path)
        self.kubectl("config", "use-context", self.name, kubeconfig=path)
        os.chmod(path, 0o600)
        return str(path)

    def serviceaccount_token(self, namespace, name, duration="1h", audience=None):
        """A bound token for ServiceAccount namespace/name (created if missing)."""
        if not self.exists("serviceaccount", name, "-n", namespace):
            self.kubectl("create", "serviceaccount", name, "-n", namespace)
        args = ["create", "token", name, "-n", namespace, "--duration", duration]
        if audience:
            args += ["--audience", audience]
        return self.kubectl(*args).stdout.strip()

    def serviceaccount_kubeconfig(self, namespace, name, duration="1h"):
        """Path of a kubeconfig that authenticates as ServiceAccount namespace/name with a
        fresh token (`kubectl create token`); the SA is created if missing.  Its context
        namespace is `namespace`.  What the SA may do is up to the caller's RBAC."""
        token = self.serviceaccount_token(namespace, name, duration)
        path = self.work_dir / f"sa-{namespace}-{name}.kubeconfig"
        path.unlink(missing_ok=True)
        return self._write_kubeconfig(path, f"system:serviceaccount:{namespace}:{name}",
                                      ["--token", token], namespace=namespace)

    def cert_kubeconfig(self, user, cert_file, key_file, path=None):
        """Path of a kubeconfig that authenticates with a client certificate."""
        path = Path(path or self.work_dir / f"cert-{user}.kubeconfig")
        path.unlink(missing_ok=True)
        return self._write_kubeconfig(path, user, ["--client-certificate", str(cert_file),
                                                   "--client-key", str(key_file),
                                                   "--embed-certs"])

    # --- CSRs -------------------------------------------------------------------------------

    def wait_csr_certificate(self, name, timeout=30):
        """PEM bytes of status.certificate of CSR `name` once the signer has issued it."""
        def issued():
            csr = self.get_json("csr", name)
            cert = csr.get("status", {}).get("certificate")
            return base64.b64decode(cert) if cert else None
        return wait_for(issued, timeout=timeout, what=f"certificate of CSR {name}")

    # --- faults ------------------------------------------------------------------------------

    def restart_apiserver(self, timeout=120):
        """Stop this cluster's kube-apiserver (TERM, KILL after 5 s) and start it again with
        the same flags and port (`e2e/cluster restart-apiserver`); returns once /readyz is ok
        again.  etcd and the controller-manager keep running.  Every client connection is cut,
        watches included.  Returns (old pid, new pid, seconds it took)."""
        old = self.pids()["kube-apiserver"]
        t0 = time.monotonic()
        cluster_tool("restart-apiserver", self.name, timeout=timeout)
        new = self.pids()["kube-apiserver"]
        if new == old:
            raise ClusterError(f"{self.name}: kube-apiserver pid unchanged ({old}) after restart")
        return old, new, time.monotonic() - t0

    # --- diagnostics -----------------------------------------------------------------------

    def log_tail(self, component="kube-apiserver", lines=40):
        path = self.logs_dir / f"{component}.log"
        try:
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 200 * lines))
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError as exc:
            return f"(no log: {exc})"

    def pids(self):
        """{component: pid} of the processes e2e/cluster started for this cluster."""
        out = {}
        pids_file = self.state_dir / "pids"
        if pids_file.exists():
            for line in pids_file.read_text().splitlines():
                label, pid = line.split()
                out[label] = int(pid)
        return out

    def ports(self):
        """{role: port} this cluster listens on (etcd_client, etcd_peer, apiserver, ...)."""
        out = {}
        for line in (self.state_dir / "ports").read_text().splitlines():
            role, port = line.split()
            out[role] = int(port)
        return out


# --- host processes and test PKI -----------------------------------------------------------

def delete_namespaces(pairs, timeout=120, check=False):
    """Delete each (cluster, namespace) of pairs and wait until all are gone (at most timeout
    seconds; what is left then stays terminating, as with kubectl's own --timeout, or with
    check=True raises ClusterError naming what still holds it).  Every deletion starts before
    the first wait: each namespace controller spends seconds per namespace, so deleting one
    after the other adds those up."""
    pairs = list(pairs)
    for cluster, ns in pairs:
        cluster.kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false",
                        check=False)
    deadline = time.monotonic() + timeout
    for cluster, ns in pairs:
        left = max(1, int(deadline - time.monotonic()))
        cluster.kubectl("wait", "--for=delete", f"namespace/{ns}", f"--timeout={left}s",
                        check=False, timeout=left + 30)
    left = [(cluster, ns) for cluster, ns in pairs if check and cluster.exists("namespace", ns)]
    if left:
        raise ClusterError("namespaces still terminating after %ds: %s" % (timeout, "; ".join(
            f"{cluster.name}/{ns} held by {_finalized(cluster, ns)}" for cluster, ns in left)))


HELD_KINDS = ("resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
              "identities.authentication.liqo.io", "tenants.authentication.liqo.io", "secrets")


def _finalized(cluster, ns):
    """kind/name[finalizers] of the objects in ns (of the kinds tenantgate and Liqo hold) that
    still carry finalizers."""
    held = []
    for kind in HELD_KINDS:
        out = cluster.kubectl("get", kind, "-n", ns, "-o", "json", check=False)
        for o in (json.loads(out.stdout)["items"] if out.returncode == 0 else []):
            if o["metadata"].get("finalizers"):
                held.append(f"{kind.split('.')[0]}/{o['metadata']['name']}{o['metadata']['finalizers']}")
    return ", ".join(held) or "no finalizer of the kinds looked at"


_given_ports = []


def _ephemeral_low():
    try:
        return int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def port_halves():
    """(e2e/cluster's ports, free_port's): the two halves of the room between 10000 and the
    ephemeral range, as e2e/cluster's free_ports splits it."""
    lo = _ephemeral_low()
    mid = 10000 + max(lo - 10000, 0) // 2
    return range(10000, mid), range(mid, max(lo, mid))


def free_port():
    """A TCP port that was free on 127.0.0.1 a moment ago, picked at random below the
    ephemeral range (net.ipv4.ip_local_port_range) when there is room, as e2e/cluster's
    free_ports: the kernel hands ephemeral ports to every outgoing connection, so one from
    there (what bind to 0 gives) can become some connection's source port before our daemon
    binds it ("Address already in use"). Only the upper half of that room: the lower half is
    e2e/cluster's, so a cluster started after this call never picks the same port. Not one of
    the last 64 this process gave."""
    ours = port_halves()[1]
    for _ in range(2000 if len(ours) > 100 else 0):
        port = random.choice(ours)
        if port in _given_ports:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        break
    else:                        # no room below the ephemeral range
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    _given_ports.append(port)
    del _given_ports[:-64]
    return port


def mint_serving_cert(directory, ips=("127.0.0.1",), dns=(), cn=None):
    """A throwaway CA and a P-256 serving cert signed by it, made with the openssl CLI.

    Returns {"ca": path, "cert": path, "key": path, "ca_pem": bytes}; use ca_pem as the
    caBundle of a webhook configuration whose URL names one of ips/dns."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert, ext = (d / n for n in (
        "serving-ca.key", "serving-ca.crt", "serving.key", "serving.csr", "serving.crt",
        "serving.ext"))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", str(ca_key), "-out", str(ca), "-days", "2", "-subj", "/CN=e2e-serving-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", str(key), "-out", str(csr),
            "-subj", f"/CN={cn or (list(dns) + list(ips))[0]}")
    sans = ",".join([f"IP:{i}" for i in ips] + [f"DNS:{n}" for n in dns])
    ext.write_text(f"subjectAltName={sans}\nextendedKeyUsage=serverAuth\n"
                   "basicConstraints=critical,CA:FALSE\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
            "-set_serial", "0x" + os.urandom(16).hex(), "-days", "2", "-extfile", str(ext),
            "-out", str(cert))
    csr.unlink()
    return {"ca": str(ca), "cert": str(cert), "key": str(key), "ca_pem": ca.read_bytes()}


class HostProcess:
    """A service of ours run on the host for a test (webhook, signer, ...).

    Started in its own session so stop() reaches its children too; stdout and stderr go
    to log_path.  stop() sends SIGTERM, waits, then SIGKILLs; it is idempotent."""

    def __init__(self, args, log_path, env=None, cwd=None):
        self.args = [str(a) for a in args]
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                     start_new_session=True)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=10):
        """Stop it; return its exit status (negative: killed by that signal)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def log_tail(self, lines=40):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no log: {exc})"


def _socket_inodes(pid):
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue                    # closed meanwhile
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def apiserver_connections(pid, port):
    """Socket inodes of the established TCP connections process pid holds to 127.0.0.1:port."""
    mine = _socket_inodes(pid)
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            remote, state, inode = f[2], f[3], f[9]
            if state == "01" and int(remote.split(":")[1], 16) == port and inode in mine:
                out.add(inode)
    return out
