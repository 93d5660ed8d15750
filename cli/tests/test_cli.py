#!/usr/bin/env python3
"""kubectl-tenantgate through the real binary.

Usage: test_cli.py BINARY VECTORS_DIR

Covers the vectors of docs/PROTOCOL.md 10 (verdict and exact reason), YAML and JSON input,
standard input, and for each key type the whole offline flow (keygen, nonce,
generate tenant, check) plus tampering with each proof, and usage errors.
"""
import base64
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = None
VECTORS = None
KEY_TYPES = ("ed25519", "rsa2048", "ecdsa-p256")
# what `openssl pkey -text` says of each --key-type's public key
KEY_TYPE_TEXT = {"ed25519": "ED25519 Public-Key", "rsa2048": "Public-Key: (2048 bit)",
                 "ecdsa-p256": "NIST CURVE: P-256"}


def run(*args, stdin=None, umask=None):
    def pre():
        if umask is not None:
            os.umask(umask)
    p = subprocess.run([BINARY, *args], input=stdin, capture_output=True, timeout=60,
                       preexec_fn=pre)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def to_yaml(obj, indent=0):
    """Block-style YAML of a JSON tree, written independently of the binary's
    own emitter (JSON strings are valid YAML double-quoted scalars)."""
    pad = "  " * indent
    out = []
    for key, val in obj.items():
        if isinstance(val, dict):
            out.append(f"{pad}{json.dumps(key)}:\n{to_yaml(val, indent + 1)}")
        else:
            out.append(f"{pad}{key}: {json.dumps(val)}\n")
    return "".join(out)


def pem_body(pem_text):
    lines = pem_text.strip().splitlines()
    return lines[0], base64.b64decode("".join(lines[1:-1])), lines[-1]


def pem_wrap(header, der, footer):
    b64 = base64.b64encode(der).decode()
    body = "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64))
    return f"{header}\n{body}\n{footer}\n"


def flip_der_in_pem_field(tenant, field, position, mask=0x01):
    """A copy of tenant whose spec[field] (base64 of PEM) has one byte of the
    DER inside the PEM xor-ed with mask; position may be negative."""
    t = json.loads(json.dumps(tenant))
    header, der, footer = pem_body(base64.b64decode(t["spec"][field]).decode())
    der = bytearray(der)
    der[position] ^= mask
    t["spec"][field] = base64.b64encode(pem_wrap(header, bytes(der), footer).encode()).decode()
    return t


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w" if isinstance(text, str) else "wb") as f:
            f.write(text)
        return path

    def assert_rejected(self, rc, out, err, reason):
        self.assertEqual(rc, 1, f"expected rejection {reason}, got rc={rc} out={out!r} err={err!r}")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, f"stderr must be exactly one line: {err!r}")
        self.assertTrue(lines[0].startswith(reason + ": "), f"expected {reason}: ..., got {err!r}")
        self.assertGreater(len(lines[0]), len(reason) + 2, "the reason needs a message")
        self.assertEqual(out, "")

    def assert_accepted(self, rc, out, err, name, cluster):
        self.assertEqual(rc, 0, f"expected acceptance, got rc={rc} err={err!r}")
        self.assertEqual(out, f"accepted: tenant {name} (cluster {cluster})\n")
        for line in err.splitlines():
            self.assertTrue(line.startswith("Warning: "), f"unexpected stderr line {line!r}")

    def assert_usage_error(self, rc, out, err):
        self.assertEqual(rc, 2, f"expected exit 2, got {rc}: {err!r}")
        self.assertNotEqual(err.strip(), "", "a usage error must say something on stderr")


class Vectors(Base):
    def vectors(self):
        with open(os.path.join(VECTORS, "index.tsv")) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        self.assertEqual(rows[0][:3], ["name", "verdict", "reason"])
        self.assertGreater(len(rows), 1)
        for row in rows[1:]:
            row += [""] * (4 - len(row))
            # "webhook": a placement rule only the webhook applies; check accepts (and warns)
            yield row[0], "accept" if row[3] == "webhook" else row[1], row[2]

    def load(self, name):
        with open(os.path.join(VECTORS, name + ".json")) as f:
            doc = json.load(f)
        with open(os.path.join(VECTORS, name + ".nonce")) as f:
            nonce = f.read().strip()
        return doc, nonce

    def check_result(self, name, verdict, reason, doc, result):
        rc, out, err = result
        if verdict == "accept":
            self.assert_accepted(rc, out, err, doc["metadata"]["name"], doc["spec"]["clusterID"])
        else:
            self.assertEqual(verdict, "reject", f"{name}: unknown verdict {verdict}")
            self.assert_rejected(rc, out, err, reason)

    def test_vectors_json_file(self):
        for name, verdict, reason in self.vectors():
            with self.subTest(vector=name):
                doc, _ = self.load(name)
                result = run("check", "-f", os.path.join(VECTORS, name + ".json"),
                             "--nonce-file", os.path.join(VECTORS, name + ".nonce"))
                self.check_result(name, verdict, reason, doc, result)

    def test_vectors_yaml_and_stdin(self):
        for name, verdict, reason in self.vectors():
            doc, nonce = self.load(name)
            yaml_path = self.write(name + ".yaml", to_yaml(doc))
            with self.subTest(vector=name, form="yaml file"):
                self.check_result(name, verdict, reason, doc,
                                  run("check", "-f", yaml_path, "--nonce", nonce))
            with self.subTest(vector=name, form="yaml stdin"):
                self.check_result(name, verdict, reason, doc,
                                  run("check", "-f", "-", "--nonce", nonce,
                                      stdin=to_yaml(doc).encode()))
            with self.subTest(vector=name, form="json stdin"):
                self.check_result(name, verdict, reason, doc,
                                  run("check", "--filename=-", "--nonce", nonce,
                                      stdin=json.dumps(doc).encode()))

    def test_raw_and_pem_keys_accepted_without_warning(self):
        # A raw Ed25519 key is what every Liqo version reads (and our default): no warning.
        doc, nonce = self.load("seed-cl01-rawkey")
        for name in ("seed-cl01-rawkey", "seed-cl01-pemkey"):
            rc, out, err = run("check", "-f", os.path.join(VECTORS, name + ".json"), "--nonce", nonce)
            self.assertEqual((rc, err), (0, ""), name)

    def test_malformed_documents(self):
        doc, nonce = self.load("seed-cl01-pemkey")
        body = json.dumps(doc)
        cases = {
            "not yaml": "a: [1, 2\n",
            "duplicate key": body[:-1] + ', "kind": "Tenant"}',
            "trailing garbage": body + " x",
            "invalid utf-8": b'{"kind": "\xff"}',
            "yaml alias": "apiVersion: &v authentication.liqo.io/v1beta1\nkind: *v\n",
            "a list": "- 1\n",
            "empty": "",
            "wrong apiVersion": body.replace("v1beta1", "v1alpha1"),
            "Spec not spec": body.replace('"spec"', '"Spec"'),
            "bad base64": body.replace('"signature": "K5GP', '"signature": "K5G-'),
        }
        for what, text in cases.items():
            with self.subTest(case=what):
                path = self.write("bad.doc", text)
                self.assert_rejected(*run("check", "-f", path, "--nonce", nonce),
                                     "MalformedTenant")
        rc, out, err = run("check", "-f", self.write("a.json", cases["bad base64"]),
                           "--nonce", nonce)
        self.assertIn("spec.signature", err)
        self.assertNotIn("K5G-", err, "the signature must not be echoed")

    def test_oversized_input(self):
        _, nonce = self.load("seed-cl01-pemkey")
        path = self.write("big.yaml", "a: " + "x" * (1 << 20) + "\n")
        rc, out, err = run("check", "-f", path, "--nonce", nonce)
        self.assert_usage_error(rc, out, err)
        self.assertIn("limit", err)
        rc, out, err = run("check", "-f", "-", "--nonce", nonce, stdin=b" " * ((1 << 20) + 1))
        self.assert_usage_error(rc, out, err)

    def test_tolerate_no_handshake(self):
        _, nonce = self.load("seed-cl01-pemkey")
        doc = {"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Tenant",
               "metadata": {"name": "cl03"},
               "spec": {"clusterID": "cl03", "authzPolicy": "TolerateNoHandshake"}}
        path = self.write("t.json", json.dumps(doc))
        self.assert_rejected(*run("check", "-f", path, "--nonce", nonce), "MalformedTenant")
        rc, out, err = run("check", "-f", path, "--nonce", nonce, "--allow-no-handshake")
        self.assert_accepted(rc, out, err, "cl03", "cl03")
        # no remote-cluster-id label: the webhook's placement check would refuse it
        self.assertIn("Warning: metadata.labels[liqo.io/remote-cluster-id] is missing", err)

    def test_label_mismatch_warns_and_names_are_sanitised(self):
        doc, nonce = self.load("seed-cl01-pemkey")
        doc["metadata"]["labels"]["liqo.io/remote-cluster-id"] = "other"
        doc["metadata"]["name"] = "cl01\x1b[31m"
        rc, out, err = run("check", "-f", self.write("t.json", json.dumps(doc)), "--nonce", nonce)
        self.assert_accepted(rc, out, err, "cl01?[31m", "cl01")
        self.assertIn('is "other", expected spec.clusterID; the webhook will refuse it '
                      "(LabelMismatch)", err)
        self.assertIn('Warning: metadata.name is "cl01?[31m", expected spec.clusterID; the webhook '
                      "will refuse it (NameMismatch)", err)

    def test_name_unlike_cluster_id_warns(self):
        doc, nonce = self.load("seed-cl01-pemkey")
        rc, out, err = run("check", "-f", self.write("t.json", json.dumps(doc)), "--nonce", nonce)
        self.assert_accepted(rc, out, err, "cl01", "cl01")
        self.assertNotIn("NameMismatch", err)
        doc["metadata"]["name"] = "cl01-copy"
        rc, out, err = run("check", "-f", self.write("t.json", json.dumps(doc)), "--nonce", nonce)
        self.assert_accepted(rc, out, err, "cl01-copy", "cl01")
        self.assertIn('Warning: metadata.name is "cl01-copy", expected spec.clusterID; the webhook '
                      "will refuse it (NameMismatch)", err)
        del doc["metadata"]["name"]
        rc, out, err = run("check", "-f", self.write("t.json", json.dumps(doc)), "--nonce", nonce)
        self.assert_accepted(rc, out, err, "(unnamed)", "cl01")
        self.assertIn("Warning: metadata.name is missing", err)


class OfflineFlow(Base):
    """keygen -> nonce -> generate tenant --offline -> check, per key type."""

    def make(self, key_type, cluster="cl-consumer-1", output="json", extra=("--public-key-format", "pem")):
        keydir = os.path.join(self.tmp, key_type)
        rc, out, err = run("keygen", "--key-type", key_type, "--out", keydir)
        self.assertEqual(rc, 0, err)
        rc, nonce, err = run("nonce")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(nonce), 89)
        self.assertTrue(nonce.endswith("\n"))
        nonce = nonce.strip()
        self.assertEqual(len(base64.b64decode(nonce, validate=True)), 64)
        key = os.path.join(keydir, "privateKey.pem")
        rc, out, err = run("generate", "tenant", "--offline", "--key", key, "--cluster-id",
                           cluster, "--nonce", nonce, "-o", output, *extra)
        self.assertEqual(rc, 0, err)
        return keydir, key, nonce, out

    def test_public_key_format(self):
        """Ed25519: raw 32 bytes by default (what Liqo 1.0.0/1.0.1 providers read), PEM on
        request; RSA and ECDSA: PEM whatever is asked. Every form passes the check."""
        for key_type in KEY_TYPES:
            keydir, key, nonce, _ = self.make(key_type, "cl-fmt")
            for extra, want_raw in (((), key_type == "ed25519"),
                                    (("--public-key-format", "raw"), key_type == "ed25519"),
                                    (("--public-key-format", "pem"), False)):
                with self.subTest(key_type=key_type, flags=extra):
                    rc, out, err = run("generate", "tenant", "--offline", "--key", key,
                                       "--cluster-id", "cl-fmt", "--nonce", nonce, "-o", "json",
                                       *extra)
                    self.assertEqual(rc, 0, err)
                    tenant = json.loads(out)
                    sent = base64.b64decode(tenant["spec"]["publicKey"])
                    with open(os.path.join(keydir, "publicKey.pem")) as f:
                        pem = f.read()
                    if want_raw:
                        self.assertEqual(len(sent), 32)
                        # the raw key is the last 32 bytes of the PKIX DER
                        self.assertEqual(sent, pem_body(pem)[1][-32:])
                    else:
                        self.assertEqual(sent.decode(), pem, "publicKey must be the PEM text")
                    rc, out2, err = self.check(tenant, nonce)
                    self.assertEqual(rc, 0, err)
        for bad in ("PEM", "der", ""):
            with self.subTest(bad=bad):
                rc, out, err = run("generate", "tenant", "--offline", "--key", key, "--cluster-id",
                                   "cl-fmt", "--nonce", nonce, "--public-key-format", bad)
                self.assert_usage_error(rc, out, err)
                self.assertIn("--public-key-format: expected raw or pem", err)

    def check(self, tenant, nonce):
        return run("check", "-f", self.write("tenant.json", json.dumps(tenant)), "--nonce", nonce)

    def test_keygen_files(self):
        for key_type in KEY_TYPES:
            with self.subTest(key_type=key_type):
                keydir = os.path.join(self.tmp, "k-" + key_type)
                rc, out, err = run("keygen", "--key-type", key_type, "--out", keydir, umask=0)
                self.assertEqual(rc, 0, err)
                priv = os.path.join(keydir, "privateKey.pem")
                pub = os.path.join(keydir, "publicKey.pem")
                self.assertEqual(stat.S_IMODE(os.stat(priv).st_mode), 0o600)
                with open(priv) as f:
                    priv_text = f.read()
                with open(pub) as f:
                    pub_text = f.read()
                self.assertTrue(priv_text.startswith("-----BEGIN PRIVATE KEY-----\n"))
                self.assertTrue(pub_text.startswith("-----BEGIN PUBLIC KEY-----\n"))
                self.assertIn(f"({key_type})", out)
                text = subprocess.run(["openssl", "pkey", "-pubin", "-in", pub, "-noout", "-text"],
                                      capture_output=True, text=True, check=True).stdout
                self.assertIn(KEY_TYPE_TEXT[key_type], text)
                # refuses to overwrite, leaving the pair as it was
                rc, out, err = run("keygen", "--key-type", key_type, "--out", keydir)
                self.assert_usage_error(rc, out, err)
                self.assertIn("--force", err)
                with open(priv) as f:
                    self.assertEqual(f.read(), priv_text)
                # --force replaces both, private key still 0600
                os.chmod(priv, 0o644)
                rc, out, err = run("keygen", "--key-type", key_type, "--out", keydir, "--force")
                self.assertEqual(rc, 0, err)
                with open(priv) as f:
                    self.assertNotEqual(f.read(), priv_text)
                self.assertEqual(stat.S_IMODE(os.stat(priv).st_mode), 0o600)

    def test_flow_and_tampering(self):
        # Changes to the last byte of the public key's DER, which is key
        # material: (xor mask, expected reason). An Ed25519 key is any 32 bytes,
        # so it parses and the signature fails. The last byte of an RSA SPKI is
        # the low byte of e = 65537: ^0x01 makes e even, which a key check
        # refuses; ^0x02 makes e = 65539, a valid key that did not sign. An EC
        # point with a changed y is off the curve and does not parse.
        last_key_byte = {
            "ed25519": [(0x01, "SignatureVerificationFailed")],
            "rsa2048": [(0x01, "InvalidPublicKey"), (0x02, "SignatureVerificationFailed")],
            "ecdsa-p256": [(0x01, "InvalidPublicKey")],
        }
        for key_type in KEY_TYPES:
            with self.subTest(key_type=key_type):
                cluster = "cl-" + key_type
                keydir, key, nonce, out = self.make(key_type, cluster)
                tenant = json.loads(out)
                self.assertEqual(tenant["metadata"]["name"], cluster)
                self.assertEqual(tenant["metadata"]["namespace"], "liqo-tenant-" + cluster)
                self.assertEqual(tenant["metadata"]["labels"]["liqo.io/remote-cluster-id"], cluster)
                with open(os.path.join(keydir, "publicKey.pem")) as f:
                    self.assertEqual(base64.b64decode(tenant["spec"]["publicKey"]).decode(),
                                     f.read(), "publicKey must be the PEM text")
                self.assert_accepted(*self.check(tenant, nonce), cluster, cluster)

                # sign-nonce gives a signature that verifies in the Tenant
                rc, sig, err = run("sign-nonce", "--key", key, "--nonce", nonce)
                self.assertEqual(rc, 0, err)
                resigned = json.loads(json.dumps(tenant))
                resigned["spec"]["signature"] = sig.strip()
                self.assert_accepted(*self.check(resigned, nonce), cluster, cluster)
                if key_type == "ed25519":      # deterministic signatures
                    self.assertEqual(sig.strip(), tenant["spec"]["signature"])

                # the signature, one byte flipped
                bad = json.loads(json.dumps(tenant))
                raw = bytearray(base64.b64decode(bad["spec"]["signature"]))
                raw[len(raw) // 2] ^= 0x01
                bad["spec"]["signature"] = base64.b64encode(bytes(raw)).decode()
                self.assert_rejected(*self.check(bad, nonce), "SignatureVerificationFailed")

                # another nonce
                rc, other, _ = run("nonce")
                self.assert_rejected(*self.check(tenant, other.strip()),
                                     "SignatureVerificationFailed")

                # the CSR: a byte of its signature, and a byte of the CN in the
                # subject - the self-signature check (step 7) must catch both
                # before the subject comparison (step 9) would
                _, der, _ = pem_body(base64.b64decode(tenant["spec"]["csr"]).decode())
                cn_at = der.find(cluster.encode())
                self.assertGreater(cn_at, 0)
                for where in (-1, cn_at + 1):
                    with self.subTest(csr_byte=where):
                        self.assert_rejected(*self.check(
                            flip_der_in_pem_field(tenant, "csr", where), nonce), "InvalidCSR")

                # the public key: in the algorithm OID (byte 8 lies inside the
                # AlgorithmIdentifier for all three), and in the key itself
                self.assert_rejected(*self.check(
                    flip_der_in_pem_field(tenant, "publicKey", 8), nonce), "InvalidPublicKey")
                for mask, reason in last_key_byte[key_type]:
                    with self.subTest(public_key_mask=mask):
                        self.assert_rejected(*self.check(
                            flip_der_in_pem_field(tenant, "publicKey", -1, mask), nonce), reason)

                # a CSR for another cluster, validly signed with the same key
                rc, out2, err = run("generate", "tenant", "--offline", "--key", key,
                                    "--cluster-id", "someone-else", "--nonce", nonce, "-o", "json")
                self.assertEqual(rc, 0, err)
                swapped = json.loads(json.dumps(tenant))
                swapped["spec"]["csr"] = json.loads(out2)["spec"]["csr"]
                self.assert_rejected(*self.check(swapped, nonce), "CSRSubjectMismatch")

    def test_yaml_output_checks(self):
        _, key, nonce, out = self.make("ed25519", "cl-yaml", output="yaml", extra=())
        self.assertTrue(out.startswith("apiVersion: authentication.liqo.io/v1beta1\nkind: Tenant\n"))
        self.assertNotIn("{", out)
        nonce_file = self.write("nonce", nonce + "\n")
        self.assert_accepted(*run("check", "-f", self.write("t.yaml", out),
                                  "--nonce-file", nonce_file), "cl-yaml", "cl-yaml")
        self.assert_accepted(*run("check", "-f", "-", "--nonce-file", nonce_file,
                                  stdin=out.encode()), "cl-yaml", "cl-yaml")
        rc, default_out, _ = run("generate", "tenant", "--offline", "--key", key,
                                 "--cluster-id", "cl-yaml", "--nonce", nonce)
        self.assertEqual(default_out, out, "YAML is the default output")
        # Ed25519 signatures are deterministic: -o json holds the same Tenant,
        # and an independent YAML reader sees exactly that in the YAML output.
        rc, json_out, _ = run("generate", "tenant", "--offline", "--key", key,
                              "--cluster-id", "cl-yaml", "--nonce", nonce, "-o", "json")
        self.assertEqual(rc, 0)
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML not installed")
        self.assertEqual(yaml.safe_load(out), json.loads(json_out))

    def test_pyyaml_dumped_tenant(self):
        """A Tenant as another YAML writer formats it (flow style, quoting)."""
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML not installed")
        _, _, nonce, out = self.make("ecdsa-p256", "cl-py")
        tenant = json.loads(out)
        for style in (False, None):
            with self.subTest(default_flow_style=style):
                text = yaml.safe_dump(tenant, default_flow_style=style, width=60)
                self.assert_accepted(*run("check", "-f", "-", "--nonce", nonce,
                                          stdin=text.encode()), "cl-py", "cl-py")
        # A document starting with '{' is read as JSON, as kubectl's decoder
        # does: a YAML flow mapping with bare words is refused, with the offset.
        text = yaml.safe_dump(tenant, default_flow_style=True)
        rc, out, err = run("check", "-f", "-", "--nonce", nonce, stdin=text.encode())
        self.assert_rejected(rc, out, err, "MalformedTenant")
        self.assertIn("byte offset 1", err)


class Usage(Base):
    HELP = [
        [], ["keygen"], ["nonce"], ["sign-nonce"], ["generate"], ["generate", "tenant"],
        ["check"], ["preflight"], ["revoke"],
    ]

    def test_help(self):
        for cmd in self.HELP:
            for flag in ("--help", "-h"):
                with self.subTest(cmd=cmd, flag=flag):
                    rc, out, err = run(*cmd, flag)
                    self.assertEqual((rc, err), (0, ""))
                    self.assertIn("Usage: kubectl-tenantgate", out)
        rc, out, err = run("--version")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"^kubectl-tenantgate \d+\.\d+\.\d+\n$")

    def test_usage_errors(self):
        nonce = "A" * 86 + "=="
        key = os.path.join(self.tmp, "k", "privateKey.pem")
        self.assertEqual(run("keygen", "--out", os.path.join(self.tmp, "k"))[0], 0)
        cases = [
            [],
            ["bogus"],
            ["--bogus"],
            ["keygen"],
            ["keygen", "--out", self.tmp, "--key-type", "dsa"],
            # one spelling: keygen's old --type and its old values are gone
            ["keygen", "--out", self.tmp, "--key-type", "rsa"],
            ["keygen", "--out", self.tmp, "--key-type", "ecdsa"],
            ["keygen", "--out", self.tmp, "--type", "rsa2048"],
            ["keygen", "--out"],
            ["nonce", "extra"],
            ["nonce", "--bogus"],
            ["sign-nonce", "--nonce", nonce],
            ["sign-nonce", "--key", key],
            ["sign-nonce", "--key", key, "--nonce", "short"],
            ["sign-nonce", "--key", os.path.join(self.tmp, "missing.pem"), "--nonce", nonce],
            ["sign-nonce", "--key", self.write("notakey.pem", "hello\n"), "--nonce", nonce],
            ["generate"],
            ["generate", "identity"],
            ["generate", "tenant", "--key", key, "--cluster-id", "c", "--nonce", nonce],
            ["generate", "tenant", "--offline", "--key", key, "--cluster-id", "Bad_ID",
             "--nonce", nonce],
            ["generate", "tenant", "--offline", "--key", key, "--cluster-id", "c",
             "--nonce", nonce, "-o", "xml"],
            ["generate", "tenant", "--offline", "--cluster-id", "c", "--nonce", nonce],
            ["check"],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json")],
            ["check", "-f", os.path.join(self.tmp, "missing.yaml"), "--nonce", nonce],
            ["check", "-f", self.tmp, "--nonce", nonce],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json"), "--nonce", nonce,
             "--nonce-file", os.path.join(VECTORS, "seed-cl01-pemkey.nonce")],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json"),
             "--nonce-file", os.path.join(self.tmp, "missing.nonce")],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json"), "--nonce", "x"],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json"), "--nonce", nonce,
             "--unknown-flag"],
            ["check", "-f", os.path.join(VECTORS, "seed-cl01-pemkey.json"), "--nonce", nonce,
             "extra-arg"],
            # resourceslice: refused before any cluster is contacted
            ["create", "resourceslice", "--remote-cluster-id", "p"],
            ["create", "resourceslice", "s"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "Bad_ID"],
            ["create", "resourceslice", "Bad_Name", "--remote-cluster-id", "p"],
            ["create", "resourceslice", "s", "t", "--remote-cluster-id", "p"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--cpu", "four"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--resource", "gpu"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--resource", "gpu=x"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--cpu", "1",
             "--resource", "cpu=2"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "-o", "xml"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--wait"],
            ["create", "resourceslice", "s", "--remote-cluster-id", "p", "--timeout", "soon"],
            ["create", "pod", "s"],
            ["get", "resourceslice", "--remote-cluster-id", "p", "-o", "json"],
            ["get", "rslice", "s", "--remote-cluster-id", "p", "--cpu", "1"],
            ["delete"],
            ["delete", "nonce", "--remote-cluster-id", "p"],
            ["delete", "resourceslice", "--remote-cluster-id", "p"],
            ["delete", "rs", "s", "--remote-cluster-id", "p", "--resource", "a=1"],
            # unauthenticate: the plain form needs the provider; the force forms an id
            ["unauthenticate"],
            ["unauthenticate", "--force"],
            ["unauthenticate", "--provider-side"],
            ["unauthenticate", "--force", "--provider-side", "--remote-cluster-id", "p"],
            ["unauthenticate", "--force", "--remote-cluster-id", "Bad_ID"],
            ["get", "nonce", "--remote-cluster-id", "p", "--force"],
            # preflight: one way to the provider, known key types and durations
            ["preflight"],
            ["preflight", "--provider-kubeconfig", "p", "--token-line", "l"],
            ["preflight", "--token-line", "kubectl tenantgate authenticate --auth-url https://a"],
            ["preflight", "--provider-kubeconfig", "p", "--key-type", "rsa"],
            ["preflight", "--provider-kubeconfig", "p", "--max-skew", "soon"],
            ["preflight", "--provider-kubeconfig", "p", "--remote-cluster-id", "Bad_ID"],
            ["preflight", "--provider-kubeconfig", "p", "extra"],
            # --key-type: refused before any cluster is contacted, in every flow that takes it
            ["authenticate", "--remote-kubeconfig", "x", "--key-type", "rsa"],
            ["authenticate", "--auth-url", "https://127.0.0.1:9", "--token", "a.b", "--key-type", "ecdsa"],
            ["generate", "tenant", "--remote-cluster-id", "p", "--nonce", nonce, "--key-type", "RSA2048"],
            ["create", "nonce", "--remote-cluster-id", "p", "--key-type", "rsa2048"],
            ["create", "nonce", "--remote-cluster-id", "p", "--revocable"],
            # revoke: the certificate is read before any cluster is contacted
            ["revoke"],
            ["revoke", "--certificate", os.path.join(self.tmp, "missing.pem")],
            ["revoke", "--certificate", self.write("notacert.txt", "hello\n")],
            ["revoke", "--certificate", key, "--timeout", "soon"],
            ["revoke", "--certificate", key, "extra"],
        ]
        for args in cases:
            with self.subTest(args=args):
                rc, out, err = run(*args)
                self.assert_usage_error(rc, out, err)
                self.assertEqual(out, "", "errors go to stderr only")
        rc, out, err = run("authenticate", "--remote-kubeconfig", "x", "--key-type", "rsa")
        self.assertIn('--key-type: expected ed25519, rsa2048 or ecdsa-p256, found "rsa"', err)
        rc, out, err = run("create", "nonce", "--remote-cluster-id", "p", "--key-type", "rsa2048")
        self.assertIn("does not apply here", err)
        rc, out, err = run("check", "--unknown-flag")
        self.assertIn("--unknown-flag", err)
        self.assertIn("Usage: kubectl-tenantgate check", err)

    def test_revoke_refuses_a_certificate_without_group(self):
        # a certificate of Liqo's form (O=liqo.io only) is refused, saying why, before any cluster
        d = os.path.join(self.tmp, "plain")
        os.makedirs(d, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout",
                        os.path.join(d, "k.pem"), "-out", os.path.join(d, "c.pem"), "-subj",
                        "/O=liqo.io/CN=cl01", "-days", "1"], check=True, capture_output=True)
        rc, out, err = run("revoke", "--certificate", os.path.join(d, "c.pem"), "--kubeconfig",
                           os.path.join(self.tmp, "missing.kubeconfig"))
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("carries no per-certificate group", err)
        self.assertIn("its user cl01", err)

    def test_preflight_unreachable(self):
        # nothing listens on port 1: the first check says so, exit 3, no other check runs
        kc = self.write("kc.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                        "users: [{name: u, user: {token: t}}]\n"
                        "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
        rc, out, err = run("preflight", "--kubeconfig", kc, "--provider-kubeconfig", kc)
        self.assertEqual(rc, 3, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("FAIL api-consumer: no answer from https://127.0.0.1:1"), out)
        self.assertEqual(lines[1:], ["verdict: not ready (unreachable)"])

    def tls_server(self, client_sigalgs):
        """openssl s_server on 127.0.0.1 that asks for an optional client certificate signed with
        one of client_sigalgs only; a kubeconfig that trusts it."""
        self.assertEqual(subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", os.path.join(self.tmp, "k.pem"), "-out", os.path.join(self.tmp, "c.pem"), "-days", "1",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            capture_output=True).returncode, 0)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        srv = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-www", "-quiet",
                                "-cert", os.path.join(self.tmp, "c.pem"), "-key", os.path.join(self.tmp, "k.pem"),
                                "-verify", "1", "-client_sigalgs", client_sigalgs],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(srv.wait)
        self.addCleanup(srv.kill)
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        return self.write("tls.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                          f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{port}', "
                          f"certificate-authority: {self.tmp}/c.pem}}}}]\n"
                          "users: [{name: u, user: {token: t}}]\n"
                          "contexts: [{name: c, context: {cluster: c, user: u}}]\n")

    def preflight_key_type(self, kc, key_type):
        rc, out, err = run("preflight", "--kubeconfig", kc, "--provider-kubeconfig", kc, "--key-type", key_type,
                           "--cluster-id", "a", "--remote-cluster-id", "b", "--timeout", "1s")
        lines = [x for x in out.splitlines() if x.startswith(("PASS key-type", "WARN key-type", "FAIL key-type"))]
        self.assertEqual(len(lines), 1, out + err)
        return rc, lines[0]

    def test_preflight_key_type_the_server_cannot_take(self):
        # its CertificateRequest names RSA-PSS only: an Ed25519 certificate cannot answer it
        kc = self.tls_server("rsa_pss_rsae_sha256")
        rc, line = self.preflight_key_type(kc, "ed25519")
        self.assertEqual(rc, 1)
        self.assertEqual(line, "FAIL key-type: the provider's API server asks for no signature algorithm an "
                               "ed25519 client certificate can use (answered 200 without one)")

    def test_preflight_key_type_taken_but_not_answered_as_kube_apiserver(self):
        # the certificate is signed for and sent; a server that is no kube-apiserver answers 200, not 401
        kc = self.tls_server("ed25519:ecdsa_secp256r1_sha256")
        for key_type in ("ed25519", "ecdsa-p256"):
            rc, line = self.preflight_key_type(kc, key_type)
            self.assertEqual(line, f"WARN key-type: the provider's API server took an {key_type} client "
                                   "certificate but answered 200, expected 401 for its unknown CA")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_cli.py BINARY VECTORS_DIR")
    BINARY = os.path.abspath(sys.argv[1])
    VECTORS = sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:])
