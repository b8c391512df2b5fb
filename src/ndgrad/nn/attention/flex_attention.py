"""torch.nn.attention.flex_attention on ndgrad: the dense reference semantics (PyTorch's eager
path). `score_mod(score, b, h, q_idx, kv_idx)` and `mask_mod(b, h, q_idx, kv_idx)` are called
once, on broadcasting index tensors of shapes (B,1,1,1), (1,H,1,1), (1,1,Q,1), (1,1,1,KV),
so they must be elementwise (as PyTorch's vmap-traced ones are); a BlockMask keeps the dense
boolean mask it stands for (there are no sparse blocks to skip here)."""
import math
from typing import NamedTuple, Optional

__all__ = ["BlockMask", "flex_attention", "create_block_mask", "create_mask", "and_masks",
           "or_masks", "noop_mask", "_DEFAULT_SPARSE_BLOCK_SIZE"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


def _t():
    import sys
    return sys.modules[__name__.split(".")[0]]


def noop_mask(b, h, q_idx, kv_idx):
    """A mask_mod keeping everything."""
    return q_idx.new_ones((), dtype=_t().bool)


def _identity_score(score, b, h, q_idx, kv_idx):
    return score


def and_masks(*mask_mods):
    """The mask_mod keeping what every one of mask_mods keeps."""
    def mask(b, h, q_idx, kv_idx):
        out = noop_mask(b, h, q_idx, kv_idx)
        for m in mask_mods:
            out = out & m(b, h, q_idx, kv_idx)
        return out
    return mask


def or_masks(*mask_mods):
    """The mask_mod keeping what any of mask_mods keeps."""
    def mask(b, h, q_idx, kv_idx):
        out = q_idx.new_zeros((), dtype=_t().bool)
        for m in mask_mods:
            out = out | m(b, h, q_idx, kv_idx)
        return out
    return mask


def _grids(B, H, Q, KV, device=None):
    torch = _t()
    b = torch.arange(B, device=device).reshape(B, 1, 1, 1)
    h = torch.arange(H, device=device).reshape(1, H, 1, 1)
    q = torch.arange(Q, device=device).reshape(1, 1, Q, 1)
    kv = torch.arange(KV, device=device).reshape(1, 1, 1, KV)
    return b, h, q, kv


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device="cpu"):
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod (B or H None: 1)."""
    B, H = B or 1, H or 1
    grids = _grids(B, H, Q_LEN, KV_LEN, device)
    return mod_fn(*grids).expand(B, H, Q_LEN, KV_LEN).clone()


class BlockMask:
    """The mask of a flex_attention call (dense here: `to_dense()` is the mask itself)."""

    def __init__(self, mask, mask_mod, seq_lengths, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE):
        self.mask = mask
        self.mask_mod = mask_mod
        self.seq_lengths = tuple(seq_lengths)
        self.BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else \
            tuple(BLOCK_SIZE)

    @property
    def shape(self):
        return tuple(self.mask.shape)

    def to_dense(self):
        return self.mask

    def to_string(self, grid_size=(20, 20), limit=4):
        return repr(self)

    def sparsity(self):
        return 100.0 * (1.0 - self.mask.float().mean().item())

    def to(self, device):
        return BlockMask(self.mask.to(device), self.mask_mod, self.seq_lengths, self.BLOCK_SIZE)

    def __getitem__(self, index):
        return BlockMask(self.mask[index], self.mask_mod, self.seq_lengths, self.BLOCK_SIZE)

    def __repr__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, " \
               f"mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)})"

    @classmethod
    def from_kv_blocks(cls, *args, **kwargs):
        raise NotImplementedError("BlockMask.from_kv_blocks: ndgrad keeps dense masks; build "
                                  "it with create_block_mask")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device="cpu", BLOCK_SIZE=128,
                      _compile=False):
    """The BlockMask of mask_mod over (B, H, Q_LEN, KV_LEN) (B or H None: broadcast)."""
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    return BlockMask(mask, mask_mod, (Q_LEN, KV_LEN), BLOCK_SIZE)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """softmax(score_mod(q @ k^T * scale) masked by block_mask) @ v, over (B, H, L, E)."""
    torch = _t()
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if enable_gqa and Hq != Hkv:
        if Hq % Hkv:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for "
                             f"GQA but got Hq={Hq} and Hkv={Hkv}.")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    elif Hq != Hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    b, h, q, kv = _grids(B, Hq, L, S, query.device)
    if score_mod is not None:
        scores = score_mod(scores, b, h, q, kv)
    if block_mask is not None:
        mask = block_mask.mask if isinstance(block_mask, BlockMask) else block_mask
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.exp(scores - lse.unsqueeze(-1)).nan_to_num(0.0)   # fully masked rows: 0
    out = probs @ value
    if return_lse:
        return out, lse
    return out



class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention computes."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs of flex_attention."""
    lse: Optional[object] = None
    max_scores: Optional[object] = None
