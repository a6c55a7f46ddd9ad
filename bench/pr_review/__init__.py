"""Pull-request review replay: real merged pull requests, push by push, through the gateway into
the real hostapp on the GitHub stand-in (``python -m bench.pr_review``)."""
