"""The exceptions the package raises."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

import httpx

__all__ = [
    "EvalpError",
    "ApiError",
    "WebhookVerificationError",
    "AgentError",
    "AgentCommandError",
    "AgentSessionSuperseded",
    "AgentDisconnected",
]

_CODE_BY_STATUS = {
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "unavailable",
    504: "upstream_timeout",
}


class EvalpError(Exception):
    """The base of every exception of this package."""


class ApiError(EvalpError):
    """What the API answered when it refused a request (docs/errors.md).

    ``code`` is the contract's error code. A request that failed validation (422 with a list of
    problems) has ``code == "validation_error"`` and the problems in ``context["detail"]`` (also
    ``problems``), as an error frame of the realtime doors has.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        context: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[str] = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.context: Dict[str, Any] = context if context is not None else {}
        #: The request's id (from the body, else the ``X-Request-Id`` header): quote it when reporting.
        self.request_id = request_id
        #: What ``Retry-After`` said, when the server said.
        self.retry_after = retry_after

    @property
    def problems(self) -> List[Dict[str, Any]]:
        """The problems of a validation error (``{type, loc, msg, ...}``), else an empty list."""
        detail = self.context.get("detail")
        return list(detail) if isinstance(detail, list) else []

    @classmethod
    def from_response(cls, response: httpx.Response) -> "ApiError":
        """The error a (read) response stands for."""
        header_id = response.headers.get("x-request-id")
        retry_after = response.headers.get("retry-after")
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        detail = body.get("detail") if isinstance(body, Mapping) else None
        if isinstance(detail, Mapping) and isinstance(detail.get("code"), str):
            message = detail.get("message")
            context = detail.get("context")
            request_id = detail.get("request_id")
            return cls(
                response.status_code,
                str(detail["code"]),
                message if isinstance(message, str) else f"HTTP {response.status_code}",
                dict(context) if isinstance(context, Mapping) else {},
                request_id if isinstance(request_id, str) else header_id,
                retry_after,
            )
        if isinstance(detail, list):
            message = "; ".join(
                ".".join(str(part) for part in problem.get("loc", [])) + f": {problem.get('msg', '')}"
                for problem in detail
                if isinstance(problem, Mapping)
            )
            return cls(
                response.status_code,
                "validation_error",
                message or "validation failed",
                {"detail": detail},
                header_id,
                retry_after,
            )
        # Not the API's envelope (a proxy's page, an empty body): the status says what it can.
        return cls(
            response.status_code,
            _CODE_BY_STATUS.get(response.status_code, "internal"),
            f"unexpected response: HTTP {response.status_code}",
            {},
            header_id,
            retry_after,
        )


class WebhookVerificationError(EvalpError):
    """A webhook request that is not a correctly signed, recent delivery of the endpoint's secret."""


class AgentError(EvalpError):
    """The agent door could not do what was asked."""


class AgentCommandError(AgentError):
    """An agent command answered with an error frame (its ``code``, ``message``, ``context``)."""

    def __init__(self, command_id: Optional[str], code: str, message: str, context: Dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.command_id = command_id
        self.code = code
        self.message = message
        self.context = context

    @property
    def problems(self) -> List[Dict[str, Any]]:
        detail = self.context.get("detail")
        return list(detail) if isinstance(detail, list) else []


class AgentSessionSuperseded(AgentError):
    """A newer agent session took the interview over: this session's token is refused from now on.

    The agent should stop: another worker drives the interview."""


class AgentDisconnected(AgentError):
    """The agent socket closed and could not be reopened (token expired, retries exhausted)."""
