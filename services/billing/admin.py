"""Admin commands (``python -m services.billing.admin``): usable before code-host sign-in exists.

Talks to the running billing service over gRPC; the address comes from ``CR_BILLING_ADDR``
or, for a system started with ``make run``, from ``.run/system.env``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import typer

from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.kit.grpc_client import call, make_channel

app = typer.Typer(add_completion=False, help=__doc__)
SYSTEM_ENV = Path(__file__).resolve().parents[2] / ".run" / "system.env"


def billing_address() -> str:
    if os.environ.get("CR_BILLING_ADDR"):
        return os.environ["CR_BILLING_ADDR"]
    if SYSTEM_ENV.exists():
        for line in SYSTEM_ENV.read_text().splitlines():
            key, _, value = line.partition("=")
            if key == "CR_BILLING_ADDR":
                return value
    return "127.0.0.1:50051"


async def _create_user(login: str, email: str, org: str, role: str) -> billing_pb2.CreateUserResponse:
    channel = make_channel(billing_address(), "services.contracts.v1.BillingService")
    try:
        stub = billing_pb2_grpc.BillingServiceStub(channel)
        request = billing_pb2.CreateUserRequest(login=login, email=email, org_name=org, org_role=role)
        return await call(stub.CreateUser, request)
    finally:
        await channel.close()


@app.callback()
def main() -> None:
    """Administration of accounts."""


@app.command("create-user")
def create_user(
    login: str = typer.Argument(..., help="The user's login"),
    email: str = typer.Option("", help="E-mail address"),
    org: str = typer.Option("", help="Create or join this organization"),
    role: str = typer.Option("team-admin", help="Role in the organization: viewer, member or team-admin"),
) -> None:
    """Create a user (optionally in an organization) and print a new personal access token."""
    response = asyncio.run(_create_user(login, email, org, role))
    typer.echo(f"user_id={response.user_id}")
    if response.org_id:
        typer.echo(f"org_id={response.org_id}")
    typer.echo(f"token={response.token}")


if __name__ == "__main__":
    app()
