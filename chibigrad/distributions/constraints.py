"""What a parameter or a value must satisfy, each printed as PyTorch prints it in its errors."""
import math

import numpy as np


class Constraint:
    def check(self, value):
        """A boolean array: where ``value`` (a tensor) satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value._array == value._array  # everything but nan


class _Boolean(Constraint):
    def check(self, value):
        return (value._array == 0) | (value._array == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value._array

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        bound = getattr(self.upper_bound, "_array", self.upper_bound)
        return value._array < bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        low, high = (getattr(b, "_array", b) for b in (self.lower_bound, self.upper_bound))
        return (low <= value._array) & (value._array <= high)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    def check(self, value):
        return (value._array % 1 == 0) & super().check(value)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Non-negative, summing to 1 along the last dim (checked per distribution, not per element)."""

    def check(self, value):
        x = value._array
        return np.all(x >= 0, axis=-1) & (np.abs(x.sum(-1) - 1) < 1e-6)


real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval
nonnegative_integer = _IntegerInterval(0, math.inf)
