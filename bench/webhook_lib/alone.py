"""tenantgate alone: its start-up timings, every body's verdict checked once, and its
saturation before the rounds (whose half is a paced rate)."""
import datetime
import json
import os
import statistics
import subprocess

from .names import TARGETS
from .proc import LOAD_CORE, BenchError, log, run_pinned


class Alone:
    """Bench's tenantgate-alone steps (mixed into Bench)."""

    def startup_once(self, tag):
        logf = os.path.join(self.work, f"startup-{tag}.log")
        with open(logf, "w") as err:
            argv = self.load_cmd(self.tg, "startup", self.files["noop"], "-metrics",
                                 f"127.0.0.1:{self.tg.metrics_port}", "--", *self.tg.argv)
            p = run_pinned(LOAD_CORE, argv, stderr=err, capture=False, stdout=subprocess.PIPE)
        r = json.loads(p.stdout)
        with open(logf) as f:
            for line in f:
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                if isinstance(doc, dict) and doc.get("msg") == "serving":
                    ts = datetime.datetime.strptime(doc["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                        tzinfo=datetime.timezone.utc)
                    r["serving_log_ms"] = ts.timestamp() * 1000 - r["start_unix_ms"]
        return r

    def startup(self):
        log("tenantgate start-up timing (3 starts)")
        runs = [self.startup_once(i) for i in range(3)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("listen_ms", "first_answer_ms", "ready_ms")}
        self.row("tenantgate: start -> port accepts TCP (median of 3)", f"{med['listen_ms']:.1f} ms")
        self.row("tenantgate: start -> first review answered over TLS", f"{med['first_answer_ms']:.1f} ms",
                 f"<= {TARGETS['ready_ms']:.0f} ms", med["first_answer_ms"] / TARGETS["ready_ms"],
                 med["first_answer_ms"] <= TARGETS["ready_ms"])
        self.row(f"tenantgate: start -> /readyz 200 (with cache sync, {2 * self.n + self.fillers} objects)",
                 f"{med['ready_ms']:.1f} ms")

    def check_verdicts(self, srv):
        for name in ("valid", "invalid", "noop"):
            p = run_pinned(LOAD_CORE, self.load_cmd(srv, "check", self.files[name]), check=False)
            r = json.loads(p.stdout or "{}")
            if r.get("failures") or not r.get("bodies"):
                raise BenchError(f"{srv.name}: {name} bodies: wrong verdicts: {r.get('failures', r)}"[:2000])

    def calibrate(self):
        """tenantgate's saturation once, for the 'half of tenantgate's saturation' pace."""
        self.tg.start()
        try:
            self.check_verdicts(self.tg)
            (r, n, cpu) = self.tg.measured(lambda: self.wrk(self.tg, self.files["valid"], max(3, self.seconds // 2)),
                                           {("allowed", "Accepted"): 1.0})
        finally:
            self.tg.stop()
        self.half_rate = r["rps"] / 2
        self.row("tenantgate saturation before the rounds (valid, HTTP/1.1); half of it is paced below",
                 f"{r['rps']:.0f} req/s")
