"""Invoice totals in integer minor units (DEC-015: never floats)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_amount: int  # minor units, e.g. cents


@dataclass(frozen=True)
class Invoice:
    number: str
    currency: str  # ISO 4217
    lines: tuple[Line, ...]

    @property
    def total(self) -> int:
        return sum(line.quantity * line.unit_amount for line in self.lines)


def idempotency_key(invoice: Invoice, attempt: int) -> str:
    # BUG-014: every charge call carries the invoice number and the attempt.
    return f"{invoice.number}:{attempt}"
