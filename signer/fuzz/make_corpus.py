#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpus of fuzz_decide.c: documents {"csr", "tenant", "slice",
"nonce", "policy", "others", "remote"} that reach every decision's approving path and some refusals.  The
keys are pki/testdata/make_vectors.py's fixed-seed test keys (no secret), so the output is the
same on every run; it is checked in.  Needs the `cryptography` module (Debian:
python3-cryptography)."""
import base64
import hashlib
import json
import sys
from pathlib import Path

from cryptography.x509.oid import NameOID

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent.parent / "pki" / "testdata"))
import make_vectors as mv  # noqa: E402

out = here / "corpus_decide"
CONSUMER, SLICE, KUBE = "cl01", "slice-a", "kubernetes.io/kube-apiserver-client"
NS = f"liqo-tenant-{CONSUMER}"
USAGES = ["digital signature", "key encipherment", "client auth"]


def b64(data):
    return base64.b64encode(data).decode()


def csr_object(request_pem, annotations=None, signer=KUBE, usages=USAGES):
    meta = {"name": "liqo-identity-x", "labels": {"liqo.io/remote-tenant-csr": "true",
                                                  "liqo.io/remote-cluster-id": CONSUMER}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": meta,
            "spec": {"request": b64(request_pem), "signerName": signer, "usages": usages,
                     "username": "system:serviceaccount:liqo:tenantgate-signer", "expirationSeconds": 3600}}


def main():
    key = mv.ed25519_key("fuzz-consumer")
    nonce = mv.nonce_for("fuzz-consumer")
    tenant_csr = mv.csr_pem(key, mv.liqo_subject(CONSUMER))
    tenant = mv.tenant(CONSUMER, mv.public_raw(key), tenant_csr, mv.sign(key, nonce.encode()))
    tenant["metadata"]["uid"] = "t-uid"
    user = f"{SLICE}-{hashlib.sha256(CONSUMER.encode()).hexdigest()[:12]}"
    slice_csr = mv.csr_pem(key, mv.name((NameOID.ORGANIZATION_NAME, CONSUMER), (NameOID.COMMON_NAME, user)))
    slice_ = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
              "metadata": {"name": SLICE, "namespace": NS, "uid": "s-uid",
                           "labels": {"liqo.io/replicated": "true", "liqo.io/originID": CONSUMER,
                                      "liqo.io/remote-cluster-id": CONSUMER}},
              "spec": {"consumerClusterID": CONSUMER, "class": "default", "csr": b64(slice_csr),
                       "resources": {"cpu": "2", "memory": "4Gi", "pods": 30, "nvidia.com/gpu": "500m"}}}
    remote = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
              "metadata": {"name": SLICE, "namespace": "liqo-tenant-p1", "finalizers": ["a", "b"],
                           "labels": {"liqo.io/replicated": "true", "liqo.io/originID": CONSUMER,
                                      "liqo.io/remoteID": "p1", "liqo.io/ownership": "x"}},
              "spec": slice_["spec"],
              "status": {"conditions": [{"type": "Authentication", "status": "Accepted"}],
                         "resources": {"cpu": "2", "memory": "4Gi"}}}
    policy = {"maxPerSlice": {"cpu": "8", "memory": "16Gi"}, "maxPerTenant": {"cpu": "32", "pods": "1e3"}}
    seeds = {
        "tenant-approved": {"csr": csr_object(tenant_csr), "tenant": tenant, "nonce": nonce},
        "tenant-wrong-nonce": {"csr": csr_object(tenant_csr), "tenant": tenant, "nonce": mv.nonce_for("other")},
        "tenant-own-signer": {"csr": csr_object(tenant_csr, signer="tenantgate.io/identity",
                                                usages=["client auth"]), "tenant": tenant, "nonce": nonce},
        "slice-approved": {"csr": csr_object(slice_csr, {"tenantgate.io/resourceslice": f"{NS}/{SLICE}"}),
                           "tenant": tenant, "slice": slice_, "policy": policy,
                           "others": {"cpu": "20", "pods": 900}, "remote": remote},
        "slice-over-policy": {"slice": dict(slice_, spec=dict(slice_["spec"], resources={"cpu": "9"})),
                              "tenant": tenant, "policy": policy},
        "quantities": {"slice": {"spec": {"resources": {"a": "1.5", "b": "+.5e3", "c": "7Ei", "d": "999999999999n",
                                                        "e": "1k", "f": "-1", "g": "0.001m", "h": "12Mi"}}}},
    }
    out.mkdir(exist_ok=True)
    for name, doc in seeds.items():
        (out / name).write_text(json.dumps(doc, separators=(",", ":")))


if __name__ == "__main__":
    main()
