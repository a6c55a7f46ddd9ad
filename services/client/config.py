"""Where the client finds its server and token: arguments, then environment, then the config file.

- ``CODEREVIEW_URL`` / ``CODEREVIEW_TOKEN``, ``CODEREVIEW_PROFILE``, ``CODEREVIEW_CONFIG`` (file path);
- ``~/.config/codereview/config.toml`` (``$XDG_CONFIG_HOME`` respected)::

      url = "https://review.example.com/v1"
      token = "crp_..."

      [profiles.staging]
      url = "https://staging.review.example.com/v1"
      token = "crp_..."
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8080/v1"  # where `make run` puts the gateway


class ConfigError(Exception):
    """The configuration cannot be used (unreadable file, no token)."""


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("CODEREVIEW_CONFIG"):
        return Path(env["CODEREVIEW_CONFIG"]).expanduser()
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "codereview" / "config.toml"


def api_base(url: str) -> str:
    """The spec's base address ends in ``/v1``; accept the bare host too."""
    url = url.rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


@dataclass(frozen=True)
class ClientConfig:
    url: str = DEFAULT_URL
    token: str = ""
    profile: str = ""
    source: str = "default"  # where the token came from, for messages

    def require_token(self) -> str:
        if not self.token:
            raise ConfigError("no token: run `codereview login --token crp_...`, set CODEREVIEW_TOKEN, or pass --token")
        return self.token


def read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def load(
    url: str | None = None,
    token: str | None = None,
    profile: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ClientConfig:
    env = os.environ if env is None else env
    path = config_path(env)
    data = read_file(path)
    profile = profile or env.get("CODEREVIEW_PROFILE") or str(data.get("profile", ""))
    section: dict[str, Any] = data
    if profile:
        section = data.get("profiles", {}).get(profile)
        if not isinstance(section, dict):
            # `login --profile NEW --url --token` creates it: what it needs is given.
            if not (url and token):
                raise ConfigError(f"no profile {profile!r} in {path}")
            section = {}
    file_url, file_token = section.get("url"), section.get("token")
    chosen_url = url or env.get("CODEREVIEW_URL") or (file_url if isinstance(file_url, str) else "") or DEFAULT_URL
    if token:
        chosen_token, source = token, "argument"
    elif env.get("CODEREVIEW_TOKEN"):
        chosen_token, source = env["CODEREVIEW_TOKEN"], "CODEREVIEW_TOKEN"
    elif isinstance(file_token, str) and file_token:
        chosen_token, source = file_token, str(path)
    else:
        chosen_token, source = "", "none"
    return ClientConfig(url=api_base(chosen_url), token=chosen_token, profile=profile, source=source)


def save(url: str, token: str, profile: str = "", env: Mapping[str, str] | None = None) -> Path:
    """Write url and token (under ``[profiles.<profile>]`` when named), keeping other profiles."""
    path = config_path(env)
    data = read_file(path)
    if profile:
        data.setdefault("profiles", {})[profile] = {"url": url, "token": token}
    else:
        data.update(url=url, token=token)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The token is a secret: the file is created readable by its owner only.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(dump_toml(data))
    return path


def toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string here


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML for this file's shape: string keys at the top, then one table per profile."""
    lines = [f"{key} = {toml_string(value)}" for key, value in data.items() if isinstance(value, str)]
    for name, table in sorted(data.get("profiles", {}).items()):
        lines += ["", f"[profiles.{toml_string(name)}]"]
        lines += [f"{key} = {toml_string(value)}" for key, value in table.items() if isinstance(value, str)]
    return "\n".join(lines) + "\n"
