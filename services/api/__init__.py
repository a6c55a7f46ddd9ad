"""The shapes of the REST ``/v1`` surface as pydantic models, shared by the gateway and the clients.

Only pydantic here: the CLI and the MCP server import this package and must not pay for FastAPI.
"""
