"""Liqo's own running components on a bed cluster, as host processes (the guard suite's Liqo).

Everything comes from Liqo's pinned module: the binaries from e2e/liqo-bin (cmd/<name> of
github.com/liqotech/liqo), the objects from Liqo's Helm chart (deployments/liqo), rendered by
liqorender (Helm's own loader and engine) with LiqoOnCluster.values().  Of the rendered chart
the bed applies what host processes need (CRDs, RBAC with the chart's ServiceAccounts, the
clusterid ConfigMap, the VirtualNode options template, the webhook configurations) and runs
each Deployment's container (controller-manager, crd-replicator, webhook) on the host with the
Deployment's own arguments and a token of the Deployment's own ServiceAccount: the rights the
chart gives it, no more.  What differs from a pod, and why:

- listeners: --metrics-address and --health-probe-address on 127.0.0.1 at free ports,
  --webhook-port a free port.  Liqo has no flag for the webhook server's address, so that
  one port listens on every interface (controller-runtime's default host "").
- the webhook's serving certificate: minted here (bed.mint_serving_cert, SAN 127.0.0.1)
  and put where controller-runtime reads it ($TMPDIR/k8s-webhook-server/serving-certs, TMPDIR
  per process).  The chart's --secret-name is dropped: with it Liqo writes the certificate to
  a fixed /tmp path shared by every Liqo webhook on the host.
- the webhook configurations: each service clientConfig becomes url https://127.0.0.1:PORT
  plus the minted CA; everything else (rules, selectors, failurePolicy) is the chart's.
- $(VAR) in arguments is what the pod's env gives: CLUSTER_ID from the clusterid ConfigMap,
  POD_NAMESPACE, POD_NAME.
"""

import base64
import copy
import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from liqo_modules import module_dir
from tenantgate_services import http_get
from bed import HostProcess, _socket_inodes, free_port, mint_serving_cert, wait_for

LIQO_NS = "liqo"

# Rendered kinds the host processes need; everything else (Deployments, Services, DaemonSets,
# Jobs, monitors, APIServices, ...) belongs to the pods the bed does not run.
APPLIED_KINDS = ("CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role",
                 "RoleBinding", "ServiceAccount", "ConfigMap", "VkOptionsTemplate",
                 "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
# Deployment name suffix -> the binary built by e2e/liqo-bin.
COMPONENTS = {"controller-manager": "liqo-controller-manager",
              "crd-replicator": "crd-replicator",
              "webhook": "webhook"}
# Flags each binary has for its listeners (read from their flag definitions).
LISTENER_FLAGS = {"liqo-controller-manager": ("metrics", "probe", "webhook"),
                  "crd-replicator": ("metrics",),
                  "webhook": ("metrics", "probe", "webhook")}
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def chart_dir(version):
    return module_dir(version) / "deployments" / "liqo"


def render(liqorender, chart, values, work_dir):
    """The chart rendered with values (dict) -> [manifest dicts]."""
    vf = Path(work_dir) / "liqo-values.yaml"
    vf.write_text(yaml.safe_dump(values))
    p = subprocess.run([str(liqorender), "--chart", str(chart), "--values", str(vf),
                        "--namespace", LIQO_NS], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"liqorender failed: {p.stderr[-2000:]}")
    return [d for d in yaml.safe_load_all(p.stdout) if d]


def expand(arg, env):
    """$(VAR) as the kubelet expands it in container args (unknown ones stay as they are)."""
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), arg)


def with_flag(args, flag, value):
    """args without any --flag / --flag=..., then --flag=value (None: just drop it)."""
    out = [a for a in args if a != f"--{flag}" and not a.startswith(f"--{flag}=")]
    return out + ([f"--{flag}={value}"] if value is not None else [])


def to_url(webhook_config, url_base, ca_pem):
    """A chart webhook configuration pointed at the host process: url + caBundle."""
    cfg = copy.deepcopy(webhook_config)
    for hook in cfg.get("webhooks", []):
        svc = hook["clientConfig"].pop("service")
        hook["clientConfig"]["url"] = url_base + svc.get("path", "/")
        hook["clientConfig"]["caBundle"] = base64.b64encode(ca_pem).decode()
    return cfg


def _hex_addr(text):
    """'0100007F:1F90' (/proc/net/tcp) -> ('127.0.0.1', 8080); IPv6 -> ('::...', port)."""
    addr, port = text.split(":")
    raw = bytes.fromhex(addr)
    if len(raw) == 4:
        ip = ".".join(str(b) for b in raw[::-1])
    else:       # four little-endian 32-bit words
        words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
        ip = ":".join(words[i:i + 2].hex() for i in range(0, 16, 2))
    return ip, int(port, 16)


def listeners(pid):
    """{(address, port)} of the TCP sockets process pid listens on."""
    inodes = _socket_inodes(pid)
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:        # 0A: LISTEN
                out.add(_hex_addr(f[1]))
    return out


class LiqoProcess:
    """One Liqo binary on the host: its args, ports, log and probe."""

    def __init__(self, name, args, env, log_path, ports):
        self.name, self.args, self.env, self.ports = name, args, env, ports
        self.log_path = log_path
        self.process = None

    def start(self):
        self.process = HostProcess(self.args, self.log_path, env=self.env)
        self.process.name = self.name
        return self

    def alive(self):
        return self.process is not None and self.process.alive()

    def ready(self):
        """/readyz 200 on its probe port (processes without one: alive)."""
        if not self.alive():
            raise RuntimeError(f"{self.name} exited ({self.process.proc.returncode}):\n"
                               f"{self.process.log_tail(30)}")
        port = self.ports.get("probe")
        return port is None or http_get(port, "/readyz")[0] == 200

    def stop(self):
        return self.process.stop() if self.process else None

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class LiqoOnCluster:
    """Liqo fully on for one bed cluster: install(), start(), stop(), uninstall()."""

    def __init__(self, cluster, cluster_id, version, bin_dir, chart, work_dir, extra_args=None):
        self.cluster, self.cluster_id, self.version = cluster, cluster_id, version
        self.bin_dir, self.chart = Path(bin_dir), Path(chart)
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.extra_args = extra_args or {}     # binary -> [args] appended (tests' switches)
        self.processes = {}                    # binary -> LiqoProcess
        self.docs = []
        self.webhook_port = free_port()
        self.serving = mint_serving_cert(self.work_dir / "webhook-certs")
        self.namespace_created = False

    def values(self):
        """Helm values an operator would give for this cluster (docs/LIQO.md, Guard mode)."""
        ca = Path(self.cluster.ca_file).read_bytes()
        return {
            # The chart in the module has no appVersion (a release sets it): name the images'
            # tag, which the chart insists on even where no image is pulled.
            "tag": self.version,
            "discovery": {"config": {"clusterID": self.cluster_id}},
            "apiServer": {"address": self.cluster.server, "ca": base64.b64encode(ca).decode()},
            # No pod network here: Liqo's networking, its API proxy, metric agent, telemetry
            # and storage have nothing to run on.
            "networking": {"enabled": False},
            "proxy": {"enabled": False},
            "metricAgent": {"enabled": False},
            "telemetry": {"enabled": False},
            "storage": {"enabled": False},
        }

    # --- the chart's objects ------------------------------------------------------------

    def install(self):
        self.docs = render(self.bin_dir / "liqorender", self.chart, self.values(), self.work_dir)
        if not self.cluster.exists("namespace", LIQO_NS):
            self.cluster.create_namespace(LIQO_NS)
            self.namespace_created = True
        crds = [d for d in self.docs if d["kind"] == "CustomResourceDefinition"]
        # a CRD an earlier module deleted without waiting must be gone before it comes back
        names = {d["metadata"]["name"] for d in crds}
        wait_for(lambda: not self._terminating_crds() & names, timeout=60, interval=0.5,
                 what="Liqo's CRDs not terminating")
        # Liqo's authentication CRDs replace the bed's own copies (tenantgate's manifests/crds,
        # server-side applied by conftest): the guard runs on Liqo's.
        self._apply(crds, "--server-side", "--force-conflicts")
        self.cluster.wait_established(*[d["metadata"]["name"] for d in crds], timeout=120)
        rest = [d for d in self.docs if d["kind"] in APPLIED_KINDS and d not in crds
                and "WebhookConfiguration" not in d["kind"]]
        self._apply(rest)

    def release_finalizers(self, keep_crds=()):
        """With Liqo's controllers stopped, finalizers they put on their objects (a
        ForeignCluster's, a NamespaceMap's) would never go, and the CRD, or the namespace
        holding them, would stay terminating: take them off, as Liqo's own uninstall would
        have unpeered."""
        for obj in self._custom_objects(keep_crds):
            meta = obj["metadata"]
            if not meta.get("finalizers"):
                continue
            where = ["-n", meta["namespace"]] if meta.get("namespace") else []
            self.cluster.kubectl("patch", self._resource_of(obj), meta["name"], *where,
                                 "--type=merge", "-p", '{"metadata":{"finalizers":null}}',
                                 check=False)

    def _chart_crds(self, keep_crds=()):
        return [d for d in self.docs if d["kind"] == "CustomResourceDefinition"
                and d["metadata"]["name"] not in keep_crds]

    def _resource_of(self, obj):
        """plural.group of a custom object, from the chart's CRD of its kind."""
        group = obj["apiVersion"].split("/")[0]
        for d in self._chart_crds():
            spec = d["spec"]
            if spec["group"] == group and spec["names"]["kind"] == obj["kind"]:
                return d["metadata"]["name"]
        raise KeyError(f"no chart CRD for {obj['apiVersion']} {obj['kind']}")

    def _custom_objects(self, keep_crds):
        """Every object of the chart's CRDs but keep_crds: one kubectl get for all of them (a
        kubectl process per CRD costs seconds each on a loaded bed); one per CRD only if the
        batch fails (a CRD already gone)."""
        names = [d["metadata"]["name"] for d in self._chart_crds(keep_crds)]
        if names:       # those still there (a second uninstall finds none)
            there = self.cluster.kubectl("get", "crd", *names, "--ignore-not-found", "-o", "name",
                                         check=False).stdout.split()
            names = [n for n in names if f"customresourcedefinition.apiextensions.k8s.io/{n}" in there]
        if not names:
            return []
        got = self.cluster.kubectl("get", ",".join(names), "-A", "-o", "json", check=False)
        if got.returncode == 0:
            return json.loads(got.stdout).get("items", [])
        items = []
        for name in names:
            got = self.cluster.kubectl("get", name, "-A", "-o", "json", check=False)
            if got.returncode == 0:
                items += json.loads(got.stdout).get("items", [])
        return items

    def _terminating_crds(self):
        return {c["metadata"]["name"] for c in self.cluster.get_json("crd")["items"]
                if c["metadata"].get("deletionTimestamp")}

    def _apply(self, docs, *extra):
        # -n: Helm leaves metadata.namespace to the release; namespaced objects go to liqo.
        if docs:
            self.cluster.kubectl("apply", "-n", LIQO_NS, "-f", "-", *extra, timeout=180,
                                 input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                   "items": docs}))

    def register_webhooks(self):
        """Liqo's webhook configurations, pointed at the host-process webhook."""
        url = f"https://127.0.0.1:{self.webhook_port}"
        self._apply([to_url(d, url, self.serving["ca_pem"]) for d in self.webhook_configs()])

    def webhook_configs(self):
        return [d for d in self.docs if d["kind"].endswith("WebhookConfiguration")]

    def objects(self, kind):
        return [d for d in self.docs if d["kind"] == kind]

    # --- the processes ------------------------------------------------------------------

    def deployment(self, suffix):
        for d in self.objects("Deployment"):
            if d["metadata"]["name"] == f"liqo-{suffix}":
                return d
        raise KeyError(f"chart renders no Deployment liqo-{suffix}")

    def _process(self, suffix, binary):
        dep = self.deployment(suffix)
        pod = dep["spec"]["template"]["spec"]
        container = pod["containers"][0]
        sa = pod.get("serviceAccountName") or "default"
        kubeconfig = self.cluster.serviceaccount_kubeconfig(LIQO_NS, sa, duration="6h")
        pod_env = {"CLUSTER_ID": self.cluster_id, "POD_NAMESPACE": LIQO_NS,
                   "POD_NAME": f"{dep['metadata']['name']}-host"}
        for e in container.get("env", []):
            if "value" in e:
                pod_env[e["name"]] = expand(e["value"], pod_env)
        args = [expand(a, pod_env) for a in container.get("args", [])]
        ports = {}
        tmp = self.work_dir / f"tmp-{binary}"
        for kind in LISTENER_FLAGS[binary]:
            ports[kind] = self.webhook_port if (kind == "webhook" and binary == "webhook") \
                else free_port()
            flag = {"metrics": "metrics-address", "probe": "health-probe-address",
                    "webhook": "webhook-port"}[kind]
            value = ports[kind] if kind == "webhook" else f"127.0.0.1:{ports[kind]}"
            args = with_flag(args, flag, value)
        if binary == "webhook":
            args = with_flag(args, "secret-name", None)
            certs = tmp / "k8s-webhook-server" / "serving-certs"
            certs.mkdir(parents=True, exist_ok=True)
            (certs / "tls.crt").write_bytes(Path(self.serving["cert"]).read_bytes())
            (certs / "tls.key").write_bytes(Path(self.serving["key"]).read_bytes())
        tmp.mkdir(parents=True, exist_ok=True)
        args += self.extra_args.get(binary, [])
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), TMPDIR=str(tmp), **pod_env)
        return LiqoProcess(binary, [self.bin_dir / binary, *args], env,
                           self.work_dir / f"{binary}.log", ports)

    def start(self, timeout=90):
        """Webhook first (its configurations are registered once it serves), then the
        controller-manager and the crd-replicator."""
        order = ("webhook", "controller-manager", "crd-replicator")
        for suffix in order:
            binary = COMPONENTS[suffix]
            proc = self.processes[binary] = self._process(suffix, binary).start()
            wait_for(proc.ready, timeout=timeout, interval=0.5, what=f"{binary} ready")
            if binary == "webhook":
                self.register_webhooks()

    def restart(self, binary, args, before_start=None, timeout=90):
        """Stop one component, call before_start() if given, start it again with args (its
        whole argv, binary first) and wait until it is ready; returns its previous args."""
        proc = self.processes[binary]
        old = list(proc.args)
        proc.stop()
        if before_start:
            before_start()
        proc.args = list(args)
        proc.start()
        wait_for(proc.ready, timeout=timeout, interval=0.5, what=f"{binary} ready again")
        return old

    def stop(self):
        """Webhook configurations first (failurePolicy Fail must not outlive the webhook)."""
        for d in self.webhook_configs():
            self.cluster.kubectl("delete", d["kind"].lower(), d["metadata"]["name"],
                                 "--ignore-not-found", check=False)
        statuses = {}
        for binary, proc in reversed(list(self.processes.items())):
            statuses[binary] = proc.stop()
        return statuses

    def uninstall(self, keep_crds=()):
        """Remove the chart's cluster-scoped objects (CRDs but keep_crds with --wait=false),
        one kubectl delete per kind."""
        k = self.cluster.kubectl
        self.release_finalizers(keep_crds)
        for kind in ("ClusterRole", "ClusterRoleBinding"):
            names = [d["metadata"]["name"] for d in self.objects(kind)]
            if names:
                k("delete", kind.lower(), *names, "--ignore-not-found", check=False)
        crds = [d["metadata"]["name"] for d in self._chart_crds(keep_crds)]
        if crds:
            k("delete", "crd", *crds, "--ignore-not-found", "--wait=false", check=False)
        if self.namespace_created:
            k("delete", "namespace", LIQO_NS, "--ignore-not-found", "--wait=true",
              "--timeout=120s", check=False, timeout=150)


# --- the virtual kubelet ----------------------------------------------------------------------
# The consumer's VirtualNode controller writes a Deployment `vk-<node>` in the tenant namespace;
# the bed has no kubelet on the consumer, so that Deployment stays unscheduled and its container
# runs here instead, with the Deployment's own arguments and environment.

# fieldRef env of the Deployment's container -> what the host process stands in for it
_VK_FIELDS = {"status.podIP": "pod_ip", "metadata.name": "pod_name",
              "metadata.namespace": "namespace"}


def virtual_kubelet_env(container, pod_ip, pod_name, namespace):
    """The container's env as the kubelet would resolve it: literal values and the pod's
    fieldRefs (status.podIP, metadata.name, metadata.namespace); anything else is an error,
    so a Deployment that needs more is noticed rather than half-run."""
    facts = {"pod_ip": pod_ip, "pod_name": pod_name, "namespace": namespace}
    env = {}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
            continue
        field = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if field not in _VK_FIELDS:
            raise ValueError(f"virtual-kubelet env {e['name']}: cannot resolve {e}")
        env[e["name"]] = facts[_VK_FIELDS[field]]
    return env


def virtual_kubelet_process(deployment, binary, kubeconfig, log_path, pod_ip="127.0.0.1"):
    """A LiqoProcess for the Deployment's virtual-kubelet container, on the host.

    kubeconfig: the consumer credentials the pod would have had (a token of the Deployment's
    ServiceAccount).  Changed from the pod, and why: the kubelet API port (--listen-port,
    default 10250 on every interface) and the metrics address, when enabled, are free ports
    of this host; everything else is the Deployment's."""
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    namespace = deployment["metadata"]["namespace"]
    env = virtual_kubelet_env(container, pod_ip, f"{deployment['metadata']['name']}-host",
                              namespace)
    args = [expand(a, env) for a in container.get("args", [])]
    ports = {"kubelet": free_port()}
    args = with_flag(args, "listen-port", ports["kubelet"])
    if "--metrics-enabled=true" in args:
        ports["metrics"] = free_port()
        args = with_flag(args, "metrics-address", f"127.0.0.1:{ports['metrics']}")
    full_env = dict(os.environ, KUBECONFIG=str(kubeconfig), **env)
    return LiqoProcess("virtual-kubelet", [binary, *args], full_env, Path(log_path), ports)
