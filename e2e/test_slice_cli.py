"""`kubectl tenantgate create|get|delete resourceslice` against the real consumer API server.

The provider's verdict reaches a consumer's slice as status conditions (the replicator copies
the provider copy's status back). Here the test itself writes that status through /status, as
that copy would, so what is checked is the command: the object it applies, how it waits, and
how it ends for Accepted, Denied and no answer at all.
"""

import json
import subprocess
import time
import uuid

import pytest

from tenantgate_services import tenant_namespace_manifest
from bed import wait_for

GROUP = "authentication.liqo.io"
EXIT_REJECTED, EXIT_TIMEOUT = 1, 4


@pytest.fixture
def provider_ns(consumer, crds):
    """A provider id and the consumer's tenant namespace for it."""
    pid = f"prov-{uuid.uuid4().hex[:6]}"
    ns = f"liqo-tenant-{pid}"
    consumer.apply(tenant_namespace_manifest(pid, ns))
    yield pid, ns
    consumer.kubectl("delete", f"resourceslices.{GROUP}", "--all", "-n", ns, "--wait=false",
                     check=False)
    consumer.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def run(cli_bin, consumer, *args, timeout=60):
    p = subprocess.run([str(cli_bin), *args, "--kubeconfig", str(consumer.kubeconfig)],
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def start(cli_bin, consumer, *args):
    return subprocess.Popen([str(cli_bin), *args, "--kubeconfig", str(consumer.kubeconfig)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def verdict(consumer, ns, name, **conditions):
    """Write the provider's answer into the slice's status, as the replicator does."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conds = [{"type": t, "status": s, "reason": f"ResourceSlice{t}{s}",
              "message": f"ResourceSlice {t.lower()} {s.lower()}", "lastTransitionTime": now}
             for t, s in conditions.items()]
    consumer.kubectl("patch", "rslice", name, "-n", ns, "--subresource=status", "--type=merge",
                     "-p", json.dumps({"status": {"conditions": conds}}))


def wait_created(consumer, ns, name):
    wait_for(lambda: consumer.exists("rslice", name, "-n", ns), timeout=20,
             what=f"ResourceSlice {ns}/{name}")
    return consumer.get_json("rslice", name, "-n", ns)


def test_create_applies_liqos_slice_and_waits_for_acceptance(cli_bin, consumer, provider_ns):
    pid, ns = provider_ns
    proc = start(cli_bin, consumer, "create", "resourceslice", "mypool", "--remote-cluster-id", pid,
                 "--cpu", "2", "--memory", "4Gi", "--resource", "nvidia.com/gpu=1", "--timeout", "60s")
    got = wait_created(consumer, ns, "mypool")
    assert got["metadata"]["labels"] == {"liqo.io/replication": "true", "liqo.io/remoteID": pid,
                                         "liqo.io/remote-cluster-id": pid}
    assert got["metadata"]["annotations"]["liqo.io/create-virtual-node"] == "true"
    assert got["spec"] == {"class": "default", "providerClusterID": pid,
                           "resources": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}}
    time.sleep(1)
    assert proc.poll() is None, "returned before any verdict"
    verdict(consumer, ns, "mypool", Authentication="Accepted", Resources="Accepted")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == ""
    assert err.splitlines() == [" INFO  Creating ResourceSlice", " INFO  ResourceSlice created",
                                " INFO  Waiting for ResourceSlice authentication to be accepted",
                                " INFO  ResourceSlice authentication: Accepted",
                                " INFO  ResourceSlice resources: Accepted"]

    # get: the table, and the document
    rc, out, err = run(cli_bin, consumer, "get", "resourceslice", "--remote-cluster-id", pid)
    assert rc == 0, err
    assert out.split() == ["NAME", "AUTHENTICATION", "RESOURCES", "mypool", "Accepted", "Accepted"]
    rc, out, err = run(cli_bin, consumer, "get", "rslice", "mypool", "--remote-cluster-id", pid,
                       "-o", "json")
    assert rc == 0 and json.loads(out)["spec"]["resources"]["cpu"] == "2", err

    # create again: an update that keeps what the consumer's signer owns (spec.csr)
    consumer.kubectl("patch", "rslice", "mypool", "-n", ns, "--type=merge",
                     "-p", '{"spec":{"consumerClusterID":"cons","csr":"Y3Ny"}}')
    rc, out, err = run(cli_bin, consumer, "create", "resourceslice", "mypool",
                       "--remote-cluster-id", pid, "--cpu", "3", "--timeout", "20s")
    assert rc == 0, err
    spec = consumer.get_json("rslice", "mypool", "-n", ns)["spec"]
    assert spec["resources"] == {"cpu": "3"} and spec["csr"] == "Y3Ny"

    # delete, then delete again
    rc, out, err = run(cli_bin, consumer, "delete", "resourceslice", "mypool",
                       "--remote-cluster-id", pid, "--wait")
    assert rc == 0 and "ResourceSlice deleted" in err, err
    assert not consumer.exists("rslice", "mypool", "-n", ns)
    rc, out, err = run(cli_bin, consumer, "delete", "rs", "mypool", "--remote-cluster-id", pid)
    assert rc == 0 and "ResourceSlice already absent" in err, err


@pytest.mark.parametrize("answer, said", [
    ({"Authentication": "Denied"},
     "ResourceSlice authentication: Denied by the provider: ResourceSliceAuthenticationDenied: "
     "ResourceSlice authentication denied"),
    ({"Authentication": "Accepted", "Resources": "Denied"},
     "ResourceSlice resources: Denied by the provider: ResourceSliceResourcesDenied: "
     "ResourceSlice resources denied"),
])
def test_denied_ends_with_the_providers_reason(cli_bin, consumer, provider_ns, answer, said):
    pid, ns = provider_ns
    proc = start(cli_bin, consumer, "create", "resourceslice", "denied", "--remote-cluster-id", pid,
                 "--timeout", "60s")
    wait_created(consumer, ns, "denied")
    verdict(consumer, ns, "denied", **answer)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_REJECTED, err
    assert said in err, err


def test_no_verdict_times_out_and_says_what_it_waited_for(cli_bin, consumer, provider_ns):
    pid, ns = provider_ns
    rc, out, err = run(cli_bin, consumer, "create", "resourceslice", "silent", "--remote-cluster-id",
                       pid, "--timeout", "2s")
    assert rc == EXIT_TIMEOUT, err
    assert "timed out after 2s waiting for the provider's verdict on ResourceSlice" in err, err
    assert consumer.exists("rslice", "silent", "-n", ns)


def test_output_prints_without_applying(cli_bin, consumer, provider_ns):
    pid, ns = provider_ns
    rc, out, err = run(cli_bin, consumer, "create", "resourceslice", "shown", "--remote-cluster-id",
                       pid, "--class", "gold", "--no-virtual-node", "-o", "json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["metadata"]["namespace"] == ns and doc["spec"]["class"] == "gold"
    assert "annotations" not in doc["metadata"]
    assert not consumer.exists("rslice", "shown", "-n", ns)


def test_without_tenant_namespace_it_says_so(cli_bin, consumer, crds):
    rc, out, err = run(cli_bin, consumer, "create", "resourceslice", "x", "--remote-cluster-id",
                       f"nowhere-{uuid.uuid4().hex[:4]}")
    assert rc == EXIT_REJECTED and "no tenant namespace for cluster nowhere-" in err, err
