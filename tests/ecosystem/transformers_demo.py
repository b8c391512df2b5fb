"""transformers on ndgrad: a small GPT-2 and a small BERT built from a config load the weights
PyTorch saved (`python transformers_demo.py save DIR` under PyTorch), train three AdamW steps in
float64 and generate; `python -m ndgrad.run transformers_demo.py run DIR` prints what PyTorch
prints (`... run DIR` under PyTorch), to about 1e-7 where transformers computes the loss in
float32 (GPT-2's logits are upcast to float32)."""
import sys, os
import torch
from transformers import GPT2Config, GPT2LMHeadModel, BertConfig, BertForMaskedLM
torch.set_default_dtype(torch.float64)
mode, here = sys.argv[1], sys.argv[2]   # "save" (under PyTorch) or "run", a folder

def gpt2():
    cfg = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                     attn_implementation="eager")
    return GPT2LMHeadModel(cfg)

def bert():
    cfg = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation="eager")
    return BertForMaskedLM(cfg)

if mode == "save":
    torch.manual_seed(0)
    torch.save(gpt2().state_dict(), os.path.join(here, "gpt2.pt"))
    torch.save(bert().state_dict(), os.path.join(here, "bert.pt"))
    sys.exit()

for name, make in (("gpt2", gpt2), ("bert", bert)):
    model = make()
    missing = model.load_state_dict(torch.load(os.path.join(here, f"{name}.pt")), strict=False)
    ids = torch.tensor([[1, 5, 9, 13, 17, 21, 25, 29], [2, 6, 10, 14, 18, 22, 26, 30]])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(3):
        out = model(input_ids=ids, labels=ids)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        print(f"{name} step {step} loss {out.loss.item():.12f}")
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    print(f"{name} logits sum {logits.sum().item():.10f} [0,0,:3] {[round(v, 10) for v in logits[0, 0, :3].tolist()]}")
    if name == "gpt2":
        gen = model.generate(ids[:1, :4], max_new_tokens=6, do_sample=False, pad_token_id=0)
        print("gpt2 generate", gen.tolist())
