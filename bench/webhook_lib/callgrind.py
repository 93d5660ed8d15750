"""TG_BENCH_PROFILE: each server under valgrind's callgrind, instructions per valid and
no-work request in user space, and of them in the Ed25519 verifies."""
import os
import re
import time

from .proc import log, run
from .server import Server

# callgrind's rows (one run, after the rounds).
CG_VALID_ROW = "instructions per valid request, user space (callgrind, thousands)"
CG_VERIFY_ROW = "  of them in the two Ed25519 verifies (callgrind, thousands)"
CG_NOOP_ROW = "instructions per no-work request, user space (callgrind, thousands)"
CG_FLOOR_ROW = "  floor: tenantgate's 2 verifies + its no-work request (Go: its whole valid request, thousands)"
# The function whose inclusive cost is a server's Ed25519 verifies, the public key's decoding
# included in both: tenantgate's one way into libsodium, and the Go peer's, which both
# ed25519.Verify and x509's CheckSignature go through.
VERIFY_FUNCS = {"tenantgate": "tg_ed25519_verify", "go": "crypto/ed25519.VerifyWithOptions"}


# What a server runs on a timer once it sees no request for a while (tenantgate's heap trim).
IDLE_FUNCS = {"tenantgate": ("on_trim_tick",), "go": ()}


def callgrind_total(path):
    with open(path) as f:
        return max([int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:"))] or [0])


def callgrind_inclusive(path):
    """{function: inclusive instructions} from one callgrind_annotate of the dump (a function
    listed twice, as a whole and inlined elsewhere, keeps its larger count)."""
    text = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path]).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S*?:(\S+?)(?:'\d+)? \[", line)
        if m:
            out[m.group(2)] = max(out.get(m.group(2), 0), int(m.group(1).replace(",", "")))
    return out


class Callgrind:
    """Bench's callgrind profile (mixed into Bench)."""

    def profile(self, outdir):
        """Instructions per valid / no-work request, end to end in user space (TLS, HTTP,
        JSON, pki, log; the Go peer's runtime and GC too), each server under callgrind on
        the same bodies: the one view of the CPU rows that the machine's noise does not move."""
        os.makedirs(outdir, exist_ok=True)
        got = {}
        for srv, binary, env in ((self.tg, self.webhook_bin, self.tg.env),
                                 # valgrind's callgrind asserts on the signals of Go's
                                 # asynchronous preemption (SIGURG): the peer runs without it
                                 (self.peer, self.peer_bin, {**os.environ, "GOMAXPROCS": "1",
                                                             "GODEBUG": "asyncpreemptoff=1"})):
            got[srv.name] = self.callgrind_server(srv, binary, env, os.path.join(outdir, srv.name))
        tg, go = got["tenantgate"], got["go"]
        self.row("callgrind: requests counted per server and kind (each body once)",
                 f"{tg['valid'][0]} valid, {tg['noop'][0]} no-work; profiles in {outdir}")
        for row, kind, i in ((CG_VALID_ROW, "valid", 1), (CG_VERIFY_ROW, "valid", 2), (CG_NOOP_ROW, "noop", 1)):
            self.record(row, self.tg, tg[kind][i] / 1000)
            self.record(row, self.peer, go[kind][i] / 1000)
        # The floor in instructions: tenantgate's two verifies plus its whole no-work request
        # (TLS, HTTP, the review's JSON, the answer, the log line), set against the Go peer's
        # whole valid request.
        self.record(CG_FLOOR_ROW, self.tg, (tg["valid"][2] + tg["noop"][1]) / 1000)
        self.record(CG_FLOOR_ROW, self.peer, go["valid"][1] / 1000)

    def callgrind_window(self, cg, kind):
        """The counters zeroed, the bodies of kind sent once to cg, the counters dumped."""
        pid = str(cg.proc.pid)
        run(["callgrind_control", "-z", pid])
        run(self.load_cmd(cg, "check", self.files[kind]))
        run(["callgrind_control", "-d", kind, pid])

    def callgrind_server(self, srv, binary, env, outdir):
        """srv's binary under callgrind, counting only while it answers the valid bodies once
        (then the no-work ones): {kind: (requests, instructions per request, of them in the
        Ed25519 verifies)}."""
        os.makedirs(outdir, exist_ok=True)
        argv = srv.argv[srv.argv.index(binary):]
        # Instrumented from the start, counters zeroed before each window: switching the
        # instrumentation on later (callgrind_control -i on) counted nothing in the Go peer.
        cg = Server(f"{srv.name}-callgrind", ["valgrind", "--tool=callgrind",
                                              f"--callgrind-out-file={outdir}/callgrind.out", *argv],
                    self.work, srv.port, srv.metrics_port, env=env)
        log(f"callgrind profile of {srv.name} into {outdir}")
        cg.start()
        per = {}
        try:
            # tenantgate's heap trims after the first sync (four 500-ms ticks, slow under
            # valgrind) would otherwise land in the counted window: 11M instructions.
            time.sleep(5)
            for kind, expect in (("valid", ("allowed", "Accepted")), ("noop", ("allowed", "NotIntercepted"))):
                (_, n, _) = cg.measured(lambda: self.callgrind_window(cg, kind), {expect: 1.0})
                per[kind] = n
        finally:
            cg.stop()
        # -d writes callgrind.out.1, .2, ... in order: valid, then noop.
        dumps = sorted((f for f in os.listdir(outdir) if re.fullmatch(r"callgrind\.out\.\d+", f)),
                       key=lambda f: int(f.rsplit(".", 1)[1]))
        out = {}
        for (kind, n), dump in zip(per.items(), dumps):
            path = os.path.join(outdir, dump)
            # less what runs on a timer only when no request came for a tick: under
            # valgrind's slowdown it lands in the window, under the real load it never runs
            inclusive = callgrind_inclusive(path)
            total = callgrind_total(path) - sum(inclusive.get(f, 0) for f in IDLE_FUNCS[srv.name])
            verifies = inclusive.get(VERIFY_FUNCS[srv.name], 0)
            out[kind] = (n, total / max(1, n), verifies / max(1, n))
        return out
