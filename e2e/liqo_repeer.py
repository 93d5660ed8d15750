"""`liqoctl peer --networking-disabled` and `liqoctl unpeer` back to back (issue 45), for the Liqo
suites in both modes (test_liqo_replace.py, test_liqo_guard.py): TG_REPEER_ROUNDS rounds (default
20), each peer followed by the ResourceSlice it makes reaching Accepted and a live Tenant on the
provider, each unpeer at once after it."""

import os
import time

GROUP = "authentication.liqo.io"
ROUNDS = int(os.environ.get("TG_REPEER_ROUNDS", "20"))


def _condition(obj, kind):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c.get("status")
    return None


def _whole(prov, cons, timeout=90):
    """'' once the peering is whole (the slice liqoctl made Accepted on the consumer, the
    provider's Tenant live), else what is wrong after timeout seconds."""
    cid, pid = cons.cluster_id, prov.cluster_id
    deadline, wrong = time.monotonic() + timeout, "not looked at"
    while time.monotonic() < deadline:
        c, p = cons.cluster, prov.cluster
        ns = f"liqo-tenant-{pid}"
        if not c.exists(f"resourceslices.{GROUP}", pid, "-n", ns):
            wrong = f"no ResourceSlice {ns}/{pid} on the consumer"
        elif _condition(c.get_json(f"resourceslices.{GROUP}", pid, "-n", ns), "Authentication") != "Accepted":
            wrong = "the ResourceSlice is not Accepted"
        elif not p.exists(f"tenants.{GROUP}", cid, "-n", f"liqo-tenant-{cid}"):
            wrong = "no Tenant on the provider"
        elif p.get_json(f"tenants.{GROUP}", cid, "-n", f"liqo-tenant-{cid}")["metadata"].get(
                "deletionTimestamp"):
            wrong = "the provider's Tenant is being deleted"
        else:
            return ""
        time.sleep(0.25)      # each round waits here: look again soon after a miss
    return wrong


# What Liqo v1.2's crd-replicator logs when it is left half-stopped (docs/LIQO.md, "Liqo's own
# commands in each mode"): internal/crdReplicator/crdReplicator-operator.go.
REPLICATOR_WEDGED = "Failed to stop reflection"
SLICE_NOT_ACCEPTED = "Failed waiting for ResourceSlice authentication to be accepted"
# How many times `peer` unpeers and peers again on that wedge.
WEDGE_RETRIES = 2


def _replicator_log(cons):
    proc = getattr(cons, "processes", {}).get("crd-replicator")
    return proc.log_path if proc else None


def peer(liqo, cons, *args):
    """(rc, out, err, retried) of `liqoctl peer ARGS`. When it fails only because its slice was
    never Accepted and the consumer's crd-replicator (Liqo's, the consumer runs nothing of
    tenantgate's) logged meanwhile that it could not stop the old peering's reflections, that is
    Liqo's own state after an unpeer: unpeer (ARGS' first four: the two kubeconfigs) and peer
    once more, at most WEDGE_RETRIES times (the wedge has outlasted one retry: its renews stayed
    four minutes, and the unpeer that followed released it). Anything else is returned as it
    is."""
    log = _replicator_log(cons)
    retried = 0
    while True:
        at = log.stat().st_size if log and log.exists() else 0
        rc, out, err = liqo.ctl("peer", *args, timeout=180)
        if not rc or SLICE_NOT_ACCEPTED not in out + err or not log or retried == WEDGE_RETRIES:
            return rc, out, err, retried
        with open(log, "rb") as f:
            f.seek(at)
            if REPLICATOR_WEDGED not in f.read().decode(errors="replace"):
                return rc, out, err, retried
        liqo.ctl("unpeer", *args[:4], "--skip-confirm", "--timeout", "120s", timeout=180)
        retried += 1


def peer_unpeer_rounds(liqo, prov, cons, rounds=ROUNDS):
    """(failures, seconds): rounds of peer, check, unpeer; a failed round is unpeered again so
    the next starts from no peering."""
    both = ("--kubeconfig", cons.cluster.kubeconfig, "--remote-kubeconfig", prov.cluster.kubeconfig)
    failures, start = [], time.monotonic()
    for i in range(rounds):
        t0 = time.monotonic()
        rc, out, err, retried = peer(liqo, cons, *both, "--networking-disabled",
                                     "--create-virtual-node=false", "--timeout", "120s")
        wrong = f"liqoctl peer exit {rc}: {(out + err).strip()[-600:]}" if rc else _whole(prov, cons)
        rc, out, err = liqo.ctl("unpeer", *both, "--skip-confirm", "--timeout", "120s", timeout=180)
        if rc and not wrong:
            wrong = f"liqoctl unpeer exit {rc}: {(out + err).strip()[-600:]}"
        again = f" (peered again {retried}x after Liqo's replicator wedge)" if retried else ""
        print(f"round {i}: {time.monotonic() - t0:.1f}s {wrong or 'ok'}{again}")
        if wrong:
            failures.append(f"round {i}: {wrong}")
            liqo.ctl("unpeer", *both, "--skip-confirm", "--timeout", "120s", timeout=180)
    return failures, time.monotonic() - start
