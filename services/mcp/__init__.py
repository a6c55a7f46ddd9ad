"""MCP server for editor agents: the spec's ten ``service_*`` tools over stdio or streamable HTTP."""
