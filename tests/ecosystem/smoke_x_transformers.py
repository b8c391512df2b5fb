import torch
from x_transformers import TransformerWrapper, Decoder, Encoder
from _common import init, show
model = init(TransformerWrapper(num_tokens=32, max_seq_len=16, attn_layers=Decoder(dim=16, depth=2, heads=2)).double(), 0.1)
x = torch.tensor([[1, 5, 9, 3, 7]])
logits = model(x)
show("decoder", logits)
enc = init(TransformerWrapper(num_tokens=32, max_seq_len=16, attn_layers=Encoder(dim=16, depth=1, heads=2)).double(), 0.1)
show("encoder", enc(x, mask=torch.ones(1, 5, dtype=torch.bool)))
logits.sum().backward()
show("grad", next(model.parameters()).grad)
