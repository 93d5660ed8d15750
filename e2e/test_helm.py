"""The Helm chart manifests/chart/tenantgate against a real kube-apiserver (issue 46).

The pinned helm (e2e/helm-bin) renders each mode and role; the provider's API server takes
every object in a server-side dry run (schemas, the tenant-namespace policy, the webhook
configurations with their CEL match conditions), and `helm install --dry-run=server` accepts
each mode. Values the schema refuses (a wrong mode, role or certs.source) fail `helm install`
naming the allowed values. The chart's optional third-party objects (cert-manager's Issuers
and Certificates with the cainjector annotation, the ServiceMonitor) are dry-run against those
projects' own CRDs, fetched from their pinned Go modules by `e2e/helm-bin --crds`, installed
for the test and removed after.

Nothing of tenantgate is installed for real: the bed's webhook configurations and RBAC named
tenantgate belong to other modules' fixtures. Release namespaces are the test's own.
"""

import base64
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from bed import E2E_DIR, cluster_tool, openssl

# case -> helm values; what each installs is golden-tested (manifests/chart/testdata)
MODES = {
    "standalone": [],
    "guard": ["--set", "mode=guard"],
    "replace": ["--set", "mode=replace", "--set", "apiServer.address=https://provider.example:6443"],
    "consumer": ["--set", "role=consumer"],
    "consumer-replace": ["--set", "role=consumer", "--set", "mode=replace"],
}


def _tool(*args):
    p = subprocess.run([str(E2E_DIR / "helm-bin"), *args], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail(f"e2e/helm-bin {' '.join(args)} failed (make helm-bin):\n{p.stderr[-2000:]}")
    return p.stdout.strip()


@pytest.fixture(scope="module")
def helm(provider, source_dir):
    """run(*args, check=True) -> CompletedProcess of the pinned helm on the provider, with
    helm's cache and config in the cluster's scratch dir."""
    binary = _tool()
    home = provider.work_dir / "helm"
    env = dict(os.environ, KUBECONFIG=str(provider.kubeconfig),
               HELM_CACHE_HOME=str(home / "cache"), HELM_CONFIG_HOME=str(home / "config"),
               HELM_DATA_HOME=str(home / "data"))
    chart = str(source_dir / "manifests" / "chart" / "tenantgate")

    def run(verb, *args, check=True):
        p = subprocess.run([binary, verb, "tenantgate", chart, *args], env=env,
                           capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f"helm {verb} {' '.join(args)}: {p.stdout}{p.stderr}")
        return p
    return run


def _docs(text):
    return [d for d in yaml.safe_load_all(text) if d]


def _dry_run(cluster, docs):
    p = cluster.kubectl("apply", "--dry-run=server", "-f", "-",
                        input=yaml.safe_dump_all(docs), check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("case", sorted(MODES))
def test_each_mode_passes_a_server_side_dry_run(provider, crds, namespace, helm, case):
    ns = namespace(provider, "helm")
    docs = _docs(helm("template", "--namespace", ns, *MODES[case]).stdout)
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    webhook = ("ValidatingWebhookConfiguration", "tenantgate") in names
    signer = ("Deployment", "tenantgate-signer") in names
    assert (webhook, signer) == {"standalone": (True, True), "guard": (True, False),
                                 "replace": (True, True), "consumer": (True, True),
                                 "consumer-replace": (False, False)}[case], names
    assert any(k == "ValidatingAdmissionPolicy" for k, _ in names), names  # in every install
    out = _dry_run(provider, docs)
    assert out.count("(server dry run)") == len(docs), out
    # The bed's fixtures applied the tenant-namespace policy with kubectl, as an install made
    # with `kubectl apply -k` has it: moving such a cluster to the chart takes ownership.
    p = helm("install", "--namespace", ns, "--dry-run=server", "--take-ownership", *MODES[case],
             check=False)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("value, allowed", [
    ("mode=replac", "'standalone', 'guard', 'replace'"),
    ("role=both", "'provider', 'consumer'"),
    ("certs.source=vault", "'job', 'cert-manager', 'secret'"),
])
def test_schema_refuses_a_wrong_value_at_install(provider, namespace, helm, value, allowed):
    ns = namespace(provider, "helm")
    p = helm("install", "--namespace", ns, "--set", value, check=False)
    assert p.returncode != 0 and allowed in p.stderr, p.stderr
    assert "/" + value.split("=")[0].replace(".", "/") in p.stderr, p.stderr
    assert not provider.get_json("secrets", "-n", ns, "-l", "owner=helm")["items"]


def _obj(docs, kind, name):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
    return found[0]


def _pod(docs, name):
    return _obj(docs, "Deployment", name)["spec"]["template"]["spec"]


def _args(docs, name):
    return _pod(docs, name)["containers"][0]["args"]


def _webhooks(docs):
    return [w for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
            for w in _obj(docs, kind, "tenantgate")["webhooks"]]


SEL = {"matchLabels": {"team": "a"}}
TOL = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
AFF = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}
RES = {"requests": {"cpu": "7m", "memory": "9Mi"}, "limits": {"cpu": "77m", "memory": "99Mi"}}

# value -> what it must change in the rendered chart (each row a test; the goldens in
# manifests/chart/testdata show the defaults)
VALUES = [
    ("images", {"images": {"registry": "reg.example", "pullPolicy": "Always", "pullSecrets": ["regcred"],
                           "signer": {"repository": "x/signer", "tag": "9.9", "digest": "sha256:" + "a" * 64}}},
     lambda d: (_pod(d, "tenantgate-signer")["containers"][0]["image"] == "reg.example/x/signer:9.9@sha256:" + "a" * 64
                and _pod(d, "tenantgate-signer")["containers"][0]["imagePullPolicy"] == "Always"
                and _pod(d, "tenantgate-webhook")["imagePullSecrets"] == [{"name": "regcred"}])),
    ("priorityClassName", {"priorityClassName": "critical"},
     lambda d: all(_pod(d, n)["priorityClassName"] == "critical" for n in ("tenantgate-webhook", "tenantgate-signer"))),
    ("webhook.replicas", {"webhook": {"replicas": 3}},
     lambda d: _obj(d, "Deployment", "tenantgate-webhook")["spec"]["replicas"] == 3),
    ("webhook.failurePolicy, timeoutSeconds", {"webhook": {"failurePolicy": "Ignore", "timeoutSeconds": 9}},
     lambda d: all(w["failurePolicy"] == "Ignore" and w["timeoutSeconds"] == 9 for w in _webhooks(d))),
    ("webhook.namespaceSelector, objectSelector", {"webhook": {"namespaceSelector": SEL, "objectSelector": SEL}},
     lambda d: all(w["namespaceSelector"] == SEL and w["objectSelector"] == SEL for w in _webhooks(d))),
    ("webhook scheduling and resources", {"webhook": {"resources": RES, "nodeSelector": {"zone": "a"},
                                                       "tolerations": TOL, "affinity": AFF}},
     lambda d: (_pod(d, "tenantgate-webhook")["containers"][0]["resources"] == RES
                and _pod(d, "tenantgate-webhook")["nodeSelector"] == {"zone": "a"}
                and _pod(d, "tenantgate-webhook")["tolerations"] == TOL
                and _pod(d, "tenantgate-webhook")["affinity"] == AFF)),
    ("webhook.podDisruptionBudget", {"webhook": {"podDisruptionBudget": {"minAvailable": 2}}},
     lambda d: _obj(d, "PodDisruptionBudget", "tenantgate-webhook")["spec"]["minAvailable"] == 2),
    ("webhook.podDisruptionBudget.enabled=false", {"webhook": {"podDisruptionBudget": {"enabled": False}}},
     lambda d: not [o for o in d if o["kind"] == "PodDisruptionBudget"]),
    ("signer.replicas, leaderElection", {"signer": {"replicas": 1, "leaderElection": False}},
     lambda d: (_obj(d, "Deployment", "tenantgate-signer")["spec"]["replicas"] == 1
                and "--leader-elect" not in _args(d, "tenantgate-signer"))),
    ("signer.certificateLifetimeSeconds", {"signer": {"certificateLifetimeSeconds": 86400}},
     lambda d: "--csr-expiration-seconds=86400" in _args(d, "tenantgate-signer")),
    ("signer.nonceRotation", {"signer": {"nonceRotation": "keep"}},
     lambda d: any(a.startswith("--nonce-rotation") and a.endswith("keep") for a in _args(d, "tenantgate-signer"))),
    ("signer.slicePolicyConfigMap", {"signer": {"slicePolicyConfigMap": "my-policy"}},
     lambda d: any(a.endswith("my-policy") for a in _args(d, "tenantgate-signer"))),
    ("signer scheduling and resources", {"signer": {"resources": RES, "nodeSelector": {"zone": "a"},
                                                     "tolerations": TOL, "affinity": AFF}},
     lambda d: (_pod(d, "tenantgate-signer")["containers"][0]["resources"] == RES
                and _pod(d, "tenantgate-signer")["nodeSelector"] == {"zone": "a"}
                and _pod(d, "tenantgate-signer")["tolerations"] == TOL
                and _pod(d, "tenantgate-signer")["affinity"] == AFF)),
    ("auth.enabled, service.type", {"auth": {"enabled": True, "service": {"type": "NodePort"}}},
     lambda d: _obj(d, "Service", "tenantgate-auth")["spec"]["type"] == "NodePort"),
    ("auth.enabled=false", {},
     lambda d: not [o for o in d if o["kind"] == "Deployment" and o["metadata"]["name"] == "tenantgate-auth"]),
    ("auth.tokenNamespace", {"auth": {"enabled": True, "tokenNamespace": "tokens-x"}},
     lambda d: _obj(d, "Namespace", "tokens-x") is not None),
]


@pytest.mark.parametrize("values, holds", [(v, h) for _, v, h in VALUES], ids=[n for n, _, _ in VALUES])
def test_each_value_lands_where_it_is_read(helm, tmp_path, values, holds):
    f = tmp_path / "values.yaml"
    f.write_text(yaml.safe_dump(values))
    docs = _docs(helm("template", "--namespace", "liqo", "-f", str(f)).stdout)
    assert holds(docs), yaml.safe_dump(values)


@pytest.fixture(scope="module")
def third_party_crds(provider):
    """cert-manager's Issuer and Certificate CRDs and the ServiceMonitor's, from their pinned
    modules; removed after the module."""
    files = sorted(Path(_tool("--crds")).glob("*.yaml"))
    names = []
    for f in files:
        names.append(yaml.safe_load(f.read_text())["metadata"]["name"])
        provider.kubectl("apply", "--server-side", "-f", f)
    provider.wait_established(*names)
    yield names
    for n in names:
        provider.kubectl("delete", "crd", n, "--ignore-not-found", "--wait=false", check=False)


def test_cert_manager_and_monitoring_objects_pass_a_server_side_dry_run(
        provider, crds, namespace, helm, third_party_crds):
    ns, tokens = namespace(provider, "helm"), namespace(provider, "tokens")
    docs = _docs(helm("template", "--namespace", ns, "--set", "certs.source=cert-manager",
                      "--set", "auth.enabled=true", "--set", f"auth.tokenNamespace={tokens}",
                      "--set", "certs.auth.dnsNames={auth.provider.example}",
                      "--set", "certs.auth.ipAddresses={192.0.2.10}",
                      "--set", "monitoring.serviceMonitor.enabled=true",
                      "--set", "networkPolicy.enabled=true",
                      "--set", "networkPolicy.apiServerCIDRs={10.0.0.10/32}").stdout)
    kinds = {d["kind"] for d in docs}
    assert {"Issuer", "Certificate", "ServiceMonitor", "NetworkPolicy"} <= kinds, kinds
    for d in docs:
        if d["kind"].endswith("WebhookConfiguration"):
            assert d["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == \
                f"{ns}/tenantgate-webhook", d["metadata"]
            assert all("caBundle" not in w["clientConfig"] for w in d["webhooks"]), d
    certs = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "Certificate"}
    auth = certs["tenantgate-auth"]       # tenantgate-auth's, from the webhook's CA Issuer
    assert (auth["secretName"], auth["issuerRef"]["name"]) == \
        ("tenantgate-auth-tls", "tenantgate-webhook-ca"), auth
    assert auth["dnsNames"] == [f"tenantgate-auth.{ns}.svc",
                                f"tenantgate-auth.{ns}.svc.cluster.local",
                                "auth.provider.example"], auth
    assert auth["ipAddresses"] == ["192.0.2.10"], auth
    _dry_run(provider, docs)


@pytest.mark.parametrize("source, secret", [
    ("job", "tenantgate-auth-tls"), ("cert-manager", "tenantgate-auth-tls"),
    ("secret", "operators-auth-tls")])
def test_auth_server_mounts_the_secret_its_source_keeps(helm, source, secret):
    """auth.enabled: tenantgate-auth serves the Secret certs.source fills (the Job's or
    cert-manager's tenantgate-auth-tls, or the operator's own with source=secret)."""
    args = ["--set", "auth.enabled=true", "--set", f"certs.source={source}"]
    if source == "secret":
        args += ["--set", f"certs.auth.secretName={secret}"]
    docs = _docs(helm("template", "--namespace", "liqo", *args).stdout)
    auth = next(d for d in docs if d["kind"] == "Deployment"
                and d["metadata"]["name"] == "tenantgate-auth")
    volumes = auth["spec"]["template"]["spec"]["volumes"]
    assert [v["secret"]["secretName"] for v in volumes if "secret" in v] == [secret], volumes


def _hook_configs(cluster, name):
    """Webhook configurations of the tool's shape under a name of the test's own: one webhook
    each, on a resource nothing serves, so they change no admission on the shared bed."""
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        cluster.apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                       "metadata": {"name": name},
                       "webhooks": [{"name": "none.helm-test.tenantgate.io",
                                     "admissionReviewVersions": ["v1"], "sideEffects": "None",
                                     "failurePolicy": "Ignore",
                                     "clientConfig": {"url": "https://127.0.0.1:9/none"},
                                     "rules": [{"apiGroups": ["tenantgate.io"],
                                                "apiVersions": ["v1alpha1"],
                                                "operations": ["CREATE"],
                                                "resources": ["nothings"]}]}]})


def _secret_pem(cluster, ns, name, key="tls.crt"):
    return base64.b64decode(cluster.get_json("secret", name, "-n", ns)["data"][key])


def _serial(pem):
    return openssl("x509", "-noout", "-serial", input=pem).decode().strip()


def test_cert_tool_keeps_its_ca_in_a_secret_and_renews_when_due(provider, namespace, helm,
                                                                 source_dir, tmp_path):
    """certs.source=job's step, as its Job runs it: no lasting --out (a new directory each
    run), the CA in Secret tenantgate-webhook-ca, the serving certificate renewed only within
    --renew-before-days of expiry, the caBundle written each time. With auth on, the Job's
    auth-certs container, run with exactly the chart's arguments, writes tenantgate-auth-tls
    for the auth Service's names and the operator's, under the same CA, and leaves the
    caBundle alone."""
    ns = namespace(provider, "helm")
    config = f"tenantgate-{ns}"
    _hook_configs(provider, config)
    env = dict(os.environ, KUBECTL=provider.kubectl_path)

    def tool(*args):
        p = subprocess.run([str(source_dir / "certs" / "tenantgate-certs"), *args,
                            "--kubeconfig", str(provider.kubeconfig)],
                           env=env, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout

    def run(run_dir, renew_before):
        return tool("--out", str(tmp_path / run_dir), "--namespace", ns, "--apply",
                    "--ca-secret", "tenantgate-webhook-ca", "--renew-before-days",
                    str(renew_before), "--webhook-config", config)

    try:
        out = run("first", 30)
        assert "CA stored as Secret" in out, out
        ca = _secret_pem(provider, ns, "tenantgate-webhook-ca")
        first = _serial(_secret_pem(provider, ns, "tenantgate-webhook-tls"))
        out = run("second", 30)                      # 365 days left: kept
        assert "CA read from Secret" in out and "serving certificate kept" in out, out
        assert _serial(_secret_pem(provider, ns, "tenantgate-webhook-tls")) == first
        out = run("third", 400)                      # within 400 days of expiry: renewed
        assert "CA read from Secret" in out and "kept" not in out, out
        renewed = _secret_pem(provider, ns, "tenantgate-webhook-tls")
        assert _serial(renewed) != first
        assert _secret_pem(provider, ns, "tenantgate-webhook-ca") == ca
        (tmp_path / "ca.crt").write_bytes(ca)
        openssl("verify", "-CAfile", str(tmp_path / "ca.crt"), input=renewed)
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            hooks = provider.get_json(kind, config)["webhooks"]
            assert [base64.b64decode(h["clientConfig"]["caBundle"]) for h in hooks] == [ca], kind

        job = next(d for d in _docs(helm(
            "template", "--namespace", ns, "--set", "certs.source=job", "--set",
            "auth.enabled=true", "--set", "certs.auth.dnsNames={auth.provider.example}",
            "--set", "certs.auth.ipAddresses={192.0.2.10}").stdout)
            if d["kind"] == "Job" and d["metadata"]["name"] == "tenantgate-certs")
        init = job["spec"]["template"]["spec"]["initContainers"]
        assert [c["name"] for c in init] == ["auth-certs"], init
        args = [str(tmp_path / "auth") if a == "/work/auth" else a for a in init[0]["args"]]
        out = tool(*args, "--webhook-config", config)  # were it to patch, these would show it
        assert "CA read from Secret" in out and "caBundle" not in out, out
        auth = _secret_pem(provider, ns, "tenantgate-auth-tls")
        for check, name in (("-verify_hostname", f"tenantgate-auth.{ns}.svc"),
                            ("-verify_hostname", f"tenantgate-auth.{ns}.svc.cluster.local"),
                            ("-verify_hostname", "auth.provider.example"),
                            ("-verify_ip", "192.0.2.10")):
            openssl("verify", "-CAfile", str(tmp_path / "ca.crt"), "-purpose", "sslserver",
                    check, name, input=auth)
        with pytest.raises(subprocess.CalledProcessError):     # not the webhook's name
            openssl("verify", "-CAfile", str(tmp_path / "ca.crt"), "-verify_hostname",
                    f"tenantgate-webhook.{ns}.svc", input=auth)
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            hooks = provider.get_json(kind, config)["webhooks"]
            assert [base64.b64decode(h["clientConfig"]["caBundle"]) for h in hooks] == [ca], kind
    finally:
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            provider.kubectl("delete", kind, config, "--ignore-not-found", check=False)


def test_cert_job_account_writes_only_its_secrets_and_configurations(provider, namespace, helm):
    """certs.source=job's hook ServiceAccount, acting with its own token and exactly the
    chart's hook RBAC (auth on): it stores and renews its Secrets (the CA, and with auth on
    tenantgate-auth-tls), but reads no other Secret of the namespace, writes none elsewhere,
    and patches no webhook configuration but those named tenantgate."""
    ns, other_ns = namespace(provider, "helm"), namespace(provider, "helm")
    docs = [d for d in _docs(helm("template", "--namespace", ns, "--set", "certs.source=job",
                                  "--set", "auth.enabled=true").stdout)
            if d["metadata"]["name"] == "tenantgate-certs" and d["kind"] != "Job"]
    assert {d["kind"] for d in docs} == {"ServiceAccount", "Role", "RoleBinding", "ClusterRole",
                                          "ClusterRoleBinding"}, docs
    config = f"tenantgate-{ns}"
    try:
        for d in docs:
            provider.apply(d)
        _hook_configs(provider, config)
        provider.kubectl("-n", ns, "create", "secret", "generic", "unrelated",
                         "--from-literal=k=v")
        kc = provider.serviceaccount_kubeconfig(ns, "tenantgate-certs")

        def as_job(*args):
            return provider.kubectl(*args, kubeconfig=kc, check=False)
        p = as_job("-n", ns, "create", "secret", "generic", "tenantgate-webhook-ca",
                   "--from-literal=k=v")
        assert p.returncode == 0, p.stderr
        assert as_job("-n", ns, "get", "secret", "tenantgate-webhook-ca").returncode == 0
        for step in (("create", "secret", "generic", "tenantgate-auth-tls", "--from-literal=k=v"),
                     ("get", "secret", "tenantgate-auth-tls"),
                     ("patch", "secret", "tenantgate-auth-tls", "-p", '{"data":{"k":"eA=="}}')):
            p = as_job("-n", ns, *step)
            assert p.returncode == 0, (step, p.stderr)
        for attempt in (("-n", ns, "get", "secret", "unrelated"),
                        ("-n", ns, "patch", "secret", "unrelated", "-p", '{"data":{"k":"eA=="}}'),
                        ("-n", ns, "get", "secrets"),
                        ("-n", other_ns, "create", "secret", "generic", "x", "--from-literal=k=v"),
                        ("patch", "validatingwebhookconfiguration", config, "--type=json", "-p",
                         '[{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}]'),
                        ("patch", "mutatingwebhookconfiguration", config, "--type=merge", "-p",
                         '{"metadata":{"labels":{"x":"y"}}}')):
            p = as_job(*attempt)
            assert p.returncode != 0 and "forbidden" in p.stderr.lower(), (attempt, p.stderr)
    finally:
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration",
                     "clusterrolebinding", "clusterrole"):
            name = config if "webhook" in kind else "tenantgate-certs"
            provider.kubectl("delete", kind, name, "--ignore-not-found", check=False)


def test_cert_cleanup_account_deletes_only_the_jobs_secrets(provider, namespace, helm):
    """certs.source=job's post-delete hook account, with its own token and exactly the chart's
    RBAC (auth on): it deletes the Job's three Secrets (the CA's key among them) and nothing
    else; it cannot read them."""
    ns = namespace(provider, "helm")
    docs = [d for d in _docs(helm("template", "--namespace", ns, "--set", "certs.source=job",
                                  "--set", "auth.enabled=true").stdout)
            if d["metadata"]["name"] == "tenantgate-certs-cleanup"]
    assert {d["kind"] for d in docs} == {"ServiceAccount", "Role", "RoleBinding", "Job"}, docs
    job = next(d for d in docs if d["kind"] == "Job")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "post-delete"
    mine = ("tenantgate-webhook-tls", "tenantgate-webhook-ca", "tenantgate-auth-tls")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][-3:] == list(mine)
    for d in docs:
        if d["kind"] != "Job":
            provider.apply(d)
    for name in mine + ("unrelated",):
        provider.kubectl("-n", ns, "create", "secret", "generic", name, "--from-literal=k=v")
    kc = provider.serviceaccount_kubeconfig(ns, "tenantgate-certs-cleanup")

    def as_hook(*args):
        return provider.kubectl("-n", ns, *args, kubeconfig=kc, check=False)
    for attempt in (("get", "secret", "tenantgate-webhook-ca"), ("delete", "secret", "unrelated"),
                    ("get", "secrets")):
        p = as_hook(*attempt)
        assert p.returncode != 0 and "forbidden" in p.stderr.lower(), (attempt, p.stderr)
    p = as_hook("delete", "secret", "--ignore-not-found", *mine)
    assert p.returncode == 0, p.stderr
    left = {i["metadata"]["name"] for i in provider.get_json("secrets", "-n", ns)["items"]}
    assert not left & set(mine) and "unrelated" in left, left


@pytest.fixture(scope="module")
def own_cluster(k8s_bin):
    """A control plane of this module's own: a real install owns names (ClusterRoles, the
    configurations named tenantgate) that the shared bed's fixtures hold."""
    from conftest import _start_cluster, _started
    cluster = _start_cluster("helm")
    yield cluster
    _started.pop(cluster.name, None)
    cluster_tool("down", cluster.name, check=False)


CLUSTER_KINDS = ("clusterroles,clusterrolebindings,validatingwebhookconfigurations,"
                 "mutatingwebhookconfigurations,validatingadmissionpolicies,"
                 "validatingadmissionpolicybindings,namespaces")
NAMESPACED_KINDS = ("deployments,services,serviceaccounts,roles,rolebindings,configmaps,"
                    "secrets,poddisruptionbudgets,jobs")


def _ours(cluster):
    sel = "app.kubernetes.io/part-of=tenantgate"
    items = cluster.get_json(CLUSTER_KINDS, "-l", sel)["items"] + \
        cluster.get_json(NAMESPACED_KINDS, "-A", "-l", sel)["items"]
    return {(i["kind"], i["metadata"]["name"]) for i in items}


def test_install_upgrade_rollback_uninstall(own_cluster, source_dir):
    """helm install (standalone), the caBundle that certs/tenantgate-certs --apply wrote kept
    across `helm upgrade --set mode=guard` (the signer and its RBAC go, Liqo's labeler binding
    comes), `helm rollback` to the standalone revision, and `helm uninstall` leaving nothing
    labelled part-of=tenantgate but the CRDs (kept, as Helm does)."""
    c = own_cluster
    home = c.work_dir / "helm"
    env = dict(os.environ, KUBECONFIG=str(c.kubeconfig), HELM_CACHE_HOME=str(home / "cache"),
               HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))
    chart = str(source_dir / "manifests" / "chart" / "tenantgate")

    def helm(*args):
        p = subprocess.run([_tool(), *args, "-n", "liqo"], env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, f"helm {' '.join(args)}: {p.stdout}{p.stderr}"
        return p.stdout

    helm("install", "tenantgate", chart, "--create-namespace")
    installed = _ours(c)
    assert {("Deployment", "tenantgate-signer"), ("Deployment", "tenantgate-webhook"),
            ("ValidatingWebhookConfiguration", "tenantgate")} <= installed, installed
    bundle = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n").decode()
    c.kubectl("patch", "validatingwebhookconfiguration", "tenantgate", "--type=json", "-p",
              f'[{{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"{bundle}"}}]')

    helm("upgrade", "tenantgate", chart, "--reuse-values", "--set", "mode=guard")
    guard = _ours(c)
    assert ("Deployment", "tenantgate-signer") not in guard and \
        ("ClusterRole", "tenantgate-signer") not in guard, guard
    assert ("ClusterRoleBinding", "tenantgate-tenant-namespace-labeler-liqo") in guard, guard
    hooks = c.get_json("validatingwebhookconfiguration", "tenantgate")["webhooks"]
    assert hooks[0]["clientConfig"].get("caBundle") == bundle, hooks[0]["clientConfig"]

    helm("rollback", "tenantgate", "1")
    assert _ours(c) == installed

    helm("uninstall", "tenantgate", "--wait")
    left = {k for k in _ours(c) if k != ("Namespace", "liqo")}
    assert not left, left
    assert not c.get_json("secrets", "-n", "liqo", "-l", "owner=helm")["items"]
    assert c.exists("crd", "tenants.authentication.liqo.io")     # Helm keeps CRDs
