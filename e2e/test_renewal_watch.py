"""Renewal you can watch (issue 48 item 3), two real clusters.

The signers and webhooks of test_slice_flow.py; the consumer authenticated once for the module
with `kubectl tenantgate authenticate`, while the provider's signer signs with the provider's
cluster CA and a 90 s lifetime (renewal due about 25 s after issue). Right after the first
kubeconfig works, the provider's signer is stopped: no renewal can come.

  trial        the consumer's Identity is given a CA bundle that does not verify the provider's
               API server: the renewed kubeconfig fails its SelfSubjectReview on the real
               provider, the Secret keeps the old one (which still works), the failure is counted
               (tenantgate_signer_renewal_trial_failures_total{reason="ServerUnreachable"})
  overdue      with renewals stopped, the Identity gets RenewalOverdue=True and the gauge 1 before
               the certificate expires (the consumer's signer runs with --renewal-grace-percent 1);
               the provider's signer started again renews, the renewed kubeconfig passes its
               trial and replaces the old one, and the condition goes False, the gauge 0"""

import base64
import json
import time

import pytest

from tenantgate_services import webhook, webhook_install  # noqa: F401
from test_signer import CONSUMER_ID, NS, PROVIDER_ID, SA, Signer, installed  # noqa: F401
from test_slice_flow import CNS, CONSUMER_CONTROLLERS, PNS, consumer_webhook, provider_signer  # noqa: F401
from test_consumer_access import (IDENTITY, SECRET, _restart_with_the_cluster_ca, client_cert,
                                  not_after, working_kubeconfig)
from bed import delete_namespaces, wait_for

IDENTITIES = "identities.authentication.liqo.io"
OVERDUE = "tenantgate_signer_renewal_overdue"
TRIAL_FAILURES = "tenantgate_signer_renewal_trial_failures_total"


@pytest.fixture(scope="module")
def consumer_signer(consumer, installed, signer_bin, tmp_path_factory):  # noqa: F811
    """test_slice_flow's consumer signer, with a 1 % grace: a 90 s certificate is overdue
    about 26 s after issue (renew-at 25 s, 1 % of its 195 s lifetime counted from NotBefore)."""
    kc = consumer.serviceaccount_kubeconfig(NS, SA, duration="6h")
    s = Signer(signer_bin, consumer, kc, tmp_path_factory.mktemp("watch-signer-c"), "signer-consumer",
               "--cluster-id", CONSUMER_ID, "--controllers", CONSUMER_CONTROLLERS,
               "--renewal-grace-percent", "1").start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def stopped_renewals(cli, provider, consumer, webhook, consumer_webhook, provider_signer,  # noqa: F811
                     consumer_signer, tmp_path_factory):
    """Authenticated with a 90 s certificate, then the provider's signer stopped. Yields the
    path of a scratch kubeconfig file and the first kubeconfig's bytes."""
    wait_for(lambda: consumer.exists("secret", "authentication-keys", "-n", "liqo"), timeout=60,
             what="the consumer signer's authentication-keys")
    both = ("--kubeconfig", consumer.kubeconfig, "--remote-kubeconfig", provider.kubeconfig,
            "--cluster-id", CONSUMER_ID, "--remote-cluster-id", PROVIDER_ID)
    # Issued CSRs of an earlier authentication carry the same request (test_consumer_access.py).
    provider.kubectl("delete", "csr", "-l", f"liqo.io/remote-cluster-id={CONSUMER_ID}", check=False)
    _restart_with_the_cluster_ca(provider_signer, provider, "90")
    path = tmp_path_factory.mktemp("watch") / "controlplane.kubeconfig"
    try:
        rc, out, err = cli("authenticate", *both, "--timeout", "120s")
        assert rc == 0, out + err
        first = wait_for(lambda: working_kubeconfig(provider, consumer, path), timeout=30,
                         what="the first ControlPlane kubeconfig")
        provider_signer.stop()
        assert not_after(client_cert(first)) - time.time() < 120, "not the short-lived certificate"
        yield path, first
    finally:
        provider_signer.stop()
        provider_signer.start()
        cli("unauthenticate", *both, "--wait", "--timeout", "60s")
        delete_namespaces(((provider, PNS), (consumer, CNS)), check=True)


def secret_kubeconfig(consumer):
    return base64.b64decode(consumer.get_json("secret", SECRET, "-n", CNS)["data"]["kubeconfig"])


def overdue_condition(consumer):
    for c in consumer.get_json(IDENTITIES, IDENTITY, "-n", CNS).get("status", {}).get("conditions") or []:
        if c["type"] == "RenewalOverdue":
            return c
    return None


def metric(signer, name, **labels):
    return signer.metrics().get((name, frozenset(labels.items())))


def test_a_renewed_kubeconfig_that_fails_its_trial_is_not_written(provider, consumer, consumer_signer,
                                                                   stopped_renewals):
    path, first = stopped_renewals
    before = metric(consumer_signer, TRIAL_FAILURES, reason="ServerUnreachable") or 0
    ca = consumer.get_json(IDENTITIES, IDENTITY, "-n", CNS)["spec"]["authParams"]["ca"]
    # a real CA, the consumer's own, which did not sign the provider's serving certificate
    wrong = base64.b64encode(open(consumer.ca_file, "rb").read()).decode()
    assert wrong != ca
    consumer.kubectl("patch", IDENTITIES, IDENTITY, "-n", CNS, "--type", "merge",
                     "-p", json.dumps({"spec": {"authParams": {"ca": wrong}}}))
    try:
        wait_for(lambda: (metric(consumer_signer, TRIAL_FAILURES, reason="ServerUnreachable") or 0) > before,
                 timeout=20, what="a failed trial counted")
        assert secret_kubeconfig(consumer) == first, "the kubeconfig that failed its trial was written"
        assert working_kubeconfig(provider, consumer, path) == first, "the old kubeconfig stopped working"
        log = consumer_signer.log()
        assert "renewed kubeconfig failed its trial: the old one is kept" in log
        assert "BEGIN" not in "".join(line for line in log.splitlines() if "trial" in line)
    finally:
        consumer.kubectl("patch", IDENTITIES, IDENTITY, "-n", CNS, "--type", "merge",
                         "-p", json.dumps({"spec": {"authParams": {"ca": ca}}}))
    # the right CA again renders the kubeconfig in use: nothing to try, nothing changes
    wait_for(lambda: "identity kubeconfig written" in consumer_signer.log().rsplit("failed its trial", 1)[1],
             timeout=20, what="the Identity reconciled with its CA back")
    assert secret_kubeconfig(consumer) == first


def test_b_stopped_renewals_show_as_overdue_before_expiry_and_clear(provider, consumer, provider_signer,
                                                                     consumer_signer, stopped_renewals):
    path, first = stopped_renewals
    end = not_after(client_cert(first))
    cond = wait_for(lambda: (lambda c: c if c and c["status"] == "True" else None)(overdue_condition(consumer)),
                    timeout=max(5, end - time.time()), interval=0.5, what="RenewalOverdue=True")
    assert time.time() < end, "overdue only after the certificate expired"
    assert cond["reason"] == "CertificateNotRenewed"
    assert time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(end)) in cond["message"], cond["message"]
    assert metric(consumer_signer, OVERDUE, identity=f"{CNS}/{IDENTITY}") == 1
    assert "identity certificate renewal overdue" in consumer_signer.log()
    # renewals resume: the provider's signer, with the cluster CA, renews the due certificate
    _restart_with_the_cluster_ca(provider_signer, provider, "90")
    wait_for(lambda: (lambda c: c and c["status"] == "False")(overdue_condition(consumer)), timeout=40,
             interval=0.5, what="RenewalOverdue=False after the renewal")
    assert metric(consumer_signer, OVERDUE, identity=f"{CNS}/{IDENTITY}") == 0
    renewed = working_kubeconfig(provider, consumer, path)
    assert renewed and client_cert(renewed) != client_cert(first), "not the renewed certificate"
    assert "renewed kubeconfig tried on the provider" in consumer_signer.log()
