"""When and how long the clients wait before sending a request again (docs/errors.md).

The same rules as the TypeScript client: a write keeps its ``Idempotency-Key`` on every retry, so
the server runs it at most once and answers a retry of a finished write with that write's answer.
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from typing import Optional

import httpx

#: The statuses whose requests are tried again: the server asked the client to come back later
#: (429, 503), or did not say whether it ran the request (504), which the same key makes safe to
#: ask again. A 409 is retried only when its code is ``idempotency_key_in_use``.
RETRIED_STATUSES = frozenset({429, 503, 504})

#: The methods that get an ``Idempotency-Key``.
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """How many tries a request gets and how long the waits between them may be."""

    #: Tries in all, the first included; 1 turns retrying off.
    attempts: int = 3
    #: The first wait in seconds when the answer names none, doubled at each retry.
    base_delay: float = 0.5
    #: The longest wait in seconds. A ``Retry-After`` asking for longer is not waited for: the
    #: answer is returned (or raised) as it is, rather than hiding a long wait in a call.
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays cannot be negative")


NO_RETRY = RetryPolicy(attempts=1, base_delay=0, max_delay=0)


def policy_of(retry: "RetryPolicy | bool | None") -> RetryPolicy:
    """The policy a client option names: ``None``/``True`` the default, ``False`` none."""
    if retry is None or retry is True:
        return RetryPolicy()
    if retry is False:
        return NO_RETRY
    return retry


_DELTA = re.compile(r"^\d+$")
_LETTER = re.compile(r"[a-z]", re.IGNORECASE)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds (delta seconds or an HTTP date); ``None`` when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    trimmed = value.strip()
    if _DELTA.match(trimmed):
        return float(int(trimmed))
    # An HTTP date names its day and month ("Wed, 25 Nov 2026 10:00:05 GMT"); "-1" is no date.
    if not _LETTER.search(trimmed):
        return None
    try:
        at = email.utils.parsedate_to_datetime(trimmed)
    except (TypeError, ValueError, IndexError):
        return None
    if at.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, at.timestamp() - current)


def backoff(retry: int, policy: RetryPolicy) -> float:
    """The wait before retry number ``retry`` (1 for the first) when the answer names none."""
    return float(min(policy.base_delay * 2 ** (retry - 1), policy.max_delay))


def retry_delay(
    retry_after: Optional[str], retry: int, policy: RetryPolicy, now: Optional[float] = None
) -> Optional[float]:
    """How long to wait before retry number ``retry``: what ``Retry-After`` says, else the backoff;
    ``None`` when the server asks for longer than the policy allows."""
    asked = parse_retry_after(retry_after, now)
    if asked is None:
        return backoff(retry, policy)
    if asked > policy.max_delay:
        return None
    return asked


def asks_for_retry(response: httpx.Response) -> bool:
    """Whether an answer says to try again later: a retried status, or the key still in use.

    The response must have been read (``response.read()`` / ``await response.aread()``)."""
    if response.status_code in RETRIED_STATUSES:
        return True
    if response.status_code != 409:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    detail = body.get("detail") if isinstance(body, dict) else None
    return isinstance(detail, dict) and detail.get("code") == "idempotency_key_in_use"
