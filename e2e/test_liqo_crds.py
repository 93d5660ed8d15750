"""Our Tenant and Identity CRDs against Liqo's, field by field, for every Liqo release we pin
(e2e/liqo/go*.mod) and a few more (liqo_modules.CRD_ONLY_VERSIONS).

Liqo's CRDs are read from Liqo's published Go module (deployments/liqo/charts/liqo-crds/crds/ in
the module zip, fetched with `go mod download`), never from a copy in this repository.  No
cluster is needed.

The rule: every node of Liqo's schema exists in ours with the same keywords and values (type,
format, default, enum, pattern, required, x-kubernetes-*, validation rules).  Descriptions and
validation messages are prose and may differ.  Ours may add fields only where listed in
OUR_EXTRA_FIELDS, each with the reason a Liqo controller writing the object keeps it."""

import pytest
import yaml

from liqo_modules import CRD_ONLY_VERSIONS, liqo_crd_file, pinned_versions

PROSE = {"description"}
PLURALS = ("tenants", "identities")
# Fields our CRDs have beyond Liqo's.  (A Liqo controller reads an object into its Go type and
# writes the whole status back, so any status field Liqo's type lacks is dropped by it.)
# identities status.conditions: RenewalOverdue, written by tenantgate-signer's consumer only;
# Liqo's readers ignore it, and if a Liqo controller's write drops it, the signer's next
# reconcile of the Identity sets it again (docs/signer.md, renewal).
OUR_EXTRA_FIELDS = {"tenants": set(), "identities": {"status.conditions"}}


def versions():
    return [*pinned_versions(), *CRD_ONLY_VERSIONS]


def load(path):
    return yaml.safe_load(path.read_text())


def ours(source_dir, plural):
    return load(source_dir / "manifests" / "crds" / f"authentication.liqo.io_{plural}.yaml")


def compare_schema(mine, liqo, path, problems, extras):
    """Append to problems every way `mine` differs from `liqo` at `path`; extra properties of
    ours go to extras (checked against OUR_EXTRA_FIELDS by the caller)."""
    for key, want in liqo.items():
        if key in PROSE:
            continue
        got = mine.get(key)
        if key == "properties":
            got = got or {}
            for name, sub in want.items():
                if name not in got:
                    problems.append(f"{path}.{name}: missing (Liqo has {sub.get('type')})")
                else:
                    compare_schema(got[name], sub, f"{path}.{name}", problems, extras)
            extras.extend(f"{path}.{name}" for name in got if name not in want)
        elif key == "items":
            compare_schema(got or {}, want, f"{path}[]", problems, extras)
        elif key == "required":
            if set(got or ()) != set(want):
                problems.append(f"{path}: required {sorted(got or ())}, Liqo {sorted(want)}")
        elif key == "x-kubernetes-validations":
            rules = lambda rs: sorted(r["rule"] for r in rs or ())  # noqa: E731
            if rules(got) != rules(want):
                problems.append(f"{path}: validation rules {rules(got)}, Liqo {rules(want)}")
        elif got != want:
            problems.append(f"{path}: {key} is {got!r}, Liqo has {want!r}")
    for key in mine:
        if key not in liqo and key not in PROSE and key != "properties":
            problems.append(f"{path}: {key}={mine[key]!r} is not in Liqo's schema")
    if "properties" in mine and "properties" not in liqo:
        extras.extend(f"{path}.{name}" for name in mine["properties"])


def compare_crd(mine, liqo):
    """(problems, extra field paths) between two CRD documents."""
    problems, extras = [], []
    ms, ls = mine["spec"], liqo["spec"]
    for key in ("group", "scope"):
        if ms.get(key) != ls.get(key):
            problems.append(f"spec.{key}: {ms.get(key)!r}, Liqo {ls.get(key)!r}")
    for key, want in ls["names"].items():
        got = ms["names"].get(key)
        if (sorted(got or ()) if isinstance(want, list) else got) != \
                (sorted(want) if isinstance(want, list) else want):
            problems.append(f"spec.names.{key}: {got!r}, Liqo {want!r}")
    mv = {v["name"]: v for v in ms["versions"]}
    for lv in ls["versions"]:
        v = mv.get(lv["name"])
        if v is None:
            problems.append(f"version {lv['name']}: missing")
            continue
        for key in ("served", "storage", "subresources"):
            if v.get(key) != lv.get(key):
                problems.append(f"{lv['name']}.{key}: {v.get(key)!r}, Liqo {lv.get(key)!r}")
        cols = lambda vv: [{k: c[k] for k in sorted(c) if k not in PROSE}  # noqa: E731
                           for c in vv.get("additionalPrinterColumns") or ()]
        if cols(v) != cols(lv):
            problems.append(f"{lv['name']}: printer columns {cols(v)}, Liqo {cols(lv)}")
        compare_schema(v["schema"]["openAPIV3Schema"], lv["schema"]["openAPIV3Schema"],
                       lv["name"], problems, extras)
    return problems, extras


@pytest.mark.parametrize("version", versions())
@pytest.mark.parametrize("plural", PLURALS)
def test_our_crd_is_liqos_schema(source_dir, plural, version):
    liqo = load(liqo_crd_file(version, plural))
    problems, extras = compare_crd(ours(source_dir, plural), liqo)
    unexplained = [e for e in extras if e.split(".", 1)[1] not in OUR_EXTRA_FIELDS[plural]]
    assert not problems and not unexplained, (
        f"{plural} vs Liqo {version}:\n  " + "\n  ".join(problems + [
            f"{e}: ours only, not in OUR_EXTRA_FIELDS" for e in unexplained]))


def test_the_comparison_can_fail(source_dir):
    """The comparison sees a dropped Liqo field, a changed default, an extra validation and an
    extra field (so a green run means something)."""
    liqo = load(liqo_crd_file(pinned_versions()[0], "tenants"))
    mine = ours(source_dir, "tenants")
    schema = mine["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    del schema["status"]["properties"]["authParams"]["properties"]["awsConfig"]
    schema["spec"]["properties"]["tenantCondition"]["default"] = "Cordoned"
    schema["spec"]["properties"]["clusterID"]["maxLength"] = 63
    schema["status"]["properties"]["extra"] = {"type": "string"}
    problems, extras = compare_crd(mine, liqo)
    text = "\n".join(problems)
    assert "status.authParams.awsConfig: missing" in text, text
    assert "tenantCondition: default is 'Cordoned', Liqo has 'Active'" in text, text
    assert "clusterID: maxLength=63 is not in Liqo's schema" in text, text
    assert "v1beta1.status.extra" in extras, extras
