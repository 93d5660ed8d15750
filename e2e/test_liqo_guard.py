"""Guard mode: Liqo fully on, tenantgate-webhook beside it (issue 38, part 1).

Both bed clusters run Liqo's own components, built from the pinned module (e2e/liqo-bin) and
installed from Liqo's own chart (e2e/liqo_processes.py): liqo-controller-manager (networking
off: no pod network here), crd-replicator and Liqo's webhook with its validating and mutating
webhooks registered.  On the provider tenantgate-webhook is registered beside them (the
session's `webhook` fixture), so a forged Tenant or ResourceSlice is refused at admission,
before Liqo's controllers, which approve CSRs without a second look, ever see it.

The flow (module fixture `flow`, each step timed): `liqoctl authenticate`, `liqoctl create
resourceslice`, `liqoctl cordon/uncordon resourceslice`, delete the slice, `liqoctl
unauthenticate`, authenticate again.  Every request in it comes from Liqo (liqoctl and Liqo's
components); tenantgate's denials in that window are read from its metrics
(tenantgate_webhook_requests_total by path, verdict, reason) and log.  The metrics carry no
user label, so the window is what attributes them: the forgeries run after it, and the
control test puts tenantgate's configuration back as it was.

Break 3 is fixed: the crd-replicator's first copy of a new slice (spec.consumerClusterID and
spec.csr not filled yet) is admitted when the consumer's ControlPlane user writes it
(PROTOCOL.md 5a, "A first copy"); its own test says so.  Break 1
(re-authenticating fails with "nonce secret already exists with a different nonce") does not
occur here: Liqo's own controllers make the nonces in guard mode; it belongs to the replace
mode, where tenantgate's signer does.
"""

import base64
import hashlib
import json
import os
import re
import subprocess
import time
import uuid

import pytest
import yaml

from liqo_modules import liqo_bin, pinned_versions
from liqo_commands import peering_user_flow
from liqo_repeer import ROUNDS, peer_unpeer_rounds
from liqo_processes import LiqoOnCluster, chart_dir, listeners
from tenantgate_services import denial, webhook, webhook_install  # noqa: F401
from test_liqo import Liqo, tamper
from bed import openssl, wait_for

pytestmark = pytest.mark.usefixtures("webhook")

NEWEST = pinned_versions()[0]
GROUP = "authentication.liqo.io"
OUR_CRDS = tuple(f"{p}.{GROUP}" for p in ("tenants", "identities", "resourceslices", "renews"))
SLICE = "mypool"
PATH_TENANTS, PATH_SLICES = "/validate/tenants", "/validate/resourceslices"
REPLICATOR_FIRST_COPY = (PATH_SLICES, "MalformedResourceSlice")


# --- Liqo on both clusters ------------------------------------------------------------------

@pytest.fixture(scope="module")
def guard(provider, consumer, crds, webhook, source_dir, tmp_path_factory):
    """Liqo running on both clusters; yields (Liqo handle, provider's, consumer's)."""
    from conftest import install_crds     # conftest's own module, as pytest loaded it
    try:
        root = liqo_bin()
    except RuntimeError as e:
        pytest.fail(str(e))
    tag = uuid.uuid4().hex[:6]
    chart = chart_dir(NEWEST)
    work = tmp_path_factory.mktemp("liqo-guard")
    sides = [LiqoOnCluster(provider, f"gp-{tag}", NEWEST, root / NEWEST, chart, work / "provider"),
             LiqoOnCluster(consumer, f"gc-{tag}", NEWEST, root / NEWEST, chart, work / "consumer")]
    try:
        for side in sides:
            side.install()
            side.start()
        yield Liqo(root, NEWEST), sides[0], sides[1]
    finally:
        for side in sides:
            statuses = side.stop()
            print(f"{side.cluster.name}: Liqo exit statuses {statuses}")
            side.uninstall(keep_crds=OUR_CRDS)
            install_crds(side.cluster, source_dir)     # the bed's CRDs back, as conftest made them


def live_webhook_paths(cluster, kind):
    """{webhook name: URL path} of the live configurations of kind."""
    out = {}
    for cfg in cluster.get_json(kind)["items"]:
        for h in cfg["webhooks"]:
            url = h["clientConfig"].get("url") or ""
            out.setdefault(h["name"], set()).add(url.split("127.0.0.1", 1)[-1].split("/", 1)[-1])
    return out


def test_liqos_components_run_with_their_webhooks(guard):
    _, prov, cons = guard
    for side in (prov, cons):
        for name, proc in side.processes.items():
            assert proc.ready(), f"{side.cluster.name}: {name} not ready"
        paths = {p for ps in live_webhook_paths(side.cluster, "validatingwebhookconfigurations")
                 .values() for p in ps}
        assert {"validate/tenants", "validate/resourceslices"} <= paths, paths
        paths = {p for ps in live_webhook_paths(side.cluster, "mutatingwebhookconfigurations")
                 .values() for p in ps}
        assert {"mutate/tenants", "mutate/virtualnodes"} <= paths, paths
    # every listener on loopback, but the webhook servers Liqo gives no address flag
    for side in (prov, cons):
        for name, proc in side.processes.items():
            wanted = {proc.ports[k] for k in ("metrics", "probe") if k in proc.ports}
            # a component may open its metrics listener a moment after it is ready (seen: the
            # crd-replicator under load)
            try:
                wait_for(lambda: wanted <= {port for ip, port in listeners(proc.process.pid)
                                            if ip == "127.0.0.1"},
                         timeout=30, interval=0.5, what=f"{name}'s listeners")
            except TimeoutError:
                pass                    # the assertion below says what is missing
            ports = listeners(proc.process.pid)
            wide = {(ip, port) for ip, port in ports if ip != "127.0.0.1"}
            assert {port for _, port in wide} <= {proc.ports.get("webhook")}, (name, ports)
            assert {proc.ports[k] for k in ("metrics", "probe") if k in proc.ports} <= \
                {port for ip, port in ports if ip == "127.0.0.1"}, (name, ports, proc.ports)
            print(f"{side.cluster.name} {name} listens on {sorted(ports)}")
    # tenantgate's sit beside Liqo's on the provider
    hooks = live_webhook_paths(prov.cluster, "validatingwebhookconfigurations")
    assert "tenants.validate.tenantgate.io" in hooks and "tenant.validate.liqo.io" in hooks
    assert "resourceslices.validate.tenantgate.io" in hooks and \
        "resourceslice.validate.liqo.io" in hooks


# --- the flow ---------------------------------------------------------------------------------

def denied_counts(hook):
    """{(path, reason): count} of tenantgate's denials so far."""
    out = {}
    for (name, labels), value in hook.metrics().items():
        lab = dict(labels)
        if name == "tenantgate_webhook_requests_total" and lab.get("verdict") == "denied":
            out[(lab["path"], lab["reason"])] = value
    return out


def allowed_count(hook, path):
    return sum(v for (name, labels), v in hook.metrics().items()
               if name == "tenantgate_webhook_requests_total"
               and dict(labels).get("verdict") == "allowed" and dict(labels).get("path") == path)


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0) > 0}


class Flow:
    """What happened in the guard flow: per step (rc, output, seconds), tenantgate's denials
    of the flow's requests, and the admissions it made."""

    def __init__(self, sides=()):
        self.sides = sides
        self.steps = {}
        self.denials = {}          # (path, reason) -> count, between authenticate and the end
        self.denial_lines = []     # tenantgate's log lines of those denials
        self.allowed = {}          # path -> count

    def liqo_logs(self, lines=15):
        return "\n".join(f"--- {side.cluster.name} {name}:\n{proc.process.log_tail(lines)}"
                         for side in self.sides for name, proc in side.processes.items())

    def ok(self, step):
        rc, out, _ = self.steps.get(step, (None, "(not run)", 0))
        return rc == 0, out


def _run(flow, step, fn):
    t0 = time.monotonic()
    try:
        rc, out, err = fn()
    except subprocess.TimeoutExpired as e:     # a hung step fails that step, not the module
        rc, out, err = -1, str(e.stdout or ""), f"timed out after {e.timeout}s"
    flow.steps[step] = (rc, out + err, time.monotonic() - t0)
    print(f"{step}: rc {rc} in {flow.steps[step][2]:.1f}s\n{out}{err}")
    return rc == 0


def _slice_accepted(cons, pid):
    rs = cons.cluster.get_json(f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}")
    conds = (rs.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Authentication" and c.get("status") == "Accepted" for c in conds)


@pytest.fixture(scope="module")
def flow(guard, webhook):
    liqo, prov, cons = guard
    cid, pid = cons.cluster_id, prov.cluster_id
    both = ("--kubeconfig", cons.cluster.kubeconfig,
            "--remote-kubeconfig", prov.cluster.kubeconfig, "--timeout", "120s")
    f = Flow((prov, cons))
    before = denied_counts(webhook)
    allowed_before = {p: allowed_count(webhook, p) for p in (PATH_TENANTS, PATH_SLICES)}
    log_start = webhook.process.log_path.stat().st_size
    steps = [
        ("authenticate", lambda: liqo.ctl("authenticate", *both)),
        ("create resourceslice", lambda: liqo.ctl(
            "create", "resourceslice", SLICE, "--remote-cluster-id", pid, "--cpu", "2",
            "--memory", "4Gi", "--pods", "10", "--kubeconfig", cons.cluster.kubeconfig)),
        ("slice accepted", lambda: _wait_step(lambda: _slice_accepted(cons, pid), 60)),
        ("cordon resourceslice", lambda: liqo.ctl(
            "cordon", "resourceslice", SLICE, "--remote-cluster-id", cid, "--skip-confirm",
            "--kubeconfig", prov.cluster.kubeconfig)),
        ("uncordon resourceslice", lambda: liqo.ctl(
            "uncordon", "resourceslice", SLICE, "--remote-cluster-id", cid, "--skip-confirm",
            "--kubeconfig", prov.cluster.kubeconfig)),
        ("delete resourceslice", lambda: _kubectl_step(
            cons.cluster, "delete", f"resourceslices.{GROUP}", SLICE, "-n",
            f"liqo-tenant-{pid}", "--timeout=120s")),
        ("unauthenticate", lambda: liqo.ctl("unauthenticate", *both)),
        ("authenticate again", lambda: liqo.ctl("authenticate", *both)),
    ]
    for step, fn in steps:
        if not _run(f, step, fn) and step != "authenticate again":
            break
    time.sleep(2)       # the replicator's and controllers' last writes of the flow
    f.denials = delta(denied_counts(webhook), before)
    f.allowed = {p: allowed_count(webhook, p) - allowed_before[p] for p in allowed_before}
    with open(webhook.process.log_path, "rb") as log:
        log.seek(log_start)
        f.denial_lines = [ln for ln in log.read().decode(errors="replace").splitlines()
                          if "denied" in ln]
    yield f
    # whatever the flow left: the peering on both sides
    liqo.ctl("unauthenticate", *both)


def _wait_step(predicate, timeout):
    try:
        wait_for(predicate, timeout=timeout, interval=0.5, what="step")
        return 0, "", ""
    except Exception as e:      # reported as the step's output
        return 1, "", str(e)


def _kubectl_step(cluster, *args):
    p = cluster.kubectl(*args, check=False, timeout=150)
    return p.returncode, p.stdout, p.stderr


def _step_passes(flow, step):
    ok, out = flow.ok(step)
    assert ok, f"{step} failed:\n{out}\n{flow.liqo_logs()}"


def test_liqoctl_authenticate(flow, guard):
    _step_passes(flow, "authenticate")
    _, prov, cons = guard
    cid, pid = cons.cluster_id, prov.cluster_id
    ident = cons.cluster.get_json(f"identities.{GROUP}", "-n", f"liqo-tenant-{pid}")["items"]
    assert any(i["spec"]["type"] == "ControlPlane" for i in ident), ident


def test_liqoctl_create_resourceslice_is_accepted(flow):
    _step_passes(flow, "create resourceslice")
    _step_passes(flow, "slice accepted")


def test_liqoctl_cordon_and_uncordon(flow):
    _step_passes(flow, "cordon resourceslice")
    _step_passes(flow, "uncordon resourceslice")


def test_delete_slice_and_unauthenticate(flow):
    _step_passes(flow, "delete resourceslice")
    _step_passes(flow, "unauthenticate")


def test_tenantgate_reviewed_liqos_tenant_and_slice(flow):
    """The webhook was in the path: it admitted the flow's Tenant and slice writes."""
    _step_passes(flow, "slice accepted")
    assert flow.allowed[PATH_TENANTS] >= 1, flow.allowed
    assert flow.allowed[PATH_SLICES] >= 1, flow.allowed


def test_no_denial_of_liqos_own_requests(flow):
    """Every request of the flow is Liqo's (liqoctl, controllers, replicator): none refused."""
    assert not flow.denials, f"tenantgate denied Liqo's requests: {flow.denials}\n" + \
        "\n".join(flow.denial_lines)


def test_replicators_first_copy_of_a_slice_is_admitted(flow):
    """Break 3: the replicator's copy without consumer fields is admitted on its first try."""
    _step_passes(flow, "slice accepted")
    assert REPLICATOR_FIRST_COPY not in flow.denials, \
        f"{flow.denials}\n" + "\n".join(flow.denial_lines)


def test_authenticate_again_after_unauthenticate(flow):
    """Liqo's nonce handling alone (no tenantgate signer): re-peering works in guard mode.
    Break 1 ("nonce secret already exists with a different nonce") is the replace mode's."""
    _step_passes(flow, "unauthenticate")
    _step_passes(flow, "authenticate again")


# --- forged Tenants and slices ----------------------------------------------------------------

def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


class ForgedConsumer:
    """A consumer made with Liqo's own code against the guarded provider: Liqo's nonce
    (`liqoctl create nonce`, Liqo's nonce controller), Liqo's GenerateTenant (liqocheck) with
    our keys, and the valid Tenant created for real, so Liqo's tenant controller takes it."""

    def __init__(self, liqo, prov, tmp_path):
        self.liqo, self.prov, self.cluster = liqo, prov, prov.cluster
        self.id = f"forge-{uuid.uuid4().hex[:6]}"
        self.ns = f"liqo-tenant-{self.id}"
        self.key, self.key2 = tmp_path / "key1.pem", tmp_path / "key2.pem"
        for k in (self.key, self.key2):
            openssl("genpkey", "-algorithm", "ed25519", "-out", str(k))
        rc, out, err = liqo.ctl("create", "nonce", "--remote-cluster-id", self.id,
                                "--kubeconfig", self.cluster.kubeconfig)
        assert rc == 0, out + err
        rc, out, err = liqo.ctl("get", "nonce", "--remote-cluster-id", self.id,
                                "--kubeconfig", self.cluster.kubeconfig)
        assert rc == 0, out + err
        self.nonce = out.strip()

    def tenant(self, key=None, cluster_id=None, nonce=None):
        t, err = self.liqo.consumer(key or self.key, cluster_id or self.id, self.prov.cluster_id,
                                    nonce or self.nonce)
        assert t is not None, err
        t["metadata"]["namespace"] = self.ns
        return t

    def csr(self, slice_name, subject=None, key=None):
        h = hashlib.sha256(self.id.encode()).hexdigest()[:12]
        subj = subject or f"/O={self.id}/CN={slice_name}-{h}"
        return openssl("req", "-new", "-key", str(key or self.key), "-subj", subj)

    def slice(self, name, csr=None, origin=None):
        """The copy Liqo's replicator writes into the provider's tenant namespace."""
        origin = origin or self.id
        return {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
                "metadata": {"name": name, "namespace": self.ns,
                             "labels": {"liqo.io/replication": "false",
                                        "liqo.io/replicated": "true",
                                        "liqo.io/originID": origin,
                                        "liqo.io/remote-cluster-id": self.id,
                                        "liqo.io/remoteID": self.prov.cluster_id}},
                "spec": {"class": "default", "consumerClusterID": self.id,
                         "providerClusterID": self.prov.cluster_id,
                         "csr": b64(csr if csr is not None else self.csr(name))}}

    def cleanup(self):
        for kind in (f"resourceslices.{GROUP}", f"tenants.{GROUP}"):
            self.cluster.kubectl("delete", kind, "--all", "-n", self.ns, "--wait=true",
                                 "--timeout=60s", check=False, timeout=90)
        self.cluster.kubectl("delete", "namespace", self.ns, "--wait=false", check=False)


@pytest.fixture
def forger(guard, flow, tmp_path):
    """After the flow, so its denial counts hold Liqo's requests only."""
    liqo, prov, _ = guard
    f = ForgedConsumer(liqo, prov, tmp_path)
    yield f
    f.cleanup()


def verdict(cluster, obj, slices=False, dry_run=True):
    """(admitted, tenantgate's reason, kubectl's stderr) of a create through the API server."""
    extra = ("--dry-run=server",) if dry_run else ()
    p = cluster.kubectl("create", "-o", "name", "-f", "-", *extra, input=obj, check=False)
    return p.returncode == 0, denial(p.stderr, slices=slices)[0], p.stderr


# Tampering of test_liqo.py's tamper() -> tenantgate's reason (docs/PROTOCOL.md, Tenants).
FORGED_TENANTS = {
    "signature-byte-flipped": "SignatureVerificationFailed",
    "signature-over-other-nonce": "SignatureVerificationFailed",
    "signature-by-other-key": "SignatureVerificationFailed",
    "public-key-of-other-key": "SignatureVerificationFailed",
    "csr-of-other-key": "CSRPublicKeyMismatch",
    "csr-for-other-cluster": "CSRSubjectMismatch",
    "signature-missing": "MalformedTenant",
    "csr-signature-corrupted": "InvalidCSR",
}


def test_forged_tenants_refused_at_admission(forger):
    valid = forger.tenant()
    cases = tamper(valid, forger.tenant(nonce=b64(uuid.uuid4().bytes * 4)),
                   forger.tenant(key=forger.key2), forger.tenant(cluster_id=f"x{forger.id}"))
    admitted, reason, err = verdict(forger.cluster, cases.pop("valid"))
    assert admitted, f"the untampered Tenant is refused ({reason}): {err}"
    assert set(cases) == set(FORGED_TENANTS), "tamper() has cases this table lacks"
    wrong = {}
    for case, tenant in cases.items():
        admitted, reason, err = verdict(forger.cluster, tenant)
        if admitted or reason != FORGED_TENANTS[case]:
            wrong[case] = f"want {FORGED_TENANTS[case]}, got " + \
                ("admitted" if admitted else f"{reason}: {err.strip()}")
    assert not wrong, json.dumps(wrong, indent=1)


def test_forged_tenant_never_reaches_liqos_controllers(forger, guard):
    """A real create (no dry run): refused, not stored, and Liqo makes no CSR for it."""
    _, prov, _ = guard
    forged = forger.tenant(key=forger.key2)
    forged["spec"]["signature"] = forger.tenant()["spec"]["signature"]
    admitted, reason, err = verdict(forger.cluster, forged, dry_run=False)
    assert not admitted and reason == "SignatureVerificationFailed", err
    time.sleep(3)       # time for Liqo's tenant controller, were the Tenant stored
    assert not forger.cluster.exists(f"tenants.{GROUP}", forger.id, "-n", forger.ns)
    csrs = forger.cluster.get_json("csr", "-l", "liqo.io/remote-tenant-csr=true")["items"]
    assert not [c for c in csrs if forger.id in json.dumps(c.get("metadata", {}))], csrs


def test_liqo_admits_the_valid_tenant_and_signs_it(forger):
    """The control: the same consumer's untampered Tenant is stored and Liqo's tenant
    controller (not tenantgate: no signer runs) issues its certificate."""
    tenant = forger.tenant()
    admitted, reason, err = verdict(forger.cluster, tenant, dry_run=False)
    assert admitted, f"{reason}: {err}"
    wait_for(lambda: ((forger.cluster.get_json(f"tenants.{GROUP}", forger.id, "-n", forger.ns)
                       .get("status") or {}).get("authParams") or {}).get("signedCRT"),
             timeout=60, what="Liqo's tenant controller signs the Tenant")


# Forged replicated slices -> (tenantgate's reason, what the message names).
FORGED_SLICES = {
    "CN of another slice": "CSRSubjectMismatch",
    "O of another consumer": "CSRSubjectMismatch",
    "the ControlPlane CSR": "CSRSubjectMismatch",
    "another key": "CSRPublicKeyMismatch",
    "originID of another": "LabelMismatch",
}


def test_forged_slices_refused_at_admission(forger):
    forger.cluster.create(forger.tenant())
    name = "forged"

    def forged(case):
        if case == "CN of another slice":
            return forger.slice(name, csr=forger.csr("other"))
        if case == "O of another consumer":
            h = hashlib.sha256(forger.id.encode()).hexdigest()[:12]
            return forger.slice(name, csr=forger.csr(name, f"/O=someone-else/CN={name}-{h}"))
        if case == "the ControlPlane CSR":
            return forger.slice(name, csr=forger.csr(name, f"/O=liqo.io/CN={forger.id}"))
        if case == "another key":
            return forger.slice(name, csr=forger.csr(name, key=forger.key2))
        return forger.slice(name, origin="someone-else")

    admitted, reason, err = verdict(forger.cluster, forger.slice(name), slices=True)
    assert admitted, f"the untampered slice is refused ({reason}): {err}"
    wrong = {}
    for case, want in FORGED_SLICES.items():
        admitted, reason, err = verdict(forger.cluster, forged(case), slices=True)
        if admitted or reason != want:
            wrong[case] = f"want {want}, got " + ("admitted" if admitted else
                                                  f"{reason}: {err.strip()}")
    assert not wrong, json.dumps(wrong, indent=1)
    # and for real: not stored, so Liqo's remote-resourceslice controller never signs it
    admitted, reason, err = verdict(forger.cluster, forged("another key"), slices=True,
                                    dry_run=False)
    assert not admitted and reason == "CSRPublicKeyMismatch", err
    assert not forger.cluster.exists(f"resourceslices.{GROUP}", name, "-n", forger.ns)


@pytest.fixture
def tenantgate_unregistered(provider):
    """tenantgate's validating configuration removed for the test, then put back as it was
    (same caBundle and URLs) and waited for: the session's webhook keeps running."""
    live = provider.get_json("validatingwebhookconfiguration", "tenantgate")
    keep = {k: live["metadata"][k] for k in ("name", "labels", "annotations")
            if k in live["metadata"]}
    saved = {"apiVersion": live["apiVersion"], "kind": live["kind"], "metadata": keep,
             "webhooks": live["webhooks"]}
    provider.kubectl("delete", "validatingwebhookconfiguration", "tenantgate")
    try:
        yield
    finally:
        provider.create(saved)


def test_without_tenantgate_liqo_admits_the_forgeries(forger, provider, webhook,
                                                      tenantgate_unregistered):
    """The control: with tenantgate's validating webhooks gone, Liqo's own admission lets the
    forged Tenant and the forged slice through (so the refusals above are tenantgate's)."""
    forged_tenant = forger.tenant(key=forger.key2)
    forged_tenant["spec"]["signature"] = forger.tenant()["spec"]["signature"]
    forged_slice = forger.slice("forged", csr=forger.csr("forged", key=forger.key2))

    def admitted_by_liqo():
        return verdict(forger.cluster, forged_tenant)[0] and \
            verdict(forger.cluster, forged_slice, slices=True)[0]
    # the API server drops the configuration from its view within a moment
    wait_for(admitted_by_liqo, timeout=30, interval=0.5,
             what="forged Tenant and slice admitted with Liqo's webhooks alone")


def test_denials_name_a_documented_reason(flow, source_dir):
    """Every reason tenantgate gave in this module is in docs/PROTOCOL.md."""
    documented = set(re.findall(r"`([A-Z][A-Za-z]+)`", (source_dir / "docs" / "PROTOCOL.md")
                                .read_text()))
    used = {r for _, r in flow.denials} | set(FORGED_TENANTS.values()) | \
        set(FORGED_SLICES.values())
    assert used <= documented, used - documented


def test_peer_and_unpeer_back_to_back(guard, flow, webhook):
    """Issue 45: `liqoctl peer --networking-disabled` then at once `liqoctl unpeer`,
    TG_REPEER_ROUNDS times (default 20), 0 failures (e2e/liqo_repeer.py), and tenantgate's
    webhook denied none of Liqo's requests meanwhile. Runs after the flow, which ends
    authenticated: round 0's peer finds that peering (docs/LIQO.md says why no unauthenticate
    comes first)."""
    liqo, prov, cons = guard
    before = denied_counts(webhook)
    failures, seconds = peer_unpeer_rounds(liqo, prov, cons)
    print(f"{ROUNDS} rounds in {seconds:.1f}s")
    denied = delta(denied_counts(webhook), before)
    assert failures == [] and denied == {}, "\n".join(failures + [f"tenantgate denied {denied}"])


def test_peering_user_commands(guard, webhook, tmp_path):
    """Issue 45, item 3: `liqoctl generate peering-user` on the provider, `liqoctl peer
    --networking-disabled` from the consumer with that kubeconfig, `liqoctl info peer` healthy,
    `liqoctl unpeer`, `liqoctl delete peering-user`: the user is then refused and nothing of
    the peering is left (e2e/liqo_commands.py); tenantgate denied none of Liqo's requests."""
    liqo, prov, cons = guard
    before = denied_counts(webhook)
    failed, seconds = peering_user_flow(liqo, prov, cons, tmp_path)
    print(f"peering-user flow in {seconds:.1f}s")
    assert failed == [], "\n".join(failed)
    assert delta(denied_counts(webhook), before) == {}


# --- the chart beside Liqo's (issue 46) ------------------------------------------------------

CHART_MODES = {"guard": ["--set", "mode=guard"],
               "replace": ["--set", "mode=replace", "--set", "apiServer.address=https://provider.example:6443"]}


def _key(doc):
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


@pytest.mark.parametrize("mode", sorted(CHART_MODES))
def test_the_chart_installs_beside_liqos(guard, source_dir, mode):
    """tenantgate's chart in release namespace liqo, beside the objects Liqo's own chart made
    there: none of ours is one of Liqo's (kind, namespace and name), and the provider's API
    server, with Liqo's CRDs and webhooks live, takes `helm install --dry-run=server` of the mode.
    A dry run: this bed's tenantgate runs as host processes, whose objects helm adopts
    (--take-ownership, as docs/helm.md says for an install that kustomize made)."""
    _, prov, _ = guard
    helm = subprocess.run([str(source_dir / "e2e" / "helm-bin")], capture_output=True, text=True)
    assert helm.returncode == 0, helm.stderr[-2000:]
    home = prov.work_dir / "helm"
    env = dict(os.environ, KUBECONFIG=str(prov.cluster.kubeconfig), HOME=str(home),
               HELM_CACHE_HOME=str(home / "cache"), HELM_CONFIG_HOME=str(home / "config"),
               HELM_DATA_HOME=str(home / "data"))
    chart = str(source_dir / "manifests" / "chart" / "tenantgate")

    def run(verb, *args):
        p = subprocess.run([helm.stdout.strip(), verb, "tenantgate", chart, "--namespace", "liqo",
                            *CHART_MODES[mode], *args], env=env, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, f"helm {verb}: {p.stdout}{p.stderr}"
        return p.stdout

    ours = {_key(d) for d in yaml.safe_load_all(run("template")) if d}
    liqos = {_key(d) for d in prov.docs if d and d.get("kind") != "CustomResourceDefinition"}
    assert ours and liqos
    assert not ours & liqos, f"objects both charts make: {sorted(ours & liqos)}"
    run("install", "--dry-run=server", "--take-ownership")
