"""The ``codereview`` command (typer + rich). It talks to the REST surface through
``services.client`` and never imports the gateway, so it starts fast."""
