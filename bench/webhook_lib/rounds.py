"""The rounds: each server started fresh and measured alone (RSS, CPU at saturation, perf
profiles, paced latency, 1,000 held connections), the two in alternating order."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

from .cpu_parts import LIBCRYPTO_PART, VERIFY_PARTS, library_of, part_deltas
from .names import (CPU_VALID_ROW, FAULTS_ROW, FLOOR_DECODE_ROW, FLOOR_NOOP_ROW, FLOOR_ROW, KERNEL_ROW,
                    NOOP_FAULTS_ROW, NOOP_KERNEL_ROW, NOOP_ROW, OUTSIDE_ROW, PACE_RATE, PROFILED,
                    VERIFIES_ROW, VERIFY_ROW)
from .proc import LOAD_CORE, WEBHOOK_CORE, BenchError, log, pinned, run, run_pinned


class Rounds:
    """Bench's rounds (mixed into Bench)."""

    def saturate(self, srv, label, fn, expect, note_rps=False, kernel_rows=None):
        """kernel_rows: (system time row, page fault row) to fill from this run too; measured
        without perf attached, whose own sampling interrupts count as kernel time."""
        (r, n, cpu) = srv.measured(fn, expect)
        self.record(f"CPU per {label} request (us)", srv, cpu / n * 1e6)
        if kernel_rows:
            self.record(kernel_rows[0], srv, srv.system_seconds / n * 1e6)
            self.record(kernel_rows[1], srv, srv.minor_faults / n)
        if note_rps:
            self.record(f"req/s at saturation, {label}", srv, r["rps"])
        return r

    def under_perf(self, srv, perf_args, bodies, expect):
        """A 3 s saturated run of its own with `perf PERF_ARGS -p PID` attached to the server
        (perf costs the server CPU, so the CPU rows are measured without it). Returns the
        number of requests the run made."""
        perf = subprocess.Popen(["perf", *perf_args, "-p", str(srv.proc.pid)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.3)
        try:
            (_, n, _) = srv.measured(lambda: self.wrk(srv, bodies, 3), expect)
        finally:
            perf.send_signal(signal.SIGINT)
            perf.wait(20)
        return n

    def syscalls_per_request(self, srv, label, bodies, expect):
        """System calls per request, counted by `perf stat` (under_perf)."""
        if not shutil.which("perf"):
            return
        out = os.path.join(self.work, f"syscalls-{srv.name}-{len(self.loads)}.csv")
        n = self.under_perf(srv, ["stat", "-x", ",", "-o", out, "-e", "raw_syscalls:sys_enter"], bodies, expect)
        try:
            with open(out) as f:
                count = next(int(line.split(",")[0]) for line in f if "raw_syscalls:sys_enter" in line)
        except (OSError, StopIteration, ValueError):
            log(f"perf stat gave no syscall count for {srv.name} (see {out})")
            return
        self.record(f"  system calls per {label} request (perf stat, own run)", srv, count / n)

    def cpu_by_library(self, srv, kind):
        """Where an HTTP/1.1 request's CPU goes, for KIND "valid" or "noop": `perf record -e
        cpu-clock` of the server (under_perf), its samples summed per part (library_of: shared
        object, and for the Go peer's one binary the symbol's package), each share turned into
        us with this round's CPU per request of that kind from the run without perf. The
        no-work profile is there to be subtracted: what a valid request costs beyond it, part
        by part, is the work between the no-work floor and the total."""
        if not shutil.which("perf"):
            return
        (bodies, expect, cpu_row) = PROFILED[kind]
        data = os.path.join(self.work, f"cpu-{kind}-{srv.name}-{len(self.loads)}.data")
        self.under_perf(srv, ["record", "-q", "-e", "cpu-clock", "-F", "1999", "-o", data], self.files[bodies],
                        expect)
        rep = run(["perf", "report", "-i", data, "--sort", "dso,sym", "--stdio", "-q"], check=False).stdout
        shares = {}
        for line in rep.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(\S+)", line)
            if m:
                part = library_of(m.group(2), m.group(3))
                shares[part] = shares.get(part, 0.0) + float(m.group(1))
        cpu = self.cmp.get(cpu_row, {}).get(srv.name, [])
        if not shares or not cpu:
            log(f"perf record gave no profile for {srv.name} (see {data})")
            return
        self.by_library.append((srv.name, len(self.loads), kind, cpu[-1], shares))
        if kind != "valid":
            return
        verify = sum(v for k, v in shares.items() if k in VERIFY_PARTS)
        self.record(VERIFIES_ROW, srv, cpu[-1] * verify / 100)
        self.record(OUTSIDE_ROW, srv, cpu[-1] * (100 - verify) / 100)

    def verify_us(self):
        """One libsodium Ed25519 verify on the servers' core, as tenantgate makes it (pki/,
        bench/tg-bench-pki; a generated key, the nonce's message)."""
        driver = os.path.join(self.build, "bench", "tg-bench-pki")
        out = run_pinned(WEBHOOK_CORE, [driver, "--min-time", "0.3", "--rounds", "3"]).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[0] == "gen-ed25519" and f[1] == "verify-nonce":
                return float(f[3])
        raise BenchError(f"tg-bench-pki printed no gen-ed25519 verify-nonce row:\n{out[:1000]}")

    def record_floor(self):
        """The floor of tenantgate's CPU per valid Tenant over HTTP/1.1, per round: two
        verifies (measured on the servers' core that round) plus the kernel time that
        tenantgate's valid requests took in that round's saturated run. Set beside the Go
        peer's whole CPU per valid request, its ratio is the lowest the CPU ratio can be
        without a faster verify or fewer system calls."""
        kernel = self.cmp.get(KERNEL_ROW, {}).get("tenantgate", [])
        go = self.cmp.get(CPU_VALID_ROW, {}).get("go", [])
        verify = self.cmp.get(VERIFY_ROW, {}).get("tenantgate", [])
        if not (kernel and go and verify):
            return
        self.cmp[FLOOR_ROW] = {"tenantgate": [2 * v + k for v, k in zip(verify, kernel)], "go": go[:len(verify)]}
        # shown under the kernel row: the verify, then the floor (ratio: floor / Go's whole CPU)
        self.cmp_order.remove(VERIFY_ROW)
        at = self.cmp_order.index(KERNEL_ROW) + 1
        self.cmp_order[at:at] = [VERIFY_ROW, FLOOR_ROW]
        # The tighter floor: the verifies as the server makes them (perf) plus everything a
        # no-work review of the same size costs it (TLS, HTTP, JSON, answer, log, kernel).
        in_server = self.cmp.get(VERIFIES_ROW, {}).get("tenantgate", [])
        noop = self.cmp.get(NOOP_ROW, {}).get("tenantgate", [])
        if in_server and len(in_server) == len(noop) == len(go):
            self.cmp[FLOOR_NOOP_ROW] = {"tenantgate": [v + n for v, n in zip(in_server, noop)], "go": go}
            self.cmp_order.insert(self.cmp_order.index(FLOOR_ROW) + 1, FLOOR_NOOP_ROW)
            # And the decoding a valid Tenant needs: OpenSSL's CPU in a valid request beyond
            # its CPU in a no-work one (the CSR's and the key's PEM and ASN.1, which the issue
            # keeps in OpenSSL; the TLS records are the same for both kinds of review).
            decode = self.beyond_noop_us(LIBCRYPTO_PART)
            if len(decode) == len(go):
                self.cmp[FLOOR_DECODE_ROW] = {"tenantgate": [f + d for f, d in zip(self.cmp[FLOOR_NOOP_ROW]["tenantgate"],
                                                                                   decode)], "go": go}
                self.cmp_order.insert(self.cmp_order.index(FLOOR_NOOP_ROW) + 1, FLOOR_DECODE_ROW)

    def beyond_noop_us(self, part):
        """Per round in order, PART's us in tenantgate's valid request minus its us in a
        no-work one, from the two profiles of that round (none below zero)."""
        return [max(0.0, d.get(part, 0.0)) for d in part_deltas(self.by_library)["tenantgate"]]

    def one_round(self, srv):
        log(f"round: {srv.name}")
        s = self.seconds
        srv.start()
        started = time.monotonic()
        try:
            time.sleep(1.5)
            early = srv.steady_status()
            time.sleep(max(0.0, started + self.idle_seconds - time.monotonic()))
            idle = srv.steady_status()
            self.record("RSS idle (MB)", srv, idle["VmRSS"])
            self.record("  of it anonymous (heap, stacks), idle (MB)", srv, idle["RssAnon"])
            self.record("  RSS 1.5 s after start, before the first watch bookmark (MB)", srv, early["VmRSS"])
            self.check_verdicts(srv)
            accepted = {("allowed", "Accepted"): 1.0}
            noop = {("allowed", "NotIntercepted"): 1.0}
            invalid = {("denied", "SignatureVerificationFailed"): 0.5, ("denied", "CSRSubjectMismatch"): 0.5}
            self.saturate(srv, "valid, HTTP/1.1", lambda: self.wrk(srv, self.files["valid"], s), accepted, True,
                          kernel_rows=(KERNEL_ROW, FAULTS_ROW))
            self.saturate(srv, "invalid, HTTP/1.1", lambda: self.wrk(srv, self.files["invalid"], s), invalid)
            self.saturate(srv, "no-work, HTTP/1.1", lambda: self.wrk(srv, self.files["noop"], s), noop, True,
                          kernel_rows=(NOOP_KERNEL_ROW, NOOP_FAULTS_ROW))
            self.saturate(srv, "valid, HTTP/2", lambda: self.h2load(srv, self.files["h2_valid"], max(1, s // 4)),
                          accepted, True)
            self.saturate(srv, "no-work, HTTP/2", lambda: self.h2load(srv, [self.files["h2_noop"]], s), noop)
            self.syscalls_per_request(srv, "valid, HTTP/1.1", self.files["valid"], accepted)
            self.cpu_by_library(srv, "valid")
            self.cpu_by_library(srv, "noop")
            for rate, tag in ((PACE_RATE, f"{PACE_RATE} req/s"), (self.half_rate, "half tg saturation")):
                for proto in ("h1", "h2"):
                    r = self.measured_pace(srv, "valid", rate, proto, accepted)
                    name = "HTTP/1.1" if proto == "h1" else "HTTP/2"
                    if rate == PACE_RATE:
                        self.record(f"  core-1 wait while runnable, {PACE_RATE} req/s {name} (% of run)", srv,
                                    100 * srv.wait_share)
                        for core, what in ((WEBHOOK_CORE, "servers'"), (LOAD_CORE, "load tool's")):
                            self.record(f"  hypervisor steal on the {what} core {core}, {PACE_RATE} req/s {name} "
                                        "(% of run)", srv, 100 * srv.steal_share[core])
                    for q in ("p50", "p99", "p999"):
                        self.record(f"{q.replace('p999', 'p99.9')} at {tag}, {name} (ms)", srv,
                                    r[f"{q}_us"] / 1000)
                    if proto == "h1" and r.get("late_p99_us") is not None:
                        # the load tool's own floor: how late it sent, after its due time
                        self.record(f"  load tool's send lateness p99 at {tag}, {name} (ms)", srv,
                                    r["late_p99_us"] / 1000)
                    if rate == PACE_RATE and r.get("svc_p99_us") is not None:
                        # counted from the actual send: the same requests without the tool's
                        # lateness (which comes from the load core, not from the server)
                        self.record(f"  p99 from the send at {tag}, {name} (ms)", srv, r["svc_p99_us"] / 1000)
            if os.environ.get("TG_BENCH_TRACE") == "1":
                self.traced_pace(srv, accepted)
            # The floor: the same pace on the no-work path (client, loopback, TLS, HTTP, JSON).
            r = self.measured_pace(srv, "noop", PACE_RATE, "h1", noop, "no-work paced")
            for q in ("p50", "p99"):
                self.record(f"  {q} at {PACE_RATE} req/s, no-work, HTTP/1.1 (floor, ms)", srv, r[f"{q}_us"] / 1000)
            st = srv.status()
            self.record("RSS after the load runs (MB)", srv, st["VmRSS"])
            self.record("RSS peak, VmHWM (MB)", srv, st["VmHWM"])
            self.hold(srv, idle)
        finally:
            srv.stop()

    def traced_pace(self, srv, accepted):
        """A paced run of its own under `perf trace`: the tracer slows every syscall of the
        server and runs on a core itself, so the run whose p99 is the target stays untraced."""
        tracer = self.trace_start(srv)
        try:
            r = self.measured_pace(srv, "valid", PACE_RATE, "h1", accepted, "traced paced")
        finally:
            self.trace_stop(srv, tracer)
        self.record(f"  p99 at {PACE_RATE} req/s, HTTP/1.1, under perf trace (ms)", srv, r["p99_us"] / 1000)

    def trace_start(self, srv):
        out = os.path.join(self.work, f"trace-{srv.name}-{len(self.loads)}.txt")
        p = subprocess.Popen(["perf", "trace", "--duration", "1", "-p", str(srv.proc.pid), "-o", out],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(0.5)
        return p, out

    def trace_stop(self, srv, tracer):
        p, out = tracer
        p.send_signal(signal.SIGINT)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        slow = {}
        idle = ("epoll_wait", "epoll_pwait", "futex", "nanosleep", "clock_nanosleep", "poll", "ppoll", "select",
                "pselect6", "rt_sigtimedwait", "wait4")
        try:
            with open(out) as f:
                for line in f:
                    m = re.search(r"\(\s*([0-9.]+) ms\): [^/]*/(\d+) (\w+)\(", line)
                    if m and m.group(3) not in idle:
                        n, mx = slow.get(m.group(3), (0, 0.0))
                        slow[m.group(3)] = (n + 1, max(mx, float(m.group(1))))
        except OSError:
            pass
        text = ", ".join(f"{k} x{n} (max {mx:.1f} ms)" for k, (n, mx) in sorted(slow.items())) or "none"
        self.row(f"{srv.name}, round {len(self.loads)}: syscalls over 1 ms during the traced {PACE_RATE} req/s "
                 "HTTP/1.1 run (waits aside)", text)

    def hold(self, srv, idle):
        before = srv.status()["sockets"]
        hold = subprocess.Popen(pinned(LOAD_CORE, self.load_cmd(srv, "hold", self.files["noop"], "-conns", "1000")),
                                start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            r = json.loads(hold.stdout.readline() or "{}")
            time.sleep(0.5)
            st = srv.status()
        finally:
            hold.stdin.close()
            hold.wait(30)
        if r.get("held") != 1000:
            raise BenchError(f"{srv.name}: could not hold 1,000 connections: {r}")
        if st["sockets"] - before < 990:
            raise BenchError(f"{srv.name}: only {st['sockets'] - before} sockets seen for 1,000 connections")
        self.record("RSS with 1,000 TLS connections (MB)", srv, st["VmRSS"])
        time.sleep(4.5)
        st = srv.steady_status()
        after = st["VmRSS"]
        self.record("RSS 5 s after they closed (MB)", srv, after)
        self.record("  of it anonymous (heap, stacks), 5 s after close (MB)", srv, st["RssAnon"])
        self.record("  5 s after close minus idle (MB)", srv, after - idle["VmRSS"])
        # The anonymous part is what the connections can have left behind; the file-backed
        # part moves with the watch bookmarks (IDLE_SECONDS) and the page release after a burst.
        self.record("  of it anonymous: 5 s after close minus idle (MB)", srv, st["RssAnon"] - idle["RssAnon"])

    def rounds_run(self):
        for i in range(self.rounds):
            self.loads.append(open("/proc/loadavg").read().split()[0])
            order = (self.tg, self.peer) if i % 2 == 0 else (self.peer, self.tg)
            # The verify the floor is made of, on the servers' core while neither runs
            # (tenantgate's column only: there is nothing to compare it with).
            self.record(VERIFY_ROW, self.tg, self.verify_us())
            for srv in order:
                self.one_round(srv)
        self.loads.append(open("/proc/loadavg").read().split()[0])
        self.record_floor()
