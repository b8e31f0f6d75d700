"""ftcost's estimator: pure, synchronous computation with no I/O.

>>> from engine import Request, estimate
>>> est = estimate(Request(model="llama-3.1-8b", method="qlora"))
>>> round(est.memory.base_weights, 1)
5.7
"""

from engine.choices import (
    Framework,
    LoraTargets,
    Method,
    Mode,
    Optimizer,
    Precision,
    Sharding,
    StatePrecision,
)
from engine.estimate import estimate
from engine.request import Request
from engine.result import Estimate, WhatIf

__all__ = [
    "Estimate",
    "Framework",
    "LoraTargets",
    "Method",
    "Mode",
    "Optimizer",
    "Precision",
    "Request",
    "Sharding",
    "StatePrecision",
    "WhatIf",
    "estimate",
]
