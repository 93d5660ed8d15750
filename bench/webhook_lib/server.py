"""A server under test: started pinned, its readiness, memory and CPU read from /proc, and
each run's verdicts checked from its own request counters."""
import os
import signal
import statistics
import subprocess
import time

from .metrics import counter_delta, http_get, request_counters
from .names import VALIDATE_PATH
from .proc import LOAD_CORE, WEBHOOK_CORE, BenchError, pinned
from .procfs import cpu_ticks, cpu_times, proc_status, runqueue_wait_seconds


class Server:
    """A server under test (tenantgate or the Go peer), pinned to its core, with its
    request counters at hand."""

    def __init__(self, name, argv, work, port, metrics_port, env=None):
        self.name, self.port, self.metrics_port = name, port, metrics_port
        self.env = env
        self.url = f"https://127.0.0.1:{port}{VALIDATE_PATH}"
        self.argv = pinned(WEBHOOK_CORE, argv)
        self.log_path = os.path.join(work, f"{name}.log")
        self.proc = None

    def start(self):
        self.log_file = open(self.log_path, "a")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     start_new_session=True, env=self.env,
                                     stderr=self.log_file)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name} exited ({self.proc.returncode}); see {self.log_path}")
            try:
                if http_get(self.metrics_port, "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise BenchError(f"{self.name} was not ready within 60 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log_file.close()
        self.proc = None

    def status(self):
        return proc_status(self.proc.pid)

    def steady_status(self, seconds=1.0, samples=5):
        """proc_status over `seconds`, each field the median of the samples: single idle
        readings 2 s after ready differed by 0.55 MB between rounds on 11-26 (3.9 and
        3.35 MB), and a target is judged against that reading."""
        got = []
        for i in range(samples):
            if i:
                time.sleep(seconds / (samples - 1))
            got.append(self.status())
        return {k: statistics.median(g[k] for g in got) for k in got[0]}

    def settled_counters(self):
        """The counters once requests still in flight from a load tool that just
        quit are answered (h2load leaves its streams, wrk its pipelines)."""
        last = request_counters(self.metrics_port)
        while True:
            time.sleep(0.2)
            now = request_counters(self.metrics_port)
            if now == last:
                return now
            last = now

    def measured(self, fn, expect):
        """Run fn(); return (its result, validate-path counter deltas, webhook CPU seconds).
        expect: {(verdict, reason): share} - every request must fall in these, at about
        these shares (+-0.05), or the run is an error."""
        before, cpu0 = self.settled_counters(), cpu_times(self.proc.pid)
        wait0, t0 = runqueue_wait_seconds(self.proc.pid), time.monotonic()
        steal0 = {core: cpu_ticks(core) for core in (WEBHOOK_CORE, LOAD_CORE)}
        res = fn()
        self.wall = time.monotonic() - t0
        self.wait_share = (runqueue_wait_seconds(self.proc.pid) - wait0) / self.wall
        self.steal_share = {}
        for core, (st0, all0) in steal0.items():
            st1, all1 = cpu_ticks(core)
            self.steal_share[core] = (st1 - st0) / (all1 - all0) if all1 > all0 else 0.0
        after, cpu1 = self.settled_counters(), cpu_times(self.proc.pid)
        self.system_seconds = cpu1[1] - cpu0[1]     # the kernel's part of the CPU returned
        self.minor_faults = cpu1[2] - cpu0[2]
        delta = counter_delta(before, after)
        total = sum(delta.values())
        if total == 0:
            raise BenchError(f"{self.name} counted no requests")
        for key, n in delta.items():
            if key not in expect or abs(n / total - expect[key]) > 0.05:
                raise BenchError(f"{self.name}: unexpected verdicts {delta} (expected shares {expect})")
        return res, total, cpu1[0] + cpu1[1] - cpu0[0] - cpu0[1]
