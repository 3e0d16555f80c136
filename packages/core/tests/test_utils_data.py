"""``retrograd.utils.data`` against ``torch.utils.data``.

Each program is written once against a library handle ``lib`` (``torch`` or ``retrograd``)
and run on both: results (values, dtypes, container types), error classes and messages and
warning texts must agree. Where randomness is involved (shuffling, ``random_split``,
``RandomSampler``) retrograd's generator draws other numbers than torch's, so what is
compared is structure: sizes, that every index appears exactly once, that the same seed
gives the same order and another epoch another one."""

from __future__ import annotations

import collections
import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.data
from torch_parity import plain, same

import retrograd as rg
import retrograd.utils.data as rdata

Point = collections.namedtuple("Point", ["x", "y"])


def data_of(lib: Any) -> Any:
    """The data-loading module of ``lib``."""
    return torch.utils.data if lib is torch else rdata


def tensors_of(lib: Any, n: int = 10) -> tuple[Any, Any]:
    """Two row-aligned tensors: ``x[i] = [2i, 2i+1]`` (float32) and ``y[i] = i`` (int64)."""
    x = lib.arange(2 * n, dtype=lib.float32).reshape(n, 2)
    y = lib.arange(n)
    return x, y


def typed(v: Any) -> Any:
    """``plain`` that also records container types (namedtuple vs tuple vs list vs dict)."""
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (type(v).__name__, [typed(x) for x in v])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [typed(x) for x in v])
    if isinstance(v, dict):
        return ("dict", {k: typed(x) for k, x in v.items()})
    return plain(v)


def raised(program: Any, lib: Any) -> BaseException:
    """The exception ``program(lib)`` raises (fails the test if it returns)."""
    try:
        program(lib)
    except Exception as exc:  # noqa: BLE001 - compared with the oracle's
        return exc
    raise AssertionError(f"{lib.__name__}: no exception")


def same_error(program: Any) -> None:
    """Both libraries raise: retrograd's error is an instance of torch's class, with the
    same message."""
    want, got = raised(program, torch), raised(program, rg)
    assert isinstance(got, type(want)), f"torch {type(want).__name__}, rg {type(got)}: {got}"
    assert str(got) == str(want), f"\ntorch: {want}\nrg:    {got}"


def warnings_of(program: Any, lib: Any) -> list[tuple[type, str]]:
    """The (category, message) of every warning ``program(lib)`` raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [(w.category, str(w.message)) for w in caught]


def same_typed(program: Any) -> None:
    """Both libraries return the same values, dtypes and container types."""
    want, got = typed(program(torch)), typed(program(rg))
    assert got == want, f"\ntorch: {want}\nrg:    {got}"


# -- 1. datasets -----------------------------------------------------------------------------
def test_tensor_dataset_rows_and_length():
    def program(lib):
        ds = data_of(lib).TensorDataset(*tensors_of(lib))
        return [len(ds), ds[0], ds[9], ds[-1], ds[[1, 3]], ds[2:4]]

    same_typed(program)


def test_tensor_dataset_size_mismatch():
    same_error(lambda lib: data_of(lib).TensorDataset(lib.zeros(3), lib.zeros(4)))
    same_error(lambda lib: len(data_of(lib).TensorDataset()))  # IndexError: no tensors


def test_concat_dataset_and_add():
    def program(lib):
        D = data_of(lib)
        x, y = tensors_of(lib, 4)
        a, b = D.TensorDataset(x), D.TensorDataset(y)
        both = a + b
        return [type(both).__name__, len(both), both.cumulative_sizes, both[0], both[3],
                both[4], both[7], both[-1], both[-8]]

    same_typed(program)


@pytest.mark.parametrize("case", ["too_negative", "empty", "iterable", "past_end"])
def test_concat_dataset_errors(case):
    def program(lib):
        D = data_of(lib)
        if case == "too_negative":
            return D.ConcatDataset([[1, 2], [3]])[-4]
        if case == "empty":
            return D.ConcatDataset([])
        if case == "iterable":
            return D.ConcatDataset([[1], Stream(lib, 3)])
        return D.ConcatDataset([[1, 2], [3]])[3]

    same_error(program)


def test_concat_dataset_old_attribute_name_warns():
    def program(lib):
        return data_of(lib).ConcatDataset([[1, 2], [3]]).cummulative_sizes

    got = warnings_of(program, rg)
    assert got and got == warnings_of(program, torch)
    with pytest.warns(FutureWarning):
        assert program(rg) == [2, 3]


def Stream(lib: Any, n: int, start: int = 0) -> Any:
    """An ``IterableDataset`` of ``lib`` yielding ``start .. start+n-1`` with a length."""
    D = data_of(lib)

    class _Stream(D.IterableDataset):
        def __iter__(self):
            return iter(range(start, start + n))

        def __len__(self):
            return n

    return _Stream()


def test_chain_dataset_and_add():
    def program(lib):
        chained = Stream(lib, 3) + Stream(lib, 2, start=10)
        return [type(chained).__name__, list(chained), len(chained)]

    same_typed(program)


def test_chain_dataset_refuses_map_style_dataset():
    same_error(lambda lib: list(data_of(lib).ChainDataset([Stream(lib, 2), [1, 2]])))
    same_error(lambda lib: len(data_of(lib).ChainDataset([[1, 2]])))


def test_stack_dataset_tuple_and_dict():
    def program(lib):
        D = data_of(lib)
        x, y = tensors_of(lib, 4)
        pair = D.StackDataset(D.TensorDataset(x), y)
        named = D.StackDataset(x=x, y=D.Subset(D.TensorDataset(y), [3, 2, 1, 0]))
        return [len(pair), pair[1], named[1], pair.__getitems__([0, 2]),
                named.__getitems__([0, 3])]

    same_typed(program)


@pytest.mark.parametrize("args", ["both", "none", "mismatch", "kw_mismatch"])
def test_stack_dataset_errors(args):
    def program(lib):
        D = data_of(lib)
        if args == "both":
            return D.StackDataset([1], y=[2])
        if args == "none":
            return D.StackDataset()
        if args == "mismatch":
            return D.StackDataset([1], [1, 2])
        return D.StackDataset(a=[1], b=[1, 2])

    same_error(program)


def test_base_classes_are_abstract():
    same_error(lambda lib: data_of(lib).Dataset()[0])
    same_error(lambda lib: data_of(lib).IterableDataset())
    same_error(lambda lib: iter(data_of(lib).Sampler()))


# -- 2. Subset and random_split ----------------------------------------------------------------
def test_subset_indexing():
    def program(lib):
        D = data_of(lib)
        sub = D.Subset(D.TensorDataset(*tensors_of(lib)), [7, 2, 5])
        return [len(sub), sub[0], sub[-1], sub[[0, 2]], sub.__getitems__([1, 2])]

    same_typed(program)


def test_subset_subclass_must_override_getitems():
    def program(lib):
        D = data_of(lib)

        class Doubled(D.Subset):
            def __getitem__(self, idx):
                return 2 * super().__getitem__(idx)

        return Doubled([1, 2, 3], [0])

    same_error(program)


@pytest.mark.parametrize("lengths", [[3, 7], [10, 0], [0, 10], [1, 1, 8]])
def test_random_split_int_lengths_partition(lengths):
    def program(lib):
        g = lib.Generator().manual_seed(0)
        parts = data_of(lib).random_split(range(10), lengths, generator=g)
        return [[type(p).__name__, len(p)] for p in parts]

    same_typed(program)
    parts = rdata.random_split(range(10), lengths, generator=rg.Generator().manual_seed(0))
    seen = sorted(i for p in parts for i in (p[j] for j in range(len(p))))
    assert seen == list(range(10))


@pytest.mark.parametrize(("n", "fractions"), [
    (10, [0.3, 0.7]), (30, [0.3, 0.3, 0.4]), (7, [0.5, 0.5]), (5, [1 / 3, 1 / 3, 1 / 3]),
    (3, [0.1, 0.1, 0.8]), (11, [0.25, 0.25, 0.25, 0.25]), (0, [0.5, 0.5])])
def test_random_split_fractions_give_torchs_lengths(n, fractions):
    def program(lib):
        parts = data_of(lib).random_split(range(n), fractions,
                                          generator=lib.Generator().manual_seed(1))
        return [len(p) for p in parts]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # compared on the next line
        same(program)
    assert warnings_of(program, rg) == warnings_of(program, torch)


def test_random_split_zero_length_warning_text():
    def program(lib):
        data_of(lib).random_split(range(1), [0.5, 0.5], generator=lib.Generator())

    got = warnings_of(program, rg)
    assert got and got == warnings_of(program, torch)


@pytest.mark.parametrize("lengths", [[3, 6], [1.5, -0.5], [0.3, 0.3], [5, 5, 1]])
def test_random_split_errors(lengths):
    same_error(lambda lib: data_of(lib).random_split(range(10), lengths,
                                                     generator=lib.Generator()))


def test_random_split_is_reproducible_and_seed_dependent():
    def split(seed):
        parts = rdata.random_split(range(20), [5, 15], generator=rg.Generator().manual_seed(seed))
        return [list(p.indices) for p in parts]

    assert split(3) == split(3)
    assert split(3) != split(4)
    rg.manual_seed(5)
    first = [list(p.indices) for p in rdata.random_split(range(20), [10, 10])]
    rg.manual_seed(5)
    assert first == [list(p.indices) for p in rdata.random_split(range(20), [10, 10])]


# -- 3. samplers -----------------------------------------------------------------------------
def test_sequential_sampler():
    same(lambda lib: [list(data_of(lib).SequentialSampler(range(5))),
                      len(data_of(lib).SequentialSampler(range(5)))])


@pytest.mark.parametrize("kwargs", [
    {"replacement": 1}, {"num_samples": 0}, {"num_samples": -2}, {"num_samples": 1.5},
    {"replacement": True, "num_samples": "3"}])
def test_random_sampler_argument_errors(kwargs):
    same_error(lambda lib: data_of(lib).RandomSampler(range(4), **kwargs))


def test_random_sampler_empty_source_is_refused():
    same_error(lambda lib: data_of(lib).RandomSampler([]))


@pytest.mark.parametrize(("n", "num_samples"), [(5, None), (5, 3), (4, 10), (3, 3)])
def test_random_sampler_without_replacement_is_permutations(n, num_samples):
    def program(lib):
        sampler = data_of(lib).RandomSampler(range(n), num_samples=num_samples,
                                             generator=lib.Generator().manual_seed(0))
        drawn = list(sampler)
        # every full block of n is a permutation; the tail has distinct indices
        blocks = [sorted(drawn[i:i + n]) for i in range(0, len(drawn), n)]
        full = [b == list(range(n)) for b in blocks if len(b) == n]
        tail = [len(set(b)) == len(b) for b in blocks]
        return [len(sampler), len(drawn), full, tail]

    same(program)


@pytest.mark.parametrize("num_samples", [1, 31, 32, 70])
def test_random_sampler_with_replacement(num_samples):
    def program(lib):
        sampler = data_of(lib).RandomSampler(range(4), replacement=True,
                                             num_samples=num_samples)
        drawn = list(sampler)
        return [len(sampler), len(drawn), all(0 <= i < 4 for i in drawn),
                all(type(i) is int for i in drawn)]

    same(program)


def test_random_sampler_reproducible_through_generator_and_manual_seed():
    g = rg.Generator().manual_seed(7)
    sampler = rdata.RandomSampler(range(50), generator=g)
    first, second = list(sampler), list(sampler)
    assert first != second  # each pass draws a new permutation
    g.manual_seed(7)
    assert list(sampler) == first
    rg.manual_seed(11)
    a = list(rdata.RandomSampler(range(50)))
    rg.manual_seed(11)
    assert list(rdata.RandomSampler(range(50))) == a


def test_subset_random_sampler():
    def program(lib):
        sampler = data_of(lib).SubsetRandomSampler([4, 8, 15, 16],
                                                   generator=lib.Generator().manual_seed(0))
        return [len(sampler), sorted(sampler)]

    same(program)


def test_weighted_random_sampler():
    def program(lib):
        D = data_of(lib)
        g = lib.Generator().manual_seed(0)
        with_r = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 20, generator=g))
        without = list(D.WeightedRandomSampler([1.0, 1.0, 0.5], 3, replacement=False,
                                               generator=g))
        return [len(with_r), set(with_r) <= {1, 3}, sorted(without)]

    same(program)


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], True), ([1.0], 2, 1),
                                  ([[1.0, 2.0]], 2)])
def test_weighted_random_sampler_errors(args):
    same_error(lambda lib: data_of(lib).WeightedRandomSampler(*args))


@pytest.mark.parametrize(("n", "batch_size", "drop_last"), [
    (10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (2, 5, False),
    (2, 5, True), (0, 4, False), (7, 1, True)])
def test_batch_sampler(n, batch_size, drop_last):
    def program(lib):
        D = data_of(lib)
        sampler = D.BatchSampler(D.SequentialSampler(range(n)), batch_size, drop_last)
        return [list(sampler), len(sampler)]

    same(program)


@pytest.mark.parametrize(("batch_size", "drop_last"), [
    (0, False), (-1, False), (True, False), (2.0, False), ("2", False), (2, 0), (2, None)])
def test_batch_sampler_argument_errors(batch_size, drop_last):
    same_error(lambda lib: data_of(lib).BatchSampler(range(4), batch_size, drop_last))


# -- 4. DistributedSampler -------------------------------------------------------------------
SHARD_CASES = [(n, r, d) for n in (0, 1, 2, 5, 10, 11, 12) for r in (1, 3, 4)
               for d in (False, True)] + [(2, 5, False), (1, 7, False), (3, 7, True)]


@pytest.mark.parametrize(("n", "replicas", "drop_last"), SHARD_CASES)
def test_distributed_sampler_without_shuffle_matches_torch(n, replicas, drop_last):
    def program(lib):
        out = []
        for rank in range(replicas):
            s = data_of(lib).DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                                shuffle=False, drop_last=drop_last)
            out.append([list(s), len(s), s.num_samples, s.total_size])
        return out

    same(program)


@pytest.mark.parametrize(("rank", "replicas"), [(-1, 2), (2, 2), (5, 3)])
def test_distributed_sampler_invalid_rank(rank, replicas):
    same_error(lambda lib: data_of(lib).DistributedSampler(range(4), num_replicas=replicas,
                                                           rank=rank))


def shards(n, replicas, *, epoch=0, seed=0, drop_last=False):
    """Every rank's indices, each rank with its own sampler (as separate processes)."""
    out = []
    for rank in range(replicas):
        s = rdata.DistributedSampler(range(n), num_replicas=replicas, rank=rank, seed=seed,
                                     drop_last=drop_last)
        s.set_epoch(epoch)
        out.append(list(s))
    return out


@pytest.mark.parametrize(("n", "replicas"), [(12, 3), (12, 4), (20, 5), (7, 7)])
def test_distributed_sampler_shuffle_partitions_when_divisible(n, replicas):
    parts = shards(n, replicas)
    assert sorted(i for p in parts for i in p) == list(range(n))
    assert all(len(p) == n // replicas for p in parts)
    assert [i for p in parts for i in p] != list(range(n)) or n == replicas


@pytest.mark.parametrize(("n", "replicas", "drop_last"), [(10, 3, False), (10, 4, True),
                                                           (2, 5, False)])
def test_distributed_sampler_shuffle_pads_or_trims_like_torch(n, replicas, drop_last):
    def counts(lib):
        parts = []
        for rank in range(replicas):
            s = data_of(lib).DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                                drop_last=drop_last)
            parts.append(list(s))
        flat = [i for p in parts for i in p]
        return [[len(p) for p in parts], len(flat), len(set(flat)),
                sorted(collections.Counter(flat).values())]

    same(counts)


def test_distributed_sampler_same_permutation_on_every_rank():
    # rank r reads positions r, r+R, ...: interleaving the shards rebuilds one permutation,
    # which is the same whichever rank computes it
    parts = shards(12, 3, epoch=2, seed=9)
    interleaved = [parts[i % 3][i // 3] for i in range(12)]
    again = shards(12, 3, epoch=2, seed=9)
    assert again == parts
    assert sorted(interleaved) == list(range(12))


def test_distributed_sampler_epoch_and_seed_change_the_order():
    base = shards(40, 2, epoch=0)
    assert shards(40, 2, epoch=1) != base
    assert shards(40, 2, epoch=0, seed=1) != base
    # the shuffle seed is seed + epoch, as in torch
    assert shards(40, 2, epoch=1, seed=0) == shards(40, 2, epoch=0, seed=1)
    s = rdata.DistributedSampler(range(40), num_replicas=2, rank=0)
    assert list(s) == list(s)  # without set_epoch, every pass repeats the order


def test_distributed_sampler_without_group_matches_torch():
    """No process group in this process: asking for the defaults raises what torch raises
    (its ValueError from ``get_world_size``/``get_rank``); given both, no group is needed."""
    import torch.utils.data as tdata

    for kw in ({}, {"num_replicas": 2}, {"rank": 0}):
        with pytest.raises(Exception) as ours:
            rdata.DistributedSampler(range(4), **kw)
        with pytest.raises(Exception) as theirs:
            tdata.DistributedSampler(range(4), **kw)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
    assert list(rdata.DistributedSampler(range(4), num_replicas=2, rank=1, shuffle=False)) \
        == list(tdata.DistributedSampler(range(4), num_replicas=2, rank=1, shuffle=False))


# -- 5. collation ----------------------------------------------------------------------------
COLLATE_BATCHES = {
    "ints": lambda lib: [0, 1, 2, 3],
    "floats": lambda lib: [0.5, 1.0, 2.25],
    "bools": lambda lib: [True, False, True],
    "int_then_float": lambda lib: [1, 2.5],
    "strings": lambda lib: ["a", "bc", "d"],
    "bytes": lambda lib: [b"a", b"b"],
    "tensors_f32": lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    "tensors_i64_2d": lambda lib: [lib.ones(2, 3, dtype=lib.int64), lib.zeros(2, 3,
                                                                              dtype=lib.int64)],
    "tensors_0d": lambda lib: [lib.tensor(1.5, dtype=lib.float64), lib.tensor(2.0,
                                                                              dtype=lib.float64)],
    "numpy_f32": lambda lib: [np.ones(3, np.float32), np.zeros(3, np.float32)],
    "numpy_i64": lambda lib: [np.arange(4).reshape(2, 2), np.arange(4, 8).reshape(2, 2)],
    "numpy_scalars_f64": lambda lib: [np.float64(1.5), np.float64(2.5)],
    "numpy_scalars_i32": lambda lib: [np.int32(1), np.int32(2)],
    "numpy_bool": lambda lib: [np.bool_(True), np.bool_(False)],
    "tuples": lambda lib: [(0, 1.0), (2, 3.0)],
    "lists": lambda lib: [[0, 1], [2, 3]],
    "dicts": lambda lib: [{"a": 0, "b": lib.tensor([1.0])}, {"a": 100, "b": lib.tensor([2.0])}],
    "namedtuples": lambda lib: [Point(0, 0.5), Point(1, 1.5)],
    "nested": lambda lib: [{"p": (lib.tensor([1, 2]), "x"), "q": [Point(1, [2, 3])]},
                           {"p": (lib.tensor([3, 4]), "y"), "q": [Point(4, [5, 6])]}],
    "ordered_dict": lambda lib: [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
}


@pytest.mark.parametrize("name", sorted(COLLATE_BATCHES))
def test_default_collate_matches_torch(name):
    same_typed(lambda lib: data_of(lib).default_collate(COLLATE_BATCHES[name](lib)))


def test_default_collate_keeps_mapping_type():
    got = rdata.default_collate(COLLATE_BATCHES["ordered_dict"](rg))
    assert type(got) is collections.OrderedDict
    assert type(rdata.default_collate(COLLATE_BATCHES["namedtuples"](rg))) is Point


def test_default_collate_keeps_grad_history():
    a, b = rg.tensor([1.0], requires_grad=True), rg.tensor([2.0], requires_grad=True)
    batch = rdata.default_collate([a, b])
    batch.sum().backward()
    assert a.grad.tolist() == [1.0] and b.grad.tolist() == [1.0]


@pytest.mark.parametrize("case", ["unequal_lists", "unequal_tensors", "object", "none",
                                  "numpy_strings", "numpy_objects"])
def test_default_collate_errors(case):
    batches = {
        "unequal_lists": lambda lib: [[1, 2], [3]],
        "unequal_tensors": lambda lib: [lib.zeros(2), lib.zeros(3)],
        "object": lambda lib: [object(), object()],
        "none": lambda lib: [None, None],
        "numpy_strings": lambda lib: [np.array(["a"]), np.array(["b"])],
        "numpy_objects": lambda lib: [np.array([{}], dtype=object), np.array([{}],
                                                                            dtype=object)],
    }
    if case == "object":  # the message names the element's type, which is the same class
        want, got = (raised(lambda lib: data_of(lib).default_collate(batches[case](lib)), lib)
                     for lib in (torch, rg))
        assert type(got) is type(want) is TypeError and str(got) == str(want)
        return
    same_error(lambda lib: data_of(lib).default_collate(batches[case](lib)))


CONVERT_INPUTS = {
    "array": lambda lib: np.arange(3),
    "f32_array": lambda lib: np.ones((2, 2), np.float32),
    "scalar": lambda lib: np.float64(2.5),
    "int": lambda lib: 3,
    "str": lambda lib: "abc",
    "string_array": lambda lib: np.array(["a", "b"]),
    "tuple": lambda lib: (np.arange(2), 1),
    "list": lambda lib: [np.arange(2), "s"],
    "dict": lambda lib: {"a": np.zeros(2), "b": [np.int64(4)]},
    "namedtuple": lambda lib: Point(np.array(0), np.array(1.5)),
    "tensor": lambda lib: lib.tensor([1, 2]),
}


@pytest.mark.parametrize("name", sorted(CONVERT_INPUTS))
def test_default_convert_matches_torch(name):
    def program(lib):
        out = data_of(lib).default_convert(CONVERT_INPUTS[name](lib))
        if isinstance(out, np.ndarray):  # left alone: compare as a marked list
            return ("ndarray", out.tolist())
        return out

    same_typed(program)


def test_collate_fn_map_can_be_extended():
    """``collate`` consults the map given; an entry for a new type is used for it."""
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_boxes(batch, *, collate_fn_map):
        return sum(b.v for b in batch)

    for lib in (torch, rg):
        D = data_of(lib)
        module = torch.utils.data._utils.collate if lib is torch else D.collation
        table = {**module.default_collate_fn_map, Box: collate_boxes}
        collate = module.collate
        assert collate([{"b": Box(1)}, {"b": Box(2)}], collate_fn_map=table) == {"b": 3}


# -- 6. DataLoader ---------------------------------------------------------------------------
@pytest.mark.parametrize(("batch_size", "drop_last"), [(1, False), (3, False), (3, True),
                                                       (4, True), (10, False), (12, False),
                                                       (12, True)])
def test_dataloader_sequential_batches(batch_size, drop_last):
    def program(lib):
        D = data_of(lib)
        loader = D.DataLoader(D.TensorDataset(*tensors_of(lib)), batch_size=batch_size,
                              drop_last=drop_last)
        return [len(loader), list(loader), list(loader)]

    same_typed(program)


def test_dataloader_collates_dict_and_plain_samples():
    class Records:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"id": i, "score": i / 2, "name": f"n{i}", "pair": (i, np.float32(i))}

    same_typed(lambda lib: list(data_of(lib).DataLoader(Records(), batch_size=2)))
    same_typed(lambda lib: list(data_of(lib).DataLoader(list(range(7)), batch_size=3)))


def test_dataloader_without_batching_converts_each_sample():
    def program(lib):
        D = data_of(lib)
        loader = D.DataLoader([np.arange(2) + i for i in range(3)], batch_size=None)
        plain_loader = D.DataLoader(D.TensorDataset(*tensors_of(lib, 3)), batch_size=None)
        return [len(loader), list(loader), loader.batch_sampler, loader.batch_size,
                list(plain_loader)]

    same_typed(program)


def test_dataloader_custom_sampler_batch_sampler_and_collate_fn():
    def program(lib):
        D = data_of(lib)
        ds = D.TensorDataset(*tensors_of(lib))
        by_sampler = D.DataLoader(ds, batch_size=2, sampler=[9, 0, 8, 1, 7])
        by_batches = D.DataLoader(ds, batch_sampler=[[0, 1, 2], [5], [9, 3]])
        summed = D.DataLoader(ds, batch_size=4, collate_fn=lambda b: len(b))
        return [len(by_sampler), list(by_sampler), len(by_batches), list(by_batches),
                list(summed), by_batches.batch_size, by_batches.drop_last]

    same_typed(program)


def test_dataloader_uses_getitems_when_present():
    class Batched:
        def __init__(self):
            self.calls = []

        def __len__(self):
            return 4

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [i * 10 for i in indices]

    def program(lib):
        ds = Batched()
        out = list(data_of(lib).DataLoader(ds, batch_size=3))
        return [out, ds.calls]

    same_typed(program)


@pytest.mark.parametrize(("batch_size", "drop_last"), [(2, False), (2, True), (3, True),
                                                       (None, False), (7, False)])
def test_dataloader_iterable_dataset(batch_size, drop_last):
    def program(lib):
        loader = data_of(lib).DataLoader(Stream(lib, 7), batch_size=batch_size,
                                         drop_last=drop_last)
        return [len(loader), list(loader)]

    same_typed(program)


def test_dataloader_iterable_dataset_longer_than_reported_warns():
    class Liar(rdata.IterableDataset):
        def __iter__(self):
            return iter(range(3))

        def __len__(self):
            return 2

    class TorchLiar(torch.utils.data.IterableDataset):
        __iter__, __len__ = Liar.__iter__, Liar.__len__

    def program(lib):
        loader = data_of(lib).DataLoader(Liar() if lib is rg else TorchLiar(),
                                         batch_size=None)
        len(loader)
        list(loader)

    def scrub(ws):  # the dataset's repr (an address) differs
        return [(c, m.split(" was reported")[1]) for c, m in ws]

    got = scrub(warnings_of(program, rg))
    assert got and got == scrub(warnings_of(program, torch))


DATALOADER_ERRORS = {
    "sampler_and_shuffle": dict(sampler=[0, 1], shuffle=True),
    "batch_sampler_and_batch_size": dict(batch_sampler=[[0]], batch_size=2),
    "batch_sampler_and_shuffle": dict(batch_sampler=[[0]], shuffle=True),
    "batch_sampler_and_sampler": dict(batch_sampler=[[0]], sampler=[0]),
    "batch_sampler_and_drop_last": dict(batch_sampler=[[0]], drop_last=True),
    "no_batch_and_drop_last": dict(batch_size=None, drop_last=True),
    "negative_workers": dict(num_workers=-1),
    "negative_timeout": dict(timeout=-1),
    "prefetch_without_workers": dict(prefetch_factor=2),
    "persistent_without_workers": dict(persistent_workers=True),
    "context_without_workers": dict(multiprocessing_context="spawn"),
    "bad_batch_size": dict(batch_size=0),
    "bool_drop_last_check": dict(batch_size=2, drop_last=1),
}


@pytest.mark.parametrize("case", sorted(DATALOADER_ERRORS))
def test_dataloader_argument_errors(case):
    same_error(lambda lib: data_of(lib).DataLoader(list(range(4)), **DATALOADER_ERRORS[case]))


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]),
                                    dict(batch_sampler=[[0]])])
def test_dataloader_iterable_dataset_refuses_order_options(kwargs):
    def program(lib):
        ds = Stream(lib, 3)
        return data_of(lib).DataLoader(ds, **kwargs)

    want, got = raised(program, torch), raised(program, rg)
    assert type(got) is type(want) is ValueError
    # the message quotes the option's repr; compare up to it
    assert str(got).split(" but got ")[0] == str(want).split(" but got ")[0]


def test_dataloader_attributes_are_frozen_after_construction():
    for attr in ("batch_size", "sampler", "dataset", "drop_last", "batch_sampler",
                 "persistent_workers"):
        same_error(lambda lib, attr=attr: setattr(data_of(lib).DataLoader([1]), attr, 2))
    loader = rdata.DataLoader([1, 2])
    loader.collate_fn = len  # not frozen, as in torch
    assert list(loader) == [1, 1]


def test_dataloader_timeout_without_workers_fails_on_iteration():
    same_error(lambda lib: iter(data_of(lib).DataLoader([1, 2], timeout=1.0)))


def test_dataloader_pin_memory_warns_like_torch_on_cpu():
    if torch.accelerator.is_available():  # torch would pin and stay quiet
        pytest.skip("torch has an accelerator here")

    def program(lib):
        return list(data_of(lib).DataLoader([1, 2], pin_memory=True))

    if rdata.dataloader._has_accelerator():
        assert "no pinned memory" in warnings_of(program, rg)[0][1]
        return
    got = warnings_of(program, rg)
    assert got and got == warnings_of(program, torch)


def test_dataloader_refuses_worker_processes():
    with pytest.raises(NotImplementedError, match=r"num_workers=2.*no worker processes"):
        rdata.DataLoader(list(range(4)), num_workers=2)
    # torch's own argument checks still come first
    with pytest.raises(ValueError, match="prefetch_factor option should be non-negative"):
        rdata.DataLoader(list(range(4)), num_workers=2, prefetch_factor=-1)


def test_dataloader_shuffle_draws_a_permutation_per_epoch():
    def program(lib):
        loader = data_of(lib).DataLoader(list(range(30)), batch_size=7, shuffle=True,
                                         generator=lib.Generator().manual_seed(0))
        epochs = [[i for b in loader for i in b.tolist()] for _ in range(3)]
        return [len(loader), type(loader.sampler).__name__,
                [sorted(e) == list(range(30)) for e in epochs],
                epochs[0] != epochs[1], [len(b) for b in loader]]

    same(program)


def test_dataloader_shuffle_is_reproducible_with_generator():
    def run(seed):
        loader = rdata.DataLoader(list(range(30)), batch_size=5, shuffle=True,
                                  generator=rg.Generator().manual_seed(seed))
        return [b.tolist() for b in loader]

    assert run(1) == run(1)
    assert run(1) != run(2)
    # the loader's order is RandomSampler's with the same generator
    sampler = rdata.RandomSampler(range(30), generator=rg.Generator().manual_seed(1))
    assert [i for b in run(1) for i in b] == list(sampler)


def test_dataloader_with_distributed_sampler_shards_batches():
    def program(lib):
        D = data_of(lib)
        ds = D.TensorDataset(*tensors_of(lib))
        out = []
        for rank in range(3):
            sampler = D.DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=False)
            out.append(list(D.DataLoader(ds, batch_size=2, sampler=sampler)))
        return out

    same_typed(program)


def test_get_worker_info_is_none_in_the_main_process():
    assert rdata.get_worker_info() is None is torch.utils.data.get_worker_info()


def test_public_names_are_torchs():
    """Every public name retrograd exports is one torch.utils.data has, and documented."""
    for name in rdata.__all__:
        assert hasattr(torch.utils.data, name), name
        assert getattr(rdata, name).__doc__ or not callable(getattr(rdata, name)), name
