"""hipinductor: a torch.compile backend that fuses ATen graphs into HIP kernels.

    import torch
    model = torch.compile(model, backend="hipinductor")   # the entry point registers it; importing does too

CPU tensors run the generated HIP source on hipinductor's cpu device; GPU runtimes are not in this build yet.
"""

from . import _C
from .backend import clear_reports, decomposition_table, hipinductor_backend, reports
from .options import Options

__version__ = _C.version()


def _register() -> None:
    from torch._dynamo import list_backends, register_backend

    if "hipinductor" not in list_backends(exclude_tags=()):
        register_backend(name="hipinductor")(hipinductor_backend)


_register()

__all__ = ["hipinductor_backend", "reports", "clear_reports", "decomposition_table", "Options"]
