"""torch.distributed.device_mesh: DeviceMesh, an n-d array of the world's ranks with one process
group per mesh dimension (the ranks that differ only along it), and init_device_mesh.

Each dimension's groups come from one communicator split of the default group (every rank takes
part, as every rank calls new_group once per group in PyTorch); a dimension spanning the whole
world uses the default group itself, as PyTorch's does. A group's ranks are in ascending order
(PyTorch's new_group sorts them), so get_local_rank is the rank's position among them."""
import numpy as np

from . import distributed_c10d as c10d

__all__ = ["init_device_mesh", "DeviceMesh"]


class _MeshEnv:
    def __init__(self):
        self.mesh_stack = []

    def get_current_mesh(self):
        if len(self.mesh_stack) == 0:
            raise RuntimeError("No device mesh is currently active!")
        return self.mesh_stack[-1]

    def get_root_mesh(self, device_mesh):
        return device_mesh._get_root_mesh()


_mesh_resources = _MeshEnv()


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


class DeviceMesh:
    """DeviceMesh(device_type, mesh, *, mesh_dim_names=None): `mesh` (a tensor or nested list of
    global ranks, each at most once) laid out in n dimensions; every rank of the world must
    build it (it creates the dimensions' process groups)."""

    def __init__(self, device_type, mesh=None, *, mesh_dim_names=None, backend_override=None,
                 _init_backend=True, _root_mesh=None, _root_dims=None):
        from .._tensor import Tensor
        if mesh is None:
            raise TypeError("The mesh argument is required except for PRIVATE USAGE ONLY!")
        arr = mesh.detach().numpy() if isinstance(mesh, Tensor) else np.asarray(mesh)
        arr = np.ascontiguousarray(arr, dtype=np.int32)
        if len(np.unique(arr)) != arr.size:
            raise AssertionError("Please use a non-overlapping layout when creating a "
                                 "DeviceMesh.")
        self._device_type = device_type
        self._mesh_np = arr
        self._mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        if backend_override is not None and len(backend_override) != arr.ndim:
            raise ValueError(f"backend_override should have the same length as the number of "
                             f"mesh dimensions, but got {len(backend_override)} and "
                             f"{arr.ndim}.")
        self._root_mesh = _root_mesh
        self._root_dims = tuple(range(arr.ndim)) if _root_dims is None else tuple(_root_dims)
        if _root_mesh is None:
            self._strides = _contiguous_strides(arr.shape)
        else:
            self._strides = tuple(_root_mesh._strides[d] for d in self._root_dims)
        self._coordinate_on_dim = None
        if _root_mesh is not None:
            self._dim_groups = [_root_mesh._dim_groups[d] for d in self._root_dims]
            self._set_coordinate()
        elif _init_backend:
            self._setup_world_group_and_device()
            self._set_coordinate()
            self._dim_groups = [self._init_dim_group(d) for d in range(arr.ndim)]

    # ---- construction
    def _setup_world_group_and_device(self):
        if not c10d.is_initialized():
            c10d.init_process_group()
        world_size = c10d.get_world_size()
        if self._mesh_np.size > world_size:
            raise RuntimeError(f"Mesh should not be bigger than default world size "
                               f"{world_size}, but found {self._mesh_np.size} ranks!")
        if self._mesh_np.size and (self._mesh_np.min() < 0 or self._mesh_np.max() >= world_size):
            raise RuntimeError(f"DeviceMesh: the mesh's ranks must be in [0, {world_size}), got "
                               f"{self._mesh_np.tolist()}")
        return c10d._default()

    def _set_coordinate(self):
        where = np.argwhere(self._mesh_np == c10d.get_rank())
        self._coordinate_on_dim = tuple(int(i) for i in where[0]) if len(where) else None

    def _init_dim_group(self, dim):
        default = c10d._default()
        arr = self._mesh_np
        if arr.shape[dim] == default.size():
            return default
        rows = np.moveaxis(arr, dim, -1).reshape(-1, arr.shape[dim])
        me = default.rank()
        hit = np.nonzero((rows == me).any(axis=1))[0]
        MPI = c10d._mpi()
        color = int(hit[0]) if len(hit) else MPI.UNDEFINED
        comm = default._comm.Split(color, me)
        c10d._world.group_count += len(rows)   # PyTorch: one new_group per row
        if comm == MPI.COMM_NULL:
            return None
        g = c10d.ProcessGroup(comm, sorted(int(r) for r in rows[color]), default._backend)
        g._desc = f"mesh_{self._mesh_dim_names[dim] if self._mesh_dim_names else f'dim_{dim}'}"
        c10d._world.groups.append(g)
        return g

    # ---- properties
    @property
    def device_type(self):
        return self._device_type

    @property
    def mesh(self):
        from .. import from_numpy
        return from_numpy(self._mesh_np.copy())

    @property
    def mesh_dim_names(self):
        return self._mesh_dim_names

    @property
    def ndim(self):
        return self._mesh_np.ndim

    @property
    def shape(self):
        return tuple(self._mesh_np.shape)

    def size(self, mesh_dim=None):
        if mesh_dim is not None:
            return self._mesh_np.shape[mesh_dim]
        return int(self._mesh_np.size)

    def _get_root_mesh(self):
        return self._root_mesh if self._root_mesh is not None else self

    def __enter__(self):
        _mesh_resources.mesh_stack.append(self)
        return self

    def __exit__(self, exc_type, exc_value, exc_traceback):
        _mesh_resources.mesh_stack.pop()

    def __repr__(self):
        sizes = self._mesh_np.shape
        body = (f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, sizes))})"
                if self._mesh_dim_names else f"{tuple(sizes)}")
        stride = tuple(() if n == 1 else s for n, s in zip(sizes, self._strides))
        out = f"DeviceMesh({body}, '{self.device_type}', stride={stride}"
        import os
        if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL":
            out += f", Mesh: {self._mesh_np.tolist()}"
        return f"{out})"

    def _hash_key(self):
        return (tuple(self._mesh_np.reshape(-1).tolist()), self._mesh_np.shape,
                self._device_type, self._mesh_dim_names)

    def __hash__(self):
        return hash(self._hash_key())

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, DeviceMesh):
            return False
        return self._hash_key() == other._hash_key()

    # ---- slicing and groups
    def _get_mesh_dim_by_name(self, mesh_dim_name):
        if self._mesh_dim_names is None or len(self._mesh_dim_names) == 0:
            raise KeyError("No `mesh_dim_names` found.")
        if mesh_dim_name not in self._mesh_dim_names:
            raise KeyError(f"Mesh dimension '{mesh_dim_name}' does not exist.",
                           f"Available mesh dimensions are: mesh_dim_names="
                           f"{self._mesh_dim_names}")
        return self._mesh_dim_names.index(mesh_dim_name)

    def __getitem__(self, mesh_dim_names):
        """The submesh of the named dimensions (in the mesh's order) through this rank."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        valid = list(self._mesh_dim_names)
        if not all(n in valid for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {valid}.")
        dims = [valid.index(n) for n in names]
        # PyTorch compares layouts, in which dimensions of size 1 do not count
        sized = [d for d in dims if self._mesh_np.shape[d] > 1]
        if sized != sorted(sized):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should "
                           f"be in ascending order.")
        coord = self._coordinate_on_dim or (0,) * self.ndim
        index = tuple(slice(None) if d in dims else coord[d] for d in range(self.ndim))
        sub = self._mesh_np[index]
        kept = [d for d in range(self.ndim) if d in dims]
        sub = np.transpose(sub, [kept.index(d) for d in dims])
        return DeviceMesh(self._device_type, sub, mesh_dim_names=names,
                          _root_mesh=self._get_root_mesh(),
                          _root_dims=[self._root_dims[d] for d in dims])

    def get_group(self, mesh_dim=None):
        """The process group of dimension `mesh_dim` (an index or a name) through this rank."""
        if not hasattr(self, "_dim_groups"):
            raise RuntimeError("DeviceMesh process groups not initialized!")
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                "please use `get_all_groups()` instead.")
        if mesh_dim is None:
            mesh_dim = 0
        if isinstance(mesh_dim, str):
            mesh_dim = self._get_mesh_dim_by_name(mesh_dim)
        return self._dim_groups[mesh_dim]

    def get_all_groups(self):
        return [self.get_group(i) for i in range(self.ndim)]

    def get_rank(self):
        """This process's global rank."""
        return c10d.get_rank()

    def get_local_rank(self, mesh_dim=None):
        """This rank's rank in the group of dimension `mesh_dim`."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(
                f"Found the DeviceMesh have {self.ndim} dimensions",
                "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        if mesh_dim is None:
            mesh_dim = 0
        return c10d.get_rank(self.get_group(mesh_dim))

    def get_coordinate(self):
        """This rank's index in the mesh (None when it is not in the mesh)."""
        return self._coordinate_on_dim

    def _is_current_rank_part_of_mesh(self):
        return self._coordinate_on_dim is not None

    @staticmethod
    def from_group(group, device_type, mesh=None, *, mesh_dim_names=None):
        """A 1-d DeviceMesh over `group` (a ProcessGroup, or a list of one per dimension with
        `mesh`), reusing the groups instead of creating new ones."""
        groups = [group] if not isinstance(group, (list, tuple)) else list(group)
        if len(groups) == 0:
            raise ValueError("Expects at least one ProcessGroup to be passed")
        if len(groups) > 1 and mesh is None:
            raise ValueError("Must pass mesh if passing multiple ProcessGroups")
        if mesh is None:
            mesh = c10d.get_process_group_ranks(groups[0])
        dm = DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names, _init_backend=False)
        if len(groups) != dm.ndim:
            raise ValueError(f"Expects mesh with ndim equal to number of ProcessGroups but got "
                             f"mesh {dm._mesh_np.tolist()} and {len(groups)} ProcessGroups")
        dm._set_coordinate()
        dm._dim_groups = groups
        return dm


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of shape `mesh_shape` over ranks 0..prod(mesh_shape)-1 in row-major order
    (initialises the default process group if needed). Every rank must call it."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                               f"in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass "
                           "in 'device.type'.")
    if backend_override is not None:
        override = [(None, None)] * len(mesh_shape)
        for key, value in backend_override.items():
            dim = mesh_dim_names.index(key) if isinstance(key, str) else key
            override[dim] = value if isinstance(value, tuple) else (value, None)
        backend_override = tuple(override)
    n = int(np.prod(mesh_shape)) if len(mesh_shape) else 1
    mesh = np.arange(n, dtype=np.int32).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names,
                      backend_override=backend_override)
