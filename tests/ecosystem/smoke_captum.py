import torch
from captum.attr import IntegratedGradients, Saliency, DeepLift
from _common import det, init, show
model = init(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2)).double())
x = det(2, 4)
show("ig", IntegratedGradients(model).attribute(x, target=1, n_steps=16))
show("saliency", Saliency(model).attribute(x, target=0))
show("deeplift", DeepLift(model).attribute(x, target=1))
