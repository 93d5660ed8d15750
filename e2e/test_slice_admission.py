"""ResourceSlices at admission, through the real provider API server and tenantgate-webhook.

A consumer's slice reaches the provider as a replicated copy in its tenant namespace (labels
liqo.io/replicated=true, liqo.io/originID=<consumer>). Beyond Liqo, the webhook checks that
copy against the consumer's Tenant before it is stored: the placement, the Tenant, and the CSR
(CN <name>-<12 hex of sha256(consumer)>, O <consumer>, the Tenant's key). Liqo's own rules
hold for every slice: unique local names, and group liqo.io may not touch the
remote-cluster-id label or the liqo.io/cordon annotation.  Every refusal here is kubectl's
exit status and the reason code in its message, and the object is not stored.
"""

import base64
import contextlib
import hashlib
import json
import subprocess
import uuid

import pytest

from tenantgate_services import (INSTALL_NAMESPACE, denial, nonce_secret_manifest,  # noqa: F401
                                 tenant_namespace_manifest, webhook, webhook_install,
                                 webhook_log_on_failure)
from bed import openssl, wait_for

pytestmark = pytest.mark.usefixtures("webhook")

GROUP = "authentication.liqo.io"


def user_name(name, consumer):
    return f"{name}-{hashlib.sha256(consumer.encode()).hexdigest()[:12]}"


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


@pytest.fixture(scope="module")
def cli(cli_bin):
    """Overrides conftest's: stdout only, and the command must succeed."""
    def run(*args):
        p = subprocess.run([str(cli_bin), *map(str, args)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return p.stdout
    return run


class Consumer:
    """A consumer as the provider knows it: its tenant namespace, nonce and admitted Tenant,
    and the key the Tenant carries."""

    def __init__(self, provider, cli, workdir, cluster_id=None):
        self.provider = provider
        self.id = cluster_id or f"cons-{uuid.uuid4().hex[:6]}"
        self.ns = f"liqo-tenant-{self.id}"
        self.dir = workdir / self.id
        cli("keygen", "--out", self.dir)
        self.key = self.dir / "privateKey.pem"
        nonce = cli("nonce").strip()
        provider.apply(tenant_namespace_manifest(self.id, self.ns))
        provider.apply(nonce_secret_manifest(self.id, nonce, self.ns))
        tenant = cli("generate", "tenant", "--offline", "--key", self.key, "--cluster-id", self.id,
                     "--nonce", nonce, "-o", "json")
        # The Tenant's admission, kept for tests that expect it refused.
        self.tenant_proc = provider.apply(tenant, "-n", self.ns, check=cluster_id is None)

    def csr(self, name, subject=None, key=None):
        subj = subject or f"/O={self.id}/CN={user_name(name, self.id)}"
        return openssl("req", "-new", "-key", str(key or self.key), "-subj", subj)

    def slice(self, name, csr=None, labels=None, **spec):
        """The copy Liqo's replicator writes into the provider."""
        lab = {"liqo.io/replication": "false", "liqo.io/replicated": "true",
               "liqo.io/originID": self.id, "liqo.io/remote-cluster-id": self.id,
               "liqo.io/remoteID": "prov"}
        lab.update(labels or {})
        body = {"class": "default", "consumerClusterID": self.id, "providerClusterID": "prov",
                "csr": b64(csr if csr is not None else self.csr(name))}
        body.update(spec)
        return {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
                "metadata": {"name": name, "namespace": self.ns,
                             "labels": {k: v for k, v in lab.items() if v is not None}},
                "spec": {k: v for k, v in body.items() if v is not None}}

    def cleanup(self):
        for kind in (f"resourceslices.{GROUP}", f"tenants.{GROUP}"):
            self.provider.kubectl("delete", kind, "--all", "-n", self.ns, "--wait=true",
                                  "--timeout=60s", check=False)
        self.provider.kubectl("delete", "namespace", self.ns, "--wait=false", check=False)


@pytest.fixture
def consumers(provider, cli, tmp_path):
    made = []

    def make(cluster_id=None):
        c = Consumer(provider, cli, tmp_path, cluster_id)
        made.append(c)
        return c
    yield make
    for c in made:
        c.cleanup()


def expect_denied(proc, reason, code_word):
    assert proc.returncode != 0, f"expected {reason}, kubectl succeeded:\n{proc.stdout}"
    got, message = denial(proc.stderr, slices=True)
    assert got == reason, f"expected {reason}, kubectl said:\n{proc.stderr}"
    assert f"Error from server ({code_word})" in proc.stderr, proc.stderr
    return message


def stored(provider, ns, name):
    return provider.exists(f"resourceslices.{GROUP}", name, "-n", ns)


# --- beyond Liqo: the replicated copy ---------------------------------------------------------

def test_replicated_slice_of_an_admitted_tenant_is_stored(provider, consumers):
    c = consumers()
    proc = provider.create(c.slice("mypool"), check=False)
    assert proc.returncode == 0, proc.stderr
    got = provider.get_json("rslice", "mypool", "-n", c.ns)
    assert got["spec"]["consumerClusterID"] == c.id
    # An update that keeps the CSR goes through too (the replicator syncs spec).
    proc = provider.kubectl("patch", "rslice", "mypool", "-n", c.ns, "--type=merge",
                            "-p", '{"spec":{"resources":{"cpu":"2"}}}', check=False)
    assert proc.returncode == 0, proc.stderr


def _other_key(tmp_path):
    path = tmp_path / f"other-{uuid.uuid4().hex[:6]}.pem"
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(path))
    return path


@pytest.mark.parametrize("case, reason, code_word, found", [
    ("no csr", "MalformedResourceSlice", "BadRequest", "spec.csr"),
    ("no consumerClusterID", "MalformedResourceSlice", "BadRequest", "spec.consumerClusterID"),
    ("not a CSR", "InvalidCSR", "BadRequest", "PKCS#10"),
    ("OU in the subject", "CSRForbiddenContent", "BadRequest", "found OU"),
    ("CN of another slice", "CSRSubjectMismatch", "BadRequest", "found CN=other-"),
    ("the ControlPlane CSR", "CSRSubjectMismatch", "BadRequest", "found CN=cons-"),
    ("another key", "CSRPublicKeyMismatch", "BadRequest", "Tenant of cons-"),
    ("originID of another", "LabelMismatch", "BadRequest", "liqo.io/originID"),
    # issue 44: the namespace's name ties it to the consumer, before its labels
    ("namespace of another consumer", "WrongNamespace", "BadRequest", "expected namespace liqo-tenant-cons-"),
    ("not a tenant namespace", "WrongNamespace", "BadRequest", "liqo.io/tenant-namespace=true"),
    ("no Tenant", "SliceTenantNotFound", "BadRequest", "expected a Tenant of cons-"),
    ("Tenant Drained", "SliceTenantDrained", "Forbidden", "found Drained"),
])
def test_replicated_slice_refused(provider, consumers, namespace, tmp_path, case, reason,
                                  code_word, found):
    c = consumers()
    name = "rs"
    obj = c.slice(name)
    if case == "no csr":
        del obj["spec"]["csr"]
    elif case == "no consumerClusterID":
        del obj["spec"]["consumerClusterID"]
    elif case == "not a CSR":
        obj["spec"]["csr"] = b64("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n")
    elif case == "OU in the subject":
        obj["spec"]["csr"] = b64(c.csr(name, f"/O={c.id}/OU=admins/CN={user_name(name, c.id)}"))
    elif case == "CN of another slice":
        obj["spec"]["csr"] = b64(c.csr("other"))
    elif case == "the ControlPlane CSR":
        obj["spec"]["csr"] = b64(c.csr(name, f"/O=liqo.io/CN={c.id}"))
    elif case == "another key":
        obj["spec"]["csr"] = b64(c.csr(name, key=_other_key(tmp_path)))
    elif case == "originID of another":
        obj["metadata"]["labels"]["liqo.io/originID"] = "someone-else"
    elif case == "namespace of another consumer":
        other = consumers()
        obj["metadata"]["namespace"] = other.ns
    elif case == "not a tenant namespace":
        obj["metadata"]["namespace"] = namespace(provider, "plain")
    elif case == "no Tenant":
        provider.kubectl("delete", "tenants.authentication.liqo.io", "--all", "-n", c.ns)
    elif case == "Tenant Drained":
        provider.kubectl("patch", "tn", c.id, "-n", c.ns, "--type=merge",
                         "-p", '{"spec":{"tenantCondition":"Drained"}}')
    proc = provider.create(obj, check=False)
    message = expect_denied(proc, reason, code_word)
    assert found in message, message
    assert not stored(provider, obj["metadata"]["namespace"], name)


def test_update_to_another_key_is_refused(provider, consumers, tmp_path):
    c = consumers()
    provider.create(c.slice("rs"))
    patch = {"spec": {"csr": b64(c.csr("rs", key=_other_key(tmp_path)))}}
    proc = provider.kubectl("patch", "rslice", "rs", "-n", c.ns, "--type=merge",
                            "-p", json.dumps(patch), check=False)
    expect_denied(proc, "CSRPublicKeyMismatch", "BadRequest")
    # Relabelling an unchecked local slice into a replicated one is checked the same way.
    local = c.slice("plain", labels={"liqo.io/replicated": None, "liqo.io/originID": None})
    local["spec"]["csr"] = b64(c.csr("plain", key=_other_key(tmp_path)))
    provider.create(local)
    proc = provider.kubectl("label", "rslice", "plain", "-n", c.ns, "liqo.io/replicated=true",
                            f"liqo.io/originID={c.id}", check=False)
    expect_denied(proc, "CSRPublicKeyMismatch", "BadRequest")


# --- Liqo parity --------------------------------------------------------------------------

def _local_slice(name, ns, provider_id):
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "ResourceSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"liqo.io/replication": "true", "liqo.io/remoteID": provider_id,
                                    "liqo.io/remote-cluster-id": provider_id}},
            "spec": {"class": "default", "providerClusterID": provider_id}}


def test_local_slice_names_are_unique_in_the_cluster(provider, namespace):
    name = f"pool-{uuid.uuid4().hex[:6]}"
    a, b = namespace(provider, "lrs"), namespace(provider, "lrs")
    provider.create(_local_slice(name, a, "prov-a"))
    proc = provider.create(_local_slice(name, b, "prov-b"), check=False)
    message = expect_denied(proc, "Duplicate", "Forbidden")
    assert message.startswith("a resourceslice with the same name already exists in the cluster")
    provider.kubectl("delete", "rslice", name, "-n", a)
    # Gone from the webhook's cache shortly after: the name is free again.
    wait_for(lambda: provider.create(_local_slice(name, b, "prov-b"), check=False).returncode == 0,
             timeout=15, what="the name to be free again")


@pytest.mark.parametrize("change, verb", [
    (("label", "liqo.io/remote-cluster-id=elsewhere", "--overwrite"), "change the remoteClusterID label"),
    (("label", "liqo.io/remote-cluster-id-"), "delete the remoteClusterID label"),
    (("annotate", "liqo.io/cordon=true"), "add the liqo.io/cordon annotation"),
])
def test_control_plane_group_may_not_touch_cluster_label_or_cordon(provider, consumers, change, verb):
    c = consumers()
    provider.create(c.slice("rs"))
    kind, *args = change
    # RBAC is not under test here: system:masters lets the request reach admission, where
    # only the group liqo.io matters.
    proc = provider.kubectl(kind, "rslice", "rs", "-n", c.ns, *args, check=False,
                            as_user=c.id, as_groups=("liqo.io", "system:masters"))
    message = expect_denied(proc, "ForbiddenChange", "Forbidden")
    assert f"can't {verb}" in message, message
    # The provider's admin may cordon (liqoctl cordon resourceslice does so).
    proc = provider.kubectl("annotate", "rslice", "rs", "-n", c.ns, "liqo.io/cordon=true", check=False)
    assert proc.returncode == 0, proc.stderr


# --- issue 36: hardening ---------------------------------------------------------------------

@pytest.mark.parametrize("quantity, found", [
    ("-8", 'a negative quantity "-8"'),
    ("-1m", 'a negative quantity "-1m"'),
    ("0", 'zero "0"'),
    ("-0", 'zero "-0"'),
    (-1, 'a negative quantity "-1"'),
    (0, 'zero "0"'),
    ("1e999", 'a quantity out of range "1e999"'),
])
def test_bad_quantity_refused(provider, consumers, namespace, quantity, found):
    """Finding 2: a slice asking for a negative, zero or absurd quantity never gets stored (a
    negative one would lower the consumer's sum against maxPerTenant); local slices too."""
    c = consumers()
    obj = c.slice("rs", resources={"cpu": "4", "memory": quantity})
    proc = provider.apply(obj, check=False)
    message = expect_denied(proc, "MalformedResourceSlice", "BadRequest")
    assert "spec.resources.memory: expected a positive quantity" in message, message
    assert f"found {found}" in message, message
    assert not stored(provider, c.ns, "rs")
    local = _local_slice("lrs", namespace(provider, "lrs"), "prov-a")
    local["spec"]["resources"] = {"cpu": quantity}
    proc = provider.apply(local, check=False)
    expect_denied(proc, "MalformedResourceSlice", "BadRequest")


def test_good_quantities_stored(provider, consumers):
    c = consumers()
    proc = provider.apply(c.slice("rs", resources={"cpu": "+4", "memory": "1e-3", "pods": 110}),
                          check=False)
    assert proc.returncode == 0, proc.stderr
    proc = provider.kubectl("patch", "rslice", "rs", "-n", c.ns, "--type=merge",
                            "-p", '{"spec":{"resources":{"cpu":"-8"}}}', check=False)
    expect_denied(proc, "MalformedResourceSlice", "BadRequest")


@pytest.mark.parametrize("change, verb", [
    (("label", "liqo.io/replicated-"), "delete the liqo.io/replicated label"),
    (("label", "liqo.io/originID-"), "delete the liqo.io/originID label"),
    (("label", "liqo.io/remoteID=elsewhere", "--overwrite"), "change the liqo.io/remoteID label"),
    (("label", "liqo.io/replication=true", "--overwrite"), "change the liqo.io/replication label"),
])
def test_consumer_may_not_take_its_slice_out_of_the_providers_control(provider, consumers,
                                                                       change, verb):
    """Finding 3: the labels that say whose slice it is stay as the consumer wrote them."""
    c = consumers()
    provider.create(c.slice("rs"))
    kind, *args = change
    proc = provider.kubectl(kind, "rslice", "rs", "-n", c.ns, *args, check=False,
                            as_user=c.id, as_groups=("liqo.io", "system:masters"))
    message = expect_denied(proc, "ForbiddenChange", "Forbidden")
    assert f"can't {verb}" in message, message
    labels = provider.get_json("rslice", "rs", "-n", c.ns)["metadata"]["labels"]
    assert labels["liqo.io/replicated"] == "true" and labels["liqo.io/originID"] == c.id


def test_consumer_slice_without_replicated_label_refused(provider, consumers):
    """Finding 3: what a consumer writes into its tenant namespace is a replicated copy, never a
    local slice of the provider."""
    c = consumers()
    obj = c.slice("rs", labels={"liqo.io/replicated": None, "liqo.io/originID": None})
    proc = provider.create(obj, check=False, as_user=c.id, as_groups=("liqo.io", "system:masters"))
    message = expect_denied(proc, "LabelMismatch", "BadRequest")
    assert "expected label liqo.io/replicated=true, found no such label" in message, message
    assert not stored(provider, c.ns, "rs")


def test_slice_user_may_not_be_a_consumer(provider, consumers):
    """Finding 7: slice rs of consumer c is user rs-<h>; a Tenant of that id must not exist."""
    c = consumers()
    other = consumers(user_name("rs", c.id))
    assert other.tenant_proc.returncode == 0, other.tenant_proc.stderr
    # The webhook's caches follow watches: a dry run until the Tenant is in them.
    wait_for(lambda: provider.create(c.slice("rs"), "--dry-run=server", check=False).returncode != 0,
             timeout=15, what="the slice to be refused")
    proc = provider.create(c.slice("rs"), check=False)
    message = expect_denied(proc, "Duplicate", "Forbidden")
    assert f"found a Tenant of cluster {other.id}" in message, message
    assert not stored(provider, c.ns, "rs")


def test_consumer_may_not_be_a_slice_user(provider, consumers):
    """Finding 7, the other way: a Tenant whose id is the user of a stored slice."""
    c = consumers()
    provider.create(c.slice("rs2"))
    # A consumer's keys, nonce and namespace take longer than the webhook's watch.
    late = consumers(user_name("rs2", c.id))
    got, message = denial(late.tenant_proc.stderr)
    assert got == "Duplicate", late.tenant_proc.stderr
    assert f"found the user of ResourceSlice {c.ns}/rs2" in message, message


# --- issue 36, gap 2: two-way peering, this cluster's own local slice -------------------------

SELF = "prov-self"          # the provider's cluster id in these tests


def _clusterid_configmap(cid):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "liqo-clusterid-configmap", "namespace": INSTALL_NAMESPACE,
                         "labels": {"app.kubernetes.io/name": "clusterid-configmap"}},
            "data": {"CLUSTER_ID": cid}}


@contextlib.contextmanager
def _webhook_with(webhook, *args):
    """The webhook restarted with args for the block, then as before."""
    webhook.restart(*args)
    try:
        yield webhook
    finally:
        webhook.restart()


def _may_write_slices(provider, ns, user):
    """What a consumer's identities have in its tenant namespace: slices, nothing else."""
    provider.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": "slice-writer", "namespace": ns},
                    "rules": [{"apiGroups": [GROUP], "resources": ["resourceslices"],
                               "verbs": ["get", "create", "update", "patch"]}]})
    provider.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": f"slice-writer-{hashlib.sha256(user.encode()).hexdigest()[:8]}",
                                 "namespace": ns},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "slice-writer"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


def _own_local_slice(c, name, consumer_id=SELF):
    """This cluster's own local slice in consumer c's tenant namespace, as a two-way peering
    makes it: replicated to c, consuming from c (spec.consumerClusterID is this cluster)."""
    obj = _local_slice(name, c.ns, c.id)
    obj["spec"]["consumerClusterID"] = consumer_id
    return obj


@pytest.mark.parametrize("source", ["configmap", "flag"])
def test_consumer_cannot_make_the_providers_own_local_slice(provider, consumers, webhook, source):
    """A slice labelled liqo.io/replication=true in a tenant namespace whose consumer is this
    cluster is this cluster's own local slice (its signer makes a CSR for it under the cluster
    key). Neither of a consumer's identities may create one, whatever other labels it carries:
    SliceClaimsLocalCluster (403). The provider's admin may. The webhook learns its id from
    Liqo's clusterid ConfigMap (list allowed by manifests/webhook/rbac.yaml) or --cluster-id."""
    c = consumers()
    name = f"rs{uuid.uuid4().hex[:4]}"        # local slice names are unique in the cluster
    control_plane, slice_user = (c.id, ("liqo.io",)), (user_name(name, c.id), (c.id,))
    for user, _ in (control_plane, slice_user):
        _may_write_slices(provider, c.ns, user)
    args = ("--cluster-id", SELF) if source == "flag" else ()
    if source == "configmap":
        provider.apply(_clusterid_configmap(SELF))
    try:
        with _webhook_with(webhook, *args):
            said = "cluster id read from the clusterid ConfigMap" if source == "configmap" else '"cluster_id":"' + SELF
            assert said in webhook.process.log_path.read_text(), webhook.process.log_tail(20)
            # the consumer's ControlPlane user: a "replicated copy" that also says it is local
            copy = c.slice(name, labels={"liqo.io/replication": "true"}, consumerClusterID=SELF)
            copy["metadata"]["labels"]["liqo.io/originID"] = SELF
            # the slice's own user: a plain local slice
            local = _own_local_slice(c, name)
            for obj, (user, groups) in ((copy, control_plane), (local, slice_user)):
                proc = provider.create(obj, check=False, as_user=user, as_groups=groups)
                message = expect_denied(proc, "SliceClaimsLocalCluster", "Forbidden")
                assert f"is this cluster, {SELF}, is this cluster's own local slice: expected a trusted " \
                       f'local-slice writer (--local-slice-writers), found user "{user}"' in message, message
                assert not stored(provider, c.ns, name)
            # a local slice for another consumer is no claim; the admin makes the real one
            proc = provider.create(_own_local_slice(c, f"{name}-x", consumer_id="someone-else"), check=False,
                                   as_user=slice_user[0], as_groups=slice_user[1])
            assert proc.returncode == 0, proc.stderr
            proc = provider.create(_own_local_slice(c, name), check=False)
            assert proc.returncode == 0, proc.stderr
            # once made, its writers may update it (Liqo's and tenantgate's controllers)
            proc = provider.kubectl("label", "rslice", name, "-n", c.ns, "touched=1", check=False,
                                    as_user=slice_user[0], as_groups=slice_user[1])
            assert proc.returncode == 0, proc.stderr
    finally:
        provider.kubectl("delete", "configmap", "liqo-clusterid-configmap", "-n", INSTALL_NAMESPACE,
                         "--ignore-not-found", check=False)


def test_without_a_cluster_id_every_local_slice_of_a_tenant_namespace_is_the_providers(
        provider, consumers, webhook):
    """No --cluster-id and no readable clusterid ConfigMap: the webhook cannot tell its own
    local slices from others, so in a tenant namespace only trusted writers may write a slice
    labelled liqo.io/replication=true (fail closed); the log says why at start."""
    c = consumers()
    name = f"rs{uuid.uuid4().hex[:4]}"
    user = user_name(name, c.id)
    _may_write_slices(provider, c.ns, user)
    # the slice policy ConfigMap follows --namespace by default: off, so the webhook gets ready
    with _webhook_with(webhook, "--namespace", "tg-no-such-namespace", "--slice-policy-configmap", "off"):
        assert "no cluster id (give --cluster-id)" in webhook.process.log_path.read_text()
        proc = provider.create(_own_local_slice(c, name, consumer_id="someone-else"), check=False,
                               as_user=user, as_groups=(c.id,))
        message = expect_denied(proc, "SliceClaimsLocalCluster", "Forbidden")
        assert "this cluster's id is unknown (--cluster-id)" in message, message
        assert not stored(provider, c.ns, name)
        proc = provider.create(_own_local_slice(c, name, consumer_id="someone-else"), check=False)
        assert proc.returncode == 0, proc.stderr


# --- issue 45, item 4: a no-handshake Tenant's slice key --------------------------------------

WEAK_AND_GOOD_KEYS = [  # openssl genpkey options, admitted
    (("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"), False),
    (("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"), False),
    (("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"), True),
    (("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"), True),
]


def test_no_handshake_slice_csr_key_meets_the_key_policy(provider, webhook, consumers, tmp_path):
    """A TolerateNoHandshake Tenant has no key to compare a slice's CSR with (as in Liqo), so the
    CSR's own key is the one the certificate is for: the consumer's ControlPlane user writing a
    slice whose CSR has an RSA-1024 or secp256k1 key is refused WeakKey (stricter than Liqo, which
    signs any), nothing stored; RSA-2048 and P-256 keys (--key-type) are stored."""
    c = consumers()
    _may_write_slices(provider, c.ns, c.id)
    with _webhook_with(webhook, "--allow-no-handshake"):
        provider.kubectl("delete", f"tenants.{GROUP}", c.id, "-n", c.ns, "--wait=true")
        provider.apply({"apiVersion": f"{GROUP}/v1beta1", "kind": "Tenant",
                        "metadata": {"name": c.id, "namespace": c.ns,
                                     "labels": {"liqo.io/remote-cluster-id": c.id}},
                        "spec": {"clusterID": c.id, "authzPolicy": "TolerateNoHandshake"}})
        for i, (options, admitted) in enumerate(WEAK_AND_GOOD_KEYS):
            key, name = tmp_path / f"k{i}.pem", f"nh{i}"
            openssl("genpkey", *options, "-out", str(key))
            proc = provider.create(c.slice(name, csr=c.csr(name, key=key)), check=False,
                                   as_user=c.id, as_groups=("liqo.io",))
            if admitted:
                assert proc.returncode == 0, (options, proc.stderr)
            else:
                message = expect_denied(proc, "WeakKey", "BadRequest")
                assert "the CSR's key: expected" in message, message
                assert not stored(provider, c.ns, name)


# --- Liqo's --default-resource-slice-class-enabled=false (issue 45, item 5) -------------------

def test_default_class_refused_when_the_provider_turned_it_off(provider, webhook, consumers):
    """As the consumer's ControlPlane user (group liqo.io), the only writer of replicated
    copies: a default-class slice (spec.class default, or none) is refused at kubectl apply
    with DefaultResourceSliceClassDisabled while the switch is off; another class is stored;
    with the webhook's default flags the same default-class slice is stored."""
    c = consumers()
    _may_write_slices(provider, c.ns, c.id)
    as_consumer = {"as_user": c.id, "as_groups": ("liqo.io",)}
    with _webhook_with(webhook, "--default-resource-slice-class-enabled=false"):
        for name, cls, found in (("rs-default", "default", 'found "default"'),
                                 ("rs-none", None, "found none (the default class)")):
            proc = provider.apply(c.slice(name, **{"class": cls}), check=False, **as_consumer)
            message = expect_denied(proc, "DefaultResourceSliceClassDisabled", "Forbidden")
            assert "spec.class: expected a class the provider offers" in message, message
            assert found in message and "--default-resource-slice-class-enabled=false" in message, message
            assert not stored(provider, c.ns, name)
        proc = provider.apply(c.slice("rs-gpu", **{"class": "gpu"}), check=False, **as_consumer)
        assert proc.returncode == 0, proc.stderr
    proc = provider.apply(c.slice("rs-default"), check=False, **as_consumer)
    assert proc.returncode == 0, proc.stderr


# --- the consumer's own slice policy (issue 48, item 2) -----------------------------------------

SLICE_POLICY = "tenantgate-resourceslice-policy"    # the default --slice-policy-configmap name


def _slice_policy(entries):
    """The policy ConfigMap in the install namespace, one tenant.<id> key per consumer."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": SLICE_POLICY, "namespace": INSTALL_NAMESPACE},
            "data": {f"tenant.{cid}": json.dumps(entry) for cid, entry in entries.items()}}


def _refused_now(provider, obj, reason, as_consumer):
    """Once the webhook's informer shows the policy: a server-side dry run (admitted or not,
    nothing stored) refuses obj with reason."""
    proc = provider.apply(obj, "--dry-run=server", check=False, **as_consumer)
    return proc.returncode != 0 and reason in proc.stderr


def test_consumer_slice_policy_refused_at_apply(provider, webhook, consumers):
    """The provider's admin gives consumer A classes ["default"] and maxPerSlice cpu 2 in the
    policy ConfigMap (install namespace: no tenant can write it). As A's ControlPlane user, the
    writer of its replicated copies: a gpu slice is refused at kubectl apply with
    ClassNotAllowed naming the allowed classes, a 4-CPU slice with TenantPolicyExceeded naming
    the resource, asked and allowed; a 2-CPU default slice is stored. Consumer B, without an
    entry, is unaffected. The policy loosened, the same applies succeed. The webhook reads the
    ConfigMap as its own ServiceAccount (manifests/webhook/rbac.yaml, resourceNames)."""
    a, b = consumers(), consumers()
    for c in (a, b):
        _may_write_slices(provider, c.ns, c.id)
    as_a, as_b = ({"as_user": c.id, "as_groups": ("liqo.io",)} for c in (a, b))
    gpu = a.slice("rs-gpu", **{"class": "gpu", "resources": {"cpu": "1"}})
    big = a.slice("rs-big", resources={"cpu": "4"})
    provider.apply(_slice_policy({a.id: {"classes": ["default"], "maxPerSlice": {"cpu": "2"}}}))
    try:
        wait_for(lambda: _refused_now(provider, gpu, "ClassNotAllowed", as_a), timeout=30,
                 what="the webhook to see the policy")
        proc = provider.apply(gpu, check=False, **as_a)
        message = expect_denied(proc, "ClassNotAllowed", "Forbidden")
        assert f"consumer {a.id} (data.tenant.{a.id} of the slice policy ConfigMap): spec.class: expected a " \
               'class this consumer may use ["default"], found "gpu"' in message, message
        proc = provider.apply(big, check=False, **as_a)
        message = expect_denied(proc, "TenantPolicyExceeded", "Forbidden")
        assert "cpu: 4 asked, at most 2 per slice for this consumer (2 over)" in message, message
        assert not stored(provider, a.ns, "rs-gpu") and not stored(provider, a.ns, "rs-big")
        proc = provider.apply(a.slice("rs-small", resources={"cpu": "2"}), check=False, **as_a)
        assert proc.returncode == 0, proc.stderr
        for obj in (b.slice("rs-gpu", **{"class": "gpu"}), b.slice("rs-big", resources={"cpu": "4"})):
            proc = provider.apply(obj, check=False, **as_b)
            assert proc.returncode == 0, proc.stderr
        # loosened: the same applies go through
        provider.apply(_slice_policy({a.id: {"classes": ["default", "gpu"], "maxPerSlice": {"cpu": "4"}}}))
        wait_for(lambda: not _refused_now(provider, gpu, "ClassNotAllowed", as_a), timeout=30,
                 what="the webhook to see the loosened policy")
        for obj in (gpu, big):
            proc = provider.apply(obj, check=False, **as_a)
            assert proc.returncode == 0, proc.stderr
    finally:
        provider.kubectl("delete", "configmap", SLICE_POLICY, "-n", INSTALL_NAMESPACE, "--ignore-not-found",
                         check=False)
