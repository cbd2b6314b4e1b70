"""The orthogonal polar factor as lib/compare/polar_factor.cpp documents it, in CPython floats.

Every operation is one IEEE double operation (Python floats have no FMA and no reassociation), in the order
the library's comments give, so the library's result must equal this one bit for bit whatever flags it was
compiled with. Written from the documented algorithm, not from the C++: it is the test's independent source.

Usage: polar_reference.py n m00 m01 ... (n * n float.hex() values, row by row); prints n * n float.hex()
values, row by row.
"""

import math
import sys

MAX_STEPS = 50
CONVERGED = math.ldexp(1.0, -26)
SCALING_OFF = 0.01
SINGULAR_SHIFT = math.ldexp(1.0, -40)


def frobenius(x):
    total = 0.0
    for row in x:
        for v in row:
            total += v * v
    return math.sqrt(total)


def inverse(x):
    """Gauss-Jordan with partial pivoting on an augmented copy [X | I]: returns None on a zero pivot."""
    n = len(x)
    a = [row[:] + [1.0 if j == i else 0.0 for j in range(n)] for i, row in enumerate(x)]
    for p in range(n):
        best, best_row = abs(a[p][p]), p
        for i in range(p + 1, n):
            if abs(a[i][p]) > best:
                best, best_row = abs(a[i][p]), i
        if not best > 0.0:
            return None
        a[p], a[best_row] = a[best_row], a[p]
        pivot = a[p][p]
        a[p] = [v / pivot for v in a[p]]
        for i in range(n):
            if i != p:
                factor = a[i][p]
                a[i] = [vi - factor * vp for vi, vp in zip(a[i], a[p])]
    return [row[n:] for row in a]


def newton(x):
    n = len(x)
    scaling = True
    for _ in range(MAX_STEPS):
        y = inverse(x)
        if y is None:
            return None
        norm_y = frobenius(y)
        if not math.isfinite(norm_y):
            return None
        zeta = math.sqrt(norm_y / frobenius(x)) if scaling else 1.0
        nxt = [[0.5 * (zeta * x[i][j] + y[j][i] / zeta) for j in range(n)] for i in range(n)]
        moved = frobenius([[nxt[i][j] - x[i][j] for j in range(n)] for i in range(n)])
        if not math.isfinite(moved):
            return None
        x = nxt
        if moved <= CONVERGED:
            return x
        if moved <= SCALING_OFF * frobenius(x):
            scaling = False
    return None


def polar_factor(m):
    n = len(m)
    identity = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    if not all(math.isfinite(v) for row in m for v in row):
        return [[math.nan] * n for _ in range(n)]
    largest = max(abs(v) for row in m for v in row)
    if largest == 0.0:
        return identity
    exponent = math.frexp(largest)[1]
    x = [[math.ldexp(v, -exponent) for v in row] for row in m]
    polar = newton(x)
    if polar is None:
        shifted = [[v + SINGULAR_SHIFT if i == j else v for j, v in enumerate(row)] for i, row in enumerate(x)]
        polar = newton(shifted)
    return identity if polar is None else polar


def main(argv):
    n = int(argv[1])
    values = [float.fromhex(v) for v in argv[2:]]
    if len(values) != n * n:
        raise SystemExit(f"expected {n * n} values, got {len(values)}")
    m = [values[i * n:(i + 1) * n] for i in range(n)]
    print(" ".join(v.hex() for row in polar_factor(m) for v in row))


if __name__ == "__main__":
    main(sys.argv)
