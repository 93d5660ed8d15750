"""The test bed itself: real upstream components reproduce the machinery the seeds rely on.

(a) our CRDs install, and every manifest under manifests/ passes a server-side dry run;
    the seed Tenants round-trip field for field
(b) a kube-apiserver-client CSR for an Ed25519 key, approved with kubectl, is signed by the
    controller-manager, and the certificate authenticates as user cl01 / group liqo.io
(c) that user may do only what a RoleBinding grants
(d) a ValidatingWebhookConfiguration pointing at a test HTTPS responder is called on
    `kubectl apply`, and its denial reaches kubectl's stderr
(e) `e2e/cluster down` leaves no process and no listening port behind
(f) `e2e/cluster up` reports a daemon that exits at startup (exit status, log tail with its
    stderr) and starts again on fresh ports when one was taken
"""

import base64
import datetime
import http.server
import json
import os
import re
import socket
import ssl
import threading
import time
import uuid

import pytest
import yaml

from bed import (RUN_TAG, Cluster, cluster_tool, free_port, mint_serving_cert, openssl,
                 port_halves, wait_for)

GROUP = "authentication.liqo.io"
WEBHOOK_CONFIGS = ("validatingwebhookconfiguration", "mutatingwebhookconfiguration")


@pytest.fixture(scope="module", autouse=True)
def schema_only(provider):
    """These tests are about the bed's CRDs and API server, not tenantgate's admission: when a
    test file before this one has registered tenantgate-webhook (the session's `webhook`
    fixture), its configurations step aside for this module and come back as they were."""
    saved = []
    for kind in WEBHOOK_CONFIGS:
        got = provider.kubectl("get", kind, "tenantgate", "-o", "json", check=False)
        if got.returncode == 0:
            obj = json.loads(got.stdout)
            for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
                obj["metadata"].pop(k, None)
            saved.append(obj)
            provider.kubectl("delete", kind, "tenantgate")
    yield
    for obj in saved:
        provider.create(obj)


# --- (a) CRDs and manifests ---------------------------------------------------------------

def test_crds_are_served_with_liqo_names(provider, crds):
    out = provider.kubectl("api-resources", "--api-group", GROUP, "-o", "wide").stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert set(rows) == {"identities", "tenants", "resourceslices", "renews"}, out
    assert rows["tenants"][1] == "tn" and rows["identities"][1] == "id", out
    assert rows["resourceslices"][1] == "rslice", out
    assert rows["renews"][1] == f"{GROUP}/v1beta1", out                # Liqo gives it no short name
    for row in rows.values():
        assert f"{GROUP}/v1beta1" in row and "true" in row, row       # namespaced
    crd = provider.get_json("crd", f"tenants.{GROUP}")
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    assert "liqo" in crd["spec"]["names"]["categories"]


def _strings(node, skip_key):
    """Every string in a parsed YAML tree, except under mapping key skip_key."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item, skip_key)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key != skip_key:
                yield from _strings(value, skip_key)


def _manifest_files(root):
    """Stand-alone manifests under root: not kustomization.yaml, and not a file that its
    directory's kustomization uses as a patch, generator input, ... (those are checked
    through `kubectl apply -k`)."""
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or path.name == "kustomization.yaml":
            continue
        if "chart" in path.relative_to(root).parts:
            continue    # the Helm chart: templates, values, goldens (e2e/test_helm.py)
        kustomization = path.parent / "kustomization.yaml"
        if kustomization.exists():
            used = {str((path.parent / s).resolve()) for s in
                    _strings(yaml.safe_load(kustomization.read_text()), "resources")
                    if "\n" not in s}
            if str(path.resolve()) in used:
                continue
        yield path


def test_every_manifest_passes_server_side_dry_run(provider, crds, source_dir):
    root = source_dir / "manifests"
    files = list(_manifest_files(root))
    assert files, "no manifests found"
    docs = [(f, d) for f in files for d in yaml.safe_load_all(f.read_text()) if d]
    # CRDs must exist for real before objects of their kinds can be dry-run.
    for f, doc in docs:
        if doc.get("kind") == "CustomResourceDefinition":
            provider.apply(doc, "--server-side", "--force-conflicts")
    # A dry run checks schemas and admission, not whether a namespace exists yet.
    for ns in {d.get("metadata", {}).get("namespace") for _, d in docs} - {None}:
        if not provider.exists("namespace", ns):
            provider.create_namespace(ns)
    failures = []
    for f in files:
        proc = provider.kubectl("apply", "--dry-run=server", "-f", f, check=False)
        if proc.returncode != 0:
            failures.append(f"{f.relative_to(source_dir)}: {proc.stderr.strip()}")
    for k in sorted(root.rglob("kustomization.yaml")):
        proc = provider.kubectl("apply", "--dry-run=server", "-k", k.parent, check=False)
        if proc.returncode != 0:
            failures.append(f"{k.relative_to(source_dir)}: {proc.stderr.strip()}")
    assert not failures, "\n".join(failures)


SEED_VECTORS = ["seed-cl01-rawkey", "seed-cl01-pemkey", "seed-doc-as-printed",
                "seed-cl01-flipped-signature"]


@pytest.mark.parametrize("vector", SEED_VECTORS)
def test_seed_tenant_round_trips(provider, crds, namespace, vectors_dir, vector):
    sent = json.loads((vectors_dir / f"{vector}.json").read_text())
    # no tenant labels: schema only, and manifests/policy keeps them to liqo-tenant-<id>
    ns = namespace(provider, "seed")
    obj = json.loads(json.dumps(sent))
    obj["metadata"]["namespace"] = ns
    provider.create(obj)
    got = provider.get_json("tenant", sent["metadata"]["name"], "-n", ns)
    for field, value in sent["spec"].items():
        assert got["spec"][field] == value, field          # byte-for-byte, base64 text
    assert got["metadata"]["labels"] == sent["metadata"]["labels"]
    # Liqo's defaults.
    assert got["spec"]["authzPolicy"] == "KeysExchange"
    assert got["spec"]["tenantCondition"] == "Active"
    table = provider.kubectl("get", "tn", "-n", ns).stdout.split()
    assert table[:3] == ["NAME", "CONDITION", "AGE"] and table[3:5] == [
        sent["metadata"]["name"], "Active"], table


def _tenant(name, ns, **spec):
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "Tenant",
            "metadata": {"name": name, "namespace": ns}, "spec": {"clusterID": name, **spec}}


@pytest.mark.parametrize("spec, expect", [
    ({"clusterID": "Bad_ID"}, "spec.clusterID"),
    ({"tenantCondition": "Sleeping"}, "spec.tenantCondition"),
    ({"authzPolicy": "Anything"}, "spec.authzPolicy"),
    ({"publicKey": "not base64!"}, "spec.publicKey"),
])
def test_tenant_schema_rejects(provider, crds, namespace, spec, expect):
    ns = namespace(provider, "schema")
    proc = provider.create(_tenant("cl02", ns, **spec), check=False)
    assert proc.returncode != 0 and expect in proc.stderr, proc.stderr


def test_tenant_cluster_id_is_immutable_and_status_is_a_subresource(provider, crds, namespace):
    ns = namespace(provider, "immut")
    provider.create(_tenant("cl03", ns))
    proc = provider.kubectl("patch", "tn", "cl03", "-n", ns, "--type=merge",
                            "-p", '{"spec":{"clusterID":"cl04"}}', check=False)
    assert proc.returncode != 0 and "clusterID is immutable" in proc.stderr, proc.stderr
    # (Removing it, or one over 63 characters, passes the schema as it does Liqo's: the
    # webhook refuses both, see test_liqo.py.)
    # Other spec fields stay mutable.
    provider.kubectl("patch", "tn", "cl03", "-n", ns, "--type=merge",
                     "-p", '{"spec":{"tenantCondition":"Cordoned"}}')

    status = {"status": {"tenantNamespace": ns, "authParams": {
        "apiServer": "https://127.0.0.1:6443", "awsConfig": {
            "awsUserArn": "arn:aws:iam::1:user/liqo", "awsAccessKeyID": "AKIA",
            "awsSecretAccessKey": "s", "awsRegion": "eu-west-1", "awsClusterName": "eks"}},
        "conditions": [{"type": "Authenticated", "status": "True"}]}}
    # Through the main resource the status is ignored ...
    provider.kubectl("patch", "tn", "cl03", "-n", ns, "--type=merge", "-p", json.dumps(status))
    assert "status" not in provider.get_json("tn", "cl03", "-n", ns)
    # ... through /status it lands, awsConfig as Liqo's IAM provider writes it, and a field
    # Liqo's CRD lacks (conditions) is pruned as Liqo's CRD prunes it.
    provider.kubectl("patch", "tn", "cl03", "-n", ns, "--subresource=status", "--type=merge",
                     "-p", json.dumps(status))
    got = provider.get_json("tn", "cl03", "-n", ns)["status"]
    assert got["authParams"] == status["status"]["authParams"], got
    assert "conditions" not in got, got


def test_identity_printer_columns_and_enum(provider, crds, namespace):
    ns = namespace(provider, "ident")
    ident = {"apiVersion": f"{GROUP}/v1beta1", "kind": "Identity",
             "metadata": {"name": "controlplane-prov1", "namespace": ns},
             "spec": {"clusterID": "prov1", "type": "ControlPlane", "namespace": "liqo-tenant-c",
                      "authParams": {"apiServer": "https://127.0.0.1:6443",
                                     "ca": base64.b64encode(b"ca").decode(),
                                     "signedCRT": base64.b64encode(b"crt").decode()}}}
    provider.create(ident)
    provider.kubectl("patch", "id", "controlplane-prov1", "-n", ns, "--subresource=status",
                     "--type=merge", "-p",
                     '{"status":{"kubeconfigSecretRef":{"name":"kubeconfig-controlplane-prov1"}}}')
    table = provider.kubectl("get", "id", "-n", ns, "-o", "wide").stdout.split()
    assert table[:4] == ["NAME", "TYPE", "KUBECONFIGSECRET", "AGE"], table
    assert table[4:7] == ["controlplane-prov1", "ControlPlane", "kubeconfig-controlplane-prov1"]
    bad = json.loads(json.dumps(ident))
    bad["metadata"]["name"] = "other"
    bad["spec"]["type"] = "Root"
    proc = provider.create(bad, check=False)
    assert proc.returncode != 0 and "spec.type" in proc.stderr, proc.stderr


def _slice(name, ns, **spec):
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def test_resourceslice_round_trips_liqo_fields_and_columns(provider, crds, namespace):
    """Every field a Liqo peer writes is stored as sent; conditions use Liqo's enums, status
    is a subresource, and the printer columns are Liqo's."""
    ns = namespace(provider, "rslice")
    spec = {"class": "default", "consumerClusterID": "wispy-firefly",
            "providerClusterID": "cool-firefly", "csr": base64.b64encode(b"csr").decode(),
            "resources": {"cpu": "4", "memory": "8Gi", "pods": 110, "nvidia.com/gpu": "1"}}
    provider.create(_slice("mypool", ns, **spec))
    got = provider.get_json("rslice", "mypool", "-n", ns)
    assert got["spec"] == spec
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {"conditions": [
                  {"type": "Authentication", "status": "Accepted", "lastTransitionTime": now,
                   "reason": "ResourceSliceAuthenticationAccepted",
                   "message": "ResourceSlice authentication accepted"},
                  {"type": "Resources", "status": "Denied", "lastTransitionTime": now,
                   "reason": "ResourceSliceResourcesDenied",
                   "message": "ResourceSlice resources denied"}],
              "resources": {"cpu": "4", "memory": "8Gi", "pods": "110"},
              "authParams": {"ca": base64.b64encode(b"ca").decode(),
                             "signedCRT": base64.b64encode(b"crt").decode(),
                             "apiServer": "https://127.0.0.1:6443", "proxyURL": "http://p:3128"},
              "storageClasses": [{"storageClassName": "standard", "default": True}],
              "ingressClasses": [{"ingressClassName": "nginx", "default": False}],
              "loadBalancerClasses": [{"loadBalancerClassName": "metallb"}],
              "nodeLabels": {"region": "eu"}, "nodeSelector": {"zone": "a"}}
    # Through the main resource the status is ignored, through /status it lands.
    provider.kubectl("patch", "rslice", "mypool", "-n", ns, "--type=merge",
                     "-p", json.dumps({"status": status}))
    assert "status" not in provider.get_json("rslice", "mypool", "-n", ns)
    provider.kubectl("patch", "rslice", "mypool", "-n", ns, "--subresource=status",
                     "--type=merge", "-p", json.dumps({"status": status}))
    assert provider.get_json("rslice", "mypool", "-n", ns)["status"] == status
    table = provider.kubectl("get", "rslice", "-n", ns).stdout.split()
    assert table[:4] == ["NAME", "AUTHENTICATION", "RESOURCES", "AGE"], table
    assert table[4:7] == ["mypool", "Accepted", "Denied"], table
    # Every spec field is optional: an empty slice is stored.
    provider.create(_slice("empty", ns))


@pytest.mark.parametrize("patch, expect", [
    ({"spec": {"consumerClusterID": "Bad_ID"}}, "spec.consumerClusterID"),
    ({"spec": {"providerClusterID": "-x"}}, "spec.providerClusterID"),
    ({"spec": {"resources": {"cpu": "four"}}}, "spec.resources"),
    ({"spec": {"csr": "not base64!"}}, "spec.csr"),
])
def test_resourceslice_schema_rejects(provider, crds, namespace, patch, expect):
    ns = namespace(provider, "rsbad")
    proc = provider.create(_slice("bad", ns, **patch["spec"]), check=False)
    assert proc.returncode != 0 and expect in proc.stderr, proc.stderr


@pytest.mark.parametrize("condition, expect", [
    ({"type": "Authenticated", "status": "Accepted"}, "type"),
    ({"type": "Resources", "status": "True"}, "status"),
    ({"type": "Resources"}, "status"),
])
def test_resourceslice_condition_enums(provider, crds, namespace, condition, expect):
    ns = namespace(provider, "rscond")
    provider.create(_slice("s", ns))
    proc = provider.kubectl("patch", "rslice", "s", "-n", ns, "--subresource=status",
                            "--type=merge", "-p",
                            json.dumps({"status": {"conditions": [condition]}}), check=False)
    assert proc.returncode != 0 and f"status.conditions[0].{expect}" in proc.stderr, proc.stderr


def test_renew_round_trips_liqo_fields(provider, crds, namespace):
    ns = namespace(provider, "renew")
    spec = {"consumerClusterID": "wispy-firefly", "identityType": "ControlPlane",
            "publicKey": base64.b64encode(b"pk").decode(), "csr": base64.b64encode(b"c").decode(),
            "resourceSliceRef": {"name": "mypool"}}
    provider.create({"apiVersion": f"{GROUP}/v1beta1", "kind": "Renew",
                     "metadata": {"name": "controlplane-cool-firefly", "namespace": ns},
                     "spec": spec})
    assert provider.get_json("renew", "controlplane-cool-firefly", "-n", ns)["spec"] == spec
    auth = {"authParams": {"ca": base64.b64encode(b"ca").decode(),
                           "signedCRT": base64.b64encode(b"crt").decode(),
                           "apiServer": "https://127.0.0.1:6443"}}
    provider.kubectl("patch", "renew", "controlplane-cool-firefly", "-n", ns,
                     "--subresource=status", "--type=merge", "-p", json.dumps({"status": auth}))
    assert provider.get_json("renew", "controlplane-cool-firefly", "-n", ns)["status"] == auth
    proc = provider.kubectl("patch", "renew", "controlplane-cool-firefly", "-n", ns, "--type=merge",
                            "-p", '{"spec":{"consumerClusterID":"UPPER"}}', check=False)
    assert proc.returncode != 0 and "spec.consumerClusterID" in proc.stderr, proc.stderr
    table = provider.kubectl("get", "renews", "-n", ns).stdout.split()
    assert table[:2] == ["NAME", "AGE"], table


# --- (b) CSR signing and client-certificate authentication ----------------------------------

def _ed25519_csr(workdir, cn, org):
    key = workdir / f"{cn}-{uuid.uuid4().hex[:6]}.key"
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
    csr = openssl("req", "-new", "-key", str(key), "-subj", f"/O={org}/CN={cn}")
    return key, csr


def _csr_object(name, csr_pem, **extra):
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name, "labels": {"liqo.io/remote-tenant-csr": "true"}},
            "spec": {"request": base64.b64encode(csr_pem).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["digital signature", "key encipherment", "client auth"],
                     **extra}}


def _issue_client_cert(cluster, cn="cl01", org="liqo.io"):
    """CSR -> approve -> signed cert; returns (key path, cert path, seconds to sign)."""
    key, csr = _ed25519_csr(cluster.work_dir, cn, org)
    name = f"e2e-{cn}-{uuid.uuid4().hex[:8]}"
    cluster.create(_csr_object(name, csr))
    cluster.kubectl("certificate", "approve", name)
    t0 = time.monotonic()
    cert = cluster.wait_csr_certificate(name, timeout=30)
    elapsed = time.monotonic() - t0
    cert_path = key.with_suffix(".crt")
    cert_path.write_bytes(cert)
    return key, cert_path, elapsed


@pytest.fixture(scope="module")
def cl01(provider):
    """An Ed25519 client certificate for CN=cl01, O=liqo.io issued by provider's signer."""
    key, cert, elapsed = _issue_client_cert(provider)
    kubeconfig = provider.cert_kubeconfig("cl01", cert, key)
    return {"key": key, "cert": cert, "kubeconfig": kubeconfig, "sign_seconds": elapsed}


def test_unapproved_csr_is_not_signed(provider):
    _, csr = _ed25519_csr(provider.work_dir, "cl09", "liqo.io")
    name = f"e2e-unapproved-{uuid.uuid4().hex[:8]}"
    provider.create(_csr_object(name, csr))
    time.sleep(3)      # time enough for any auto-approver; csrapproving is off on purpose
    status = provider.get_json("csr", name).get("status", {})
    assert not status.get("certificate") and not status.get("conditions"), status


def test_approved_csr_is_signed_within_seconds_for_a_year(provider, cl01):
    assert cl01["sign_seconds"] < 10, cl01["sign_seconds"]
    text = openssl("x509", "-in", str(cl01["cert"]), "-noout", "-subject", "-enddate",
                   "-ext", "extendedKeyUsage", "-nameopt", "RFC2253").decode()
    assert "subject=CN=cl01,O=liqo.io" in text, text
    assert "TLS Web Client Authentication" in text, text
    end = text.split("notAfter=")[1].splitlines()[0]
    not_after = datetime.datetime.strptime(end, "%b %d %H:%M:%S %Y %Z")
    days = (not_after - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)).days
    assert 363 <= days <= 365, f"certificate lasts {days} days, want the 8760h default"
    # Signed by the cluster CA; the key in the cert is the Ed25519 key of the CSR.
    openssl("verify", "-CAfile", provider.ca_file, str(cl01["cert"]))
    assert (openssl("x509", "-in", str(cl01["cert"]), "-noout", "-pubkey")
            == openssl("pkey", "-in", str(cl01["key"]), "-pubout"))


def test_issued_certificate_authenticates_as_cl01_in_liqo_io(provider, cl01):
    who = json.loads(provider.kubectl("auth", "whoami", "-o", "json",
                                      kubeconfig=cl01["kubeconfig"]).stdout)
    user = who["status"]["userInfo"]
    assert user["username"] == "cl01"
    assert "liqo.io" in user["groups"] and "system:authenticated" in user["groups"]
    assert "system:masters" not in user["groups"]


def test_certificate_from_another_cluster_is_refused(provider, consumer, cl01):
    """The consumer's apiserver has its own CA: the provider-issued cert means nothing there."""
    kubeconfig = consumer.cert_kubeconfig("cl01-foreign", cl01["cert"], cl01["key"])
    proc = consumer.kubectl("auth", "whoami", kubeconfig=kubeconfig, check=False)
    assert proc.returncode != 0 and "Unauthorized" in proc.stderr, proc.stderr


# --- (c) RBAC: forbidden unless bound -----------------------------------------------------

def _as_cl01(cluster, cl01, *args):
    return cluster.kubectl(*args, kubeconfig=cl01["kubeconfig"], check=False)


def test_cl01_may_only_do_what_a_rolebinding_grants(provider, crds, cl01, namespace):
    mine = namespace(provider, "liqo-tenant-cl01")     # RBAC only: the labels play no part
    other = namespace(provider, "other")

    def forbidden(*args):
        proc = _as_cl01(provider, cl01, *args)
        assert proc.returncode != 0, f"{args} allowed: {proc.stdout}"
        assert "forbidden" in proc.stderr.lower() and 'User "cl01"' in proc.stderr, proc.stderr

    # Nothing granted yet: everything is forbidden, everywhere.
    for ns in (mine, other):
        forbidden("get", "configmaps", "-n", ns)
        forbidden("get", "tenants", "-n", ns)
        forbidden("create", "configmap", "x", "-n", ns)
    forbidden("get", "namespaces")
    forbidden("get", "csr")

    provider.kubectl("create", "role", "tenant-cm-reader", "-n", mine, "--verb=get,list",
                     "--resource=configmaps,tenants." + GROUP)
    provider.kubectl("create", "rolebinding", "cl01-cm-reader", "-n", mine,
                     "--role=tenant-cm-reader", "--user=cl01")

    wait_for(lambda: _as_cl01(provider, cl01, "get", "configmaps", "-n", mine).returncode == 0,
             timeout=10, what="RoleBinding to take effect")
    assert _as_cl01(provider, cl01, "get", "tenants", "-n", mine).returncode == 0
    # Only the verbs, resources and namespace granted.
    forbidden("create", "configmap", "x", "-n", mine)
    forbidden("get", "secrets", "-n", mine)
    forbidden("get", "configmaps", "-n", other)
    forbidden("get", "tenants", "-n", other)
    # A group binding works too: the cert's O=liqo.io is a real group.
    provider.kubectl("create", "rolebinding", "liqo-io-cm-reader", "-n", other,
                     "--clusterrole=view", "--group=liqo.io")
    wait_for(lambda: _as_cl01(provider, cl01, "get", "configmaps", "-n", other).returncode == 0,
             timeout=10, what="group RoleBinding to take effect")
    forbidden("get", "secrets", "-n", other)       # view does not include secrets


# --- (d) a validating webhook served by the test ---------------------------------------------

class _DenyingWebhook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    reviews = None          # list, set per server

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        review = json.loads(body)
        self.server.reviews.append({"path": self.path, "review": review})
        request = review["request"]
        answer = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "response": {"uid": request["uid"], "allowed": False,
                               "status": {"code": 403, "message":
                                          f"e2e-webhook says no to {request['name']}"}}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        pass


@pytest.fixture
def denying_webhook(provider, tmp_path):
    """An HTTPS responder on 127.0.0.1 with a test-minted CA; yields (url, ca_pem, reviews)."""
    pki = mint_serving_cert(tmp_path, ips=["127.0.0.1"])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DenyingWebhook)
    server.reviews = []
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["cert"], pki["key"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/validate", pki["ca_pem"], \
            server.reviews
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_denial_reaches_kubectl(provider, namespace, denying_webhook):
    url, ca_pem, reviews = denying_webhook
    tag = uuid.uuid4().hex[:8]
    guarded = namespace(provider, "hooked", {"e2e-webhook": tag})
    free = namespace(provider, "unhooked")
    config = f"e2e-deny-{tag}"
    provider.apply({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": config},
        "webhooks": [{
            "name": "deny.e2e.tenantgate.io",
            "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_pem).decode()},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {"e2e-webhook": tag}},
            "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "failurePolicy": "Fail", "timeoutSeconds": 5}]})
    try:
        def configmap(name, ns):
            return {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}}

        # The apiserver picks the configuration up asynchronously: probe with dry runs
        # (webhooks with sideEffects None are called for them) until it is live.
        wait_for(lambda: provider.apply(configmap("probe", guarded), "--dry-run=server",
                                        check=False).returncode != 0,
                 timeout=15, what="webhook configuration to go live")
        before = len(reviews)
        proc = provider.apply(configmap("denied", guarded), check=False)
        assert proc.returncode != 0
        assert ('admission webhook "deny.e2e.tenantgate.io" denied the request: '
                "e2e-webhook says no to denied") in proc.stderr, proc.stderr
        assert not provider.exists("configmap", "denied", "-n", guarded)
        seen = reviews[before:]
        assert len(seen) == 1 and seen[0]["path"].startswith("/validate?timeout=5s"), seen
        request = seen[0]["review"]["request"]
        assert request["operation"] == "CREATE" and request["namespace"] == guarded
        assert request["object"]["data"] == {"k": "v"}
        # Outside the selector the webhook is not consulted.
        provider.apply(configmap("allowed", free))
        assert len(reviews) == before + 1
    finally:
        provider.kubectl("delete", "validatingwebhookconfiguration", config,
                         "--ignore-not-found")


# --- (e) down leaves nothing behind ----------------------------------------------------------

def _listening(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"     # zombies are gone
    except FileNotFoundError:
        return False


def test_down_leaves_no_process_or_port(k8s_bin):
    name = f"{RUN_TAG}-scratch"
    cluster_tool("up", name)
    try:
        cluster = Cluster(name)
        pids, ports = cluster.pids(), cluster.ports()
        state = cluster.state_dir
        assert set(pids) == {"etcd", "kube-apiserver", "kube-controller-manager"}
        assert all(_running(p) for p in pids.values()), pids
        assert all(_listening(p) for p in ports.values()), ports
        assert cluster_tool("status", name, check=False).returncode == 0
    finally:
        cluster_tool("down", name)
    assert not state.exists()
    assert not [c for c, p in pids.items() if _running(p)]
    assert not [r for r, p in ports.items() if _listening(p)]
    assert cluster_tool("status", name, check=False).returncode != 0
    # down is idempotent
    assert cluster_tool("down", name, check=False).returncode == 0


# --- (f) a failed start says why; a port taken at startup is retried --------------------------

def _fake_etcd(tmp_path, body):
    """An etcd stand-in for TG_E2E_ETCD: a shell script with body."""
    path = tmp_path / "etcd-stand-in"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_daemon_exiting_at_startup_is_reported_with_status_and_log(k8s_bin, tmp_path):
    name = f"{RUN_TAG}-dies"
    etcd = _fake_etcd(tmp_path, "echo 'stand-in: refusing to start on purpose' >&2\nexit 7\n")
    env = dict(os.environ, TG_E2E_ETCD=str(etcd))
    try:
        proc = cluster_tool("up", name, check=False, env=env)
    finally:
        cluster_tool("down", name, check=False)
    assert proc.returncode != 0
    assert re.search(r"etcd exited during startup \(pid \d+ exited with status 7\)", proc.stderr), \
        proc.stderr
    # its stderr, from the log's tail
    assert "stand-in: refusing to start on purpose" in proc.stderr, proc.stderr


def test_port_taken_at_startup_starts_again_on_fresh_ports(k8s_bin, tmp_path):
    """The first etcd finds its port taken (as a daemon does when another process bound it
    between the pick and the daemon's bind); `up` starts everything again on other ports."""
    name = f"{RUN_TAG}-retry"
    mark = tmp_path / "first-start-done"
    etcd = _fake_etcd(tmp_path, f"""if [ ! -e {mark} ]; then
  : > {mark}
  echo "listen tcp 127.0.0.1:1: bind: address already in use" >&2
  exit 1
fi
exec {k8s_bin / "etcd"} "$@"
""")
    env = dict(os.environ, TG_E2E_ETCD=str(etcd))
    try:
        proc = cluster_tool("up", name, check=False, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "starting again on fresh ports" in proc.stderr, proc.stderr
        assert cluster_tool("status", name, check=False).returncode == 0
        cluster = Cluster(name)
        assert cluster.kubectl("get", "--raw", "/readyz").stdout == "ok"
    finally:
        cluster_tool("down", name, check=False)


def test_ports_a_test_holds_are_never_a_clusters_pick(provider, consumer):
    """A test picks ports (the demo's metrics ports, say) before the clusters it starts pick
    theirs; the two pickers share no port because they draw from the two halves of the room
    below the ephemeral range (CI once lost four tests to a demo port a cluster had taken)."""
    clusters, tests = port_halves()
    picks = [free_port() for _ in range(200)]
    assert all(p in tests for p in picks), (tests, sorted(picks)[:5])
    for cluster in (provider, consumer):
        port = int(cluster.server.rsplit(":", 1)[1])
        assert port in clusters, (cluster.name, port, clusters)


# --- the host_process fixture other test files rely on -------------------------------------

def test_host_process_fixture_stops_what_it_started(host_process):
    stubborn = host_process(["python3", "-c",
                             "import signal, time, sys\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                             "print('ready', flush=True)\n"
                             "time.sleep(600)"], name="stubborn")
    wait_for(lambda: "ready" in stubborn.log_tail(), timeout=10, what="child to start")
    assert stubborn.alive()
    assert stubborn.stop(timeout=1) == -9          # ignored TERM, so it was killed
    assert not _running(stubborn.pid)
    polite = host_process(["sleep", "600"])
    assert polite.stop() == -15 and not _running(polite.pid)
