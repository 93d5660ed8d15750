#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpus of fuzz_api_answer.c: answers an API server gives
the CLI, each as two bytes of HTTP status (big-endian, as the target reads it: 100 + n % 500)
and the body.  The Tenant's certificate is the one cli/tests/status_cert.h holds (test key, no
secret).  Run once; the output is checked in."""
import json
import re
import struct
from pathlib import Path

here = Path(__file__).resolve().parent
out = here / "corpus_api_answer"
cert = re.search(r'#define STATUS_CERT_B64 "([^"]+)"', (here.parent / "tests" / "status_cert.h").read_text()).group(1)
key = re.search(r'#define STATUS_KEY_PEM_B64 "([^"]+)"', (here.parent / "tests" / "status_cert.h").read_text()).group(1)


def status_doc(code, reason, message, details=None):
    doc = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code}
    if details is not None:
        doc["details"] = details
    return doc


tenant = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
          "metadata": {"name": "c1", "namespace": "liqo-tenant-c1", "uid": "u-1", "resourceVersion": "7"},
          "spec": {"clusterID": "c1", "publicKey": key},
          "status": {"tenantNamespace": "liqo-tenant-c1",
                     "authParams": {"ca": cert, "signedCRT": cert, "apiServer": "https://127.0.0.1:6443",
                                    "proxyURL": "http://127.0.0.1:3128"}}}
refused = dict(tenant, items=[{"type": "Warning", "reason": "CSRPublicKeyMismatch", "message": "not this key",
                               "source": {"component": "tenantgate-signer"},
                               "involvedObject": {"uid": "u-1", "resourceVersion": "7"}}])
slice_ = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "ResourceSlice",
          "metadata": {"name": "s1", "namespace": "liqo-tenant-p1"},
          "status": {"conditions": [{"type": "Authentication", "status": "Accepted"},
                                    {"type": "Resources", "status": "Denied", "reason": "NoResources",
                                     "message": "none left"}]}}
secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "liqo-nonce"},
          "data": {"nonce": "bm9uY2Utbm9uY2Utbm9uY2Utbm9uY2Utbm9uY2Utbm9uY2U="}}

seeds = {
    "not-synced-500": (500, status_doc(500, "InternalError", "admission webhook denied the request: "
                                       "CacheNotSynced: cache not synced, retry later", {"retryAfterSeconds": 1})),
    "busy-429": (429, status_doc(429, "TooManyRequests", "LiveReadBusy: retry later", {"retryAfterSeconds": 1})),
    "apf-429": (429, status_doc(429, "TooManyRequests", "Too many requests, please try again later.",
                                {"causes": [{"type": "UnexpectedServerResponse"}], "retryAfterSeconds": 1})),
    "unavailable-503": (503, "service unavailable\n"),
    "object-404": (404, status_doc(404, "NotFound", 'tenants.authentication.liqo.io "c1" not found',
                                   {"name": "c1", "group": "authentication.liqo.io", "kind": "tenants"})),
    "type-404": (404, "404 page not found\n"),
    "forbidden-403": (403, status_doc(403, "Forbidden", 'tenants.authentication.liqo.io is forbidden: User '
                                      '"system:serviceaccount:x:y" cannot create resource "tenants"')),
    "webhook-500": (500, status_doc(500, "InternalError", 'Internal error occurred: failed calling webhook '
                                    '"tenants.validate.tenantgate.io": connection refused')),
    "tenant-200": (200, tenant),
    "tenant-refused-200": (200, refused),
    "slice-200": (200, slice_),
    "secret-200": (200, secret),
}


def main():
    out.mkdir(exist_ok=True)
    for name, (code, body) in seeds.items():
        text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        (out / name).write_bytes(struct.pack(">H", code - 100) + text.encode())


if __name__ == "__main__":
    main()
