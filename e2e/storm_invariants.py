"""The fault storm's invariants (test_fault_storm.py), as pure checks of what was read back.

Each check_*() takes objects as the API server returned them (dicts) and returns
(problems, summary): an empty problems list is "ok".  No cluster here; keys and certificates
are read with the openssl CLI.  test_storm_invariants.py shows each one failing."""

import base64
import json
from pathlib import Path

from bed import openssl


def tenant_ns(cid):
    return f"liqo-tenant-{cid}"


def slice_accepted(s):
    conds = {c.get("type"): c.get("status") for c in (s.get("status") or {}).get("conditions") or []}
    return (conds.get("Authentication") == "Accepted" and conds.get("Resources") == "Accepted"
            and ((s.get("status") or {}).get("authParams") or {}).get("signedCRT"))


ED25519_SPKI = bytes.fromhex("302a300506032b6570032100")    # SubjectPublicKeyInfo before the 32 bytes


def pem_key(pem_text):
    """DER SubjectPublicKeyInfo of a PEM public key."""
    return base64.b64decode("".join(line for line in pem_text.splitlines() if "-----" not in line))


def tenant_key(public_key_b64):
    """A Tenant's spec.publicKey (Liqo: the raw 32-byte Ed25519 key; PEM also read) as DER."""
    raw = base64.b64decode(public_key_b64)
    return pem_key(raw.decode()) if raw.startswith(b"-----") else ED25519_SPKI + raw


def cert_key(crt_b64):
    return pem_key(openssl("x509", "-noout", "-pubkey", input=base64.b64decode(crt_b64)).decode())


def csr_key(csr_pem_bytes):
    return pem_key(openssl("req", "-noout", "-pubkey", input=csr_pem_bytes).decode())


def check_accepted(tenants, slices, cids, per):
    bad = []
    by_name = {t["metadata"]["name"]: t for t in tenants}
    for cid in cids:
        t = by_name.get(cid)
        crt = (((t or {}).get("status") or {}).get("authParams") or {}).get("signedCRT")
        if not crt:
            bad.append(f"Tenant {cid} not filled")
        elif cert_key(crt) != tenant_key(t["spec"]["publicKey"]):
            bad.append(f"Tenant {cid}: certificate for another key")
    want = {(tenant_ns(c), f"slice-{j:02d}") for c in cids for j in range(per)}
    have = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in slices}
    for key in sorted(want):
        s = have.get(key)
        if not s or not slice_accepted(s):
            bad.append(f"slice {key[0]}/{key[1]} not accepted: {((s or {}).get('status') or {}).get('conditions')}")
        elif cert_key(s["status"]["authParams"]["signedCRT"]) != csr_key(base64.b64decode(s["spec"]["csr"])):
            bad.append(f"slice {key[0]}/{key[1]}: certificate for another key")
    return bad, f"{len(cids)} Tenants, {len(want)} slices"


def approved(csr):
    return any(c.get("type") == "Approved" for c in (csr.get("status") or {}).get("conditions") or [])


def csr_object(csr):
    """("tenant", cid) or ("slice", "ns/name") the signer made this CSR for, else None."""
    meta = csr["metadata"]
    ref = (meta.get("annotations") or {}).get("tenantgate.io/resourceslice")
    if ref:
        return ("slice", ref)
    labels = meta.get("labels") or {}
    if labels.get("liqo.io/remote-tenant-csr") == "true":
        return ("tenant", labels.get("liqo.io/remote-cluster-id"))
    return None


def check_one_approval(csrs, cids, per):
    counts, states = {}, {"approved": 0, "other": 0}
    for csr in csrs:
        obj = csr_object(csr)
        if obj is None:
            continue
        states["approved" if approved(csr) else "other"] += 1
        if approved(csr):
            k = (obj, csr_key(base64.b64decode(csr["spec"]["request"])))
            counts[k] = counts.get(k, 0) + 1
    objects = {o for o, _ in counts}
    want = {("tenant", c) for c in cids} | {("slice", f"{tenant_ns(c)}/slice-{j:02d}")
                                             for c in cids for j in range(per)}
    bad = [f"{o}: {n} approved CSRs for one key" for (o, _), n in counts.items() if n != 1]
    bad += [f"{o}: no approved CSR" for o in sorted(want - objects)]
    bad += [f"{o}: approved CSRs for {n} keys" for o in objects
            for n in [sum(1 for (p, _) in counts if p == o)] if n > 1]
    return bad, f"{states['approved']} approved, {states['other']} not approved"


def accept_lines(log_paths):
    """{(path, namespace, name, object_uid)} of the webhook's allowed, non-dry-run validations."""
    out = set()
    for p in log_paths:
        for raw in Path(p).read_text(errors="replace").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if (line.get("msg") == "admission" and line.get("verdict") == "allowed"
                    and str(line.get("path", "")).startswith("/validate/") and not line.get("dry_run")):
                out.add((line["path"], line.get("namespace"), line.get("tenant"), line.get("object_uid")))
    return out


def check_admission(tenants, slices, log_paths):
    seen = accept_lines(log_paths)
    bad = []
    for path, items in (("/validate/tenants", tenants), ("/validate/resourceslices", slices)):
        for o in items:
            m = o["metadata"]
            if (path, m["namespace"], m["name"], m["uid"]) not in seen:
                bad.append(f"{path} {m['namespace']}/{m['name']} uid {m['uid']}: no accept line")
    return bad, f"{len(seen)} accept lines in {len(log_paths)} webhook logs"


def check_orphans(secrets, rolebindings, clusterrolebindings, csrs, cids):
    """What is left of the consumers cids once their slices and Tenants are gone."""
    nss = {tenant_ns(c) for c in cids}
    ours = set(cids)
    bad = [f"Secret {m['namespace']}/{m['name']}" for m in (s["metadata"] for s in secrets)
           if m["namespace"] in nss and m["name"] != "liqo-nonce"]
    bad += [f"RoleBinding {m['namespace']}/{m['name']}" for m in (rb["metadata"] for rb in rolebindings)
            if m["namespace"] in nss]
    bad += [f"ClusterRoleBinding {crb['metadata']['name']}" for crb in clusterrolebindings
            if any(s.get("name") in ours for s in crb.get("subjects") or [])]
    left = 0
    for csr in csrs:
        obj = csr_object(csr)
        if obj and (obj[1] in ours or obj[1].split("/")[0] in nss):
            left += 1
            conds = (csr.get("status") or {}).get("conditions") or []
            if not any(c.get("type") in ("Approved", "Denied") for c in conds):
                bad.append(f"CSR {csr['metadata']['name']} for {obj} undecided")
    return bad, f"{left} decided CSRs left for the controller-manager's cleaner"


def report(name, result):
    bad, info = result
    if bad:
        shown = "; ".join(bad[:8]) + (f"; ... {len(bad) - 8} more" if len(bad) > 8 else "")
        print(f"invariant: {name} FAILED ({len(bad)}: {shown})", flush=True)
    else:
        print(f"invariant: {name} ok ({info})", flush=True)
    return not bad
