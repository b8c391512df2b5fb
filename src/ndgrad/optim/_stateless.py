"""swap_in_optimizer_params_and_state (torch.optim.swap_in_optimizer_params_and_state): run an
optimizer for the duration of a `with` block on other parameters and a state_dict()-style state,
then restore its own groups and state."""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state):
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter "
            f"ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
            f"dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, infos = 0, set(), []
    for idx, (group, swap_group) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(swap_group, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a "
                               "dictionary.")
        ids = swap_group.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                               "param_groups[*]['params'] entries keyed by packed parameter "
                               "ids.")
        if len(group["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number "
                               "of params than the live optimizer param group.")
        swap_only = [k for k in swap_group if k not in group]
        live_only = [k for k in group if k not in swap_group]
        if swap_only or live_only:
            raise RuntimeError(
                f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly "
                f"match the live optimizer group keys for group {idx}. Keys only in swap-in: "
                f"{swap_only}. Keys only in live: {live_only}.")
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        infos.append((group, swap_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter "
            f"ids from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Inside the block, `optimizer` steps `swapin_parameters` (a dict name -> tensor, in
    param_groups order) with the hyperparameters and per-parameter state of
    `swapin_optim_state` (a state_dict()); its state tensors are updated in place. On exit the
    optimizer's own groups and state come back."""
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for live, swap_group, params in infos:
            live["params"] = params
            for key, value in swap_group.items():
                if key != "params":
                    live[key] = value
            for p, pid in zip(params, swap_group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snap in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snap)
        optimizer.state = original_state
