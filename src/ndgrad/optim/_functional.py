"""torch.optim._functional: the functional forms of the optimizers, in one namespace (PyTorch's
older import path, which libraries still use)."""
from .adadelta import adadelta  # noqa: F401
from .adagrad import adagrad  # noqa: F401
from .adam import adam  # noqa: F401
from .adamax import adamax  # noqa: F401
from .adamw import adamw  # noqa: F401
from .asgd import asgd  # noqa: F401
from .nadam import nadam  # noqa: F401
from .radam import radam  # noqa: F401
from .rmsprop import rmsprop  # noqa: F401
from .rprop import rprop  # noqa: F401
from .sgd import sgd  # noqa: F401
from .sparse_adam import sparse_adam  # noqa: F401
