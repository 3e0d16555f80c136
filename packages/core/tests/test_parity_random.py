"""The random ops against PyTorch: ``Generator`` and the global seed, ``normal``,
``bernoulli``, ``multinomial``, the in-place samplers and the ``generator=`` keyword of the
creation samplers, then ``logspace`` and the integer corners of ``linspace``.

A draw cannot match PyTorch's stream, so what is compared with PyTorch (``same``) is all the
rest: dtypes, shapes, node names, zero gradients (also under ``create_graph``), versions and
errors (class and key phrase). The draws themselves are checked statistically, with a fixed
seed so that every run sees the same numbers, and for reproducibility: the same seed gives
the same values again, in this process and in another one."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from torch_parity import same

import retrograd as rg


def dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


def shape_of(t):
    return list(t.shape)


def node(t):
    return None if t.grad_fn is None else t.grad_fn.name()


# -- 1. Generator and the global seed --------------------------------------------------------
def test_generator_api():
    g = rg.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7
    assert str(g.device) == "cpu" and str(rg.Generator("cpu").device) == "cpu"
    assert rg.Generator().initial_seed() == 67280421310721  # a fresh generator's, as PyTorch's
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**64
    assert rg.manual_seed(3) is rg.default_generator and rg.initial_seed() == 3
    s = rg.seed()
    assert rg.initial_seed() == s


def test_generator_same_as_torch():
    same(lambda L: L.Generator().manual_seed(-1).initial_seed())
    same(lambda L: L.Generator().manual_seed(2**64 - 1).initial_seed())
    same(lambda L: L.Generator().manual_seed(2**63).initial_seed())
    same(lambda L: L.manual_seed(5) is L.default_generator)
    same(lambda L: L.Generator().manual_seed(1.5), "manual_seed expected a long")
    same(lambda L: L.Generator().manual_seed("a"), "manual_seed expected a long")
    same(lambda L: L.Generator().manual_seed(2**64), "Overflow when unpacking long long")
    same(lambda L: L.manual_seed(1.5).initial_seed())
    same(lambda L: L.manual_seed("x"), "invalid literal")
    same(lambda L: L.Generator().set_state(5))
    same(lambda L: L.Generator().set_state(L.zeros(3)))


def test_state_round_trips():
    g = rg.Generator().manual_seed(11)
    state = g.get_state()
    a = rg.rand(5, generator=g).tolist()
    b = rg.rand(5, generator=g).tolist()
    assert g.set_state(state) is g
    assert rg.rand(5, generator=g).tolist() == a and rg.rand(5, generator=g).tolist() == b
    assert g.initial_seed() == 11
    rg.manual_seed(4)
    rg.randn(3)
    saved = rg.get_rng_state()
    want = rg.randn(4).tolist()
    rg.set_rng_state(saved)
    assert rg.randn(4).tolist() == want
    with pytest.raises(RuntimeError, match="state of size"):
        g.set_state(rg.zeros(3, dtype=rg.int64))


def test_same_seed_same_values():
    rg.manual_seed(123)
    a = (rg.rand(4).tolist(), rg.randn(4).tolist(), rg.randint(0, 9, (4,)).tolist(),
         rg.randperm(6).tolist(), rg.normal(0.0, 1.0, (3,)).tolist())
    rg.manual_seed(123)
    b = (rg.rand(4).tolist(), rg.randn(4).tolist(), rg.randint(0, 9, (4,)).tolist(),
         rg.randperm(6).tolist(), rg.normal(0.0, 1.0, (3,)).tolist())
    assert a == b


def test_generator_keyword_is_its_own_stream():
    def draws(g):
        return [rg.rand(3, generator=g).tolist(), rg.randn(3, generator=g).tolist(),
                rg.randint(5, (3,), generator=g).tolist(),
                rg.randperm(5, generator=g).tolist(),
                rg.rand_like(rg.zeros(2), generator=g).tolist(),
                rg.randn_like(rg.zeros(2), generator=g).tolist(),
                rg.normal(rg.zeros(3), 1.0, generator=g).tolist(),
                rg.bernoulli(rg.full((4,), 0.5), generator=g).tolist(),
                rg.multinomial(rg.ones(5), 3, generator=g).tolist(),
                rg.zeros(3).uniform_(generator=g).tolist(),
                rg.zeros(3).normal_(generator=g).tolist(),
                rg.zeros(3).bernoulli_(0.5, generator=g).tolist(),
                rg.zeros(3).random_(10, generator=g).tolist(),
                rg.zeros(3).exponential_(generator=g).tolist()]

    rg.manual_seed(0)
    a = draws(rg.Generator().manual_seed(9))
    rg.rand(10)  # the global stream moves on: the generators' values do not
    b = draws(rg.Generator().manual_seed(9))
    assert a == b
    assert draws(rg.Generator().manual_seed(10)) != a


def test_same_values_in_another_process():
    code = ("import retrograd as rg; rg.manual_seed(42); g = rg.Generator().manual_seed(5); "
            "print(rg.rand(3).tolist(), rg.randn(2, generator=g).tolist())")
    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout for _ in range(2)]
    rg.manual_seed(42)
    g = rg.Generator().manual_seed(5)
    here = f"{rg.rand(3).tolist()} {rg.randn(2, generator=g).tolist()}\n"
    assert out[0] == out[1] == here


def test_wrong_generator():
    same(lambda L: L.rand(3, generator=5))
    same(lambda L: L.zeros(3).bernoulli_(0.5, generator=5))


def test_seeded_threads_start_from_the_seed():
    import threading

    rg.manual_seed(77)
    want = rg.rand(4).tolist()
    got = []
    t = threading.Thread(target=lambda: got.append(rg.rand(4).tolist()))
    t.start()
    t.join()
    assert got == [want]


# -- 2. normal ------------------------------------------------------------------------------
def test_normal_statistics():
    rg.manual_seed(1)
    x = rg.normal(2.0, 3.0, (20000,), dtype=rg.float64).numpy()
    assert abs(x.mean() - 2.0) < 0.1 and abs(x.std() - 3.0) < 0.1
    m = rg.tensor([[-5.0], [5.0]], dtype=rg.float64).expand(2, 10000)
    s = rg.tensor([0.5, 2.0], dtype=rg.float64).reshape(2, 1)
    y = rg.normal(m, s).numpy()
    assert np.allclose(y.mean(axis=1), [-5.0, 5.0], atol=0.1)
    assert np.allclose(y.std(axis=1), [0.5, 2.0], atol=0.1)
    z = rg.normal(rg.full((10000,), 1.0), 0.0).numpy()
    assert (z == 1.0).all()  # std 0: the mean itself
    w = rg.normal(-1.0, rg.full((20000,), 2.0, dtype=rg.float64)).numpy()
    assert abs(w.mean() + 1.0) < 0.1 and abs(w.std() - 2.0) < 0.1
    n = rg.randn(20000, dtype=rg.float64).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.var() - 1.0) < 0.05


@pytest.mark.parametrize("case", [
    lambda L: L.normal(L.zeros(3), L.ones(3)),
    lambda L: L.normal(L.zeros(2, 3), L.ones(3)),
    lambda L: L.normal(L.zeros(2, 1), L.ones(3)),
    lambda L: L.normal(L.zeros(3), L.ones(3, dtype=L.float64)),
    lambda L: L.normal(L.zeros(3, dtype=L.float64), L.ones(3)),
    lambda L: L.normal(L.zeros(3, dtype=L.float64), 2.0),
    lambda L: L.normal(L.zeros(3)),
    lambda L: L.normal(1.0, L.ones(3, dtype=L.float64)),
    lambda L: L.normal(1.0, 2.0, (2, 3)),
    lambda L: L.normal(1.0, 2.0, [2, 3]),
    lambda L: L.normal(1, 2, (2, 3)),
    lambda L: L.normal(1.0, 2.0, (2, 3), dtype=L.float64),
    lambda L: L.normal(mean=1.0, std=2.0, size=(2,)),
    lambda L: L.normal(0.0, 1.0, ()),
    lambda L: L.normal(L.zeros(()), L.ones(())),
    lambda L: L.normal(L.zeros(0), 1.0),
])
def test_normal_dtype_and_shape(case):
    same(lambda L: (dtype_name(case(L)), shape_of(case(L)), node(case(L))))


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.normal(L.zeros(2, 3), L.ones(4)), "must match the size of tensor b"),
    (lambda L: L.normal(L.zeros(2, 3), L.ones(6)), "must match the size of tensor b"),
    (lambda L: L.normal(L.zeros(3, dtype=L.int64), 1.0), "normal_kernel_cpu"),
    (lambda L: L.normal(0.0, L.ones(3, dtype=L.int64)), "normal_kernel_cpu"),
    (lambda L: L.normal(1.0, 2.0), "normal() received an invalid combination"),
    (lambda L: L.normal(L.zeros(2), L.ones(2), (3,)), "invalid combination"),
    (lambda L: L.normal(1.0, -2.0, (2,)), "normal expects std >= 0.0, but found std -2"),
    (lambda L: L.normal(L.zeros(2), -2.0), "normal expects std >= 0.0, but found std -2"),
    (lambda L: L.normal(L.zeros(2), -L.ones(2)), "normal expects all elements of std >= 0.0"),
    (lambda L: L.normal(0.0, -L.ones(2)), "normal expects all elements of std >= 0.0"),
    (lambda L: L.normal(0.0, float("nan"), (2,)), "but found std nan"),
    (lambda L: L.normal(1.0, 2.0, (2,), dtype=L.int64), "normal_kernel_cpu"),
])
def test_normal_errors(case, phrase):
    same(case, phrase)


def leaves(L):
    m = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
    s = L.tensor([1.0, 0.5, 2.0], dtype=L.float64, requires_grad=True)
    return m, s


@pytest.mark.parametrize("make", [
    lambda L, m, s: L.normal(m * 1, s * 1),
    lambda L, m, s: L.normal(m, 1.5),
    lambda L, m, s: L.normal(0.5, s),
    lambda L, m, s: L.normal(m.reshape(3, 1), s),
    lambda L, m, s: L.bernoulli(L.sigmoid(m)),
])
def test_sampler_gradients_are_zero(make):
    def program(L):
        m, s = leaves(L)
        r = make(L, m, s)
        out = {"node": node(r), "requires_grad": r.requires_grad}
        w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        grads = L.autograd.grad((r * w).sum(), (m, s), create_graph=True, allow_unused=True)
        out["grads"] = [None if g is None else (g.tolist(), g.requires_grad, dtype_name(g))
                        for g in grads]
        (r * w).sum().backward()
        out["leaf"] = [None if t.grad is None else t.grad.tolist() for t in (m, s)]
        return out

    same(program)


def test_normal_requires_grad_and_no_grad():
    same(lambda L: L.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad)

    def program(L):
        m, _ = leaves(L)
        with L.no_grad():
            r = L.normal(m, 1.0)
        return node(r), r.requires_grad

    same(program)


# -- 3. bernoulli ---------------------------------------------------------------------------
def test_bernoulli_statistics():
    rg.manual_seed(2)
    p = rg.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=rg.float64).expand(20000, 5)
    x = rg.bernoulli(p).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert np.allclose(x.mean(axis=0), [0.0, 0.1, 0.5, 0.9, 1.0], atol=0.02)
    y = rg.zeros(20000).bernoulli(0.3).numpy()
    assert abs(y.mean() - 0.3) < 0.02
    z = rg.zeros(20000, dtype=rg.int64).bernoulli_(0.7).numpy()
    assert abs(z.mean() - 0.7) < 0.02 and z.dtype == np.int64
    q = rg.zeros(2, 10000).bernoulli_(rg.tensor([0.2, 0.8]).reshape(2, 1)).numpy()
    assert np.allclose(q.mean(axis=1), [0.2, 0.8], atol=0.02)


@pytest.mark.parametrize("case", [
    lambda L: L.bernoulli(L.full((3,), 0.5, dtype=L.float64)),
    lambda L: L.bernoulli(L.full((2, 3), 0.5, dtype=L.float16)),
    lambda L: L.bernoulli(L.tensor(0.5)),
    lambda L: L.ones(3).bernoulli(),
    lambda L: L.ones(3).bernoulli(0.2),
    lambda L: L.bernoulli(L.ones(3), 0.2),
    lambda L: L.ones(3, dtype=L.int64).bernoulli_(0.5),
    lambda L: L.ones(3, dtype=L.bool).bernoulli_(0.5),
    lambda L: L.ones(2, 3).bernoulli_(L.full((3,), 0.5)),
])
def test_bernoulli_dtype_and_shape(case):
    same(lambda L: (dtype_name(case(L)), shape_of(case(L)), node(case(L))))


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.bernoulli(L.ones(3, dtype=L.int64)), "bernoulli_tensor_cpu_p_"),
    (lambda L: L.bernoulli(L.full((3,), 2.0)), "Expected p_in >= 0 && p_in <= 1"),
    (lambda L: L.bernoulli(L.full((3,), -2.0)), "Expected p_in >= 0 && p_in <= 1"),
    (lambda L: L.bernoulli(L.full((3,), float("nan"))), "Expected p_in >= 0 && p_in <= 1"),
    (lambda L: L.bernoulli(L.ones(3), 2.0), "bernoulli_ expects p to be in [0, 1], but got p=2"),
    (lambda L: L.ones(3).bernoulli_(2.0), "bernoulli_ expects p to be in [0, 1], but got p=2"),
    (lambda L: L.ones(3).bernoulli_(L.full((3,), 2.0)), "Expected p_in >= 0 && p_in <= 1"),
    (lambda L: L.ones(3).bernoulli_(L.ones(3, dtype=L.int64)), "bernoulli_tensor_cpu_p_"),
    (lambda L: L.ones(3).bernoulli_(L.full((2, 3), 0.5)), None),
])
def test_bernoulli_errors(case, phrase):
    same(case, phrase)


def test_bernoulli_with_p_has_no_derivative():
    def program(L):
        p = L.full((3,), 0.5, requires_grad=True)
        r = L.bernoulli(p, 0.3)
        r.requires_grad  # noqa: B018
        r.sum().backward()

    same(program, "derivative for aten::bernoulli is not implemented")


# -- 4. multinomial -------------------------------------------------------------------------
def test_multinomial_statistics():
    rg.manual_seed(3)
    p = rg.tensor([1.0, 2.0, 7.0], dtype=rg.float64)
    x = rg.multinomial(p, 30000, replacement=True).numpy()
    assert np.allclose(np.bincount(x, minlength=3) / 30000, [0.1, 0.2, 0.7], atol=0.015)
    rows = rg.multinomial(p.expand(5000, 3), 3).numpy()
    assert (np.sort(rows, axis=1) == [0, 1, 2]).all()  # without replacement: a permutation
    first = np.bincount(rows[:, 0], minlength=3) / 5000
    assert np.allclose(first, [0.1, 0.2, 0.7], atol=0.03)
    sparse = rg.multinomial(rg.tensor([[0.0, 1.0, 0.0, 1.0]]).expand(200, 4), 2).numpy()
    assert (np.sort(sparse, axis=1) == [1, 3]).all()  # zero-weight categories last
    spent = rg.multinomial(rg.tensor([1.0, 0.0, 0.0]), 3).tolist()
    assert spent[0] == 0 and sorted(spent) == [0, 1, 2]
    assert (rg.multinomial(rg.tensor([0.0, 1.0]), 50, True).numpy() == 1).all()


@pytest.mark.parametrize("case", [
    lambda L: L.multinomial(L.tensor([0.2, 0.3, 0.5]), 2),
    lambda L: L.multinomial(L.tensor([0.2, 0.3, 0.5]), 4, True),
    lambda L: L.multinomial(L.tensor([[0.2, 0.3, 0.5]]).expand(2, 3), 2),
    lambda L: L.tensor([0.2, 0.3, 0.5]).multinomial(2, replacement=True),
    lambda L: L.multinomial(L.ones(0, 3), 1),
    lambda L: L.multinomial(L.ones(3, requires_grad=True), 1),
])
def test_multinomial_dtype_and_shape(case):
    same(lambda L: (dtype_name(case(L)), shape_of(case(L)), node(case(L)),
                    case(L).requires_grad))


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.multinomial(L.tensor([0.2, 0.3, 0.5]), 4),
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    (lambda L: L.multinomial(L.tensor([0.2, 0.3, 0.5]), 0), "cannot sample n_sample <= 0"),
    (lambda L: L.multinomial(L.tensor([0.2, 0.3, 0.5]), -1), "cannot sample n_sample <= 0"),
    (lambda L: L.multinomial(L.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    (lambda L: L.multinomial(L.tensor(1.0), 1), "prob_dist must be 1 or 2 dim"),
    (lambda L: L.multinomial(L.tensor([-1.0, 2.0]), 1), "probability tensor contains"),
    (lambda L: L.multinomial(L.tensor([float("inf"), 1.0]), 1), "probability tensor"),
    (lambda L: L.multinomial(L.tensor([float("nan"), 1.0]), 1), "probability tensor"),
    (lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    (lambda L: L.multinomial(L.tensor([[0.0, 0.0], [1.0, 1.0]]), 1),
     "invalid multinomial distribution"),
    (lambda L: L.multinomial(L.tensor([1, 1]), 1),
     "multinomial only supports floating-point dtypes for input"),
    (lambda L: L.multinomial(L.ones(2, 0), 1), "cannot sample n_sample > prob_dist.size(-1)"),
    (lambda L: L.multinomial(L.ones(3), 2.0), "must be int, not float"),
])
def test_multinomial_errors(case, phrase):
    same(case, phrase)


# -- 5. the in-place samplers ---------------------------------------------------------------
def test_inplace_statistics():
    rg.manual_seed(4)
    n = 20000
    u = rg.zeros(n, dtype=rg.float64).uniform_(-2.0, 3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.05
    x = rg.zeros(n, dtype=rg.float64).normal_(1.0, 0.5).numpy()
    assert abs(x.mean() - 1.0) < 0.02 and abs(x.std() - 0.5) < 0.02
    e = rg.zeros(n, dtype=rg.float64).exponential_(4.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01
    g = rg.zeros(n, dtype=rg.int64).geometric_(0.25).numpy()
    assert g.min() >= 1 and abs(g.mean() - 4.0) < 0.1
    c = rg.zeros(n, dtype=rg.float64).cauchy_(3.0, 0.5).numpy()
    assert abs(np.median(c) - 3.0) < 0.03
    q = np.quantile(c, [0.25, 0.75])
    assert np.allclose(q, [2.5, 3.5], atol=0.05)  # quartiles at median -/+ sigma
    ln = np.log(rg.zeros(n, dtype=rg.float64).log_normal_(0.5, 0.25).numpy())
    assert abs(ln.mean() - 0.5) < 0.01 and abs(ln.std() - 0.25) < 0.01
    r = rg.zeros(n).random_(3, 7).numpy()
    assert set(np.unique(r)) == {3.0, 4.0, 5.0, 6.0}
    r = rg.zeros(n, dtype=rg.int64).random_(5).numpy()
    assert set(np.unique(r)) == {0, 1, 2, 3, 4}
    r = rg.zeros(n, dtype=rg.bool).random_().numpy()
    assert set(np.unique(r)) == {False, True}
    r = rg.zeros(n).random_().numpy()
    assert r.min() >= 0 and r.max() <= 2**24 and (r == np.floor(r)).all() and r.max() > 2**23
    r = rg.zeros(n, dtype=rg.int64).random_(-3, 0).numpy()
    assert set(np.unique(r)) == {-3, -2, -1}
    f = rg.rand(n, dtype=rg.float16).numpy()
    assert f.max() < 1.0 and f.min() >= 0.0


SAMPLERS = [
    lambda t: t.uniform_(),
    lambda t: t.uniform_(-1.0, 2.0),
    lambda t: t.normal_(),
    lambda t: t.normal_(1.0, 2.0),
    lambda t: t.bernoulli_(),
    lambda t: t.bernoulli_(0.3),
    lambda t: t.random_(),
    lambda t: t.random_(5),
    lambda t: t.random_(1, 5),
    lambda t: t.random_(1, None),
    lambda t: t.random_(to=5),
    lambda t: t.exponential_(),
    lambda t: t.geometric_(0.5),
    lambda t: t.cauchy_(),
    lambda t: t.log_normal_(),
]


@pytest.mark.parametrize("sample", SAMPLERS)
def test_inplace_version_node_and_zero_gradient(sample):
    def program(L):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = x * 2
        out = sample(y)
        res = {"same": out is y, "version": y._version, "node": node(y),
               "dtype": dtype_name(y), "shape": shape_of(y)}
        w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad((y * w).sum(), (x,), create_graph=True)
        res["grad"] = (g.tolist(), g.requires_grad)
        with L.no_grad():
            z = L.zeros(3, dtype=L.float64)
            sample(z)
            sample(z)
        res["no_grad_version"] = z._version
        return res

    same(program)


@pytest.mark.parametrize("sample", SAMPLERS)
def test_inplace_on_a_leaf_requiring_grad(sample):
    same(lambda L: sample(L.zeros(3, requires_grad=True)), "a leaf Variable that requires grad")

    def under_no_grad(L):
        x = L.zeros(3, requires_grad=True)
        with L.no_grad():
            sample(x)
        return x.requires_grad, x.grad_fn is None, x._version

    same(under_no_grad)


def test_bernoulli_tensor_p_records_both():
    def program(L):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        p = L.tensor([0.2, 0.5, 0.7], dtype=L.float64, requires_grad=True)
        y = x * 1
        y.bernoulli_(p)
        y.sum().backward()
        return node(y), x.grad.tolist(), p.grad.tolist()

    same(program)


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.zeros(3).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda L: L.zeros(3, dtype=L.int64).normal_(), "normal_kernel_cpu"),
    (lambda L: L.zeros(3).uniform_(1, 0),
     "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    (lambda L: L.zeros(3, dtype=L.int64).uniform_(), "check_uniform_bounds"),
    (lambda L: L.zeros(3).uniform_(0, float("inf")), "to is out of bounds for float"),
    (lambda L: L.zeros(3).uniform_(-1e308, 1e308), "from is out of bounds for float"),
    (lambda L: L.zeros(3).exponential_(0), "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda L: L.zeros(3).exponential_(-1), "but found lambda=-1"),
    (lambda L: L.zeros(3, dtype=L.int64).exponential_(),
     "dtype must be a floating point but you specified Long"),
    (lambda L: L.zeros(3).geometric_(0), "geometric_ expects p to be in (0, 1), but got p=0"),
    (lambda L: L.zeros(3).geometric_(1), "geometric_ expects p to be in (0, 1), but got p=1"),
    (lambda L: L.zeros(3, dtype=L.int64).cauchy_(), "but you specified long int"),
    (lambda L: L.zeros(3).cauchy_(0, 0), "cauchy_ expects sigma > 0.0, but found sigma=0"),
    (lambda L: L.zeros(3).log_normal_(0, 0), "log_normal_ expects std > 0.0, but found std=0"),
    (lambda L: L.zeros(3, dtype=L.int64).log_normal_(), "log_normal_cpu"),
    (lambda L: L.zeros(5).random_(5, 5),
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    (lambda L: L.zeros(5, dtype=L.bool).random_(5), "to - 1 is out of bounds for bool"),
    (lambda L: L.zeros(5, dtype=L.int32).random_(2**40), "to - 1 is out of bounds for int"),
    (lambda L: L.zeros(5, dtype=L.int32).random_(-2**40, 0), "from is out of bounds for int"),
    (lambda L: L.zeros(5, dtype=L.bool).random_(-1, 1), "from is out of bounds for bool"),
    (lambda L: L.zeros(5, dtype=L.int64).random_(2**64), "Overflow when unpacking long long"),
    (lambda L: L.zeros(5).random_(2.5), None),
])
def test_inplace_errors(case, phrase):
    same(case, phrase)


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3, dtype=L.int64).geometric_(0.5),
    lambda L: L.zeros(3, dtype=L.int32).random_(),
    lambda L: L.zeros(3, dtype=L.float16).random_(),
    lambda L: L.zeros(()).uniform_(),
    lambda L: L.zeros(0).normal_(),
])
def test_inplace_dtype_and_shape(case):
    same(lambda L: (dtype_name(case(L)), shape_of(case(L))))


def test_nn_init_follows_the_seed():
    rg.manual_seed(8)
    a = rg.nn.Linear(3, 2).weight.detach().tolist()
    rg.manual_seed(8)
    assert rg.nn.Linear(3, 2).weight.detach().tolist() == a


# -- 6. the creation samplers' corners ------------------------------------------------------
@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.rand(3, dtype=L.int64), "check_uniform_bounds"),
    (lambda L: L.randn(3, dtype=L.int64), "normal_kernel_cpu"),
    (lambda L: L.rand_like(L.zeros(3, dtype=L.int64)), "check_uniform_bounds"),
    (lambda L: L.randn_like(L.zeros(3, dtype=L.int64)), "normal_kernel_cpu"),
])
def test_creation_sampler_errors(case, phrase):
    same(case, phrase)


# -- 7. logspace, linspace and arange dtypes ------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda L: L.logspace(0, 2, 3),
    lambda L: L.logspace(0, 2, 3, base=2),
    lambda L: L.logspace(0, 2, 3, dtype=L.int64),
    lambda L: L.logspace(0, 3, 4, base=2, dtype=L.int32),
    lambda L: L.logspace(0, 1, 5, dtype=L.int64),
    lambda L: L.logspace(0, 1, 5, dtype=L.float64),
    lambda L: L.logspace(0, 1, 1),
    lambda L: L.logspace(2.57, 0.59, 1, 2.0, dtype=L.int64),
    lambda L: L.logspace(0, 1, 0),
    lambda L: L.logspace(L.tensor(0.0), L.tensor(1.0), 3),
    lambda L: L.logspace(0, 2, 3, base=-2),
    lambda L: L.logspace(0, 2, 3, base=-2, dtype=L.int64),
    lambda L: L.logspace(-1.5, 2.25, 7, 3.0, dtype=L.float64),
    lambda L: L.logspace(0, 1, 3, requires_grad=True).requires_grad,
])
def test_logspace(case):
    same(case, tol=1e-6)


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.logspace(0, 1, -1), "number of steps must be non-negative"),
    (lambda L: L.logspace(0, 1, 2, dtype=L.bool), "logspace_cpu"),
    (lambda L: L.logspace(0, 2, 3.0), "received an invalid combination of arguments"),
])
def test_logspace_errors(case, phrase):
    same(case, phrase)


@pytest.mark.parametrize("case", [
    lambda L: L.linspace(0, 1, 5, dtype=L.int64),
    lambda L: L.linspace(-1, 1, 5, dtype=L.int64),
    lambda L: L.linspace(0, 10, 4, dtype=L.int64),
    lambda L: L.linspace(10, 0, 4, dtype=L.int64),
    lambda L: L.linspace(0.5, 9.7, 4, dtype=L.int64),
    lambda L: L.linspace(-7, 13, 6, dtype=L.int32),
    lambda L: L.linspace(3, -4, 5, dtype=L.int64),
    lambda L: L.linspace(0, 7, 8, dtype=L.int64),
    lambda L: L.linspace(3, 1, 1, dtype=L.int64),
    lambda L: L.arange(5),
    lambda L: L.arange(0.0, 5),
    lambda L: L.arange(0, 5, dtype=L.float64),
    lambda L: L.arange(0.5, 5.5, 1.5, dtype=L.int64),
    lambda L: L.arange(-2.5, 5.5, 1.5, dtype=L.int64),
    lambda L: L.arange(L.tensor(3)),
    lambda L: L.arange(L.tensor(3.0)),
    lambda L: L.arange(0, 1, 0.25, dtype=L.float16),
    lambda L: L.arange(1.0, dtype=L.int32),
    lambda L: L.arange(0, 1, 0.3, dtype=L.int32),
    lambda L: L.arange(0.5, 5.5, 1.5, dtype=L.int32),
    lambda L: L.arange(-2.5, 5.5, 1.5, dtype=L.int32),
    lambda L: L.arange(1, 2.5, 0.5, dtype=L.int32),
    lambda L: L.arange(0, 5, 1.7, dtype=L.int32),
    lambda L: L.arange(5, 0, -1.5, dtype=L.int32),
    lambda L: L.arange(0.2, 3.9, 1, dtype=L.int32),
    lambda L: L.arange(0.2, 3.9, 1, dtype=L.int64),
    lambda L: L.arange(0, 5, 1.7, dtype=L.int64),
    lambda L: L.arange(0, 1, 0.1),
    lambda L: L.arange(1, 0, -0.3),
    lambda L: L.arange(-3.0, 3.0, 0.5, dtype=L.float16),
    lambda L: L.arange(0, 2, 0.2, dtype=L.float64),
])
def test_linspace_arange_dtypes(case):
    same(case, tol=0)


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.arange(0, 1, 0), "step must be nonzero"),
    (lambda L: L.arange(0, 1, 0.3, dtype=L.int64), "step must be nonzero"),
    (lambda L: L.arange(0, 5, -1), "upper bound and lower bound inconsistent with step sign"),
    (lambda L: L.arange(0, 1, -0.3, dtype=L.int32), "inconsistent with step sign"),
    (lambda L: L.linspace(0, 1, -1), "number of steps must be non-negative"),
])
def test_linspace_arange_errors(case, phrase):
    same(case, phrase)


def test_same_seed_same_values_on_every_backend():
    def draws(device):
        g = rg.Generator(device).manual_seed(21)
        x = rg.zeros(4, device=device)
        return [rg.rand(3, generator=g, device=device).tolist(),
                rg.randn(3, generator=g, device=device).tolist(),
                rg.randint(0, 9, (3,), generator=g, device=device).tolist(),
                x.normal_(generator=g).tolist(),
                rg.multinomial(rg.ones(4, device=device), 2, generator=g).tolist()]

    assert draws("array_api_strict") == draws("cpu")
    with pytest.raises(RuntimeError, match="device type for generator"):
        rg.rand(3, generator=rg.Generator("cpu"), device="array_api_strict")


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_float_linspace_is_torchs_value_for_value(dtype):
    """PyTorch counts half the values up from ``start`` and half down from ``end``, one
    rounding per multiply-add: the middle of ``linspace(-0.9, 0.9, 7)`` is 5.6e-17, not the
    1.1e-16 a one-sided count gives (and ``log`` of it is finite, not ``-inf``)."""
    import torch

    rng = np.random.default_rng(3)
    scale = 0.01 if dtype == "float16" else 1.0
    cases = [(-0.9, 0.9, 7), (0, 1, 5), (-3, 3, 101), (0.1, 0.7, 4), (2.0, 2.0, 3), (1, 5, 1)]
    cases += [(float(a) * scale, float(b) * scale, int(n)) for a, b, n in zip(
        rng.normal(size=150) * 100, rng.normal(size=150) * 100, rng.integers(0, 2000, 150))]
    for a, b, n in cases:
        want = torch.linspace(a, b, n, dtype=getattr(torch, dtype)).numpy()
        got = rg.linspace(a, b, n, dtype=getattr(rg, dtype)).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (a, b, n)
