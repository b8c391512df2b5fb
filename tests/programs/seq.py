# stdout: differs (softmax rows sum to exactly 1 in one library and to 1 - 1 ulp in the other, so the prints round differently)
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
rng = np.random.default_rng(4)
seqs = [torch.from_numpy(rng.standard_normal((n, 3)).astype(np.float32)) for n in (5, 3, 2)]
padded = pad_sequence(seqs, batch_first=True)
print(padded.shape)
lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
with torch.no_grad():
    for name, p in lstm.named_parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
packed = pack_padded_sequence(padded, torch.tensor([5, 3, 2]), batch_first=True)
out, (h, c) = lstm(packed)
out, lens = pad_packed_sequence(out, batch_first=True)
print(out.shape, lens, h.shape)
loss = out.pow(2).sum() + h.sum()
loss.backward()
print([n for n, _ in lstm.named_parameters()][:4])
emb = nn.Embedding(10, 4, padding_idx=0)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True), 2)
print(enc.layers[0].self_attn.embed_dim, len(enc.layers))
mha = nn.MultiheadAttention(4, 2, batch_first=True)
q = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
with torch.no_grad():
    for p in mha.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
o, attn = mha(q, q, q, key_padding_mask=torch.tensor([[False, False, True], [False, False, False]]))
print(o.shape, attn.shape, attn.sum(-1))
result = {"out": out, "grads": [p.grad for p in lstm.parameters()], "o": o, "attn": attn}
