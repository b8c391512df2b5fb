"""Run under mpiexec with 4 ranks: DeviceMesh (2x2 and 1-d), the subgroups, split_group,
shrink_group, the single and coalesced collectives across ranks. Prints "names ok <rank>"."""
import warnings

import ndgrad as torch
import ndgrad.distributed as dist

warnings.simplefilter("ignore", FutureWarning)
dist.init_process_group("gloo")
rank, n = dist.get_rank(), dist.get_world_size()
assert n == 4, n

# ---- DeviceMesh 2x2: dp groups are the columns {0,2},{1,3}; tp groups the rows {0,1},{2,3}
mesh = dist.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
assert mesh.mesh.tolist() == [[0, 1], [2, 3]] and mesh.shape == (2, 2)
assert repr(mesh) == "DeviceMesh((dp=2, tp=2), 'cpu', stride=(2, 1))", repr(mesh)
assert mesh.get_coordinate() == (rank // 2, rank % 2)
dp, tp = mesh.get_group("dp"), mesh.get_group(1)
assert dist.get_process_group_ranks(dp) == [rank % 2, rank % 2 + 2]
assert dist.get_process_group_ranks(tp) == [rank // 2 * 2, rank // 2 * 2 + 1]
assert mesh.get_local_rank("dp") == rank // 2 and mesh.get_local_rank("tp") == rank % 2
assert mesh.get_all_groups() == [dp, tp]
t = torch.tensor([float(rank)])
dist.all_reduce(t, group=dp)
assert t.item() == 2 * (rank % 2) + 2, t
t = torch.tensor([float(rank)])
dist.all_reduce(t, group=mesh["tp"].get_group())
assert t.item() == 4 * (rank // 2) + 1, t
sub = mesh["tp"]
assert sub.mesh.tolist() == [rank // 2 * 2, rank // 2 * 2 + 1] and sub.get_local_rank() == rank % 2
assert repr(mesh["dp"]) == "DeviceMesh((dp=2), 'cpu', stride=(2,))", repr(mesh["dp"])
assert mesh["dp"].mesh.tolist() == [rank % 2, rank % 2 + 2]
try:
    mesh["tp", "dp"]
except KeyError as e:
    assert "ascending order" in str(e)
else:
    raise AssertionError("unordered slice did not raise")
flat = dist.init_device_mesh("cpu", (4,))
assert flat.get_group() is dist.group.WORLD and flat.get_local_rank() == rank

# an explicit mesh over part of the world: rank 3 is in none of its groups
part = dist.DeviceMesh("cpu", [[2, 0]])
assert part.shape == (1, 2)
assert part.get_coordinate() == ({2: (0, 0), 0: (0, 1)}.get(rank))
g = part.get_group(1)
if rank in (0, 2):
    assert dist.get_process_group_ranks(g) == [0, 2]     # sorted, as PyTorch's new_group
    assert part.get_local_rank(1) == rank // 2
else:
    assert g is None

# ---- subgroups
cur, subs = dist.new_subgroups(2)
assert len(subs) == 2 and dist.get_process_group_ranks(cur) == [rank // 2 * 2, rank // 2 * 2 + 1]
cur, subs = dist.new_subgroups_by_enumeration([[0, 3], [1]])
if rank in (0, 3):
    assert dist.get_process_group_ranks(cur) == [0, 3]
elif rank == 1:
    assert dist.get_world_size(cur) == 1
else:
    assert cur is None
s = dist.split_group(split_ranks=[[3, 1], [0]])
if rank in (1, 3):
    assert dist.get_process_group_ranks(s) == [1, 3] and dist.get_rank(s) == rank // 2
    x = torch.ones(2) * rank
    dist.all_reduce(x, group=s)
    assert x.tolist() == [4.0, 4.0]
elif rank == 0:
    assert dist.get_process_group_ranks(s) == [0]
else:
    assert s is None

# ---- single and coalesced collectives across ranks
x = torch.arange(2.0) + 10 * rank
out = torch.zeros(4, 2)
dist.all_gather_single(out, x)
assert out.tolist() == [[0, 1], [10, 11], [20, 21], [30, 31]], out
red = torch.zeros(2)
dist.reduce_scatter_single(red, torch.arange(8.0) * (rank + 1))
assert red.tolist() == [10.0 * (2 * rank), 10.0 * (2 * rank + 1)], red
a, b = torch.ones(2) * rank, torch.ones(3) * (rank + 1)
dist.all_reduce_coalesced([a, b])
assert a.tolist() == [6.0] * 2 and b.tolist() == [10.0] * 3
outs = [[torch.zeros(1), torch.zeros(2)] for _ in range(4)]
dist.all_gather_coalesced(outs, [torch.tensor([float(rank)]), torch.ones(2) * -rank])
assert [o[0].item() for o in outs] == [0, 1, 2, 3] and outs[3][1].tolist() == [-3, -3]

# ---- rendezvous across ranks: rank 0 serves a TCPStore at the URL's port, the others connect
import datetime  # noqa: E402
import socket  # noqa: E402

port = [None]
if rank == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port[0] = s.getsockname()[1]
dist.broadcast_object_list(port, src=0)
store, r, size = next(dist.rendezvous(f"tcp://127.0.0.1:{port[0]}", rank=rank, world_size=n,
                                      timeout=datetime.timedelta(seconds=30)))
assert (r, size) == (rank, n) and isinstance(store, dist.TCPStore)
store.set(f"k{rank}", str(rank))
store.add("count", 1)
store.wait([f"k{i}" for i in range(n)])
assert [store.get(f"k{i}") for i in range(n)] == [str(i).encode() for i in range(n)]
dist.barrier()
assert store.add("count", 0) == n
dist.barrier()
gloo = dist.ProcessGroupGloo(store, rank, n)
z = torch.tensor([float(rank)])
gloo.allreduce([z]).wait()
assert z.item() == 6 and dist.get_backend_config(gloo) == "cpu:gloo,cuda:gloo"

# ---- Reducer: gradients averaged over the ranks during backward, in the buckets given
net = torch.nn.Linear(2, 1)
with torch.no_grad():
    net.weight.fill_(1.0)
    net.bias.fill_(0.0)
red = dist.Reducer(list(net.parameters()), [[1], [0]], [1 << 20] * 2, dist.group.WORLD)
for step in range(2):
    net.zero_grad()
    out = net(torch.tensor([[float(rank + 1), 2.0 * rank]]))
    red.prepare_for_backward([out])
    (out * (step + 1)).sum().backward()
    assert net.weight.grad.tolist() == [[2.5 * (step + 1), 3.0 * (step + 1)]], net.weight.grad
    assert net.bias.grad.tolist() == [step + 1.0]

# ---- shrink_group: rank 3 leaves; the others build the group without it
grp = dist.new_group([1, 2, 3])
if rank == 3:
    pass
elif rank in (1, 2):
    small = dist.shrink_group([2], group=grp)             # group rank 2 is global rank 3
    assert dist.get_process_group_ranks(small) == [1, 2]
    y = torch.ones(1)
    dist.all_reduce(y, group=small)
    assert y.item() == 2
dist.barrier()

# shrinking the default group: rank 3 leaves the job; the others go on as a world of 3
old_world = dist.group.WORLD
if rank != 3:
    world = dist.shrink_group([3])
    assert world is dist.group.WORLD and world is not old_world
    assert dist.get_world_size() == 3 and dist.get_rank() == rank
    y = torch.ones(1)
    dist.all_reduce(y)
    assert y.item() == 3
print(f"names ok {rank}", flush=True)   # (one write: ranks print at once)
