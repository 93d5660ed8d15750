#!/usr/bin/env python3
"""Write the Tenant test vectors of docs/PROTOCOL.md into a folder.

Usage: make_vectors.py [OUT_DIR]     (default: the vectors/ folder beside this script)

Each vector is NAME.json (a Tenant as the API server holds it) and NAME.nonce (the nonce
text the provider issued for it).  index.tsv has one row per vector:

    name  verdict  reason  scope

verdict is accept or reject, reason the reason code of the refusal (docs/PROTOCOL.md), and
scope says which layers can see the vector:

    cluster   every layer: the pure decision, `kubectl tenantgate check`, and the webhook
              behind a real API server with tenantgate's CRDs
    webhook   a placement rule (step 2) only the webhook in a cluster applies: the decision
              and `check` accept the Tenant (`check` warns), the webhook refuses it
    decision  the decision and `check`; the CRDs' own schema refuses it before the webhook
    document  only where the whole document is decoded (`check`, the webhook's decoder):
              not a decodable Tenant, and refused by the API server's schema first

The seed-* vectors reproduce the example Tenant published with Liqo's authentication
documentation byte for byte (its nonce, key, CSR and signature are the published base64).
The rest are made here from fixed key seeds, so Ed25519 and RSA-PKCS#1 outputs are the same
on every run; ECDSA signatures and the RSA keys are random, so those files change when the
script runs again (their verdicts do not).

Needs the Python `cryptography` package (Debian: python3-cryptography, 38 or later).
"""

import base64
import hashlib
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, padding, rsa
from cryptography.x509.oid import NameOID

API_VERSION = "authentication.liqo.io/v1beta1"
LABEL = "liqo.io/remote-cluster-id"
ORG = "liqo.io"

# --- the published example (Liqo's manual authentication page) --------------------------------

SEED_NONCE = "5IDZQiNG7EUv+GPmS5RvzcTAo8ksSfM3LUTFaBYnPfvY5WndhNGkJVFOFmTVc0ArT4B/FkH6QO7Kfhk6Q1B4ww=="
SEED_PUBLIC_KEY = "4v2OKH2tl3m47NRm8jn/5WCFWViCigOHx4LFaMxfQWw="
SEED_CSR = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlHZ01GUUNBUUF3SVRFUU1BNEdBMVVFQ2hNSGJHbHhi"
    "eTVwYnpFTk1Bc0dBMVVFQXhNRVkyd3dNVEFxTUFVRwpBeXRsY0FNaEFPTDlqaWg5clpkNXVPelVadkk1LytWZ2hWbFln"
    "b29EaDhlQ3hXak1YMEZzb0FBd0JRWURLMlZ3CkEwRUFQbytpenBBRXljM2FsNjYyZUhBZ3RyQXlHenozelFpVzA0ZHQz"
    "azNJYXNWdVBpcE1wSnBmQnA5aEk1YWYKM0c2a0Y3cGVjWW5zeThYWUlqVyt6QnNORHc9PQotLS0tLUVORCBDRVJUSUZJ"
    "Q0FURSBSRVFVRVNULS0tLS0K")
SEED_SIGNATURE = "K5GP+UkTKJ5ao02l8RBUJLwaUPp+gE85HtCYdJ2i2g8IW/pkmBmzjdAw1RujU3//Mnp+zdgExlQA2MWiv7jTBw=="


def b64(data):
    return base64.b64encode(data).decode("ascii")


def check_seed():
    """The published example is self-consistent: the signature verifies over the nonce text
    with the key, and the CSR carries the same key.  Proves the constants were copied whole."""
    key = ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(SEED_PUBLIC_KEY))
    key.verify(base64.b64decode(SEED_SIGNATURE), SEED_NONCE.encode("ascii"))
    csr = x509.load_pem_x509_csr(base64.b64decode(SEED_CSR))
    assert csr.is_signature_valid
    raw = csr.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert raw == base64.b64decode(SEED_PUBLIC_KEY)
    cn = csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert cn == "cl01", cn


# --- keys, nonces, signatures ------------------------------------------------------------------

def digest(label, n=32):
    out, i = b"", 0
    while len(out) < n:
        out += hashlib.sha256(f"tenantgate-vectors/{label}/{i}".encode()).digest()
        i += 1
    return out[:n]


def nonce_for(label):
    """88 characters: 64 bytes, standard base64 with padding (PROTOCOL.md, nonce)."""
    return b64(digest("nonce/" + label, 64))


def ed25519_key(label):
    return ed25519.Ed25519PrivateKey.from_private_bytes(digest("ed25519/" + label))


def ec_key(label, curve):
    """A fixed scalar below 2^250: smaller than the order of every curve used here."""
    scalar = int.from_bytes(digest("ec/" + label + "/" + curve.name), "big") % (1 << 250) + 1
    return ec.derive_private_key(scalar, curve)


_RSA = {}


def rsa_key(label, bits):
    if (label, bits) not in _RSA:
        _RSA[(label, bits)] = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return _RSA[(label, bits)]


def sign(key, message):
    """The signature a consumer puts in spec.signature (PROTOCOL.md, signature)."""
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(message)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(message, ec.ECDSA(hashes.SHA256()))
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    if isinstance(key, dsa.DSAPrivateKey):
        return key.sign(message, hashes.SHA256())
    raise TypeError(key)


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def public_raw(key):
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def name(*pairs):
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in pairs])


def csr_pem(key, subject, extensions=(), attributes=()):
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    for ext in extensions:
        builder = builder.add_extension(ext, critical=False)
    for oid, value in attributes:
        builder = builder.add_attribute(oid, value)
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(key, algorithm).public_bytes(serialization.Encoding.PEM)


def liqo_subject(cluster_id):
    """O=liqo.io, CN=<cluster id>: the only subject a Tenant's CSR may have."""
    return name((NameOID.ORGANIZATION_NAME, ORG), (NameOID.COMMON_NAME, cluster_id))


def flip_csr_signature(pem):
    """The same CSR with the last byte of its signature changed."""
    der = bytearray(x509.load_pem_x509_csr(pem).public_bytes(serialization.Encoding.DER))
    der[-1] ^= 0x01
    body = b64(bytes(der))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return ("-----BEGIN CERTIFICATE REQUEST-----\n" + "\n".join(lines) +
            "\n-----END CERTIFICATE REQUEST-----\n").encode()


# --- documents ---------------------------------------------------------------------------------

def tenant(cluster_id, public_key, csr, signature, name_=None, namespace=None, label=None):
    """A Tenant object; the three proofs are bytes (base64-encoded here) or, for malformed
    documents, already a JSON value."""
    def enc(v):
        return b64(v) if isinstance(v, (bytes, bytearray)) else v
    spec = {"clusterID": cluster_id}
    for field, value in (("publicKey", public_key), ("csr", csr), ("signature", signature)):
        if value is not None:
            spec[field] = enc(value)
    meta_id = cluster_id if isinstance(cluster_id, str) else "malformed"
    return {
        "apiVersion": API_VERSION,
        "kind": "Tenant",
        "metadata": {
            "name": name_ or meta_id,
            "namespace": namespace or f"liqo-tenant-{meta_id}",
            "labels": {LABEL: label or meta_id},
        },
        "spec": spec,
    }


class Vectors:
    def __init__(self):
        self.rows = []          # (name, verdict, reason, scope, document, nonce)

    def add(self, name_, verdict, reason, scope, doc, nonce):
        assert all(r[0] != name_ for r in self.rows), name_
        self.rows.append((name_, verdict, reason, scope, doc, nonce))

    def write(self, out):
        os.makedirs(out, exist_ok=True)
        for old in os.listdir(out):
            if old.endswith((".json", ".nonce")) or old == "index.tsv":
                os.remove(os.path.join(out, old))
        with open(os.path.join(out, "index.tsv"), "w") as index:
            index.write("name\tverdict\treason\tscope\n")
            for name_, verdict, reason, scope, doc, nonce in self.rows:
                index.write(f"{name_}\t{verdict}\t{reason}\t{scope}\n")
                with open(os.path.join(out, name_ + ".json"), "w") as f:
                    json.dump(doc, f, indent=2)
                    f.write("\n")
                with open(os.path.join(out, name_ + ".nonce"), "w") as f:
                    f.write(nonce + "\n")


def seed_vectors(v):
    """The published example: as printed (name cl-consumer, CSR for cl01) and for cl01."""
    pub = base64.b64decode(SEED_PUBLIC_KEY)
    csr = base64.b64decode(SEED_CSR)
    sig = base64.b64decode(SEED_SIGNATURE)
    pem = ed25519.Ed25519PublicKey.from_public_bytes(pub).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    flipped = bytearray(sig)
    flipped[10] ^= 0x01
    v.add("seed-cl01-rawkey", "accept", "", "cluster", tenant("cl01", pub, csr, sig), SEED_NONCE)
    v.add("seed-cl01-pemkey", "accept", "", "cluster", tenant("cl01", pem, csr, sig), SEED_NONCE)
    v.add("seed-doc-as-printed", "reject", "CSRSubjectMismatch", "cluster",
          tenant("cl-consumer", pub, csr, sig), SEED_NONCE)
    v.add("seed-cl01-flipped-signature", "reject", "SignatureVerificationFailed", "cluster",
          tenant("cl01", pub, csr, bytes(flipped)), SEED_NONCE)


def made(v, vname, key, verdict="accept", reason="", scope="cluster", raw_key=False,
         public_key=None, csr=None, signature=None, message=None, doc_edit=None):
    """Vector vname for a consumer of id tv-<vname>, with key's proofs unless one is given."""
    cid = "tv-" + vname
    nonce = nonce_for(vname)
    if public_key is None:
        public_key = public_raw(key) if raw_key else public_pem(key)
    if csr is None:
        csr = csr_pem(key, liqo_subject(cid))
    if signature is None:
        signature = sign(key, message if message is not None else nonce.encode("ascii"))
    doc = tenant(cid, public_key, csr, signature)
    if doc_edit:
        doc_edit(doc)
    v.add(vname, verdict, reason, scope, doc, nonce)


def accepted(v):
    made(v, "ed25519-raw", ed25519_key("a"), raw_key=True)
    made(v, "ed25519-pem", ed25519_key("a"))
    made(v, "ecdsa-p256", ec_key("a", ec.SECP256R1()))
    made(v, "ecdsa-p384", ec_key("a", ec.SECP384R1()))
    made(v, "rsa-2048", rsa_key("a", 2048))
    made(v, "rsa-3072", rsa_key("a", 3072))


def bad_keys(v):
    e = ed25519_key("a")
    made(v, "key-raw-31-bytes", e, "reject", "InvalidPublicKey", public_key=public_raw(e)[:31])
    made(v, "key-raw-33-bytes", e, "reject", "InvalidPublicKey", public_key=public_raw(e) + b"\0")
    made(v, "key-garbage", e, "reject", "InvalidPublicKey", public_key=digest("garbage", 48))
    made(v, "key-pem-private", e, "reject", "InvalidPublicKey",
         public_key=e.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    made(v, "key-pem-two-blocks", e, "reject", "InvalidPublicKey",
         public_key=public_pem(e) + public_pem(ed25519_key("b")))
    made(v, "key-pem-bad-body", e, "reject", "InvalidPublicKey",
         public_key=b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    d = dsa.generate_private_key(key_size=2048)
    made(v, "key-dsa", d, "reject", "InvalidPublicKey")
    made(v, "key-rsa-1024", rsa_key("weak", 1024), "reject", "WeakKey")
    made(v, "key-ecdsa-p521", ec_key("weak", ec.SECP521R1()), "reject", "WeakKey")
    made(v, "key-ecdsa-secp256k1", ec_key("weak", ec.SECP256K1()), "reject", "WeakKey")


def bad_signatures(v):
    e, p, r = ed25519_key("a"), ec_key("a", ec.SECP256R1()), rsa_key("a", 2048)
    for vname, key, other in (("ed25519", e, ed25519_key("b")),
                              ("ecdsa", p, ec_key("b", ec.SECP256R1())),
                              ("rsa", r, rsa_key("b", 2048))):
        made(v, f"sig-{vname}-other-key", key, "reject", "SignatureVerificationFailed",
             signature=sign(other, nonce_for(f"sig-{vname}-other-key").encode()))
        made(v, f"sig-{vname}-decoded-nonce", key, "reject", "SignatureVerificationFailed",
             message=base64.b64decode(nonce_for(f"sig-{vname}-decoded-nonce")))
    made(v, "sig-ed25519-other-nonce", e, "reject", "SignatureVerificationFailed",
         message=nonce_for("another").encode())
    made(v, "sig-ed25519-newline", e, "reject", "SignatureVerificationFailed",
         message=(nonce_for("sig-ed25519-newline") + "\n").encode())
    made(v, "sig-ed25519-truncated", e, "reject", "SignatureVerificationFailed",
         signature=sign(e, nonce_for("sig-ed25519-truncated").encode())[:63])
    made(v, "sig-ed25519-raw-key-other-key", e, "reject", "SignatureVerificationFailed",
         raw_key=True, signature=sign(ed25519_key("b"), nonce_for("x").encode()))
    made(v, "sig-ecdsa-sha384", p, "reject", "SignatureVerificationFailed",
         signature=p.sign(nonce_for("sig-ecdsa-sha384").encode(), ec.ECDSA(hashes.SHA384())))
    made(v, "sig-rsa-pss", r, "reject", "SignatureVerificationFailed",
         signature=r.sign(nonce_for("sig-rsa-pss").encode(),
                          padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256()))
    made(v, "sig-rsa-sha1", r, "reject", "SignatureVerificationFailed",
         signature=r.sign(nonce_for("sig-rsa-sha1").encode(), padding.PKCS1v15(), hashes.SHA1()))


def bad_csrs(v):
    e = ed25519_key("a")
    for kname, key in (("ed25519", e), ("ecdsa", ec_key("a", ec.SECP256R1())),
                       ("rsa", rsa_key("a", 2048))):
        cid = f"tv-csr-{kname}-other-key"
        other = {"ed25519": ed25519_key("b"), "ecdsa": ec_key("b", ec.SECP256R1()),
                 "rsa": rsa_key("b", 2048)}[kname]
        made(v, f"csr-{kname}-other-key", key, "reject", "CSRPublicKeyMismatch",
             csr=csr_pem(other, liqo_subject(cid)))
        made(v, f"csr-{kname}-bad-self-signature", key, "reject", "InvalidCSR",
             csr=flip_csr_signature(csr_pem(key, liqo_subject(f"tv-csr-{kname}-bad-self-signature"))))

    def cid(n):
        return "tv-" + n

    good = csr_pem(e, liqo_subject(cid("csr-two-blocks")))
    made(v, "csr-not-pem", e, "reject", "InvalidCSR", csr=b"not a certificate request\n")
    made(v, "csr-two-blocks", e, "reject", "InvalidCSR", csr=good + good)
    made(v, "csr-trailing-text", e, "reject", "InvalidCSR",
         csr=csr_pem(e, liqo_subject(cid("csr-trailing-text"))) + b"trailing\n")
    made(v, "csr-der", e, "reject", "InvalidCSR",
         csr=x509.load_pem_x509_csr(csr_pem(e, liqo_subject(cid("csr-der")))).public_bytes(
             serialization.Encoding.DER))
    made(v, "csr-certificate-block", e, "reject", "InvalidCSR",
         csr=csr_pem(e, liqo_subject(cid("csr-certificate-block"))).replace(
             b"CERTIFICATE REQUEST", b"CERTIFICATE"))
    made(v, "csr-extra-ou", e, "reject", "CSRForbiddenContent",
         csr=csr_pem(e, name((NameOID.ORGANIZATION_NAME, ORG),
                             (NameOID.ORGANIZATIONAL_UNIT_NAME, "ops"),
                             (NameOID.COMMON_NAME, cid("csr-extra-ou")))))
    made(v, "csr-extra-country", e, "reject", "CSRForbiddenContent",
         csr=csr_pem(e, name((NameOID.COUNTRY_NAME, "IT"), (NameOID.ORGANIZATION_NAME, ORG),
                             (NameOID.COMMON_NAME, cid("csr-extra-country")))))
    made(v, "csr-san-extension", e, "reject", "CSRForbiddenContent",
         csr=csr_pem(e, liqo_subject(cid("csr-san-extension")),
                     extensions=[x509.SubjectAlternativeName([x509.DNSName("evil.example")])]))
    made(v, "csr-basic-constraints-ca", e, "reject", "CSRForbiddenContent",
         csr=csr_pem(e, liqo_subject(cid("csr-basic-constraints-ca")),
                     extensions=[x509.BasicConstraints(ca=True, path_length=None)]))
    made(v, "csr-challenge-password", e, "reject", "CSRForbiddenContent",
         csr=csr_pem(e, liqo_subject(cid("csr-challenge-password")),
                     attributes=[(x509.oid.AttributeOID.CHALLENGE_PASSWORD, b"secret")]))
    made(v, "csr-cn-other-cluster", e, "reject", "CSRSubjectMismatch",
         csr=csr_pem(e, liqo_subject("someone-else")))
    made(v, "csr-no-organization", e, "reject", "CSRSubjectMismatch",
         csr=csr_pem(e, name((NameOID.COMMON_NAME, cid("csr-no-organization")))))
    made(v, "csr-other-organization", e, "reject", "CSRSubjectMismatch",
         csr=csr_pem(e, name((NameOID.ORGANIZATION_NAME, "example.org"),
                             (NameOID.COMMON_NAME, cid("csr-other-organization")))))
    made(v, "csr-two-common-names", e, "reject", "CSRSubjectMismatch",
         csr=csr_pem(e, name((NameOID.ORGANIZATION_NAME, ORG),
                             (NameOID.COMMON_NAME, cid("csr-two-common-names")),
                             (NameOID.COMMON_NAME, "someone-else"))))
    made(v, "csr-two-organizations", e, "reject", "CSRSubjectMismatch",
         csr=csr_pem(e, name((NameOID.ORGANIZATION_NAME, ORG), (NameOID.ORGANIZATION_NAME, ORG),
                             (NameOID.COMMON_NAME, cid("csr-two-organizations")))))


def bad_placement(v):
    e = ed25519_key("a")

    def rename(doc):
        doc["metadata"]["name"] = "tv-someone-else"

    def relabel(doc):
        doc["metadata"]["labels"][LABEL] = "tv-someone-else"

    made(v, "name-mismatch", e, "reject", "NameMismatch", scope="webhook", doc_edit=rename)
    made(v, "label-mismatch", e, "reject", "LabelMismatch", scope="webhook", doc_edit=relabel)


def bad_documents(v):
    e = ed25519_key("a")

    def edit(**changes):
        def apply(doc):
            for path, value in changes.items():
                where = doc
                keys = path.split("__")
                for k in keys[:-1]:
                    where = where[k]
                if value is None:
                    where.pop(keys[-1], None)
                else:
                    where[keys[-1]] = value
        return apply

    def cluster_id(bad):
        """Name, label and spec.clusterID all bad (the namespace stays a valid name)."""
        def apply(doc):
            doc["spec"]["clusterID"] = doc["metadata"]["name"] = bad
            doc["metadata"]["labels"][LABEL] = bad
        return apply

    # The CRDs' schema refuses a clusterID outside the pattern before any webhook runs.
    made(v, "cluster-id-dot", e, "reject", "InvalidClusterID", scope="decision",
         csr=csr_pem(e, liqo_subject("tv.cluster-id-dot")), doc_edit=cluster_id("tv.cluster-id-dot"))
    made(v, "cluster-id-too-long", e, "reject", "InvalidClusterID", scope="decision",
         csr=csr_pem(e, liqo_subject("c" * 64)), doc_edit=cluster_id("c" * 64))
    made(v, "cluster-id-upper-case", e, "reject", "InvalidClusterID", scope="decision",
         csr=csr_pem(e, liqo_subject("TV-Upper")), doc_edit=cluster_id("TV-Upper"))
    made(v, "cluster-id-trailing-dash", e, "reject", "InvalidClusterID", scope="decision",
         csr=csr_pem(e, liqo_subject("tv-dash-")), doc_edit=cluster_id("tv-dash-"))
    made(v, "malformed-api-version", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(apiVersion="authentication.liqo.io/v1alpha1"))
    made(v, "malformed-kind", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(kind="Identity"))
    made(v, "malformed-no-signature", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(spec__signature=None))
    made(v, "malformed-no-cluster-id", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(spec__clusterID=None))
    made(v, "malformed-public-key-not-base64", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(spec__publicKey="not*base64"))
    made(v, "malformed-csr-number", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(spec__csr=42))
    made(v, "malformed-tolerate-no-handshake", e, "reject", "MalformedTenant", scope="document",
         doc_edit=edit(spec__authzPolicy="TolerateNoHandshake"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "vectors")
    check_seed()
    v = Vectors()
    seed_vectors(v)
    accepted(v)
    bad_keys(v)
    bad_signatures(v)
    bad_csrs(v)
    bad_placement(v)
    bad_documents(v)
    v.write(out)
    print(f"{len(v.rows)} vectors in {out}")


if __name__ == "__main__":
    main()
