from labs.experiments.copy_roof import copy_roof


def test_copy_roof_is_measured_once_per_process(cpu):
    roof = copy_roof(cpu)
    assert roof is copy_roof(cpu) and roof.gbps > 0 and "read + written" in roof.method
