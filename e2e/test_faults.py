"""Faults of the platform under the running services: the API server restarts mid-watch.

An apiserver restart (an upgrade, a crash) cuts every connection, watches included, and
the port refuses for a few seconds.  The webhook and the signers must come back on their
own: resume their watches from the last resourceVersion (or relist when that is too old),
so that objects created while they were reconnecting are not missed, and the onboarding
started right after the restart completes, without a restart of any service.

Evidence that a service reconnected rather than merely survived: the same pid is alive,
every connection it held to the apiserver before the restart is gone, and it holds new
ones; and the signer acted on objects that only a watch (not a request of ours) tells it
about.  The services and fixtures are those of test_signer.py / tenantgate_services.py."""

import json
import os
import re
import time

from tenantgate_services import (http_get, tenant_namespace_manifest, webhook,  # noqa: F401
                                 webhook_install)
from test_signer import (PROVIDER_ID, consumer_keys, consumer_signed_nonce,  # noqa: F401
                         consumer_signer, csr_condition, identity_from, installed, kubectl_as,
                         make_csr, provider_nonce, provider_signer,
                         tenant_csrs, tenant_manifest, tenant_ready, unb64)
from bed import apiserver_connections, wait_for


def _services(webhook, provider_signer, consumer_signer):  # noqa: F811
    return {"webhook": webhook.process, "provider signer": provider_signer.process,
            "consumer signer": consumer_signer.process}


def assert_reconnected(name, proc, pid_before, conns_before, port):
    assert proc.alive() and proc.pid == pid_before, f"{name} was restarted or died"
    conns = wait_for(lambda: apiserver_connections(proc.pid, port), timeout=30,
                     what=f"{name} connected to the apiserver again")
    assert not conns & conns_before, f"{name} still holds a pre-restart connection"


def informer_failures(proc):
    """The 'informer failed' WARN lines a service has logged so far."""
    lines = []
    for raw in proc.log_path.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("msg") == "informer failed":
            lines.append(line)
    return lines


def signer_informer_failures(signer):
    """tenantgate_signer_informer_failures_total per informer, from its /metrics."""
    status, text = http_get(signer.metrics_port, "/metrics")
    assert status == 200
    return {k: float(v) for k, v in re.findall(
        r'^tenantgate_signer_informer_failures_total\{informer="([^"]+)"\} (\S+)$', text, re.M)}


def test_apiserver_restarts_during_watches_nothing_missed(provider, consumer, webhook,
                                                          provider_signer, consumer_signer,
                                                          tmp_path):
    cid = f"fault-{os.urandom(4).hex()}"
    pns, cns = f"liqo-tenant-{cid}", f"liqo-tenant-{PROVIDER_ID}"     # the consumer's: one per provider
    pport, cport = provider.ports()["apiserver"], consumer.ports()["apiserver"]
    try:
        # All three are watching: ready, and connected to their apiserver.
        for s in (provider_signer, consumer_signer):
            wait_for(lambda: http_get(s.metrics_port, "/readyz")[0] == 200, timeout=20,
                     what=f"{s.name} /readyz 200")
        before = {}
        for name, proc in _services(webhook, provider_signer, consumer_signer).items():
            port = cport if name == "consumer signer" else pport
            conns = wait_for(lambda: apiserver_connections(proc.pid, port), timeout=10,
                             what=f"{name} connected")
            before[name] = (proc.pid, conns)
        key, pub = consumer_keys(consumer, tmp_path)
        provider.apply(tenant_namespace_manifest(cid))
        consumer.apply(tenant_namespace_manifest(PROVIDER_ID, name=cns))

        # The provider's apiserver restarts under the webhook and the provider signer.
        failures_before = {name: len(informer_failures(proc))
                           for name, proc in _services(webhook, provider_signer, consumer_signer).items()}
        counted_before = signer_informer_failures(provider_signer)
        old, new, took = provider.restart_apiserver()
        print(f"provider apiserver restarted: pid {old} -> {new} in {took:.1f}s")
        # At once, while the services are still backing off: the nonce Secret.  Only the
        # resumed watch (or a relist) can tell the signer about it.
        t0 = time.monotonic()
        nonce = provider_nonce(provider, cid, pns, timeout=45)
        print(f"nonce filled {time.monotonic() - t0:.1f}s after the apiserver was back")
        sig = consumer_signed_nonce(consumer, cns, nonce)
        tenant = tenant_manifest(cid, pns, pub, make_csr(key, cid, tmp_path), sig)
        provider.apply(tenant)             # through the webhook (failurePolicy Fail)
        t = wait_for(lambda: tenant_ready(provider, cid, pns), timeout=45, interval=0.2,
                     what="Tenant status filled after the provider apiserver restart")
        csrs = tenant_csrs(provider, cid)
        assert len(csrs) == 1 and csr_condition(csrs[0]) == ("Approved", "TenantValidated")
        assert csrs[0]["status"].get("certificate")
        for name in ("webhook", "provider signer"):
            procs = _services(webhook, provider_signer, consumer_signer)
            assert_reconnected(name, procs[name], *before[name], pport)
            # and each said, at WARN, which watch broke and when it would retry
            new_lines = informer_failures(procs[name])[failures_before[name]:]
            assert new_lines and all(line["level"] == "warn" and line["resource"].startswith("/api")
                                     and line["error"] and line["retry_ms"] > 0 for line in new_lines), \
                f"{name}: {new_lines}"
        # the provider signer's metric counted them too
        counted = signer_informer_failures(provider_signer)
        assert sum(counted.values()) > sum(counted_before.values()), (counted_before, counted)

        # The consumer's apiserver restarts around the Identity step.
        old, new, took = consumer.restart_apiserver()
        print(f"consumer apiserver restarted: pid {old} -> {new} in {took:.1f}s")
        consumer.apply(identity_from(t["status"], cid, cns))
        idname = f"controlplane-{PROVIDER_ID}"
        ref = wait_for(lambda: ((consumer.get_json("identity", idname, "-n", cns).get("status")
                                 or {}).get("kubeconfigSecretRef") or {}).get("name"),
                       timeout=45, what="Identity status.kubeconfigSecretRef after the restart")
        kc = tmp_path / "remote.kubeconfig"
        kc.write_bytes(unb64(consumer.get_json("secret", ref, "-n", cns)["data"]["kubeconfig"]))
        assert_reconnected("consumer signer", consumer_signer.process,
                           *before["consumer signer"], cport)

        # The consumer's kubeconfig works against the provider, with the consumer's rights.
        # (Asked, not a bare slice written: the webhook refuses a consumer's slice that is not
        # a replicated copy, PROTOCOL.md 5a.)
        r = provider.kubectl("auth", "can-i", "create", "resourceslices.authentication.liqo.io",
                             "-n", pns, kubeconfig=kc, check=False)
        assert r.returncode == 0 and r.stdout.strip() == "yes", r.stdout + r.stderr
        who = kubectl_as(provider, kc, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
        assert who.returncode == 0 and who.stdout == cid, who.stderr
    finally:
        # Shared clusters: both must be healthy for the tests after this one.
        for c in (provider, consumer):
            wait_for(lambda: c.kubectl("get", "--raw", "/readyz", check=False).returncode == 0,
                     timeout=60, what=f"{c.name} apiserver ready")
        provider.kubectl("delete", "resourceslices.authentication.liqo.io", "--all", "-n", pns,
                         "--ignore-not-found", check=False)
        provider.kubectl("delete", "tenant", "--all", "-n", pns, "--wait=false", check=False)
        provider.delete_namespace(pns)
        consumer.kubectl("delete", "namespace", cns, "--ignore-not-found", "--wait=true", "--timeout=120s",
                         timeout=150)
