"""The shared kit: what every service needs, in one place (settings, logging, errors,
database sessions, migrations, the event bus, the outbox and inbox, gRPC plumbing)."""
