"""Error bodies as exceptions (docs/errors.md)."""

from __future__ import annotations

import httpx

from evalp import ApiError


def response(status: int, body: object = None, headers: dict = None, text: str = None) -> httpx.Response:
    if text is not None:
        return httpx.Response(status, text=text, headers=headers or {})
    return httpx.Response(status, json=body, headers=headers or {})


def test_the_application_envelope():
    error = ApiError.from_response(response(
        403,
        {"detail": {"code": "forbidden", "message": "no", "context": {"required_scope": "x:y"}, "request_id": "r1"}},
        {"x-request-id": "other"},
    ))
    assert (error.status, error.code, error.message, error.request_id) == (403, "forbidden", "no", "r1")
    assert error.context == {"required_scope": "x:y"}
    assert "forbidden" in str(error)


def test_a_validation_error_list():
    problems = [{"type": "missing", "loc": ["body", "name"], "msg": "Field required"}]
    error = ApiError.from_response(response(422, {"detail": problems}, {"x-request-id": "r2"}))
    assert error.code == "validation_error"
    assert error.problems == problems
    assert error.context == {"detail": problems}
    assert error.request_id == "r2"
    assert error.message == "body.name: Field required"


def test_a_body_that_is_not_the_envelope():
    error = ApiError.from_response(response(502, text="<html>bad gateway</html>", headers={"x-request-id": "r3"}))
    assert (error.status, error.code, error.request_id) == (502, "internal", "r3")
    assert ApiError.from_response(response(429, text="")).code == "rate_limited"
