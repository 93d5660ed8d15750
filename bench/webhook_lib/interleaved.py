"""The interleaved step: tenantgate, the Go peer and tenantgate's twin up at once, the load
switching between them every slice, for the CPU and p99 ratios within seconds."""
import os
import time

from .names import BALANCED_ORDERS_3, PACE_RATE, TARGETS
from .proc import log
from .stats import median, percentile


class Interleaved:
    """Bench's interleaved step (mixed into Bench)."""

    def interleaved(self):
        """The two ratios the rounds cannot pin down on a noisy machine. In the rounds each
        server's measurement is minutes away from the other's, and this machine's speed moves
        in minutes: with the same binaries the Go peer's CPU per valid request went from 275 to
        503 us between rounds on 11-28. Here both servers run at once on the same core and the
        load switches between them every slice, so a pair's two slices are seconds apart.
        Per pair: each server's CPU per valid HTTP/1.1 request at saturation (the rounds'
        wrk), then both tenantgates' no-work request and one libsodium verify on that core,
        for the floor (two verifies + a no-work request, against the Go peer's valid request).
        A twin of tenantgate (same binary, same flags) gets slices of its own in each pair,
        so twin / tenantgate is the A/A of the tenantgate / Go ratio: what two identical
        servers read apart. Then paced
        slices at 300 req/s, the latencies of each kind pooled into one p99."""
        if self.pairs <= 0:
            return
        log(f"interleaved: {self.pairs} pairs of {self.slice_seconds} s slices, both servers and tenantgate's "
            f"twin up")
        accepted, noop = {("allowed", "Accepted"): 1.0}, {("allowed", "NotIntercepted"): 1.0}
        self.tg.start()
        try:
            self.peer.start()
            try:
                self.twin.start()
                try:
                    self.interleaved_cpu(accepted, noop)
                finally:
                    self.twin.stop()
                self.interleaved_pace(accepted, noop)
            finally:
                self.peer.stop()
        finally:
            self.tg.stop()

    def slice_us(self, srv, bodies, expect, seconds):
        """One saturated wrk slice of BODIES on SRV: its CPU per request, us."""
        (_, n, cpu) = srv.measured(lambda: self.wrk(srv, self.files[bodies], seconds), expect)
        return cpu / n * 1e6

    def interleaved_cpu(self, accepted, noop):
        servers = (self.tg, self.peer, self.twin)
        for srv in servers:     # unmeasured: first requests, caches, pools
            self.slice_us(srv, "valid", accepted, 1)
        # Each server takes each place in the order equally often (every 6 pairs): a place
        # has its own bias. With tenantgate always in the middle (twin, tenantgate, Go, then
        # Go, tenantgate, twin) the twin read 0.87 of tenantgate when it came first, right
        # after the no-work slice and the verify, and 0.96 when it came last (two runs, 11-28).
        # Balanced, the twin still read 0.89-0.95 of tenantgate (two more runs), when only
        # tenantgate served the no-work slices. With both serving them the medians were
        # 0.92, 0.96 and 0.97 (24 pairs: mean 0.97, standard error 0.025).
        # With a floor build as a fourth server in a balanced Latin square of four orders, the
        # twin read 1.00 of tenantgate (24 pairs, standard error 0.019). That build is gone;
        # for three, Williams' six orders balance places and neighbours alike.
        orders = [[servers[k] for k in row] for row in BALANCED_ORDERS_3]
        for i in range(self.pairs):
            got = {}
            span = {}
            order = orders[i % len(orders)]
            for srv in order:
                t0 = time.monotonic()
                got[srv.name] = self.slice_us(srv, "valid", accepted, self.slice_seconds)
                span[srv.name] = (t0, time.monotonic())
            got["twin"] = got.pop(self.twin.name)
            # from the first of tenantgate's and the Go peer's slices to the end of the other
            got["seconds"] = max(span["tenantgate"][1], span["go"][1]) - min(span["tenantgate"][0], span["go"][0])
            # Both tenantgates serve a no-work slice, in turn first: the two processes then
            # have the same history, which they did not when tenantgate alone served them.
            for srv in ((self.tg, self.twin) if i % 2 == 0 else (self.twin, self.tg)):
                got["noop" if srv is self.tg else "twin_noop"] = self.slice_us(srv, "noop", noop, self.slice_seconds)
            got["verify"] = self.verify_us()
            got["ratio"] = got["tenantgate"] / got["go"]
            got["aa"] = got["twin"] / got["tenantgate"]
            got["aa_noop"] = got["twin_noop"] / got["noop"]
            # the same binary's no-work request, read twice in the pair: their mean
            got["floor"] = (2 * got["verify"] + (got["noop"] + got["twin_noop"]) / 2) / got["go"]
            self.ilv_cpu.append(got)

    def interleaved_pace(self, accepted, noop):
        runs = (("tenantgate", self.tg, "valid", accepted), ("go", self.peer, "valid", accepted),
                ("tenantgate no-work", self.tg, "noop", noop))
        pooled = {key: [] for key, _, _, _ in runs}
        for i in range(self.pairs):
            for key, srv, kind, expect in (runs if i % 2 == 0 else (runs[1], runs[0], runs[2])):
                path = os.path.join(self.work, f"samples-{kind}-{srv.name}-{i}.txt")
                self.measured_pace(srv, kind, PACE_RATE, "h1", expect, "interleaved paced", self.slice_seconds,
                                   ("-samples", path))
                with open(path) as f:
                    pooled[key] += [int(line) for line in f]
        for key, lat in pooled.items():
            self.ilv_p99[key] = (percentile(sorted(lat), 0.99), len(lat))

    def interleaved_rows(self):
        """Rows for what the interleaved step measured (all of it, or its pairs before a failure)."""
        if not self.ilv_cpu:
            return
        ratios = [g["ratio"] for g in self.ilv_cpu]
        floors = [g["floor"] for g in self.ilv_cpu]
        t = TARGETS["cpu_valid"]
        self.row(f"CPU per valid, HTTP/1.1, interleaved: median of {len(ratios)} pairs' ratios (min-max)",
                 f"{median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})", f"<= {t:.2f}", median(ratios),
                 median(ratios) <= t)
        self.row("  floor, interleaved: (2 verifies + the two tenantgates' mean no-work) / Go's valid, median (min-max)",
                 f"{median(floors):.2f} ({min(floors):.2f}-{max(floors):.2f}); over {t:.2f} in "
                 f"{sum(f > t for f in floors)} of {len(floors)} pairs")
        aa = [g["aa"] for g in self.ilv_cpu]
        self.row("  A/A, interleaved: tenantgate's twin (same binary) / tenantgate, median (min-max)",
                 f"{median(aa):.2f} ({min(aa):.2f}-{max(aa):.2f})")
        aa = [g["aa_noop"] for g in self.ilv_cpu]
        self.row("  A/A of the no-work slices: twin / tenantgate, median (min-max)",
                 f"{median(aa):.2f} ({min(aa):.2f}-{max(aa):.2f})")
        if len(self.ilv_p99) < 3:
            return
        (tg, n), (go, _), (nw, _) = (self.ilv_p99[k] for k in ("tenantgate", "go", "tenantgate no-work"))
        t = TARGETS["p99_300"]
        self.row(f"p99 at {PACE_RATE} req/s, HTTP/1.1, interleaved: {self.pairs} slices of each pooled "
                 f"({n} requests), tenantgate / Go", f"{tg / 1000:.2f} / {go / 1000:.2f} ms", f"<= {t:.2f}",
                 tg / go, tg / go <= t)
        self.row("  floor, interleaved: tenantgate's no-work p99 / Go's valid p99",
                 f"{nw / 1000:.2f} / {go / 1000:.2f} ms = {nw / go:.2f}")
