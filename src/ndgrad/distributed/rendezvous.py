"""torch.distributed.rendezvous: URL schemes (env://, tcp://, file://) -> generators yielding
(store, rank, world_size), with ndgrad's TCPStore and FileStore; register_rendezvous_handler adds
schemes. ndgrad's process groups take ranks from MPI and need no rendezvous; this is for code that
builds stores through it."""
import numbers
import os
from urllib.parse import urlparse, urlunparse

from ._store import FileStore, TCPStore
from .constants import default_pg_timeout

__all__ = ["register_rendezvous_handler", "rendezvous"]

_rendezvous_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """Register `handler(url, **kwargs)`, a generator yielding (store, rank, world_size), for
    URLs of `scheme`."""
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def _query_to_dict(query):
    return {pair[0]: pair[1] for pair in (p.split("=") for p in filter(None, query.split("&")))}


def _rank_and_world_size(query, error):
    """A file:// or tcp:// URL's rank and world_size (the error naming its scheme if absent)."""
    if "rank" not in query:
        raise error("rank parameter missing")
    if "world_size" not in query:
        raise error("world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def _rendezvous_helper(url, rank, world_size_opt, **kwargs):
    result = urlparse(url)
    if world_size_opt is None:
        world_size = -1
        if result.scheme == "env":
            rank = int(os.environ.get("RANK", rank))
            world_size = int(os.environ.get("WORLD_SIZE", world_size))
    else:
        world_size = world_size_opt
    if rank != -1 or world_size != -1 or world_size_opt is None:
        query = _query_to_dict(result.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) "
                                 f"already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1 or world_size_opt is None:
            query["world_size"] = str(world_size)
        result = result._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        url = urlunparse(result)
    if result.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _rendezvous_handlers[result.scheme](url, **kwargs)


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    """The handler of `url`'s scheme, as a generator of (store, rank, world_size)."""
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    return _rendezvous_helper(url, rank, world_size, **kwargs)


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _file_rendezvous_handler(url, **kwargs):
    def _error(msg):
        return _rendezvous_error("file:// rendezvous: " + msg)

    result = urlparse(url)
    path = result.path
    if not path:
        raise _error("path missing")
    query = _query_to_dict(result.query)
    rank, world_size = _rank_and_world_size(query, _error)
    yield (FileStore(path, world_size), rank, world_size)
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _create_c10d_store(hostname, port, rank, world_size, timeout, use_libuv=True):
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", None) == str(True):
        return TCPStore(host_name=hostname, port=port, world_size=world_size, is_master=False,
                        timeout=timeout)
    return TCPStore(host_name=hostname, port=port, world_size=world_size, is_master=rank == 0,
                    timeout=timeout, multi_tenant=True, use_libuv=use_libuv)


def _use_libuv(query):
    return query.get("use_libuv", os.environ.get("USE_LIBUV", "1")) == "1"


def _tcp_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("tcp:// rendezvous: " + msg)

    result = urlparse(url)
    if result.port is None:
        raise _error("port number missing")
    query = _query_to_dict(result.query)
    rank, world_size = _rank_and_world_size(query, _error)
    if result.hostname is None:
        raise AssertionError("hostname cannot be None")
    store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout,
                               _use_libuv(query))
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def _error(msg):
        return _rendezvous_error("env:// rendezvous: " + msg)

    def _get(var):
        value = os.environ.get(var, None)
        if not value:
            raise _error(f"environment variable {var} expected, but not set")
        return value

    query = _query_to_dict(urlparse(url).query)
    rank = int(query["rank"]) if "rank" in query else int(_get("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else int(_get("WORLD_SIZE"))
    master_addr = _get("MASTER_ADDR")
    master_port = int(_get("MASTER_PORT"))
    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout,
                               _use_libuv(query))
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_rendezvous_handler)
register_rendezvous_handler("env", _env_rendezvous_handler)
register_rendezvous_handler("file", _file_rendezvous_handler)
