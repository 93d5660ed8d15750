"""The demo (e2e/demo up, behind `make demo`): every command it prints works as printed.

The demo prints commands for a person to paste: each one it runs itself (after "$ "), then the
blocks that use the webhook and the demo from a shell and the manual flow.  The test takes
them from its output, runs each in that order under bash from a folder laid out as the
repository (demo/env sourced, the pinned kubectl first on PATH as `kubectl`), and asserts
that it succeeds (or, printed as refused, is denied with its reason code) and that a `get`
shows the object it names.
That last part is why the test exists: Kubernetes 1.34+ serves resource.k8s.io's
`resourceslices` (DRA), which kubectl prefers to ours, so `kubectl get resourceslices` printed
"No resources found" while the demo's slice existed.

The demo runs its own clusters (demo-provider, demo-consumer) in $TG_E2E_STATE, not the
session's, and its webhook and signers on free ports (another demo may hold the defaults); it
is torn down (e2e/demo down) after the module."""

import os
import subprocess

import pytest

from bed import free_port

PROVIDER_ID, CONSUMER_ID, SLICE = "demo-provider", "demo-consumer", "mypool"
# Where a block of commands to paste starts; a blank line ends it.
BLOCKS = ("The webhook is running on the provider", "Use it from a shell:",
          "To run the same authentication step by step")
# Templates in those blocks, for the reader to fill in: not run.
TEMPLATES = ("TENANT.json", "NONCE")


def must_show(cmd):
    """What cmd must print on stdout: the objects it gets, who it is."""
    if "auth whoami" in cmd:
        if "SLICE_KUBECONFIG" in cmd:     # the slice's user <name>-<12 hex>, group <consumer id>
            return [f"{SLICE}-", CONSUMER_ID]
        return [CONSUMER_ID]
    if f"get tenant {CONSUMER_ID}" in cmd:
        return [f"name: {CONSUMER_ID}", "authParams"]
    if "get tenants,identities" in cmd or "get identities" in cmd:
        return [f"controlplane-{PROVIDER_ID}"]
    if "get rslice" in cmd or "get resourceslices" in cmd:
        return [SLICE]
    return []


def printed_commands(out):
    """The commands in the demo's output, in order: "$ CMD" lines, and the indented
    commands of the BLOCKS (a trailing backslash continues one); TEMPLATES left out."""
    cmds, pending, in_block = [], None, False
    for line in out.splitlines():
        if pending is not None:
            pending += "\n" + line
            if not line.endswith("\\"):
                cmds.append(pending)
                pending = None
        elif line.startswith("$ "):
            cmds.append(line[2:])
        elif line.startswith(BLOCKS):
            in_block = True
        elif not line.strip():
            in_block = False
        elif in_block and line.startswith("  ") and line.lstrip().startswith(("$KUBECTL", "kubectl", ". ", "curl ")):
            if line.endswith("\\"):
                pending = line.strip()
            else:
                cmds.append(line.strip())
    return [c for c in cmds if not any(t in c for t in TEMPLATES)]


def test_printed_commands_parser():
    out = ("$ kubectl tenantgate install --cluster-id x\nok\n  kubectl output, not a block\n"
           "The webhook is running on the provider (pid 1).\n  curl -s http://x/metrics\n"
           "  kubectl-tenantgate check -f TENANT.json --nonce NONCE\n\n  kubectl after the block\n"
           "Use it from a shell:\n  . demo/env\n  $KUBECTL get rslice   # why\n\n"
           "To run the same authentication step by step, first undo:\n  kubectl tenantgate a \\\n"
           "      --b\nthen:\n  kubectl tenantgate c\n")
    assert printed_commands(out) == ["kubectl tenantgate install --cluster-id x", "curl -s http://x/metrics",
                                     ". demo/env", "$KUBECTL get rslice   # why",
                                     "kubectl tenantgate a \\\n      --b", "kubectl tenantgate c"]


@pytest.fixture(scope="module")
def demo(source_dir, build_dir, k8s_bin):
    script = source_dir / "e2e" / "demo"
    if (source_dir / "demo" / "env").exists():
        # up would reuse that demo and down would then stop it: not ours to stop
        pytest.fail(f"a demo is up in this checkout ({source_dir}/demo/env): make demo-down, then run again")
    env = dict(os.environ, TG_BUILD_DIR=str(build_dir), TG_DEMO_WEBHOOK_PORT=str(free_port()),
               TG_DEMO_METRICS_PORT=str(free_port()),
               TG_DEMO_SIGNER_METRICS_PORTS=f"{free_port()} {free_port()}",
               TG_DEMO_AUTH_PORTS=f"{free_port()} {free_port()}")
    up = subprocess.run([str(script), "up"], env=env, capture_output=True, text=True, timeout=900)
    try:
        assert up.returncode == 0, f"e2e/demo up failed:\n{up.stdout}\n{up.stderr}"
        yield up.stdout
    finally:
        subprocess.run([str(script), "down"], env=env, capture_output=True, text=True, timeout=300)


def run_printed(cmd, cwd):
    """cmd as a person pastes it, in cwd (laid out as the repository)."""
    script = ("set -eo pipefail\n. demo/env\nPATH=$(dirname \"$KUBECTL\"):$PATH\n" + cmd + "\n")
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_every_printed_command_works(demo, source_dir, tmp_path):
    # The manual flow writes nonce.txt and friends where it runs: not in the repository.
    for part in ("demo", "pki"):
        (tmp_path / part).symlink_to(source_dir / part)
    cmds = printed_commands(demo)
    # the ones it ran, the shell's, the manual flow's: none may be lost by the parser
    assert any("tenantgate authenticate" in c for c in cmds), demo
    assert any(" get rslice" in c or " get resourceslices" in c for c in cmds), demo
    assert any("generate identity" in c for c in cmds), demo
    assert any(c.startswith("curl ") for c in cmds), demo
    for cmd in cmds:
        r = run_printed(cmd, tmp_path)
        said = f"printed command:\n{cmd}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
        if "# refused: one bit of the signature flipped" in cmd:
            assert r.returncode != 0 and "SignatureVerificationFailed" in r.stderr, said
            continue
        assert r.returncode == 0, said
        assert "No resources found" not in r.stdout + r.stderr, said
        for want in must_show(cmd):
            assert want in r.stdout, f"expected {want!r} in the output; " + said
