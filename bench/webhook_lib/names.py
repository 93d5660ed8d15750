"""What the bench's rows, paths and targets are called, shared by its steps and its report."""

VALIDATE_PATH, MUTATE_PATH = "/validate/tenants", "/mutate/tenants"
VALIDATE_NAME, MUTATE_NAME = "tenants.validate.tenantgate.io", "tenants.mutate.tenantgate.io"
# Issue 15: ratios tenantgate / Go peer in the same round.
CPU_VALID_ROW = "CPU per valid, HTTP/1.1 request (us)"
KERNEL_ROW = "  of it in the kernel (system time, us)"
FAULTS_ROW = "  minor page faults per valid request"
NOOP_KERNEL_ROW = "  of it in the kernel, no-work (system time, us)"
NOOP_FAULTS_ROW = "  minor page faults per no-work request"
VERIFY_ROW = "  one libsodium verify on the servers' core (us)"
FLOOR_ROW = "  floor: 2 verifies + tenantgate's kernel time (Go: its whole CPU, us)"
NOOP_ROW = "CPU per no-work, HTTP/1.1 request (us)"
FLOOR_NOOP_ROW = "  floor: the verifies in the server (perf) + a no-work request (Go: its whole CPU, us)"
FLOOR_DECODE_ROW = "  floor: the same + OpenSSL's part of a valid request beyond a no-work one (perf, us)"
VERIFIES_ROW = "  of it in the two Ed25519 verifies (perf share x CPU, us)"
OUTSIDE_ROW = "  of it outside the verifies (perf share x CPU, us)"
SERVER_NAMES = {"tenantgate": "tenantgate", "go": "the Go peer"}
# The profiled kinds of request: their bodies, the verdicts they must get, their CPU row.
PROFILED = {"valid": ("valid", {("allowed", "Accepted"): 1.0}, CPU_VALID_ROW),
            "noop": ("noop", {("allowed", "NotIntercepted"): 1.0}, NOOP_ROW)}
TARGETS = {"cpu_valid": 0.70, "p99_300": 0.5, "rss_1000": 0.5, "rss_idle": 0.6, "back_mb": 2.0, "ready_ms": 100.0}
PACE_RATE = 300
# The interleaved step's orders of its three servers (tenantgate, Go, the twin): Williams'
# design for an odd count, a Latin square and its mirror, so in every 6 pairs each server
# takes each place twice and comes right after each other server twice.
BALANCED_ORDERS_3 = ((0, 1, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 0, 2))
# The idle reading waits past the apiserver's first bookmark on tenantgate's watches (the
# watch cache sends one about once a minute). Handling it maps the code of the watch path
# (TLS records, HTTP/2, JSON: 1.8 MB of library pages, 3.5 -> 5.4 MB in all, measured on
# 2026-11-26), and it stays mapped: an idle webhook gets one every minute. Read before it,
# "idle" is a state that lasts the first minute only.
IDLE_SECONDS = 65
