"""The browser session's cookie and CSRF rules (services/web/session.py), without a browser:
what Set-Cookie says on loopback and off it, and which requests count as same-origin."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from services.web.session import SESSION, csrf_ok, csrf_token, set_cookie


def request(host: str, scheme: str = "http", method: str = "POST", **headers: str) -> Request:
    raw = [(b"host", host.encode()), *((k.replace("_", "-").encode(), v.encode()) for k, v in headers.items())]
    return Request(
        {"type": "http", "scheme": scheme, "method": method, "path": "/", "headers": raw, "query_string": b""}
    )


def cookie_of(req: Request) -> str:
    response = Response()
    set_cookie(response, req, SESSION, "crs_abc", 3600)
    return response.headers["set-cookie"]


def test_off_loopback_the_cookie_is_secure_and_host_prefixed() -> None:
    header = cookie_of(request("review.example.com", scheme="https"))
    assert header.startswith("__Host-cr_session=crs_abc;")
    for part in ("HttpOnly", "Secure", "Path=/", "SameSite=lax", "Max-Age=3600"):
        assert part in header
    assert "Domain" not in header
    # Behind a proxy that terminates TLS, a public host name is enough to make it Secure.
    assert "Secure" in cookie_of(request("review.example.com", scheme="http"))


def test_on_loopback_plain_http_works_for_development() -> None:
    header = cookie_of(request("127.0.0.1:8080"))
    assert header.startswith("cr_session=crs_abc;")
    assert "HttpOnly" in header
    assert "SameSite=lax" in header
    assert "Secure" not in header


def test_state_changing_requests_need_the_session_bound_token_from_this_origin() -> None:
    good = csrf_token("crs_abc")
    assert good != csrf_token("crs_other")  # bound to the session
    assert csrf_ok(
        request("h.test", x_csrf_token=good, origin="https://h.test", sec_fetch_site="same-origin"), "POST", "crs_abc"
    )
    assert not csrf_ok(request("h.test"), "POST", "crs_abc")
    assert not csrf_ok(request("h.test", x_csrf_token=csrf_token("crs_other")), "POST", "crs_abc")
    assert not csrf_ok(request("h.test", x_csrf_token=good, origin="https://evil.test"), "DELETE", "crs_abc")
    assert not csrf_ok(request("h.test", x_csrf_token=good, sec_fetch_site="cross-site"), "PATCH", "crs_abc")
    assert csrf_ok(request("h.test", method="GET"), "GET", "crs_abc")  # reads change nothing
