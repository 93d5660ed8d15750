"""A fault storm during onboarding, then invariants (issue 39, deliverable 3).  Marked slow.

TG_STORM_CONSUMERS (default 200) consumers onboard on the provider: tenant namespace and nonce
Secret (the provider signer fills the nonce), a Tenant from `generate tenant --offline`, then
TG_STORM_SLICES (default 2) ResourceSlices each, written as Liqo's replicator writes them.  The
consumers are simulated as in bench/onboard: keys from `kubectl-tenantgate keygen`, no consumer
cluster.  They go in 8 chunks, paced so that the Tenants arrive through the storm's first half
and the slices through its second.

Meanwhile storm_schedule.make_schedule(TG_STORM_SEED, TG_STORM_SECONDS) runs against the
provider: the signer SIGKILLed and restarted every few seconds, the webhook restarted, the API
server restarted twice, etcd stopped for 3 s.  The seed (random unless given) and the schedule
table are printed first; the same seed gives the same table.  Every client step retries what a
fault broke (kubectl apply is idempotent); nothing else helps the services along.

Invariants, each printed as `invariant: ... ok` or `... FAILED (details)`:
  accepted      every Tenant filled and every slice Authentication+Resources Accepted, each
                with a certificate whose public key is the Tenant's / the slice CSR's key
  one-approval  exactly one approved CSR per (object, key): Tenant CSRs by their
                liqo.io/remote-cluster-id label, slice CSRs by their tenantgate.io/resourceslice
                annotation, keys from spec.request
  admission     every stored Tenant and slice has an `allowed` line of the webhook's validation
                for its namespace, name and metadata.uid (log field object_uid), not a dry run
  orphans       after the slices and Tenants are deleted: no Secret but liqo-nonce, no
                RoleBinding in the tenant namespaces, no ClusterRoleBinding naming a consumer,
                no CSR of theirs left undecided (decided ones are the controller-manager's
                cleaner's: Kubernetes keeps them an hour; the signer never deletes CSRs)

Run: make test-storm, or TG_STORM_CONSUMERS=10 e2e/run -m slow test_fault_storm.py."""

import base64
import concurrent.futures
import hashlib
import json
import os
import random
import signal
import subprocess
import threading
import time

import pytest

from bed import ClusterError, free_port, openssl
from storm_invariants import (check_accepted, check_admission, check_one_approval, check_orphans,
                              report, slice_accepted, tenant_ns)
from storm_schedule import (APISERVER_RESTART, ETCD_PAUSE, ETCD_PAUSE_S, SIGNER_KILL,
                            WEBHOOK_RESTART, format_schedule, make_schedule)
from tenantgate_services import (INSTALL_NAMESPACE, WEBHOOK_SA, Webhook, WebhookInstall, built,
                                 tenant_namespace_manifest)
from test_signer import (NS, PROVIDER_CONTROLLERS, PROVIDER_ID, SA, Signer, _apply_signer_rbac,
                         _remove_signer_rbac)

pytestmark = pytest.mark.slow

CONSUMERS = int(os.environ.get("TG_STORM_CONSUMERS", "200"))
SLICES = int(os.environ.get("TG_STORM_SLICES", "2"))
STORM_S = float(os.environ.get("TG_STORM_SECONDS", "90"))
CHUNKS = 8
# Full names: plain `resourceslices` is Kubernetes' own resource.k8s.io kind
SLICES_RES = "resourceslices.authentication.liqo.io"
TENANTS_RES = "tenants.authentication.liqo.io"
STEP_TIMEOUT = 300          # one client step retried through the faults
SETTLE_TIMEOUT = 600        # everything accepted once the storm is over


def _seed():
    env = os.environ.get("TG_STORM_SEED")
    return int(env) if env else random.SystemRandom().randrange(1 << 31)


# --- the provider: webhook and signer as host processes ----------------------------------------

@pytest.fixture(scope="module")
def bed(provider, source_dir, build_dir, tmp_path_factory):
    """The provider as test_signer.py sets it up, without a consumer cluster."""
    from conftest import install_crds     # conftest's own module, as pytest loaded it
    install_crds(provider, source_dir)
    inst = WebhookInstall(provider, source_dir, tmp_path_factory.mktemp("storm-install"), free_port())
    hook = signer = None
    try:
        inst.install()
        _apply_signer_rbac(provider, source_dir)
        kc = provider.serviceaccount_kubeconfig(INSTALL_NAMESPACE, WEBHOOK_SA, duration="6h")
        hook = Webhook(built(build_dir, "webhook/tenantgate-webhook"), inst, kc,
                       tmp_path_factory.mktemp("storm-webhook"))
        hook.start()
        hook.wait_ready()
        skc = provider.serviceaccount_kubeconfig(NS, SA, duration="6h")
        signer = Signer(built(build_dir, "signer/tenantgate-signer"), provider, skc,
                        tmp_path_factory.mktemp("storm-signer"), "signer-provider",
                        "--cluster-id", PROVIDER_ID, "--controllers", PROVIDER_CONTROLLERS).start()
        yield hook, signer
    finally:
        if signer:
            signer.stop()
        if hook:
            hook.stop()
        _remove_signer_rbac(provider)
        inst.uninstall()


# --- the storm ---------------------------------------------------------------------------------

class Storm(threading.Thread):
    """Runs the schedule against the provider; .done holds (planned t, started t, fault, note)."""

    def __init__(self, schedule, provider, hook, signer):
        super().__init__(daemon=True)
        self.schedule, self.provider, self.hook, self.signer = schedule, provider, hook, signer
        self.stopping = threading.Event()
        self.done = []
        self.error = None

    def run(self):
        t0 = time.monotonic()
        try:
            for t, fault in self.schedule:
                if self.stopping.wait(max(0.0, t0 + t - time.monotonic())):
                    return
                started = time.monotonic() - t0
                note = self.strike(fault)
                self.done.append((t, started, fault, note))
                print(f"storm: {started:6.1f} s {fault} {note}", flush=True)
        except Exception as e:          # reported by the test, after the invariants
            self.error = f"{type(e).__name__}: {e}"

    def strike(self, fault):
        t = time.monotonic()
        if fault == SIGNER_KILL:
            pid = self.signer.process.pid
            self.signer.kill()
            self.signer.process.stop()          # reaped already: closes its log
            self.signer.start()
            return f"(pid {pid} -> {self.signer.process.pid})"
        if fault == WEBHOOK_RESTART:
            self.hook.restart()
            return f"(ready after {time.monotonic() - t:.1f} s)"
        if fault == APISERVER_RESTART:
            old, new, took = self.provider.restart_apiserver()
            return f"(pid {old} -> {new}, {took:.1f} s)"
        if fault == ETCD_PAUSE:
            pid = self.provider.pids()["etcd"]
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(ETCD_PAUSE_S)
            finally:
                os.kill(pid, signal.SIGCONT)
            return f"(pid {pid} stopped {ETCD_PAUSE_S:.0f} s)"
        raise ValueError(fault)


FAILED_TRIES = []       # (what, error) of each client step a fault broke, printed at the end


def retry(step, what, timeout=STEP_TIMEOUT):
    """step() until it returns a true value; faults make it raise or return None meanwhile."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            out = step()
            if out:
                return out
        except (ClusterError, subprocess.SubprocessError, ValueError, KeyError) as e:
            last = e
            why = [line for line in str(e).splitlines() if line.strip()] or [type(e).__name__]
            FAILED_TRIES.append((what, why[-1][-200:]))    # kubectl's own message is last
        time.sleep(1.0)
    raise AssertionError(f"{what}: not done within {timeout} s through the storm (last: {last})")


# --- the consumers -----------------------------------------------------------------------------

def cid_of(i):
    return f"storm-c{i:04d}"




def slice_manifest(cid, j, key_file):
    """A slice as Liqo's replicator writes it on the provider (as bench/onboard makes them)."""
    name = f"slice-{j:02d}"
    user = f"{name}-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"    # PROTOCOL.md 5a
    csr = openssl("req", "-new", "-key", str(key_file), "-subj", f"/O={cid}/CN={user}").decode()
    return {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": name, "namespace": tenant_ns(cid), "labels": {
                "liqo.io/replication": "false", "liqo.io/replicated": "true",
                "liqo.io/originID": cid, "liqo.io/remote-cluster-id": cid,
                "liqo.io/remoteID": PROVIDER_ID}},
            "spec": {"class": "default", "consumerClusterID": cid, "providerClusterID": PROVIDER_ID,
                     "csr": base64.b64encode(csr.encode()).decode(),
                     "resources": {"cpu": "1", "memory": "2Gi"}}}


def apply_list(provider, items, path):
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    retry(lambda: provider.kubectl("apply", "-f", path, timeout=120), f"kubectl apply -f {path.name}")


def nonces_of(provider, cids):
    """{cid: nonce} of the filled nonce Secrets, once every one of cids is filled."""
    items = provider.get_json("secrets", "-A", "-l", "liqo.io/nonce=true", timeout=30)["items"]
    got = {}
    for s in items:
        cid = s["metadata"]["labels"].get("liqo.io/remote-cluster-id")
        if cid in cids and (s.get("data") or {}).get("nonce"):
            got[cid] = base64.b64decode(s["data"]["nonce"]).decode()
    return got if len(got) == len(cids) else None


def tenants_filled(provider, cids):
    items = provider.get_json(TENANTS_RES, "-A", timeout=30)["items"]
    filled = {t["metadata"]["name"] for t in items
              if ((t.get("status") or {}).get("authParams") or {}).get("signedCRT")}
    return set(cids) <= filled




def onboard(provider, cli, keys, work):
    """Every consumer's Tenant, then its slices, chunk after chunk (paced); returns the ids; waits for
    nothing beyond what the next step needs (the nonces, the Tenants before their slices)."""
    cids = [cid_of(i) for i in range(CONSUMERS)]
    size = max(1, -(-CONSUMERS // CHUNKS))
    chunks = [cids[k:k + size] for k in range(0, CONSUMERS, size)]
    pool = concurrent.futures.ThreadPoolExecutor(2)
    t0 = time.monotonic()
    pace = STORM_S / 2 / len(chunks)        # Tenants over the storm's first half, slices the second

    def not_before(t):
        time.sleep(max(0.0, t0 + t - time.monotonic()))
    for k, chunk in enumerate(chunks):
        not_before(k * pace)
        objs = []
        for cid in chunk:
            objs.append(tenant_namespace_manifest(cid))
            objs.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                         "metadata": {"name": "liqo-nonce", "namespace": tenant_ns(cid),
                                      "labels": {"liqo.io/nonce": "true",
                                                 "liqo.io/remote-cluster-id": cid}}})
        apply_list(provider, objs, work / f"consumers-{k}.json")
        nonces = retry(lambda: nonces_of(provider, chunk), f"nonces of chunk {k}")

        def gen(cid):
            rc, out, err = cli("generate", "tenant", "--offline", "--key", keys[cid],
                               "--cluster-id", cid, "--nonce", nonces[cid], "-o", "json")
            assert rc == 0, err
            return json.loads(out)
        apply_list(provider, list(pool.map(gen, chunk)), work / f"tenants-{k}.json")
        print(f"onboard: chunk {k}: {len(chunk)} Tenants applied", flush=True)
    for k, chunk in enumerate(chunks):
        not_before(STORM_S / 2 + k * pace)
        retry(lambda: tenants_filled(provider, chunk), f"Tenants of chunk {k} filled")
        jobs = [(cid, j) for cid in chunk for j in range(SLICES)]
        slices = list(pool.map(lambda job: slice_manifest(job[0], job[1], keys[job[0]]), jobs))
        apply_list(provider, slices, work / f"slices-{k}.json")
        print(f"onboard: chunk {k}: {len(slices)} slices applied", flush=True)
    pool.shutdown()
    return cids


# --- the test ----------------------------------------------------------------------------------

def make_keys(cli, work):
    def one(i):
        d = work / "keys" / cid_of(i)
        rc, _, err = cli("keygen", "--out", d)
        assert rc == 0, err
        return cid_of(i), str(d / "privateKey.pem")
    (work / "keys").mkdir(mode=0o700)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        return dict(ex.map(one, range(CONSUMERS)))


def test_onboarding_through_a_fault_storm_keeps_the_invariants(provider, bed, cli, tmp_path):
    hook, signer = bed
    seed = _seed()
    schedule = make_schedule(seed, STORM_S)
    print(f"\nstorm: TG_STORM_SEED={seed} ({CONSUMERS} consumers x {SLICES} slices, "
          f"{STORM_S:.0f} s storm)\n{format_schedule(schedule)}", flush=True)
    keys = make_keys(cli, tmp_path)
    storm = Storm(schedule, provider, hook, signer)
    cids = []
    t0 = time.monotonic()
    try:
        storm.start()
        cids = onboard(provider, cli, keys, tmp_path)
        print(f"onboard: all applied at {time.monotonic() - t0:.1f} s", flush=True)
        storm.join()
        print(f"storm: over at {time.monotonic() - t0:.1f} s ({len(storm.done)} faults)", flush=True)

        def all_accepted():
            if not tenants_filled(provider, cids):
                return None
            slices = provider.get_json(SLICES_RES, "-A", timeout=60)["items"]
            return sum(1 for s in slices if slice_accepted(s)) >= CONSUMERS * SLICES
        retry(all_accepted, "every Tenant filled and slice accepted", timeout=SETTLE_TIMEOUT)
        print(f"onboard: all accepted at {time.monotonic() - t0:.1f} s", flush=True)
    finally:
        storm.stopping.set()
        storm.join()
    tenants = provider.get_json(TENANTS_RES, "-A")["items"]
    tenants = [t for t in tenants if t["metadata"]["name"] in set(cids)]
    slices = [s for s in provider.get_json(SLICES_RES, "-A")["items"]
              if s["metadata"]["namespace"] in {tenant_ns(c) for c in cids}]
    ok = [report("every Tenant and slice Accepted with a certificate for its own key",
                 check_accepted(tenants, slices, cids, SLICES)),
          report("exactly one approved CSR per (object, key)",
                 check_one_approval(provider.get_json("csr")["items"], cids, SLICES)),
          report("every stored Tenant and slice admitted by the webhook (name + uid)",
                 check_admission(tenants, slices, sorted(hook.log_dir.glob("tenantgate-webhook-*.log"))))]

    # Deletion, then what must be gone with the objects.
    for kind in (SLICES_RES, TENANTS_RES):
        retry(lambda: provider.kubectl("delete", kind, "--all", "-A", "--wait=false", timeout=120),
              f"delete {kind}")
        retry(lambda: not provider.get_json(kind, "-A")["items"], f"every {kind} gone", timeout=180)
    orphans = {}

    def clean():
        orphans["r"] = check_orphans(*(provider.get_json(k, *a)["items"] for k, *a in (
            ("secrets", "-A"), ("rolebindings", "-A"), ("clusterrolebindings",), ("csr",))), cids)
        return not orphans["r"][0]
    try:
        retry(clean, "no orphans", timeout=60)
    except AssertionError:
        pass
    ok.append(report("no orphaned CSRs, Secrets, RoleBindings, ClusterRoleBindings", orphans["r"]))
    print(f"storm: {len(FAILED_TRIES)} client steps failed under a fault and were retried", flush=True)
    for what, err in FAILED_TRIES[:10]:
        print(f"  retried: {what}: {err}", flush=True)
    print(f"storm: TG_STORM_SEED={seed}, {time.monotonic() - t0:.1f} s in all", flush=True)
    for cid in cids:
        provider.delete_namespace(tenant_ns(cid))
    assert storm.error is None, f"a fault could not be run: {storm.error}"
    assert all(ok), "an invariant failed (see the invariant: lines)"
    assert not hook.problems, hook.problems
