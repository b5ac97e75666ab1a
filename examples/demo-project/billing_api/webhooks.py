"""Stripe webhook intake: verify, store raw, dedupe on the event id (FEAT-005)."""

from __future__ import annotations

import hashlib
import hmac
import time

TOLERANCE_SECONDS = 300


def signature_ok(payload: bytes, header: str, secret: str, now: float | None = None) -> bool:
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    timestamp, expected = parts.get("t", ""), parts.get("v1", "")
    if not timestamp.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    signed = f"{timestamp}.".encode() + payload
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(digest, expected)


def is_duplicate(event_id: str, seen: set[str]) -> bool:
    if event_id in seen:
        return True
    seen.add(event_id)
    return False
