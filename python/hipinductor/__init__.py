"""hipinductor: a torch.compile backend that fuses ATen graphs into HIP kernels.

    import torch
    model = torch.compile(model, backend="hipinductor")   # the entry point registers it; importing does too

CPU tensors run the generated HIP source on hipinductor's cpu device; CUDA tensors run it through NVRTC and the CUDA
driver, ROCm tensors through HIPRTC and the HIP runtime.
"""

from . import _C
from .aot import aot_compile
from .backend import decomposition_table, hipinductor_backend
from .compile_jobs import wait_for_compiles
from .package_format import PackageError
from .package_loader import load_package
from .options import Options
from .reporting import clear_reports, kernel_facts, reports

__version__ = _C.version()


def _register() -> None:
    from torch._dynamo import list_backends, register_backend

    if "hipinductor" not in list_backends(exclude_tags=()):
        register_backend(name="hipinductor")(hipinductor_backend)


_register()

__all__ = ["aot_compile", "load_package", "PackageError", "hipinductor_backend", "reports", "kernel_facts", "clear_reports", "decomposition_table", "Options",
           "wait_for_compiles"]
