import numpy as np
import torch
from skorch import NeuralNetClassifier
from _common import init, show
X = np.sin(np.arange(60.0).reshape(20, 3)).astype("float32")
y = (X.sum(1) > 0).astype("int64")
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
    def forward(self, X):
        return torch.softmax(self.fc(X), dim=-1)
net = NeuralNetClassifier(M, max_epochs=3, lr=0.1, batch_size=20, train_split=None, verbose=0)
net.initialize()
init(net.module_)
net.partial_fit(X, y)
show("proba", net.predict_proba(X[:2]).ravel().tolist())
show("history", [round(h["train_loss"], 5) for h in net.history])
