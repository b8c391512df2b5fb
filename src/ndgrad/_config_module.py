"""Config modules (`torch._dynamo.config`, `torch._inductor.config`, `torch.compiler.config`):
attributes with defaults, settable, and `config.patch(name=value, ...)` as a context manager or
decorator, as PyTorch's ConfigModule. ndgrad has no compiler, so the values are remembered and
read back, and change nothing else."""
import contextlib
import copy
import functools
import sys
import types


class ConfigModule(types.ModuleType):
    def __init__(self, name, defaults, doc=None):
        super().__init__(name, doc)
        object.__setattr__(self, "_defaults", dict(defaults))
        object.__setattr__(self, "_config", copy.deepcopy(dict(defaults)))

    def __getattr__(self, name):
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__"):
            object.__setattr__(self, name, value)
        else:
            self._config[name] = value

    def __delattr__(self, name):
        self._config[name] = self._defaults.get(name)

    def __dir__(self):
        return sorted(self._config)

    def get_config_copy(self):
        return copy.deepcopy(self._config)

    def load_config(self, config):
        if isinstance(config, (bytes, bytearray)):
            import pickle
            config = pickle.loads(config)
        self._config.update(config)

    def save_config(self):
        import pickle
        return pickle.dumps(self._config, protocol=2)

    def save_config_portable(self, *, ignore_private_configs=True):
        return {k: v for k, v in self._config.items()
                if not (ignore_private_configs and k.startswith("_"))}

    def to_dict(self):
        return dict(self._config)

    def shallow_copy_dict(self):
        return dict(self._config)

    def get_hash(self):
        import hashlib
        return hashlib.md5(repr(sorted(self._config.items(), key=str)).encode()).digest()

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Set values for a block (`with config.patch(verbose=True):`) or a function
        (`@config.patch("verbose", True)`)."""
        if arg1 is not None:
            if arg2 is not None:
                changes = {arg1: arg2}
            else:
                changes = dict(arg1)
            changes.update(kwargs)
        else:
            changes = kwargs
        config = self._config
        for k in changes:
            if k not in config:
                raise AttributeError(f"{self.__name__}.{k} does not exist")

        class _Patch(contextlib.ContextDecorator):
            def __enter__(inner):
                inner.prior = {k: config[k] for k in changes}
                config.update(changes)

            def __exit__(inner, *exc):
                config.update(inner.prior)
                return False
        return _Patch()


def install(name, defaults, doc=None):
    """Create the config module `name` (registered in sys.modules) with these defaults."""
    mod = ConfigModule(name, defaults, doc)
    sys.modules[name] = mod
    return mod
