import grpc
import pytest

from services.kit.errors import CODE_TABLE, ServiceError, error_body, http_status_for
from services.kit.grpc_client import RemoteError
from tests.spec import spec_error_codes


def test_every_spec_code_is_mapped() -> None:
    codes = spec_error_codes()
    assert len(codes) >= 19
    assert codes <= set(CODE_TABLE)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("not_authenticated", 401),
        ("invalid_token", 401),
        ("oauth_failed", 401),
        ("repo_not_found", 404),
        ("file_not_found", 404),
        ("index_in_progress", 409),
        ("seat_limit_reached", 409),
        ("plan_required", 403),
        ("invalid_signature", 400),
        ("validation_failed", 422),
        ("rate_limited", 429),
        ("internal_error", 500),
    ],
)
def test_http_status_table(code: str, status: int) -> None:
    assert http_status_for(code) == status
    assert ServiceError(code, "x").http_status == status


def test_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        ServiceError("nope", "x")


def test_status_without_detail_falls_back_to_grpc_table() -> None:
    assert http_status_for("something_else", grpc.StatusCode.NOT_FOUND) == 404
    assert http_status_for("something_else") == 500


def test_error_body_shape() -> None:
    assert error_body("repo_not_found", "no such repository", {"id": "x"}) == {
        "error": "no such repository",
        "code": "repo_not_found",
        "details": {"id": "x"},
    }


def test_transient_is_one_column_of_the_table() -> None:
    transient = {code for code, entry in CODE_TABLE.items() if entry.transient}
    assert transient == {
        "service_unavailable",
        "upstream_error",
        "timeout",
        "internal_error",
        "index_in_progress",
        "rate_limited",
    }
    assert ServiceError("timeout", "slow").transient
    assert not ServiceError("validation_failed", "bad").transient
    # A peer's error keeps its code's column; one with an unknown code falls back by status.
    assert RemoteError("upstream_error", "down", {}, grpc.StatusCode.UNAVAILABLE).transient
    assert RemoteError("no_such_code", "?", {}, grpc.StatusCode.UNAVAILABLE).transient
    assert not RemoteError("no_such_code", "?", {}, grpc.StatusCode.NOT_FOUND).transient


def test_counts_in_details_cross_grpc_as_integers() -> None:
    """A Struct carries numbers as doubles: the caller gets back the integers the service sent."""
    from services.kit.grpc_client import error_from_rpc
    from services.kit.grpc_server import status_trailer

    details = {"used": 237, "cap": 200, "retry_after": 6, "share": 0.75, "nested": {"max_seats": 5}, "ids": [1, 2]}
    trailer = status_trailer(grpc.StatusCode.RESOURCE_EXHAUSTED, "cap reached", "quota_exceeded", details)
    err = grpc.aio.AioRpcError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(*trailer), "cap reached"
    )
    remote = error_from_rpc(err)
    assert remote.code == "quota_exceeded"
    assert remote.details == details
    assert all(type(remote.details[k]) is int for k in ("used", "cap", "retry_after"))
    assert type(remote.details["nested"]["max_seats"]) is int
