"""Running the bench's processes: commands that must succeed, and the pinning of measured
processes to a core at the bench's priority."""
import os
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # bench/
REPO = os.path.dirname(HERE)
WEBHOOK_CORE, LOAD_CORE = "1", "0"
# Other users' processes share both cores. The measured processes (webhook, load tools and
# the verify driver alike) each run in a session of their own whose autogroup gets this nice:
# with CONFIG_SCHED_AUTOGROUP a process's own nice counts only inside its session, and
# every session would otherwise get an equal share of the core.
NICE = os.environ.get("TG_BENCH_NICE", "-10" if os.geteuid() == 0 else "0")


class BenchError(Exception):
    """A step went wrong: the numbers would mean nothing."""


def log(msg):
    print(f"bench/webhook: {msg}", file=sys.stderr, flush=True)


def run(cmd, check=True, capture=True, **kw):
    p = subprocess.run(cmd, text=True, capture_output=capture, **kw)
    if check and p.returncode != 0:
        raise BenchError(f"{' '.join(map(str, cmd[:4]))} ... exited {p.returncode}:\n"
                         f"{(p.stderr or '')[-2000:]}{(p.stdout or '')[-1000:]}")
    return p


def image_env(containerfile):
    """The environment the shipped image gives its binary (its ENV lines), over ours: the bench
    runs tenantgate as the image does."""
    env = dict(os.environ)
    with open(containerfile) as f:
        for line in f:
            m = re.match(r"ENV\s+(\w+)=(\S*)\s*$", line)
            if m:
                env[m.group(1)] = m.group(2)
    return env


def pinned(core, argv):
    """argv on one core at the bench's priority; sh, nice and taskset exec, so the PID is
    argv's. Start it with start_new_session=True (a new session is a new autogroup)."""
    if NICE == "0":
        return ["taskset", "-c", core, *argv]
    boost = 'echo "$0" > /proc/self/autogroup 2>/dev/null; exec "$@"'
    return ["sh", "-c", boost, NICE, "nice", "-n", NICE, "taskset", "-c", core, *argv]


def run_pinned(core, argv, **kw):
    return run(pinned(core, argv), start_new_session=True, **kw)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports
