"""bench/webhook's parts (bench/webhook is the entry; see its header for what it measures)."""
