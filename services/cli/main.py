"""Review code against the conventions your repositories follow.

Configuration: --url/--token/--profile, else CODEREVIEW_URL / CODEREVIEW_TOKEN / CODEREVIEW_PROFILE,
else ~/.config/codereview/config.toml (written by `codereview login`).
Exit codes: 0 clean; 1 findings reached --fail-on; 2 bad usage (also a FILE that does not exist or
is a directory); 3 the service or configuration failed.
"""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from services.api.analysis import AnalysisResult
from services.api.schemas import Feedback
from services.cli import admin, repos
from services.cli.context import EXIT_FAILED, EXIT_FINDINGS, Options, reported, repository_for
from services.cli.output import (
    console,
    conventions_table,
    findings_table,
    merge_sarif,
    print_json,
    reaches,
    sarif_lines,
    sarif_severities,
)
from services.client import Client, api, workspace
from services.client import config as cfg
from services.client.results import merge_results

app = typer.Typer(name="codereview", help=__doc__, no_args_is_help=True, add_completion=False)
app.add_typer(repos.app, name="repo")
app.add_typer(admin.app, name="admin")


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    sarif = "sarif"


class FailOn(enum.StrEnum):
    error = "error"
    warning = "warning"
    info = "info"
    none = "none"


class Verdict(enum.StrEnum):
    accept = "accepted"
    fixed = "fixed"
    dismiss = "dismissed"
    false_positive = "false_positive"


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]
RepoOpt = Annotated[
    str | None, typer.Option("--repo", help="Repository id or owner/repo (default: this work tree's registration)")
]


@app.callback()
def main(
    ctx: typer.Context,
    url: Annotated[str | None, typer.Option(help="Service base URL, ending in /v1 (env CODEREVIEW_URL)")] = None,
    token: Annotated[str | None, typer.Option(help="Access token (env CODEREVIEW_TOKEN)")] = None,
    profile: Annotated[
        str | None, typer.Option(help="Config file profile, e.g. staging (env CODEREVIEW_PROFILE)")
    ] = None,
) -> None:
    ctx.obj = Options(url=url, token=token, profile=profile)


def options(ctx: typer.Context) -> Options:
    return ctx.find_object(Options) or Options()


@app.command()
def login(
    ctx: typer.Context,
    token: Annotated[str, typer.Option(prompt=True, hide_input=True, help="Personal access token (crp_...)")],
    url: Annotated[str | None, typer.Option(help="Service base URL")] = None,
    profile: Annotated[str | None, typer.Option(help="Save under this profile")] = None,
) -> None:
    """Check a token against auth/validate and save it with the URL in the config file."""
    opts = options(ctx)
    profile = profile or opts.profile
    with reported(), Client(url or opts.url, token, profile=profile) as client:
        who = client.send(api.validate())
        path = cfg.save(client.config.url, token, profile or "")
    console().print(f"Logged in to {client.config.url} as {who.login}; saved to {path}")


@app.command()
def review(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None,
        # click checks the paths: a missing file or a directory is bad usage (exit 2), not a finding.
        typer.Argument(help="Files to review as they are on disk", exists=True, dir_okay=False, readable=True),
    ] = None,
    staged: Annotated[
        bool, typer.Option("--staged", help="Review the staged changes: each staged file as it will be committed")
    ] = False,
    base: Annotated[str | None, typer.Option("--base", help="Review this branch's changes against BASE")] = None,
    repo: RepoOpt = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table, json or sarif")] = Format.table,
    as_json: JsonOpt = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write JSON/SARIF here, not stdout")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding reaches this")] = FailOn.error,
) -> None:
    """Review files (their current, unsaved content), the staged changes, or the branch against a base."""
    chosen = sum([bool(files), staged, base is not None])
    if chosen != 1:
        raise typer.BadParameter("give FILES, --staged or --base (exactly one)")
    fmt = Format.json if as_json else fmt
    with reported(fmt is Format.json), options(ctx).client() as client:
        where = files[0] if files else Path(".")
        root = workspace.toplevel(where)
        repo_id = repository_for(client, repo, root)
        calls = analysis_calls(root, repo_id, files or [], staged, base)
        if not calls:
            console(stderr=True).print(
                "Nothing to review: no staged change." if staged else "Nothing to review: no change since the base."
            )
            return
        if fmt is Format.sarif:
            log = merge_sarif([client.send(api.as_sarif(call)) for call in calls])
        else:
            result = merge_results([client.send(call) for call in calls])
    if fmt is Format.sarif:
        write(log, output)
        severities = sarif_severities(log)
        if output:
            sarif_lines(log)
        console(stderr=True).print(f"{len(severities)} finding(s) in SARIF{f' written to {output}' if output else ''}.")
    else:
        severities = [f.severity for f in result.findings]
        if fmt is Format.json:
            write(result.model_dump(mode="json"), output)
        if fmt is Format.table or output:
            findings_table(result)
    if reaches(severities, fail_on.value):
        raise typer.Exit(EXIT_FINDINGS)


def analysis_calls(
    root: Path, repo_id: str, files: list[Path], staged: bool, base: str | None
) -> list[api.Call[AnalysisResult]]:
    if staged:
        # Each staged file with its exact staged content: a patch alone would be applied to the
        # server's snapshot, which does not know a local commit made since the last index.
        staged_files = workspace.staged_changes(root)
        return [api.analyze_pr(repo_id, staged_files)] if staged_files else []
    if base is not None:
        changes = workspace.branch_changes(root, base)
        return [api.analyze_pr(repo_id, changes.files)] if changes.files else []
    return [api.analyze(repo_id, workspace.relative(root, f), workspace.read_text(f)) for f in files]


def write(document: Any, output: Path | None) -> None:
    if output is None:
        print_json(document)
    else:
        output.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@app.command()
def report(
    ctx: typer.Context,
    verdict: Annotated[Verdict, typer.Argument(help="accepted, fixed, dismissed or false_positive")],
    findings: Annotated[list[str], typer.Argument(help="Finding ids (f_...) or fingerprints")],
    comment: Annotated[str, typer.Option(help="Why")] = "",
    repo: RepoOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Accept or dismiss findings: dismissed ones stay quiet in this repository from now on."""
    feedback = [
        Feedback(
            finding_id=f if f.startswith("f_") else None,
            fingerprint=None if f.startswith("f_") else f,
            verdict=verdict.value,
            comment=comment,
        )
        for f in findings
    ]
    with reported(as_json), options(ctx).client() as client:
        result = client.send(api.report_findings(repository_for(client, repo), feedback=feedback))
    if as_json:
        print_json(result.model_dump(mode="json"))
        return
    unknown = result.calibration.unknown_findings
    console().print(f"Recorded {result.recorded} verdict(s).")
    if unknown:
        console(stderr=True).print(f"Not findings of this repository: {', '.join(unknown)}")
        raise typer.Exit(EXIT_FAILED)


@app.command()
def context(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="A file path (it need not exist yet)")],
    repo: RepoOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Domain, segment, conventions and history that govern a path."""
    with reported(as_json), options(ctx).client() as client:
        root = workspace.toplevel(path.parent if not path.exists() else path)
        found = client.send(api.review_context(repository_for(client, repo, root), workspace.relative(root, path)))
    if as_json:
        print_json(found.model_dump(mode="json"))
        return
    out = console()
    out.print(f"[bold]{escape(found.path)}[/] ({found.language or 'unknown language'}) at {found.commit[:12]}")
    if found.domain:
        out.print(f"domain:  {found.domain.name} ({found.domain.path_prefix})")
    if found.segment:
        out.print(f"segment: {found.segment.name} [{found.segment.kind}]")
    history = found.history.file.file if found.history.file else None
    if history:
        out.print(f"history: {history.commits} commit(s), {history.authors} author(s)")
    conventions_table(found.conventions)


@app.command()
def conventions(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="Only those governing this path")] = None,
    repo: RepoOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The conventions learned from the repository (strongest first), or those governing PATH."""
    with reported(as_json), options(ctx).client() as client:
        root = workspace.toplevel(path.parent if path and not path.exists() else path or ".")
        repo_id = repository_for(client, repo, root)
        if path:
            found = client.send(api.review_context(repo_id, workspace.relative(root, path))).conventions
        else:
            summary = client.send(api.global_context(repo_id))
            found = summary.strongest_conventions + summary.report_conventions
    if as_json:
        print_json([c.model_dump(mode="json") for c in found])
    else:
        conventions_table(found)


@app.command()
def mcp(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio")] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port")] = 8765,
    print_config: Annotated[
        bool, typer.Option("--print-config", help="Print an editor's stdio configuration for this install and exit")
    ] = False,
) -> None:
    """Run the MCP server for editor agents (stdio by default)."""
    opts = options(ctx)
    if print_config:
        print_json(editor_config(cfg.load(url=opts.url, profile=opts.profile).url))
        return
    from services.mcp.server import run  # the MCP SDK loads a web stack: only for this command

    run(url=opts.url, token=opts.token, profile=opts.profile, http=http, host=host, port=port)


def editor_config(url: str) -> dict[str, Any]:
    """The ``mcpServers`` entry for this install: the command by its absolute path, because an
    editor starts it without the virtualenv on PATH (``make run`` puts nothing on PATH)."""
    command = Path(sys.executable).absolute().with_name("codereview")
    env = {"CODEREVIEW_URL": url, "CODEREVIEW_TOKEN": "${CODEREVIEW_TOKEN}"}
    return {"mcpServers": {"codereview": {"command": str(command), "args": ["mcp"], "env": env}}}
