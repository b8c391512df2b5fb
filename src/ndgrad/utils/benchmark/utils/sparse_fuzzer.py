"""FuzzedSparseTensor: a fuzzed COO sparse tensor (size, density, coalesced or not)."""
import math
from numbers import Number

from . import common
from .fuzzer import FuzzedTensor

__all__ = ["FuzzedSparseTensor"]


class FuzzedSparseTensor(FuzzedTensor):
    """A sparse COO tensor of a fuzzed size with ceil(sum(size) * density) entries; its
    `sparse_dim`, `nnz`, `density` and `coalesced` name parameters."""

    def __init__(self, name, size, min_elements=None, max_elements=None, dim_parameter=None,
                 sparse_dim=None, nnz=None, density=None, coalesced=None, dtype=None,
                 cuda=False):
        super().__init__(name=name, size=size, min_elements=min_elements,
                         max_elements=max_elements, dim_parameter=dim_parameter, dtype=dtype,
                         cuda=cuda)
        self._density = density
        self._coalesced = coalesced
        self._sparse_dim = sparse_dim

    @staticmethod
    def sparse_tensor_constructor(size, dtype, sparse_dim, nnz, is_coalesced):
        """A COO tensor with `nnz` random indices (twice as many entries, duplicated, when
        not coalesced), as PyTorch's."""
        torch = common._torch()
        if isinstance(size, Number):
            size = [size] * sparse_dim
        if all(size[d] <= 0 for d in range(sparse_dim)) and nnz != 0:
            raise AssertionError("invalid arguments")
        v_size = [nnz] + list(size[sparse_dim:])
        if dtype.is_floating_point:
            v = torch.rand(size=v_size, dtype=dtype, device="cpu")
        else:
            v = torch.randint(1, 127, size=v_size, dtype=dtype, device="cpu")
        i = torch.rand(sparse_dim, nnz, device="cpu")
        i.mul_(torch.tensor(size[:sparse_dim]).unsqueeze(1).to(i))
        i = i.to(torch.long)
        if not is_coalesced:
            v = torch.cat([v, torch.randn_like(v)], 0)
            i = torch.cat([i, i], 1)
        x = torch.sparse_coo_tensor(i, v, torch.Size(size))
        if is_coalesced:
            x = x.coalesce()
        return x

    def _make_tensor(self, params, state):
        size, _, _ = self._get_size_and_steps(params)
        density = params["density"]
        nnz = math.ceil(sum(size) * density)
        if nnz > sum(size):
            raise AssertionError("nnz cannot exceed total number of elements")
        is_coalesced = params["coalesced"]
        sparse_dim = params["sparse_dim"] if self._sparse_dim else len(size)
        sparse_dim = min(sparse_dim, len(size))
        tensor = self.sparse_tensor_constructor(size, self._dtype, sparse_dim, nnz, is_coalesced)
        if self._cuda:
            tensor = tensor.cuda()
        sparse_dim, dense_dim = tensor.sparse_dim(), tensor.dense_dim()
        properties = {"numel": int(tensor.numel()), "shape": tensor.size(),
                      "is_coalesced": tensor.is_coalesced(), "density": density,
                      "sparsity": 1.0 - density, "sparse_dim": sparse_dim,
                      "dense_dim": dense_dim, "is_hybrid": len(size[sparse_dim:]) > 0,
                      "dtype": str(self._dtype)}
        return tensor, properties
