"""One owner for every name a certificate carries (issue 44, findings 3, 4, 5, 11, fix B;
docs/auth.md "Names"), acting as the token holder: HTTPS requests to a running tenantgate-auth
(host process, its ServiceAccount's token, exactly manifests/auth/rbac.yaml and rbac-v1.yaml)
in front of the bed's real API server.

  3   the v0.10 peering token asks /identity/certificate for the id of a consumer that
      authenticated by Tenant                                      -> NameOwned, nothing issued
  4   a v1 bootstrap token asks /v1/nonce, /v1/tenant for an id /identity/certificate issued
                                                                   -> NameOwned, nothing written
  5   a v1 bootstrap token asks for `ops-...`, a user an admin bound to `view`
                                                                   -> NameBound, nothing written
  11  the v0.10 token asks for a ResourceSlice's user that looks like a UUID -> NameOwned
  race /identity/certificate and /v1/tenant for one id at once: one NameClaim, one winner
  reserved: liqoctl's peering-user form                            -> NameReserved
  webhook: `kubectl apply` of a valid Tenant for an id the token path claimed -> NameOwned, and
      for liqoctl's peering-user form -> NameReserved (the Tenant flow's own admission)
  approver: the token path's claim lands after the Tenant's admission -> its CSR Denied NameOwned;
      an admin's binding names a Tenant's id (User) or a slice's group -> Denied NameBound;
      Liqo's offload RoleBinding for the id does not block

Setup (the victims' state) is made as the admin: a Tenant made offline by `kubectl tenantgate
generate tenant` (valid, so a running webhook admits it), a slice as Liqo's replicator writes
it, a ClusterRoleBinding or RoleBinding. tenantgate-auth's refusals need no signer (they come
before anything is written); the approver's tests run the provider's signer.
"""

import base64
import concurrent.futures
import hashlib
import json
import uuid
from pathlib import Path

import pytest

from bed import openssl, wait_for
from tenantgate_services import (denial, nonce_secret_manifest, tenant_namespace_manifest,  # noqa: F401
                                 webhook, webhook_install)
from test_auth_server import CONSUMER_ROLE, AuthServer, rbac_in
from test_auth_v1 import one_string, rbac_v1_in, token_of
from test_signer import PROVIDER_ID, csr_condition, installed, provider_signer, tenant_csrs  # noqa: F401

GROUP = "authentication.liqo.io"


def claim_object(name):
    return "n-" + hashlib.sha256(name.encode()).hexdigest()


@pytest.fixture(scope="module")
def names(provider, crds, cli, source_dir, build_dir, tmp_path_factory):
    ns = "names-" + uuid.uuid4().hex[:8]
    tokens_ns = f"{ns}-tokens"
    provider.create_namespace(ns)
    made_role = not provider.exists("clusterrole", CONSUMER_ROLE)
    if made_role:
        provider.apply((Path(source_dir) / "manifests" / "signer" / "remote-consumer-clusterrole.yaml").read_text())
    provider.apply(rbac_in(source_dir, ns))
    provider.apply(rbac_v1_in(source_dir, ns, tokens_ns))
    work = tmp_path_factory.mktemp("names")
    server = AuthServer(provider, str(build_dir / "auth" / "tenantgate-auth"), ns, work,
                        "--token-namespace", tokens_ns)
    server.tokens_ns = tokens_ns
    server.url = f"https://127.0.0.1:{server.port}"
    server.work = work
    server.ids = []                    # cluster ids whose namespaces, CSRs and claims go at the end
    server.cluster_objects = []        # (kind, name)
    words = one_string(cli, provider, server)          # a reusable v1 bootstrap token
    server.v1_token = token_of(words)
    yield server
    server.stop()
    for cid in server.ids:
        provider.kubectl("delete", "namespace", f"liqo-tenant-{cid}", "--ignore-not-found", "--wait=false",
                         check=False)
        provider.kubectl("delete", "csr", "-l", f"liqo.io/remote-cluster-id={cid}", "--ignore-not-found",
                         check=False)
        provider.kubectl("delete", "nameclaims.tenantgate.io", claim_object(cid), "--ignore-not-found",
                         check=False)
    for kind, name in server.cluster_objects:
        provider.kubectl("delete", kind, name, "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "tenantgate-auth-v1",
                     "--ignore-not-found", check=False)
    if made_role:
        provider.kubectl("delete", "clusterrole", CONSUMER_ROLE, "--ignore-not-found", check=False)
    provider.delete_namespace(tokens_ns)
    provider.delete_namespace(ns)


def new_id(names, cid=None):
    cid = cid or str(uuid.uuid4())
    names.ids.append(cid)
    return cid


def v1_post(names, path, obj):
    status, body = names.client._call("POST", path, json.dumps(obj).encode())
    return status, json.loads(body)


def v1_nonce(names, cid):
    return v1_post(names, "/v1/nonce", {"token": names.v1_token, "clusterID": cid})


def v1_tenant(names, cid, spec=None):
    tenant = {"apiVersion": f"{GROUP}/v1beta1", "kind": "Tenant", "metadata": {"name": cid},
              "spec": {"clusterID": cid, **(spec or {})}}
    return v1_post(names, "/v1/tenant", {"token": names.v1_token, "tenant": tenant})


def refused(got, status, reason):
    code, body = got[0], got[1]
    assert (code, body.get("reason")) == (status, reason), got
    assert body["message"].startswith("expected"), got
    return body["message"]


def offline_tenant(provider, cli, work, cid):
    """A valid Tenant for cid (its key made here), its namespace and nonce applied: (Tenant, key)."""
    nonce = base64.b64encode(uuid.uuid4().bytes * 4).decode()
    rc, _, err = cli("keygen", "--out", work / cid)
    assert rc == 0, err
    key = work / cid / "privateKey.pem"
    rc, out, err = cli("generate", "tenant", "--offline", "--key", key, "--cluster-id", cid, "--nonce", nonce,
                       "-o", "json")
    assert rc == 0, err
    tenant = json.loads(out)
    tenant["metadata"]["namespace"] = f"liqo-tenant-{cid}"
    provider.apply(tenant_namespace_manifest(cid))
    provider.apply(nonce_secret_manifest(cid, nonce))
    return tenant, key


def peer_by_tenant(provider, cli, work, cid):
    """A consumer that authenticated by Tenant: its namespace, nonce and a valid Tenant."""
    tenant, key = offline_tenant(provider, cli, work, cid)
    provider.apply(tenant)
    return key


def test_v010_token_cannot_take_a_tenant_consumers_id(provider, cli, names):
    """Finding 3."""
    cid = new_id(names)
    peer_by_tenant(provider, cli, names.work, cid)
    status, answer, _, _ = names.client.identity(cid, names.token())
    msg = refused((status, answer), 403, "NameOwned")
    assert f"Tenant liqo-tenant-{cid}/{cid}" in msg
    assert provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"] == []
    assert not provider.exists("rolebinding", "tenantgate-auth-identity", "-n", f"liqo-tenant-{cid}")


def test_v1_token_cannot_take_an_id_the_v010_endpoint_issued(provider, names):
    """Finding 4."""
    cid = new_id(names)
    status, answer, _, _ = names.client.identity(cid, names.token())
    assert status == 202, answer
    msg = refused(v1_nonce(names, cid), 403, "NameOwned")
    assert "of path token" in msg or "token " + cid in msg
    refused(v1_tenant(names, cid), 403, "NameOwned")
    ns = f"liqo-tenant-{cid}"
    assert not provider.exists("secret", "liqo-nonce", "-n", ns)
    assert not provider.exists(f"tenants.{GROUP}", cid, "-n", ns)
    # the claim says whose it is, and goes with the tenant namespace
    claim = provider.get_json("nameclaims.tenantgate.io", claim_object(cid))
    assert claim["spec"] == {"name": cid, "path": "token", "holder": cid}
    assert claim["metadata"]["ownerReferences"][0]["name"] == ns


def test_v1_token_cannot_take_a_bound_user(provider, names):
    """Finding 5: `ops` is a user an admin bound to view; a token holder may not peer as it."""
    ops = new_id(names, "ops-" + uuid.uuid4().hex[:6])
    crb = f"{ops}-view"
    names.cluster_objects.append(("clusterrolebinding", crb))
    provider.kubectl("create", "clusterrolebinding", crb, "--clusterrole=view", f"--user={ops}")
    msg = refused(v1_nonce(names, ops), 403, "NameBound")
    assert f"ClusterRoleBinding {crb}" in msg
    refused(v1_tenant(names, ops), 403, "NameBound")
    assert not provider.exists("namespace", f"liqo-tenant-{ops}")
    # a group bound in a namespace counts as well, on the v0.10 endpoint too
    grp = new_id(names)
    provider.kubectl("create", "rolebinding", "team", "--clusterrole=edit", f"--group={grp}", "-n", names.ns)
    status, answer, _, _ = names.client.identity(grp, names.token())
    assert f"RoleBinding {names.ns}/team" in refused((status, answer), 403, "NameBound")
    assert not provider.exists("namespace", f"liqo-tenant-{grp}")


def replicated_slice(names, consumer, key, name, user):
    """Slice `name` of consumer as Liqo's replicator writes it, its CSR for user under key."""
    csr = openssl("req", "-new", "-key", str(key), "-subj", f"/O={consumer}/CN={user}").decode()
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": name, "namespace": f"liqo-tenant-{consumer}", "labels": {
                "liqo.io/replication": "false", "liqo.io/replicated": "true",
                "liqo.io/originID": consumer, "liqo.io/remote-cluster-id": consumer,
                "liqo.io/remoteID": names.cluster_id}},
            "spec": {"class": "default", "consumerClusterID": consumer, "providerClusterID": names.cluster_id,
                     "csr": base64.b64encode(csr.encode()).decode(), "resources": {"cpu": "1"}}}


def test_v010_token_cannot_take_a_slice_user(provider, cli, names):
    """Finding 11: a slice named like the first 4 groups of a UUID has a UUID-shaped user."""
    consumer = new_id(names)
    key = peer_by_tenant(provider, cli, names.work, consumer)
    name = str(uuid.uuid4())[:23]
    user = f"{name}-{hashlib.sha256(consumer.encode()).hexdigest()[:12]}"
    uuid.UUID(user)                    # it has the v0.10 id shape
    provider.apply(replicated_slice(names, consumer, key, name, user))
    new_id(names, user)
    status, answer, _, _ = names.client.identity(user, names.token())
    assert f"ResourceSlice liqo-tenant-{consumer}/{name}" in refused((status, answer), 403, "NameOwned")
    assert provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={user}")["items"] == []


def test_reserved_forms(provider, names):
    cid = new_id(names, "liqo-peer-user-" + uuid.uuid4().hex[:8])
    refused(v1_nonce(names, cid), 403, "NameReserved")
    assert not provider.exists("namespace", f"liqo-tenant-{cid}")


def test_two_paths_racing_for_one_name_one_wins(provider, names):
    """/identity/certificate (path token) and /v1/tenant (path tenant, a Tenant the API server
    refuses at once: its publicKey is not base64) for one id: one NameClaim, the other NameOwned."""
    seen = set()
    for _ in range(3):
        cid = new_id(names)
        provider.apply(tenant_namespace_manifest(cid))
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            v010 = pool.submit(names.client.identity, cid, names.token())
            v1 = pool.submit(v1_tenant, names, cid, {"publicKey": "not base64!"})
            (s0, a0, _, _), (s1, a1) = v010.result(), v1.result()
        claim = provider.get_json("nameclaims.tenantgate.io", claim_object(cid))["spec"]
        csrs = provider.get_json("csr", "-l", f"liqo.io/remote-cluster-id={cid}")["items"]
        if claim["path"] == "token":
            assert s0 == 202 and len(csrs) == 1, a0
            refused((s1, a1), 403, "NameOwned")
        else:
            assert claim["path"] == "tenant" and (s1, a1["reason"]) == (403, "TenantRefused"), a1
            refused((s0, a0), 403, "NameOwned")
            assert csrs == []
        assert claim["holder"] == cid
        seen.add(claim["path"])
    print(f"\nwinners: {sorted(seen)}")


def test_webhook_refuses_a_tenant_for_a_claimed_or_reserved_id(provider, cli, names, webhook):  # noqa: F811
    """The Tenant flow through the real API server: an id /identity/certificate issued (its
    NameClaim: path token) cannot become a Tenant's, nor liqoctl's peering-user form."""
    cid = new_id(names)
    status, answer, _, _ = names.client.identity(cid, names.token())
    assert status == 202, answer
    tenant, _ = offline_tenant(provider, cli, names.work, cid)

    def refused_at_apply():
        got = provider.apply(tenant, check=False)
        return got.returncode != 0 and denial(got.stderr)
    reason, msg = wait_for(refused_at_apply, timeout=30, what="the webhook's NameClaim cache")
    assert reason == "NameOwned" and f"found NameClaim of path token holder {cid}" in msg, msg
    assert not provider.exists(f"tenants.{GROUP}", cid, "-n", f"liqo-tenant-{cid}")

    peer = new_id(names, "liqo-peer-user-" + uuid.uuid4().hex[:8])
    tenant, _ = offline_tenant(provider, cli, names.work, peer)
    got = provider.apply(tenant, check=False)
    assert got.returncode != 0 and denial(got.stderr)[0] == "NameReserved", got.stderr


def test_webhook_refuses_a_slice_whose_user_another_path_claimed(provider, cli, names, webhook):  # noqa: F811
    """Finding 11 the other way round: the v0.10 token took a UUID-shaped name first (its
    NameClaim: path token), then a consumer's replicated slice whose user is that name comes:
    the webhook refuses it NameOwned, so no slice certificate for it is ever asked."""
    consumer = new_id(names)
    key = peer_by_tenant(provider, cli, names.work, consumer)
    name = str(uuid.uuid4())[:23]
    user = new_id(names, f"{name}-{hashlib.sha256(consumer.encode()).hexdigest()[:12]}")
    status, answer, _, _ = names.client.identity(user, names.token())
    assert status == 202, answer
    rslice = replicated_slice(names, consumer, key, name, user)

    def refused_at_apply():
        got = provider.apply(rslice, check=False)
        reason_msg = denial(got.stderr, slices=True)
        return reason_msg if got.returncode != 0 and reason_msg[0] else None
    reason, msg = wait_for(refused_at_apply, timeout=30, what="the webhook's NameClaim cache")
    assert reason == "NameOwned" and f"found NameClaim of path token holder {user}" in msg, msg
    assert not provider.exists(f"resourceslices.{GROUP}", name, "-n", f"liqo-tenant-{consumer}")


def test_approver_denies_a_csr_whose_name_another_path_claimed(provider, cli, names, provider_signer):  # noqa: F811
    """The window between admission and approval: the Tenant is admitted while nothing claims
    its id, then tenantgate-auth's token path claims it (made here as the admin, with the signer
    stopped, to hold the window open). The approver's claim finds it: Denied NameOwned."""
    cid = new_id(names)
    tenant, _ = offline_tenant(provider, cli, names.work, cid)
    provider_signer.stop()
    try:
        provider.apply(tenant)
        ns = provider.get_json("namespace", f"liqo-tenant-{cid}")
        provider.create({"apiVersion": "tenantgate.io/v1alpha1", "kind": "NameClaim",
                         "metadata": {"name": claim_object(cid), "ownerReferences": [
                             {"apiVersion": "v1", "kind": "Namespace", "name": ns["metadata"]["name"],
                              "uid": ns["metadata"]["uid"]}]},
                         "spec": {"name": cid, "path": "token", "holder": cid}})
    finally:
        provider_signer.start()
    cond = wait_for(lambda: next((csr_condition(c) for c in tenant_csrs(provider, cid) if csr_condition(c)), None),
                    timeout=60, what="the Tenant's CSR decided")
    assert cond == ("Denied", "NameOwned"), cond
    events = provider.get_json("events", "-n", f"liqo-tenant-{cid}", "--field-selector",
                               f"involvedObject.name={cid}")["items"]
    assert any(e["reason"] == "CSRDenied" and "path and holder token " + cid in e["message"] for e in events), \
        [(e["reason"], e["message"]) for e in events]


def tenant_cert(provider, cid):
    t = provider.get_json(f"tenants.{GROUP}", cid, "-n", f"liqo-tenant-{cid}")
    return ((t.get("status") or {}).get("authParams") or {}).get("signedCRT")


def liqo_offload_binding(ns, cid):
    """The RoleBinding Liqo's NamespaceMap controller makes in a namespace it offloads for cid."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": f"liqo-tenant-{cid}", "namespace": ns, "labels": {
                "app.kubernetes.io/managed-by": "liqo", "liqo.io/remote-cluster-id": cid}},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": cid}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "liqo-virtual-kubelet-remote"}}


def test_approver_denies_a_name_a_foreign_binding_names(provider, cli, names, provider_signer):  # noqa: F811
    """Fix B, NameBound at approval: an admin bound `view` to User <id> before the consumer <id>
    authenticated by Tenant (a valid Tenant, the flow's own admission passes it). The approver
    finds the ClusterRoleBinding in its binding informers: every CSR Denied NameBound, no
    certificate, the Tenant told by a CSRDenied event naming the binding. The binding deleted,
    the Tenant controller's next CSR is approved and its certificate lands in status, while
    Liqo's offload RoleBinding for <id> (Group <id>, in a namespace it offloaded) stays: that one
    is the consumer's own (pki/name_owner.c)."""
    cid = new_id(names)
    crb = f"{cid}-view"
    names.cluster_objects.append(("clusterrolebinding", crb))
    provider.kubectl("create", "clusterrolebinding", crb, "--clusterrole=view", f"--user={cid}")
    provider.apply(liqo_offload_binding(names.ns, cid))
    tenant, _ = offline_tenant(provider, cli, names.work, cid)
    provider.apply(tenant)
    cond = wait_for(lambda: next((csr_condition(c) for c in tenant_csrs(provider, cid) if csr_condition(c)), None),
                    timeout=90, what="the Tenant's CSR decided")
    assert cond == ("Denied", "NameBound"), cond
    csrs = tenant_csrs(provider, cid)
    assert not any((c.get("status") or {}).get("certificate") for c in csrs), csrs
    assert all(csr_condition(c) in (None, ("Denied", "NameBound")) for c in csrs), [csr_condition(c) for c in csrs]
    assert not tenant_cert(provider, cid)
    events = provider.get_json("events", "-n", f"liqo-tenant-{cid}", "--field-selector",
                               f"involvedObject.name={cid}")["items"]
    assert any(e["reason"] == "CSRDenied" and f"ClusterRoleBinding {crb}" in e["message"] for e in events), \
        [(e["reason"], e["message"]) for e in events]

    provider.kubectl("delete", "clusterrolebinding", crb)
    wait_for(lambda: tenant_cert(provider, cid), timeout=180, what="a certificate in the Tenant's status")
    assert ("Approved", "TenantValidated") in [csr_condition(c) for c in tenant_csrs(provider, cid)]
    assert provider.exists("rolebinding", f"liqo-tenant-{cid}", "-n", names.ns)


def test_approver_denies_a_slice_whose_group_a_foreign_binding_names(provider, cli, names,
                                                                      provider_signer):  # noqa: F811
    """Fix B for a slice's group: consumer <id> has its certificate, then an admin binds `view` in
    a namespace to Group <id>. A slice certificate carries O=<id>, so it would get that binding:
    the approver denies the slice's CSR NameBound, naming the RoleBinding."""
    consumer = new_id(names)
    key = peer_by_tenant(provider, cli, names.work, consumer)
    wait_for(lambda: tenant_cert(provider, consumer), timeout=90, what="a certificate in the Tenant's status")
    rb = f"view-{consumer[:8]}"
    provider.kubectl("create", "rolebinding", rb, "--clusterrole=view", f"--group={consumer}", "-n", names.ns)
    name = "g" + uuid.uuid4().hex[:8]
    rslice = replicated_slice(names, consumer, key, name,
                              f"{name}-{hashlib.sha256(consumer.encode()).hexdigest()[:12]}")
    rslice["spec"]["providerClusterID"] = rslice["metadata"]["labels"]["liqo.io/remoteID"] = PROVIDER_ID
    provider.apply(rslice)
    ref = f"liqo-tenant-{consumer}/{name}"

    def slice_csr_decided():
        return next((csr_condition(c) for c in tenant_csrs(provider, consumer)
                     if (c["metadata"].get("annotations") or {}).get("tenantgate.io/resourceslice") == ref
                     and csr_condition(c)), None)
    cond = wait_for(slice_csr_decided, timeout=60, what="the slice's CSR decided")
    assert cond == ("Denied", "NameBound"), cond
    events = provider.get_json("events", "-n", f"liqo-tenant-{consumer}", "--field-selector",
                               f"involvedObject.name={name}")["items"]
    assert any(e["reason"] == "CSRDenied" and f"RoleBinding {names.ns}/{rb}" in e["message"] for e in events), \
        [(e["reason"], e["message"]) for e in events]
