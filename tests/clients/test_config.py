"""Where the client's url and token come from: argument > environment > config file (profiles)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from services.client import config as cfg


def test_precedence_and_profiles(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    path = cfg.save("http://prod.example:8000", "crp_file", env=env)
    cfg.save("https://staging.example/v1", "crp_staging", profile="staging", env=env)
    assert path == tmp_path / "codereview" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    from_file = cfg.load(env=env)
    assert (from_file.url, from_file.token, from_file.source) == ("http://prod.example:8000/v1", "crp_file", str(path))
    staging = cfg.load(env={**env, "CODEREVIEW_PROFILE": "staging"})
    assert (staging.url, staging.token) == ("https://staging.example/v1", "crp_staging")
    from_env = cfg.load(env={**env, "CODEREVIEW_URL": "http://env:1/", "CODEREVIEW_TOKEN": "crp_env"})
    assert (from_env.url, from_env.token, from_env.source) == ("http://env:1/v1", "crp_env", "CODEREVIEW_TOKEN")
    explicit = cfg.load(url="http://arg:2/v1", token="crp_arg", env={**env, "CODEREVIEW_TOKEN": "crp_env"})
    assert (explicit.url, explicit.token) == ("http://arg:2/v1", "crp_arg")


def test_missing_profile_and_missing_token_say_what_to_do(tmp_path: Path) -> None:
    env = {"CODEREVIEW_CONFIG": str(tmp_path / "none.toml")}
    with pytest.raises(cfg.ConfigError, match="no profile"):
        cfg.load(profile="nope", env=env)
    with pytest.raises(cfg.ConfigError, match="codereview login"):
        cfg.load(env=env).require_token()


def test_a_new_profile_can_be_logged_into_with_its_url_and_token(tmp_path: Path) -> None:
    """docs/cli.md: `codereview --profile staging login --url ... --token ...` creates the profile."""
    env = {"CODEREVIEW_CONFIG": str(tmp_path / "config.toml")}
    fresh = cfg.load(url="https://staging.example/v1", token="crp_new", profile="staging", env=env)
    assert (fresh.url, fresh.token, fresh.profile) == ("https://staging.example/v1", "crp_new", "staging")
    with pytest.raises(cfg.ConfigError, match="no profile"):
        cfg.load(url="https://staging.example/v1", profile="staging", env=env)  # no token: it must exist
