"""What every command needs: the client built from the global options, the repository a
command is about, and the one place where failures become a message and an exit code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.markup import escape

from services.api.repositories import Repository
from services.cli.output import console
from services.client import ApiError, Client, ConfigError, api, workspace
from services.client.retry import Wait

# Exit codes: 0 clean, 1 findings reached --fail-on, 2 bad usage (typer), 3 the service or the
# configuration failed the command.
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_FAILED = 3


@dataclass
class Options:
    url: str | None = None
    token: str | None = None
    profile: str | None = None

    def client(self) -> Client:
        client = Client(self.url, self.token, profile=self.profile, on_wait=waiting)
        client.config.require_token()
        return client


def waiting(wait: Wait) -> None:
    """Say what a pause is for, so a command that waits never looks hung."""
    console(stderr=True).print(f"waiting {wait.seconds:g}s: {escape(wait.reason)}")


def fail(
    message: str, body: dict[str, object] | None = None, as_json: bool = False, code: int = EXIT_FAILED
) -> typer.Exit:
    if as_json and body is not None:
        from services.cli.output import print_json

        print_json(body)
    console(stderr=True).print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def usage(message: str, body: dict[str, object] | None = None, as_json: bool = False) -> typer.Exit:
    return fail(message, body, as_json, EXIT_USAGE)


@contextmanager
def reported(as_json: bool = False) -> Iterator[None]:
    """Service errors and configuration problems as one line (and the error body with --json)."""
    try:
        yield
    except ApiError as exc:
        hint = ""
        if exc.code == "service_unavailable":
            hint = " (is the service running? check --url / CODEREVIEW_URL)"
        elif exc.status == 401:
            hint = " (run `codereview login`)"
        raise fail(f"{exc.error} [{exc.code}]{hint}", exc.body(), as_json) from None
    except ConfigError as exc:
        raise fail(str(exc), {"error": str(exc), "code": "not_authenticated", "details": {}}, as_json) from None
    except ValidationError as exc:  # an argument the request model refuses
        error = ApiError.invalid(exc)
        raise fail(f"{error.error} [{error.code}]", error.body(), as_json) from None
    except OSError as exc:  # a file that vanished or cannot be read while the command ran
        message = f"cannot read {exc.filename or 'a file'}: {exc.strerror or exc}"
        raise usage(message, {"error": message, "code": "validation_failed", "details": {}}, as_json) from None


def repository_for(client: Client, repo: str | None, where: Path | str = ".") -> str:
    """``--repo`` / ``CODEREVIEW_REPO``, else the registered repository of the work tree here."""
    chosen = repo or os.environ.get("CODEREVIEW_REPO")
    if chosen:
        return chosen
    root = workspace.toplevel(where)
    found = find_registered(client, root)
    if found is None:
        raise workspace.not_registered(root)
    return found.id


def find_registered(client: Client, root: Path) -> Repository | None:
    cursor = ""
    while True:
        page = client.send(api.list_repositories(limit=500, cursor=cursor))
        found = workspace.match(page.repositories, root)
        if found or not page.page.next_cursor:
            return found
        cursor = page.page.next_cursor
