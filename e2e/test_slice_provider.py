"""The provider's ResourceSlice controller (signer, remoteresourceslice), on the real bed.

Each test onboards a fresh consumer id (test_signer's onboarding), then plays the consumer's
replicator: it creates the replicated copy of a slice in the provider's tenant namespace with
the consumer's ControlPlane certificate, Liqo's labels, and a CSR for CN <name>-<h>, O
<consumer> under the consumer's cluster key. What is checked is what the provider does:
authentication again, a Kubernetes CSR approved only for an admitted slice, the certificate
cached in a Secret owned by the slice, status.authParams and Liqo's conditions, resources with
the class policy, the per-slice RoleBinding, Cordoned/Drained Tenants, renewal and restarts."""

import base64
import calendar
import hashlib
import json
import secrets
import time

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import (NODE_LABELS, NS, PROVIDER_ID, SA, cid, consumer_signer, installed,  # noqa: F401
                         make_csr, onboard, provider_signer, tenant_ready, tenant_space, unb64,
                         _restart_in_own_signer_mode)
from bed import openssl, wait_for

GROUP = "authentication.liqo.io"
POLICY = "tenantgate-resourceslice-policy"
CLUSTERWIDE = "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"
# a resource request the clusterwide ClusterRole allows (e2e/testdata): 404 when authorized (no
# such API is served), 403 when not
SCRAPE = "/apis/metrics.liqo.io/v1beta1/scrape/node/metrics"


def user_of(name, cid):
    return f"{name}-{hashlib.sha256(cid.encode()).hexdigest()[:12]}"


@pytest.fixture
def peer(provider, consumer, provider_signer, consumer_signer, cid, tenant_space, tmp_path):
    """An onboarded consumer: (cid, tenant namespace, cluster key file, ControlPlane kubeconfig)."""
    pns, cns = tenant_space
    _, key = onboard(provider, consumer, cid, pns, cns, tmp_path)
    t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=30, what="Tenant certificate")
    crt = tmp_path / "controlplane.crt"
    crt.write_bytes(unb64(t["status"]["authParams"]["signedCRT"]))
    kc = provider.cert_kubeconfig(cid, crt, key, path=tmp_path / "controlplane.kubeconfig")
    yield cid, pns, key, kc
    provider.kubectl("delete", "configmap", POLICY, "-n", NS, "--ignore-not-found", check=False)


def slice_object(peer, name, tmp_path, resources=None, cls="default"):
    """The copy Liqo's replicator writes, with Liqo's labels and a CSR under the consumer's key."""
    cid, pns, key, _ = peer
    csr = make_csr(key, user_of(name, cid), tmp_path, org=cid)
    spec = {"consumerClusterID": cid, "providerClusterID": PROVIDER_ID, "class": cls,
            "csr": base64.b64encode(csr.encode()).decode()}
    if resources:
        spec["resources"] = resources
    obj = {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
           "metadata": {"name": name, "namespace": pns,
                        "labels": {"liqo.io/replication": "false", "liqo.io/replicated": "true",
                                   "liqo.io/originID": cid, "liqo.io/remote-cluster-id": cid,
                                   "liqo.io/remoteID": PROVIDER_ID}},
           "spec": spec}
    return obj


def replicate(provider, peer, name, tmp_path, resources=None, cls="default", check=True):
    """Liqo's replicator, as the consumer's ControlPlane user: the copy with Liqo's labels."""
    obj = slice_object(peer, name, tmp_path, resources=resources, cls=cls)
    p = provider.kubectl("create", "-f", "-", input=obj, kubeconfig=peer[3], check=False)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def condition(provider, pns, name, ctype):
    st = provider.get_json("rslice", name, "-n", pns).get("status") or {}
    for c in st.get("conditions") or []:
        if c["type"] == ctype:
            return c
    return None


def wait_condition(provider, pns, name, ctype, status, timeout=30):
    return wait_for(lambda: (lambda c: c if c and c["status"] == status else None)(
        condition(provider, pns, name, ctype)), timeout=timeout,
        what=f"{name}: {ctype}={status}")


def slice_csrs(provider, cid, name, pns):
    items = provider.get_json("csr", "-l", f"liqo.io/remote-tenant-csr=true,liqo.io/remote-cluster-id={cid}")["items"]
    return [c for c in items
            if (c["metadata"].get("annotations") or {}).get("tenantgate.io/resourceslice") == f"{pns}/{name}"]


def slice_kubeconfig(provider, peer, name, tmp_path):
    cid, pns, key, _ = peer
    ap = provider.get_json("rslice", name, "-n", pns)["status"]["authParams"]
    crt = tmp_path / f"{name}.crt"
    crt.write_bytes(unb64(ap["signedCRT"]))
    return provider.cert_kubeconfig(user_of(name, cid), crt, key, path=tmp_path / f"{name}.kubeconfig")


def can_read_slices(provider, kc, pns):
    p = provider.kubectl("auth", "can-i", "get", f"resourceslices.{GROUP}", "-n", pns, kubeconfig=kc,
                         check=False)
    return p.stdout.strip() == "yes"


def test_accepted_slice_gets_a_certificate_and_no_rights_of_its_own(provider, peer, tmp_path):
    cid, pns, key, _ = peer
    replicate(provider, peer, "pool-a", tmp_path, resources={"cpu": "2"})
    auth = wait_condition(provider, pns, "pool-a", "Authentication", "Accepted")
    assert auth["reason"] == "ResourceSliceAuthenticationAccepted", auth
    res = wait_condition(provider, pns, "pool-a", "Resources", "Accepted")
    assert res["reason"] == "ResourceSliceResourcesAccepted"
    st = provider.get_json("rslice", "pool-a", "-n", pns)["status"]
    assert st["resources"] == {"cpu": "2", "memory": "8Gi", "pods": "110", "ephemeral-storage": "20Gi"}
    assert st["storageClasses"] == [] and st["ingressClasses"] == [] and st["loadBalancerClasses"] == []
    assert st["nodeLabels"] == NODE_LABELS            # the provider signer's --cluster-labels
    assert st["authParams"]["apiServer"] and st["authParams"]["ca"]
    # a resource added to the request is granted, and one dropped from it leaves the grant (a merge
    # patch of status keeps keys it does not name: the controller names dropped ones with null)
    for extra, want in (({"nvidia.com/gpu": "1"}, "1"), ({"nvidia.com/gpu": None}, None)):
        provider.kubectl("patch", "rslice", "pool-a", "-n", pns, "--type", "merge",
                         "-p", json.dumps({"spec": {"resources": extra}}))
        wait_for(lambda: provider.get_json("rslice", "pool-a", "-n", pns)["status"]["resources"].get(
            "nvidia.com/gpu") == want, timeout=20, what=f"nvidia.com/gpu granted as {want}")

    cert = unb64(st["authParams"]["signedCRT"])
    subject = openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", input=cert).decode()
    assert subject.strip() == f"subject=CN={user_of('pool-a', cid)},O={cid}", subject
    cert_key = openssl("x509", "-noout", "-pubkey", input=cert)
    assert cert_key == openssl("pkey", "-in", str(key), "-pubout")

    csrs = slice_csrs(provider, cid, "pool-a", pns)
    assert len(csrs) == 1 and csrs[0]["spec"]["expirationSeconds"] > 0
    assert csrs[0]["metadata"]["labels"]["tenantgate.io/request-sha256"]
    sec = provider.get_json("secret", "liqo-remote-certificate-pool-a", "-n", pns)
    assert sec["metadata"]["labels"] == {"liqo.io/remote-cluster-id": cid}
    assert sec["metadata"]["ownerReferences"][0]["kind"] == "ResourceSlice"
    assert unb64(sec["data"]["certificate"]) == cert
    assert sec["data"]["csr"] == provider.get_json("rslice", "pool-a", "-n", pns)["spec"]["csr"]

    kc = slice_kubeconfig(provider, peer, "pool-a", tmp_path)
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
    assert who["status"]["userInfo"]["username"] == user_of("pool-a", cid)
    assert cid in who["status"]["userInfo"]["groups"]
    # as under Liqo's provider, the slice user has no rights of its own (docs/LIQO.md, "Rights")
    assert not can_read_slices(provider, kc, pns)
    assert not provider.exists("rolebinding", "tenantgate-rslice-pool-a", "-n", pns)

    provider.kubectl("delete", "rslice", "pool-a", "-n", pns)
    wait_for(lambda: not provider.exists("secret", "liqo-remote-certificate-pool-a", "-n", pns),
             timeout=60, what="cache Secret garbage-collected")


def der(tag, body):
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def ed25519_csr(key_file, subject, tmp_path):
    """A PEM CSR for subject [(oid DER, value), ...] under an Ed25519 key, assembled here: openssl
    req refuses an O longer than X.509's 64-character bound, which a slice user's group exceeds
    (Kubernetes and tenantgate read it; Go's x509 sets no bound)."""
    spki = openssl("pkey", "-in", str(key_file), "-pubout", "-outform", "DER")
    name = der(0x30, b"".join(der(0x31, der(0x30, oid + der(0x0C, v.encode()))) for oid, v in subject))
    info = der(0x30, der(0x02, b"\x00") + name + spki + der(0xA0, b""))
    tbs = tmp_path / "csr-info.der"
    tbs.write_bytes(info)
    sig = openssl("pkeyutl", "-sign", "-inkey", str(key_file), "-rawin", "-in", str(tbs))
    body = der(0x30, info + der(0x30, der(0x06, bytes([0x2B, 0x65, 0x70]))) + der(0x03, b"\x00" + sig))
    lines = base64.encodebytes(body).decode().replace("\n", "")
    return ("-----BEGIN CERTIFICATE REQUEST-----\n" +
            "\n".join(lines[i:i + 64] for i in range(0, len(lines), 64)) +
            "\n-----END CERTIFICATE REQUEST-----\n")


OID_O, OID_CN = der(0x06, bytes([0x55, 0x04, 0x0A])), der(0x06, bytes([0x55, 0x04, 0x03]))


def scrape(provider, kc):
    """What the API server answers kc's user for SCRAPE: "allowed" (authorized, 404) or "forbidden"."""
    r = provider.kubectl("get", "--raw", SCRAPE, kubeconfig=kc, check=False)
    if "(Forbidden)" in r.stderr:
        return "forbidden"
    assert "(NotFound)" in r.stderr, r
    return "allowed"


def test_revoke_one_slice_certificate_at_once(cli, provider, peer, tmp_path):
    """Issue 48 item 1, slices (docs/revocation.md "Slices"): two slice certificates made with their
    slice user's group in place of O=<consumer>; their rights are that group's ClusterRoleBinding.
    `revoke` A: A's next request AS A gets 403 through the real API server, B keeps working, and
    the signer does not bind A's group again."""
    cid, pns, key, _ = peer
    groups, kcs = {}, {}
    for name in ("rv-a", "rv-b"):
        user = user_of(name, cid)
        groups[name] = f"tenantgate.io/cert:{user}:{secrets.token_hex(16)}"
        obj = slice_object(peer, name, tmp_path)
        csr = ed25519_csr(key, [(OID_O, groups[name]), (OID_CN, user)], tmp_path)
        obj["spec"]["csr"] = base64.b64encode(csr.encode()).decode()
        r = provider.kubectl("create", "-f", "-", input=obj, kubeconfig=peer[3], check=False)
        assert r.returncode == 0, r.stderr
    for name in groups:
        wait_condition(provider, pns, name, "Authentication", "Accepted")
        kcs[name] = slice_kubeconfig(provider, peer, name, tmp_path)
        who = json.loads(provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kcs[name]).stdout)
        # no Group <consumer>: Liqo's offload bindings of it would outlive a revocation
        assert groups[name] in who["status"]["userInfo"]["groups"], who
        assert cid not in who["status"]["userInfo"]["groups"], who
        crb = provider.get_json("clusterrolebinding", CLUSTERWIDE + user_of(name, cid))
        assert crb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                    "name": groups[name]}], crb
        wait_for(lambda: scrape(provider, kcs[name]) == "allowed", timeout=10,
                 what=f"{name}'s rights through its group")

    rc, out, err = cli("revoke", "--certificate", kcs["rv-a"], "--kubeconfig", provider.kubeconfig)
    assert rc == 0, out + err
    assert f"removed from ClusterRoleBinding {CLUSTERWIDE}{user_of('rv-a', cid)}" in out, out
    # the authorizer's cache follows the binding within its watch latency
    wait_for(lambda: scrape(provider, kcs["rv-a"]) == "forbidden", timeout=5, what="A refused AS A")
    assert scrape(provider, kcs["rv-b"]) == "allowed"

    # the signer's next pass of the slice (a resource added) binds the group no more
    provider.kubectl("patch", "rslice", "rv-a", "-n", pns, "--type", "merge",
                     "-p", json.dumps({"spec": {"resources": {"cpu": "3"}}}))
    wait_for(lambda: provider.get_json("rslice", "rv-a", "-n", pns)["status"]["resources"].get("cpu") == "3",
             timeout=20, what="the slice reconciled again")
    crb = provider.get_json("clusterrolebinding", CLUSTERWIDE + user_of("rv-a", cid))
    assert not crb.get("subjects"), crb
    assert scrape(provider, kcs["rv-a"]) == "forbidden"
    assert scrape(provider, kcs["rv-b"]) == "allowed"

    # a ClusterRoleBinding of the bare user (made by hand, or guard mode's kind) would outlive the
    # revocation: refused, nothing changed
    user_b = user_of("rv-b", cid)
    provider.kubectl("create", "clusterrolebinding", f"by-hand-{user_b}", "--clusterrole", "view",
                     "--user", user_b)
    rc, out, err = cli("revoke", "--certificate", kcs["rv-b"], "--kubeconfig", provider.kubeconfig)
    provider.kubectl("delete", "clusterrolebinding", f"by-hand-{user_b}")
    assert rc == 1 and f"ClusterRoleBinding by-hand-{user_b} binds the user {user_b} itself" in out + err, \
        out + err
    assert scrape(provider, kcs["rv-b"]) == "allowed"
    for name in groups:
        provider.kubectl("delete", "rslice", name, "-n", pns)
        provider.kubectl("delete", "clusterrolebinding", CLUSTERWIDE + user_of(name, cid))


def test_policy_denies_a_slice_past_a_limit_with_the_amount(provider, peer, tmp_path):
    cid, pns, _, _ = peer
    provider.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": POLICY, "namespace": NS},
                    "data": {"default": json.dumps({"maxPerSlice": {"cpu": "8"},
                                                    "maxPerTenant": {"memory": "12Gi"}})}})
    replicate(provider, peer, "big", tmp_path, resources={"cpu": "10"})
    res = wait_condition(provider, pns, "big", "Resources", "Denied")
    assert res["reason"] == "ResourceSliceResourcesDenied"
    assert "PolicyExceeded" in res["message"] and "cpu: 10 asked, at most 8 per slice (2 over)" in res["message"]
    # authentication is separate: the slice still gets its certificate (Liqo)
    wait_condition(provider, pns, "big", "Authentication", "Accepted")

    replicate(provider, peer, "first", tmp_path)                 # 8Gi of 12Gi
    wait_condition(provider, pns, "first", "Resources", "Accepted")
    replicate(provider, peer, "second", tmp_path)                # 16Gi > 12Gi
    res = wait_condition(provider, pns, "second", "Resources", "Denied")
    assert "memory: 8Gi asked with 8Gi already granted to this consumer, at most 12Gi per consumer " \
           "(4Gi over)" in res["message"], res["message"]

    # another class is left to its own controller (Liqo)
    replicate(provider, peer, "gpu", tmp_path, cls="gpu")
    wait_condition(provider, pns, "gpu", "Authentication", "Accepted")
    assert condition(provider, pns, "gpu", "Resources") is None

    # a policy edit applies at once: its watch wakes the denied slice (the 60 s recheck is only
    # the safety net)
    provider.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": POLICY, "namespace": NS},
                    "data": {"default": json.dumps({"maxPerSlice": {"cpu": "16"}})}})
    wait_condition(provider, pns, "big", "Resources", "Accepted", timeout=20)


def test_slices_decided_back_to_back_are_summed(provider, peer, tmp_path):
    """Four slices of one consumer in one request, room for one (maxPerTenant memory 12Gi, 8Gi
    each): the controller decides them one after the other, each from the slice informer's cache,
    which may not show the verdict written a moment before. Exactly one is accepted, for good."""
    cid, pns, _, kc = peer
    provider.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": POLICY, "namespace": NS},
                    "data": {"default": json.dumps({"maxPerTenant": {"memory": "12Gi"}})}})
    names = [f"twin-{i}" for i in range(4)]
    items = [slice_object(peer, n, tmp_path) for n in names]
    p = provider.kubectl("create", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": items},
                         kubeconfig=kc, check=False)
    assert p.returncode == 0, p.stderr

    def verdicts():
        got = {n: (condition(provider, pns, n, "Resources") or {}).get("status") for n in names}
        return got if all(got.values()) else None
    got = wait_for(verdicts, timeout=60, what="a Resources verdict on every slice")
    assert sorted(got.values()) == ["Accepted", "Denied", "Denied", "Denied"], got
    for n in names:
        if got[n] == "Denied":
            msg = condition(provider, pns, n, "Resources")["message"]
            assert "memory: 8Gi asked with 8Gi already granted to this consumer, at most 12Gi per consumer" \
                in msg, msg
    time.sleep(3)                          # and no later reconcile (certificates issued) changes it
    assert verdicts() == got


def test_cordoned_and_drained_tenants(provider, peer, tmp_path):
    cid, pns, _, _ = peer
    replicate(provider, peer, "early", tmp_path)
    wait_condition(provider, pns, "early", "Resources", "Accepted")
    provider.kubectl("patch", "tenant", cid, "-n", pns, "--type=merge", "-p",
                     '{"spec":{"tenantCondition":"Cordoned"}}')
    replicate(provider, peer, "late", tmp_path)
    res = wait_condition(provider, pns, "late", "Resources", "Denied")
    assert "TenantCordoned" in res["message"]
    time.sleep(2)
    assert condition(provider, pns, "early", "Resources")["status"] == "Accepted"

    provider.kubectl("patch", "tenant", cid, "-n", pns, "--type=merge", "-p",
                     '{"spec":{"tenantCondition":"Drained"}}')
    res = wait_condition(provider, pns, "early", "Resources", "Denied")
    assert "TenantDrained" in res["message"]
    auth = wait_condition(provider, pns, "early", "Authentication", "Denied")
    assert "SliceTenantDrained" in auth["message"]
    assert "authParams" not in provider.get_json("rslice", "early", "-n", pns)["status"]
    assert not provider.exists("rolebinding", "tenantgate-rslice-early", "-n", pns)


def _strip_liqo_labels(provider, kc, pns, name):
    """The consumer removes the labels Liqo's remoteresourceslice selects on. Should the
    webhook refuse it (another guard), the admin does it: the signer must not depend on it."""
    args = ("label", "rslice", name, "-n", pns, "liqo.io/replicated-", "liqo.io/originID-")
    if provider.kubectl(*args, kubeconfig=kc, check=False).returncode != 0:
        provider.kubectl(*args)
    labels = provider.get_json("rslice", name, "-n", pns)["metadata"].get("labels") or {}
    assert "liqo.io/replicated" not in labels and "liqo.io/originID" not in labels, labels


def test_slice_stripped_of_liqos_labels_still_counts_and_is_revoked(provider, peer, tmp_path):
    """Issue 36, finding 3: the provider owns every slice of a tenant namespace, whatever the
    labels the consumer writes on it. An accepted slice whose liqo.io/replicated and originID
    labels the consumer removed still counts in the maxPerTenant sum, and loses its
    certificate and RoleBinding when the Tenant is drained."""
    cid, pns, _, kc = peer
    provider.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": POLICY, "namespace": NS},
                    "data": {"default": json.dumps({"maxPerTenant": {"memory": "12Gi"}})}})
    replicate(provider, peer, "hidden", tmp_path)                # 8Gi of 12Gi
    wait_condition(provider, pns, "hidden", "Resources", "Accepted")
    wait_condition(provider, pns, "hidden", "Authentication", "Accepted")
    _strip_liqo_labels(provider, kc, pns, "hidden")

    replicate(provider, peer, "after", tmp_path)                 # 8Gi more: over 12Gi
    res = wait_condition(provider, pns, "after", "Resources", "Denied")
    assert "memory: 8Gi asked with 8Gi already granted to this consumer" in res["message"], res["message"]

    provider.kubectl("patch", "tenant", cid, "-n", pns, "--type=merge", "-p",
                     '{"spec":{"tenantCondition":"Drained"}}')
    res = wait_condition(provider, pns, "hidden", "Resources", "Denied")
    assert "TenantDrained" in res["message"], res["message"]
    # re-authenticated at its label change already (the labels no longer agree) or at the drain
    wait_condition(provider, pns, "hidden", "Authentication", "Denied")
    assert "authParams" not in provider.get_json("rslice", "hidden", "-n", pns)["status"]
    assert not provider.exists("rolebinding", "tenantgate-rslice-hidden", "-n", pns)


def _slice_csr_object(name, cid, request_b64, ref):
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name, "labels": {"liqo.io/remote-tenant-csr": "true",
                                                  "liqo.io/remote-cluster-id": cid},
                         "annotations": {"tenantgate.io/resourceslice": ref}},
            "spec": {"request": request_b64, "signerName": "kubernetes.io/kube-apiserver-client",
                     "expirationSeconds": 3600,
                     "usages": ["digital signature", "key encipherment", "client auth"]}}


def test_approver_denies_csrs_of_slices_not_admitted(provider, peer, tmp_path):
    cid, pns, key, _ = peer
    tag = cid[-6:]
    req = base64.b64encode(make_csr(key, user_of("ghost", cid), tmp_path, org=cid).encode()).decode()
    provider.create(_slice_csr_object(f"ghost-{tag}", cid, req, f"{pns}/ghost"))
    replicate(provider, peer, "real", tmp_path)
    wait_condition(provider, pns, "real", "Authentication", "Accepted")
    # same slice, another request (another key, same subject)
    other = tmp_path / "other.key"
    other.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    req2 = base64.b64encode(make_csr(other, user_of("real", cid), tmp_path, org=cid).encode()).decode()
    provider.create(_slice_csr_object(f"other-{tag}", cid, req2, f"{pns}/real"))

    def reason(name):
        for c in (provider.get_json("csr", name).get("status") or {}).get("conditions") or []:
            if c["type"] in ("Approved", "Denied"):
                return c["type"], c["reason"]
        return None
    try:
        assert wait_for(lambda: reason(f"ghost-{tag}"), timeout=30) == ("Denied", "NoMatchingResourceSlice")
        assert wait_for(lambda: reason(f"other-{tag}"), timeout=30) == ("Denied", "RequestNotFromResourceSlice")
    finally:
        provider.kubectl("delete", "csr", f"ghost-{tag}", f"other-{tag}", "--ignore-not-found", check=False)


def test_csrs_another_user_made_hold_no_slice_back(provider, provider_signer, peer, tmp_path):
    """Someone allowed to create CSRs (here the admin) copies what the signer would make for a
    slice: our labels, the slice's request hash, a far-future created-ms, the slice named in the
    annotation, but another key's request. The approver denies it; before the signer told CSRs
    apart by spec.username, the slice controller took that denial as the slice's own and showed
    the slice Denied for a minute, again after each forged copy."""
    cid, pns, key, _ = peer
    obj = slice_object(peer, "forged-at", tmp_path)
    request_hash = hashlib.sha256(obj["spec"]["csr"].encode()).hexdigest()[:32]
    other = tmp_path / "forger.key"
    other.write_bytes(openssl("genpkey", "-algorithm", "ed25519"))
    req = base64.b64encode(make_csr(other, user_of("forged-at", cid), tmp_path, org=cid).encode()).decode()
    forged = _slice_csr_object(f"forged-{cid[-6:]}", cid, req, f"{pns}/forged-at")
    forged["metadata"]["labels"].update({"tenantgate.io/request-sha256": request_hash,
                                         "tenantgate.io/created-ms": str(int(time.time() * 1000) + 10**9)})
    before = provider_signer.metrics().get(("tenantgate_signer_foreign_csrs_ignored_total", frozenset()), 0)
    provider.create(forged)
    try:
        wait_for(lambda: any(c["type"] == "Denied" for c in
                             (provider.get_json("csr", forged["metadata"]["name"]).get("status") or {})
                             .get("conditions") or []), timeout=30, what="the approver's denial of the copy")
        p = provider.kubectl("create", "-f", "-", input=obj, kubeconfig=peer[3], check=False)
        assert p.returncode == 0, p.stderr
        auth = wait_condition(provider, pns, "forged-at", "Authentication", "Accepted", timeout=30)
        assert auth["reason"] == "ResourceSliceAuthenticationAccepted", auth
        signer_user = f"system:serviceaccount:{NS}:{SA}"
        made = {c["metadata"]["name"]: c["spec"]["username"] for c in slice_csrs(provider, cid, "forged-at", pns)}
        assert made.pop(forged["metadata"]["name"]) != signer_user
        assert list(made.values()) == [signer_user], made   # one CSR of the signer's own, no retry
        assert provider_signer.metrics().get(("tenantgate_signer_foreign_csrs_ignored_total", frozenset()),
                                             0) >= before + 1
        assert "csr with the signer's labels made by another user" in provider_signer.log()
    finally:
        provider.kubectl("delete", "csr", forged["metadata"]["name"], "--ignore-not-found", check=False)


def test_restart_between_csr_and_status_leaves_one_csr(provider, provider_signer, peer, tmp_path):
    cid, pns, _, _ = peer
    provider_signer.stop()
    provider_signer.start("--controllers", "remoteresourceslice")    # makes the CSR, nobody approves
    try:
        replicate(provider, peer, "restart", tmp_path)
        wait_for(lambda: slice_csrs(provider, cid, "restart", pns), timeout=30, what="the slice's CSR")
        provider_signer.kill()
        assert condition(provider, pns, "restart", "Authentication") is None
    finally:
        provider_signer.start()
    wait_condition(provider, pns, "restart", "Authentication", "Accepted")
    time.sleep(3)
    csrs = slice_csrs(provider, cid, "restart", pns)
    assert len(csrs) == 1, [c["metadata"]["name"] for c in csrs]
    assert (csrs[0].get("status") or {}).get("certificate")


def not_after(signed_b64):
    text = openssl("x509", "-noout", "-enddate", input=unb64(signed_b64)).decode().strip()
    return calendar.timegm(time.strptime(text.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z"))


def test_slice_certificate_is_renewed_before_expiry(provider, provider_signer, peer, tmp_path):
    """Own-signer mode with a 90 s maximum lifetime: renewal is due 25 s after issue, and the
    controller requeues itself for it (nothing else happens to the slice meanwhile)."""
    cid, pns, _, _ = peer
    _restart_in_own_signer_mode(provider_signer, tmp_path, max_lifetime="90")
    try:
        replicate(provider, peer, "renewed", tmp_path)
        wait_condition(provider, pns, "renewed", "Authentication", "Accepted")
        first = provider.get_json("rslice", "renewed", "-n", pns)["status"]["authParams"]["signedCRT"]
        expires = not_after(first)
        time.sleep(12)                    # not at once
        assert provider.get_json("rslice", "renewed", "-n", pns)["status"]["authParams"]["signedCRT"] == first
        second = wait_for(lambda: (lambda c: c if c != first else None)(
            provider.get_json("rslice", "renewed", "-n", pns)["status"]["authParams"]["signedCRT"]),
            timeout=75, interval=0.5, what="renewed slice certificate")
        assert time.time() < expires, "renewed only after the old certificate expired"
        assert not_after(second) > expires
        sec = provider.get_json("secret", "liqo-remote-certificate-renewed", "-n", pns)
        assert sec["data"]["certificate"] == second
        assert len(slice_csrs(provider, cid, "renewed", pns)) == 2
        time.sleep(5)                     # and it does not loop
        assert len(slice_csrs(provider, cid, "renewed", pns)) == 2
    finally:
        provider_signer.stop()
        provider_signer.start()


# --- Liqo's provider switches (issue 45, item 5) ----------------------------------------------

LIQO_SWITCHES = ("--default-node-resources", "cpu=3,memory=5Gi,pods=17",
                 "--enable-storage", "--real-storage-class-name", "tg-e2e-fast",
                 "--ingress-classes", "nginx;default,traefik",
                 "--load-balancer-classes", "metallb;default")


@pytest.fixture
def storage_classes(provider):
    """Two StorageClasses on the provider (cluster-scoped: removed afterwards)."""
    names = ("tg-e2e-fast", "tg-e2e-slow")
    for n in names:
        provider.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                        "metadata": {"name": n}, "provisioner": "example.com/none"})
    yield names
    provider.kubectl("delete", "storageclass", *names, "--ignore-not-found", check=False)


def _restarted_with(signer, *flags):
    signer.stop()
    signer.start(*flags)


def test_liqo_switches_fill_the_accepted_slice(provider, provider_signer, peer, storage_classes, tmp_path):
    """--default-node-resources, --enable-storage (+ --real-storage-class-name),
    --ingress-classes and --load-balancer-classes, as Liqo's controller-manager takes them:
    the slice asks cpu only, gets the configured rest, and its status offers the classes."""
    cid, pns, _, _ = peer
    _restarted_with(provider_signer, *LIQO_SWITCHES)
    try:
        replicate(provider, peer, "pool-s", tmp_path, resources={"cpu": "1"})
        wait_condition(provider, pns, "pool-s", "Resources", "Accepted")
        st = provider.get_json("rslice", "pool-s", "-n", pns)["status"]
        assert st["resources"] == {"cpu": "1", "memory": "5Gi", "pods": "17"}, st["resources"]
        mine = [c for c in st["storageClasses"] if c["storageClassName"].startswith("tg-e2e-")]
        assert mine == [{"storageClassName": "tg-e2e-fast", "default": True},
                        {"storageClassName": "tg-e2e-slow"}], st["storageClasses"]
        assert st["ingressClasses"] == [{"ingressClassName": "nginx", "default": True},
                                        {"ingressClassName": "traefik"}], st["ingressClasses"]
        assert st["loadBalancerClasses"] == [{"loadBalancerClassName": "metallb", "default": True}]
    finally:
        _restarted_with(provider_signer)


def test_default_class_denied_when_the_provider_turned_it_off(provider, provider_signer, peer, tmp_path):
    """A default-class slice the webhook admitted (it runs with its defaults here: a slice
    made while it was down, or before the switch) is denied by the signer, as Liqo's
    reconciler: Resources Denied, reason DefaultResourceSliceClassDisabled, nothing granted."""
    cid, pns, _, _ = peer
    _restarted_with(provider_signer, "--default-resource-slice-class-enabled=false")
    try:
        replicate(provider, peer, "pool-d", tmp_path)
        res = wait_condition(provider, pns, "pool-d", "Resources", "Denied")
        assert res["reason"] == "DefaultResourceSliceClassDisabled", res
        assert "administratively disabled on the provider: expected a class the provider offers" \
            in res["message"], res
        st = provider.get_json("rslice", "pool-d", "-n", pns)["status"]
        assert "resources" not in st and st["storageClasses"] == [], st
    finally:
        _restarted_with(provider_signer)
