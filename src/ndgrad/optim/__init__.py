"""ndgrad.optim: PyTorch's optimizers and learning-rate schedulers.

    opt = ndgrad.optim.Adam(model.parameters(), lr=1e-3)
    sched = ndgrad.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop, Adagrad, Adadelta
from .lbfgs import LBFGS
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS",
           "lr_scheduler"]
