# Graph Attention Network (Velickovic et al.), after pytorch/examples' gat/main.py, on a small
# generated graph in place of Cora: multi-head attention scores over all node pairs, masked by
# the adjacency (dense), then softmax over each node's neighbours.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

N, F_IN, HIDDEN, HEADS, CLASSES = 30, 10, 8, 2, 3
node = torch.arange(N)
labels = node % CLASSES
cols = torch.arange(F_IN)
features = ((cols.unsqueeze(0) % CLASSES) == labels.unsqueeze(1)).double()
features = features + 0.2 * torch.cos(node.unsqueeze(1) * 0.9 + cols.unsqueeze(0) * 0.4)

src = torch.cat([node, node])
dst = torch.cat([(node + 1) % N, (node + CLASSES) % N])
adj = torch.sparse_coo_tensor(torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]),
                              torch.ones(4 * N), (N, N)).to_dense()
adj = ((adj + torch.eye(N)) > 0).double()           # self loops, 0/1
print(adj.sum().item(), adj.shape)


def det_(p, seed, fan):     # deterministic init (the random streams differ by library)
    k = torch.arange(p.numel()).reshape(p.shape)
    with torch.no_grad():
        p.copy_(torch.sin(k * 0.61 + seed) / math.sqrt(fan))


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=True, dropout=0.0,
                 leaky_relu_slope=0.2, seed=0.0):
        super().__init__()
        self.n_heads, self.concat, self.dropout = n_heads, concat, dropout
        self.n_hidden = out_features // n_heads if concat else out_features
        self.W = nn.Parameter(torch.empty(in_features, self.n_hidden * n_heads))
        self.a = nn.Parameter(torch.empty(n_heads, 2 * self.n_hidden, 1))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.softmax = nn.Softmax(dim=1)
        det_(self.W, seed, in_features)
        det_(self.a, seed + 0.5, 2 * self.n_hidden)

    def _get_attention_scores(self, h_transformed):
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = source_scores + target_scores.mT          # (n_heads, n, n)
        return self.leakyrelu(e)

    def forward(self, h, adj_mat):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask)
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, -1)
        else:
            h_prime = h_prime.mean(dim=0)
        return h_prime


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.0,
                 leaky_relu_slope=0.2):
        super().__init__()
        self.gat1 = GraphAttentionLayer(in_features, n_hidden, n_heads, concat=True,
                                        dropout=dropout, leaky_relu_slope=leaky_relu_slope,
                                        seed=1.0)
        self.gat2 = GraphAttentionLayer(n_hidden, num_classes, 1, concat=False,
                                        dropout=dropout, leaky_relu_slope=leaky_relu_slope,
                                        seed=2.0)

    def forward(self, input_tensor, adj_mat):
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        return F.log_softmax(x, dim=1)


model = GAT(F_IN, HIDDEN, HEADS, CLASSES)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
criterion = nn.NLLLoss()
train = node % 5 < 3
losses = []
for epoch in range(25):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj)
    loss = criterion(out[train], labels[train])
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if epoch % 5 == 0 or epoch == 24:
        with torch.no_grad():
            model.eval()
            acc = (model(features, adj).argmax(1)[~train] == labels[~train]).double().mean()
        print(f"epoch {epoch:3d} loss {loss.item():.6f} test_acc {acc.item():.4f}")
result = {"losses": losses, "out": out.detach()}
