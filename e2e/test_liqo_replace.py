"""Replace mode: tenantgate stands in for Liqo's authentication module on the provider (issue 38).

The provider runs Liqo's own components from the pinned module (e2e/liqo_processes.py) with
its Helm value `authentication.enabled: false` (`--authentication-enabled=false`: no nonce,
tenant, identity or resourceslice controller of Liqo's), plus tenantgate-webhook (the
session's `webhook` fixture) and tenantgate-signer with the provider controllers.  The
consumer runs Liqo fully on.  Every request of the flow comes from Liqo: liqoctl, Liqo's
consumer controllers and its crd-replicator.

The flow (module fixture `flow`, each step timed, observations taken between steps):
`liqoctl authenticate`, `liqoctl create resourceslice` (Accepted, both Identities and
kubeconfig Secrets on the consumer, the slice's kubeconfig is user `<slice>-<12 hex>` on the
provider), cordon/uncordon, delete the slice, `liqoctl unauthenticate` (nothing of the
peering left), authenticate again (break 1: the nonce stays, as Liqo keeps it) with a new
ControlPlane certificate (break 5: the old peering's CSR is not reused).

Break 2, Liqo's Quota: once the slice is accepted the provider holds Liqo's offloading Quota
`<slice user>` (made by tenantgate's signer: Liqo's quotacreator runs only with Liqo's
authentication on), and Liqo's own ShadowPod webhook, run by the chart with
`--enable-resource-enforcement`, admits the slice user's ShadowPod within the slice's resources
and refuses one beyond them.  The offloaded namespace is made on the provider as Liqo's
NamespaceMap controller makes it for an offloaded namespace (labelled with the consumer's id,
RoleBinding of Group <consumer> to liqo-virtual-kubelet-remote): the consumer's side of the
offloading (a virtual node) is the virtual-kubelet suite's.  Cordoning the slice cordons the
Quota; deleting the slice removes it.

Issue 45 item 4, last: the consumer's Liqo in TLS compatibility mode (its controller-manager's
`--tls-compatibility-mode`, Helm `authentication.tlsCompatibilityMode`: RSA-2048 keys) peers with
the replace-mode provider, ControlPlane and slice certificates RSA.

Out of scope here: the virtual kubelet and a Ready node, and comparing the consumer's rights with
Liqo's (test_liqo_rights.py).
"""

import base64
import hashlib
import json
import subprocess
import time

import pytest

from bed import openssl, wait_for
from liqo_commands import peering_user_flow
from liqo_processes import LIQO_NS, with_flag
from liqo_repeer import ROUNDS, peer_unpeer_rounds
from liqo_replace_mode import GROUP, NEWEST, liqo_root, replace_mode
from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_liqo import Liqo

pytestmark = pytest.mark.usefixtures("webhook")

SLICE = "mypool"
QUOTAS = "quotas.offloading.liqo.io"
OFFLOADED = "replace-offloaded"        # the provider's namespace for the consumer's offloaded pods


@pytest.fixture(scope="module")
def replace(provider, consumer, crds, webhook, source_dir, signer_bin, tmp_path_factory):
    """Liqo on both clusters, authentication off on the provider, tenantgate's signer there;
    yields (Liqo handle, provider's Liqo, consumer's Liqo, signer)."""
    work = tmp_path_factory.mktemp("liqo-replace")
    with replace_mode(provider, consumer, source_dir, signer_bin, work, "r") as (prov, cons, signer):
        yield Liqo(liqo_root(), NEWEST), prov, cons, signer


def test_liqo_runs_without_its_authentication(replace):
    _, prov, cons, signer = replace
    args = prov.processes["liqo-controller-manager"].args
    assert "--authentication-enabled=false" in args, args
    assert "--authentication-enabled=true" in cons.processes["liqo-controller-manager"].args
    for side in (prov, cons):
        for name, proc in side.processes.items():
            assert proc.ready(), f"{side.cluster.name}: {name} not ready"
    assert signer.ready()


# --- the flow ---------------------------------------------------------------------------------

class Flow:
    """Per step (rc, output, seconds) and what was seen between steps."""

    def __init__(self, sides, signer):
        self.sides, self.signer = sides, signer
        self.steps = {}
        self.seen = {}

    def logs(self, lines=15):
        out = [f"--- {s.cluster.name} {n}:\n{p.process.log_tail(lines)}"
               for s in self.sides for n, p in s.processes.items()]
        return "\n".join(out + [f"--- tenantgate-signer:\n{self.signer.process.log_tail(lines)}"])


def _run(flow, step, fn):
    t0 = time.monotonic()
    try:
        rc, out, err = fn()
    except subprocess.TimeoutExpired as e:
        rc, out, err = -1, str(e.stdout or ""), f"timed out after {e.timeout}s"
    except Exception as e:      # an observation that could not be made fails its step
        rc, out, err = 1, "", f"{type(e).__name__}: {e}"
    flow.steps[step] = (rc, out + err, time.monotonic() - t0)
    print(f"{step}: rc {rc} in {flow.steps[step][2]:.1f}s\n{out}{err}")
    return rc == 0


def _wait(predicate, timeout, what):
    try:
        wait_for(predicate, timeout=timeout, interval=0.5, what=what)
        return 0, "", ""
    except Exception as e:
        return 1, "", str(e)


def _slice_accepted(cons, pid):
    rs = cons.cluster.get_json(f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}")
    conds = (rs.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Authentication" and c.get("status") == "Accepted" for c in conds)


def _kubeconfig_secret(cons, pid, identity):
    """The kubeconfig text of Secret kubeconfig-<identity> on the consumer, or None."""
    ns = f"liqo-tenant-{pid}"
    if not cons.cluster.exists("secret", f"kubeconfig-{identity}", "-n", ns):
        return None
    data = cons.cluster.get_json("secret", f"kubeconfig-{identity}", "-n", ns).get("data") or {}
    return base64.b64decode(data["kubeconfig"]).decode() if data.get("kubeconfig") else None


def _client_cert_serial(kubeconfig_text):
    import yaml
    kc = yaml.safe_load(kubeconfig_text)
    pem = base64.b64decode(kc["users"][0]["user"]["client-certificate-data"])
    return openssl("x509", "-noout", "-serial", input=pem).decode().strip()


def _whoami(provider, kubeconfig_text, path):
    import json
    path.write_text(kubeconfig_text)
    info = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=path).stdout)
    return info["status"]["userInfo"]


def _peering_left(prov, cid, slice_user):
    """What of the consumer's peering is still on the provider: {kind: [names]}."""
    c = prov.cluster
    ns = f"liqo-tenant-{cid}"
    left = {}
    if c.exists("namespace", ns):
        left["tenants"] = [t["metadata"]["name"]
                           for t in c.get_json(f"tenants.{GROUP}", "-n", ns)["items"]]
        left["resourceslices"] = [r["metadata"]["name"]
                                  for r in c.get_json(f"resourceslices.{GROUP}", "-n", ns)["items"]]
        left["secrets"] = [s["metadata"]["name"] for s in c.get_json("secrets", "-n", ns)["items"]
                           if s["metadata"]["name"] != "liqo-nonce"]
        left["rolebindings"] = [b["metadata"]["name"]
                                for b in c.get_json("rolebindings", "-n", ns)["items"]]
        left["quotas"] = [q["metadata"]["name"] for q in c.get_json(QUOTAS, "-n", ns)["items"]]
    left["clusterrolebindings"] = [
        b["metadata"]["name"] for b in c.get_json("clusterrolebindings")["items"]
        if any(s.get("name") in (cid, slice_user) for s in b.get("subjects") or [])]
    left["pending csrs"] = [
        r["metadata"]["name"] for r in c.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]
        if not (r.get("status") or {}).get("conditions")]
    return {k: v for k, v in left.items() if v}


def _quota(prov, cid, user):
    """The spec of Liqo's Quota <user> in the consumer's tenant namespace, or None."""
    ns = f"liqo-tenant-{cid}"
    if not prov.cluster.exists(QUOTAS, user, "-n", ns):
        return None
    return prov.cluster.get_json(QUOTAS, user, "-n", ns)["spec"]


def _offload_namespace(cluster, cid):
    """What Liqo's NamespaceMap controller makes on the provider for an offloaded namespace."""
    cluster.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": OFFLOADED, "labels": {"liqo.io/remote-cluster-id": cid}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": f"liqo-tenant-{cid}", "namespace": OFFLOADED},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": cid}],
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "liqo-virtual-kubelet-remote"}}]}))
    return 0, f"namespace {OFFLOADED} offloaded for {cid}\n", ""


def _create_shadowpod(cluster, kubeconfig, cid, name, cpu):
    """Create a ShadowPod requesting cpu as kubeconfig's user: (rc, out, err) of kubectl."""
    sp = {"apiVersion": "offloading.liqo.io/v1beta1", "kind": "ShadowPod",
          "metadata": {"name": name, "namespace": OFFLOADED,
                       "labels": {"offloading.liqo.io/origin": cid}},
          "spec": {"pod": {"containers": [{"name": "c", "image": "registry.invalid/none:1",
                                           "resources": {"requests": {"cpu": cpu,
                                                                      "memory": "256Mi"}}}]}}}
    p = cluster.kubectl("create", "-f", "-", kubeconfig=kubeconfig, check=False,
                        input=json.dumps(sp))
    return p.returncode, p.stdout, p.stderr


def _refused(result, *words):
    """(rc, out, err) of a create that must be refused with all of words: 0 when it was."""
    rc, out, err = result
    if rc != 0 and all(w in err for w in words):
        return 0, f"refused as expected: {err}", ""
    return 1, out, f"not refused as expected (rc {rc}, want {words}): {err}"


@pytest.fixture(scope="module")
def flow(replace, tmp_path_factory):
    liqo, prov, cons, signer = replace
    cid, pid = cons.cluster_id, prov.cluster_id
    slice_user = f"{SLICE}-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"
    work = tmp_path_factory.mktemp("replace-flow")
    both = ("--kubeconfig", cons.cluster.kubeconfig,
            "--remote-kubeconfig", prov.cluster.kubeconfig, "--timeout", "120s")
    f = Flow((prov, cons), signer)
    f.seen["slice user"] = slice_user

    def observe(key, fn):
        f.seen[key] = fn()
        return 0, f"{key}: {f.seen[key]}\n", ""

    def slice_kubeconfig_ready():
        return _kubeconfig_secret(cons, pid, f"resourceslice-{SLICE}") is not None

    steps = [
        ("authenticate", lambda: liqo.ctl("authenticate", *both)),
        ("first certificate", lambda: observe("serial 1", lambda: _client_cert_serial(
            _kubeconfig_secret(cons, pid, f"controlplane-{pid}")))),
        ("create resourceslice", lambda: liqo.ctl(
            "create", "resourceslice", SLICE, "--remote-cluster-id", pid, "--cpu", "2",
            "--memory", "4Gi", "--pods", "10", "--kubeconfig", cons.cluster.kubeconfig)),
        ("slice accepted", lambda: _wait(lambda: _slice_accepted(cons, pid), 90, "slice Accepted")),
        ("slice kubeconfig", lambda: _wait(slice_kubeconfig_ready, 90, "slice kubeconfig Secret")),
        ("identities", lambda: observe("identities", lambda: sorted(
            i["metadata"]["name"] for i in cons.cluster.get_json(
                f"identities.{GROUP}", "-n", f"liqo-tenant-{pid}")["items"]))),
        ("slice whoami", lambda: observe("slice user info", lambda: _whoami(
            prov.cluster, _kubeconfig_secret(cons, pid, f"resourceslice-{SLICE}"),
            work / "slice.kubeconfig"))),
        ("liqo quota", lambda: _wait(lambda: _quota(prov, cid, slice_user) is not None, 60,
                                     "Liqo's Quota of the slice user")),
        ("quota spec", lambda: observe("quota", lambda: _quota(prov, cid, slice_user))),
        ("granted", lambda: observe("granted", lambda: prov.cluster.get_json(
            f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{cid}")["status"]["resources"])),
        ("offload namespace", lambda: _offload_namespace(prov.cluster, cid)),
        ("shadowpod within", lambda: _create_shadowpod(prov.cluster, work / "slice.kubeconfig",
                                                       cid, "within", "1")),
        ("shadowpod over", lambda: _refused(_create_shadowpod(
            prov.cluster, work / "slice.kubeconfig", cid, "over", "3"), "cpu", "quota")),
        ("cordon resourceslice", lambda: liqo.ctl(
            "cordon", "resourceslice", SLICE, "--remote-cluster-id", cid, "--skip-confirm",
            "--kubeconfig", prov.cluster.kubeconfig)),
        ("quota cordoned", lambda: _wait(lambda: (_quota(prov, cid, slice_user) or {}).get(
            "cordoned") is True, 60, "the Quota cordoned")),
        ("shadowpod cordoned", lambda: _refused(_create_shadowpod(
            prov.cluster, work / "slice.kubeconfig", cid, "cordoned", "100m"), "cordoned")),
        ("uncordon resourceslice", lambda: liqo.ctl(
            "uncordon", "resourceslice", SLICE, "--remote-cluster-id", cid, "--skip-confirm",
            "--kubeconfig", prov.cluster.kubeconfig)),
        ("quota uncordoned", lambda: _wait(lambda: "cordoned" not in (
            _quota(prov, cid, slice_user) or {"cordoned": True}), 60, "the Quota uncordoned")),
        ("remove offloaded namespace", lambda: _kubectl(
            prov.cluster, "delete", "namespace", OFFLOADED, "--timeout=120s")),
        ("delete resourceslice", lambda: _kubectl(
            cons.cluster, "delete", f"resourceslices.{GROUP}", SLICE, "-n",
            f"liqo-tenant-{pid}", "--timeout=120s")),
        ("unauthenticate", lambda: liqo.ctl("unauthenticate", *both)),
        ("left behind", lambda: _wait(lambda: not _peering_left(prov, cid, slice_user), 60,
                                      "the peering gone from the provider")),
        ("authenticate again", lambda: liqo.ctl("authenticate", *both)),
        ("second certificate", lambda: observe("serial 2", lambda: _client_cert_serial(
            _kubeconfig_secret(cons, pid, f"controlplane-{pid}")))),
    ]
    for step, fn in steps:
        if not _run(f, step, fn) and step not in ("left behind", "slice whoami", "identities",
                                                  "shadowpod within", "shadowpod over",
                                                  "quota cordoned", "shadowpod cordoned",
                                                  "quota uncordoned"):
            break
    f.seen["left"] = _peering_left(prov, cid, slice_user)
    yield f
    prov.cluster.kubectl("delete", "namespace", OFFLOADED, "--ignore-not-found", "--wait=false",
                         check=False)
    liqo.ctl("unauthenticate", *both)


def _kubectl(cluster, *args):
    p = cluster.kubectl(*args, check=False, timeout=150)
    return p.returncode, p.stdout, p.stderr


def _step_passes(flow, step):
    rc, out, _ = flow.steps.get(step, (None, "(not run)", 0))
    assert rc == 0, f"{step} failed:\n{out}\n{flow.logs()}"


def test_liqoctl_authenticate(flow, replace):
    _step_passes(flow, "authenticate")
    _step_passes(flow, "first certificate")


def test_liqoctl_create_resourceslice_is_accepted(flow, replace):
    _step_passes(flow, "create resourceslice")
    _step_passes(flow, "slice accepted")
    _step_passes(flow, "slice kubeconfig")
    _step_passes(flow, "identities")
    _, prov, _, _ = replace
    assert flow.seen["identities"] == sorted([f"controlplane-{prov.cluster_id}",
                                              f"resourceslice-{SLICE}"]), flow.seen


def test_slice_kubeconfig_is_the_slice_user_on_the_provider(flow, replace):
    _step_passes(flow, "slice whoami")
    _, _, cons, _ = replace
    info = flow.seen["slice user info"]
    assert info["username"] == flow.seen["slice user"], info
    assert cons.cluster_id in info.get("groups", []), info


def test_accepted_slice_has_liqos_quota(flow, replace):
    """Break 2: Quota <slice user> as Liqo's quotacreator writes it, from the granted resources."""
    _step_passes(flow, "liqo quota")
    _step_passes(flow, "quota spec")
    spec = flow.seen["quota"]
    assert spec["user"] == flow.seen["slice user"], spec
    assert spec["limitsEnforcement"] == "None", spec
    _step_passes(flow, "granted")
    # the slice's grant on the provider (what was asked, with the policy's defaults for the rest)
    assert spec["resources"] == flow.seen["granted"], (spec, flow.seen["granted"])
    assert {k: spec["resources"].get(k) for k in ("cpu", "memory", "pods")} == \
        {"cpu": "2", "memory": "4Gi", "pods": "10"}, spec
    assert "cordoned" not in spec, spec


def test_liqos_shadowpod_webhook_enforces_the_slice(flow, replace):
    """The slice user's ShadowPod within the slice's resources is admitted by Liqo's webhook
    (--enable-resource-enforcement, the chart's default); one beyond them is refused."""
    _, prov, _, _ = replace
    args = prov.processes["webhook"].args
    assert "--enable-resource-enforcement" in args, args
    _step_passes(flow, "offload namespace")
    _step_passes(flow, "shadowpod within")
    _step_passes(flow, "shadowpod over")


def test_liqoctl_cordon_and_uncordon(flow):
    _step_passes(flow, "cordon resourceslice")
    _step_passes(flow, "uncordon resourceslice")


def test_cordon_reaches_the_quota(flow):
    """liqoctl cordon resourceslice (Liqo's annotation) cordons the Quota: the webhook refuses
    new ShadowPods; uncordon lifts it."""
    _step_passes(flow, "quota cordoned")
    _step_passes(flow, "shadowpod cordoned")
    _step_passes(flow, "quota uncordoned")


def test_delete_slice_and_unauthenticate_leave_nothing(flow):
    _step_passes(flow, "delete resourceslice")
    _step_passes(flow, "unauthenticate")
    _step_passes(flow, "left behind")


def test_authenticate_again_after_unauthenticate(flow):
    """Break 1: the provider keeps the nonce Liqo's consumer signed; liqoctl works again."""
    _step_passes(flow, "authenticate again")


def test_authenticate_again_gets_a_new_certificate(flow):
    """Break 5: the re-peering (same key, same request) does not reuse the old CSR."""
    _step_passes(flow, "second certificate")
    assert flow.seen["serial 1"] != flow.seen["serial 2"], flow.seen


def test_peer_and_unpeer_back_to_back(replace, flow):
    """Issue 45: `liqoctl peer --networking-disabled` then at once `liqoctl unpeer`,
    TG_REPEER_ROUNDS times (default 20), 0 failures (e2e/liqo_repeer.py). Runs after the flow,
    which ends authenticated: round 0's peer finds that peering (docs/LIQO.md says why no
    unauthenticate comes first)."""
    liqo, prov, cons, _ = replace
    failures, seconds = peer_unpeer_rounds(liqo, prov, cons)
    print(f"{ROUNDS} rounds in {seconds:.1f}s")
    assert failures == [], "\n".join(failures)


def test_peering_user_commands(replace, tmp_path):
    """Issue 45, item 3: `liqoctl generate peering-user` on the provider, `liqoctl peer
    --networking-disabled` from the consumer with that kubeconfig, `liqoctl info peer` healthy,
    `liqoctl unpeer`, `liqoctl delete peering-user`: the user is then refused and nothing of
    the peering is left (e2e/liqo_commands.py)."""
    liqo, prov, cons, _ = replace
    failed, seconds = peering_user_flow(liqo, prov, cons, tmp_path)
    print(f"peering-user flow in {seconds:.1f}s")
    assert failed == [], "\n".join(failed)


def _key_text(pem):
    """What openssl says of a PEM public key or certificate."""
    if b"CERTIFICATE" in pem:
        return openssl("x509", "-noout", "-text", input=pem).decode()
    return openssl("pkey", "-pubin", "-noout", "-text", input=pem).decode()


def _cert_of(kubeconfig_text):
    import yaml
    return base64.b64decode(yaml.safe_load(kubeconfig_text)["users"][0]["user"]
                            ["client-certificate-data"])


TLS_COMPAT_SLICE = "rsapool"
RSA_2048 = "Public-Key: (2048 bit)"


def test_tls_compatibility_mode_consumer(replace, tmp_path):
    """Issue 45 item 4: Liqo v1.2's consumer with `--tls-compatibility-mode=true` (for API
    servers that refuse Ed25519 client certificates, liqotech/liqo#2998) makes an RSA-2048
    cluster key; `liqoctl authenticate` and `liqoctl create resourceslice` succeed against the
    replace-mode provider (tenantgate's webhook checks the RSA Tenant and slice, its signer has
    them signed), both certificates are RSA-2048 and both kubeconfigs work on the provider.
    Runs last: the consumer's controller-manager gets a new key; its own is restored after."""
    liqo, prov, cons, _ = replace
    cid, pid, c = cons.cluster_id, prov.cluster_id, cons.cluster
    both = ("--kubeconfig", c.kubeconfig, "--remote-kubeconfig", prov.cluster.kubeconfig,
            "--timeout", "120s")
    slice_user = f"{TLS_COMPAT_SLICE}-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"
    cm = "liqo-controller-manager"
    liqo.ctl("unauthenticate", *both)      # the tests before may end peered
    saved = c.get_json("secret", "authentication-keys", "-n", LIQO_NS)
    def drop_keys():
        """The cluster key goes, and with it the signed nonce: Liqo's consumer keeps that
        Secret across peerings and reuses its signature, which the old key made (the provider
        keeps its nonce with Liqo's consumers, --nonce-rotation keep). A Liqo user who
        switches keys deletes it too (docs/LIQO.md)."""
        c.kubectl("delete", "secret", "authentication-keys", "-n", LIQO_NS, "--ignore-not-found")
        c.kubectl("delete", "secret", "liqo-signed-nonce", "-n", f"liqo-tenant-{pid}",
                  "--ignore-not-found")
    args = [str(a) for a in cons.processes[cm].args]
    old = cons.restart(cm, with_flag(args, "tls-compatibility-mode", "true"), before_start=drop_keys)
    assert "--tls-compatibility-mode=false" in old, old       # the chart's default, replaced
    try:
        keys = c.get_json("secret", "authentication-keys", "-n", LIQO_NS)["data"]
        assert RSA_2048 in _key_text(base64.b64decode(keys["publicKey"]))

        rc, out, err = liqo.ctl("authenticate", *both)
        assert rc == 0, out + err
        tenant = prov.cluster.get_json(f"tenants.{GROUP}", "-n", f"liqo-tenant-{cid}")["items"][0]
        assert base64.b64decode(tenant["spec"]["publicKey"]) == base64.b64decode(keys["publicKey"])
        cp = _kubeconfig_secret(cons, pid, f"controlplane-{pid}")
        assert RSA_2048 in _key_text(_cert_of(cp))
        assert _whoami(prov.cluster, cp, tmp_path / "cp.kubeconfig")["username"] == cid

        rc, out, err = liqo.ctl("create", "resourceslice", TLS_COMPAT_SLICE, "--remote-cluster-id",
                                pid, "--cpu", "1", "--memory", "1Gi", "--pods", "5",
                                "--kubeconfig", c.kubeconfig)
        assert rc == 0, out + err
        text = wait_for(lambda: _kubeconfig_secret(cons, pid, f"resourceslice-{TLS_COMPAT_SLICE}"),
                        timeout=90, interval=0.5, what="the RSA slice's kubeconfig Secret")
        assert RSA_2048 in _key_text(_cert_of(text))
        info = _whoami(prov.cluster, text, tmp_path / "slice.kubeconfig")
        assert info["username"] == slice_user and cid in info.get("groups", []), info
    finally:
        c.kubectl("delete", f"resourceslices.{GROUP}", TLS_COMPAT_SLICE, "-n",
                  f"liqo-tenant-{pid}", "--ignore-not-found", "--timeout=120s", check=False,
                  timeout=150)
        liqo.ctl("unauthenticate", *both)

        def restore_keys():
            drop_keys()
            c.create({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": "authentication-keys", "namespace": LIQO_NS},
                      "data": saved["data"]})
        cons.restart(cm, old, before_start=restore_keys)
