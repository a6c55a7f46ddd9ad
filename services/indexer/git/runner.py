"""Run git in a sealed environment: no user/system config, no hooks, no prompts, only the
transports the caller allows, bounded time and output.

Every command goes through ``git_argv``/``sealed_env`` so that hardening cannot be
forgotten at a call site. Secrets (an access token) travel only in the environment via
``GIT_CONFIG_COUNT``: argv is world-readable in /proc and remote URLs are persisted in the
mirror's config, the environment is neither.
"""

from __future__ import annotations

import base64
import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from services.indexer.git.errors import (
    GIT_FAILED,
    OUTPUT_TOO_LARGE,
    TIMEOUT,
    GitError,
    GitOperationError,
)
from services.indexer.git.fsck import FSCK_CONFIG

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024
_STDERR_KEEP = 64 * 1024
_POLL_SECONDS = 0.25

KNOWN_PROTOCOLS = frozenset({"https", "http", "ssh", "git", "file"})

# Operator-level variables that legitimately shape networking; everything else is dropped
# so GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_SSH_COMMAND, ... of the service process never leak in.
_PASSTHROUGH_ENV = (
    "PATH",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
)

# Applied as `-c` to every command; command-line config outranks any repository config, which
# matters when we run inside an operator-registered local repository whose .git/config we do
# not control (core.fsmonitor and diff.external would otherwise run arbitrary programs).
_SEALED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.quotePath", "false"),
    ("credential.helper", ""),
    # Objects are checked as they arrive; only malformed history is let through (fsck.py).
    *FSCK_CONFIG,
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("http.sslVerify", "true"),
    # A redirect could point the fetch at an internal host after URL validation passed.
    ("http.followRedirects", "false"),
    ("gc.autoDetach", "false"),
    ("maintenance.autoDetach", "false"),
    ("color.ui", "false"),
    ("diff.external", ""),
    ("log.showSignature", "false"),
)


@dataclass(frozen=True)
class GitAccess:
    """What a command may reach over the network and with which credentials."""

    protocols: tuple[str, ...] = ("https",)
    token: str | None = field(default=None, repr=False)
    token_username: str = "x-access-token"
    token_scope: str = ""  # URL prefix the auth header is limited to ("" = any URL)
    resolve: tuple[str, ...] = ()  # curl "host:port:addr" pins, closing DNS rebinding
    ssh_command: str = "ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes"

    def __post_init__(self) -> None:
        unknown = set(self.protocols) - KNOWN_PROTOCOLS
        if unknown:
            raise ValueError(f"unknown git protocols: {sorted(unknown)}")

    def auth_header(self) -> str | None:
        if not self.token:
            return None
        pair = f"{self.token_username}:{self.token}".encode()
        return "Authorization: Basic " + base64.b64encode(pair).decode()

    def secrets(self) -> list[str]:
        header = self.auth_header()
        return [s for s in (self.token, header and header.split(" ", 2)[-1]) if s]


LOCAL_ONLY = GitAccess(protocols=())


@dataclass(frozen=True)
class GitResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str


def git_argv(
    args: Sequence[str],
    access: GitAccess,
    user_args: Sequence[str] = (),
    config: Mapping[str, str] | None = None,
    git_dir: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The full argv; ``user_args`` always follow ``--`` so they can never be read as options.

    ``git_dir`` names the repository explicitly: discovery from the working directory could
    otherwise walk up into an enclosing repository when the intended one is missing.
    """
    git = shutil.which("git") or "git"
    argv = [git, "--no-pager"]
    if git_dir is not None:
        argv.append(f"--git-dir={os.fspath(git_dir)}")
    argv += ["-c", "protocol.allow=never"]
    for proto in access.protocols:
        argv += ["-c", f"protocol.{proto}.allow=always"]
    for key, value in _SEALED_CONFIG:
        argv += ["-c", f"{key}={value}"]
    for pin in access.resolve:
        argv += ["-c", f"http.curloptResolve={pin}"]
    for key, value in (config or {}).items():
        argv += ["-c", f"{key}={value}"]
    argv += list(args)
    if user_args:
        argv += ["--", *user_args]
    return argv


def sealed_env(home: str, access: GitAccess, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASSTHROUGH_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=home,
        LANG="C",
        LC_ALL="C",
        TZ="UTC",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_SYSTEM="/dev/null",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_TERMINAL_PROMPT="0",
        GIT_PROTOCOL_FROM_USER="0",
        GIT_ALLOW_PROTOCOL=":".join(access.protocols),
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_ATTR_NOSYSTEM="1",
        GIT_SSH_COMMAND=access.ssh_command,
        GIT_SSH_VARIANT="ssh",
    )
    header = access.auth_header()
    if header:
        key = f"http.{access.token_scope}.extraHeader" if access.token_scope else "http.extraHeader"
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=key, GIT_CONFIG_VALUE_0=header)
    if extra:
        env.update(extra)
    return env


def _env_for(
    home: str, access: GitAccess, extra: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None
) -> dict[str, str]:
    env = sealed_env(home, access, extra)
    if cwd is None:
        # Without an explicit cwd git runs in the empty HOME; never let it discover a repository
        # above it (the service's own checkout, say) and act on that instead.
        env.setdefault("GIT_CEILING_DIRECTORIES", os.path.dirname(home))
    return env


def _redact(text: str, access: GitAccess) -> str:
    for secret in access.secrets():
        text = text.replace(secret, "***")
    return text


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # git forks helpers (remote-https, index-pack, shell aliases); kill them all, not just git.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _failure(args: Sequence[str], returncode: int, stderr: str) -> GitOperationError:
    first = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return GitOperationError(GIT_FAILED, f"git {args[0]} failed (exit {returncode}): {first}", stderr)


def run_git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    git_dir: str | os.PathLike[str] | None = None,
    user_args: Sequence[str] = (),
    access: GitAccess = LOCAL_ONLY,
    config: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_output: int = DEFAULT_MAX_OUTPUT,
    check: bool = True,
    abort_check: Callable[[], GitError | None] | None = None,
) -> GitResult:
    """Run one git command to completion with bounded time and stdout.

    ``abort_check`` is polled a few times a second while git runs, so a caller can stop a
    clone whose on-disk size is already past its budget instead of waiting for the end.
    """
    argv = git_argv(args, access, user_args, config, git_dir)
    with tempfile.TemporaryDirectory(prefix="git-home-") as home:
        proc = subprocess.Popen(
            argv,
            cwd=cwd if cwd is not None else home,
            env=_env_for(home, access, env, cwd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            stdout, stderr_raw = _collect(proc, time.monotonic() + timeout, max_output, abort_check, args)
        finally:
            if proc.poll() is None:
                _kill_group(proc)
            proc.wait()
            assert proc.stdout is not None
            assert proc.stderr is not None
            proc.stdout.close()
            proc.stderr.close()
    stderr = _redact(stderr_raw.decode("utf-8", "replace"), access)
    result = GitResult(tuple(argv), proc.returncode, stdout, stderr)
    if check and proc.returncode != 0:
        raise _failure(args, proc.returncode, stderr)
    return result


def _collect(
    proc: subprocess.Popen[bytes],
    deadline: float,
    max_output: int,
    abort_check: Callable[[], GitError | None] | None,
    args: Sequence[str],
) -> tuple[bytes, bytes]:
    assert proc.stdout is not None
    assert proc.stderr is not None
    out: list[bytes] = []
    err = bytearray()
    size = 0
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill_group(proc)
                raise GitOperationError(TIMEOUT, f"git {args[0]} timed out", err.decode("utf-8", "replace"))
            if abort_check is not None:
                reason = abort_check()
                if reason is not None:
                    _kill_group(proc)
                    raise reason
            for key, _ in sel.select(min(remaining, _POLL_SECONDS)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.data == "out":
                    size += len(chunk)
                    if size > max_output:
                        _kill_group(proc)
                        raise GitOperationError(
                            OUTPUT_TOO_LARGE, f"git {args[0]} produced more than {max_output} bytes"
                        )
                    out.append(chunk)
                elif len(err) < _STDERR_KEEP:
                    err += chunk[: _STDERR_KEEP - len(err)]
        # Pipes closed; the process is exiting. A wedged exit still honours the deadline.
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise GitOperationError(TIMEOUT, f"git {args[0]} timed out") from None
    finally:
        sel.close()
    return b"".join(out), bytes(err)


class GitStream:
    """A long-lived git process read incrementally (log, cat-file --batch).

    A watchdog kills the whole process group at the deadline, which turns a hung read
    into EOF; ``finish``/``close`` then report the timeout.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        git_dir: str | os.PathLike[str] | None = None,
        user_args: Sequence[str] = (),
        access: GitAccess = LOCAL_ONLY,
        config: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        stdin: bool = False,
    ) -> None:
        self.args = tuple(args)
        self._access = access
        self._home = tempfile.TemporaryDirectory(prefix="git-home-")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self.timed_out = False
        try:
            self.proc = subprocess.Popen(
                git_argv(args, access, user_args, config, git_dir),
                cwd=cwd if cwd is not None else self._home.name,
                env=_env_for(self._home.name, access, env, cwd),
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
            )
        except BaseException:
            self._home.cleanup()
            self._stderr.close()
            raise
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def _expire(self) -> None:
        self.timed_out = True
        _kill_group(self.proc)

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return _redact(self._stderr.read(_STDERR_KEEP).decode("utf-8", "replace"), self._access)

    def check_alive(self) -> None:
        """Raise the reason the process stopped early (timeout or git's own failure)."""
        if self.timed_out:
            raise GitOperationError(TIMEOUT, f"git {self.args[0]} timed out", self.stderr_text())
        code = self.proc.poll()
        if code is not None and code != 0:
            raise _failure(self.args, code, self.stderr_text())

    def finish(self) -> None:
        """Wait for a normal exit and raise if git failed or timed out."""
        try:
            self.proc.wait()
        finally:
            self._timer.cancel()
        self.check_alive()

    def close(self) -> None:
        self._timer.cancel()
        if self.proc.poll() is None:
            _kill_group(self.proc)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self.proc.wait()
        self._stderr.close()
        self._home.cleanup()

    def __enter__(self) -> GitStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
