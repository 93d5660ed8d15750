"""Where the pinned Liqo releases are: versions, module sources, built binaries.

The pins are e2e/liqo/go.mod and e2e/liqo/go-<version>.mod (see e2e/liqo-bin).  CRD_ONLY_VERSIONS
are releases whose CRDs are compared too, without building anything from them."""

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

E2E_DIR = Path(__file__).resolve().parent
LIQO_MOD_DIR = E2E_DIR / "liqo"
LIQO_MODULE = "github.com/liqotech/liqo"
CRD_ONLY_VERSIONS = ("v1.0.0", "v1.0.3", "v1.1.0", "v1.1.2")


def pinned_versions():
    """Liqo versions pinned by the mod files, newest (go.mod) first."""
    out = []
    for mod in [LIQO_MOD_DIR / "go.mod", *sorted(LIQO_MOD_DIR.glob("go-*.mod"))]:
        m = re.search(r"^\s*(?:require\s+)?" + re.escape(LIQO_MODULE) + r"\s+(v\S+)",
                      mod.read_text(), re.M)
        if not m:
            raise RuntimeError(f"{mod}: no {LIQO_MODULE} requirement")
        out.append(m.group(1))
    return out


def module_dir(version):
    """The extracted module of Liqo `version` in the Go module cache (downloaded through the
    module proxy if missing, checked against the checksum database).  Run outside our module
    so nothing in the repository changes."""
    go = "go" if subprocess.run(["sh", "-c", "command -v go"], capture_output=True).returncode == 0 \
        else "/usr/local/go/bin/go"
    env = {**os.environ, "GOFLAGS": "", "GO111MODULE": "on"}
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([go, "mod", "download", "-json", f"{LIQO_MODULE}@{version}"],
                           cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"go mod download {LIQO_MODULE}@{version}: {p.stdout}{p.stderr}")
    return Path(json.loads(p.stdout)["Dir"])


def liqo_crd_file(version, plural):
    return (module_dir(version) / "deployments" / "liqo" / "charts" / "liqo-crds" / "crds" /
            f"authentication.liqo.io_{plural}.yaml")


def liqo_bin():
    """Directory from e2e/liqo-bin (builds on first use): <dir>/<version>/{liqoctl,liqocheck}."""
    p = subprocess.run([str(E2E_DIR / "liqo-bin")], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"e2e/liqo-bin failed:\n{p.stderr[-3000:]}")
    return Path(p.stdout.strip())
