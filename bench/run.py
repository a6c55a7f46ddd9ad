"""``make bench``: every benchmark, each in its own process; a missing one is reported, not fatal."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

BENCHMARKS = (
    "bench.indexing",
    "bench.indexing.at_scale",
    "bench.quality",
    "bench.replay",
    "bench.determinism",
    "bench.latency",
    "bench.cochange",
    "bench.pr_review",
    "bench.gateway",
)


def main() -> int:
    failed = []
    for module in BENCHMARKS:
        if importlib.util.find_spec(module) is None:
            print(f"== {module}: not present, skipped")
            continue
        print(f"== {module}", flush=True)
        if subprocess.run([sys.executable, "-m", module, *sys.argv[1:]], check=False).returncode != 0:
            failed.append(module)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
