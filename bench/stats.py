"""Mean and 95 % confidence interval of a handful of values (seeds): what every comparison and
plot of ctxbench reports beside a figure."""

from __future__ import annotations

import math
from dataclasses import dataclass

# two-sided 95 % Student t quantiles by degrees of freedom (standard table); 1.96 beyond 30
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


@dataclass(frozen=True)
class Stat:
    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half(self) -> float:
        return (self.hi - self.lo) / 2


def stat(values: list[float]) -> Stat:
    """Mean and 95 % interval; the interval is the point itself for one value."""
    n = len(values)
    if n == 0:
        return Stat(0.0, 0.0, 0.0, 0)
    m = sum(values) / n
    if n == 1:
        return Stat(m, m, m, 1)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    h = t * sd / math.sqrt(n)
    return Stat(m, m - h, m + h, n)
