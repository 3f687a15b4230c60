import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qlib.meanfield import fluid, tails
from qlib.meanfield.degrees import DegreeDistribution as D


def closed_form_log(lam, d, i):
    """log q*(i) = ((d+1)^i - 1)/d log λ for the point mass at d."""
    if d == 0:
        return i * math.log(lam)
    return (((d + 1) ** i - 1) / d) * math.log(lam)


U = 2.0**-53  # unit roundoff of IEEE double


@pytest.mark.parametrize("d", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("lam", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999])
def test_equilibrium_point_mass_closed_form(d, lam):
    q = fluid.equilibrium(lam, D.point(d))
    assert q[0] == 1.0 and q[-1] < 1e-16 and q[-2] >= 1e-16
    # exact reference: q*(i) = λ^{a_i}, a_i = ((d+1)^i - 1)/d an integer, in
    # 50-digit arithmetic (λ is the double it is, so this is the exact value)
    mpmath.mp.dps = 50
    a = [((d + 1) ** i - 1) // d if d else i for i in range(len(q))]
    exact = [mpmath.mpf(lam) ** ai for ai in a]
    rel = max(abs(mpmath.mpf(float(x)) / e - 1) for x, e in zip(q, exact))
    # equilibrium computes λ^{a_i} with one pow (glibc: error < 1 ulp) and no
    # other operation for a point mass, so ≤ 2u is the honest bound; the issue
    # asks for 1e-14
    assert rel <= 2 * U


def _reference(lam, p, K):
    """q*(0..K) in 60-digit arithmetic, for the pmf renormalised exactly."""
    mpmath.mp.dps = 60
    c = [mpmath.mpf(v) for v in p.pmf.tolist()]
    tot = mpmath.fsum(c)
    c = [v / tot for v in c][::-1]
    x, out = mpmath.mpf(1), [mpmath.mpf(1)]
    for _ in range(K):
        x = mpmath.mpf(lam) * x * mpmath.polyval(c, x)
        out.append(x)
    return out


def _random_law(rng):
    while True:
        w = rng.random(7) * (rng.random(7) < 0.7)
        if rng.random() < 0.3:
            w[0] = 0.0
        if w.sum() > 0:
            return D(w / w.sum())


@pytest.mark.parametrize("k", range(40))
def test_equilibrium_general_law_accuracy(k):
    rng = np.random.default_rng([20261202, k])
    p = _random_law(rng)
    lam = float(rng.choice([0.3, 0.7, 0.9, 0.99]))
    q = fluid.equilibrium(lam, p)
    ref = _reference(lam, p, len(q) - 1)
    m, M = p.min_degree, p.max_degree
    # First-order error budget (see the Notes of fluid.equilibrium), with
    # L_i = log q*(i), ℓ_i = log ψ(q*(i)), θ_i = xψ'(x)/ψ(x) at x = q*(i):
    # * ℓ_{j-1} is computed with relative error <= c1 u, c1 = 3(M-m) + 3
    #   (M-m same-sign expm1 terms, then log1p with condition <= 1.5 when
    #   ψ > 1/2; Horner with positive terms, relative error 2(M-m)u, then log
    #   when ψ <= 1/2, where |ℓ| >= log 2), and log x, its argument, carries
    #   3u|L_{j-1}| (a_j·log λ + S), which moves ℓ by θ times that;
    # * an error δ in L_{j-1} reaches L_j multiplied by dL_j/dL_{j-1} =
    #   1 + f'(L_{j-1}), f(L) = log φ(e^L), and f is convex with f(0) = 0, so
    #   f'(L) <= f(L)/L and 1 + f'(L_{j-1}) <= L_j/L_{j-1}: relative errors of
    #   L never grow, they only add up:
    #   |δL_i|/|L_i| <= u Σ_{j<=i} (c1 |ℓ_{j-1}| + 3 θ_{j-1} |L_{j-1}|)/|L_j|;
    # * S is summed in double-double (O(u^2)); pow, exp and two products: 4u.
    c1 = 3 * (M - m) + 3
    psi = [mpmath.mpf(v) for v in p.pmf[m:].tolist()]
    dpsi = [k * v for k, v in enumerate(psi)]
    acc, L_prev, ell_prev, th_prev = 0.0, 0.0, 0.0, 0.0
    for i, (x, r) in enumerate(zip(q, ref)):
        if r < 1e-300:
            break
        L = abs(float(mpmath.log(r)))
        if i >= 1:
            acc += (c1 * ell_prev + 3 * th_prev * L_prev) / L
        assert abs(mpmath.mpf(float(x)) / r - 1) <= (4 + acc * L) * U, (i, acc)
        ps = mpmath.polyval(psi[::-1], r)
        L_prev, ell_prev = L, abs(float(mpmath.log(ps)))
        th_prev = float(r * mpmath.polyval(dpsi[::-1][:-1], r) / ps) if M > m else 0.0


def test_equilibrium_too_many_levels():
    with pytest.raises(RuntimeError):
        fluid.equilibrium(0.9999999, D.point(0), tol=1e-300)


def test_response_time_mm1():
    lam = 0.6
    # d = 0: independent M/M/1 queues, R = 1/(1-λ)
    assert fluid.response_time(lam, D.point(0)) == pytest.approx(1 / (1 - lam), rel=1e-13)
    assert fluid.response_time(lam, D.point(2)) < fluid.response_time(lam, D.point(1))


def test_drift():
    p = D({0: 0.5, 2: 0.5})
    q = np.array([1.0, 0.5, 0.2])
    f = fluid.drift(q, 0.8, p)
    g = lambda x: x * (0.5 + 0.5 * x * x)  # noqa: E731
    assert f[0] == 0.0
    assert f[1] == pytest.approx(0.8 * (g(1) - g(0.5)) - (0.5 - 0.2))
    assert f[2] == pytest.approx(0.8 * (g(0.5) - g(0.2)) - 0.2)
    qs = fluid.equilibrium(0.8, p)
    assert np.max(np.abs(fluid.drift(qs, 0.8, p))) < 1e-15


def test_solve_shape_and_start():
    t = np.array([0.0, 1.0, 5.0])
    s = fluid.solve(0.9, D.point(2), [1.0, 0.5], t)
    assert isinstance(s, fluid.FluidSolution)
    assert s.q.shape[0] == 3 and np.all(s.q[:, 0] == 1.0)
    assert s.q[0, 1] == 0.5 and np.all(s.q[0, 2:] == 0)
    assert np.all(np.abs(s.q[:, -1]) < 1e-12)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [0.5], t)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [1.0, 0.2, 0.5], t)
    with pytest.raises(ValueError):
        fluid.solve(0.9, D.point(2), [1.0], [1.0, 0.5])


def _rate_certificate(lam, p, K):
    """A proven decay rate for the truncated ODE started below q* (e.g. empty).

    Let q~ be the equilibrium of the ODE truncated at level K (q(K+1) = 0;
    it differs from q* by about λ g(q*(K)) < 1e-20 here).  The drift is
    cooperative (∂f_i/∂q(j) >= 0 for i != j), so a start below q~ (the empty
    state is one, and a subsolution: f(empty) >= 0) stays below it.  Then
    e = q~ − q >= 0 solves de/dt = A(t) e, A the Jacobian averaged along the
    segment from q to q~: tridiagonal with A[i+1, i] = λ ḡ'_i,
    A[i, i] = −λ ḡ'_i − 1, A[i, i+1] = 1, where ḡ'_i, an average of g'
    (increasing: g is convex) over the segment, lies in [g'(0), g'(q~(i))].
    For any w > 0,
    (wᵀA)_i = w_{i-1} − w_i + λ ḡ'_i (w_{i+1} − w_i), and taking the end of
    the interval that maximises it gives c_i with (wᵀA)_i <= c_i for every
    admissible A.  So γ = min_i −c_i / w_i gives d(wᵀe)/dt <= −γ wᵀe and

        max_i e_i(t) <= exp(−γ t) wᵀe(0) / min_i w_i.

    w: the Perron vector of J(q*)ᵀ, by one step of inverse iteration with a
    shift just above the top eigenvalue (μI − Jᵀ is then a nonsingular
    M-matrix, so w > 0).  Any w > 0 gives a valid γ; this one makes it close
    to the spectral gap.
    """
    q = fluid.equilibrium(lam, p, tol=1e-300)[: K + 1]
    q = np.concatenate([q, np.zeros(K + 1 - len(q))])
    J = fluid.jacobian(q, lam, p)
    gap = -np.max(np.linalg.eigvals(J).real)  # spectral gap of this truncation
    mu = -gap + 1e-6 * gap
    w = np.linalg.solve(mu * np.eye(K) - J.T, np.ones(K))
    w = np.linalg.solve(mu * np.eye(K) - J.T, w / w.max())
    w /= w.max()
    assert np.all(w > 0)
    lo, hi = lam * p.pmf[0], lam * fluid._gprime(q[1:], p)
    dw = np.append(w[1:], 0.0) - w
    c = np.concatenate([[0.0], w[:-1]]) - w + np.where(dw >= 0, hi, lo) * dw
    return q, w, float(np.min(-c / w)), gap


@pytest.mark.parametrize(
    "q0, t, what",
    [
        ([0.5], [0.0, 1.0], "q0"),
        ([1.0, 0.2, 0.5], [1.0], "q0"),
        ([1.0, 1.2], [1.0], "q0"),
        ([1.0, -0.1], [1.0], "q0"),
        ([1.0, float("nan")], [1.0], "q0"),
        ([], [1.0], "q0"),
        ([1.0], [1.0, 0.5], "t"),
        ([1.0], [-1.0, 2.0], "t"),
        ([1.0], [0.0, float("nan")], "t"),
        ([1.0], [0.0, float("inf")], "t"),
        ([1.0], [], "t"),
        ([1.0], [[0.0, 1.0]], "t"),
        ([1.0], ["a"], "t"),
    ],
)
def test_solve_bad_input(q0, t, what):
    with pytest.raises(ValueError, match=rf"^{what}"):
        fluid.solve(0.5, D.point(2), q0, t)


def test_solve_repeated_and_zero_times():
    s = fluid.solve(0.7, D.point(1), [1.0, 0.3], [0.0, 0.0, 2.0, 2.0, 5.0])
    assert np.all(s.q[0] == s.q[1]) and np.all(s.q[2] == s.q[3])
    assert s.q[0, 1] == 0.3
    s0 = fluid.solve(0.7, D.point(1), [1.0, 0.3], [0.0])
    assert s0.q.shape[0] == 1 and s0.q[0, 1] == 0.3


def test_jacobian_matches_finite_differences():
    p = D({0: 0.2, 1: 0.3, 3: 0.5})
    q = np.array([1.0, 0.7, 0.4, 0.1, 0.02])
    J = fluid.jacobian(q, 0.9, p)
    h = 1e-6
    for j in range(1, 5):
        dq = np.zeros(5)
        dq[j] = h
        col = (fluid.drift(q + dq, 0.9, p) - fluid.drift(q - dq, 0.9, p))[1:] / (2 * h)
        # central differences: truncation h^2 |g'''| λ / 6 <= 1e-12 * 4 (g''' <= 24
        # p(3)), rounding about 1e-16 / h = 1e-10
        assert np.allclose(J[:, j - 1], col, atol=1e-9, rtol=0)


def test_relaxation_rate_mm1():
    # φ ≡ 1: J is tridiagonal Toeplitz (λ, −λ−1, 1) on levels 1..K, with top
    # eigenvalue −(1 + λ − 2√λ cos(π/(K+1))); as K -> ∞ the gap tends to the
    # M/M/1 relaxation rate (1 − √λ)², from above by about √λ (π/(K+1))²
    lam = 0.5
    K = len(fluid.equilibrium(lam, D.point(0), tol=1e-12)) - 1
    exact = 1 + lam - 2 * math.sqrt(lam) * math.cos(math.pi / (K + 1))
    assert fluid.relaxation_rate(lam, D.point(0)) == pytest.approx(exact, rel=1e-12)
    K = len(fluid.equilibrium(lam, D.point(0), tol=1e-200)) - 1
    assert fluid.relaxation_rate(lam, D.point(0), tol=1e-200) == pytest.approx(
        (1 - math.sqrt(lam)) ** 2, rel=2 * math.sqrt(lam) * (math.pi / (K + 1)) ** 2 / 0.0858
    )


def test_solve_from_far_start_converges():
    # From above q* the interval bound of _rate_certificate is too wide (ḡ'
    # may be as large as g'(1) = 3 at levels where q* is ~0), so here we use
    # the linearisation once the error is small: with ‖e‖ <= 1e-6 the Jacobian
    # along the segment differs from J(q*) by at most λ max|g''| ‖e‖ = 4.8e-6
    # (g'' = 6x for δ_2), which moves the rate γ = 0.221 by about that much,
    # i.e. 2e-5 relative; the measured rate must agree to 1%, which leaves room
    # for the faster modes (next eigenvalue −0.99: after the 20 time units
    # between the two errors, their share has shrunk by e^{-15}).  The far
    # start holds ~15 tasks per server, which drain at about 1 − λ per unit
    # time before the exponential phase: hence t up to 400.
    lam, p = 0.8, D.point(2)
    gap = fluid.relaxation_rate(lam, p)
    q0 = np.linspace(1, 0.1, 30)
    t = np.linspace(0.0, 400.0, 801)
    s = fluid.solve(lam, p, q0, t)
    qs = fluid.equilibrium(lam, p, tol=1e-300)[: s.q.shape[1]]
    err = np.max(np.abs(s.q[:, : len(qs)] - qs), axis=1)
    i1 = np.argmax(err < 1e-6)
    i2 = np.argmax(err < 1e-8)  # still far above the integrator's 1e-10
    assert 0 < i1 < i2
    rate = math.log(err[i1] / err[i2]) / (t[i2] - t[i1])
    assert rate == pytest.approx(gap, rel=0.01)
    # the linear prediction reaches 5e-10 at T; check 1e-9 there
    T = t[i1] + math.log(err[i1] / 5e-10) / gap
    s2 = fluid.solve(lam, p, q0, [T])
    assert np.max(np.abs(s2.q[0, : len(qs)] - qs)) < 1e-9


@pytest.mark.parametrize("lam", [0, 1, -0.1, 1.5, float("nan"), float("inf"), "0.5", None, True])
def test_bad_lam(lam):
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\), got"):
        fluid.equilibrium(lam, D.point(2))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.drift([1.0, 0.5], lam, D.point(2))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.solve(lam, D.point(2), [1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.response_time(lam, D.point(2))
    with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
        fluid.relaxation_rate(lam, D.point(2))


@settings(max_examples=30, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not 0 < x < 1),
        st.integers().filter(lambda k: True),
    )
)
def test_bad_lam_property(lam):
    # every real outside the open interval (0, 1), nan and ±inf included, and
    # every integer (none lies strictly inside), is refused by each entry point
    for call in (
        lambda: fluid.equilibrium(lam, D.point(1)),
        lambda: fluid.drift([1.0, 0.5], lam, D.point(1)),
        lambda: fluid.solve(lam, D.point(1), [1.0], [0.0, 1.0]),
        lambda: fluid.response_time(lam, D.point(1)),
        lambda: fluid.relaxation_rate(lam, D.point(1)),
        lambda: tails.tail_bounds(lam, D.point(1), [0, 1]),
        lambda: fluid.jacobian([1.0, 0.5], lam, D.point(1)),
    ):
        with pytest.raises(ValueError, match=r"lam must be in \(0, 1\)"):
            call()


def test_bad_degrees():
    # a mapping, a pmf sequence or a graph is a law (one rule everywhere); a string is not
    for f in (fluid.equilibrium, fluid.response_time):
        with pytest.raises(TypeError, match="degrees"):
            f(0.5, "two")
        assert f(0.5, {2: 1.0}) == pytest.approx(f(0.5, D.point(2)))
    with pytest.raises(TypeError, match="degrees"):
        fluid.solve(0.5, "two", [1.0], [1.0])


laws = st.lists(st.floats(0, 1), min_size=7, max_size=7).filter(lambda w: sum(w) > 0.05).map(
    lambda w: D(np.array(w) / math.fsum(w))
)
lams = st.floats(0.05, 0.98)


@settings(max_examples=40, deadline=None)
@given(laws, lams)
def test_equilibrium_properties(p, lam):
    q = fluid.equilibrium(lam, p)
    assert q[1] == lam
    assert np.all(np.diff(q) < 0)
    # λ^i p(M)-free sandwich: x φ(x) <= x, so q*(i) <= λ^i; q*(i) >= 0.
    assert np.all(q <= lam ** np.arange(len(q)) * (1 + 8 * U * np.arange(len(q))))
    R = fluid.response_time(lam, p)
    # R >= q*(1)/λ = 1 and R <= Σ λ^{i-1} = 1/(1-λ) (M/M/1, p = δ_0, is worst);
    # slack: the sums round to 1e-15 relative
    assert R >= 1 - 1e-14
    assert R <= 1 / (1 - lam) * (1 + 1e-12)


# Where "from the empty state, max error < 1e-9 by t = 200" holds.  Near q*
# the error decays like exp(−γ t), γ the spectral gap of J(q*) (the
# relaxation time is 1/γ), so the claim needs roughly γ > log(C/1e-9)/200,
# C = O(1): γ >~ 0.11.  The gap closes as λ -> 1 and as p(0) -> 1: for φ ≡ 1
# (M/M/1) γ = (1 − √λ)², i.e. 0.09 at λ = 0.5, 0.003 at λ = 0.9; for δ_2
# γ = 0.54, 0.11, 0.022 at λ = 0.5, 0.9, 0.98.  So the admissible region is not
# a box in (λ, p(0)); instead each example computes the proven rate γ of
# _rate_certificate (valid for the nonlinear ODE, not just the linearisation)
# and the horizon T at which the bound is 5e-10.  Where T <= 200 this is the
# issue's claim at t = 200; elsewhere it is checked at T.  Laws with p(0) close
# to 1 and λ close to 1 need T ~ 1e4-1e5 and K ~ 1e3 levels; they are left out
# to keep the test fast (λ p(0) <= 0.9), which a comment, not the claim, limits.
@settings(max_examples=15, deadline=None)
@given(laws.filter(lambda p: p.pmf[0] <= 0.9), lams)
def test_ode_from_empty_converges(p, lam):
    K = fluid.solve(lam, p, [1.0], [0.0]).q.shape[1] - 1
    qs, w, gamma, gap = _rate_certificate(lam, p, K)
    assert 0 < gamma <= gap * (1 + 1e-9)
    C = w @ qs[1:] / w.min()
    T = math.log(C / 5e-10) / gamma
    t = np.array([0.0, T / 4, T / 2, T, max(T, 200.0)])
    s = fluid.solve(lam, p, [1.0], t)
    assert s.q.shape[1] == K + 1
    err = np.max(np.abs(s.q - qs), axis=1)
    assert np.all(err <= C * np.exp(-gamma * t) + 1e-10)
    assert err[3] < 1e-9
    if T <= 200:
        assert err[4] < 1e-9  # the claim, where the rate supports it
    assert np.all(s.q[-1, len(fluid.equilibrium(lam, p)):] < 1e-12)


def test_ode_claim_region_point_masses():
    # the region of the t = 200 claim for point masses, from the proven rate:
    # it holds for λ <= 0.85 and fails (the rate bound says nothing) by 0.95
    def horizon(lam, d):
        K = fluid.solve(lam, D.point(d), [1.0], [0.0]).q.shape[1] - 1
        qs, w, gamma, _ = _rate_certificate(lam, D.point(d), K)
        return math.log((w @ qs[1:] / w.min()) / 5e-10) / gamma

    assert all(horizon(lam, d) <= 200 for lam in (0.5, 0.85) for d in (1, 2, 3))
    assert all(horizon(0.95, d) > 200 for d in (1, 2, 3))
