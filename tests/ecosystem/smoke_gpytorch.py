import torch
import gpytorch
from _common import show
train_x = torch.linspace(0, 1, 12, dtype=torch.float64)
train_y = torch.sin(train_x * 6.0)
class GP(gpytorch.models.ExactGP):
    def __init__(self, x, y, lik):
        super().__init__(x, y, lik)
        self.mean = gpytorch.means.ConstantMean()
        self.cov = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean(x), self.cov(x))
lik = gpytorch.likelihoods.GaussianLikelihood()
model = GP(train_x, train_y, lik).double()
lik.double()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
model.train(); lik.train()
for _ in range(5):
    opt.zero_grad()
    loss = -mll(model(train_x), train_y)
    loss.backward()
    opt.step()
show("loss", loss.item())
model.eval(); lik.eval()
with torch.no_grad(), gpytorch.settings.fast_pred_var():
    pred = lik(model(torch.tensor([0.25, 0.75], dtype=torch.float64)))
show("mean", pred.mean)
