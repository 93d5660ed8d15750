#!/usr/bin/env python3
"""Regenerate the recorded AdmissionReview fixtures from the seed vectors.

The Tenants are the seed-* vectors of ../../pki/testdata/vectors (docs/PROTOCOL.md 10)
unchanged; this only wraps them the way kube-apiserver sends them (admission.k8s.io v1 and
v1beta1). Run from this directory: python3 make_reviews.py [VECTORS_DIR]
"""
import copy
import json
import sys


def review(version, uid, op, tenant, old=None, sub_resource=None, namespace=None):
    req = {
        "uid": uid,
        "kind": {"group": "authentication.liqo.io", "version": "v1beta1", "kind": "Tenant"},
        "resource": {"group": "authentication.liqo.io", "version": "v1beta1", "resource": "tenants"},
        "requestKind": {"group": "authentication.liqo.io", "version": "v1beta1", "kind": "Tenant"},
        "requestResource": {"group": "authentication.liqo.io", "version": "v1beta1", "resource": "tenants"},
        "name": tenant["metadata"]["name"],
        "namespace": namespace or tenant["metadata"]["namespace"],
        "operation": op,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": None if op == "DELETE" else tenant,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": op.capitalize() + "Options"},
    }
    if sub_resource:
        req["subResource"] = sub_resource
    return {"apiVersion": "admission.k8s.io/" + version, "kind": "AdmissionReview", "request": req}


def main(vectors):
    def load(name):
        with open(f"{vectors}/{name}.json") as f:
            return json.load(f)

    out = {}
    for name in ("seed-cl01-pemkey", "seed-cl01-rawkey", "seed-doc-as-printed",
                 "seed-cl01-flipped-signature"):
        out[f"v1-create-{name}"] = review("v1", f"uid-{name}", "CREATE", load(name))
    pem = load("seed-cl01-pemkey")
    out["v1beta1-create-seed-cl01-pemkey"] = review("v1beta1", "uid-beta", "CREATE", pem)

    # UPDATE that only touches tenantCondition: the old proof stays, so even a
    # signature that would not verify today is not re-checked.
    flipped = load("seed-cl01-flipped-signature")
    newer = copy.deepcopy(flipped)
    newer["spec"]["tenantCondition"] = "Cordoned"
    out["v1-update-unchanged-proof"] = review("v1", "uid-upd-same", "UPDATE", newer, old=flipped)
    # UPDATE that swaps the signature: checked in full.
    out["v1-update-new-signature"] = review("v1", "uid-upd-new", "UPDATE", flipped, old=pem)

    out["v1-delete"] = review("v1", "uid-del", "DELETE", pem, old=pem)
    out["v1-status-update"] = review("v1", "uid-status", "UPDATE", pem, old=pem, sub_resource="status")

    unlabelled = copy.deepcopy(pem)
    del unlabelled["metadata"]["labels"]
    out["v1-create-no-labels"] = review("v1", "uid-nolabels", "CREATE", unlabelled)
    other = copy.deepcopy(pem)
    other["metadata"]["labels"] = {"app": "x"}
    out["v1-create-other-labels"] = review("v1", "uid-otherlabels", "CREATE", other)

    for name, doc in out.items():
        with open(f"review-{name}.json", "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../../pki/testdata/vectors")
