import torch
import pyro
import pyro.distributions as dist
from pyro.infer import SVI, Trace_ELBO
from pyro.optim import Adam
from _common import show
pyro.set_rng_seed(0)
data = torch.tensor([1.0, 2.0, 1.5, 1.8, 2.2], dtype=torch.float64)
def model(data):
    mu = pyro.sample("mu", dist.Normal(torch.tensor(0.0, dtype=torch.float64), 10.0))
    with pyro.plate("data", len(data)):
        pyro.sample("obs", dist.Normal(mu, 1.0), obs=data)
def guide(data):
    loc = pyro.param("loc", torch.tensor(0.0, dtype=torch.float64))
    pyro.sample("mu", dist.Delta(loc))
svi = SVI(model, guide, Adam({"lr": 0.1}), loss=Trace_ELBO())
for _ in range(20):
    loss = svi.step(data)
show("loc", pyro.param("loc").item())
show("log_prob", dist.Normal(0.0, 1.0).log_prob(data).sum().item())
tr = pyro.poutine.trace(model).get_trace(data)
show("sites", sorted(tr.nodes))
