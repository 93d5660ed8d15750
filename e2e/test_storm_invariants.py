"""The fault storm's invariant checks (storm_invariants.py) on made-up objects: each passes on
a sound state and fails on the fault it is there to catch.  No cluster; in the default run."""

import base64
import json

import pytest

from bed import openssl
from storm_invariants import (ED25519_SPKI, check_accepted, check_admission, check_one_approval,
                              check_orphans, report)

CID = "storm-c0000"
NS = f"liqo-tenant-{CID}"


def b64(data):
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Two Ed25519 keys; a CSR and a self-signed certificate for each."""
    d = tmp_path_factory.mktemp("storm-pki")
    out = {}
    for who in ("a", "b"):
        key = d / f"{who}.key"
        openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
        der = openssl("pkey", "-in", str(key), "-pubout", "-outform", "DER")
        out[who] = {"raw": der[len(ED25519_SPKI):],
                    "csr": openssl("req", "-new", "-key", str(key), "-subj", f"/CN={who}"),
                    "crt": openssl("req", "-x509", "-key", str(key), "-subj", f"/CN={who}", "-days", "1")}
    return out


def tenant(pki, key="a", crt="a", uid="u-t"):
    return {"metadata": {"name": CID, "namespace": NS, "uid": uid},
            "spec": {"publicKey": b64(pki[key]["raw"])},
            "status": {"authParams": {"signedCRT": b64(pki[crt]["crt"])}}}


def rslice(pki, csr="a", crt="a", auth="Accepted", uid="u-s"):
    return {"metadata": {"name": "slice-00", "namespace": NS, "uid": uid},
            "spec": {"csr": b64(pki[csr]["csr"])},
            "status": {"authParams": {"signedCRT": b64(pki[crt]["crt"])},
                       "conditions": [{"type": "Authentication", "status": auth},
                                      {"type": "Resources", "status": "Accepted"}]}}


def csr(pki, name, obj, key="a", state="Approved"):
    meta = {"name": name, "labels": {"liqo.io/remote-tenant-csr": "true",
                                     "liqo.io/remote-cluster-id": CID}}
    if obj == "slice":
        meta["annotations"] = {"tenantgate.io/resourceslice": f"{NS}/slice-00"}
    return {"metadata": meta, "spec": {"request": b64(pki[key]["csr"])},
            "status": {"conditions": [{"type": state}] if state else []}}


def test_accepted_with_own_key(pki):
    assert check_accepted([tenant(pki)], [rslice(pki)], [CID], 1)[0] == []
    assert "another key" in check_accepted([tenant(pki, crt="b")], [rslice(pki)], [CID], 1)[0][0]
    assert "another key" in check_accepted([tenant(pki)], [rslice(pki, crt="b")], [CID], 1)[0][0]
    assert "not accepted" in check_accepted([tenant(pki)], [rslice(pki, auth="Denied")], [CID], 1)[0][0]
    assert "not filled" in check_accepted([], [rslice(pki)], [CID], 1)[0][0]


def test_one_approved_csr_per_object_and_key(pki):
    sound = [csr(pki, "t1", "tenant"), csr(pki, "s1", "slice"), csr(pki, "t0", "tenant", state="Denied")]
    assert check_one_approval(sound, [CID], 1)[0] == []
    bad, _ = check_one_approval(sound + [csr(pki, "t2", "tenant")], [CID], 1)
    assert bad == [f"('tenant', '{CID}'): 2 approved CSRs for one key"]
    bad, _ = check_one_approval(sound + [csr(pki, "s2", "slice", key="b")], [CID], 1)
    assert bad == [f"('slice', '{NS}/slice-00'): approved CSRs for 2 keys"]
    assert "no approved CSR" in check_one_approval(sound[:1], [CID], 1)[0][0]


def test_every_stored_object_has_its_accept_line(pki, tmp_path):
    def line(path, name, uid, verdict="allowed", dry_run=False):
        return json.dumps({"msg": "admission", "path": path, "namespace": NS, "tenant": name,
                           "object_uid": uid, "verdict": verdict, "dry_run": dry_run})
    log = tmp_path / "tenantgate-webhook-1.log"
    log.write_text("\n".join(["not json", line("/validate/tenants", CID, "u-t"),
                              line("/validate/resourceslices", "slice-00", "u-s")]) + "\n")
    assert check_admission([tenant(pki)], [rslice(pki)], [log])[0] == []
    # a recreated object (another uid) with no line of its own; a denied or dry-run line is none
    assert "no accept line" in check_admission([tenant(pki, uid="u-t2")], [], [log])[0][0]
    log.write_text(line("/validate/tenants", CID, "u-t", verdict="denied") + "\n" +
                   line("/validate/tenants", CID, "u-t", dry_run=True) + "\n")
    assert len(check_admission([tenant(pki)], [], [log])[0]) == 1


def test_orphans_after_deletion(pki):
    nonce = {"metadata": {"namespace": NS, "name": "liqo-nonce"}}
    assert check_orphans([nonce], [], [], [csr(pki, "t1", "tenant")], [CID])[0] == []
    bad, _ = check_orphans(
        [nonce, {"metadata": {"namespace": NS, "name": "liqo-remote-certificate-slice-00"}}],
        [{"metadata": {"namespace": NS, "name": "tenantgate-rslice-slice-00"}}],
        [{"metadata": {"name": "x"}, "subjects": [{"kind": "Group", "name": CID}]}],
        [csr(pki, "t9", "tenant", state=None)], [CID])
    assert [b.split()[0] for b in bad] == ["Secret", "RoleBinding", "ClusterRoleBinding", "CSR"]


def test_report_prints_one_line_each(capsys):
    assert report("x", ([], "2 objects")) is True
    assert report("y", (["a", "b"], "")) is False
    assert capsys.readouterr().out.splitlines() == ["invariant: x ok (2 objects)",
                                                   "invariant: y FAILED (2: a; b)"]
