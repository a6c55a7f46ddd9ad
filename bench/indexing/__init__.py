"""Indexing speed benchmark: ``python -m bench.indexing`` (``make bench`` runs it)."""
