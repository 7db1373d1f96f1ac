"""Resource vectors of any number of dimensions (vcores, memory, GPUs, ...).

Nothing here assumes two dimensions: a `Resources` is a tuple of non-negative finite amounts whose
meaning is given by the cluster's dimension names (`DEFAULT_DIMENSIONS` unless the driver says otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_DIMENSIONS: tuple[str, ...] = ("vcores", "memory_mb")

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Resources:
    """An amount of each resource dimension. Values must be finite and >= 0."""

    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.values) == 0:
            raise ValueError("Resources: at least one dimension is required")
        for i, v in enumerate(self.values):
            f = float(v)
            if not math.isfinite(f) or f < 0:
                raise ValueError(f"Resources.values[{i}] must be finite and >= 0, got {v!r}")
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))

    @classmethod
    def of(cls, *values: float) -> Resources:
        return cls(tuple(values))

    @classmethod
    def from_mapping(cls, amounts: dict[str, float], dims: Sequence[str] = DEFAULT_DIMENSIONS) -> Resources:
        unknown = set(amounts) - set(dims)
        if unknown:
            raise ValueError(f"Resources: unknown dimension(s) {sorted(unknown)}; known {list(dims)}")
        return cls(tuple(float(amounts.get(d, 0.0)) for d in dims))

    @property
    def dims(self) -> int:
        return len(self.values)

    def as_array(self) -> FloatArray:
        return np.asarray(self.values, dtype=np.float64)

    def fits_in(self, other: Resources) -> bool:
        self._same_dims(other)
        return all(a <= b for a, b in zip(self.values, other.values, strict=True))

    def is_zero(self) -> bool:
        return all(v == 0.0 for v in self.values)

    def __add__(self, other: Resources) -> Resources:
        self._same_dims(other)
        return Resources(tuple(a + b for a, b in zip(self.values, other.values, strict=True)))

    def __sub__(self, other: Resources) -> Resources:
        """Component-wise difference, clamped at zero (free capacity never goes negative)."""
        self._same_dims(other)
        return Resources(tuple(max(0.0, a - b) for a, b in zip(self.values, other.values, strict=True)))

    def scaled(self, k: float) -> Resources:
        return Resources(tuple(v * k for v in self.values))

    def _same_dims(self, other: Resources) -> None:
        if len(other.values) != len(self.values):
            raise ValueError(f"Resources: dimension mismatch {len(self.values)} vs {len(other.values)}")


def total(items: Iterable[Resources], dims: int) -> Resources:
    acc = [0.0] * dims
    for r in items:
        if r.dims != dims:
            raise ValueError(f"Resources: dimension mismatch {r.dims} vs {dims}")
        for i, v in enumerate(r.values):
            acc[i] += v
    return Resources(tuple(acc))
