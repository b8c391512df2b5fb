"""torch.nn.utils.stateless: calling a module with other parameters and buffers
(`_reparametrize_module` as a context manager; `functional_call`, deprecated for
torch.func.functional_call)."""
import warnings


__all__ = ["functional_call"]


def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False,
                          stack_weights=False):
    """Within the block, module's named parameters and buffers are the given tensors."""
    from ... import func as _func
    return _func._reparametrize(module, parameters_and_buffers, tie_weights, strict)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    from ... import func as _func
    return _func.functional_call(module, parameters_and_buffers, args, kwargs,
                                 tie_weights=tie_weights, strict=strict)
