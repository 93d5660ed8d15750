"""bench/onboard's parts (bench/onboard is the entry; see its header for what it measures)."""
