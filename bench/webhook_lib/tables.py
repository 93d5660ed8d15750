"""Plain-text tables and cells of the report."""


def print_table(head, rows):
    """Columns padded to their widest cell, under a head and a line of dashes."""
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def fmt_ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.1f} ms"
