"""Liqo's provider for the side-by-side run (TG_BENCH_PEER=liqo, issue 39).

A fresh bed like tenantgate's, with tenantgate-webhook registered as there, but Liqo v1.2.0's
own liqo-controller-manager in the signer's place: Liqo's CRDs, RBAC, ServiceAccounts and
clusterid ConfigMap from its rendered chart, the binary from e2e/liqo-bin, both through
e2e/liqo_processes.py (the guard suite's code, imported as it is).  Only the authentication
module runs (--networking-enabled=false --offloading-enabled=false); Liqo's own webhook and
crd-replicator are not started, so tenantgate-webhook is the one admission check both sides
share.  The controller-manager reads KUBECONFIG, a token of the chart's own ServiceAccount.

What Liqo does with the same burst (read from its v1.2.0 source): its nonce creator fills the
empty labelled liqo-nonce Secret of each tenant namespace (the consumers then sign that
nonce); its tenant controller verifies the signature and the CSR, makes its own CSR (label
liqo.io/remote-tenant-csr), approves it, waits for the certificate, and writes the Tenant's
status (tenantNamespace, authParams.signedCRT) - the same "filled" as tenantgate's; its
remote-resourceslice controller does the same for slices and sets Authentication and
Resources Accepted.
"""
import os
import sys

from onboard_lib.common import PROVIDER_ID, REPO, BenchError, http_get, log
from onboard_lib.provider import Provider

sys.path.insert(0, os.path.join(REPO, "e2e"))
from bed import Cluster, wait_for  # noqa: E402
from liqo_modules import liqo_bin, pinned_versions  # noqa: E402
from liqo_processes import LiqoOnCluster, chart_dir, with_flag  # noqa: E402


MANAGER = ("controller-manager", "liqo-controller-manager")     # Deployment suffix, binary
# The authentication module alone: Liqo has no switch finer than a module.
MODULE_FLAGS = {"networking-enabled": "false", "offloading-enabled": "false",
                "authentication-enabled": "true"}


class LiqoManager:
    """liqo-controller-manager seen as bench/onboard sees the signer: proc, metrics(), stop()."""

    def __init__(self, liqo_process):
        self.lp = liqo_process
        self.name = "liqo-controller-manager"
        self.proc = liqo_process.process.proc
        self.log_path = liqo_process.log_path

    def metrics(self):
        return http_get(self.lp.ports["metrics"], "/metrics")[1]

    def stop(self):
        return self.lp.stop()


class LiqoProvider(Provider):
    """One fresh bed: tenantgate-webhook + Liqo's liqo-controller-manager (no signer)."""

    side = "liqo"
    label = "liqo-cm"
    depth_metric = "workqueue_depth"                         # controller-runtime's, all controllers
    reconcile_metric = "controller_runtime_reconcile_total"

    def start(self):
        self.start_bed()
        self.install_overlay()       # the webhook's ServiceAccount, RBAC and configurations
        try:
            root = liqo_bin()
        except RuntimeError as e:
            raise BenchError(str(e)) from e
        version = pinned_versions()[0]
        self.liqo = LiqoOnCluster(Cluster(self.name), PROVIDER_ID, version, root / version,
                                  chart_dir(version), os.path.join(self.work, "liqo"))
        log(f"{self.name}: Liqo {version}'s chart (CRDs over ours, RBAC, clusterid ConfigMap)")
        self.liqo.install()
        self.start_webhook()
        proc = self._manager_process().start()
        self.signer = LiqoManager(proc)
        self.services.append(self.signer)       # stopped with the bed, even if never ready
        try:
            wait_for(proc.ready, timeout=120, interval=0.5, what="liqo-controller-manager ready")
        except (TimeoutError, RuntimeError) as e:
            raise BenchError(f"{e}; see {proc.log_path}") from e

    def _manager_process(self):
        """The chart's controller-manager container as a host process, authentication only."""
        proc = self.liqo._process(*MANAGER)
        args = proc.args[1:]
        for flag, value in MODULE_FLAGS.items():
            args = with_flag(args, flag, value)
        proc.args = [proc.args[0], *args]
        return proc
