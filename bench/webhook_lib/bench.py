"""The bench: its knobs (TG_BENCH_*), what it has measured so far, and its steps in order."""
import os
import subprocess
import tempfile

from .alone import Alone
from .burst import Burst
from .callgrind import Callgrind
from .interleaved import Interleaved
from .load import LoadTools
from .names import IDLE_SECONDS
from .proc import BenchError
from .report import Report
from .rounds import Rounds
from .setup import Setup


class Bench(Setup, LoadTools, Alone, Rounds, Interleaved, Burst, Callgrind, Report):
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.webhook_bin = os.path.join(self.build, "webhook", "tenantgate-webhook")
        self.cli = os.path.join(self.build, "cli", "kubectl-tenantgate")
        self.cluster = os.environ.get("TG_BENCH_CLUSTER", "bench-wh")
        self.n = int(os.environ.get("TG_BENCH_TENANTS", "200"))
        self.fillers = int(os.environ.get("TG_BENCH_CACHED_TENANTS", "0"))
        self.seconds = int(os.environ.get("TG_BENCH_SECONDS", "6"))
        self.pace_seconds = int(os.environ.get("TG_BENCH_PACE_SECONDS", "10"))
        self.idle_seconds = float(os.environ.get("TG_BENCH_IDLE_SECONDS", str(IDLE_SECONDS)))
        self.rounds = int(os.environ.get("TG_BENCH_ROUNDS", "2"))
        self.pairs = int(os.environ.get("TG_BENCH_PAIRS", "12"))
        self.slice_seconds = int(os.environ.get("TG_BENCH_SLICE_SECONDS", "3"))
        self.ilv_cpu = []       # interleaved pairs: {"tenantgate", "go", "twin", "noop", "twin_noop",
                                #                     "verify": us, "seconds": s, "ratio", "floor":
                                #                     tenantgate's valid and the floor / Go's valid,
                                #                     "aa", "aa_noop": twin / tenantgate}
        self.ilv_p99 = {}       # interleaved paced slices, pooled: key -> (p99 us, samples)
        self.burst = int(os.environ.get("TG_BENCH_BURST", "1000"))
        self.work = tempfile.mkdtemp(prefix="tg-bench-webhook.")
        self.cluster_up = False
        self.tg = self.peer = self.nocheck = self.twin = None
        self.burst_p99 = {}     # (server, webhook) -> apiserver-seen p99 (s) of the allowed calls
        self.by_library = []    # (server, round, kind, CPU us per request of that kind, {part: % of samples})
        self.rows = []          # tenantgate-only rows: (metric, measured, target, ratio, pass)
        self.cmp = {}           # metric -> {"tenantgate": [per round], "go": [per round], "ratio": [per round]}
        self.cmp_order = []
        self.loads = []

    def row(self, metric, measured, target="", ratio=None, ok=None):
        self.rows.append((metric, measured, target, "" if ratio is None else f"{ratio:.2f}",
                          "" if ok is None else ("yes" if ok else "NO")))

    def record(self, metric, srv, value):
        if metric not in self.cmp:
            self.cmp[metric] = {"tenantgate": [], "go": []}
            self.cmp_order.append(metric)
        self.cmp[metric][srv.name].append(value)

    def main(self):
        self.prepare()
        self.make_fixtures_first()
        self.start_cluster()
        self.create_consumers()
        self.startup()
        self.calibrate()
        try:
            self.rounds_run()
        except BenchError:
            if self.cmp:
                print("(partial: a round failed, see stderr)")
                self.report()
            raise
        try:
            self.interleaved()
        except BenchError as e:
            self.row("interleaved step", f"failed: {str(e)[:300]}")
        self.interleaved_rows()
        if os.environ.get("TG_BENCH_PROFILE"):
            try:
                self.profile(os.path.abspath(os.environ["TG_BENCH_PROFILE"]))
            except (BenchError, OSError, ValueError, subprocess.SubprocessError) as e:
                self.row("callgrind profile", f"failed: {str(e)[:200]}")
        if self.burst:
            self.kubectl("create", "-f", self.files["burst_consumers"])
            for srv in (self.peer, self.nocheck):
                srv.argv[srv.argv.index(self.files["peer_cluster"])] = self.files["peer_cluster_burst"]
            for srv in (self.tg, self.peer, self.nocheck):
                try:
                    self.apiserver_burst(srv)
                except BenchError as e:
                    self.row(f"kubectl apply burst via {srv.name}", f"failed: {str(e)[:300]}")
        self.report()

    def make_fixtures_first(self):
        # The bed's cluster comes up after the fixtures: the peer's file is an argument.
        self.make_fixtures()
