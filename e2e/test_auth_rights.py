"""tenantgate-auth's own identity can mint no ServiceAccount token (issue 44 finding 7), on the
bed's provider, acting AS that identity: its ServiceAccount's own token, with exactly the
shipped manifests/auth/rbac.yaml, rbac-v1.yaml and validatingadmissionpolicy.yaml applied
(namespace `liqo` moved to a namespace of this test, tenantgate-tokens to `<it>-tokens`, the
policy's user name to that ServiceAccount's).

  can-i     `kubectl auth can-i create secrets` in kube-system, the install namespace and a
            tenant namespace: no (the nonce Secret is the signer's to make);
  attempt   a Secret of type kubernetes.io/service-account-token for a ServiceAccount, created
            in kube-system, in the install namespace and in the token namespace: refused (RBAC's
            403, or in the token namespace the policy), and nothing to read back.

The token controller of the bed's kube-controller-manager fills such a Secret when it exists:
the admin makes one as the control, so the test shows the mint would work if the create did.
"""
import re
import uuid
from pathlib import Path

import pytest

from bed import wait_for
from test_auth_server import SA, rbac_in, token_ns_of

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
