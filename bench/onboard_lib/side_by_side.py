"""tenantgate against Liqo's own controller-manager, same burst, same run (issue 39).

Pairs each tenantgate result with the Liqo result of the same phase and size and prints one
table: the four figures issue 39 sets targets on (tenantgate / Liqo), and beside them what
the time and requests are made of: the API server's requests by verb and resource and the
CPU of every process over the same span.  Pure: reads the result dicts bench/onboard made.
"""

# (figure, ratio target): tenantgate / Liqo must be at most this; None: reported only.
TARGETS = {"time": 0.5, "cpu": 0.5, "rss": 0.25, "requests": 0.5, "api_cpu": None}
CPU_PARTS = ("webhook", "apiserver", "controller-manager", "etcd")


def phase(r):
    return "slices" if "consumers" in r else "tenants"


def requests(r):
    """The API server's requests in the span (its own accounting), webhook calls excluded:
    {(verb, resource): count}."""
    return {k: v[0] for k, v in r["api"].items() if k[0] != "webhook"}


def figures(r):
    """{figure: value} of one side; time is None when nothing finished."""
    done = r.get("filled", r.get("accepted", 0))
    return {"time": r["all_s"] if r["done"] else None, "done": done,
            "cpu": r["cpu"].get("signer"), "rss": r["hwm"],
            "requests": sum(requests(r).values()) / r["n"],
            "api_cpu": r["cpu"].get("apiserver", 0.0) / r["n"]}


def verdict(ratio, target):
    if target is None:
        return "-"
    if ratio is None:
        return "n/a (a side did not finish)"
    return "met" if ratio <= target else "missed"


def compare(tg, lq):
    """Rows (figure, tenantgate, Liqo, ratio, target, verdict) for one phase and size."""
    a, b = figures(tg), figures(lq)
    n = tg["n"]
    rows = []
    fmt = {"time": ("all done (from first apply)", "{:.2f} s"),
           "cpu": ("provider process CPU (burst -> done)", "{:.2f} s"),
           "rss": ("provider process peak RSS (VmHWM)", "{:.1f} MB"),
           "requests": ("API server requests per object", "{:.1f}"),
           "api_cpu": ("API server CPU per object", "{:.2f} ms")}
    for key, target in TARGETS.items():
        name, f = fmt[key]
        scale = 1000.0 if key == "api_cpu" else 1.0
        va, vb = a[key], b[key]
        sa = f.format(va * scale) if va is not None else f"not all ({a['done']}/{n})"
        sb = f.format(vb * scale) if vb is not None else f"not all ({b['done']}/{n})"
        ratio = va / vb if va is not None and vb else None
        rows.append((name, sa, sb, "-" if ratio is None else f"{ratio:.2f}",
                     "-" if target is None else f"<= {target:.2f}", verdict(ratio, target)))
        if key == "time" and tg.get("floor_s") and vb:
            rows.append(floor_row(tg["floor_s"], vb, target))
    return rows


def floor_row(floor_s, liqo_s, target):
    """The bed's floor (bed_floor.py) against Liqo's time: no provider process finishes
    before the bed has issued the certificates, so a time target under it is out of reach."""
    ratio = floor_s / liqo_s
    return ("  bed floor: CSRs approved on sight", f"{floor_s:.2f} s", f"{liqo_s:.2f} s", f"{ratio:.2f}",
            f"<= {target:.2f}", "time target reachable" if ratio <= target else "time target out of reach")


def breakdown(tg, lq, top=12):
    """Rows (verb resource, tenantgate per object, Liqo per object) of the requests that differ
    most, then every process's CPU seconds in the span: where the difference comes from."""
    n = tg["n"]
    ra, rb = requests(tg), requests(lq)
    keys = sorted(set(ra) | set(rb), key=lambda k: -abs(ra.get(k, 0) - rb.get(k, 0)))[:top]
    rows = [(f"{verb} {res}", f"{ra.get((verb, res), 0) / n:.2f}", f"{rb.get((verb, res), 0) / n:.2f}")
            for verb, res in keys]
    for part in ("signer",) + CPU_PARTS:
        name = "provider process" if part == "signer" else part
        rows.append((f"CPU {name}", f"{tg['cpu'].get(part, 0):.2f} s", f"{lq['cpu'].get(part, 0):.2f} s"))
    return rows


def table(head, rows):
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
    return [" | ".join(str(c).ljust(w) for c, w in zip(x, widths)).rstrip()
            for x in [head, tuple("-" * w for w in widths)] + rows]


def pairs(results):
    """[(tenantgate result, Liqo result)] of the same phase and size, in run order."""
    liqo = {(phase(r), r["n"]): r for r in results if r.get("side") == "liqo"}
    return [(r, liqo[(phase(r), r["n"])]) for r in results
            if r.get("side") == "tenantgate" and (phase(r), r["n"]) in liqo]


def print_side_by_side(results):
    found = pairs(results)
    print()
    if not found:
        print("side by side: no phase finished on both sides")
        return
    print("side by side: tenantgate (webhook + signer) / Liqo v1.2.0 liqo-controller-manager "
          "(authentication module, tenantgate-webhook registered too); ratio = tenantgate / Liqo;")
    print("the beds differ only in the provider process: same webhook, bursts and controller-manager")
    for tg, lq in found:
        what = (f"{tg['n']} ResourceSlices from {tg['consumers']} consumers" if phase(tg) == "slices"
                else f"N = {tg['n']} Tenants")
        print()
        print(what)
        for line in table(("figure", "tenantgate", "Liqo", "ratio", "target", "verdict"), compare(tg, lq)):
            print(line)
        print("  requests per object that differ most, and CPU in the span:")
        for line in table(("", "tenantgate", "Liqo"), breakdown(tg, lq)):
            print("  " + line)
