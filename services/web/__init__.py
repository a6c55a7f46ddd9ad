"""The web dashboard the gateway serves at ``/``: pages, the browser session, offline assets.

The pages are a client of the public ``/v1`` API like any other; the browser reaches it through
``/ui/api/*``, which turns the HttpOnly session cookie into the ``Authorization`` header
(docs/dashboard.md). Imported by the gateway only: workers and the CLI never load it.
"""
