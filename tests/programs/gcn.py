# Graph Convolutional Network (Kipf & Welling), after pytorch/examples' gcn/main.py, on a small
# generated graph in place of Cora: the normalized adjacency D^-1/2 (A + I) D^-1/2 is a sparse
# COO tensor and each layer computes A_hat @ (X @ W) with torch.sparse.mm.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

N, F_IN, HIDDEN, CLASSES = 40, 12, 16, 4
node = torch.arange(N)
labels = node % CLASSES
# features: a noisy one-hot of the label spread over F_IN columns, all arithmetic
cols = torch.arange(F_IN)
features = ((cols.unsqueeze(0) % CLASSES) == labels.unsqueeze(1)).double()
features = features + 0.1 * torch.sin(node.unsqueeze(1) * 0.7 + cols.unsqueeze(0) * 1.3)
features = features / features.sum(1, keepdim=True)              # row-normalized, as Cora's

# edges: a ring, same-class chords and a few cross-class links, both directions
src = torch.cat([node, node, node[::3]])
dst = torch.cat([(node + 1) % N, (node + CLASSES) % N, (node[::3] * 7 + 3) % N])
edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])


def normalized_adjacency(edge_index, n):
    loops = torch.arange(n)
    idx = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
    adj = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1]), (n, n)).coalesce()
    adj = torch.sparse_coo_tensor(adj.indices(), torch.ones(adj._nnz()), (n, n)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense()
    d_inv_sqrt = deg.pow(-0.5)
    i, j = adj.indices()
    vals = d_inv_sqrt[i] * adj.values() * d_inv_sqrt[j]
    return torch.sparse_coo_tensor(adj.indices(), vals, (n, n)).coalesce()


adj = normalized_adjacency(edge_index, N)
print(adj.shape, adj._nnz(), adj.layout, adj.is_coalesced())


class GraphConv(nn.Module):
    def __init__(self, in_features, out_features, seed):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        k = torch.arange(in_features * out_features).reshape(in_features, out_features)
        bound = 1.0 / math.sqrt(out_features)
        with torch.no_grad():   # deterministic init (the random streams differ by library)
            self.weight.copy_(bound * torch.sin(k * 0.37 + seed))

    def forward(self, x, adj):
        return torch.sparse.mm(adj, x @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, in_features, hidden, classes, dropout=0.0):
        super().__init__()
        self.gc1 = GraphConv(in_features, hidden, 1.0)
        self.gc2 = GraphConv(hidden, classes, 2.0)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


model = GCN(F_IN, HIDDEN, CLASSES)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
train = node % 5 < 3
val = node % 5 == 3
test = node % 5 == 4


def accuracy(out, y):
    return (out.argmax(1) == y).double().mean().item()


losses = []
for epoch in range(30):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj)
    loss = F.nll_loss(out[train], labels[train])
    loss.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        out = model(features, adj)
        val_loss = F.nll_loss(out[val], labels[val])
    losses.append(loss.item())
    if epoch % 5 == 0 or epoch == 29:
        print(f"epoch {epoch:3d} loss {loss.item():.6f} val_loss {val_loss.item():.6f} "
              f"val_acc {accuracy(out[val], labels[val]):.4f}")

out = model(features, adj)
print(f"test acc {accuracy(out[test], labels[test]):.4f}")
csr = adj.to_sparse_csr()
print(torch.allclose(torch.sparse.mm(adj, features), csr @ features))
result = {"losses": losses, "out": out.detach(), "w1": model.gc1.weight.detach()}
