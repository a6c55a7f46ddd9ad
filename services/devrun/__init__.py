"""Local run of the whole system: infrastructure (embedded or configured), migrations,
and the five service processes."""
