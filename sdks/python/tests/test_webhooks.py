"""Webhook verification against signatures computed here independently (Standard Webhooks)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from evalp import WebhookVerificationError, sign_webhook, verify_webhook

KEY = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY).decode()
OLD_KEY = bytes(range(100, 132))
OLD_SECRET = "whsec_" + base64.b64encode(OLD_KEY).decode()
NOW = 1_800_000_000
BODY = json.dumps({"id": "evt_1", "type": "interview.completed", "data": {"evaluation_id": "e1"}}).encode()


def signature(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(signatures: str, message_id: str = "msg_1", timestamp: int = NOW) -> dict:
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signatures}


def test_a_valid_delivery_answers_its_event():
    event = verify_webhook(SECRET, headers(signature(KEY, "msg_1", NOW, BODY)), BODY, now=NOW)
    assert event["type"] == "interview.completed"
    # Header names in any case, the body as text, the secret without its prefix.
    upper = {name.title(): value for name, value in headers(signature(KEY, "msg_1", NOW, BODY)).items()}
    assert verify_webhook(base64.b64encode(KEY).decode(), upper, BODY.decode(), now=NOW) == event


def test_the_standard_webhooks_reference_vector():
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    signed = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    assert verify_webhook(secret, signed, b'{"test": 2432232314}', now=1614265330) == {"test": 2432232314}


@pytest.mark.parametrize(
    "change",
    ["body", "id", "timestamp", "secret", "signature"],
)
def test_anything_tampered_is_refused(change):
    good = signature(KEY, "msg_1", NOW, BODY)
    body, sent, secret = BODY, headers(good), SECRET
    if change == "body":
        body = BODY.replace(b"e1", b"e2")
    elif change == "id":
        sent["webhook-id"] = "msg_2"
    elif change == "timestamp":
        sent["webhook-timestamp"] = str(NOW - 1)
    elif change == "secret":
        secret = OLD_SECRET
    else:
        sent["webhook-signature"] = good[:-4] + "AAA="
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        verify_webhook(secret, sent, body, now=NOW)


def test_a_stale_or_future_timestamp_is_refused():
    for sent_at, message in [(NOW - 301, "too old"), (NOW + 301, "too new")]:
        with pytest.raises(WebhookVerificationError, match=message):
            verify_webhook(SECRET, headers(signature(KEY, "msg_1", sent_at, BODY), timestamp=sent_at), BODY, now=NOW)
    # Within the five minutes either way, it verifies.
    for sent_at in (NOW - 299, NOW + 299):
        verify_webhook(SECRET, headers(signature(KEY, "msg_1", sent_at, BODY), timestamp=sent_at), BODY, now=NOW)


def test_a_rotated_endpoint_signs_twice_and_either_secret_verifies():
    both = f"{signature(KEY, 'msg_1', NOW, BODY)} {signature(OLD_KEY, 'msg_1', NOW, BODY)}"
    assert verify_webhook(SECRET, headers(both), BODY, now=NOW)["id"] == "evt_1"
    assert verify_webhook(OLD_SECRET, headers(both), BODY, now=NOW)["id"] == "evt_1"
    third = "whsec_" + base64.b64encode(b"z" * 32).decode()
    with pytest.raises(WebhookVerificationError):
        verify_webhook(third, headers(both), BODY, now=NOW)


def test_other_versions_and_malformed_signatures_are_ignored():
    good = signature(KEY, "msg_1", NOW, BODY)
    assert verify_webhook(SECRET, headers(f"v2,{good[3:]} v1,%%% {good}"), BODY, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(SECRET, headers(f"v2,{good[3:]}"), BODY, now=NOW)


def test_missing_headers_and_bad_input():
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify_webhook(SECRET, {"webhook-id": "m", "webhook-timestamp": str(NOW)}, BODY, now=NOW)
    with pytest.raises(WebhookVerificationError, match="timestamp"):
        verify_webhook(SECRET, headers("v1,x", timestamp="soon"), BODY, now=NOW)  # type: ignore[arg-type]
    with pytest.raises(WebhookVerificationError, match="base64"):
        verify_webhook("whsec_***", headers(signature(KEY, "msg_1", NOW, BODY)), BODY, now=NOW)


def test_sign_webhook_matches_the_independent_signature():
    assert sign_webhook(SECRET, "msg_1", NOW, BODY) == signature(KEY, "msg_1", NOW, BODY)
