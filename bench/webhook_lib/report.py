"""The report: the per-round table tenantgate / Go peer, where the CPU goes, the
interleaved pairs, tenantgate's own rows, and the floors against the targets."""
import datetime
import os

from .cpu_parts import beyond_noop_table, by_library_table
from .names import (CPU_VALID_ROW, FLOOR_DECODE_ROW, FLOOR_NOOP_ROW, FLOOR_ROW, KERNEL_ROW, NOOP_KERNEL_ROW,
                    NOOP_ROW, OUTSIDE_ROW, PACE_RATE, SERVER_NAMES, TARGETS, VERIFIES_ROW)
from .proc import LOAD_CORE, NICE, WEBHOOK_CORE, run
from .stats import median
from .tables import fmt_ms, print_table


class Report:
    """Bench's report (mixed into Bench)."""

    def report_interleaved(self):
        if not self.ilv_cpu:
            return
        print(f"interleaved step: tenantgate, the Go peer, and tenantgate's twin up on core "
              f"{WEBHOOK_CORE}, the load switching between them every {self.slice_seconds} s slice (wrk as in the "
              f"rounds), the three in Williams' six orders in turn; tenantgate's and the Go peer's "
              f"valid slices were "
              f"{min(g['seconds'] for g in self.ilv_cpu):.1f}-{max(g['seconds'] for g in self.ilv_cpu):.1f} s apart "
              f"from start to end")
        rows = [(str(i + 1), f"{g['tenantgate']:.1f}", f"{g['go']:.1f}", f"{g['ratio']:.2f}", f"{g['twin']:.1f}",
                 f"{g['aa']:.2f}", f"{g['noop']:.1f}", f"{g['twin_noop']:.1f}", f"{g['verify']:.1f}",
                 f"{g['floor']:.2f}")
                for i, g in enumerate(self.ilv_cpu)]
        print_table(("pair", "tenantgate valid, us", "Go valid, us", "ratio", "twin valid, us", "twin / tenantgate",
                     "tenantgate no-work, us", "twin no-work, us", "one verify, us", "floor / Go valid"), rows)
        print()

    def report_by_library(self):
        if not self.by_library:
            return
        print(f"where the CPU per valid, HTTP/1.1 request goes (`perf record -e cpu-clock` of each server in a 3 s "
              f"saturated run of its own, samples per shared object; us = share x that round's {CPU_VALID_ROW[:-5]})")
        print_table(("part", "tenantgate, us (share) per round", "Go peer, us (share) per round"),
                    by_library_table([e for e in self.by_library if e[2] == "valid"]))
        print()
        gap = beyond_noop_table(self.by_library)
        if gap:
            print(f"what a valid request costs beyond a no-work one, part by part (the same profile of each server's "
                  f"no-work requests, us = share x that round's {NOOP_ROW[:-5]}; valid us - no-work us per round)")
            print_table(("part", "tenantgate, us per round", "Go peer, us per round"), gap)
            print()
        kv, kn = self.cmp.get(KERNEL_ROW), self.cmp.get(NOOP_KERNEL_ROW)
        if kv and kn:
            cells = ["{} {} us".format(SERVER_NAMES[s], " / ".join(f"{v - n:+.1f}" for v, n in zip(kv[s], kn[s])))
                     for s in ("tenantgate", "go")]
            print("the kernel's part of that without perf attached (system time per valid request - per no-work "
                  "request, per round): " + "; ".join(cells))
            print()

    def report(self):
        print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, nproc: {os.cpu_count()}, "
              f"load (1 min) at each round's start and at the end: {' '.join(self.loads)}")
        print(f"{run(['openssl', 'version']).stdout.strip()}; {run(['go', 'version']).stdout.strip()}")
        print(f"servers on core {WEBHOOK_CORE} (tenantgate --threads 1; Go GOMAXPROCS=1 from the affinity), "
              f"load on core {LOAD_CORE}, nice {NICE}; {self.n} consumers, {self.fillers} filler Tenants stored, "
              f"AdmissionReview ~{self.files['body_bytes']:.0f} B; {self.rounds} rounds, alternating order; "
              f"saturated runs {self.seconds} s, paced {self.pace_seconds} s")
        print()
        targets = {
            CPU_VALID_ROW: TARGETS["cpu_valid"],
            f"p99 at {PACE_RATE} req/s, HTTP/1.1 (ms)": TARGETS["p99_300"],
            "RSS with 1,000 TLS connections (MB)": TARGETS["rss_1000"],
            "RSS idle (MB)": TARGETS["rss_idle"],
        }
        higher_better = {m for m in self.cmp if m.startswith("req/s")}
        head = ("metric", "tenantgate", "Go peer", "ratio", "ratio per round", "target", "pass?")
        rows = []
        missed = []
        for m in self.cmp_order:
            tg, go = self.cmp[m]["tenantgate"], self.cmp[m]["go"]
            per_round = [a / b if b else None for a, b in zip(tg, go)]
            ratio = median(per_round)
            target, ok = "", ""
            if m in targets:
                target = f"<= {targets[m]:.2f}"
                ok = "yes" if ratio is not None and max(x for x in per_round if x is not None) <= targets[m] else "NO"
            if m.startswith("  5 s after close"):
                target = f"tg <= {TARGETS['back_mb']:.0f} MB"
                ok = "yes" if max(tg) <= TARGETS["back_mb"] else "NO"
            if m.startswith("  5 s"):
                per_round = []
                ratio = None
            if ok == "NO":
                missed.append(m)
            fmt = (lambda v: f"{v:.0f}") if m.startswith("req/s") else (lambda v: f"{v:.2f}" if abs(v) < 10 else
                                                                         f"{v:.1f}")
            rows.append((m + (" (higher is better)" if m in higher_better else ""),
                         " / ".join(fmt(v) for v in tg), " / ".join(fmt(v) for v in go),
                         "" if ratio is None else f"{ratio:.2f}",
                         " ".join(f"{x:.2f}" for x in per_round if x is not None), target, ok))
        print_table(head, rows)
        print("(values per round, in round order; ratio = median of the per-round ratios tenantgate / Go peer;")
        print(" pass = every round's ratio within the target)")
        print()
        self.report_by_library()
        self.report_interleaved()
        head = ("tenantgate alone / apiserver", "measured", "target", "ratio", "pass?")
        print_table(head, self.rows)
        missed += [r[0].strip() for r in self.rows if r[4] == "NO"]
        print()
        print("targets missed: " + ("; ".join(missed) if missed else "none"))
        for row, what in ((FLOOR_ROW, "the floor (two verifies + tenantgate's own kernel time)"),
                          (FLOOR_NOOP_ROW, "the floor with the libraries' own work (the two verifies as the "
                                           "server makes them + tenantgate's no-work request)"),
                          (FLOOR_DECODE_ROW, "that floor with the CSR's and the key's decoding in OpenSSL too")):
            if row in self.cmp:
                f = self.cmp[row]
                floors = [a / b for a, b in zip(f["tenantgate"], f["go"]) if b]
                print(f"CPU per valid Tenant over HTTP/1.1: {what} is {' '.join(f'{x:.2f}' for x in floors)} of the "
                      f"Go peer's CPU per round, against the target {TARGETS['cpu_valid']:.2f}")
        p99_row, nowork_p99_row = (f"p99 at {PACE_RATE} req/s, HTTP/1.1 (ms)",
                                   f"  p99 at {PACE_RATE} req/s, no-work, HTTP/1.1 (floor, ms)")
        if p99_row in self.cmp and nowork_p99_row in self.cmp:
            # What tenantgate's own HTTP/TLS path costs with no check at all, against the Go
            # peer's valid p99 of the same round: over the target, no check could meet it there.
            floors = [a / b for a, b in zip(self.cmp[nowork_p99_row]["tenantgate"], self.cmp[p99_row]["go"]) if b]
            print(f"p99 at {PACE_RATE} req/s over HTTP/1.1: the floor (tenantgate answering a review with no check) "
                  f"is {' '.join(f'{x:.2f}' for x in floors)} of the Go peer's valid p99 per round, against the "
                  f"target {TARGETS['p99_300']:.2f}")
        if VERIFIES_ROW in self.cmp and OUTSIDE_ROW in self.cmp:
            t = TARGETS["cpu_valid"]
            ver, out = self.cmp[VERIFIES_ROW], self.cmp[OUTSIDE_ROW]
            need = [(t * (gv + go_) - tv) / go_ for tv, gv, go_ in zip(ver["tenantgate"], ver["go"], out["go"])]
            have = [a / b for a, b in zip(out["tenantgate"], out["go"])]
            print(f"CPU per valid Tenant over HTTP/1.1: with the verifies as they are (tenantgate / Go "
                  f"{' '.join(f'{a / b:.2f}' for a, b in zip(ver['tenantgate'], ver['go']))}), the target "
                  f"{t:.2f} needs the work around them at {' '.join(f'{x:.2f}' for x in need)} of the Go peer's; "
                  f"it is {' '.join(f'{x:.2f}' for x in have)}")
        for hook in ("mutate", "validate"):
            got = {srv: self.burst_p99.get((srv, hook)) for srv in ("tenantgate", "go", "go-nocheck")}
            if got["go-nocheck"] is not None:
                print(f"apiserver-seen p99 of the allowed {hook} calls in the burst: tenantgate "
                      f"{fmt_ms(got['tenantgate'])}, the Go peer {fmt_ms(got['go'])}, and its floor, the Go "
                      f"peer checking nothing, {fmt_ms(got['go-nocheck'])}, against the target 5 ms")
