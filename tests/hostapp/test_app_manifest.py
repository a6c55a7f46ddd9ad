"""The GitHub App manifest (deploy/github-app-manifest.json) subscribes to every event hostapp
handles and asks for the permissions its calls need, and no more."""

from __future__ import annotations

import json
from pathlib import Path

from services.hostapp import conversation, webhooks

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "github-app-manifest.json"
# Sent to every app without a subscription (and not accepted in default_events).
ALWAYS_SENT = {"installation", "installation_repositories"}


def test_the_manifest_subscribes_to_every_handled_event() -> None:
    manifest = json.loads(MANIFEST.read_text())
    handled = set(webhooks.HANDLERS) | set(conversation.HANDLERS)
    assert set(manifest["default_events"]) == handled - ALWAYS_SENT
    assert manifest["default_permissions"] == {
        "checks": "write",  # check runs and their annotations
        "pull_requests": "write",  # reviews, replies, thread resolution, reactions read
        "contents": "read",  # clones and .codereview.yml
        "metadata": "read",
        "issues": "read",  # issue_comment events: commands in the pull request's conversation
    }
    assert manifest["hook_attributes"]["url"].endswith("/webhooks/code_host")
