"""Fuzzer: random parameter sets (FuzzedParameter, ParameterAlias) and the tensors they shape
(FuzzedTensor), reproducible from a seed: the parameters from NumPy's RandomState(seed), the
tensors from torch.manual_seed, so a seed gives PyTorch's parameters and tensors."""
import functools
import itertools as it

import numpy as np

from . import common

__all__ = ["Fuzzer", "FuzzedParameter", "ParameterAlias", "FuzzedTensor"]

_DISTRIBUTIONS = ("loguniform", "uniform")


class FuzzedParameter:
    """A parameter drawn each step: "loguniform" or "uniform" between minval and maxval
    (integers when both are ints), or from a dict {value: probability}."""

    def __init__(self, name, minval=None, maxval=None, distribution=None, strict=False):
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self):
        return self._name

    def sample(self, state):
        if self._distribution == "loguniform":
            return self._loguniform(state)
        if self._distribution == "uniform":
            return self._uniform(state)
        if isinstance(self._distribution, dict):
            return self._custom_distribution(state)

    def _check_distribution(self, distribution):
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
        else:
            if any(i < 0 for i in distribution.values()):
                raise AssertionError("Probabilities cannot be negative")
            # (PyTorch 2.13's test is inverted and refuses every normalized distribution, so
            # that no dict works there; this one refuses those that do not sum to one)
            if abs(sum(distribution.values()) - 1) > 1e-5:
                raise AssertionError("Distribution is not normalized")
            if self._minval is not None:
                raise AssertionError("When passing a custom distribution, 'minval' must be None")
            if self._maxval is not None:
                raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def _loguniform(self, state):
        out = int(2 ** state.uniform(
            low=np.log2(self._minval) if self._minval is not None else None,
            high=np.log2(self._maxval) if self._maxval is not None else None))
        if self._minval is not None and out < self._minval:
            return self._minval
        if self._maxval is not None and out > self._maxval:
            return self._maxval
        return out

    def _uniform(self, state):
        if isinstance(self._minval, int) and isinstance(self._maxval, int):
            return int(state.randint(low=self._minval, high=self._maxval + 1))
        return state.uniform(low=self._minval, high=self._maxval)

    def _custom_distribution(self, state):
        index = state.choice(np.arange(len(self._distribution)),
                             p=tuple(self._distribution.values()))
        return list(self._distribution.keys())[index]


class ParameterAlias:
    """A parameter that takes another one's value (in a custom distribution)."""

    def __init__(self, alias_to):
        self.alias_to = alias_to

    def __repr__(self):
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype):
    torch = common._torch()
    if dtype == torch.bool:
        return 1
    if dtype.is_floating_point or dtype.is_complex:
        return int(torch.finfo(dtype).bits / 8)
    return int(torch.iinfo(dtype).bits / 8)


def prod(values, base=1):
    """The product in Python integers (no overflow)."""
    return functools.reduce(lambda x, y: int(x) * int(y), values, base)


class FuzzedTensor:
    """A tensor of a fuzzed size (names of parameters or ints), maybe strided (`steps`) or
    permuted in memory (1 - probability_contiguous), within element and byte limits."""

    def __init__(self, name, size, steps=None, probability_contiguous=0.5, min_elements=None,
                 max_elements=None, max_allocation_bytes=None, dim_parameter=None,
                 roll_parameter=None, dtype=None, cuda=False, tensor_constructor=None):
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype if dtype is not None else common._torch().float32
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor

    @property
    def name(self):
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        torch = common._torch()
        if dtype.is_floating_point or dtype.is_complex:
            return torch.rand(size=size, dtype=dtype, device="cpu")
        return torch.randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _make_tensor(self, params, state):
        size, steps, allocation_size = self._get_size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw = constructor(size=allocation_size, dtype=self._dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(order)).contiguous()
            raw = raw.permute(tuple(np.argsort(order)))
        slices = [slice(0, s * st, st) for s, st in zip(size, steps)]
        tensor = raw[tuple(slices)]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties

    def _get_size_and_steps(self, params):
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values, dim):
            values = tuple(params.get(i, i) for i in values)
            if len(values) > dim:
                values = values[:dim]
            if len(values) < dim:
                values = values + tuple(1 for _ in range(dim - len(values)))
            return values
        size = resolve(self._size, dim)
        steps = resolve(self._steps or (), dim)
        return size, steps, tuple(s * st for s, st in zip(size, steps))

    def satisfies_constraints(self, params):
        size, _, allocation_size = self._get_size_and_steps(params)
        n = prod(size)
        if n < 0:
            raise AssertionError("Computed number of elements is negative")
        nbytes = prod(allocation_size, base=dtype_size(self._dtype))

        def greater(left, right):
            return left is not None and right is not None and left > right
        return not any((greater(n, self._max_elements), greater(self._min_elements, n),
                        greater(nbytes, self._max_allocation_bytes)))


class Fuzzer:
    """Yields (tensors, tensor_properties, params) from `take(n)`: parameters drawn until
    every constraint and tensor limit holds (1000 tries at most)."""

    def __init__(self, parameters, tensors, constraints=None, seed=None):
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = Fuzzer._unpack(parameters, FuzzedParameter)
        self._tensors = Fuzzer._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = 0
        self._total_generated = 0

    @staticmethod
    def _unpack(values, cls):
        return tuple(it.chain.from_iterable([[i] if isinstance(i, cls) else i for i in values]))

    def take(self, n):
        state = np.random.RandomState(self._seed)
        common._torch().manual_seed(int(state.randint(low=0, high=2 ** 63, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, props = {}, {}
            for t in self._tensors:
                tensors[t.name], props[t.name] = t._make_tensor(params, state)
            yield tensors, props, params

    @property
    def rejection_rate(self):
        if not self._total_generated:
            return 0.
        return self._rejections / self._total_generated

    def _generate(self, state):
        strict = {}
        for _ in range(1000):
            cand = {}
            for p in self._parameters:
                if p.strict:
                    if p.name not in strict:
                        strict[p.name] = p.sample(state)
                    cand[p.name] = strict[p.name]
                else:
                    cand[p.name] = p.sample(state)
            cand = self._resolve_aliases(cand)
            self._total_generated += 1
            if not all(f(cand) for f in self._constraints):
                self._rejections += 1
                continue
            if not all(t.satisfies_constraints(cand) for t in self._tensors):
                self._rejections += 1
                continue
            return cand
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params):
        params = dict(params)
        count = sum(isinstance(v, ParameterAlias) for v in params.values())
        keys = list(params.keys())
        while count:
            for k in keys:
                v = params[k]
                if isinstance(v, ParameterAlias):
                    params[k] = params[v.alias_to]
            new = sum(isinstance(v, ParameterAlias) for v in params.values())
            if count == new:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            count = new
        return params
