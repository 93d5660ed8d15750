"""tenantgate-auth's own surface (issue 44 findings 7 and 10), on the bed's provider, acting AS
its identity: its ServiceAccount's own token, with exactly the shipped manifests/auth/rbac.yaml,
rbac-v1.yaml and validatingadmissionpolicy.yaml applied (namespace `liqo` moved to a namespace
of this test, tenantgate-tokens to `<it>-tokens`, the policy's user name to that
ServiceAccount's).

  can-i     `kubectl auth can-i create secrets` in kube-system, the install namespace and a
            tenant namespace: no (the nonce Secret is the signer's to make);
  attempt   a Secret of type kubernetes.io/service-account-token for a ServiceAccount, created
            in kube-system, in the install namespace and in the token namespace: refused (RBAC's
            403, or in the token namespace the policy), and nothing to read back. The token
            controller of the bed's kube-controller-manager fills such a Secret when it exists:
            the admin makes one as the control, so the mint would work if the create did;
  bound     the server itself (tenantgate-auth as a host process with that identity) and the
            provider's tenantgate-signer (nonce and bootstrapgc controllers, --bootstrap-grace 3):
            a single-use token's /v1/nonce for 3 new ids makes one tenant namespace, the others
            TokenExhausted; a reusable one (--max-nonces-per-token 3) under 8 racing requests
            for new ids makes 3;
  cleanup   the token deleted, what its /v1/nonce made is gone within the grace; the namespace
            of a live token stays.
"""
import concurrent.futures
import json
import re
import ssl
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from bed import wait_for
from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_auth_server import SA, AuthServer, rbac_in, token_ns_of
from test_signer import NS as SIGNER_NS, SA as SIGNER_SA, Signer, installed  # noqa: F401

POLICY = "tenantgate-auth-no-serviceaccount-tokens"


def policy_for(source_dir, ns):
    text = (Path(source_dir) / "manifests" / "auth" / "validatingadmissionpolicy.yaml").read_text()
    return text.replace("system:serviceaccount:liqo:tenantgate-auth", f"system:serviceaccount:{ns}:{SA}")


def rbac_v1_for(source_dir, ns):
    text = (Path(source_dir) / "manifests" / "auth" / "rbac-v1.yaml").read_text()
    text = re.sub(r"(?m)^(\s*)(name|namespace): tenantgate-tokens$", rf"\1\2: {token_ns_of(ns)}", text)
    return re.sub(r"(?m)^(\s*)namespace: liqo$", rf"\1namespace: {ns}", text)


@pytest.fixture(scope="module")
def auth_identity(provider, source_dir):
    """(install namespace, token namespace, kubeconfig of tenantgate-auth's ServiceAccount)."""
    ns = "authr-" + uuid.uuid4().hex[:8]
    provider.create_namespace(ns)
    provider.apply(rbac_in(source_dir, ns))
    provider.apply(rbac_v1_for(source_dir, ns))
    provider.apply(policy_for(source_dir, ns))
    kubeconfig = provider.serviceaccount_kubeconfig(ns, SA)
    yield ns, token_ns_of(ns), kubeconfig
    provider.kubectl("delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", POLICY,
                     "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "tenantgate-auth-v1",
                     "--ignore-not-found", check=False)
    provider.delete_namespace(token_ns_of(ns))
    provider.delete_namespace(ns)


def sa_token_secret(name, namespace, account):
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": name, "namespace": namespace,
                         "annotations": {"kubernetes.io/service-account.name": account}}}


def test_auth_identity_cannot_create_secrets_outside_its_token_namespace(provider, auth_identity):
    ns, tokens, kubeconfig = auth_identity
    tenant = "liqo-tenant-" + str(uuid.uuid4())
    for where in ("kube-system", ns, tenant, "default"):
        out = provider.kubectl("auth", "can-i", "create", "secrets", "-n", where, kubeconfig=kubeconfig, check=False)
        assert out.stdout.strip() == "no", (where, out.stdout, out.stderr)
    # where it may (the peering token), as the control
    out = provider.kubectl("auth", "can-i", "create", "secrets", "-n", tokens, kubeconfig=kubeconfig, check=False)
    assert out.stdout.strip() == "yes", out.stdout + out.stderr


def test_auth_identity_cannot_mint_a_serviceaccount_token(provider, auth_identity):
    ns, tokens, kubeconfig = auth_identity
    name = "auth-token"                       # the one Secret name it may read back
    # the control: an admin's service-account-token Secret gets filled on this bed
    provider.kubectl("create", "serviceaccount", "victim", "-n", tokens, check=False)
    control = f"control-{uuid.uuid4().hex[:6]}"
    provider.create(sa_token_secret(control, tokens, "victim"))
    wait_for(lambda: provider.get_json("secret", control, "-n", tokens).get("data", {}).get("token"),
             timeout=30, what="the token controller fills a service-account-token Secret")
    provider.kubectl("delete", "secret", control, "-n", tokens)
    targets = [("kube-system", "default", "forbidden"), (ns, SA, "forbidden"), (tokens, "victim", POLICY)]
    for where, account, refusal in targets:
        provider.kubectl("delete", "secret", name, "-n", where, "--ignore-not-found", check=False)
        out = provider.create(sa_token_secret(name, where, account), kubeconfig=kubeconfig, check=False)
        if out.returncode == 0:               # the hole: leave no minted token behind
            provider.kubectl("delete", "secret", name, "-n", where, check=False)
        assert out.returncode != 0, (where, out.stdout)
        assert refusal in out.stderr, (where, out.stderr)
        if refusal == POLICY:
            assert "ServiceAccountTokenRefused" in out.stderr, out.stderr
        # and nothing to read back, as itself or as the admin
        got = provider.kubectl("get", "secret", name, "-n", where, "-o", "json", kubeconfig=kubeconfig, check=False)
        assert got.returncode != 0 or '"token"' not in got.stdout, (where, got.stdout)
        assert not provider.exists("secret", name, "-n", where), where


# --- the bound and the cleanup, with the server and the signer running ------------------------

GRACE = 3


@pytest.fixture(scope="module")
def bounded(provider, installed, source_dir, build_dir, signer_bin, tmp_path_factory):  # noqa: F811
    """The auth server (--max-nonces-per-token 3) and a provider signer running only the nonce and
    bootstrapgc controllers, both on the shipped RBAC."""
    ns = "authb-" + uuid.uuid4().hex[:8]
    provider.create_namespace(ns)
    provider.apply(rbac_in(source_dir, ns))
    provider.apply(rbac_v1_for(source_dir, ns))
    provider.apply(policy_for(source_dir, ns))
    work = tmp_path_factory.mktemp("authb")
    server = AuthServer(provider, str(build_dir / "auth" / "tenantgate-auth"), ns, work, "--any-cluster-id",
                        "--max-nonces-per-token", "3")
    kc = provider.serviceaccount_kubeconfig(SIGNER_NS, SIGNER_SA, duration="1h")
    signer = Signer(signer_bin, provider, kc, work, "signer-bgc", "--cluster-id", "cl-provider-b",
                    "--controllers", "nonce,bootstrapgc", "--token-namespace", server.tokens_ns,
                    "--bootstrap-grace", str(GRACE)).start()
    server.made = []
    yield server
    signer.stop()
    server.stop()
    for cid in server.made:
        provider.kubectl("delete", "namespace", f"liqo-tenant-{cid}", "--ignore-not-found", "--wait=false",
                         check=False)
    provider.kubectl("delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", POLICY,
                     "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "tenantgate-auth-v1",
                     "--ignore-not-found", check=False)
    provider.delete_namespace(server.tokens_ns)
    provider.delete_namespace(ns)


def new_token(cli, provider, server, *flags):
    rc, out, err = cli("create", "token", "-n", server.tokens_ns, *flags, "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    return out.strip()


def nonce(server, token, cid):
    """(HTTP status, answer) of POST /v1/nonce."""
    server.made.append(cid)
    ctx = ssl.create_default_context(cafile=server.serving["ca"])
    req = urllib.request.Request(f"https://127.0.0.1:{server.port}/v1/nonce", method="POST",
                                 data=json.dumps({"token": token, "clusterID": cid}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=90) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def tenant_ns(provider, cid):
    """The namespace /v1/nonce made for cid, if it is there and not going."""
    out = provider.kubectl("get", "namespace", f"liqo-tenant-{cid}", "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def test_a_single_use_token_makes_one_tenant_namespace(cli, provider, bounded):
    token = new_token(cli, provider, bounded, "--single-use")
    ids = [f"bound-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    got = [nonce(bounded, token, cid) for cid in ids]
    assert got[0][0] == 200 and got[0][1]["nonce"], got[0]
    for status, body in got[1:]:
        assert status == 403 and body["reason"] == "TokenExhausted" and "bound of 1" in body["message"], body
    assert nonce(bounded, token, ids[0])[0] == 200        # a retry for its own id is fine
    made = tenant_ns(provider, ids[0])
    assert made and made["metadata"]["labels"]["tenantgate.io/bootstrap-token-id"] == token.split(".")[0]
    # the nonce Secret is the signer's
    sec = provider.get_json("secret", "liqo-nonce", "-n", f"liqo-tenant-{ids[0]}")
    assert sec["metadata"]["labels"]["liqo.io/remote-cluster-id"] == ids[0]
    assert [cid for cid in ids[1:] if tenant_ns(provider, cid)] == []


def test_a_reusable_token_makes_its_bound_under_racing_requests(cli, provider, bounded):
    token = new_token(cli, provider, bounded)
    ids = [f"race-{uuid.uuid4().hex[:8]}" for _ in range(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda cid: nonce(bounded, token, cid), ids))
    codes = sorted(status for status, _ in got)
    assert codes == [200] * 3 + [403] * 5, got
    assert {body["reason"] for status, body in got if status == 403} == {"TokenExhausted"}
    made = [cid for cid in ids if tenant_ns(provider, cid)]
    assert len(made) == 3, made


def test_what_a_deleted_token_made_is_removed_within_the_grace(cli, provider, bounded):
    gone_token = new_token(cli, provider, bounded)
    kept_token = new_token(cli, provider, bounded)
    gone, kept = f"gone-{uuid.uuid4().hex[:8]}", f"kept-{uuid.uuid4().hex[:8]}"
    assert nonce(bounded, gone_token, gone)[0] == 200
    assert nonce(bounded, kept_token, kept)[0] == 200
    rc, _, err = cli("delete", "token", gone_token.split(".")[0], "-n", bounded.tokens_ns,
                     "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    # a pass within the grace finds the token gone, the next one after the grace deletes
    wait_for(lambda: not tenant_ns(provider, gone) or tenant_ns(provider, gone)["metadata"].get("deletionTimestamp"),
             timeout=4 * GRACE + 10, what=f"liqo-tenant-{gone} removed by bootstrapgc")
    made = tenant_ns(provider, kept)
    assert made and not made["metadata"].get("deletionTimestamp"), made
