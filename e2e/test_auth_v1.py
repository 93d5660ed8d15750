"""The v1 one-string peering through tenantgate-auth (issue 40 part 3, docs/auth.md "v1
one-string peering"), on the two bed clusters with nothing played by hand:

  provider  `kubectl tenantgate create token --single-use --auth-url URL` prints the consumer's
            whole command line (token and the auth server's certificate hash);
  consumer  that command line, with only the consumer's kubeconfig, ends with Identity
            controlplane-<provider> whose kubeconfig works on the provider (kubectl auth whoami),
            and `create resourceslice` is then Accepted by the provider;
  refusals  a wrong, an expired, a revoked and a replayed (spent single-use) token all get the
            same answer, exit 1 with the server's reason InvalidToken;
  same      the ControlPlane Identity equals what `authenticate` with both kubeconfigs makes.

tenantgate-auth runs as a host process with its ServiceAccount's token and exactly the RBAC of
manifests/auth/rbac.yaml and rbac-v1.yaml (moved to a namespace of this test); the webhook and
both signers are test_slice_flow.py's (the provider's webhook admits the Tenant the server
creates)."""

import base64
import re
import shlex
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import CONSUMER_ID, NS, PROVIDER_ID, installed  # noqa: F401
from test_slice_flow import (CNS, GROUP, PNS, consumer_signer, consumer_webhook,  # noqa: F401
                             provider_signer)
from test_auth_server import CONSUMER_ROLE, SA, AuthServer, may, rbac_in, token_ns_of
from bed import delete_namespaces, openssl, wait_for

EXIT_REJECTED = 1
V1_LINES = [
    " INFO   (remote) Nonce retrieved",
    " INFO   (local) Tenant namespace correctly ensured",
    " INFO   (local) Signed nonce secret ensured",
    " INFO   (local) Nonce is signed",
    " INFO   (local) Signed nonce retrieved",
    " INFO   (local) Tenant correctly generated",
    " INFO   (remote) Tenant correctly applied on provider cluster",
    " INFO   (remote) Tenant status is filled",
    " INFO   (remote) Identity correctly generated",
    " INFO   (local) Identity correctly applied on consumer cluster",
    " INFO   (local) Identity status is filled",
]
INVALID = ("the auth server refused POST /v1/nonce (HTTP 401): InvalidToken: expected a valid bootstrap "
           "token of this cluster")


def rbac_v1_in(source_dir, ns, tokens_ns):
    text = (Path(source_dir) / "manifests" / "auth" / "rbac-v1.yaml").read_text()
    text = re.sub(r"(?m)^(\s*)(name|namespace): tenantgate-tokens$", rf"\1\2: {tokens_ns}", text)
    return re.sub(r"(?m)^(\s*)namespace: liqo$", rf"\1namespace: {ns}", text)


@pytest.fixture(scope="module")
def auth_v1(provider, consumer, installed, source_dir, build_dir, tmp_path_factory):  # noqa: F811
    ns = "authv1-" + uuid.uuid4().hex[:8]
    provider.create_namespace(ns)
    made_role = not provider.exists("clusterrole", CONSUMER_ROLE)
    if made_role:
        provider.apply((Path(source_dir) / "manifests" / "signer" / "remote-consumer-clusterrole.yaml").read_text())
    provider.apply(rbac_in(source_dir, ns))
    tokens_ns = token_ns_of(ns)         # the manifests' tenantgate-tokens, made by rbac.yaml
    provider.apply(rbac_v1_in(source_dir, ns, tokens_ns))
    binary = build_dir / "auth" / "tenantgate-auth"
    # the last --cluster-id wins: the provider signer's id, as a real provider has one id
    server = AuthServer(provider, str(binary), ns, tmp_path_factory.mktemp("authv1"), "--cluster-id", PROVIDER_ID,
                        "--token-namespace", tokens_ns)
    server.tokens_ns = tokens_ns
    server.cluster_id = PROVIDER_ID
    server.url = f"https://127.0.0.1:{server.port}"
    yield server
    server.stop()
    provider.kubectl("delete", "clusterrolebinding,clusterrole", "tenantgate-auth", "tenantgate-auth-v1",
                     "--ignore-not-found", check=False)
    provider.kubectl("delete", "clusterrolebinding", "tenantgate-auth-tenant-namespace-labeler", "--ignore-not-found",
                     check=False)
    if made_role:
        provider.kubectl("delete", "clusterrole", CONSUMER_ROLE, "--ignore-not-found", check=False)
    provider.delete_namespace(tokens_ns)
    provider.delete_namespace(ns)


@pytest.fixture
def unpeer(cli, provider, consumer):
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)

    def run():
        consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", CNS, "--wait=true",
                         "--timeout=60s", check=False, timeout=90)
        rc, out, err = cli("unauthenticate", *both, "--wait", "--timeout", "60s")
        assert rc == 0, out + err
    yield run
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", CNS, "--wait=true",
                     "--timeout=60s", check=False, timeout=90)
    cli("unauthenticate", *both, "--wait", "--timeout", "60s")
    # No finalizer is taken off by hand: the signers on both sides are running, so a
    # namespace that stays terminating is a product bug, and raises here naming what holds it.
    delete_namespaces(((provider, PNS), (consumer, CNS)), check=True)


def one_string(cli, provider, server, *flags):
    """`create token --auth-url` on the provider: the consumer's command line, split."""
    rc, out, err = cli("create", "token", "-n", server.tokens_ns, "--auth-url", server.url, *flags,
                       "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kubectl tenantgate authenticate --auth-url "), out
    words = shlex.split(lines[0])
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", words[words.index("--auth-ca-hash") + 1]), out
    return words[2:]                  # what follows "kubectl tenantgate"


def consumer_run(cli, consumer, words, *extra):
    """The printed command, with only the consumer's kubeconfig."""
    return cli(*words, "--kubeconfig", consumer.kubeconfig, "--cluster-id", CONSUMER_ID, "--timeout", "120s",
               *extra)


def token_of(words):
    return words[words.index("--token") + 1]


def identity(consumer):
    return consumer.get_json("identity", f"controlplane-{PROVIDER_ID}", "-n", CNS)


def kubeconfig_of(consumer, ident, path):
    ref = wait_for(lambda: ((identity(consumer).get("status") or {}).get("kubeconfigSecretRef") or {}).get("name"),
                   timeout=30, what="Identity status.kubeconfigSecretRef")
    path.write_bytes(base64.b64decode(consumer.get_json("secret", ref, "-n", CNS)["data"]["kubeconfig"]))
    return path


def subject(pem_b64):
    return openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253",
                   input=base64.b64decode(pem_b64)).decode().strip()


def comparable(ident):
    """What must not depend on how the consumer authenticated."""
    spec = ident["spec"]
    auth = spec["authParams"]
    return {"name": ident["metadata"]["name"], "namespace": ident["metadata"]["namespace"],
            "labels": ident["metadata"].get("labels"), "type": spec["type"], "clusterID": spec["clusterID"],
            "tenantNamespace": spec["namespace"], "apiServer": auth.get("apiServer"), "ca": auth.get("ca"),
            "proxyURL": auth.get("proxyURL"), "subject": subject(auth["signedCRT"])}


def test_one_string_peering_matches_authenticate_and_slices_work(cli, provider, consumer, auth_v1, webhook,  # noqa: F811
                                                                 consumer_webhook, provider_signer,  # noqa: F811
                                                                 consumer_signer, unpeer, tmp_path):  # noqa: F811
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    words = one_string(cli, provider, auth_v1, "--single-use")
    tid = token_of(words).split(".")[0]
    rc, out, err = consumer_run(cli, consumer, words)
    assert rc == 0, out + err
    assert out.splitlines() == V1_LINES

    # the Tenant was made on the provider (through its webhook), the single-use token is spent
    assert provider.get_json("tenant", CONSUMER_ID, "-n", PNS)["spec"]["clusterID"] == CONSUMER_ID
    assert not provider.exists("secret", f"tenantgate-token-{tid}", "-n", auth_v1.tokens_ns)
    # the consumer's kubeconfig works on the provider, as the consumer
    via_auth = identity(consumer)
    kc = kubeconfig_of(consumer, via_auth, tmp_path / "v1.kubeconfig")
    who = provider.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", kubeconfig=kc)
    assert CONSUMER_ID in who.stdout, who

    # a replay of the spent token: the answer any bad token gets
    rc, out, err = consumer_run(cli, consumer, words)
    assert rc == EXIT_REJECTED and INVALID in err, out + err

    # resources then work as after authenticate
    rc, out, err = cli("create", "resourceslice", "pool-v1", "--remote-cluster-id", PROVIDER_ID, "--cpu", "1",
                       "--timeout", "120s", "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, err
    assert "ResourceSlice authentication: Accepted" in err and "ResourceSlice resources: Accepted" in err

    # the same Identity as `authenticate` with both kubeconfigs makes
    unpeer()
    rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       provider.kubeconfig, "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID,
                       "--timeout", "120s")
    assert rc == 0, out + err
    assert comparable(identity(consumer)) == comparable(via_auth)


CERT_GROUP = re.compile(r"tenantgate\.io/cert:[^,\s/]+:[0-9a-f]{32}")


def kubeconfig_cert_group(path):
    user = yaml.safe_load(Path(path).read_text())["users"][0]["user"]
    found = CERT_GROUP.findall(openssl("x509", "-noout", "-subject",
                                       input=base64.b64decode(user["client-certificate-data"])).decode())
    assert len(found) == 1, found
    return found[0], user["client-certificate-data"]


def test_one_string_peering_revocable_at_once(cli, provider, consumer, auth_v1, webhook,  # noqa: F811
                                              provider_signer, consumer_signer, unpeer, tmp_path):  # noqa: F811
    """Issue 48 item 1, token flow: the v1 one-string peering with --revocable gives certificate A
    bound by its group; a new request gives B; `revoke` A: A's next request AS A gets 403
    through the real API server, B keeps working."""
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    rc, out, err = consumer_run(cli, consumer, one_string(cli, provider, auth_v1, "--single-use"), "--revocable")
    assert rc == 0, out + err
    kc_a = kubeconfig_of(consumer, identity(consumer), tmp_path / "a.kubeconfig")
    group_a, _ = kubeconfig_cert_group(kc_a)
    ns = f"liqo-tenant-{CONSUMER_ID}"
    assert provider.kubectl("get", f"resourceslices.{GROUP}", "-n", ns, kubeconfig=kc_a, check=False).returncode == 0

    # B: a new request (authenticate --revocable again), issued at once with a new group
    rc, out, err = cli("authenticate", "--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig",
                       provider.kubeconfig, "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID,
                       "--revocable", "--timeout", "120s")
    assert rc == 0, out + err

    def issued_b():
        crt = (provider.get_json("tenant", CONSUMER_ID, "-n", ns).get("status", {})
               .get("authParams", {}).get("signedCRT"))
        if not crt:
            return None
        found = CERT_GROUP.findall(openssl("x509", "-noout", "-subject",
                                           input=base64.b64decode(crt)).decode())
        return crt if found and found[0] != group_a else None
    crt_b = wait_for(issued_b, timeout=60, what="certificate B with a new group")
    kc_b = tmp_path / "b.kubeconfig"
    kc_b.write_text(kc_a.read_text().replace(kubeconfig_cert_group(kc_a)[1], crt_b))

    rc, out, err = cli("revoke", "--certificate", kc_a, "--kubeconfig", provider.kubeconfig)
    assert rc == 0, out + err
    assert f"revoked {group_a} (user {CONSUMER_ID})" in out, out
    r = provider.kubectl("get", f"resourceslices.{GROUP}", "-n", ns, kubeconfig=kc_a, check=False)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower(), r
    assert provider.kubectl("get", f"resourceslices.{GROUP}", "-n", ns, kubeconfig=kc_b, check=False).returncode == 0


def test_wrong_expired_revoked_tokens_get_one_answer(cli, provider, consumer, auth_v1, webhook,  # noqa: F811
                                                     provider_signer, consumer_signer, unpeer):  # noqa: F811
    good = one_string(cli, provider, auth_v1)
    tid, secret = token_of(good).split(".")
    wrong = list(good)
    wrong[wrong.index("--token") + 1] = tid + "." + ("a" if secret[0] != "a" else "b") + secret[1:]
    unknown = list(good)
    unknown[unknown.index("--token") + 1] = "zzzzzz." + secret
    expired = one_string(cli, provider, auth_v1, "--ttl", "1s")
    revoked = one_string(cli, provider, auth_v1)
    rc, _, err = cli("delete", "token", token_of(revoked).split(".")[0], "-n", auth_v1.tokens_ns,
                     "--kubeconfig", provider.kubeconfig)
    assert rc == 0, err
    time.sleep(2)
    answers = set()
    for words in (wrong, unknown, expired, revoked):
        rc, out, err = consumer_run(cli, consumer, words)
        assert rc == EXIT_REJECTED and INVALID in err, out + err
        answers.add(err.strip())
    assert len(answers) == 1, answers
    assert secret not in auth_v1.process.log_tail(400)
    # nothing was made for the consumer
    assert not provider.exists("tenant", CONSUMER_ID, "-n", PNS)


def test_the_auth_server_v1_rights_are_these(provider, auth_v1):
    ns, tokens, t = auth_v1.ns, auth_v1.tokens_ns, "liqo-tenant-x"
    allowed = [
        dict(verb="get", resource="secrets", name="tenantgate-token-abc123", namespace=tokens),
        dict(verb="delete", resource="secrets", name="tenantgate-token-abc123", namespace=tokens),
        dict(verb="patch", resource="secrets", name="tenantgate-token-abc123", namespace=tokens),
        dict(verb="create", resource="secrets", namespace=tokens),
        dict(verb="get", resource="secrets", name="liqo-nonce", namespace=t),
        dict(verb="create", resource=GROUP + "/tenants", namespace=t),
        dict(verb="get", resource=GROUP + "/tenants", name="x", namespace=t),
    ]
    denied = [
        dict(verb="list", resource="secrets", namespace=tokens),
        # issue 44 finding 7: no Secret made outside the token namespace (the signer makes
        # the nonce Secret), so no service-account-token Secret to read back
        dict(verb="create", resource="secrets", namespace=t),
        dict(verb="create", resource="secrets", namespace=ns),
        dict(verb="create", resource="secrets", namespace="kube-system"),
        dict(verb="watch", resource="secrets", namespace=tokens),
        # the install namespace's other Secrets (the cluster key): tokens live elsewhere
        dict(verb="get", resource="secrets", name="authentication-keys", namespace=ns),
        dict(verb="get", resource="secrets", name="tenantgate-token-abc123", namespace=ns),
        dict(verb="delete", resource="secrets", name="authentication-keys", namespace=ns),
        dict(verb="get", resource="secrets", name="liqo-signed-nonce", namespace=t),
        dict(verb="get", resource="secrets", name="authentication-keys", namespace="liqo"),
        dict(verb="delete", resource="secrets", name="liqo-nonce", namespace=t),
        dict(verb="update", resource="secrets", name="liqo-nonce", namespace=t),
        dict(verb="list", resource="secrets", namespace=t),
        dict(verb="update", resource=GROUP + "/tenants", name="x", namespace=t),
        dict(verb="delete", resource=GROUP + "/tenants", name="x", namespace=t),
        dict(verb="update", resource=GROUP + "/tenants", subresource="status", name="x", namespace=t),
        dict(verb="watch", resource=GROUP + "/tenants"),   # list: rbac.yaml's name check (auth.md "Names")
        dict(verb="create", resource=GROUP + "/resourceslices", namespace=t),
        dict(verb="create", resource=GROUP + "/identities", namespace=t),
    ]
    assert [a for a in allowed if not may(provider, ns, **a)] == []
    assert [d for d in denied if may(provider, ns, **d)] == []
