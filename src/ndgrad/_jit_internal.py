"""`torch._jit_internal`: the decorators and annotations TorchScript reads (`export`, `ignore`,
`unused`, `_overload`, `Final`, `BroadcastingList*`, ...). ndgrad compiles nothing, so they only
mark the function as PyTorch's do (`fn._torchscript_modifier`), which code that inspects the
marks (and `torch.jit.script`'s pass-through) can read; the functions run as written."""
import contextlib
import inspect
import typing
import warnings
from typing import Final, Optional, Tuple, List, Dict, Union, Any  # noqa: F401

__all__ = ["FunctionModifiers", "export", "unused", "ignore", "is_scripting", "Final",
           "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "boolean_dispatch"]


class FunctionModifiers:
    """How TorchScript treats a function (the value of `fn._torchscript_modifier`)."""
    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = (
        "if this method is not scripted, copy the python method onto the scripted model")
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def is_scripting():
    """False: nothing runs inside TorchScript here (True only inside a scripted function in
    PyTorch)."""
    return False


def export(fn):
    """Mark a method as a ScriptModule entry point (a mark only)."""
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn


def unused(fn):
    """Mark a function that TorchScript would replace with a raise (a mark only)."""
    if isinstance(fn, property):
        fn.fget._torchscript_modifier = FunctionModifiers.UNUSED
        if fn.fset:
            fn.fset._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED
    return fn


class _IgnoreContextManager(contextlib.AbstractContextManager):
    def __init__(self, **kwargs):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        pass


def ignore(drop=False, **kwargs):
    """`@ignore` or `@ignore(drop=...)`: leave the function to Python (a mark only)."""
    if callable(drop):
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop "
                      "the function call on compilation. Use torch.jit.unused now. {}",
                      stacklevel=2, category=FutureWarning)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", stacklevel=2,
                      category=FutureWarning)

    def decorator(fn):
        fn._torchscript_modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
        return fn
    return decorator


def _drop(fn):
    fn._torchscript_modifier = FunctionModifiers._DROP
    return fn


def _copy_to_script_wrapper(fn):
    fn._torchscript_modifier = FunctionModifiers.COPY_TO_SCRIPT_WRAPPER
    return fn


def get_torchscript_modifier(fn):
    if not callable(fn):
        return None
    if hasattr(fn, "__func__"):
        fn = fn.__func__
    return getattr(fn, "_torchscript_modifier", FunctionModifiers.DEFAULT)


def copy_torchscript_modifier(orig, new):
    attr = get_torchscript_modifier(orig)
    if attr is not None:
        new._torchscript_modifier = attr


def should_drop(fn):
    attr = get_torchscript_modifier(fn)
    return attr is FunctionModifiers.UNUSED or attr is FunctionModifiers._DROP


def is_ignored_fn(fn):
    return get_torchscript_modifier(fn) in (FunctionModifiers.UNUSED, FunctionModifiers.IGNORE,
                                           FunctionModifiers._DROP)


def module_has_exports(mod):
    for name in dir(mod):
        item = getattr(mod, name, None)
        if callable(item) and get_torchscript_modifier(item) is FunctionModifiers.EXPORT:
            return True
    return False


_overloaded_fns = {}


def _overload(func):
    """Declare a TorchScript overload of a function (recorded; the last definition runs)."""
    _overloaded_fns.setdefault(_qualified_name(func), []).append(func)
    return func


def _overload_method(func):
    return func


def _get_fn_overloads(qual_name):
    return _overloaded_fns.get(qual_name)


def _clear_fn_overloads(qual_name):
    _overloaded_fns.pop(qual_name, None)


def _qualified_name(obj, mangle_name=True):
    """`module.qualname` of a function or class, with "__main__" as "__torch__" as PyTorch."""
    if hasattr(obj, "_jit_override_qualname"):
        return obj._jit_override_qualname
    name = obj.__name__
    if name == "<lambda>":
        name = "_lambda"
    module_name = obj.__module__
    if module_name == "torch._classes":
        return obj.qualified_name
    if module_name is None:
        raise RuntimeError(f"Could not get qualified name for class '{name}': "
                           "__module__ can't be None.")
    if mangle_name:
        if module_name == "__main__":
            module_name = "__torch__"
        else:
            module_name = "__torch__." + module_name
    if "." in name:
        raise RuntimeError(f"Could not get qualified name for class '{name}': "
                           f"'{name}' is not a valid identifier")
    return module_name + "." + name


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false on the value of one boolean argument (how
    PyTorch's max_pool*d choose on return_indices)."""
    def fn(*args, **kwargs):
        dispatch_flag = default
        if arg_name in kwargs:
            dispatch_flag = kwargs[arg_name]
        elif arg_index < len(args):
            dispatch_flag = args[arg_index]
        return if_true(*args, **kwargs) if dispatch_flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        fn.__doc__ = if_false.__doc__
    else:
        fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


class BroadcastingListCls:
    def __getitem__(self, types):
        return


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()
for _i in range(4, 7):
    globals()[f"BroadcastingList{_i}"] = BroadcastingList2


def is_final(ann):
    return getattr(ann, "__module__", None) in ("typing", "typing_extensions") and (
        getattr(ann, "__origin__", None) is Final or isinstance(ann, type(Final)))


def is_tuple(ann):
    return getattr(ann, "__origin__", None) in (tuple, Tuple)


def is_list(ann):
    return getattr(ann, "__origin__", None) in (list, List)


def is_dict(ann):
    return getattr(ann, "__origin__", None) in (dict, Dict)


def is_optional(ann):
    if ann is Optional:
        return True
    args = getattr(ann, "__args__", ())
    return getattr(ann, "__origin__", None) is Union and type(None) in args


def is_union(ann):
    return getattr(ann, "__origin__", None) is Union


def _isinstance(obj, target_type):
    """torch.jit.isinstance: isinstance that understands List[int], Dict[str, Tensor],
    Optional[...], Tuple[...] (containers checked element by element)."""
    origin = typing.get_origin(target_type)
    if origin is None:
        return isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is Union:
        return any(_isinstance(obj, a) for a in args)
    if origin in (list, List):
        return isinstance(obj, list) and all(_isinstance(v, args[0]) for v in obj)
    if origin in (dict, Dict):
        return isinstance(obj, dict) and all(
            _isinstance(k, args[0]) and _isinstance(v, args[1]) for k, v in obj.items())
    if origin in (tuple, Tuple):
        return isinstance(obj, tuple) and len(obj) == len(args) and all(
            _isinstance(v, a) for v, a in zip(obj, args))
    return isinstance(obj, origin)


def _disable_emit_hooks():
    return contextlib.nullcontext()


def createResolutionCallbackFromFrame(frames_up=0):
    frame = inspect.currentframe()
    for _ in range(frames_up + 1):
        frame = frame.f_back
    f_locals, f_globals = frame.f_locals, frame.f_globals

    def lookup(key):
        if key in f_locals:
            return f_locals[key]
        return f_globals.get(key)
    return lookup
