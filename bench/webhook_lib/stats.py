"""Medians, percentiles and histogram quantiles of measured values."""
import bisect
import statistics


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def percentile(ordered, p):
    """The same rank as webhook_load's percentile(): the p-th of the sorted values."""
    if not ordered:
        return 0
    return ordered[max(0, min(int(p * len(ordered) + 0.5) - 1, len(ordered) - 1))]


def summarize(h):
    """Mean, and p50/p99 interpolated inside buckets as PromQL's histogram_quantile does."""
    if not h["count"]:
        return None
    bounds = sorted(h["buckets"])
    cum = [h["buckets"][b] for b in bounds]

    def quantile(q):
        rank = q * cum[-1]
        i = bisect.bisect_left(cum, rank)
        if bounds[i] == float("inf"):
            return bounds[i - 1]
        lo, below = (bounds[i - 1], cum[i - 1]) if i > 0 else (0.0, 0.0)
        return lo + (bounds[i] - lo) * (rank - below) / max(1e-9, cum[i] - below)
    return {"count": h["count"], "mean": h["sum"] / h["count"], "p50": quantile(0.5), "p99": quantile(0.99),
            "buckets": h["buckets"]}
