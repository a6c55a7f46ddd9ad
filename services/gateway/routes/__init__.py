"""The gateway's routes, one module per area of the API, and the routers served under /v1."""

from fastapi import APIRouter

from services.gateway.routes import account, ai, analysis, auth, repositories, teams

# Every router under /v1, in the order their routes are added (services/gateway/routing.py).
V1_ROUTERS: tuple[APIRouter, ...] = (
    repositories.router,
    analysis.router,
    account.router,
    teams.router,
    auth.router,
    account.audit_router,
    teams.invitations_router,
    ai.router,
)
