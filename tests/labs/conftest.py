"""Lab tests run on a CPU; tests marked `gpu` need CUDA and skip cleanly without it."""

from pathlib import Path

import pytest

HERE = Path(__file__).parent

try:
    import torch
except ImportError:  # the labs extra is not installed: only the torch-free catalog test can run
    torch = None
    collect_ignore = [p.name for p in HERE.glob("test_*.py") if p.name != "test_torch_free_catalog.py"]


def pytest_collection_modifyitems(config, items):
    if torch is not None and torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords and HERE in Path(item.path).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cpu():
    from labs.experiments.device import get_device

    return get_device("cpu")


@pytest.fixture(scope="session")
def cuda():
    from labs.experiments.device import get_device

    return get_device("cuda")
