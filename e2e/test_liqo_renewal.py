"""A Liqo v1.2.0 consumer keeps its access across renewals by a tenantgate provider (issue 36).

The bed of test_liqo_replace.py (the provider's Liqo with its authentication off,
tenantgate-webhook and tenantgate-signer with the provider controllers; the consumer's Liqo
fully on: its controller-manager and crd-replicator), except that the signer runs in own-signer
mode with the provider's cluster CA and `--max-cert-lifetime 90`: the kube signer's minimum of
600 s is too long for a test, and the cluster CA is what the provider's API server trusts for
client certificates, so the short certificates authenticate for real.

`liqoctl authenticate` and `liqoctl create resourceslice` peer the clusters; then the consumer's
kubeconfig Secrets (written by Liqo's identity controller) are looked at every few seconds, each
look a `kubectl auth whoami` on the provider with the Secret's kubeconfig, until two renewals
reached the consumer and the first certificate's NotAfter has passed.  What Liqo's consumer
does for a renewal: its localrenewer keeps a Renew per ControlPlane Identity, its crd-replicator
copies it to the provider and brings the status back, and the Identity takes the Renew's
`status.authParams`; a ResourceSlice's Identity follows the slice's replicated status.
"""

import base64
import calendar
import hashlib
import json
import time

import pytest
import yaml

from bed import openssl, wait_for
from liqo_replace_mode import GROUP, NEWEST, liqo_root, own_signer_args, replace_mode
from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_liqo import Liqo

pytestmark = pytest.mark.usefixtures("webhook")

LIFETIME_S = 90           # the signer's --max-cert-lifetime (its minimum)
RENEWALS = 2              # new certificates each kubeconfig must show
LOOK_EVERY_S = 3
SLICE = "renewpool"


@pytest.fixture(scope="module")
def bed(provider, consumer, crds, webhook, source_dir, signer_bin, tmp_path_factory):
    """Liqo on both clusters, tenantgate's signer in own-signer mode on the provider;
    yields (Liqo handle, provider's Liqo, consumer's Liqo, signer)."""
    work = tmp_path_factory.mktemp("liqo-renewal")
    with replace_mode(provider, consumer, source_dir, signer_bin, work, "n", own_signer=True,
                      signer_args=own_signer_args(provider, LIFETIME_S)) as (prov, cons, signer):
        yield Liqo(liqo_root(), NEWEST), prov, cons, signer


def _slice_accepted(cons, pid):
    rs = cons.cluster.get_json(f"resourceslices.{GROUP}", SLICE, "-n", f"liqo-tenant-{pid}")
    conds = (rs.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Authentication" and c.get("status") == "Accepted" for c in conds)


# --- one look at a kubeconfig Secret -----------------------------------------------------------

def _cert_facts(kubeconfig_text):
    """(serial, NotAfter as epoch seconds) of the kubeconfig's client certificate."""
    kc = yaml.safe_load(kubeconfig_text)
    pem = base64.b64decode(kc["users"][0]["user"]["client-certificate-data"])
    out = openssl("x509", "-noout", "-serial", "-enddate", "-dateopt", "iso_8601",
                  input=pem).decode()
    fields = dict(line.split("=", 1) for line in out.strip().splitlines())
    end = calendar.timegm(time.strptime(fields["notAfter"], "%Y-%m-%d %H:%M:%SZ"))
    return fields["serial"], end


def _look(provider, consumer, ns, identity, path):
    """The consumer's kubeconfig Secret for identity, used on the provider now:
    {"t", "serial", "not_after", "user"} or {"t", "error"}."""
    now = time.time()
    sec = consumer.kubectl("get", "secret", f"kubeconfig-{identity}", "-n", ns, "-o", "json",
                           check=False)
    if sec.returncode != 0:
        return {"t": now, "error": f"no Secret: {sec.stderr.strip()}"}
    data = json.loads(sec.stdout).get("data") or {}
    if "kubeconfig" not in data:
        return {"t": now, "error": "Secret without kubeconfig"}
    text = base64.b64decode(data["kubeconfig"]).decode()
    serial, end = _cert_facts(text)
    path.write_text(text)
    who = provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=path, check=False)
    if who.returncode != 0:
        return {"t": now, "serial": serial, "not_after": end,
                "error": f"whoami: {who.stderr.strip()}"}
    user = json.loads(who.stdout)["status"]["userInfo"]
    return {"t": now, "serial": serial, "not_after": end, "user": user["username"]}


class Watch:
    """Looks per identity, in order, and what explains a failure."""

    def __init__(self, sides, signer):
        self.sides, self.signer = sides, signer
        self.looks = {}               # identity -> [look]
        self.setup_error = None

    def serials(self, identity):
        out = []
        for look in self.looks.get(identity, []):
            if "serial" in look and (not out or out[-1] != look["serial"]):
                out.append(look["serial"])
        return out

    def first_not_after(self, identity):
        return next((lk["not_after"] for lk in self.looks.get(identity, []) if "not_after" in lk),
                    None)

    def done(self, identity, now):
        first_end = self.first_not_after(identity)
        return (first_end is not None and now > first_end + LOOK_EVERY_S
                and len(set(self.serials(identity))) > RENEWALS)

    def report(self, identity):
        t0 = self.looks[identity][0]["t"] if self.looks.get(identity) else 0
        lines = [f"{lk['t'] - t0:6.1f}s {lk.get('serial', '-')} "
                 f"{lk.get('user') or lk.get('error')}" for lk in self.looks.get(identity, [])]
        return "\n".join(lines)

    def logs(self, lines=25):
        out = [f"--- {s.cluster.name} {n}:\n{p.process.log_tail(lines)}"
               for s in self.sides for n, p in s.processes.items()]
        return "\n".join(out + [f"--- tenantgate-signer:\n{self.signer.process.log_tail(lines)}"])


def _renews(cluster, ns):
    """Renews in ns: {name: serial of status.authParams.signedCRT or None}, for the report."""
    out = {}
    got = cluster.kubectl("get", f"renews.{GROUP}", "-n", ns, "-o", "json", check=False)
    for r in (json.loads(got.stdout)["items"] if got.returncode == 0 else []):
        crt = ((r.get("status") or {}).get("authParams") or {}).get("signedCRT")
        serial = None
        if crt:
            serial = openssl("x509", "-noout", "-serial",
                             input=base64.b64decode(crt)).decode().strip()
        out[r["metadata"]["name"]] = serial
    return out


@pytest.fixture(scope="module")
def watch(bed, tmp_path_factory):
    liqo, prov, cons, signer = bed
    cid, pid = cons.cluster_id, prov.cluster_id
    ns = f"liqo-tenant-{pid}"
    work = tmp_path_factory.mktemp("renewal-looks")
    both = ("--kubeconfig", cons.cluster.kubeconfig,
            "--remote-kubeconfig", prov.cluster.kubeconfig, "--timeout", "120s")
    w = Watch((prov, cons), signer)
    identities = (f"controlplane-{pid}", f"resourceslice-{SLICE}")
    try:
        rc, out, err = liqo.ctl("authenticate", *both)
        assert rc == 0, f"liqoctl authenticate: {out}{err}"
        rc, out, err = liqo.ctl("create", "resourceslice", SLICE, "--remote-cluster-id", pid,
                                "--cpu", "1", "--memory", "1Gi", "--pods", "5",
                                "--kubeconfig", cons.cluster.kubeconfig)
        assert rc == 0, f"liqoctl create resourceslice: {out}{err}"
        wait_for(lambda: _slice_accepted(cons, pid), timeout=90, interval=0.5,
                 what="slice Accepted")
        wait_for(lambda: cons.cluster.exists("secret", f"kubeconfig-{identities[1]}", "-n", ns),
                 timeout=90, interval=0.5, what="the slice's kubeconfig Secret")
    except Exception as e:      # every test reports it, with the logs
        w.setup_error = f"{type(e).__name__}: {e}"
    deadline = time.time() + LIFETIME_S * 2 + 60
    while w.setup_error is None and time.time() < deadline:
        for identity in identities:
            w.looks.setdefault(identity, []).append(
                _look(prov.cluster, cons.cluster, ns, identity, work / f"{identity}.kubeconfig"))
        now = time.time()
        if all(w.done(i, now) for i in identities):
            break
        time.sleep(LOOK_EVERY_S)
    w.renews = {"consumer": _renews(cons.cluster, ns), "provider": _renews(prov.cluster, f"liqo-tenant-{cid}")}
    for identity in identities:
        print(f"{identity}: serials {w.serials(identity)}\n{w.report(identity)}")
    print(f"Renews: {w.renews}")
    yield w
    cons.cluster.kubectl("delete", f"resourceslices.{GROUP}", SLICE, "-n", ns, "--timeout=120s",
                         check=False, timeout=150)
    liqo.ctl("unauthenticate", *both)


def _keeps_access(watch, identity, username):
    assert watch.setup_error is None, f"{watch.setup_error}\n{watch.logs()}"
    looks = watch.looks[identity]
    why = f"{identity}:\n{watch.report(identity)}\nRenews {watch.renews}\n{watch.logs()}"
    first_end = watch.first_not_after(identity)
    assert first_end is not None and first_end - looks[0]["t"] <= LIFETIME_S + 5, \
        f"not the short-lived certificate\n{why}"
    failed = [lk for lk in looks if "user" not in lk]
    assert not failed, f"{len(failed)} of {len(looks)} looks failed\n{why}"
    assert all(lk["user"] == username for lk in looks), why
    serials = watch.serials(identity)
    assert len(serials) == len(set(serials)) and len(serials) > RENEWALS, \
        f"{len(serials) - 1} renewals reached the consumer\n{why}"
    assert looks[-1]["t"] > first_end, f"the first certificate had not expired at the last look\n{why}"


def test_liqo_consumer_controlplane_kubeconfig_survives_renewals(watch, bed):
    """The ControlPlane Identity's kubeconfig: renewed through Liqo's Renew."""
    _, prov, cons, _ = bed
    _keeps_access(watch, f"controlplane-{prov.cluster_id}", cons.cluster_id)


def test_liqo_consumer_resourceslice_kubeconfig_survives_renewals(watch, bed):
    """The ResourceSlice Identity's kubeconfig: renewed through the slice's status."""
    _, _, cons, _ = bed
    user = f"{SLICE}-{hashlib.sha256(cons.cluster_id.encode()).hexdigest()[:12]}"
    _keeps_access(watch, f"resourceslice-{SLICE}", user)
