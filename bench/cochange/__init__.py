"""Co-change replay benchmark (``python -m bench.cochange``)."""
