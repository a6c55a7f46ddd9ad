"""The gateway's cost per request: throughput under ``wrk`` beside a bare FastAPI ping app."""
