"""URL and path validation, and the sealed runner, against real git."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from services.indexer.git.errors import GitInputError, GitOperationError
from services.indexer.git.mirror import ensure_mirror
from services.indexer.git.paths import (
    validate_local_repository,
    validate_repo_path,
    validate_rev,
    validate_sha,
)
from services.indexer.git.runner import GitAccess, GitStream, git_argv, run_git, sealed_env
from services.indexer.git.urls import is_public_address, parse_origins, validate_clone_url

ZONE = {
    "github.com": ["140.82.121.4"],
    "localhost": ["127.0.0.1"],
    "internal.example": ["10.1.2.3"],
    "mixed.example": ["140.82.121.4", "192.168.1.5"],
    "v6.example": ["2606:4700::6810:84e5"],
    "meta.example": ["169.254.169.254"],
}


def resolver(host: str, port: int) -> list[str]:
    if host not in ZONE:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return ZONE[host]


def _git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True
    )
    return out.stdout.decode()


def _repo(path: Path, bare: bool = False) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", *(["--bare"] if bare else []))
    if not bare:
        (path / "a.txt").write_text("hello\n")
        _git(path, "add", "a.txt")
        _git(path, "commit", "-qm", "init")
    return path


# --- clone URLs -------------------------------------------------------------------------

HOSTILE = [
    ("ext::sh -c touch% /tmp/pwned", "validation_failed"),
    ("ext::sh", "forbidden_scheme"),
    ("fd::17", "forbidden_scheme"),
    ("transport::https://github.com/x", "forbidden_scheme"),
    ("--upload-pack=touch /tmp/x", "validation_failed"),
    ("-uhttps://github.com/x", "validation_failed"),
    ("file:///etc", "forbidden_scheme"),
    ("FILE:///etc/passwd", "forbidden_scheme"),
    ("/etc/passwd", "validation_failed"),
    ("./repo", "validation_failed"),
    ("../repo", "validation_failed"),
    ("~/repo", "validation_failed"),
    ("git@github.com:org/repo.git", "validation_failed"),
    ("https://user:pw@github.com/x", "validation_failed"),
    ("https://user@github.com/x", "validation_failed"),
    ("https://:pw@github.com/x", "validation_failed"),
    ("http://127.0.0.1/x", "forbidden_scheme"),
    ("ssh://git@github.com/org/repo.git", "forbidden_scheme"),
    ("git://github.com/org/repo.git", "forbidden_scheme"),
    ("https://127.0.0.1/x", "forbidden_host"),
    ("https://[::1]/x", "forbidden_host"),
    ("https://[::ffff:10.0.0.1]/x", "forbidden_host"),
    ("https://[fe80::1]/x", "forbidden_host"),
    ("https://0.0.0.0/x", "forbidden_host"),
    ("https://169.254.169.254/latest/meta-data", "forbidden_host"),
    ("https://localhost/x", "forbidden_host"),
    ("https://internal.example/x", "forbidden_host"),
    ("https://mixed.example/x", "forbidden_host"),
    ("https://meta.example/x", "forbidden_host"),
    ("https://2130706433/x", "validation_failed"),
    ("https://0x7f.1/x", "validation_failed"),
    ("https://nowhere.invalid/x", "unresolvable_host"),
    ("https://github.com", "validation_failed"),
    ("https://github.com/", "validation_failed"),
    ("https://github.com/org/repo?ref=main", "validation_failed"),
    ("https://github.com/org/repo#main", "validation_failed"),
    ("https://github.com/org/../../x", "validation_failed"),
    ("https://github.com/org/repo\n", "validation_failed"),
    ("https://github.com\x00/org/repo", "validation_failed"),
    ("https://github.com:99999/x", "validation_failed"),
    ("https://-oproxy.example/x", "validation_failed"),
    ("https://github.com\\@evil.example/x", "validation_failed"),
    ("", "validation_failed"),
]


@pytest.mark.parametrize(("url", "code"), HOSTILE)
def test_hostile_urls_are_refused_with_a_typed_code(url: str, code: str) -> None:
    with pytest.raises(GitInputError) as info:
        validate_clone_url(url, resolver=resolver)
    assert info.value.code == code


def test_ssh_username_cannot_smuggle_an_option() -> None:
    with pytest.raises(GitInputError) as info:
        validate_clone_url("ssh://-oProxyCommand=x@github.com/r", allowed_schemes=["ssh"], resolver=resolver)
    assert info.value.code == "validation_failed"


def test_public_https_url_is_accepted_and_pinned() -> None:
    url = validate_clone_url("HTTPS://GitHub.com/org/repo.git", resolver=resolver)
    assert (url.scheme, url.host, url.port, url.path) == ("https", "github.com", 443, "/org/repo.git")
    assert url.addresses == ("140.82.121.4",)
    assert url.curl_resolve_pins() == ("github.com:443:140.82.121.4",)
    assert url.scope() == "https://github.com/"


def test_ipv6_pins_are_bracketed() -> None:
    url = validate_clone_url("https://v6.example:8443/r", allowed_origins={("v6.example", 8443)}, resolver=resolver)
    assert url.curl_resolve_pins() == ("v6.example:8443:[2606:4700::6810:84e5]",)
    assert url.scope() == "https://v6.example:8443/"


def test_operator_may_allow_more_schemes_and_private_hosts() -> None:
    with pytest.raises(GitInputError) as info:
        validate_clone_url("http://127.0.0.1/x", allowed_schemes=["https", "http"], resolver=resolver)
    assert info.value.code == "forbidden_host"
    ok = validate_clone_url(
        "http://127.0.0.1:8080/x",
        allowed_schemes=["https", "http"],
        allow_private_hosts=True,
        allowed_origins=parse_origins("127.0.0.1:8080"),
    )
    assert (ok.host, ok.port) == ("127.0.0.1", 8080)
    ssh = validate_clone_url("ssh://git@github.com/org/r.git", allowed_schemes=["ssh"], resolver=resolver)
    assert ssh.scheme == "ssh"


@pytest.mark.parametrize("port", [22, 80, 8443, 5432])
def test_https_urls_use_port_443_unless_the_operator_allows_the_origin(port: int) -> None:
    # Before: any port was accepted, so a clone URL could probe ssh, databases, admin panels.
    with pytest.raises(GitInputError) as info:
        validate_clone_url(f"https://github.com:{port}/o/r.git", resolver=resolver)
    assert info.value.code == "forbidden_port"
    with pytest.raises(GitInputError):  # allowing the host on its default port allows no other
        validate_clone_url(
            f"https://github.com:{port}/o/r.git", allowed_origins={("github.com", None)}, resolver=resolver
        )
    allowed = parse_origins(f"github.com:{port}")
    assert (
        validate_clone_url(f"https://github.com:{port}/o/r.git", allowed_origins=allowed, resolver=resolver).port
        == port
    )
    assert validate_clone_url("https://github.com:443/o/r.git", resolver=resolver).port == 443


def test_an_allowed_origin_may_resolve_to_a_private_address() -> None:
    private = lambda host, port: ["10.0.0.7"]  # noqa: E731
    with pytest.raises(GitInputError) as info:
        validate_clone_url("https://git.corp.example/o/r.git", resolver=private)
    assert info.value.code == "forbidden_host"
    allowed = parse_origins("git.corp.example, other.example:8443")
    url = validate_clone_url("https://git.corp.example/o/r.git", allowed_origins=allowed, resolver=private)
    assert url.addresses == ("10.0.0.7",)
    with pytest.raises(GitInputError) as info:  # the allow-list names origins, not whole hosts' ports
        validate_clone_url("https://git.corp.example:8443/o/r.git", allowed_origins=allowed, resolver=private)
    assert info.value.code == "forbidden_port"


def test_clone_origin_settings_parse() -> None:
    assert parse_origins(" git.corp:8443, [::1]:22 ,Example.COM.,") == {
        ("git.corp", 8443),
        ("::1", 22),
        ("example.com", None),
    }
    with pytest.raises(ValueError, match="port must be a number"):
        parse_origins("git.corp:https")


def test_file_can_never_be_allowed_as_a_clone_scheme() -> None:
    with pytest.raises(ValueError, match="not allowable"):
        validate_clone_url("file:///etc", allowed_schemes=["file"])


def test_public_address_classification() -> None:
    assert is_public_address("8.8.8.8")
    assert not is_public_address("100.64.0.1")  # carrier-grade NAT
    assert not is_public_address("2002:7f00:1::1")  # 6to4 wrapping 127.0.0.1
    assert not is_public_address("224.0.0.1")


# --- repository paths and revisions ---------------------------------------------------


@pytest.mark.parametrize("path", ["src/a.py", "dir name/ü.py"])
def test_valid_repo_paths_are_taken_as_sent(path: str) -> None:
    assert validate_repo_path(path) == path


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "a/../b.py",  # one rule everywhere (services.kit.paths): no '..' at all
        "..",
        ".",
        "./a//b",
        "a\x00b",
        "a\\b",
        "C:/x",
        ".git/config",
        "a/.GIT/x",
        "x" * 4097,
    ],
)
def test_invalid_repo_paths_are_refused(path: str) -> None:
    with pytest.raises(GitInputError) as info:
        validate_repo_path(path)
    assert info.value.code == "validation_failed"


def test_revisions_and_shas() -> None:
    assert validate_rev("feature/x-1") == "feature/x-1"
    assert validate_rev("HEAD~3") == "HEAD~3"
    for bad in ["-n", "--upload-pack=x", "a..b", "HEAD:secret", "a b", "main\n", ""]:
        with pytest.raises(GitInputError):
            validate_rev(bad)
    assert validate_sha("a" * 40) == "a" * 40
    with pytest.raises(GitInputError):
        validate_sha("A" * 40)


def test_local_repository_must_be_a_repo_root_under_an_allowed_root(tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    repo = _repo(root / "repo")
    bare = _repo(root / "bare.git", bare=True)
    outside = _repo(tmp_path / "outside")
    (root / "plain").mkdir()
    (root / "link").symlink_to(outside)

    found = validate_local_repository(repo, [root])
    assert (found.path, found.git_dir, found.bare) == (repo.resolve(), repo.resolve() / ".git", False)
    assert validate_local_repository(str(bare), [str(root)]).bare is True

    cases = {
        str(outside): "path_not_allowed",
        str(root / "link"): "path_not_allowed",
        str(root / ".." / "outside"): "path_not_allowed",
        str(root / "plain"): "not_a_repository",
        str(root / "missing"): "not_a_repository",
        "allowed/repo": "validation_failed",
    }
    (repo / "sub").mkdir()
    cases[str(repo / "sub")] = "not_a_repository"  # inside a repo is not the repo
    for candidate, code in cases.items():
        with pytest.raises(GitInputError) as info:
            validate_local_repository(candidate, [root])
        assert info.value.code == code, candidate


# --- the sealed runner --------------------------------------------------------------------


def test_token_travels_in_env_never_argv(tmp_path: Path) -> None:
    access = GitAccess(token="s3cr3t-token", token_scope="https://github.com/")
    argv = git_argv(["fetch", "origin"], access)
    assert not any("s3cr3t" in a for a in argv)
    env = sealed_env(str(tmp_path), access)
    assert env["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraHeader"
    # git itself sees the header as configuration, scoped to the forge's URL.
    result = run_git(["config", "--get-urlmatch", "http.extraHeader", "https://github.com/o/r"], access=access)
    expected = base64.b64encode(b"x-access-token:s3cr3t-token").decode()
    assert result.stdout.decode().strip() == f"Authorization: Basic {expected}"
    other = run_git(
        ["config", "--get-urlmatch", "http.extraHeader", "https://evil.example/r"], access=access, check=False
    )
    assert other.returncode == 1


def test_user_and_system_config_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leaky = tmp_path / "gitconfig"
    leaky.write_text("[user]\n\tname = leak\n[alias]\n\tst = status\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(leaky))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nope"))
    assert run_git(["config", "--get", "user.name"], check=False).returncode == 1
    env = sealed_env(str(tmp_path / "home"), GitAccess())
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert "GIT_DIR" not in env


def test_repository_hooks_and_fsmonitor_never_run(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (repo / ".git" / "hooks" / "pre-commit").symlink_to(hook)
    _git(repo, "config", "core.fsmonitor", str(hook))
    ident = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@e"}
    run_git(["commit", "--allow-empty", "-qm", "x"], cwd=repo, env=ident)
    run_git(["status", "--porcelain"], cwd=repo)
    assert not marker.exists()
    _git(repo, "status", "--porcelain")  # control: plain git does run the configured fsmonitor
    assert marker.exists()


def test_ext_and_option_urls_do_nothing_even_if_they_reach_git(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for url in [f"ext::sh -c touch% {marker}", f"--upload-pack=touch {marker}"]:
        result = run_git(["clone", "--bare", "-q"], user_args=[url, str(tmp_path / "dest")], check=False)
        assert result.returncode != 0
        assert not marker.exists()
    with pytest.raises(GitOperationError) as info:
        run_git(["clone", "--bare", "-q"], user_args=[f"ext::sh -c touch% {marker}", str(tmp_path / "d2")])
    assert info.value.code == "git_failed"
    assert "not allowed" in info.value.stderr
    assert not marker.exists()


def test_file_transport_needs_explicit_permission(tmp_path: Path) -> None:
    source = _repo(tmp_path / "src")
    url = f"file://{source}"
    denied = run_git(["clone", "--bare", "-q"], user_args=[url, str(tmp_path / "d1")], check=False)
    assert denied.returncode != 0
    assert "transport 'file' not allowed" in denied.stderr
    run_git(["clone", "--bare", "-q"], user_args=[url, str(tmp_path / "d2")], access=GitAccess(protocols=("file",)))
    assert (tmp_path / "d2" / "HEAD").is_file()


def test_timeout_kills_the_whole_process_group() -> None:
    started = time.monotonic()
    with pytest.raises(GitOperationError) as info:
        run_git(["slow"], config={"alias.slow": "!sleep 30"}, timeout=0.5)
    assert info.value.code == "timeout"
    assert time.monotonic() - started < 5


def test_output_is_bounded(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    with pytest.raises(GitOperationError) as info:
        run_git(["log", "-p", "--format=%H%n%B"], cwd=repo, max_output=10)
    assert info.value.code == "output_too_large"


def test_stream_watchdog_turns_a_hang_into_a_timeout() -> None:
    started = time.monotonic()
    with GitStream(["slow"], config={"alias.slow": "!sleep 30"}, timeout=0.5) as stream:
        assert stream.stdout.read() == b""  # EOF once the watchdog killed the group
        with pytest.raises(GitOperationError) as info:
            stream.finish()
    assert info.value.code == "timeout"
    assert time.monotonic() - started < 5


def test_https_mirror_connects_only_to_the_vetted_address(tmp_path: Path) -> None:
    # repo.test does not exist in DNS; the pin makes git connect to the address we
    # validated (a closed local port), which proves the fetch cannot be re-resolved elsewhere.
    url = validate_clone_url(
        "https://repo.test:9/org/r.git", allowed_origins={("repo.test", 9)}, resolver=lambda h, p: ["127.0.0.1"]
    )
    with pytest.raises(GitOperationError) as info:
        ensure_mirror(url, tmp_path / "r.git", token="tok-123", timeout=20)
    assert info.value.code == "git_failed"
    assert "Could not resolve host" not in info.value.stderr
    assert "127.0.0.1" in info.value.stderr or "port 9" in info.value.stderr
    assert "tok-123" not in info.value.stderr
    assert [p.name for p in tmp_path.iterdir()] == [".r.git.lock"]
