"""A repository's review choices: the ``review:`` section of its ``.codereview.yml`` at the
pull request's head (the rest of the file is the analyzer's: ignored paths, disabled rules...).

    review:
      comments: false      # annotations and the check run only, no line comments
      max_comments: 5      # line comments per push, at most

A file that is absent, unreadable or wrong gives the defaults: a typo must not stop reviews.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import yaml

log = logging.getLogger(__name__)

PATH = ".codereview.yml"


@dataclass(frozen=True)
class ReviewConfig:
    comments: bool = True
    max_comments: int = 1_000_000  # no cap beyond the service's own


def parse(text: str | None) -> ReviewConfig:
    if not text:
        return ReviewConfig()
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        log.info("%s is not valid YAML, review defaults apply: %s", PATH, exc)
        return ReviewConfig()
    section = raw.get("review") if isinstance(raw, dict) else None
    if not isinstance(section, dict):
        return ReviewConfig()
    comments = section.get("comments", True)
    cap = section.get("max_comments", ReviewConfig.max_comments)
    return ReviewConfig(
        comments=comments if isinstance(comments, bool) else True,
        max_comments=cap
        if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 0
        else ReviewConfig.max_comments,
    )
