"""`torch._inductor`: the compiler backend's config (settable, without effect: ndgrad does not
compile) and the functions libraries call."""
from .. import _config_module

config = _config_module.install(__name__ + ".config", {
    "emulate_precision_casts": False, "fallback_random": False, "freezing": False,
    "max_autotune": False, "coordinate_descent_tuning": False, "triton.cudagraphs": False,
    "cpp_wrapper": False, "debug": False, "force_disable_caches": False,
    "fx_graph_cache": True, "autotune_local_cache": True, "epilogue_fusion": True,
    "shape_padding": True, "comprehensive_padding": True, "size_asserts": True,
    "implicit_fallbacks": True, "aggressive_fusion": False, "layout_optimization": True,
})
from . import config as _config_alias  # noqa: E402,F401


def list_mode_options(mode=None, dynamic=None):
    options = {"default": {}, "reduce-overhead": {"triton.cudagraphs": True},
               "max-autotune-no-cudagraphs": {"max_autotune": True},
               "max-autotune": {"max_autotune": True, "triton.cudagraphs": True}}
    return options[mode] if mode else options


def list_options():
    return sorted(config.get_config_copy())


def cudagraph_mark_step_begin():
    pass
