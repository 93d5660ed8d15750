"""Where a request's CPU goes: `perf report` samples sorted into parts (shared objects; the
Go peer's binary by symbol), and the tables of those parts per round."""
import re

SODIUM_PART = "libsodium (the two verifies)"
GO_VERIFY_PART = "the Go peer's Ed25519 verifies (crypto/internal/fips140/edwards25519, sha512)"
VERIFY_PARTS = (SODIUM_PART, GO_VERIFY_PART)
LIBCRYPTO_PART = "libcrypto (TLS records, PEM, ASN.1)"
LIBRARIES = (("libsodium", SODIUM_PART), ("libcrypto", LIBCRYPTO_PART),
             ("libssl", "libssl"), ("libjson-c", "json-c"), ("libh2o", "h2o"), ("libuv", "libuv"),
             ("libc.so", "libc (malloc/free, memcpy, log formatting)"))


def by_library_table(entries):
    """Rows part | tenantgate per round | Go peer per round, each cell "us (share)"."""
    parts = {}
    for name, _, _, _, shares in entries:
        for part, share in shares.items():
            parts[part] = max(parts.get(part, 0.0), share)
    order = sorted(parts, key=lambda p: (p != "kernel", -parts[p]))
    rows = []
    for part in order:
        cells = []
        for server in ("tenantgate", "go"):
            got = [(cpu * sh.get(part, 0.0) / 100, sh.get(part, 0.0)) for n, _, _, cpu, sh in entries if n == server]
            cells.append(" / ".join(f"{us:.1f} ({share:.1f}%)" for us, share in got) if any(s for _, s in got)
                         else "")
        rows.append((part, *cells))
    return rows


def part_deltas(entries):
    """{server: [per round with both profiles, in order: {part: a valid request's us in that
    part minus a no-work request's}]} from cpu_by_library's entries."""
    us = {}
    for name, rnd, kind, cpu, shares in entries:
        us[(name, rnd, kind)] = {part: cpu * share / 100 for part, share in shares.items()}
    out = {}
    for s in ("tenantgate", "go"):
        out[s] = []
        for (n, r, k) in sorted(us):
            if n == s and k == "valid" and (s, r, "noop") in us:
                v, w = us[(s, r, "valid")], us[(s, r, "noop")]
                out[s].append({p: v.get(p, 0.0) - w.get(p, 0.0) for p in set(v) | set(w)})
    return out


def beyond_noop_table(entries):
    """Rows part | tenantgate per round | Go peer per round: a valid request's us in that part
    minus a no-work request's, for the rounds that have both profiles; last row, the total."""
    deltas = part_deltas(entries)
    if not any(deltas.values()):
        return []
    rounds = deltas["tenantgate"] + deltas["go"]
    parts = {p for d in rounds for p in d}
    key = {p: max(d.get(p, 0.0) for d in rounds) for p in parts}

    def cell(server, part):
        got = deltas[server]
        if not any(part in d for d in got):
            return ""
        return " / ".join(f"{d.get(part, 0.0):+.1f}" for d in got)

    rows = [(part, cell("tenantgate", part), cell("go", part))
            for part in sorted(parts, key=lambda p: (p != "kernel", -key[p]))]
    rows.append(("total (CPU per valid request - CPU per no-work request)",
                 *(" / ".join(f"{sum(d.values()):+.1f}" for d in deltas[s]) for s in ("tenantgate", "go"))))
    return rows


GO_VERIFY = re.compile(r"edwards25519|/ed25519|sha512")


def library_of(dso, symbol=""):
    """The part of the profile a sample (shared object, symbol) belongs to. The Go peer is
    one static binary: its Ed25519 verifies (edwards25519 and SHA-512, as libsodium's
    share holds both) are told from the rest by the symbol's package."""
    if dso.startswith("[kernel"):
        return "kernel"
    if dso == "tenantgate-webhook":
        return "tenantgate's own code"
    if dso == "peer-go":
        if GO_VERIFY.search(symbol):
            return GO_VERIFY_PART
        return "the rest of the Go peer's binary (runtime, GC, TLS, JSON, HTTP, x509)"
    for prefix, part in LIBRARIES:
        if dso.startswith(prefix):
            return part
    return "other (" + dso + ")"
