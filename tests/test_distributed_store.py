"""torch.distributed's key-value stores (HashStore, TCPStore, PrefixStore) against PyTorch's:
values, counters, compare_set, waits and their timeouts, pickling; a TCPStore shared by two
processes (skorch's DistributedHistory runs on one)."""
import datetime
import gc
import multiprocessing
import pickle

import pytest

import ndgrad.distributed as nd_dist

torch = pytest.importorskip("torch")
td = torch.distributed


def _script(store, dist):
    out = []
    store.set("a", "x")
    store.set("b", b"\x00\x01")
    out += [store.get("a"), store.get("b"), store.add("n", 2), store.add("n", 3),
            store.get("n"), store.check(["a", "n"]), store.check(["zz"]),
            store.compare_set("c", "", "v"), store.compare_set("c", "w", "z"),
            store.compare_set("c", "v", "z"), store.get("c"), store.delete_key("a"),
            store.delete_key("a"), store.check(["a"])]
    store.append("ap", "12")
    store.append("ap", "34")
    out.append(store.get("ap"))
    store.multi_set(["m1", "m2"], ["p", "q"])
    out.append(store.multi_get(["m1", "m2"]))
    store.wait(["b", "c"])
    store.set_timeout(datetime.timedelta(seconds=0.2))
    with pytest.raises(dist.DistStoreError) as e1:
        store.get("nope")
    with pytest.raises(dist.DistStoreError) as e2:
        store.wait(["nope"], datetime.timedelta(seconds=0.1))
    out += [str(e1.value), str(e2.value), store.timeout]
    with pytest.raises(TypeError, match="cannot pickle"):
        pickle.dumps(store)
    return out


@pytest.mark.parametrize("kind", ["HashStore", "TCPStore", "PrefixStore"])
def test_stores_as_pytorchs(kind):
    got = []
    for dist in (td, nd_dist):
        if kind == "HashStore":
            store = dist.HashStore()
        else:
            store = dist.TCPStore("127.0.0.1", 0, 1, True,
                                  timeout=datetime.timedelta(seconds=5))
            assert store.port > 0 and store.host == "127.0.0.1"
            if kind == "PrefixStore":
                base, store = store, dist.PrefixStore("pre", store)
        keys0 = store.num_keys()
        got.append((_script(store, dist), store.num_keys() - keys0))
        if kind == "PrefixStore":
            assert base.get("pre/m1") == b"p"
    ours, theirs = got[1], got[0]
    assert ours == theirs


def _worker(port, queue):
    s = nd_dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(seconds=20))
    s.set("from_worker", "hello")
    s.wait(["from_master"])
    queue.put(s.get("from_master").decode())


def test_tcp_store_between_processes():
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    master = nd_dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=20))
    p = ctx.Process(target=_worker, args=(master.port, queue))
    p.start()
    try:
        master.wait(["from_worker"])
        assert master.get("from_worker") == b"hello"
        master.set("from_master", "hi")
        assert queue.get(timeout=30) == "hi"
    finally:
        p.join(30)
    assert p.exitcode == 0


def test_runner_aliases_torch_in_the_processes_a_program_starts(tmp_path):
    """skorch's DistributedHistory test trains in a spawn Pool: each worker imports torch and
    must get ndgrad, as the program under `python -m ndgrad.run` does."""
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text(
        "import multiprocessing as mp, subprocess, sys\n"
        "def f(x):\n"
        "    import torch\n"
        "    return torch.__name__, 'ndgrad' in torch.__file__, float(torch.ones(x).sum())\n"
        "if __name__ == '__main__':\n"
        "    with mp.get_context('spawn').Pool(1) as p:\n"
        "        print(p.map(f, [2]))\n"
        "    print(subprocess.run([sys.executable, '-c', 'import torch; "
        "print(\"ndgrad\" in torch.__file__)'], capture_output=True, text=True).stdout.strip())\n")
    import ndgrad
    src = os.path.dirname(os.path.dirname(os.path.abspath(ndgrad.__file__)))
    env = {**os.environ, "PYTHONPATH": src}
    env.pop("NDGRAD_ALIAS_TORCH", None)
    out = subprocess.run([sys.executable, "-m", "ndgrad.run", str(script)], capture_output=True,
                         text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[('torch',", "True,", "2.0)]", "True"]


def _file_script(store):
    out = [store.num_keys()]
    store.set("a", "x")
    out += [store.num_keys(), store.get("a"), store.add("n", 2), store.add("n", 3),
            store.get("n"), store.check(["a", "n"]), store.check(["zz"]),
            store.compare_set("c", "", "v"), store.compare_set("c", "w", "z"),
            store.compare_set("c", "v", "z"), store.get("c"), store.delete_key("a"),
            store.delete_key("a"), store.check(["a"]), store.num_keys()]
    store.append("ap", "12")
    store.append("ap", "34")
    out += [store.get("ap"), store.multi_get(["n", "ap"])]
    store.set_timeout(datetime.timedelta(seconds=0.2))
    for call in (lambda: store.get("nope"),
                 lambda: store.wait(["nope"], datetime.timedelta(seconds=0.1))):
        with pytest.raises(RuntimeError) as e:
            call()
        out.append(str(e.value))
    with pytest.raises(TypeError, match="cannot pickle"):
        pickle.dumps(store)
    return out


def test_file_store_as_pytorchs(tmp_path):
    got = []
    for i, dist in enumerate((td, nd_dist)):
        path = str(tmp_path / f"store{i}")
        store = dist.FileStore(path, 2)
        other = dist.FileStore(path, 2)       # a second store of the group: same keys
        got.append(_file_script(store) + [other.get("n"), other.num_keys(), store.path == path])
        del store
        gc.collect()                         # (the script's tracebacks held it)
        assert (tmp_path / f"store{i}").exists()
        del other                            # the last one removes the file
        gc.collect()
        assert not (tmp_path / f"store{i}").exists()
    assert got[1] == got[0]
    with pytest.raises(nd_dist.DistStoreError, match="No such file or directory"):
        nd_dist.FileStore(str(tmp_path / "missing" / "x"))


def _file_worker(path, queue):
    s = nd_dist.FileStore(path, 2)
    s.set_timeout(datetime.timedelta(seconds=20))
    s.set("from_worker", "hello")
    for _ in range(50):
        s.add("count", 1)
    s.wait(["from_master"])
    queue.put(s.get("from_master").decode())


def test_file_store_between_processes(tmp_path):
    path = str(tmp_path / "shared")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    master = nd_dist.FileStore(path, 2)
    master.set_timeout(datetime.timedelta(seconds=20))
    p = ctx.Process(target=_file_worker, args=(path, queue))
    p.start()
    try:
        for _ in range(50):
            master.add("count", 1)          # (the adds of both processes interleave)
        master.wait(["from_worker"])
        assert master.get("from_worker") == b"hello"
        master.set("from_master", "hi")
        assert queue.get(timeout=30) == "hi"
    finally:
        p.join(30)
    assert p.exitcode == 0
    assert master.add("count", 0) == 100


def test_tcp_store_server_never_unpickles(tmp_path):
    """A pickle sent to the master's port runs nothing, and the store goes on serving."""
    import os
    import socket
    import struct

    class Evil:
        def __reduce__(self):
            return (open, (str(tmp_path / "pwned"), "w"))
    master = nd_dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
    payload = pickle.dumps(("set", (Evil(),)))
    with socket.create_connection(("127.0.0.1", master.port)) as s:
        s.sendall(struct.pack("!Q", len(payload)) + payload)
        s.settimeout(2)
        try:
            assert s.recv(1) == b""          # (the server drops the connection)
        except (socket.timeout, ConnectionError):
            pass
    assert not os.path.exists(tmp_path / "pwned")
    master.set("k", "v")
    assert master.get("k") == b"v"
