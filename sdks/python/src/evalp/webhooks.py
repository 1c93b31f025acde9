"""Verifying webhook deliveries (Standard Webhooks, docs/webhooks.md)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from .errors import WebhookVerificationError

__all__ = ["verify_webhook", "sign_webhook", "TOLERANCE_SECONDS"]

#: How far a delivery's ``webhook-timestamp`` may be from now, either way.
TOLERANCE_SECONDS = 5 * 60
_SECRET_PREFIX = "whsec_"
_DIGITS = re.compile(r"^\d+$")

Headers = Mapping[str, Union[str, Sequence[str]]]


def _secret_bytes(secret: str) -> bytes:
    """The key bytes of a ``whsec_<base64>`` secret (the prefix is optional, as the standard says)."""
    encoded = secret[len(_SECRET_PREFIX):] if secret.startswith(_SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not base64") from None
    if not key:
        raise WebhookVerificationError("the secret is empty")
    return key


def _header(headers: Headers, name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value if isinstance(value, str) else " ".join(value)
    return None


def _signature(key: bytes, message_id: str, timestamp: str, body: bytes) -> bytes:
    return hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()


def verify_webhook(
    secret: str,
    headers: Headers,
    body: Union[bytes, str],
    *,
    now: Optional[float] = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> Dict[str, Any]:
    """The event a webhook request carries, once its signature checks out; else raises
    ``WebhookVerificationError``.

    ``body`` must be the request body exactly as received (bytes, before any JSON parsing).
    ``webhook-signature`` may hold several space-separated ``v1,<base64>`` signatures: one
    matching is enough, so both secrets verify during a rotation. The ``webhook-timestamp`` must
    be within ``tolerance`` seconds of now, either way (a replayed old delivery is refused).
    """
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing required headers")
    if not _DIGITS.match(timestamp):
        raise WebhookVerificationError("invalid webhook-timestamp")
    age = int(time.time() if now is None else now) - int(timestamp)
    if age > tolerance:
        raise WebhookVerificationError("message timestamp too old")
    if age < -tolerance:
        raise WebhookVerificationError("message timestamp too new")

    raw = body.encode() if isinstance(body, str) else bytes(body)
    expected = _signature(_secret_bytes(secret), message_id, timestamp, raw)
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version != "v1" or not value:
            continue
        try:
            given = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(given, expected):
            event = json.loads(raw)
            if not isinstance(event, dict):
                raise WebhookVerificationError("the body is not an event")
            return event
    raise WebhookVerificationError("no matching signature found")


def sign_webhook(secret: str, message_id: str, timestamp: int, body: Union[bytes, str]) -> str:
    """The ``v1,<base64>`` signature of a delivery (what the platform sends), e.g. to test a receiver."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    return "v1," + base64.b64encode(_signature(_secret_bytes(secret), message_id, str(timestamp), raw)).decode()
