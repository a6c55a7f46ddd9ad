"""``codereview admin``: administration that works before code-host sign-in exists.

Talks to the running billing service over gRPC; the address comes from ``CR_BILLING_ADDR`` or,
for a system started with ``make run``, from ``.run/system.env``. gRPC is imported only when an
admin command runs, so the rest of the CLI does not pay for it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from services.cli.context import EXIT_FAILED
from services.cli.output import console

app = typer.Typer(help="Administration of accounts (talks to the billing service directly).", no_args_is_help=True)
SYSTEM_ENV = Path(__file__).resolve().parents[2] / ".run" / "system.env"
DEFAULT_ADDRESS = "127.0.0.1:50051"
NOT_RUNNING = ("service_unavailable", "timeout")


def billing_address() -> str:
    if os.environ.get("CR_BILLING_ADDR"):
        return os.environ["CR_BILLING_ADDR"]
    if SYSTEM_ENV.exists():
        for line in SYSTEM_ENV.read_text().splitlines():
            key, _, value = line.partition("=")
            if key == "CR_BILLING_ADDR":
                return value
    return DEFAULT_ADDRESS


async def _create_user(address: str, login: str, email: str, org: str, role: str) -> Any:
    from services.contracts.v1 import billing_pb2, billing_pb2_grpc
    from services.kit.grpc_client import call, make_channel

    channel = make_channel(address, billing_pb2.DESCRIPTOR.services_by_name["BillingService"])
    try:
        stub = billing_pb2_grpc.BillingServiceStub(channel)
        request = billing_pb2.CreateUserRequest(login=login, email=email, org_name=org, org_role=role)
        return await call(stub.CreateUser, request, timeout=10)
    finally:
        await channel.close()


@app.callback()
def main() -> None:
    """Administration of accounts (talks to the billing service directly)."""


@app.command("create-user")
def create_user(
    login: Annotated[str, typer.Argument(help="The user's login")],
    email: Annotated[str, typer.Option(help="E-mail address")] = "",
    org: Annotated[str, typer.Option(help="Create or join this organization")] = "",
    role: Annotated[str, typer.Option(help="Role in the organization: viewer, member or team-admin")] = "team-admin",
) -> None:
    """Create a user (optionally in an organization) and print a new personal access token."""
    from services.kit.errors import ServiceError

    address = billing_address()
    try:
        response = asyncio.run(_create_user(address, login, email, org, role))
    except ServiceError as exc:
        if exc.code in NOT_RUNNING:
            message = (
                f"the billing service at {address} is not answering. Is the system running? "
                "Start it with `make run`, or point CR_BILLING_ADDR at billing."
            )
        else:
            message = f"{exc.message} [{exc.code}]"
        console(stderr=True).print(f"[bold red]error:[/] {escape(message)}")
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(f"user_id={response.user_id}")
    if response.org_id:
        typer.echo(f"org_id={response.org_id}")
    typer.echo(f"token={response.token}")
