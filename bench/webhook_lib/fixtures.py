"""The bench's fixtures: consumers (keys, nonces, Namespaces, nonce Secrets), their Tenants
valid and invalid, each wrapped in an AdmissionReview, and the Go peer's view of the cluster."""
import base64
import json
import os
import statistics

from .proc import run


def review(uid, op, tenant):
    req = {
        "uid": uid,
        "kind": {"group": "authentication.liqo.io", "version": "v1beta1", "kind": "Tenant"},
        "resource": {"group": "authentication.liqo.io", "version": "v1beta1", "resource": "tenants"},
        "requestKind": {"group": "authentication.liqo.io", "version": "v1beta1", "kind": "Tenant"},
        "requestResource": {"group": "authentication.liqo.io", "version": "v1beta1", "resource": "tenants"},
        "name": tenant["metadata"]["name"],
        "namespace": tenant["metadata"]["namespace"],
        "operation": op,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": None if op == "DELETE" else tenant,
        "oldObject": tenant if op == "DELETE" else None,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": op.capitalize() + "Options"},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def retarget(tenant, cid):
    """The same proof presented as consumer cid (the CSR's CN stays what it was)."""
    t = json.loads(json.dumps(tenant))
    t["metadata"].update(name=cid, namespace=f"liqo-tenant-{cid}", labels={"liqo.io/remote-cluster-id": cid})
    t["spec"]["clusterID"] = cid
    return t


FILLER_NS = "bench-filler"


def filler_tenants(n):
    """n stored Tenants that no request is about (TG_BENCH_CACHED_TENANTS)."""
    return [{"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
             "metadata": {"name": f"filler-{i:05d}", "namespace": FILLER_NS},
             "spec": {"clusterID": f"filler-{i:05d}"}} for i in range(n)]


def consumer(cli, keys, cid, peer, objects):
    """One consumer: its key, nonce, Namespace and nonce Secret (appended to objects, and
    to the peer's file); returns the `generate tenant` command for its key and nonce."""
    nonce = run([cli, "nonce"]).stdout.strip()
    kdir = os.path.join(keys, cid)
    run([cli, "keygen", "--out", kdir])
    ns = f"liqo-tenant-{cid}"
    peer["namespaces"][ns] = {"liqo.io/tenant-namespace": "true", "liqo.io/remote-cluster-id": cid}
    peer["nonces"][cid] = nonce
    objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {
        "liqo.io/tenant-namespace": "true", "liqo.io/remote-cluster-id": cid}}})
    objects.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": "liqo-nonce", "namespace": ns, "labels": {
                        "liqo.io/nonce": "true", "liqo.io/remote-cluster-id": cid}},
                    "data": {"nonce": base64.b64encode(nonce.encode()).decode()}})
    return [cli, "generate", "tenant", "--offline", "--key", os.path.join(kdir, "privateKey.pem"),
            "--nonce", nonce, "-o", "json"]


def flip_signature(tenant, i):
    """One bit of the signature flipped: denied after the first verify."""
    bad = json.loads(json.dumps(tenant))
    sig = bytearray(base64.b64decode(bad["spec"]["signature"]))
    sig[i % len(sig)] ^= 0x01
    bad["spec"]["signature"] = base64.b64encode(bytes(sig)).decode()
    return bad


def make_burst_fixtures(work, cli, n, peer):
    """Consumers of the apiserver burst only (created in the cluster just before it, so the
    rounds' caches stay as they were): n Tenants, one in a hundred with a flipped signature."""
    keys = os.path.join(work, "burst-keys")
    os.makedirs(keys)
    objects, valid, bad = [], [], []
    for i in range(n):
        cid = f"burst-{i:04d}"
        tenant = json.loads(run(consumer(cli, keys, cid, peer, objects) + ["--cluster-id", cid]).stdout)
        if i % 100 == 50:
            bad.append(flip_signature(tenant, i))
        else:
            valid.append(tenant)
    path = os.path.join(work, "burst-consumers.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
    return {"burst_consumers": path, "burst_valid": valid, "burst_bad": bad}


def write_peer_cluster(work, name, peer):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(peer, f)
    return path


def make_fixtures(work, cli, n, burst, fillers=0):
    """Namespaces + nonce Secrets (one List), and the bodies: valid, invalid, mixed, noop;
    and burst consumers for the apiserver burst."""
    keys = os.path.join(work, "keys")
    os.makedirs(keys)
    ids = [f"bench-{i:04d}" for i in range(n)]
    objects, valid, flipped, wrong_cn = [], [], [], []
    peer = {"namespaces": {}, "nonces": {}, "tenants": {}}
    for i, cid in enumerate(ids):
        gen = consumer(cli, keys, cid, peer, objects)
        tenant = json.loads(run(gen + ["--cluster-id", cid]).stdout)
        valid.append(tenant)
        if i % 2 == 0:
            flipped.append(flip_signature(tenant, i))
        else:
            # Signed for this nonce by this key, but the CSR names another cluster:
            # both verifies pass, the subject check denies.
            wrong_cn.append(retarget(json.loads(run(gen + ["--cluster-id", cid + "-x"]).stdout), cid))

    def write_tsv(name, rows):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            for expect, doc in rows:
                f.write(expect + "\t" + json.dumps(doc, separators=(",", ":")) + "\n")
        return path

    def create(tenants, tag):
        return [review(f"{tag}-{i}", "CREATE", t) for i, t in enumerate(tenants)]

    files = {
        "valid": write_tsv("valid.tsv", [("allowed", r) for r in create(valid, "valid")]),
        "invalid": write_tsv("invalid.tsv", [("denied", r) for r in create(flipped, "flip")] +
                             [("denied", r) for r in create(wrong_cn, "wrongcn")]),
        "noop": write_tsv("noop.tsv", [("allowed", review(f"del-{i}", "DELETE", t)) for i, t in enumerate(valid)]),
    }
    # Mixed: valid, flipped, valid, wrong CN, ... (half of them denied).
    mixed, fl, wc = [], iter(create(flipped, "mflip")), iter(create(wrong_cn, "mwrong"))
    for i, r in enumerate(create(valid, "mvalid")):
        mixed.append(("allowed", r))
        bad = next(fl if i % 2 == 0 else wc, None)
        if bad:
            mixed.append(("denied", bad))
    files["mixed"] = write_tsv("mixed.tsv", mixed)
    # h2load posts one file per run.
    h2 = []
    for i, r in enumerate(create(valid[:8], "h2")):
        path = os.path.join(work, f"h2-valid-{i}.json")
        with open(path, "w") as f:
            json.dump(r, f, separators=(",", ":"))
        h2.append(path)
    files["h2_valid"] = h2
    files["h2_noop"] = os.path.join(work, "h2-noop.json")
    with open(files["h2_noop"], "w") as f:
        json.dump(review("h2-del", "DELETE", valid[0]), f, separators=(",", ":"))
    with open(os.path.join(work, "namespaces.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
    files["namespaces"] = os.path.join(work, "namespaces.json")
    if fillers:
        peer["tenants"][FILLER_NS] = [t["metadata"]["name"] for t in filler_tenants(fillers)]
    # The Go peer reads its cluster from a file, tenantgate from the apiserver: the rounds' file
    # holds what the cluster holds during the rounds, and the burst's consumers (created just
    # before the burst) go in a second file the peer is restarted with for the burst only, so
    # that idle and load RSS compare the same data on both sides.
    files["peer_cluster"] = write_peer_cluster(work, "peer-cluster.json", peer)
    if burst:
        burst_peer = json.loads(json.dumps(peer))
        files.update(make_burst_fixtures(work, cli, burst, burst_peer))
        files["peer_cluster_burst"] = write_peer_cluster(work, "peer-cluster-burst.json", burst_peer)
    files["valid_tenants"], files["flipped_tenants"] = valid, flipped
    files["body_bytes"] = statistics.median(len(json.dumps(r, separators=(",", ":")))
                                            for r in create(valid[:20], "size"))
    return files
