"""retrograd.optim.lr_scheduler against torch.optim.lr_scheduler: the same schedule, built on
the same optimizer, gives the same learning rates (and momenta) step after step -- floats
compared with ``==`` -- the same parameters after training with them, the same state_dict,
warnings and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from test_parity_optim import exact_sqrt  # noqa: F401 - the fixture, used by pytestmark

import retrograd as rg

# Adam's parameters are compared bitwise too: torch's sqrt made correctly rounded, as there
pytestmark = pytest.mark.usefixtures("exact_sqrt")

STEPS = 36


def make_optimizer(lib: Any, name: str = "SGD", two_groups: bool = True, **kwargs: Any) -> Any:
    """``lib.optim.<name>`` over two float64 parameters, in two groups (the second with its
    own learning rate) or one."""
    arrays = [np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 2.0, 3)]
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    kwargs.setdefault("lr", 0.1)
    if two_groups:
        groups: Any = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.03}]
    else:
        groups = params
    return getattr(lib.optim, name)(groups, **kwargs)


def lr_sched(lib: Any) -> Any:
    """``lib.optim.lr_scheduler`` (reached through the package, as users write it)."""
    return lib.optim.lr_scheduler


def momentum_of(group: dict[str, Any]) -> Any:
    """What a scheduler may change besides ``lr``: SGD's momentum or Adam's betas."""
    return group.get("betas", group.get("momentum"))


def run(lib: Any, build: Callable[[Any], tuple[Any, Any]], steps: int = STEPS,
        ) -> tuple[list[Any], list[Any]]:
    """Train with the optimizer and scheduler ``build(lib)`` returns: per step the scheduler's
    ``get_last_lr()``, the groups' lr and momentum; and the final parameters."""
    opt, sched = build(lib)
    seen = [(list(sched.get_last_lr()), [(g["lr"], momentum_of(g)) for g in opt.param_groups])]
    for i in range(steps):
        opt.zero_grad()
        for group in opt.param_groups:
            for p in group["params"]:
                p.grad = lib.tensor(np.cos(np.arange(p.shape[0]) + i), dtype=lib.float64)
        opt.step()
        sched.step()
        seen.append((list(sched.get_last_lr()),
                     [(g["lr"], momentum_of(g)) for g in opt.param_groups]))
    params = [p.detach().numpy().copy() for g in opt.param_groups for p in g["params"]]
    return seen, params


def with_sched(make: Callable[[Any, Any], Any], optimizer: str = "SGD", two_groups: bool = True,
               **opt_kwargs: Any) -> Callable[[Any], tuple[Any, Any]]:
    """A builder: the optimizer, then the scheduler ``make(lib, optimizer)``."""
    def build(lib: Any) -> tuple[Any, Any]:
        opt = make_optimizer(lib, optimizer, two_groups, **opt_kwargs)
        return opt, make(lib, opt)
    return build


def _decay(epoch: int) -> float:
    return 0.95 ** epoch


def _warm(epoch: int) -> float:
    return min(1.0, (epoch + 1) / 5)


SCHEDULES: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "StepLR": with_sched(lambda L, o: lr_sched(L).StepLR(o, step_size=7, gamma=0.3)),
    "StepLR-1": with_sched(lambda L, o: lr_sched(L).StepLR(o, 1)),
    "MultiStepLR": with_sched(
        lambda L, o: lr_sched(L).MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.5)),
    "ExponentialLR": with_sched(lambda L, o: lr_sched(L).ExponentialLR(o, gamma=0.93)),
    "CosineAnnealingLR": with_sched(
        lambda L, o: lr_sched(L).CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    "CosineAnnealingLR-7": with_sched(lambda L, o: lr_sched(L).CosineAnnealingLR(o, 7)),
    "CosineAnnealingLR-Adam": with_sched(
        lambda L, o: lr_sched(L).CosineAnnealingLR(o, T_max=30), "Adam"),
    "LambdaLR": with_sched(lambda L, o: lr_sched(L).LambdaLR(o, _decay)),
    "LambdaLR-per-group": with_sched(lambda L, o: lr_sched(L).LambdaLR(o, [_decay, _warm])),
    "MultiplicativeLR": with_sched(lambda L, o: lr_sched(L).MultiplicativeLR(o, _decay)),
    "LinearLR": with_sched(lambda L, o: lr_sched(L).LinearLR(o, start_factor=0.25,
                                                             total_iters=8)),
    "LinearLR-down": with_sched(lambda L, o: lr_sched(L).LinearLR(
        o, start_factor=1.0, end_factor=0.1, total_iters=20)),
    "ConstantLR": with_sched(lambda L, o: lr_sched(L).ConstantLR(o, factor=0.5,
                                                                 total_iters=4)),
    "PolynomialLR": with_sched(lambda L, o: lr_sched(L).PolynomialLR(o, total_iters=20,
                                                                     power=2.0)),
    "OneCycleLR-SGD": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=0.5, total_steps=STEPS), momentum=0.9),
    "OneCycleLR-Adam": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=[0.05, 0.01], total_steps=STEPS + 4),
        "Adam"),
    "OneCycleLR-linear-3phase": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=0.2, epochs=4, steps_per_epoch=10,
                                            anneal_strategy="linear", three_phase=True,
                                            pct_start=0.25), momentum=0.8),
    "OneCycleLR-3phase-cos": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=0.2, total_steps=STEPS,
                                            three_phase=True, base_momentum=0.7,
                                            max_momentum=[0.9, 0.99]), momentum=0.8),
    "OneCycleLR-no-momentum": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=0.3, total_steps=STEPS,
                                            cycle_momentum=False, div_factor=10.0,
                                            final_div_factor=100.0)),
    "OneCycleLR-RMSprop": with_sched(
        lambda L, o: lr_sched(L).OneCycleLR(o, max_lr=0.01, total_steps=STEPS),
        "RMSprop", momentum=0.5),
    "SequentialLR": with_sched(lambda L, o: lr_sched(L).SequentialLR(
        o, [lr_sched(L).LinearLR(o, start_factor=0.1, total_iters=5),
            lr_sched(L).CosineAnnealingLR(o, T_max=25)], milestones=[5])),
    "SequentialLR-3": with_sched(lambda L, o: lr_sched(L).SequentialLR(
        o, [lr_sched(L).ConstantLR(o, factor=0.2, total_iters=3),
            lr_sched(L).ExponentialLR(o, gamma=0.9),
            lr_sched(L).LambdaLR(o, _warm)], milestones=[4, 20])),
    "ChainedScheduler": with_sched(lambda L, o: lr_sched(L).ChainedScheduler(
        [lr_sched(L).ConstantLR(o, factor=0.5, total_iters=6),
         lr_sched(L).ExponentialLR(o, gamma=0.9)])),
}


def assert_exactly_equal(ours: Any, theirs: Any) -> None:
    """Equal structure and values; floats compared with ``==``."""
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_exactly_equal(a, b)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), (ours, theirs)
        for k in theirs:
            assert_exactly_equal(ours[k], theirs[k])
    elif isinstance(theirs, np.ndarray):
        assert np.array_equal(ours, theirs), (ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_torch_exactly(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a correct training loop warns on neither side
        theirs = run(torch, SCHEDULES[name])
        ours = run(rg, SCHEDULES[name])
    lrs = [lr for lr, _ in theirs[0]]
    assert len({x for step in lrs for x in step}) > 2  # the schedule does change the lr
    assert_exactly_equal(ours, theirs)


@pytest.mark.parametrize("name", ["StepLR", "OneCycleLR-Adam", "SequentialLR", "LambdaLR",
                                  "ChainedScheduler", "CosineAnnealingLR"])
def test_state_dict_matches_torch_and_resumes(name: str) -> None:
    """The scheduler's state_dict equals torch's; a scheduler and optimizer rebuilt from the
    saved states continue exactly as the originals."""
    build = SCHEDULES[name]

    def checkpoint_and_resume(lib: Any) -> tuple[Any, list[Any]]:
        opt, sched = build(lib)
        for _ in range(12):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        saved_opt = opt.state_dict()
        opt2, sched2 = build(lib)
        opt2.load_state_dict(saved_opt)
        sched2.load_state_dict(saved)
        lrs = []
        for _ in range(10):
            for o, s in ((opt, sched), (opt2, sched2)):
                o.step()
                s.step()
            lrs.append((sched.get_last_lr(), sched2.get_last_lr(),
                        [g["lr"] for g in opt2.param_groups]))
        return _comparable(saved), lrs

    theirs = checkpoint_and_resume(torch)
    ours = checkpoint_and_resume(rg)
    assert_exactly_equal(ours, theirs)
    for original, resumed, groups in ours[1]:
        assert original == resumed == groups


def _comparable(state: Any) -> Any:
    """A scheduler state with what cannot be compared across libraries made plain."""
    if isinstance(state, dict):
        return {k: _comparable(v) for k, v in state.items()}
    if isinstance(state, list):
        return [_comparable(v) for v in state]
    return state


def test_initial_lr_and_base_lrs_as_torch() -> None:
    def program(lib: Any) -> Any:
        opt = make_optimizer(lib)
        sched = lr_sched(lib).ExponentialLR(opt, gamma=0.5)
        return ([g["initial_lr"] for g in opt.param_groups], sched.base_lrs, sched.last_epoch,
                sorted(sched.state_dict()))

    assert_exactly_equal(program(rg), program(torch))


def test_resuming_with_last_epoch() -> None:
    """``last_epoch`` other than -1 takes ``initial_lr`` from the groups (KeyError without)."""
    def program(lib: Any) -> Any:
        opt = make_optimizer(lib)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        sched = lr_sched(lib).CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        out = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return out

    assert_exactly_equal(program(rg), program(torch))
    for lib in (torch, rg):
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                           r"param_groups\[0\] when resuming"):
            lr_sched(lib).StepLR(make_optimizer(lib), 3, last_epoch=2)


def caught(program: Callable[[], Any]) -> list[tuple[type, str]]:
    """The warnings ``program`` raises: (class, message)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        program()
    return [(w.category, str(w.message)) for w in record]


def test_scheduler_step_before_optimizer_step_warns_as_torch() -> None:
    def program(lib: Any) -> Callable[[], Any]:
        def steps() -> None:
            opt = make_optimizer(lib)
            sched = lr_sched(lib).StepLR(opt, 2)
            sched.step()  # before any optimizer.step(): warns
            opt.step()
            sched.step()
        return steps

    theirs, ours = caught(program(torch)), caught(program(rg))
    assert len(theirs) == 1 and "Detected call of `lr_scheduler.step()` before " in theirs[0][1]
    assert ours == theirs


def test_replaced_optimizer_step_warns_as_torch() -> None:
    def program(lib: Any) -> Callable[[], Any]:
        def steps() -> None:
            opt = make_optimizer(lib)
            sched = lr_sched(lib).ExponentialLR(opt, 0.5)
            opt.step = type(opt).step.__get__(opt)  # e.g. wrapped by some other tool
            opt.step()
            sched.step()
        return steps

    theirs, ours = caught(program(torch)), caught(program(rg))
    assert len(theirs) == 1 and "has been overridden" in theirs[0][1]
    assert ours == theirs


def test_get_lr_outside_step_and_epoch_argument_warn_as_torch() -> None:
    def program(lib: Any) -> Callable[[], Any]:
        def steps() -> Any:
            opt = make_optimizer(lib)
            sched = lr_sched(lib).StepLR(opt, 3, gamma=0.5)
            opt.step()
            sched.get_lr()
            sched.step(7)  # deprecated: the closed form at epoch 7
            return sched.get_last_lr()
        return steps

    theirs, ours = caught(program(torch)), caught(program(rg))
    assert [c for c, _ in theirs] == [UserWarning, UserWarning]
    assert ours == theirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program(rg)() == program(torch)()


def test_step_past_one_cycle_total_steps_raises_as_torch() -> None:
    messages = []
    for lib in (torch, rg):
        opt = make_optimizer(lib, momentum=0.9)
        sched = lr_sched(lib).OneCycleLR(opt, max_lr=1.0, total_steps=5)
        for _ in range(5):  # last_epoch == total_steps is still allowed, as in torch
            opt.step()
            sched.step()
        with pytest.raises(ValueError) as info:
            opt.step()
            sched.step()
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "Tried to step 6 times. The specified number of " \
                                         "total steps is 5"


LOSSES = ([1.0, 0.9, 0.9, 0.91, 0.9, 0.95, 0.89999, 0.7, 0.7, 0.7, 0.7, 0.71, 0.69]
          + [0.69] * 12 + [0.5, 0.6, 0.6, 0.6, 0.6, 0.4] + [0.4] * 10)

PLATEAU_CASES = [
    dict(),
    dict(patience=2),
    dict(patience=1, factor=0.5, cooldown=2),
    dict(patience=0, factor=0.5, min_lr=0.004),
    dict(patience=0, factor=0.5, min_lr=[0.01, 0.001]),
    dict(patience=1, threshold=0.05, threshold_mode="abs"),
    dict(patience=1, threshold=0.1, threshold_mode="rel", cooldown=1),
    dict(mode="max", patience=2, factor=0.3),
    dict(mode="max", patience=1, threshold_mode="abs", threshold=0.01),
    dict(patience=0, factor=0.9, eps=0.002),
]


@pytest.mark.parametrize("kwargs", PLATEAU_CASES, ids=[str(k) for k in PLATEAU_CASES])
def test_reduce_lr_on_plateau_matches_torch(kwargs: dict[str, Any]) -> None:
    def program(lib: Any) -> Any:
        opt = make_optimizer(lib, momentum=0.9)
        sched = lr_sched(lib).ReduceLROnPlateau(opt, **kwargs)
        out = []
        for loss in LOSSES:
            opt.step()
            sched.step(lib.tensor(loss, dtype=lib.float64))  # a loss tensor, as in training
            out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                        sched.best, sched.num_bad_epochs, sched.cooldown_counter,
                        sched.in_cooldown, sched.last_epoch))
        return out, sched.state_dict()

    theirs, ours = program(torch), program(rg)
    assert len({tuple(step[0]) for step in theirs[0]}) > 1  # the learning rate did drop
    assert_exactly_equal(ours, theirs)


def test_reduce_lr_on_plateau_state_dict_round_trip() -> None:
    for lib in (torch, rg):
        opt = make_optimizer(lib)
        sched = lr_sched(lib).ReduceLROnPlateau(opt, mode="max", patience=1)
        for loss in LOSSES[:8]:
            sched.step(loss)
        other = lr_sched(lib).ReduceLROnPlateau(make_optimizer(lib))
        other.load_state_dict(sched.state_dict())
        assert other.mode == "max" and other.best == sched.best and other.mode_worse == -math.inf


ERRORS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("LambdaLR wrong count", lambda L, o: lr_sched(L).LambdaLR(o, [_decay])),
    ("MultiplicativeLR not callable", lambda L, o: lr_sched(L).MultiplicativeLR(o, 0.5)),
    ("ConstantLR factor", lambda L, o: lr_sched(L).ConstantLR(o, factor=1.5)),
    ("LinearLR start", lambda L, o: lr_sched(L).LinearLR(o, start_factor=0.0)),
    ("LinearLR end", lambda L, o: lr_sched(L).LinearLR(o, end_factor=1.5)),
    ("not an optimizer", lambda L, o: lr_sched(L).StepLR(object(), 3)),
    ("OneCycle total", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0, total_steps=0)),
    ("OneCycle epochs", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0, epochs=0,
                                                            steps_per_epoch=3)),
    ("OneCycle steps_per_epoch", lambda L, o: lr_sched(L).OneCycleLR(
        o, 1.0, epochs=2, steps_per_epoch=-1)),
    ("OneCycle neither", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0)),
    ("OneCycle pct_start", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0, 10, pct_start=1.5)),
    ("OneCycle pct_start int", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0, 10, pct_start=0)),
    ("OneCycle anneal", lambda L, o: lr_sched(L).OneCycleLR(o, 1.0, 10,
                                                            anneal_strategy="exp")),
    ("OneCycle max_lr count", lambda L, o: lr_sched(L).OneCycleLR(o, [1.0, 2.0, 3.0], 10)),
    ("OneCycle no momentum", lambda L, o: lr_sched(L).OneCycleLR(
        L.optim.Adagrad(o.param_groups[0]["params"]), 1.0, 10)),
    ("Sequential empty", lambda L, o: lr_sched(L).SequentialLR(o, [], [])),
    ("Sequential milestones", lambda L, o: lr_sched(L).SequentialLR(
        o, [lr_sched(L).StepLR(o, 2)], [3])),
    ("Sequential plateau", lambda L, o: lr_sched(L).SequentialLR(
        o, [lr_sched(L).StepLR(o, 2), lr_sched(L).ReduceLROnPlateau(o)], [3])),
    ("Sequential no optimizer", lambda L, o: lr_sched(L).SequentialLR(o, [object()], [])),
    ("Chained empty", lambda L, o: lr_sched(L).ChainedScheduler([])),
    ("Plateau factor", lambda L, o: lr_sched(L).ReduceLROnPlateau(o, factor=1.0)),
    ("Plateau mode", lambda L, o: lr_sched(L).ReduceLROnPlateau(o, mode="lowest")),
    ("Plateau threshold_mode", lambda L, o: lr_sched(L).ReduceLROnPlateau(
        o, threshold_mode="relative")),
    ("Plateau min_lr count", lambda L, o: lr_sched(L).ReduceLROnPlateau(o, min_lr=[0.1])),
]


@pytest.mark.parametrize(("what", "make"), ERRORS, ids=[w for w, _ in ERRORS])
def test_bad_arguments_raise_as_torch(what: str, make: Callable[[Any, Any], Any]) -> None:
    raised = []
    for lib in (torch, rg):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared below
            make(lib, make_optimizer(lib))
        raised.append(info.value)
    theirs, ours = raised
    assert type(ours) is type(theirs), (what, theirs, ours)
    assert str(ours) == str(theirs)


def test_sequential_with_another_optimizer_raises() -> None:
    for lib in (torch, rg):
        opt, other = make_optimizer(lib), make_optimizer(lib)
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same "
                                             "optimizer"):
            lr_sched(lib).SequentialLR(opt, [lr_sched(lib).StepLR(other, 2)], [])


def test_plateau_min_lrs_must_follow_added_groups() -> None:
    for lib in (torch, rg):
        opt = make_optimizer(lib, two_groups=False)
        sched = lr_sched(lib).ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
        opt.add_param_group({"params": [lib.zeros(2, requires_grad=True)]})
        sched.step(1.0)
        with pytest.raises(RuntimeError, match="differs from when `ReduceLROnPlateau` was "
                                               "initialized"):
            sched.step(2.0)


def test_exports() -> None:
    assert rg.optim.lr_scheduler.__all__ is not None
    names = {"LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
             "OneCycleLR", "LambdaLR", "LinearLR", "SequentialLR", "ReduceLROnPlateau"}
    assert names <= set(rg.optim.lr_scheduler.__all__)
    for name in names:
        assert issubclass(getattr(rg.optim.lr_scheduler, name),
                          rg.optim.lr_scheduler.LRScheduler)
