"""Issue 39 item 2: how bench/onboard's figures grow from N = 1,000 to larger N, same run.

Pure: reads the result dicts bench/onboard made.  Per phase (Tenants, ResourceSlices) the
1,000-object run is the base; every larger tenantgate run is compared with it: time until all
done (at most 1.1 x the size ratio: <= 11x for 10,000), the webhook's own admission p99 per
path over the burst (at most 1.5x the base's), and the absolute memory targets at that size
(signer VmHWM <= 40 MB, webhook VmRSS <= 30 MB); the signer's, the API server's and etcd's CPU
over the burst, and the signer's CPU growth against the API server's (issue 47: within 10% of
that floor).  where_time_goes sums up one run's CPU and
API server time in a line.
"""
from onboard_lib.common import histogram_delta_quantile

BASE_N = 1000
TIME_GROWTH_SLACK = 1.1          # <= 11x the time for 10x the objects
P99_GROWTH = 1.5
SIGNER_RSS_MB = {1000: 20.0}     # N -> target; above 1,000 objects: 40 MB
SIGNER_RSS_LARGE_MB = 40.0
WEBHOOK_RSS_MB = 30.0
PROCESSES = ("apiserver", "etcd", "signer", "controller-manager", "webhook")


def signer_rss_target(n):
    return SIGNER_RSS_MB.get(n, 20.0 if n <= BASE_N else SIGNER_RSS_LARGE_MB)


def phase(r):
    return "slices" if "consumers" in r else "tenants"


def admission_p99(r):
    """{path: (admissions, p99 s)} of the webhook's own histogram over r's burst."""
    before, after = r.get("wh_hist") or ({}, {})
    return {k.replace("path=", ""): v for k, v in histogram_delta_quantile(before, after, 0.99).items()}


def where_time_goes(r):
    """One line: every process's CPU over the span, and the API server's requests by
    verb/resource ranked by the time it spent on them (its own metrics)."""
    span = r.get("span_s") or r.get("all_s") or 0.0
    cpu = r.get("cpu", {})
    parts = ", ".join(f"{k} {cpu[k]:.1f} s" for k in sorted(cpu, key=lambda k: -cpu[k]))
    busy = sum(cpu.values())
    reqs = {k: v for k, v in r.get("api", {}).items() if k[0] != "webhook"}
    total = sum(c for c, _ in reqs.values())
    top = sorted(reqs.items(), key=lambda kv: -kv[1][1])[:6]
    tops = ", ".join(f"{v} {res} {c:.0f} ({s:.0f} s)" for (v, res), (c, s) in top)
    return (f"where the time goes ({span:.0f} s, 2 cores = {2 * span:.0f} CPU s): CPU {parts} "
            f"(sum {busy:.0f} s, {100 * busy / max(2 * span, 1e-9):.0f}% of the cores); API server "
            f"{total:.0f} requests ({total / max(r['n'], 1):.1f} per object), most time: {tops}")


FLOOR_SLACK = 1.1               # the signer's growth within 10% of the API server's (issue 47)


def cpu_growth_rows(base, big):
    """Each process's CPU over the burst, 1,000 -> larger, and the signer's growth against
    the API server's own in the same run (the floor any implementation pays on this bed)."""
    c0, c1 = base.get("cpu", {}), big.get("cpu", {})
    rows, growth = [], {}
    for p in ("signer", "apiserver", "etcd"):
        if c0.get(p) and p in c1:
            growth[p] = c1[p] / c0[p]
            rows.append((f"{p} CPU over the burst", f"{c0[p]:.1f} s", f"{c1[p]:.1f} s", f"{growth[p]:.2f}", "", ""))
    if "signer" in growth and growth.get("apiserver"):
        ratio = growth["signer"] / growth["apiserver"]
        rows.append(("signer CPU growth / API server's (floor)", "", "", f"{ratio:.2f}", f"<= {FLOOR_SLACK:.1f}",
                     "met" if ratio <= FLOOR_SLACK else "missed"))
    return rows


def growth_rows(base, big):
    """Rows (figure, base value, big value, ratio, target, verdict) of one larger run."""
    rows = []
    grow = big["n"] / base["n"]
    limit = TIME_GROWTH_SLACK * grow
    if base.get("all_s") and big.get("done") and big.get("all_s"):
        ratio = big["all_s"] / base["all_s"]
        rows.append(("time until all done", f"{base['all_s']:.1f} s", f"{big['all_s']:.1f} s",
                     f"{ratio:.2f}", f"<= {limit:.1f}", "met" if ratio <= limit else "missed"))
    else:
        done = big.get("filled", big.get("accepted", 0))
        rows.append(("time until all done", f"{base.get('all_s') or 0:.1f} s",
                     f"not all ({done}/{big['n']})", "-", f"<= {limit:.1f}", "missed"))
    rows += cpu_growth_rows(base, big)
    p0, p1 = admission_p99(base), admission_p99(big)
    for path in sorted(set(p0) & set(p1)):
        ratio = p1[path][1] / p0[path][1] if p0[path][1] else float("inf")
        rows.append((f"webhook admission p99 {path} (own histogram)",
                     f"{1000 * p0[path][1]:.2f} ms ({p0[path][0]:.0f})",
                     f"{1000 * p1[path][1]:.2f} ms ({p1[path][0]:.0f})", f"{ratio:.2f}",
                     f"<= {P99_GROWTH:.1f}", "met" if ratio <= P99_GROWTH else "missed"))
    target = signer_rss_target(big["n"])
    hwm = big.get("hwm") or 0.0
    rows.append(("signer VmHWM (peak)", f"{base.get('hwm') or 0:.1f} MB", f"{hwm:.1f} MB",
                 f"{hwm / target:.2f}", f"<= {target:.0f} MB", "met" if 0 < hwm <= target else "missed"))
    w0, w1 = base.get("wh_mem") or {}, big.get("wh_mem") or {}
    rss, peak = w1.get("VmRSS", 0.0), w1.get("VmHWM", 0.0)
    rows.append(("webhook VmRSS / VmHWM at the end", f"{w0.get('VmRSS', 0):.1f} / {w0.get('VmHWM', 0):.1f} MB",
                 f"{rss:.1f} / {peak:.1f} MB", f"{peak / WEBHOOK_RSS_MB:.2f}", f"<= {WEBHOOK_RSS_MB:.0f} MB",
                 "met" if 0 < peak <= WEBHOOK_RSS_MB else "missed"))
    return rows


def table(head, rows):
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
    return [" | ".join(str(c).ljust(w) for c, w in zip(x, widths)).rstrip()
            for x in [head, tuple("-" * w for w in widths)] + rows]


def print_growth(results):
    """The growth table of every tenantgate phase that has a 1,000-object base and a larger run."""
    mine = [r for r in results if r.get("side") == "tenantgate"]
    for ph, what in (("tenants", "Tenants"), ("slices", "ResourceSlices")):
        base = next((r for r in mine if phase(r) == ph and r["n"] == BASE_N), None)
        bigger = [r for r in mine if phase(r) == ph and r["n"] > BASE_N]
        if not base or not bigger:
            continue
        for big in bigger:
            print()
            print(f"growth, {what}: N = {big['n']} against N = {BASE_N}, same run (issue 39 item 2; "
                  f"ratio = larger / {BASE_N} except memory: measured / target)")
            for line in table(("figure", f"N = {BASE_N}", f"N = {big['n']}", "ratio", "target", "verdict"),
                              growth_rows(base, big)):
                print(line)
