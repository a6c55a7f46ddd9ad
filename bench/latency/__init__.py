"""Review latency, end to end: the whole system as real processes, a real corpus, timed REST calls."""
