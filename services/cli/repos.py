"""``codereview repo``: register, list, show and index repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from services.api.repositories import IndexStatus
from services.cli.context import EXIT_FAILED, Options, reported, repository_for
from services.cli.output import console, print_json
from services.client import Client, api, workspace

app = typer.Typer(help="Register, list, show and index repositories.", no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]
RepoArg = Annotated[str | None, typer.Argument(help="Repository id or owner/repo (default: this work tree's)")]


def options(ctx: typer.Context) -> Options:
    return ctx.find_object(Options) or Options()


@app.command("add")
def add(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="Local work tree (default: the one here)")] = None,
    url: Annotated[str | None, typer.Option(help="Register a git URL instead")] = None,
    full_name: Annotated[str | None, typer.Option("--full-name", help="Register a hosted owner/repo")] = None,
    org: Annotated[str | None, typer.Option("--org", help="Owning organization id")] = None,
    index: Annotated[bool, typer.Option("--index", help="Index it at once and wait")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Register a repository (a local path by default). Registering twice returns the same one."""
    with reported(as_json), options(ctx).client() as client:
        if url or full_name:
            repo = client.send(api.create_repository(url=url, full_name=full_name, org_id=org))
        else:
            repo = client.send(api.create_repository(path=str(workspace.toplevel(path or ".")), org_id=org))
        status = wait(client, repo.id, incremental=False, quiet=as_json) if index else None
    if as_json:
        print_json({**repo.model_dump(mode="json"), **({"index": status.model_dump(mode="json")} if status else {})})
    else:
        console().print(f"{repo.id}  {repo.name}  ({repo.kind} {repo.source})")
    if status and status.state != "ready":
        raise typer.Exit(EXIT_FAILED)


@app.command("list")
def list_(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Repositories you can access, newest first."""
    with reported(as_json), options(ctx).client() as client:
        listing = client.send(api.list_repositories(limit=500))
    if as_json:
        print_json(listing.model_dump(mode="json"))
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "name", "kind", "source", "index", "head"):
        table.add_column(column, overflow="fold")
    for repo in listing.repositories:
        state = repo.index.state if repo.index else ""
        head = (repo.index.head_sha if repo.index else "")[:12]
        table.add_row(repo.id, repo.name, repo.kind, repo.source, state or "never indexed", head)
    console().print(table)


@app.command("status")
def status(ctx: typer.Context, repo: RepoArg = None, as_json: JsonOpt = False) -> None:
    """Index state and the commit of the last successful index."""
    with reported(as_json), options(ctx).client() as client:
        current = client.send(api.index_status(repository_for(client, repo)))
    if as_json:
        print_json(current.model_dump(mode="json"))
    else:
        describe(current)


@app.command("index")
def index(
    ctx: typer.Context,
    repo: RepoArg = None,
    incremental: Annotated[bool, typer.Option(help="Re-read only files whose content changed")] = False,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once the run is queued")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Index (or refresh) a repository, with a progress bar until it is ready."""
    with reported(as_json), options(ctx).client() as client:
        repo_id = repository_for(client, repo)
        if no_wait:
            final = client.send(api.index_repo(repo_id, incremental))
        else:
            final = wait(client, repo_id, incremental, quiet=as_json)
    if as_json:
        print_json(final.model_dump(mode="json"))
    else:
        describe(final)
    if final.state == "failed":
        raise typer.Exit(EXIT_FAILED)


def wait(client: Client, repo_id: str, incremental: bool, quiet: bool) -> IndexStatus:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console(stderr=True), transient=True, disable=quiet) as bar:
        task = bar.add_task("queued", total=None)

        def show(status: IndexStatus) -> None:
            total = status.files_total or None
            bar.update(task, description=status.phase or status.state, completed=status.files_done, total=total)

        return client.wait_for_index(repo_id, trigger=True, incremental=incremental, on_progress=show)


def describe(status: IndexStatus) -> None:
    out = console()
    state = status.state or "never indexed"
    out.print(f"state: {state}")
    if status.head_sha:
        out.print(f"head:  {status.head_sha}")
    if status.state in ("queued", "indexing"):
        out.print(f"phase: {status.phase or '-'}  files {status.files_done}/{status.files_total}")
    if status.error:
        out.print(f"error: {status.error} [{status.error_code}]")
