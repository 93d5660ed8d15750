"""Bootstrap tokens on a provider: `kubectl tenantgate create / get / delete token` (issue 40,
docs/cli.md "Bootstrap tokens") through the bed's real API server.

What an administrator relies on: the token is printed once and only its SHA-256 is stored;
`get token` shows id, expiry, usage and description but never a secret, and marks expired
ones; `delete token` revokes; bad input is a usage error (exit 2) that says what was expected.
"""

import base64
import hashlib
import json
import re
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{32})$")


@pytest.fixture
def ns(provider):
    name = f"tok-{uuid.uuid4().hex[:8]}"
    provider.create_namespace(name)
    yield name
    provider.kubectl("delete", "namespace", name, "--wait=false", check=False)


def token_cli(cli, provider, *args):
    return cli(*args, "--kubeconfig", provider.kubeconfig)


def stored(provider, ns, tid):
    return provider.get_json("secret", f"tenantgate-token-{tid}", "-n", ns)


def test_create_prints_the_token_once_and_stores_only_its_hash(cli, provider, ns):
    rc, out, err = token_cli(cli, provider, "create", "token", "-n", ns, "--ttl", "2h",
                             "--single-use", "--description", "for cluster-b")
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 1 and TOKEN.match(lines[0]), out
    tid, secret = TOKEN.match(lines[0]).groups()
    assert tid in err and "shown only now" in err and secret not in err
    sec = stored(provider, ns, tid)
    assert sec["type"] == "tenantgate.io/bootstrap-token"
    assert sec["metadata"]["labels"]["tenantgate.io/token-id"] == tid
    assert sec["metadata"]["annotations"]["tenantgate.io/description"] == "for cluster-b"
    data = {k: base64.b64decode(v).decode() for k, v in sec["data"].items()}
    assert data["secret-sha256"] == hashlib.sha256(secret.encode()).hexdigest()
    assert data["usage"] == "single-use" and data["token-id"] == tid
    expires = datetime.strptime(data["expiration"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert abs(expires - (datetime.now(timezone.utc) + timedelta(hours=2))) < timedelta(minutes=2)
    assert secret not in json.dumps(sec)
    for v in sec["data"].values():
        assert secret not in base64.b64decode(v).decode()


def test_get_lists_without_secrets_and_marks_expired(cli, provider, ns):
    made = []
    for args in (("--ttl", "1s"), ("--description", "kept")):
        rc, out, err = token_cli(cli, provider, "create", "token", "-n", ns, *args)
        assert rc == 0, err
        made.append(TOKEN.match(out.strip()).groups())
    time.sleep(2)
    rc, out, err = token_cli(cli, provider, "get", "token", "-n", ns)
    assert rc == 0, err
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert out.splitlines()[0].split() == ["ID", "EXPIRES", "USAGE", "DESCRIPTION"]
    assert set(rows) == {made[0][0], made[1][0]}, out
    assert "(expired)" in rows[made[0][0]] and "(expired)" not in rows[made[1][0]]
    assert "reusable" in rows[made[1][0]] and rows[made[1][0]].endswith("kept")
    for _, secret in made:
        assert secret not in out
    rc, out, _ = token_cli(cli, provider, "get", "token", made[1][0], "-n", ns)
    assert rc == 0 and len(out.splitlines()) == 2 and made[1][0] in out
    # other Secrets of the namespace are not tokens
    provider.kubectl("create", "secret", "generic", "unrelated", "-n", ns, "--from-literal=a=b")
    rc, out, _ = token_cli(cli, provider, "get", "tokens", "-n", ns)
    assert rc == 0 and "unrelated" not in out and len(out.splitlines()) == 3


def test_delete_revokes(cli, provider, ns):
    rc, out, err = token_cli(cli, provider, "create", "token", "-n", ns)
    assert rc == 0, err
    tid = TOKEN.match(out.strip()).group(1)
    rc, _, err = token_cli(cli, provider, "delete", "token", tid, "-n", ns)
    assert rc == 0, err
    assert not provider.exists("secret", f"tenantgate-token-{tid}", "-n", ns)
    rc, _, err = token_cli(cli, provider, "delete", "token", tid, "-n", ns)
    assert rc == 1 and "not found" in err.lower(), err
    rc, _, err = token_cli(cli, provider, "get", "token", tid, "-n", ns)
    assert rc == 1 and "not found" in err.lower(), err


@pytest.mark.parametrize("args, said", [
    (("create", "token", "--ttl", "0s"), "--ttl: expected a duration"),
    (("create", "token", "--ttl", "25h"), "at most 24h"),
    (("create", "token", "--description", "x" * 300), "at most 256"),
    (("get", "token", "ABCDEF"), "ID: expected 6 characters"),
    (("delete", "token"), "ID is required"),
    (("get", "token", "--single-use"), "does not apply here"),
    (("create", "tokn"), "unknown resource \"tokn\" (nonce, resourceslice, token)"),
])
def test_bad_input_is_a_usage_error(cli, provider, args, said):
    rc, out, err = token_cli(cli, provider, *args)
    assert rc == 2 and said in err, (rc, out, err)


def test_by_default_tokens_have_a_namespace_of_their_own(cli, provider):
    """Not liqo: whoever reads tokens (tenantgate-auth) must read no other Secret there."""
    rc, out, err = token_cli(cli, provider, "create", "token")
    assert rc == 0, err
    tid = TOKEN.match(out.strip()).group(1)
    try:
        sec = stored(provider, "tenantgate-tokens", tid)
        assert sec["type"] == "tenantgate.io/bootstrap-token"
        rc, out, _ = token_cli(cli, provider, "get", "token", tid)
        assert rc == 0 and tid in out
    finally:
        token_cli(cli, provider, "delete", "token", tid)
    assert not provider.exists("secret", f"tenantgate-token-{tid}", "-n", "tenantgate-tokens")
