"""Device detection without torch: nvidia-smi's rows, CUDA_VISIBLE_DEVICES, and the device kind."""

import pytest

from workers.device import describe_device, device_kind, parse_nvidia_smi, select_visible

SMI = """NVIDIA H200, 143771, GPU-aaaa1111-0000-0000-0000-000000000000, 00000000:18:00.0
NVIDIA H200, 143771, GPU-bbbb2222-0000-0000-0000-000000000000, 00000000:2A:00.0
"""


def test_nvidia_smi_rows_give_name_memory_uuid_and_bus_id():
    gpus = parse_nvidia_smi(SMI + "\nnot a row\n")
    assert len(gpus) == 2
    assert gpus[1] == {
        "name": "NVIDIA H200",
        "memory_bytes": 143771 * 2**20,
        "uuid": "GPU-bbbb2222-0000-0000-0000-000000000000",
        "pci_bus_id": "00000000:2A:00.0",
    }


def test_a_pinned_worker_sees_its_own_physical_gpu_by_index_or_uuid():
    gpus = parse_nvidia_smi(SMI)
    assert [g["pci_bus_id"] for g in select_visible(gpus, "1")] == ["00000000:2A:00.0"]
    assert [g["pci_bus_id"] for g in select_visible(gpus, "GPU-bbbb2222")] == ["00000000:2A:00.0"]
    assert [g["pci_bus_id"] for g in select_visible(gpus, "1,0")] == ["00000000:2A:00.0", "00000000:18:00.0"]
    assert select_visible(gpus, "5") == []  # CUDA stops at an invalid entry: no GPU


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA H100 PCIe", "h100"),
        ("NVIDIA H200", "h200"),
        ("NVIDIA H200 NVL", "h200"),
        ("NVIDIA A100-SXM4-80GB", "a100"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA GeForce RTX 4090", "rtx4090"),
        ("NVIDIA RTX A6000", "a6000"),
        ("Tesla V100-SXM2-16GB", "v100"),
    ],
)
def test_a_gpus_name_gives_its_kind_and_new_kinds_need_no_code(name, kind, monkeypatch):
    monkeypatch.delenv("TILEWISE_DEVICE_KIND", raising=False)
    assert device_kind(name) == kind


def test_the_kind_can_be_faked_for_tests(monkeypatch):
    monkeypatch.setenv("TILEWISE_DEVICE_KIND", "Alpha")
    assert device_kind("NVIDIA H100") == "alpha" and device_kind("CPU", "cpu") == "alpha"


def test_a_worker_with_cuda_hidden_is_a_cpu_worker_with_no_gpu_identity(monkeypatch):
    monkeypatch.delenv("TILEWISE_DEVICE_KIND", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    device = describe_device()
    assert device["kind"] == "cpu" and device["device_kind"] == "cpu"
    assert device["uuid"] is None and device["pci_bus_id"] is None and device["gpus"] == []
