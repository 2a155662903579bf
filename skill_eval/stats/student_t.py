"""Student's t distribution for integer degrees of freedom: the upper tail and the two-sided
critical value, exact series (no scipy). Pure."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist


def _t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2 == 0:  # sin θ · (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + ... up to cos^(df−2)θ)
        term = acc = 1.0
        for j in range(2, df - 1, 2):
            term *= c * c * (j - 1) / j
            acc += term
        return s * acc
    if df == 1:
        return 2 / math.pi * theta
    term = acc = c  # 2/π · (θ + sin θ · (cos θ + 2/3 cos³θ + ... up to cos^(df−2)θ))
    for j in range(3, df - 1, 2):
        term *= c * c * (j - 1) / j
        acc += term
    return 2 / math.pi * (theta + s * acc)


def t_upper_tail(t: float, df: int) -> float:
    """P(T_df ≥ t)."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if df > 5000:
        return 1 - NormalDist().cdf(t)
    half = (1 - _t_two_sided_mass(abs(t), df)) / 2
    return half if t >= 0 else 1 - half


@lru_cache(maxsize=256)
def t_quantile(confidence: float, df: int) -> float:
    """The two-sided Student-t critical value: P(|T_df| ≤ q) = confidence (bisection)."""
    if df > 5000:  # the exact series costs O(df); z is within 1e-3 here
        return NormalDist().inv_cdf(0.5 + confidence / 2)
    lo, hi = 0.0, 1.0
    while _t_two_sided_mass(hi, df) < confidence:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if _t_two_sided_mass(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
