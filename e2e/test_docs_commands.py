"""The commands the documentation prints, run (CONTRIBUTING.md, "Commands in the documentation").

- ```console blocks of README.md and docs/*.md: each `$ ` line (with `\\` continuation lines) is
  one command. They run in order, file by file, against the bed `make demo` starts (e2e/demo
  up), with bash, demo/env sourced, the pinned kubectl and kubectl-tenantgate on PATH, in a
  scratch directory that links the repository's top-level folders. Each must exit 0.
- ```sh blocks of README.md, CONTRIBUTING.md and docs/*.md need something the demo bed is not;
  their first line is `# run by: FILE[, FILE]`, and each FILE must exist in the repository.
- Other blocks are never run.

The demo uses fixed names (demo/, clusters demo-provider and demo-consumer in TG_E2E_STATE) and
the webhook's port 127.0.0.1:18443, so a demo already running in this checkout is reported as a
failure instead of being torn down under its user; its metrics ports are free ones."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from bed import free_port

RUN_BY = re.compile(r"^# run by: (.+)$")
CONSOLE_DOCS = ("README.md", "docs/*.md")
SH_DOCS = ("README.md", "CONTRIBUTING.md", "docs/*.md")
# The docs to run, found when the tests are collected (TG_SOURCE_DIR as the source_dir fixture).
SOURCE = Path(os.environ.get("TG_SOURCE_DIR", Path(__file__).resolve().parent.parent)).resolve()


def doc_files(root, patterns):
    files = []
    for pattern in patterns:
        files += sorted(root.glob(pattern))
    return files


def fenced_blocks(text):
    """[(language, line number of the block's first line, [lines])] of the ``` blocks."""
    blocks, lang = [], None
    for number, line in enumerate(text.splitlines(), 1):
        if lang is None:
            if line.startswith("```"):
                lang, start, body = line[3:].strip(), number + 1, []
        elif line.strip() == "```":
            blocks.append((lang, start, body))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        raise ValueError(f"block opened at line {start - 1} is never closed")
    return blocks


def console_commands(text):
    """[(line number, command)] of the `$ ` lines in ```console blocks, continuations joined."""
    commands = []
    for lang, start, body in fenced_blocks(text):
        if lang != "console":
            continue
        i = 0
        while i < len(body):
            if body[i].startswith("$ "):
                number, command = start + i, body[i][2:]
                while command.endswith("\\") and i + 1 < len(body):
                    i += 1
                    command += "\n" + body[i]
                commands.append((number, command))
            i += 1
    return commands


def sh_block_owners(text):
    """[(line number, run-by line or None)] of the ```sh blocks."""
    owners = []
    for lang, start, body in fenced_blocks(text):
        if lang == "sh":
            owners.append((start, body[0] if body and RUN_BY.match(body[0]) else None))
    return owners


# The extractor itself, on a document written to catch each rule.
SAMPLE = """
```console
$ first --flag "$X"
output line
$ second \\
    --continued
```

```sh
# run by: e2e/test_deploy.py
never run
```

```text
$ not a command
```

```console
no prompt, no command
$ third
```
"""


def test_the_extractor_takes_only_console_prompts_and_joins_continuations():
    assert console_commands(SAMPLE) == [
        (3, 'first --flag "$X"'),
        (5, "second \\\n    --continued"),
        (20, "third"),
    ]


def test_the_extractor_refuses_an_unclosed_block():
    with pytest.raises(ValueError):
        console_commands("```console\n$ never ends\n")


def test_every_sh_block_names_an_existing_file_that_runs_it(source_dir):
    problems = []
    for path in doc_files(source_dir, SH_DOCS):
        for number, run_by in sh_block_owners(path.read_text()):
            where = f"{path.relative_to(source_dir)}:{number}"
            if run_by is None:
                problems.append(f"{where}: a sh block without a first line '# run by: FILE'")
                continue
            for name in RUN_BY.match(run_by).group(1).split(","):
                name = name.strip().split(" ")[0]
                if not (source_dir / name).exists():
                    problems.append(f"{where}: '{name}' does not exist")
    assert not problems, "\n".join(problems)


TEST_REF = re.compile(r"`((?:e2e|webhook|signer|auth|cli|pki)/[\w/]+\.(?:py|c))(?:::(\w+))?`|`::(\w+)`")


def threat_model_test_cells(text):
    """(row number, [(file, function or None)]) of each row of docs/threat-model.md's table; a
    `::name` cell entry belongs to the file named before it in that cell."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("| ") or line.startswith("| principal") or line.startswith("|---"):
            continue
        refs, current = [], None
        for m in TEST_REF.finditer(line.rsplit("|", 2)[-2]):
            if m.group(1):
                current = m.group(1)
                refs.append((current, m.group(2)))
            else:
                refs.append((current, m.group(3)))
        rows.append((number, refs))
    return rows


def test_every_threat_model_cell_names_a_test_that_exists(source_dir):
    """docs/threat-model.md: each row's test cell names test files and functions that exist."""
    problems = []
    rows = threat_model_test_cells((source_dir / "docs" / "threat-model.md").read_text())
    assert len(rows) > 10, rows
    for number, refs in rows:
        if not refs:
            problems.append(f"threat-model.md:{number}: no test named")
        for path, func in refs:
            if path is None or not (source_dir / path).exists():
                problems.append(f"threat-model.md:{number}: no file {path}")
            elif func and not re.search(rf"\b{func}\b", (source_dir / path).read_text()):
                problems.append(f"threat-model.md:{number}: no {func} in {path}")
    assert not problems, "\n".join(problems)


def test_the_docs_have_commands_to_run(source_dir):
    """Guards the live test against an extractor that silently finds nothing."""
    found = {p.name: console_commands(p.read_text()) for p in doc_files(source_dir, CONSOLE_DOCS)}
    assert found.get("README.md") and found.get("cli.md") and found.get("operations.md"), found


@pytest.fixture(scope="module")
def demo_bed(source_dir, build_dir, k8s_bin):
    """`make demo`'s bed (e2e/demo up), torn down after the module: -> environment for bash."""
    env_file = source_dir / "demo" / "env"
    if env_file.exists():
        pytest.fail(f"{env_file} exists: a demo runs in this checkout; `make demo-down` first")
    # The metrics ports may move (the webhook's 18443 is the local overlay's URL and may not).
    env = dict(os.environ, TG_BUILD_DIR=str(build_dir), TG_DEMO_METRICS_PORT=str(free_port()),
               TG_DEMO_SIGNER_METRICS_PORTS=f"{free_port()} {free_port()}",
               TG_DEMO_AUTH_PORTS=f"{free_port()} {free_port()}")
    demo = str(source_dir / "e2e" / "demo")
    up = subprocess.run([demo, "up"], env=env, capture_output=True, text=True, timeout=900)
    try:
        if up.returncode != 0:
            pytest.fail(f"e2e/demo up failed ({up.returncode}):\n{up.stdout[-3000:]}\n"
                        f"{up.stderr[-3000:]}")
        env["PATH"] = os.pathsep.join([str(build_dir / "cli"), str(k8s_bin), env["PATH"]])
        yield env
    finally:
        subprocess.run([demo, "down"], env=env, capture_output=True, text=True, timeout=300)


def scratch_dir(tmp_path, source_dir, build_dir):
    """A working directory where the repository's paths resolve and new files stay out of it."""
    d = tmp_path / "work"
    d.mkdir()
    for entry in source_dir.iterdir():
        if entry.name not in (".git", "build"):
            (d / entry.name).symlink_to(entry)
    (d / "build").symlink_to(build_dir)
    return d


@pytest.mark.parametrize("doc", [str(p.relative_to(SOURCE)) for p in doc_files(SOURCE, CONSOLE_DOCS)
                                 if console_commands(p.read_text())])
def test_the_commands_of_a_doc_run_on_the_demo_bed(doc, demo_bed, source_dir, build_dir,
                                                    tmp_path):
    path = source_dir / doc
    commands = console_commands(path.read_text())
    work = scratch_dir(tmp_path, source_dir, build_dir)
    for number, command in commands:
        out = subprocess.run(["bash", "-c", "set -o pipefail\n. demo/env\n" + command],
                             cwd=work, env=demo_bed, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, (
            f"{doc}:{number}: exit {out.returncode}\n$ {command}\n"
            f"stdout:\n{out.stdout[-2000:]}\nstderr:\n{out.stderr[-2000:]}")

