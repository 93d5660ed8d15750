"""The load tools, as the bench runs them on the load core: wrk and h2load at saturation,
bench/webhook_load.go for paced runs."""
import json
import os

from .proc import HERE, LOAD_CORE, BenchError, run_pinned
from .tool_output import parse_h2load, parse_wrk


class LoadTools:
    """Bench's load tools (mixed into Bench)."""

    def load_cmd(self, srv, sub, bodies, *args):
        return [self.load, sub, "-url", srv.url, "-ca", os.path.join(self.certs, "ca.crt"),
                "-bodies", bodies, *args]

    def wrk(self, srv, bodies, seconds):
        return parse_wrk(run_pinned(LOAD_CORE, ["wrk", "-t", "1", "-c", "64", "-d", f"{seconds}s", "--latency",
                                                "-s", os.path.join(HERE, "webhook.lua"), srv.url, "--",
                                                bodies]).stdout)

    def h2load(self, srv, files, seconds_each):
        tot = {"succeeded": 0, "failed": 0, "seconds": 0.0}
        for path in files:
            r = parse_h2load(run_pinned(LOAD_CORE, ["h2load", "-t", "1", "-c", "8", "-m", "16",
                                                    "-D", str(seconds_each), "-d", path, "-H",
                                                    "content-type: application/json", srv.url]).stdout)
            if r["proto"] != "h2":
                raise BenchError(f"h2load negotiated {r['proto']} with {srv.name}, not h2")
            for k in tot:
                tot[k] += r[k]
        if tot["failed"]:
            raise BenchError(f"h2load: {tot['failed']} requests to {srv.name} failed")
        tot["rps"] = tot["succeeded"] / tot["seconds"]
        return tot

    def pace(self, srv, bodies, rate, seconds, proto, *extra):
        """Timeouts are results here (a server that falls behind), not bench errors."""
        argv = self.load_cmd(srv, "pace", bodies, "-rate", f"{rate:.0f}", "-duration", f"{seconds}s",
                             "-warmup", "1s", "-conns", "16", "-proto", proto, "-timeout", "5s", *extra)
        return json.loads(run_pinned(LOAD_CORE, argv).stdout)

    def measured_pace(self, srv, kind, rate, proto, expect, what="paced", seconds=None, extra=()):
        """One paced run of the bodies of kind, its verdicts checked (Server.measured); a
        request that failed outright makes the run an error, not a latency. seconds: the
        paced runs' own length unless given; extra: more webhook_load pace flags."""
        (r, _, _) = srv.measured(lambda: self.pace(srv, self.files[kind], rate, seconds or self.pace_seconds, proto,
                                                   *extra), expect)
        if r["errors"]:
            raise BenchError(f"{srv.name}: {r['errors']} {what} requests failed: {r['first_error']}")
        return r
