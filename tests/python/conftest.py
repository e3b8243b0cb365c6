import os
import tempfile

import pytest

# Tests raise on compiler faults instead of silently running eagerly, and use their own cache.
os.environ.setdefault("HIPINDUCTOR_STRICT", "1")
os.environ.setdefault("HIPINDUCTOR_CACHE_DIR", os.path.join(tempfile.gettempdir(), "hipinductor-pytest-cache"))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    import torch._dynamo

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
