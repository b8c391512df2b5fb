"""torch.distributed's key-value stores: Store, HashStore (one process), TCPStore (a server
thread in the master process, clients over TCP: processes on one or several machines),
FileStore (a file that processes on one machine, or on a shared file system, open together) and
PrefixStore, with PyTorch's methods (set/get/add/compare_set/wait/check/delete_key/num_keys,
multi_get/multi_set/append) and errors: values are bytes, get and wait block until the keys
exist or the store's timeout passes (DistStoreError "Wait timeout"), stores do not pickle.
They need no MPI: libraries use them on their own (skorch's DistributedHistory)."""
import datetime
import os
import socket
import socketserver
import struct
import threading
import time

from .distributed_c10d import DistStoreError

__all__ = ["Store", "HashStore", "TCPStore", "FileStore", "PrefixStore"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):   # (PyTorch takes a list of byte values too)
        return bytes(value)
    raise TypeError(f"set(): incompatible function arguments: value must be str or bytes, not "
                    f"{type(value).__name__}")


class _Table:
    """The keys and values behind a HashStore or a TCPStore's server, under one condition."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def wait(self, keys, timeout):
        end = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while not all(k in self.data for k in keys):
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def get(self, key, timeout):
        if not self.wait([key], timeout):
            return None
        with self.cond:
            return self.data[key]

    def add(self, key, amount):
        with self.cond:
            v = int(self.data.get(key, b"0")) + int(amount)
            self.data[key] = str(v).encode()
            self.cond.notify_all()
            return v

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self.cond.notify_all()

    def compare_set(self, key, expected, desired):
        with self.cond:
            cur = self.data.get(key)
            if cur is None:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if cur == expected:
                self.data[key] = desired
                self.cond.notify_all()
                return desired
            return cur

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)

    def delete_key(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)


class Store:
    """The store interface (torch.distributed.Store)."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle 'torch._C._distributed_c10d.{type(self).__name__}' "
                        "object")

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def _seconds(self, timeout=None):
        t = self._timeout if timeout is None else timeout
        if isinstance(t, datetime.timedelta):
            t = t.total_seconds()
        return None if t is None or t < 0 else t

    def _timed_out(self, keys, seconds):
        raise DistStoreError("Wait timeout")

    # the operations, on _call(op, *args) of the concrete store
    def set(self, key, value):
        self._call("set", key, _bytes(value))

    def get(self, key):
        v = self._call("get", key, self._seconds())
        if v is None:
            self._timed_out([key], self._seconds())
        return v

    def add(self, key, amount):
        return self._call("add", key, int(amount))

    def append(self, key, value):
        self._call("append", key, _bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def wait(self, keys, timeout=None):
        if not self._call("wait", list(keys), self._seconds(timeout)):
            self._timed_out(keys, self._seconds(timeout))

    def check(self, keys):
        return self._call("check", list(keys))

    def delete_key(self, key):
        return self._call("delete_key", key)

    def num_keys(self):
        return self._call("num_keys")

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def has_extended_api(self):
        return True


class HashStore(Store):
    """A store within one process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, *args):
        return getattr(self._table, op)(*args)


# The TCPStore's messages: (op, args) and replies of None, bool, int, str, bytes and lists of
# them, in a tagged binary form of their own (never pickle: whoever reaches the port must not be
# able to run code in the master).
def _encode(obj, out):
    if obj is None or isinstance(obj, bool):
        out += b"N" if obj is None else (b"T" if obj else b"F")
    elif isinstance(obj, int):
        out += b"I" + str(obj).encode() + b";"
    elif isinstance(obj, float):
        out += b"D" + struct.pack("!d", obj)
    elif isinstance(obj, (str, bytes, bytearray)):
        raw = obj.encode() if isinstance(obj, str) else bytes(obj)
        out += (b"S" if isinstance(obj, str) else b"B") + struct.pack("!Q", len(raw)) + raw
    elif isinstance(obj, (list, tuple)):
        out += b"L" + struct.pack("!Q", len(obj))
        for v in obj:
            _encode(v, out)
    else:
        raise TypeError(f"store message: cannot send {type(obj).__name__}")
    return out


def _decode(buf, i=0):
    tag = buf[i:i + 1]
    i += 1
    if tag in (b"N", b"T", b"F"):
        return {b"N": None, b"T": True, b"F": False}[tag], i
    if tag == b"I":
        j = buf.index(b";", i)
        return int(buf[i:j]), j + 1
    if tag == b"D":
        return struct.unpack("!d", buf[i:i + 8])[0], i + 8
    if tag in (b"S", b"B"):
        (n,) = struct.unpack("!Q", buf[i:i + 8])
        raw = bytes(buf[i + 8:i + 8 + n])
        return (raw.decode() if tag == b"S" else raw), i + 8 + n
    if tag == b"L":
        (n,) = struct.unpack("!Q", buf[i:i + 8])
        i += 8
        items = []
        for _ in range(n):
            v, i = _decode(buf, i)
            items.append(v)
        return items, i
    raise ConnectionError("store message: malformed")


def _send(sock, obj):
    data = _encode(obj, bytearray())
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv(sock):
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            raise ConnectionError("store connection closed")
        head += chunk
    (n,) = struct.unpack("!Q", head)
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("store connection closed")
        buf += chunk
    return _decode(bytes(buf))[0]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _handler(table):
    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            ops = {"set", "get", "add", "append", "compare_set", "wait", "check",
                   "delete_key", "num_keys"}
            while True:
                try:
                    op, args = _recv(self.request)
                except (ConnectionError, OSError, EOFError, ValueError, struct.error):
                    return
                if op not in ops or not isinstance(args, list):
                    return
                _send(self.request, getattr(table, op)(*args))
    return Handler


class TCPStore(Store):
    """TCPStore(host_name, port, world_size=None, is_master=False, timeout=300 s,
    wait_for_workers=True, ...): the master serves the keys from a thread of its process (port
    0: a free port, read back from .port); every store, the master's included, is a client of
    that server. wait_for_workers with a world_size: the master waits until world_size stores
    have connected."""

    def __init__(self, host_name, port=0, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__()
        self._timeout = timeout
        self.host, self.libuvBackend = host_name, bool(use_libuv)
        self._server = None
        if is_master:
            table = _Table()
            self._server = _Server((host_name, int(port)), _handler(table))
            port = self._server.server_address[1]
            threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.port = int(port)
        self._lock = threading.Lock()
        end = time.monotonic() + (self._seconds() or 0)
        while True:
            try:
                self._sock = socket.create_connection((host_name, self.port), timeout=5)
                self._sock.settimeout(None)
                break
            except OSError:
                if time.monotonic() >= end:
                    raise DistStoreError(
                        f"The client socket has timed out after {self._seconds()}s while "
                        f"trying to connect to ({host_name}, {self.port}).") from None
                time.sleep(0.05)
        self._call("add", "__ndgrad_workers", 1)
        if is_master and wait_for_workers and world_size:
            self._wait_workers(world_size)

    def _wait_workers(self, world_size):
        end = time.monotonic() + (self._seconds() or 0)
        while int(self._call("get", "__ndgrad_workers", 0) or 0) < world_size:
            if time.monotonic() >= end:
                raise DistStoreError("Timed out waiting for the other workers to connect")
            time.sleep(0.01)

    def _timed_out(self, keys, seconds):
        raise DistStoreError(f"wait timeout after {round((seconds or 0) * 1000)}ms, keys: "
                             + ", ".join("/" + k for k in keys))

    def _call(self, op, *args):
        with self._lock:
            _send(self._sock, (op, args))
            return _recv(self._sock)

    def __del__(self):
        try:
            self._sock.close()
        except Exception:
            pass


class _FileTable:
    """The keys of a FileStore: an append-only log of set and delete records in the file, each
    operation under a lock of the file (fcntl's where there is one, else a lock file made
    exclusively), the log replayed from where this process last read it."""

    def __init__(self, path):
        self.path = path
        self.data, self.pos = {}, 0
        open(path, "ab").close()        # (FileNotFoundError where its folder does not exist)

    class _Lock:
        def __init__(self, path):
            self.path = path

        def __enter__(self):
            self.f = open(self.path, "a+b")
            try:
                import fcntl
                fcntl.flock(self.f.fileno(), fcntl.LOCK_EX)
                self.lockfile = None
            except ImportError:          # (Windows: a lock file)
                self.lockfile = self.path + ".lock"
                while True:
                    try:
                        os.close(os.open(self.lockfile, os.O_CREAT | os.O_EXCL))
                        break
                    except FileExistsError:
                        time.sleep(0.001)
            return self.f

        def __exit__(self, *exc):
            if self.lockfile is not None:
                os.unlink(self.lockfile)
            self.f.close()                # (closing releases fcntl's lock)

    def _replay(self, f):
        f.seek(self.pos)
        buf = f.read()
        i = 0
        while i + 1 + 16 <= len(buf):
            kind = buf[i:i + 1]
            nk, nv = struct.unpack("!QQ", buf[i + 1:i + 17])
            end = i + 17 + nk + nv
            if end > len(buf):
                break
            key = buf[i + 17:i + 17 + nk].decode()
            if kind == b"s":
                self.data[key] = bytes(buf[i + 17 + nk:end])
            else:
                self.data.pop(key, None)
            i = end
        self.pos += i

    def _write(self, f, key, value=None):
        k = key.encode()
        v = b"" if value is None else value
        f.seek(0, 2)
        f.write((b"d" if value is None else b"s") + struct.pack("!QQ", len(k), len(v)) + k + v)
        f.flush()
        self._replay(f)

    def _read(self):
        with self._Lock(self.path) as f:
            self._replay(f)
        return self.data

    def set(self, key, value):
        with self._Lock(self.path) as f:
            self._write(f, key, value)

    def wait(self, keys, timeout):
        end = None if timeout is None else time.monotonic() + timeout
        while not all(k in self._read() for k in keys):
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.002)
        return True

    def get(self, key, timeout):
        return self.data[key] if self.wait([key], timeout) else None

    def add(self, key, amount):
        with self._Lock(self.path) as f:
            self._replay(f)
            v = int(self.data.get(key, b"0")) + int(amount)
            self._write(f, key, str(v).encode())
            return v

    def append(self, key, value):
        with self._Lock(self.path) as f:
            self._replay(f)
            self._write(f, key, self.data.get(key, b"") + value)

    def compare_set(self, key, expected, desired):
        with self._Lock(self.path) as f:
            self._replay(f)
            cur = self.data.get(key)
            if (cur is None and expected == b"") or cur == expected:
                self._write(f, key, desired)
                return desired
            return expected if cur is None else cur

    def check(self, keys):
        return all(k in self._read() for k in keys)

    def delete_key(self, key):
        with self._Lock(self.path) as f:
            self._replay(f)
            if key in self.data:
                self._write(f, key)
        return True                     # (PyTorch's FileStore says True either way)

    def num_keys(self):
        return len(self._read())        # (its reference count among them, as PyTorch's)


class FileStore(Store):
    """FileStore(file_name, world_size=-1): the keys in a file that every process of the group
    opens (on one machine, or a shared file system). Each store counts itself in the file and
    the last one to go removes it, as PyTorch's; `get` waits for its key until the timeout
    (RuntimeError "Timeout waiting for key: K after N ms"). The file is this class's own log,
    not PyTorch's layout: ndgrad's processes share it with each other."""

    _REFS = "cleanup/refcount/"

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        try:
            self._table = _FileTable(os.fspath(file_name))
        except OSError as e:
            raise DistStoreError(e.strerror or str(e)) from None
        self.path, self._world_size = os.fspath(file_name), world_size
        self._table.add(self._REFS, 1)

    def _call(self, op, *args):
        return getattr(self._table, op)(*args)

    def get(self, key):
        v = self._call("get", key, self._seconds())
        if v is None:
            raise RuntimeError(f"Timeout waiting for key: {key} after "
                               f"{round((self._seconds() or 0) * 1000)} ms")
        return v

    def list_keys(self):
        return sorted(k for k in self._table._read() if k != self._REFS)

    def __del__(self):
        table = getattr(self, "_table", None)
        if table is None:
            return
        try:
            if table.add(self._REFS, -1) <= 0:
                os.unlink(self.path)
        except OSError:
            pass


class PrefixStore(Store):
    """Every key of `store` under `prefix/`."""

    def __init__(self, prefix, store):
        super().__init__()
        self._prefix, self.underlying_store = prefix, store
        self._timeout = store.timeout

    def _k(self, key):
        return f"{self._prefix}/{key}"

    def _timed_out(self, keys, seconds):
        self.underlying_store._timed_out([self._k(k) for k in keys], seconds)

    def _call(self, op, *args):
        if op in ("wait", "check"):
            args = ([self._k(k) for k in args[0]],) + args[1:]
        elif op != "num_keys":
            args = (self._k(args[0]),) + args[1:]
        return self.underlying_store._call(op, *args)
