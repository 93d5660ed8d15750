"""The consumer's access over time (issue 36 #8 and #9), two real clusters.

The signers and webhooks of test_slice_flow.py: the provider's with the Tenant, approval and
Renew-answer controllers, the consumer's with Identities, Renews and the replicator (whose
finalizer holds a kubeconfig Secret while the provider may hold copies). The consumer is
authenticated with `kubectl tenantgate authenticate`; "access" is always checked for real:
the ControlPlane kubeconfig Secret on the consumer, used for `kubectl auth whoami` on the
provider.

  re-authentication  authenticate, unauthenticate --wait, authenticate again at once, several
                     rounds: each ends with a kubeconfig that works and stays (the old Secret,
                     still terminating, is never written into)
  renewals           own-signer mode with the provider's cluster CA and a 90 s lifetime: the
                     consumer's kubeconfig follows several renewals and keeps working after
                     the first certificate has expired"""

import base64
import calendar
import json
import time
from pathlib import Path

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import CONSUMER_ID, PROVIDER_ID, installed  # noqa: F401
from test_slice_flow import (CNS, PNS, consumer_signer, consumer_webhook,  # noqa: F401
                             provider_signer)
from bed import openssl, wait_for

IDENTITY = f"controlplane-{PROVIDER_ID}"
SECRET = f"kubeconfig-{IDENTITY}"
ROUNDS = 5                # authentications: 4 of them right after an unauthenticate --wait
SETTLE_S = 5              # the old Secret's finalizer goes within a second or two
RENEWS = "renews.authentication.liqo.io"
GROUP = "authentication.liqo.io"
BACKOFF_BUILT_MS = 40960  # refused retries from 5 ms, doubling: the 14th waits 41 s
NAMESPACE_GONE_S = 25     # the namespace controllers' passes, not the slice's backoff


@pytest.fixture
def auth(cli, provider, consumer, webhook, consumer_webhook, provider_signer, consumer_signer):
    """(authenticate, unauthenticate) with the CLI; unauthenticated and both tenant namespaces
    gone afterwards."""
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", "liqo"), timeout=60,
             what="the consumer signer's authentication-keys")
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)

    def authenticate():
        rc, out, err = cli("authenticate", *both, "--timeout", "120s")
        assert rc == 0, out + err

    def unauthenticate():
        rc, out, err = cli("unauthenticate", *both, "--wait", "--timeout", "60s")
        assert rc == 0, out + err
    yield authenticate, unauthenticate
    cli("unauthenticate", *both, "--wait", "--timeout", "60s")
    # The consumer's namespace first, not waited for: the namespace controllers' 5 s grace
    # periods on both clusters then run at once. No finalizer is taken off by hand: the
    # replicator lets go of what the provider no longer lets it delete.
    consumer.kubectl("delete", "namespace", CNS, "--wait=false", check=False)
    provider.kubectl("delete", "namespace", PNS, "--wait=true", "--timeout=120s", check=False, timeout=150)
    wait_for(lambda: not consumer.exists("namespace", CNS), timeout=120, interval=1,
             what=f"namespace {CNS} gone on the consumer")


def client_cert(kubeconfig_bytes):
    for line in kubeconfig_bytes.decode().splitlines():
        if "client-certificate-data" in line:
            return base64.b64decode(line.split(":", 1)[1].strip())
    raise AssertionError("no client-certificate-data in the kubeconfig")


def working_kubeconfig(provider, consumer, path):
    """The ControlPlane kubeconfig Secret as it is now, if it exists, is not being deleted and
    authenticates on the provider as the consumer: its bytes, else None."""
    if not consumer.exists("secret", SECRET, "-n", CNS):
        return None
    sec = consumer.get_json("secret", SECRET, "-n", CNS)
    if sec["metadata"].get("deletionTimestamp") or "kubeconfig" not in (sec.get("data") or {}):
        return None
    kc = base64.b64decode(sec["data"]["kubeconfig"])
    path.write_bytes(kc)
    who = provider.kubectl("auth", "whoami", "-o", "json", kubeconfig=path, check=False)
    if who.returncode != 0 or json.loads(who.stdout)["status"]["userInfo"]["username"] != CONSUMER_ID:
        return None
    return kc


def test_authenticating_again_right_after_unauthenticate_leaves_a_working_kubeconfig(
        provider, consumer, consumer_signer, auth, tmp_path):
    authenticate, unauthenticate = auth
    path = tmp_path / "controlplane.kubeconfig"
    for n in range(ROUNDS):
        authenticate()
        wait_for(lambda: working_kubeconfig(provider, consumer, path), timeout=30, interval=0.5,
                 what=f"a working ControlPlane kubeconfig after authentication {n + 1}")
        # the previous Identity's Secret, held by the replicator's finalizer, has had time to go:
        # the kubeconfig must not have gone with it
        time.sleep(SETTLE_S)
        assert working_kubeconfig(provider, consumer, path), \
            f"authentication {n + 1}: the ControlPlane kubeconfig vanished or stopped working"
        if n + 1 < ROUNDS:
            unauthenticate()
            # --wait deleted the Identity dependents first: its Renew, and so the Renew's copy
            # on the provider, went while the Tenant still let the consumer delete it
            assert provider.get_json(RENEWS, "-n", PNS)["items"] == [], \
                f"unauthenticate {n + 1} left a Renew copy on the provider"
    # how often the race came up (the signer waited for the old Secret to go)
    print("waits for a terminating Secret:",
          consumer_signer.log().count("identity kubeconfig secret still being deleted"))


def slice_backoff_ms(signer, name):
    """The last backoff the signer logged for the replicator's key of local slice name, or 0."""
    key = f"replrs/{CNS}/{name}"
    delays = [e["delay_ms"] for e in signer_log(signer)
              if e["msg"] == "requeued with backoff" and e["key"] == key]
    return delays[-1] if delays else 0


def signer_log(signer):
    return [json.loads(line) for line in signer.log().splitlines() if line.startswith("{")]


def test_tenant_namespace_goes_after_the_provider_dropped_the_consumer(cli, provider, consumer,
                                                                      consumer_signer, auth):
    """The provider undoes the peering first (its Tenant deleted: the consumer's rights go).
    A slice the consumer deletes then keeps its finalizer: the provider refuses the delete of
    its copy (403), retried with a growing backoff, here until the next retry is 41 s away.
    Then the consumer's admin deletes the tenant namespace: its kubeconfig Secret is on the way
    out too, so the slice and the Renew decide again at once and the replicator takes their
    finalizers off (a Warning event and a log line say so); the namespace goes without anyone's
    help, well before the slice's backoff ends."""
    authenticate, _ = auth
    authenticate()
    rc, out, err = cli("create", "resourceslice", "pool-d", "--remote-cluster-id", PROVIDER_ID,
                       "--timeout", "60s", "--kubeconfig", consumer.kubeconfig)
    assert rc == 0, out + err
    assert provider.get_json(RENEWS, "-n", PNS)["items"], "no Renew copy on the provider"
    provider.kubectl("delete", "tenant", CONSUMER_ID, "-n", PNS, "--wait=true", "--timeout=60s", timeout=90)
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "pool-d", "-n", CNS, "--wait=false")
    wait_for(lambda: slice_backoff_ms(consumer_signer, "pool-d") >= BACKOFF_BUILT_MS, timeout=90,
             interval=0.5, what=f"the refused slice's retries {BACKOFF_BUILT_MS} ms apart")
    assert consumer.exists(f"resourceslices.{GROUP}", "pool-d", "-n", CNS), \
        "the slice went while the provider refused the delete of its copy"
    t0 = time.monotonic()
    consumer.kubectl("delete", "namespace", CNS, "--wait=false")
    wait_for(lambda: not consumer.exists("namespace", CNS), timeout=NAMESPACE_GONE_S, interval=1,
             what=f"namespace {CNS} gone on the consumer with no finalizer taken off by hand")
    print(f"namespace gone {time.monotonic() - t0:.1f}s after its deletion")
    # the Warning events went with the namespace; the log lines stay
    let_go = {(e["kind"], e["name"]) for e in signer_log(consumer_signer)
              if e["msg"].endswith("finalizer removed without the copy") and e["namespace"] == CNS}
    assert let_go == {("Renew", IDENTITY), ("ResourceSlice", "pool-d")}, let_go


def _restart_with_the_cluster_ca(signer, cluster, max_lifetime):
    """Own-signer mode signing with the provider's cluster CA, which its API server trusts for
    client certificates: the short-lived certificates authenticate for real."""
    pki = Path(cluster.ca_file).parent
    signer.stop()
    signer.start("--signer-name", "tenantgate.io/identity", "--ca-cert", pki / "ca.crt",
                 "--ca-key", pki / "ca.key", "--max-cert-lifetime", max_lifetime)


def not_after(cert_pem):
    out = openssl("x509", "-noout", "-enddate", "-dateopt", "iso_8601", input=cert_pem).decode()
    return calendar.timegm(time.strptime(out.strip().split("=", 1)[1], "%Y-%m-%d %H:%M:%SZ"))


RENEWALS = 3


def test_consumer_keeps_access_across_renewals(provider, consumer, provider_signer, auth, tmp_path):
    """A 90 s lifetime: renewal is due about 25 s after each issue. The consumer's kubeconfig
    takes every renewed certificate (through the Tenant, the replicated Renew and the Identity)
    and works at every look, also after the first certificate has expired."""
    authenticate, _ = auth
    # Issued CSRs of an earlier authentication (kept an hour) carry the same request: the
    # Tenant controller would take their year- or week-long certificate.
    provider.kubectl("delete", "csr", "-l", f"liqo.io/remote-cluster-id={CONSUMER_ID}", check=False)
    _restart_with_the_cluster_ca(provider_signer, provider, "90")
    try:
        authenticate()
        path = tmp_path / "controlplane.kubeconfig"
        first = client_cert(wait_for(lambda: working_kubeconfig(provider, consumer, path), timeout=30,
                                     what="the first ControlPlane kubeconfig"))
        first_end = not_after(first)
        assert first_end - time.time() < 120, "not the short-lived certificate"
        seen = [first]
        deadline = max(first_end + 10, time.time() + 30 * RENEWALS) + 30
        while time.time() < deadline and not (len(seen) > RENEWALS and time.time() > first_end + 10):
            kc = wait_for(lambda: working_kubeconfig(provider, consumer, path), timeout=15, interval=0.5,
                          what=f"a working kubeconfig ({len(seen) - 1} renewals so far)")
            if client_cert(kc) != seen[-1]:
                seen.append(client_cert(kc))
            time.sleep(2)
        print(f"{len(seen) - 1} renewals reached the consumer; the first certificate expired "
              f"{time.time() - first_end:.0f} s ago")
        assert len(seen) > RENEWALS, f"{len(seen) - 1} renewals reached the consumer"
        assert time.time() > first_end, "the first certificate has not expired yet"
        assert working_kubeconfig(provider, consumer, path)
        assert len(set(seen)) == len(seen)
    finally:
        provider_signer.stop()
        provider_signer.start()
