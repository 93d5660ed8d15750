"""The bench's setup and teardown: tools and binaries built, the bed cluster up with the
webhooks pointed at the bench's ports, the servers defined, the consumers stored."""
import json
import os
import re
import resource
import shutil

from .fixtures import FILLER_NS, filler_tenants, make_fixtures
from .names import MUTATE_PATH, VALIDATE_PATH
from .proc import HERE, REPO, free_ports, image_env, log, run
from .server import Server


class Setup:
    """Bench's setup steps (mixed into Bench)."""

    def prepare(self):
        missing = [t for t in ("wrk", "h2load", "taskset", "go", "openssl", "cmake") if not shutil.which(t)]
        if missing:
            raise SystemExit(f"bench/webhook: missing {' '.join(missing)} "
                             "(Debian: apt-get install wrk nghttp2-client util-linux golang openssl cmake)")
        if os.cpu_count() < 2:
            raise SystemExit("bench/webhook: needs 2 cores (webhook on core 1, load on core 0)")
        if os.environ.get("TG_BENCH_NO_BUILD") != "1":
            log(f"building in {self.build}")
            run(["cmake", "--build", self.build, "--target", "tenantgate-webhook", "kubectl-tenantgate",
                 "-j", "2"])
        self.load = os.path.join(self.work, "webhook-load")
        run(["go", "build", "-o", self.load, os.path.join(HERE, "webhook_load.go")], cwd=self.work)
        self.peer_bin = os.path.join(self.work, "peer-go")
        run(["go", "build", "-mod=readonly", "-trimpath", "-o", self.peer_bin, "."], cwd=os.path.join(HERE, "peer-go"))
        # 1,000 client sockets plus the servers' own.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 4096:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))

    def kubectl(self, *args, **kw):
        return run([self.env["KUBECTL"], "--kubeconfig", self.env["KUBECONFIG"], *args], **kw)

    def point_webhooks(self, port):
        for kind, path in (("validatingwebhookconfiguration", VALIDATE_PATH),
                           ("mutatingwebhookconfiguration", MUTATE_PATH)):
            patch = [{"op": "replace", "path": "/webhooks/0/clientConfig/url",
                      "value": f"https://127.0.0.1:{port}{path}"}]
            if kind.startswith("validating"):      # the ResourceSlice webhook, same server
                patch.append({"op": "replace", "path": "/webhooks/1/clientConfig/url",
                              "value": f"https://127.0.0.1:{port}/validate/resourceslices"})
            self.kubectl("patch", kind, "tenantgate", "--type", "json", "-p", json.dumps(patch))

    def start_cluster(self):
        log(f"starting the bed cluster {self.cluster}")
        self.cluster_up = True
        run([os.path.join(REPO, "e2e", "cluster"), "up", self.cluster])
        env = run([os.path.join(REPO, "e2e", "cluster"), "env", self.cluster]).stdout
        self.env = dict(re.findall(r"^(\w+)=(.*)$", env, re.M))
        self.kubectl("apply", "-k", os.path.join(REPO, "manifests", "overlays", "local"))
        self.certs = os.path.join(self.work, "certs")
        run([os.path.join(REPO, "certs", "tenantgate-certs"), "--out", self.certs, "--ip", "127.0.0.1",
             "--apply", "--kubeconfig", self.env["KUBECONFIG"]])
        # The overlay's fixed port may be another bed's: point both webhooks at ours.
        port, mport, pport, pmport, tport, tmport = free_ports(6)
        self.point_webhooks(port)
        crt, key = os.path.join(self.certs, "tls.crt"), os.path.join(self.certs, "tls.key")
        helptext = run([self.webhook_bin, "--help"], check=False).stdout + run([self.webhook_bin, "--help"],
                                                                                check=False).stderr
        h2 = ["--http2"] if "--http2" in helptext.replace("--no-http2", "") else []
        # the connection step opens 1,000 beside the load tools' own
        if "--max-connections" in helptext:
            h2 += ["--max-connections", "2000"]
        # ... all from 127.0.0.1, past the default per-address cap (250)
        if "--max-connections-per-peer" in helptext:
            h2 += ["--max-connections-per-peer", "0"]
        def tenantgate(name, port, mport):
            return Server(name, [self.webhook_bin, "--cert", crt, "--key", key, "--listen", f"127.0.0.1:{port}",
                                 "--metrics-listen", f"127.0.0.1:{mport}", "--kubeconfig", self.env["KUBECONFIG"],
                                 "--threads", "1", "--shutdown-grace", "2", *h2], self.work, port, mport,
                          env=image_env(os.path.join(REPO, "images", "webhook.Containerfile")))
        self.tg = tenantgate("tenantgate", port, mport)
        # the interleaved step's A/A: the same server measured against itself
        self.twin = tenantgate("tenantgate-twin", tport, tmport)
        peer_argv = [self.peer_bin, "-cert", crt, "-key", key, "-listen", f"127.0.0.1:{pport}",
                     "-metrics-listen", f"127.0.0.1:{pmport}", "-cluster", self.files["peer_cluster"]]
        self.peer = Server("go", peer_argv + ["-h2"], self.work, pport, pmport)
        # The burst's floor: the Go peer validating nothing, on the same ports (never both up).
        self.nocheck = Server("go-nocheck", peer_argv + ["-allow-all"], self.work, pport, pmport)

    def make_fixtures(self):
        log(f"making {self.n} consumers (keys, nonces, Tenants)")
        self.files = make_fixtures(self.work, self.cli, self.n, self.burst, self.fillers)

    def create_consumers(self):
        self.kubectl("create", "-f", self.files["namespaces"])
        if self.fillers:
            self.create_fillers()

    def create_fillers(self):
        """The filler Tenants, stored with the webhooks out of the way (nothing serves them
        yet), which are then put back as they were."""
        log(f"storing {self.fillers} filler Tenants in namespace {FILLER_NS}")
        kinds = ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")
        saved = []
        for kind in kinds:
            conf = json.loads(self.kubectl("get", kind, "tenantgate", "-o", "json").stdout)
            for field in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
                conf["metadata"].pop(field, None)
            saved.append(conf)
            self.kubectl("delete", kind, "tenantgate")
        path = os.path.join(self.work, "fillers.json")
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FILLER_NS}},
                *filler_tenants(self.fillers)]}, f)
        self.kubectl("create", "-f", path)
        with open(os.path.join(self.work, "webhooks.json"), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": saved}, f)
        self.kubectl("create", "-f", os.path.join(self.work, "webhooks.json"))

    def teardown(self):
        for srv in (self.tg, self.peer, self.nocheck, self.twin):
            if srv:
                srv.stop()
        if self.cluster_up:
            p = run([os.path.join(REPO, "e2e", "cluster"), "down", self.cluster], check=False)
            if p.returncode != 0:
                log(f"cluster down failed: {p.stderr[-500:]}")
        if os.environ.get("TG_BENCH_KEEP") == "1":
            log(f"work directory kept: {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)
