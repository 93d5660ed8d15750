"""The consumer's rights on the provider: tenantgate's signer grants what Liqo's provider grants
(issue 38, break 4; docs/LIQO.md, "Rights").

Two providers in turn on the same bed, each making the consumer's two identities, the
ControlPlane user (CN <consumer>) and a ResourceSlice user (CN <slice>-<12 hex>), both in group
<consumer>:

  Liqo's       Liqo v1.2's own components on both clusters (e2e/liqo_processes.py, Liqo's chart):
               `liqoctl authenticate`, `liqoctl create resourceslice`; the kubeconfigs are the
               consumer's Secrets kubeconfig-controlplane-<provider> and
               kubeconfig-resourceslice-<slice> that Liqo's identity controller writes.
  tenantgate's Liqo stopped; the chart's ClusterRoles stay on the provider (Liqo installed,
               authentication done by tenantgate); tenantgate's signers on both sides,
               `kubectl tenantgate authenticate` and `create resourceslice`; the same two
               Secrets, written by tenantgate's consumer signer.

For each identity, `kubectl auth can-i --list` as that kubeconfig in its tenant namespace and in
`default` (what it may do cluster-wide), and the names of the bindings that name its user or
group.  Both must be equal, cluster ids aside; NARROWED lists what tenantgate grants less
(docs/LIQO.md "Rights" lists and justifies each): the ControlPlane user's writes on the /status
of resourceslices, renews and namespacemaps, which Liqo's liqo-remote-controlplane grants and
tenantgate-remote-consumer, bound in its place, does not.  The binding of that role is named
after the role bound (liqo-binding-tenantgate-remote-consumer); every other name is Liqo's.
"""

import base64
import json
import re
import uuid

import pytest

from liqo_modules import liqo_bin, pinned_versions
from liqo_processes import LiqoOnCluster, chart_dir
from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_liqo import Liqo
from test_signer import CONSUMER_ID, PROVIDER_ID, installed  # noqa: F401
from test_slice_flow import (CNS, PNS, consumer_signer, consumer_webhook, peered,  # noqa: F401
                             provider_signer)
from bed import delete_namespaces, wait_for

NEWEST = pinned_versions()[0]
GROUP = "authentication.liqo.io"
OUR_CRDS = tuple(f"{p}.{GROUP}" for p in ("tenants", "identities", "resourceslices", "renews"))
SLICE = "rights"
# (identity, scope) -> rule rows tenantgate grants less than Liqo (docs/LIQO.md, "Rights"): the
# status the provider decides (a slice's Accepted conditions and grant, a Renew's certificate).
STATUS_OF = ("resourceslices.authentication.liqo.io", "renews.authentication.liqo.io",
             "namespacemaps.offloading.liqo.io")
LIQO_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NARROWED = {("controlplane", "tenant-namespace"): {
    (f"{r}/status [] []", v) for r in STATUS_OF for v in LIQO_VERBS}}
# Liqo's binding of its own role -> tenantgate's binding of the role bound in its place.
RENAMED = {"rolebinding/liqo-binding-liqo-remote-controlplane":
           "rolebinding/liqo-binding-tenantgate-remote-consumer"}


def _kubeconfig(consumer, ns, secret, path):
    sec = wait_for(lambda: consumer.get_json("secret", secret, "-n", ns)
                   if consumer.exists("secret", secret, "-n", ns) else None,
                   timeout=60, what=f"Secret {ns}/{secret}")
    path.write_bytes(base64.b64decode(sec["data"]["kubeconfig"]))
    return path


def _rows(provider, kubeconfig, ns, ids):
    """`kubectl auth can-i --list -n ns` as kubeconfig: {(resource and names, verb)}, one per
    verb (kubectl prints a role's verbs in the role's order), cluster ids made generic."""
    out = provider.kubectl("auth", "can-i", "--list", "-n", ns, kubeconfig=kubeconfig).stdout
    rows = set()
    for line in out.splitlines()[1:]:
        for real, generic in ids.items():
            line = line.replace(real, generic)
        m = re.match(r"^(.*)\[([^\]]*)\]\s*$", line.strip())
        if m:
            rows.update((" ".join(m.group(1).split()), verb) for verb in m.group(2).split())
    return rows


def _bindings(provider, ns, cid, ids):
    """Names of the RoleBindings in ns and the ClusterRoleBindings naming User or Group cid,
    slice users included (their names start with the slice's)."""
    names = set()
    for kind, args in (("rolebinding", ("-n", ns)), ("clusterrolebinding", ())):
        for b in provider.get_json(kind, *args)["items"]:
            if any(s.get("name") == cid or s.get("name", "").startswith(f"{SLICE}-")
                   for s in b.get("subjects") or []):
                name = b["metadata"]["name"]
                for real, generic in ids.items():
                    name = name.replace(real, generic)
                names.add(f"{kind}/{name}")
    return names


def _rights(provider, consumer, cid, pid, tmp_path):
    """{identity: {scope: rows}} and the binding names, for both identities."""
    pns, cns = f"liqo-tenant-{cid}", f"liqo-tenant-{pid}"
    ids = {cid: "<consumer>", pid: "<provider>"}
    kcs = {"controlplane": _kubeconfig(consumer, cns, f"kubeconfig-controlplane-{pid}",
                                       tmp_path / f"cp-{cid}.kubeconfig"),
           "resourceslice": _kubeconfig(consumer, cns, f"kubeconfig-resourceslice-{SLICE}",
                                        tmp_path / f"rs-{cid}.kubeconfig")}
    # the apiserver's RBAC authorizer reads bindings from a cache: let the last ones count
    rights = {}
    for ident, kc in kcs.items():
        rights[ident] = {"tenant-namespace": _rows(provider, kc, pns, ids),
                         "cluster-wide": _rows(provider, kc, "default", ids)}
    return rights, _bindings(provider, pns, cid, ids)


def _slice_accepted(cluster, ns):
    if not cluster.exists(f"resourceslices.{GROUP}", SLICE, "-n", ns):
        return False
    rs = cluster.get_json(f"resourceslices.{GROUP}", SLICE, "-n", ns)
    return any(c.get("type") == "Authentication" and c.get("status") == "Accepted"
               for c in (rs.get("status") or {}).get("conditions") or [])


def _release_secrets(cluster, ns):
    """Finalizers off every Secret in ns (Liqo's stopped controllers will not take theirs)."""
    got = cluster.kubectl("get", "secrets", "-n", ns, "-o", "json", check=False)
    for sec in (json.loads(got.stdout)["items"] if got.returncode == 0 else []):
        if sec["metadata"].get("finalizers"):
            cluster.kubectl("patch", "secret", sec["metadata"]["name"], "-n", ns, "--type=merge",
                            "-p", '{"metadata":{"finalizers":null}}', check=False)


@pytest.fixture(scope="module")
def liqo_provider(provider, consumer, crds, webhook, source_dir, tmp_path_factory):
    """Liqo's provider: its rights, then Liqo stopped with its chart's ClusterRoles left on the
    provider for tenantgate's turn (removed at the module's end)."""
    from conftest import install_crds     # conftest's own module, as pytest loaded it
    try:
        root = liqo_bin()
    except RuntimeError as e:
        pytest.fail(str(e))
    tag = uuid.uuid4().hex[:6]
    work = tmp_path_factory.mktemp("liqo-rights")
    prov = LiqoOnCluster(provider, f"rp-{tag}", NEWEST, root / NEWEST, chart_dir(NEWEST), work / "p")
    cons = LiqoOnCluster(consumer, f"rc-{tag}", NEWEST, root / NEWEST, chart_dir(NEWEST), work / "c")
    liqo = Liqo(root, NEWEST)
    cid, pid = cons.cluster_id, prov.cluster_id
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--timeout", "120s")
    stopped = False
    try:
        for side in (prov, cons):
            side.install()
            side.start()
        rc, out, err = liqo.ctl("authenticate", *both)
        assert rc == 0, out + err
        rc, out, err = liqo.ctl("create", "resourceslice", SLICE, "--remote-cluster-id", pid,
                                "--cpu", "1", "--memory", "1Gi", "--kubeconfig", consumer.kubeconfig)
        assert rc == 0, out + err
        wait_for(lambda: _slice_accepted(consumer, f"liqo-tenant-{pid}"), timeout=60,
                 what="Liqo's slice accepted")
        got = _rights(provider, consumer, cid, pid, work)
        consumer.kubectl("delete", f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}",
                         "--timeout=120s", check=False, timeout=150)
        liqo.ctl("unauthenticate", *both)
        for side in (prov, cons):
            side.stop()
        stopped = True
        # Liqo's controllers are stopped, so finalizers they put on objects in the tenant
        # namespaces would never go (the provider's NamespaceMap held its namespace for all
        # of kubectl's 120 s): off before the deletion, everything there is Liqo's turn's.
        for side in (prov, cons):
            side.release_finalizers()
        for cluster, ns in ((provider, f"liqo-tenant-{cid}"), (consumer, f"liqo-tenant-{pid}")):
            _release_secrets(cluster, ns)
        delete_namespaces(((provider, f"liqo-tenant-{cid}"), (consumer, f"liqo-tenant-{pid}")))
        cons.uninstall(keep_crds=OUR_CRDS)
        for cluster in (provider, consumer):
            install_crds(cluster, source_dir)     # the bed's CRDs back for tenantgate's turn
        yield got, prov
    finally:
        for side in (prov, cons) if not stopped else ():
            side.stop()
        prov.uninstall(keep_crds=OUR_CRDS)
        cons.uninstall(keep_crds=OUR_CRDS)
        for cluster in (provider, consumer):
            install_crds(cluster, source_dir)


@pytest.fixture(scope="module")
def tenantgate_provider(liqo_provider, request, cli, provider, consumer, tmp_path_factory):
    """tenantgate's provider with Liqo's ClusterRoles in place: its rights."""
    _, prov = liqo_provider
    request.getfixturevalue("peered")      # after Liqo's turn: tenantgate's signers, authenticated
    # the signer's test install puts a stand-in of Liqo's cluster-wide role (e2e/testdata): the
    # chart's own ClusterRoles again, so both turns run on Liqo's roles
    prov._apply(prov.objects("ClusterRole"))
    rc, out, err = cli("create", "resourceslice", SLICE, "--remote-cluster-id", PROVIDER_ID,
                       "--cpu", "1", "--memory", "1Gi", "--timeout", "120s",
                       "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, out + err
    wait_for(lambda: _slice_accepted(consumer, CNS), timeout=60, what="tenantgate's slice accepted")
    yield _rights(provider, consumer, CONSUMER_ID, PROVIDER_ID, tmp_path_factory.mktemp("tg-rights"))
    cli("delete", "resourceslice", SLICE, "--remote-cluster-id", PROVIDER_ID, "--wait",
        "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)


def _compare(liqo_rows, tg_rows, narrowed):
    extra, missing = tg_rows - liqo_rows, liqo_rows - tg_rows
    assert not extra, f"tenantgate grants beyond Liqo: {sorted(extra)}"
    assert missing == narrowed, (f"tenantgate grants less than Liqo, undocumented: "
                                 f"{sorted(missing - narrowed)}; documented but granted: "
                                 f"{sorted(narrowed - missing)}")


@pytest.mark.parametrize("identity", ["controlplane", "resourceslice"])
@pytest.mark.parametrize("scope", ["tenant-namespace", "cluster-wide"])
def test_rights_as_under_liqos_provider(liqo_provider, tenantgate_provider, identity, scope):
    liqo_rows, tg_rows = liqo_provider[0][0][identity][scope], tenantgate_provider[0][identity][scope]
    print(f"{identity} {scope}\n  Liqo: {sorted(liqo_rows)}\n  tenantgate: {sorted(tg_rows)}")
    _compare(liqo_rows, tg_rows, NARROWED.get((identity, scope), set()))


def test_binding_names_as_liqos(liqo_provider, tenantgate_provider):
    """Liqo's names: liqo-binding-<role> in the tenant namespace, the cluster-wide group binding;
    nothing of the slice user's own (no tenantgate-rslice-*). Liqo's own role is bound as
    tenantgate-remote-consumer, under that role's binding name."""
    liqo_names, tg_names = liqo_provider[0][1], tenantgate_provider[1]
    print(json.dumps({"liqo": sorted(liqo_names), "tenantgate": sorted(tg_names)}, indent=1))
    assert "rolebinding/liqo-binding-liqo-remote-controlplane" in liqo_names
    assert tg_names == {RENAMED.get(n, n) for n in liqo_names}


def test_slice_user_cannot_read_slices(tenantgate_provider):
    """Liqo's slice user has no right on resourceslices; nor has tenantgate's (the old
    tenantgate-resourceslice-user get/list/watch is gone: Liqo's virtual kubelet, the slice
    user's only client, never reads a ResourceSlice)."""
    rows = tenantgate_provider[0]["resourceslice"]["tenant-namespace"]
    assert not [r for r in rows if r[0].startswith("resourceslices.")], sorted(rows)
