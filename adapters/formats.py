"""Numbers and names as every reply writes them: GB, dollars, hours, ages, token and
parameter counts, method labels. One place, so the report, the price commands, the
announcements and the follow-up change lines agree.

>>> fmt_gb(52.5), fmt_money(1234.5), fmt_hours(0.5), fmt_tokens(5e7), fmt_params(7e10)
('52.5 GB', '$1,234', '30 min', '50M', '70.00B')
"""

from __future__ import annotations

from engine.choices import Method
from engine.wording import tokens_text

METHOD_LABELS = {Method.FULL: "Full", Method.LORA: "LoRA", Method.QLORA: "QLoRA"}



def fmt_gb(gb: float, beside: float | None = None) -> str:
    """``gb`` as a reply shows it; to two decimals where one would equal ``beside``'s."""
    if beside is not None and fmt_gb(gb) == fmt_gb(beside) and gb != beside:
        return f"{gb:,.2f} GB"
    return f"{gb:,.0f} GB" if gb >= 100 else f"{gb:.1f} GB"


def fmt_money(usd: float | None) -> str:
    if usd is None:
        return "n/a"
    if usd >= 100:
        return f"${usd:,.0f}"
    return f"${usd:,.2f}"


def fmt_hours(hours: float | None) -> str:
    if hours is None:
        return "n/a"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:,.1f} d"


def fmt_age(seconds: float) -> str:
    """``just now``, ``12 min``, ``3 h``, ``4 d``."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds // 3600:.0f} h"
    return f"{seconds // 86400:.0f} d"


def fmt_tokens(n: float) -> str:
    """``50M``, ``1.5B``, ``3T`` (:func:`engine.wording.tokens_text`)."""
    return tokens_text(n)


def fmt_params(n: float) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"
