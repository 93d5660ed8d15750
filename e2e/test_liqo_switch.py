"""Switching a running provider between guard and replace mode, and back (issue 38, docs/LIQO.md
"Switching modes").

Both bed clusters run Liqo's own components from the pinned module, tenantgate-webhook is
registered on the provider.  The provider starts in guard mode (Liqo fully on) and a consumer
peers and gets a slice.  Then the provider switches to replace mode as an operator would:
Liqo's processes stop (a `helm upgrade` restarts them), come back with
`authentication.enabled: false`, and tenantgate-signer starts with the provider controllers.
Then back to guard: the signer stops and Liqo's authentication module comes back.

What an operator relies on, asserted after each switch: the consumer's kubeconfigs made before
it still authenticate on the provider (no peering dropped), the existing slice stays Accepted
with the certificate it had, and a new slice made after it is Accepted by whichever side now
authenticates.  At the end `liqoctl unauthenticate` leaves nothing of the peering on the
provider, also nothing that the other mode made.
"""

import subprocess
import time
import uuid

import pytest

from bed import wait_for
from liqo_processes import LiqoOnCluster, chart_dir
from liqo_replace_mode import (GROUP, NEWEST, OUR_CRDS, LiqoWithoutAuthentication, SignerProcess,
                               liqo_root, signer_manifests)
from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_liqo import Liqo
from test_liqo_replace import _client_cert_serial, _kubeconfig_secret, _peering_left, _whoami

pytestmark = pytest.mark.usefixtures("webhook")

SLICES = ("before", "inreplace", "back")      # one slice made in each phase


class Provider:
    """The provider's Liqo in one mode or the other, as `helm upgrade` would switch it."""

    def __init__(self, cluster, cluster_id, root, work, signer_bin):
        self.cluster, self.cluster_id = cluster, cluster_id
        self.root, self.work, self.signer_bin = root, work, signer_bin
        self.liqo, self.signer, self.generation = None, None, 0

    def run(self, mode):
        self.stop()
        self.generation += 1
        kind = LiqoOnCluster if mode == "guard" else LiqoWithoutAuthentication
        self.liqo = kind(self.cluster, self.cluster_id, NEWEST, self.root / NEWEST,
                         chart_dir(NEWEST), self.work / f"provider-{self.generation}-{mode}")
        self.liqo.install()
        self.liqo.start()
        if mode == "replace":
            log_dir = self.work / f"signer-{self.generation}"
            log_dir.mkdir()
            self.signer = SignerProcess(self.signer_bin, self.cluster, self.cluster_id, log_dir)
            wait_for(self.signer.ready, timeout=60, interval=0.5, what="tenantgate-signer ready")

    def stop(self):
        if self.signer:
            print(f"signer exit status {self.signer.process.stop()}")
            self.signer = None
        if self.liqo:
            print(f"provider: Liqo exit statuses {self.liqo.stop()}")

    def logs(self, lines=20):
        out = [f"--- provider {n}:\n{p.process.log_tail(lines)}"
               for n, p in (self.liqo.processes.items() if self.liqo else [])]
        if self.signer:
            out.append(f"--- tenantgate-signer:\n{self.signer.process.log_tail(lines)}")
        return "\n".join(out)


@pytest.fixture(scope="module")
def switch(provider, consumer, crds, webhook, source_dir, signer_bin, tmp_path_factory):
    """yields (Liqo handle, Provider, consumer's Liqo, record of what each phase saw)."""
    from conftest import install_crds
    root, tag = liqo_root(), uuid.uuid4().hex[:6]
    work = tmp_path_factory.mktemp("liqo-switch")
    prov = Provider(provider, f"sp-{tag}", root, work, signer_bin)
    cons = LiqoOnCluster(consumer, f"sc-{tag}", NEWEST, root / NEWEST, chart_dir(NEWEST),
                         work / "consumer")
    try:
        for f in signer_manifests(source_dir):
            provider.kubectl("apply", "-f", f)
        cons.install()
        prov.run("guard")
        cons.start()
        yield Liqo(root, NEWEST), prov, cons, {"work": work}
    finally:
        prov.stop()
        print(f"consumer: Liqo exit statuses {cons.stop()}")
        for f in reversed(signer_manifests(source_dir)):
            provider.kubectl("delete", "-f", f, "--ignore-not-found", check=False)
        for side in ([prov.liqo] if prov.liqo else []) + [cons]:
            side.uninstall(keep_crds=OUR_CRDS)
            install_crds(side.cluster, source_dir)


def _slice_state(cons, pid, name):
    """(Accepted?, serial of the certificate in its kubeconfig Secret or None)."""
    ns = f"liqo-tenant-{pid}"
    if not cons.cluster.exists(f"resourceslices.{GROUP}", name, "-n", ns):
        return False, None
    rs = cons.cluster.get_json(f"resourceslices.{GROUP}", name, "-n", ns)
    conds = (rs.get("status") or {}).get("conditions") or []
    accepted = any(c.get("type") == "Authentication" and c.get("status") == "Accepted"
                   for c in conds)
    kc = _kubeconfig_secret(cons, pid, f"resourceslice-{name}")
    return accepted, (_client_cert_serial(kc) if kc else None)


def _create_slice(liqo, cons, pid, name):
    rc, out, err = liqo.ctl("create", "resourceslice", name, "--remote-cluster-id", pid,
                            "--cpu", "1", "--memory", "1Gi", "--pods", "5",
                            "--kubeconfig", cons.cluster.kubeconfig)
    assert rc == 0, out + err
    wait_for(lambda: all(_slice_state(cons, pid, name)), timeout=120, interval=0.5,
             what=f"slice {name} Accepted with a kubeconfig")


def _access(prov, cons, work, names):
    """The provider's username of each consumer kubeconfig (controlplane and the slices')."""
    pid = prov.cluster_id
    users = {}
    for ident in [f"controlplane-{pid}"] + [f"resourceslice-{n}" for n in names]:
        kc = _kubeconfig_secret(cons, pid, ident)
        assert kc, f"no kubeconfig Secret for {ident}"
        users[ident] = _whoami(prov.cluster, kc, work / f"{ident}.kubeconfig")["username"]
    return users


@pytest.fixture(scope="module")
def phases(switch):
    """Runs the whole switch once: guard -> replace -> guard; what each phase saw."""
    liqo, prov, cons, seen = switch
    pid, work = prov.cluster_id, seen["work"]
    both = ("--kubeconfig", cons.cluster.kubeconfig,
            "--remote-kubeconfig", prov.cluster.kubeconfig, "--timeout", "120s")
    try:
        rc, out, err = liqo.ctl("authenticate", *both)
        assert rc == 0, out + err
        _create_slice(liqo, cons, pid, SLICES[0])
        seen["guard"] = {"users": _access(prov, cons, work, SLICES[:1]),
                         "slice": _slice_state(cons, pid, SLICES[0])}

        t0 = time.monotonic()
        prov.run("replace")
        seen["switch to replace s"] = time.monotonic() - t0
        time.sleep(5)         # the signer's first reconciles of what Liqo made
        seen["replace, old"] = {"users": _access(prov, cons, work, SLICES[:1]),
                                "slice": _slice_state(cons, pid, SLICES[0])}
        _create_slice(liqo, cons, pid, SLICES[1])
        seen["replace"] = {"users": _access(prov, cons, work, SLICES[:2]),
                           "slice": _slice_state(cons, pid, SLICES[1])}

        t0 = time.monotonic()
        prov.run("guard")
        seen["switch to guard s"] = time.monotonic() - t0
        time.sleep(5)
        seen["guard again, old"] = {"users": _access(prov, cons, work, SLICES[:2]),
                                    "slices": [_slice_state(cons, pid, n) for n in SLICES[:2]]}
        _create_slice(liqo, cons, pid, SLICES[2])
        seen["guard again"] = {"users": _access(prov, cons, work, SLICES),
                               "slice": _slice_state(cons, pid, SLICES[2])}

        # one kubectl for the three: their finalizers go at once, not one after the other
        cons.cluster.kubectl("delete", f"resourceslices.{GROUP}", *SLICES, "-n",
                             f"liqo-tenant-{pid}", "--timeout=120s", timeout=150)
        rc, out, err = liqo.ctl("unauthenticate", *both)
        assert rc == 0, out + err
        users = [f"{n}-" for n in SLICES]
        # what the test asserts gone: Liqo's own leftovers stay (_left_by_us), and waiting
        # for them too always ran out the whole timeout
        gone = lambda: (not _left_by_us(_peering_left(prov, cons.cluster_id, users[0]))  # noqa: E731
                        and not _bindings_of(prov.cluster, cons.cluster_id))
        try:
            wait_for(gone, timeout=60, interval=1, what="the peering gone from the provider")
        except Exception:
            pass
        seen["left"] = _left_by_us(_peering_left(prov, cons.cluster_id, users[0]))
        seen["left bindings"] = _bindings_of(prov.cluster, cons.cluster_id)
    except (AssertionError, subprocess.TimeoutExpired, RuntimeError) as e:
        seen["error"] = f"{type(e).__name__}: {e}\n{prov.logs()}"
    return seen


def _left_by_us(left):
    """What is left but Liqo's own leftovers: its provider keeps each certificate it issued in a
    Secret liqo-remote-certificate[-<slice>] of the tenant namespace after the peering, in guard
    mode alone too (its identity manager), and they hold no credential of the consumer."""
    secrets = [n for n in left.get("secrets", []) if not n.startswith("liqo-remote-certificate")]
    out = dict(left, secrets=secrets)
    return {k: v for k, v in out.items() if v}


def _bindings_of(cluster, cid):
    """ClusterRoleBindings whose subject is the consumer or one of its slice users."""
    return sorted(
        b["metadata"]["name"] for b in cluster.get_json("clusterrolebindings")["items"]
        if any(s.get("name") == cid or s.get("name", "").startswith(tuple(f"{n}-" for n in SLICES))
               for s in b.get("subjects") or []))


def _no_error(phases):
    assert "error" not in phases, phases["error"]


def test_switch_to_replace_keeps_the_peering(phases, switch):
    _no_error(phases)
    assert phases["replace, old"]["users"] == phases["guard"]["users"], phases
    accepted, serial = phases["replace, old"]["slice"]
    assert accepted and serial == phases["guard"]["slice"][1], phases


def test_in_replace_mode_tenantgate_accepts_new_slices(phases, switch):
    _no_error(phases)
    assert phases["replace"]["slice"][0], phases
    _, prov, _, _ = switch
    assert phases["switch to replace s"] < 120, phases


def test_switch_back_to_guard_keeps_both_slices(phases):
    _no_error(phases)
    old = phases["guard again, old"]
    assert old["users"] == phases["replace"]["users"], phases
    assert [s[0] for s in old["slices"]] == [True, True], phases
    assert old["slices"][0][1] == phases["guard"]["slice"][1], phases
    assert old["slices"][1][1] == phases["replace"]["slice"][1], phases
    assert phases["guard again"]["slice"][0], phases


def test_unauthenticate_after_switches_leaves_nothing(phases):
    _no_error(phases)
    assert not phases["left"], phases["left"]
    assert not phases["left bindings"], phases["left bindings"]


def test_mode_overlays_apply_on_a_liqo_provider(switch, source_dir):
    """docs/LIQO.md's overlays, against the provider holding Liqo's chart: the API server takes
    both (server-side dry run), and replace mode's signer runs the controllers this suite runs."""
    import yaml
    from liqo_replace_mode import PROVIDER_CONTROLLERS
    _, prov, _, _ = switch
    for mode in ("liqo-guard", "liqo-replace"):
        overlay = source_dir / "manifests" / "overlays" / mode
        p = prov.cluster.kubectl("apply", "--dry-run=server", "-k", overlay, check=False)
        assert p.returncode == 0, f"{mode}: {p.stdout}{p.stderr}"
    docs = list(yaml.safe_load_all(prov.cluster.kubectl(
        "kustomize", source_dir / "manifests" / "overlays" / "liqo-replace").stdout))
    signer = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "tenantgate-signer"]
    args = signer[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--controllers={PROVIDER_CONTROLLERS}" in args and "--nonce-rotation=keep" in args, args
    guard = prov.cluster.kubectl("kustomize", source_dir / "manifests" / "overlays" / "liqo-guard").stdout
    assert "tenantgate-signer" not in guard and "CustomResourceDefinition" not in guard
