"""Replace mode on two bed clusters (docs/LIQO.md "Replace mode"), shared by the suites that run it:
the provider's Liqo with its chart's `authentication.enabled: false` and tenantgate-signer with
the provider controllers beside it, the consumer's Liqo fully on.

`replace_mode(...)` installs and starts all of it and takes it down again; the suites add what
is theirs around it (a webhook on a node bed, a virtual kubelet, a short certificate lifetime)."""

import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from bed import HostProcess, free_port, wait_for
from liqo_modules import liqo_bin, pinned_versions
from liqo_processes import LIQO_NS, LiqoOnCluster, chart_dir
from tenantgate_services import http_get

NEWEST = pinned_versions()[0]
GROUP = "authentication.liqo.io"
OUR_CRDS = tuple(f"{p}.{GROUP}" for p in ("tenants", "identities", "resourceslices", "renews"))
SIGNER_SA = "tenantgate-signer"
SIGNER_MANIFESTS = ("serviceaccount.yaml", "rbac.yaml", "remote-consumer-clusterrole.yaml")
OWN_SIGNER_RBAC = "own-signer-rbac.yaml"
PROVIDER_CONTROLLERS = "nonce,tenant,approver,signer,remoterenew,remoteresourceslice"


class LiqoWithoutAuthentication(LiqoOnCluster):
    """The provider's Liqo as docs/LIQO.md "Replace mode" installs it."""

    def values(self):
        v = super().values()
        v["authentication"] = {"enabled": False}
        return v


class SignerProcess:
    """tenantgate-signer with the provider controllers, on its ServiceAccount's token."""

    def __init__(self, binary, cluster, cluster_id, work, extra_args=()):
        kc = cluster.serviceaccount_kubeconfig(LIQO_NS, SIGNER_SA, duration="6h")
        self.metrics_port = free_port()
        self.log_path = Path(work) / "signer.log"
        self.process = HostProcess(
            [binary, "--kubeconfig", kc, "--log-level", "debug", "--metrics-listen",
             f"127.0.0.1:{self.metrics_port}", "--cluster-id", cluster_id,
             "--controllers", PROVIDER_CONTROLLERS, "--nonce-rotation", "keep", *extra_args],
            self.log_path)
        self.process.name = "tenantgate-signer"

    def ready(self):
        if not self.process.alive():
            raise RuntimeError(f"signer exited:\n{self.process.log_tail(30)}")
        return http_get(self.metrics_port, "/readyz")[0] == 200


def signer_manifests(source_dir, own_signer=False):
    """The signer's ServiceAccount and RBAC (with own_signer, the opt-in rights to sign)."""
    names = SIGNER_MANIFESTS + ((OWN_SIGNER_RBAC,) if own_signer else ())
    return [Path(source_dir) / "manifests" / "signer" / f for f in names]


def own_signer_args(cluster, lifetime_s):
    """Signer flags for own-signer mode with the bed's CA and a short certificate lifetime."""
    pki = Path(cluster.ca_file).parent
    return ("--signer-name", "tenantgate.io/identity", "--ca-cert", str(pki / "ca.crt"),
            "--ca-key", str(pki / "ca.key"), "--max-cert-lifetime", str(lifetime_s))


def liqo_root():
    try:
        return liqo_bin()
    except RuntimeError as e:
        pytest.fail(str(e))


@contextmanager
def replace_mode(provider, consumer, source_dir, signer_bin, work, prefix, signer_args=(),
                 own_signer=False):
    """Yields (provider's Liqo, consumer's Liqo, signer); ids <prefix>p-<tag> and <prefix>c-<tag>."""
    from conftest import install_crds     # conftest's own module, as pytest loaded it
    root, tag = liqo_root(), uuid.uuid4().hex[:6]
    chart, work = chart_dir(NEWEST), Path(work)
    prov = LiqoWithoutAuthentication(provider, f"{prefix}p-{tag}", NEWEST, root / NEWEST, chart,
                                     work / "provider")
    cons = LiqoOnCluster(consumer, f"{prefix}c-{tag}", NEWEST, root / NEWEST, chart,
                         work / "consumer")
    manifests = signer_manifests(source_dir, own_signer)
    signer = None
    try:
        for side in (prov, cons):
            side.install()
        for f in manifests:
            provider.kubectl("apply", "-f", f)
        for side in (prov, cons):
            side.start()
        signer = SignerProcess(signer_bin, provider, prov.cluster_id, work, extra_args=signer_args)
        wait_for(signer.ready, timeout=60, interval=0.5, what="tenantgate-signer ready")
        yield prov, cons, signer
    finally:
        if signer:
            print(f"signer exit status {signer.process.stop()}")
        for side in (prov, cons):
            print(f"{side.cluster.name}: Liqo exit statuses {side.stop()}")
        for f in reversed(manifests):
            provider.kubectl("delete", "-f", f, "--ignore-not-found", check=False)
        for side in (prov, cons):
            side.uninstall(keep_crds=OUR_CRDS)
            install_crds(side.cluster, source_dir)
