import torch

from labs.experiments.device import library_versions


def test_versions_name_python_and_torch():
    v = library_versions()
    assert v["torch"] == torch.__version__ and v["python"]
