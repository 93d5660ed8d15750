"""tenantgate's provider: a fresh bed cluster with tenantgate-webhook and tenantgate-signer."""
import json
import os
import re
import signal
import subprocess
import time

from onboard_lib.common import CLUSTER_TOOL, NS, PROVIDER_ID, REPO, BenchError, free_ports, http_get, log, run

CONTROLLERS = "nonce,tenant,approver,signer,remoteresourceslice,remoterenew"


class Service:
    """A host process with its log in the work directory."""

    def __init__(self, name, argv, log_path, metrics_port):
        self.name, self.argv, self.log_path, self.metrics_port = name, argv, log_path, metrics_port
        self.proc = None

    def start(self, timeout=60):
        self.log_file = open(self.log_path, "a")
        self.proc = subprocess.Popen([str(a) for a in self.argv], stdin=subprocess.DEVNULL,
                                     stdout=self.log_file, stderr=self.log_file,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name} exited ({self.proc.returncode}); see {self.log_path}")
            try:
                if http_get(self.metrics_port, "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise BenchError(f"{self.name} was not ready within {timeout} s; see {self.log_path}")

    def metrics(self):
        return http_get(self.metrics_port, "/metrics")[1]

    def stop(self):
        """SIGTERM, SIGKILL after 15 s; returns the exit status (None if never started)."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
        rc, self.proc = self.proc.returncode, None
        return rc


class Provider:
    """One fresh bed cluster with the webhook and the provider's signer."""

    def __init__(self, bench, name):
        self.bench, self.name = bench, name
        self.work = os.path.join(bench.work, name)
        os.makedirs(self.work)
        self.up = False
        self.services = []

    def kubectl(self, *args, **kw):
        return run([self.env["KUBECTL"], "--kubeconfig", self.env["KUBECONFIG"], *args], **kw)

    def sa_kubeconfig(self, sa):
        """A kubeconfig with a fresh token of ServiceAccount liqo/sa (as the e2e fixtures)."""
        token = self.kubectl("create", "token", sa, "-n", NS, "--duration", "2h").stdout.strip()
        path = os.path.join(self.work, f"{sa}.kubeconfig")
        user = f"system:serviceaccount:{NS}:{sa}"
        k = [self.env["KUBECTL"], "--kubeconfig", path, "config"]
        run(k + ["set-cluster", self.name, "--server", self.env["KUBE_APISERVER"],
                 "--certificate-authority", self.env["KUBE_CA_FILE"], "--embed-certs"])
        run(k + ["set-credentials", user, "--token", token])
        run(k + ["set-context", self.name, "--cluster", self.name, "--user", user, "--namespace", NS])
        run(k + ["use-context", self.name])
        os.chmod(path, 0o600)
        return path

    side = "tenantgate"
    label = "signer"          # the provider process, as the tables name it
    depth_metric = "tenantgate_signer_queue_depth"
    reconcile_metric = "tenantgate_signer_reconciles_total"

    def start(self):
        self.start_bed()
        self.install_overlay()
        # the signer's RBAC files, as e2e/test_signer.py applies them
        sdir = os.path.join(REPO, "manifests", "signer")
        for f in ("serviceaccount.yaml", "rbac.yaml", "remote-consumer-clusterrole.yaml", "own-signer-rbac.yaml"):
            self.kubectl("apply", "-f", os.path.join(sdir, f))
        self.start_webhook()
        sg_metrics, = free_ports(1)
        self.signer = Service("tenantgate-signer", [
            self.bench.signer_bin, "--kubeconfig", self.sa_kubeconfig("tenantgate-signer"),
            "--cluster-id", PROVIDER_ID, "--controllers", CONTROLLERS,
            "--metrics-listen", f"127.0.0.1:{sg_metrics}"], os.path.join(self.work, "signer.log"), sg_metrics)
        self.services.append(self.signer)
        self.signer.start()

    def start_bed(self):
        log(f"{self.name}: starting the bed cluster")
        self.up = True
        run([CLUSTER_TOOL, "up", self.name])
        out = run([CLUSTER_TOOL, "env", self.name]).stdout
        self.env = {k: v.strip("'") for k, v in re.findall(r"^(\w+)=(.*)$", out, re.M)}
        with open(os.path.join(self.env["KUBE_STATE_DIR"], "pids")) as f:
            self.control_pids = {line.split()[0]: int(line.split()[1]) for line in f if line.strip()}

    def install_overlay(self):
        """The operator's install: overlay (CRDs, namespace, SAs, RBAC, webhook configs)."""
        self.kubectl("apply", "--server-side", "-k", os.path.join(REPO, "manifests", "overlays", "local"))
        self.kubectl("wait", "--for", "condition=Established", "--timeout", "60s",
                     "crd/tenants.authentication.liqo.io", "crd/resourceslices.authentication.liqo.io",
                     "crd/renews.authentication.liqo.io")

    def start_webhook(self):
        """The serving certificate, the webhook configurations pointed at 127.0.0.1, the webhook."""
        certs = os.path.join(self.work, "certs")
        run([os.path.join(REPO, "certs", "tenantgate-certs"), "--out", certs, "--ip", "127.0.0.1",
             "--apply", "--kubeconfig", self.env["KUBECONFIG"]], env=dict(os.environ, KUBECTL=self.env["KUBECTL"]))
        port, wh_metrics = free_ports(2)
        for kind, path in (("validatingwebhookconfiguration", "/validate/tenants"),
                           ("mutatingwebhookconfiguration", "/mutate/tenants")):
            patch = [{"op": "replace", "path": "/webhooks/0/clientConfig/url",
                      "value": f"https://127.0.0.1:{port}{path}"}]
            if kind.startswith("validating"):      # the ResourceSlice webhook, same server
                patch.append({"op": "replace", "path": "/webhooks/1/clientConfig/url",
                              "value": f"https://127.0.0.1:{port}/validate/resourceslices"})
            self.kubectl("patch", kind, "tenantgate", "--type", "json", "-p", json.dumps(patch))
        self.webhook = Service("tenantgate-webhook", [
            self.bench.webhook_bin, "--kubeconfig", self.sa_kubeconfig("tenantgate-webhook"),
            "--cert", os.path.join(certs, "tls.crt"), "--key", os.path.join(certs, "tls.key"),
            "--listen", f"127.0.0.1:{port}", "--metrics-listen", f"127.0.0.1:{wh_metrics}",
            "--threads", "2", "--shutdown-grace", "3"], os.path.join(self.work, "webhook.log"), wh_metrics)
        self.services.append(self.webhook)
        self.webhook.start()

    def stop(self):
        problems = []
        for svc in reversed(self.services):
            rc = svc.stop()
            if rc not in (0, None):
                problems.append(f"{svc.name} exited {rc} (see {svc.log_path})")
        self.services = []
        if self.up:
            self.up = False
            p = run([CLUSTER_TOOL, "down", self.name], check=False)
            if p.returncode != 0:
                problems.append(f"e2e/cluster down {self.name}: {p.stderr[-300:]}")
        return problems
