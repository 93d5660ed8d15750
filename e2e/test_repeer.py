"""Re-peering at once (issue 45): `kubectl tenantgate authenticate` and `unauthenticate` back to
back, TG_REPEER_ROUNDS times (default 20), with 0 failures.

Each round authenticates (the previous round's Tenant is usually still in its finalizer: the
unauthenticate before it does not wait), then checks that the peering is whole: the provider's
Tenant is live (not being deleted), the consumer's ControlPlane kubeconfig holds that Tenant's
certificate and `kubectl auth whoami` with it is the consumer, and a ResourceSlice made with
`kubectl tenantgate create resourceslice` reaches Accepted. Then the slice is deleted and the
consumer unauthenticates without --wait. Both signers, the replicator and both webhooks run as in
test_slice_flow.py, whose fixtures this file reuses."""

import base64
import json
import os
import time

import pytest

from test_slice_flow import (CNS, GROUP, PNS, consumer_signer, consumer_webhook,  # noqa: F401
                             controlplane_kubeconfig_text,
                             installed, provider_signer, webhook, webhook_install)
from test_signer import CONSUMER_ID, NS, PROVIDER_ID
from bed import delete_namespaces, wait_for

ROUNDS = int(os.environ.get("TG_REPEER_ROUNDS", "20"))
BOTH_IDS = ("--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)


@pytest.fixture
def both(provider, consumer):
    return ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig, *BOTH_IDS)


@pytest.fixture
def unpeered(cli, provider, consumer, both):
    """Whatever a round left: slices, the peering, both tenant namespaces."""
    yield
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", CNS, "--wait=true",
                     "--timeout=60s", check=False, timeout=90)
    cli("unauthenticate", *both, "--wait", "--timeout", "60s")
    for c, ns in ((provider, PNS), (consumer, CNS)):
        c.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", ns, "--wait=false", check=False)
    # no finalizer taken off by hand: one the provider no longer lets the replicator honour
    # is let go (test_consumer_access.py)
    delete_namespaces(((provider, PNS), (consumer, CNS)), check=True)


def controlplane_cert(consumer):
    """The client certificate (PEM) and the kubeconfig text of the ControlPlane Identity, or
    None while there is none."""
    text = controlplane_kubeconfig_text(consumer)
    if not text:
        return None
    line = next(x for x in text.splitlines() if "client-certificate-data" in x)
    return base64.b64decode(line.split(":", 1)[1].strip()), text


def whole_peering(provider, consumer, tmp_path, i):
    """'' when the peering is whole: a live Tenant, and the consumer's kubeconfig holds its
    certificate and authenticates as the consumer; else what is wrong."""
    tenant = provider.get_json("tenant", CONSUMER_ID, "-n", PNS) \
        if provider.exists("tenant", CONSUMER_ID, "-n", PNS) else None
    if tenant is None:
        return "no Tenant on the provider"
    if tenant["metadata"].get("deletionTimestamp"):
        return "the provider's Tenant is being deleted (the previous peering's)"
    signed = ((tenant.get("status") or {}).get("authParams") or {}).get("signedCRT")
    # The identity controller rewrites the kubeconfig once the Identity's status moved on.
    try:
        cert, text = wait_for(lambda: (lambda ct: ct if ct and signed and base64.b64decode(signed) == ct[0]
                                       else None)(controlplane_cert(consumer)),
                              timeout=30, what="the kubeconfig holding the Tenant's certificate")
    except Exception as e:  # noqa: BLE001 - reported as the round's failure
        return f"the consumer's kubeconfig does not hold the Tenant's certificate: {e}"
    kc = tmp_path / f"round-{i}.kubeconfig"
    kc.write_text(text)
    r = provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc, check=False)
    if r.returncode != 0:
        return f"kubectl auth whoami: {r.stderr.strip()}"
    user = json.loads(r.stdout)["status"]["userInfo"]["username"]
    return "" if user == CONSUMER_ID else f"kubectl auth whoami: {user}, expected {CONSUMER_ID}"


def one_round(cli, provider, consumer, both, tmp_path, i):
    """'' or the first thing that failed in round i."""
    rc, out, err = cli("authenticate", *both, "--timeout", "90s")
    if rc != 0:
        return f"authenticate exit {rc}: {(out + err).strip()[-600:]}"
    wrong = whole_peering(provider, consumer, tmp_path, i)
    if wrong:
        return wrong
    name = f"repeer-{i}"
    rc, out, err = cli("create", "resourceslice", name, "--remote-cluster-id", PROVIDER_ID,
                       "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)
    if rc != 0 or "ResourceSlice authentication: Accepted" not in err:
        return f"create resourceslice exit {rc}: {err.strip()[-600:]}"
    # --wait: the local slice's finalizer goes once the provider's copy is gone, which
    # unauthenticate asks for
    rc, out, err = cli("delete", "resourceslice", name, "--remote-cluster-id", PROVIDER_ID, "--wait",
                       "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)
    if rc != 0:
        return f"delete resourceslice exit {rc}: {err.strip()[-600:]}"
    rc, out, err = cli("unauthenticate", *both)
    if rc != 0:
        return f"unauthenticate exit {rc}: {(out + err).strip()[-600:]}"
    return ""


def test_authenticate_unauthenticate_back_to_back(cli, provider, consumer, webhook, consumer_webhook,
                                                  provider_signer, consumer_signer, both, unpeered,
                                                  tmp_path):
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", NS), timeout=60,
             what="the consumer signer's authentication-keys")
    failures, start = [], time.monotonic()
    for i in range(ROUNDS):
        t0 = time.monotonic()
        wrong = one_round(cli, provider, consumer, both, tmp_path, i)
        print(f"round {i}: {time.monotonic() - t0:.1f}s {wrong or 'ok'}")
        if wrong:
            failures.append(f"round {i}: {wrong}")
            # start the next round from no peering at all
            consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", CNS, "--wait=true",
                             "--timeout=60s", check=False, timeout=90)
            cli("unauthenticate", *both, "--wait", "--timeout", "60s")
    print(f"{ROUNDS} rounds in {time.monotonic() - start:.1f}s")
    assert failures == [], "\n".join(failures)
