from .data_parallel import DataParallel, data_parallel  # noqa: F401
