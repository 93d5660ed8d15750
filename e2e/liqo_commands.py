"""Liqo's peering-user commands end to end (issue 45, item 3), for the Liqo suites in both
modes (test_liqo_guard.py, test_liqo_replace.py): on the provider `liqoctl generate
peering-user`; on the consumer `liqoctl peer --networking-disabled` with that kubeconfig as
the remote one (not the provider's admin kubeconfig), then `liqoctl info peer <provider id>
-o json`; `liqoctl unpeer` (the same kubeconfig) and on the provider `liqoctl delete
peering-user`.  Afterwards the peering user's certificate is refused on the provider and
nothing of the peering is left there.

`peering_user_flow` returns the failed steps ([] when all pass) so one test in each suite
asserts on it and prints every step's time."""

import copy
import json
import re
import time
from contextlib import contextmanager

from liqo_processes import LIQO_NS
from liqo_repeer import GROUP, _whole, peer

PEER_LABEL = "liqo.io/peering-user-name"     # Liqo's label on the peering user's RoleBindings


def peer_user(cid):
    """The name liqoctl gives the peering user of consumer cid (its CSR, its bindings' label)."""
    return f"liqo-peer-user-{cid}"


def _kubeconfig_of(stdout):
    """The kubeconfig `liqoctl generate peering-user` prints after its warnings."""
    m = re.search(r"^apiVersion:.*", stdout, re.M | re.S)
    return m.group(0) if m else None


def _info_peer(liqo, cons, pid):
    """(section dict of `liqoctl info peer <pid> -o json` for pid, or None, raw output)."""
    rc, out, err = liqo.ctl("info", "peer", pid, "-o", "json", "--kubeconfig", cons.cluster.kubeconfig,
                            timeout=60)
    if rc:
        return None, out + err
    try:
        data = json.loads(out[out.index("{"):])
    except ValueError:
        return None, out + err
    return data.get(pid, data), out


def _info_wrong(info, raw):
    """'' if `info peer` says the provider is peered with authentication healthy."""
    if info is None:
        return f"liqoctl info peer failed or printed no JSON: {raw.strip()[-600:]}"
    auth = info.get("authentication") or {}
    if auth.get("status") != "Healthy":
        return f"authentication not Healthy: {json.dumps(auth)}"
    if not any(s.get("accepted") for s in auth.get("resourceSlices") or []):
        return f"no accepted ResourceSlice in info peer: {json.dumps(auth)}"
    if "Provider" not in str((info.get("info") or {}).get("role")):
        return f"the peer's role is not Provider: {json.dumps(info.get('info'))}"
    return ""


def _info_healthy(liqo, cons, pid, timeout=60):
    """'' once info peer reports the provider healthy (the ForeignCluster's modules settle a
    moment after liqoctl peer returns), else what it said last."""
    deadline, wrong = time.monotonic() + timeout, "not asked"
    while time.monotonic() < deadline:
        wrong = _info_wrong(*_info_peer(liqo, cons, pid))
        if not wrong:
            return ""
        time.sleep(2)
    return wrong


def _refused(prov, kubeconfig, cid):
    """'' if the peering user's certificate gets 401/403 on the provider, else the answer."""
    p = prov.cluster.kubectl("get", f"tenants.{GROUP}", "-n", f"liqo-tenant-{cid}",
                             kubeconfig=kubeconfig, check=False)
    out = p.stdout + p.stderr
    if p.returncode and re.search(r"Forbidden|Unauthorized|\(40[13]\)", out):
        return ""
    return f"the deleted peering user's request was not refused: rc {p.returncode} {out.strip()[-300:]}"


def _left(prov, cid):
    """What of the peering is still on the provider: Tenant, slices, the peering user's
    RoleBindings and ClusterRoleBindings, its CSR."""
    c, ns, user = prov.cluster, f"liqo-tenant-{cid}", peer_user(cid)
    left = []
    if c.exists("namespace", ns):
        for kind in (f"tenants.{GROUP}", f"resourceslices.{GROUP}"):
            left += [f"{kind} {o['metadata']['name']}" for o in c.get_json(kind, "-n", ns)["items"]]
    left += [f"rolebinding {b['metadata']['namespace']}/{b['metadata']['name']}"
             for b in c.get_json("rolebindings", "-A", "-l", f"{PEER_LABEL}={user}")["items"]]
    left += [f"clusterrolebinding {b['metadata']['name']}"
             for b in c.get_json("clusterrolebindings")["items"]
             if (b["metadata"].get("labels") or {}).get(PEER_LABEL) == user
             or any(s.get("name", "").startswith(user) for s in b.get("subjects") or [])]
    left += [f"csr {r['metadata']['name']}" for r in c.get_json("csr")["items"]
             if r["metadata"]["name"].startswith(user)]
    return left


def _wait_nothing_left(prov, cid, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        left = _left(prov, cid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


@contextmanager
def _controller_manager_deployment(side):
    """The chart's liqo-controller-manager Deployment on side's cluster, scaled to 0, while the
    block runs: `liqoctl generate peering-user` reads the API server address and TLS mode from
    its arguments; the bed runs that container as a host process and applies no Deployment."""
    dep = copy.deepcopy(side.deployment("controller-manager"))
    dep["spec"]["replicas"] = 0
    name = dep["metadata"]["name"]
    existed = side.cluster.exists("deployment", name, "-n", LIQO_NS)
    side.cluster.apply(dep, "-n", LIQO_NS)
    try:
        yield
    finally:
        if not existed:
            side.cluster.kubectl("delete", "deployment", name, "-n", LIQO_NS, "--ignore-not-found",
                                 check=False)


class _Steps:
    """Runs the flow's steps in order, each timed; stops at the first failure."""

    def __init__(self):
        self.failed, self.t0 = [], time.monotonic()

    def run(self, step, fn):
        if self.failed:
            return None
        t = time.monotonic()
        wrong = fn()
        print(f"{step}: {time.monotonic() - t:.1f}s {wrong or 'ok'}")
        if wrong:
            self.failed.append(f"{step}: {wrong}")
        return wrong


def _ctl_step(liqo, *args):
    rc, out, err = liqo.ctl(*args, timeout=180)
    return f"exit {rc}: {(out + err).strip()[-800:]}" if rc else ""


def peering_user_flow(liqo, prov, cons, work_dir):
    """(failed steps, seconds) of generate peering-user, peer with it, info peer, unpeer,
    delete peering-user, then the checks that the user is refused and nothing is left.
    Starts by unpeering whatever an earlier test left (with admin kubeconfigs)."""
    cid, pid = cons.cluster_id, prov.cluster_id
    liqo.ctl("unpeer", "--kubeconfig", cons.cluster.kubeconfig, "--remote-kubeconfig",
             prov.cluster.kubeconfig, "--skip-confirm", "--timeout", "120s", timeout=180)
    kubeconfig = work_dir / f"peering-user-{cid}.kubeconfig"
    remote = ("--kubeconfig", cons.cluster.kubeconfig, "--remote-kubeconfig", str(kubeconfig))
    s = _Steps()

    def generate():
        with _controller_manager_deployment(prov):
            rc, out, err = liqo.ctl("generate", "peering-user", "--consumer-cluster-id", cid,
                                    "--kubeconfig", prov.cluster.kubeconfig, timeout=120)
        text = _kubeconfig_of(out)
        if rc or not text:
            return f"exit {rc}, kubeconfig {'found' if text else 'not found'}: {(out + err)[-800:]}"
        kubeconfig.write_text(text)
        return ""

    s.run("generate peering-user", generate)
    def peer_step():
        rc, out, err, retried = peer(liqo, cons, *remote, "--networking-disabled",
                                     "--create-virtual-node=false", "--timeout", "120s")
        if retried:
            print("peer: peered again after Liqo's replicator wedge")
        return f"exit {rc}: {(out + err).strip()[-800:]}" if rc else ""

    s.run("peer with the peering user", peer_step)
    s.run("slice accepted, tenant live", lambda: _whole(prov, cons))
    s.run("info peer healthy", lambda: _info_healthy(liqo, cons, pid))
    s.run("unpeer", lambda: _ctl_step(liqo, "unpeer", *remote, "--skip-confirm", "--timeout", "120s"))
    s.run("delete peering-user", lambda: _ctl_step(
        liqo, "delete", "peering-user", "--consumer-cluster-id", cid, "--kubeconfig",
        prov.cluster.kubeconfig, "--skip-confirm"))
    s.run("peering user refused", lambda: _refused(prov, kubeconfig, cid))
    s.run("nothing left", lambda: "; ".join(_wait_nothing_left(prov, cid)))
    if s.failed:      # leave no peering nor user for the next test
        liqo.ctl("unpeer", "--kubeconfig", cons.cluster.kubeconfig, "--remote-kubeconfig",
                 prov.cluster.kubeconfig, "--skip-confirm", "--timeout", "120s", timeout=180)
        liqo.ctl("delete", "peering-user", "--consumer-cluster-id", cid, "--kubeconfig",
                 prov.cluster.kubeconfig, "--skip-confirm", timeout=120)
    return s.failed, time.monotonic() - s.t0
