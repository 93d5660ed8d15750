"""The apiserver's view: a burst of `kubectl apply` through the webhooks pointed at each
server, with the apiserver's admission duration histogram as a delta over it."""
import json
import os
import re
import signal
import subprocess
import time

from .metrics import histogram, histogram_delta, http_get
from .names import MUTATE_NAME, MUTATE_PATH, VALIDATE_NAME, VALIDATE_PATH
from .proc import BenchError, log
from .stats import summarize


class Burst:
    """Bench's apiserver burst (mixed into Bench)."""

    def apiserver_burst(self, srv):
        """kubectl apply of the burst consumers' Tenants (4 kubectl in parallel) through the
        registered webhooks pointing at srv; the apiserver's own admission duration histogram,
        as a delta over the burst, and for tenantgate its own handler time beside it."""
        good, bad = self.files["burst_valid"], self.files["burst_bad"]
        if srv is self.nocheck:     # it would store the bad ones: the same 990 calls without them
            bad = []
        self.point_webhooks(srv.port)
        srv.start()
        try:
            time.sleep(1)
            metrics0 = self.kubectl("get", "--raw", "/metrics").stdout
            own0 = self.own_histograms(srv)
            tracer = self.accept_trace_start(srv)
            procs = []
            for i in range(4):
                path = os.path.join(self.work, f"burst-{i}.json")
                with open(path, "w") as f:
                    json.dump({"apiVersion": "v1", "kind": "List", "items": good[i::4] + bad[i::4]}, f)
                procs.append(subprocess.Popen([self.env["KUBECTL"], "--kubeconfig", self.env["KUBECONFIG"],
                                               "apply", "-f", path], stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True))
            log(f"kubectl apply burst through {srv.name}: {len(good)} valid + {len(bad)} invalid Tenants, 4 kubectl")
            t0 = time.monotonic()
            outs = [p.communicate() for p in procs]
            wall = time.monotonic() - t0
            denied = sum(e.count("SignatureVerificationFailed") for _, e in outs)
            # (the filler Tenants have no labels)
            stored = len(self.kubectl("get", "tenants", "-A", "-l", "liqo.io/remote-cluster-id", "-o",
                                      "name").stdout.split())
            if stored != len(good) or denied != len(bad):
                raise BenchError(f"burst via {srv.name}: {stored} Tenants stored (expected {len(good)}), {denied} "
                                 f"denied (expected {len(bad)}): {[e[-300:] for _, e in outs]}")
            metrics1 = self.kubectl("get", "--raw", "/metrics").stdout
            own1 = self.own_histograms(srv)
            accepted = self.accept_trace_stop(tracer)
        finally:
            srv.stop()
            self.delete_burst_tenants()
        self.row(f"kubectl apply burst via {srv.name}: {stored} stored, {denied} refused", f"{wall:.1f} s wall")
        if accepted is not None:
            self.row(f"  connections {srv.name} accepted during the burst (perf trace)", f"{accepted}")
        for name in (MUTATE_NAME, VALIDATE_NAME):
            for rejected in ("false", "true"):
                match = {"name": name, "operation": "CREATE", "rejected": rejected}
                h = summarize(histogram_delta(
                    histogram(metrics1, "apiserver_admission_webhook_admission_duration_seconds", match),
                    histogram(metrics0, "apiserver_admission_webhook_admission_duration_seconds", match)))
                if not h:
                    continue
                over = h["count"] - h["buckets"].get(0.005, 0.0)
                self.row(f"  apiserver-seen {name.split('.')[1]} via {srv.name}, rejected={rejected} "
                         f"({h['count']:.0f}): mean / p50 / p99; calls over 5 ms",
                         f"{h['mean'] * 1e3:.2f} / {h['p50'] * 1e3:.2f} / {h['p99'] * 1e3:.2f} ms; {over:.0f}",
                         "p99 <= 5 ms" if srv is self.tg else "", None,
                         h["p99"] <= 0.005 if srv is self.tg else None)
                if rejected == "false":
                    self.burst_p99[(srv.name, name.split('.')[1])] = h["p99"]
        for path in own0:
            h = summarize(histogram_delta(own1[path], own0[path]))
            if h:
                over = h["count"] - h["buckets"].get(0.001, 0.0)
                self.row(f"  {srv.name}'s own handler time, {path} ({h['count']:.0f}): mean / p99; over 1 ms",
                         f"{h['mean'] * 1e3:.3f} / {h['p99'] * 1e3:.3f} ms; {over:.0f}")

    def delete_burst_tenants(self):
        """kubectl delete's own --wait has hung for its whole timeout (2 min) with every
        Tenant gone: poll the list instead."""
        self.kubectl("delete", "tenants", "-A", "-l", "liqo.io/remote-cluster-id", "--wait=false", check=False)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            left = self.kubectl("get", "tenants", "-A", "-l", "liqo.io/remote-cluster-id", "-o", "name",
                                check=False).stdout.split()
            if not left:
                return
            time.sleep(1)
        log("burst Tenants still listed 120 s after their delete")

    def accept_trace_start(self, srv):
        """TG_BENCH_TRACE=1: the server's accept4 calls during the burst (each a TLS handshake)."""
        if os.environ.get("TG_BENCH_TRACE") != "1":
            return None
        out = os.path.join(self.work, f"accept-{srv.name}.txt")
        p = subprocess.Popen(["perf", "trace", "-e", "accept4", "-p", str(srv.proc.pid), "-o", out],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(0.5)
        return p, out

    def accept_trace_stop(self, tracer):
        if not tracer:
            return None
        p, out = tracer
        p.send_signal(signal.SIGINT)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        try:
            with open(out) as f:
                return sum(1 for line in f if re.search(r"accept4\(.*\) = \d+", line))
        except OSError:
            return None

    def own_histograms(self, srv):
        """tenantgate_webhook_request_duration_seconds per admission path (None where the
        server has no such metric: the Go peer)."""
        if srv is not self.tg:
            return {}
        text = http_get(srv.metrics_port, "/metrics")[1]
        return {path: histogram(text, "tenantgate_webhook_request_duration_seconds", {"path": path})
                for path in (MUTATE_PATH, VALIDATE_PATH)}
