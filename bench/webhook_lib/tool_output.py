"""What the load tools print (wrk, h2load), parsed."""
import re

from .proc import BenchError


def parse_wrk(out):
    def dur(s):
        m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", s)
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[m.group(2)]
    res = {"rps": float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))}
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", out, re.M)
        res[f"p{pct}_ms"] = dur(m.group(1)) if m else None
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    res["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: (.*)", out)
    res["socket_errors"] = m.group(1) if m else ""
    return res


def parse_h2load(out):
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                  out)
    fin = re.search(r"finished in ([0-9.]+)(ms|s), ([0-9.]+) req/s", out)
    if not m or not fin:
        raise BenchError(f"cannot parse h2load output:\n{out}")
    secs = float(fin.group(1)) / (1000.0 if fin.group(2) == "ms" else 1.0)
    proto = re.search(r"Application protocol: (\S+)", out)
    return {"succeeded": int(m.group(4)), "failed": int(m.group(5)) + int(m.group(6)), "seconds": secs,
            "proto": proto.group(1) if proto else "?"}
