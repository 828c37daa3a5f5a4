"""Measured figures: figures.json, the {{fig:NAME}} placeholders and how the loader fills them in."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from quizzes.course_files import CourseLoadError, read_course_dir
from quizzes.figures import Figure, fill, literal_figures, read_figures
from tests.conftest import CONTENT


def _row(name: str, value: float, unit: str = "ms", decimals: int = 3, **extra) -> dict:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "decimals": decimals,
        "method": "CUDA events through do_bench",
        "device": "NVIDIA H100 80GB HBM3",
        "versions": "torch 2.11.0",
        **extra,
    }


@pytest.fixture
def course_dir(tmp_path) -> Path:
    target = tmp_path / "cuda-kernels-fusion"
    shutil.copytree(CONTENT, target)
    doc = json.loads((target / "figures.json").read_text())
    doc["figures"].append(_row("test_kernel_ms", 0.2151))
    (target / "figures.json").write_text(json.dumps(doc))
    return target


def _edit_cards(course_dir: Path, name: str, edit) -> None:
    path = course_dir / "cards" / name
    doc = yaml.safe_load(path.read_text())
    edit(doc["cards"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


def _card(data, card_id: str) -> dict:
    return next(c for c in data.cards if c["id"] == card_id)


def _errors(course_dir: Path) -> str:
    with pytest.raises(CourseLoadError) as info:
        read_course_dir(course_dir)
    return str(info.value)


@pytest.mark.parametrize(
    ("value", "unit", "decimals", "text"),
    [
        (0.21514, "ms", 3, "0.215 ms"),
        (84.22, "%", 0, "84%"),
        (2.4617, "×", 2, "2.46×"),
        (200.0, "", 0, "200"),
        (1273.6, "TFLOP/s", 0, "1274 TFLOP/s"),
        (60000.0, "steps", 0, "60,000 steps"),
    ],
)
def test_a_figure_prints_its_value_with_its_decimals_and_unit(value, unit, decimals, text):
    assert Figure("f", value, unit, decimals, "m", "d").text == text


def test_fill_replaces_known_names_and_reports_unknown_ones():
    figures = {"a_ms": Figure("a_ms", 1.5, "ms", 1, "m", "d")}
    text, unknown = fill("took {{fig:a_ms}}, not {{fig:b_ms}}", figures)
    assert text == "took 1.5 ms, not {{fig:b_ms}}" and unknown == ["b_ms"]


def test_placeholders_are_filled_in_cards_sections_and_explanations(course_dir):
    _edit_cards(course_dir, "recall.yaml", lambda cards: cards[0].update(prompt="How long? {{fig:test_kernel_ms}}"))
    section = course_dir / "sections" / "01-kernels-launch-cost.md"
    section.write_text(section.read_text() + "\nMeasured: {{fig:test_kernel_ms}}.\n")
    data = read_course_dir(course_dir)
    assert data.cards[[c["kind"] for c in data.cards].index("recall")]["prompt"].endswith("How long? 0.215 ms")
    assert data.sections[0]["body"].endswith("Measured: 0.215 ms.")
    assert not any("{{fig:" in e["answer"] for e in data.explanations)


def test_a_numeric_answer_may_be_a_single_placeholder(course_dir):
    _edit_cards(course_dir, "numeric.yaml", lambda cards: cards[0].update(answer="{{fig:test_kernel_ms}}"))
    data = read_course_dir(course_dir)
    assert data.cards[[c["kind"] for c in data.cards].index("numeric")]["answer"] == 0.215


def test_an_unknown_figure_names_file_card_and_field(course_dir):
    _edit_cards(course_dir, "predict.yaml", lambda cards: cards[0].update(explanation="took {{fig:no_such_ms}}"))
    first = yaml.safe_load((course_dir / "cards" / "predict.yaml").read_text())["cards"][0]["id"]
    assert (
        f"cuda-kernels-fusion/cards/predict.yaml: card {first}: field 'explanation': "
        "unknown figure 'no_such_ms' (not in figures.json)" in _errors(course_dir)
    )


def test_an_unknown_figure_in_a_numeric_answer_is_refused(course_dir):
    _edit_cards(course_dir, "numeric.yaml", lambda cards: cards[0].update(answer="{{fig:no_such_ms}}"))
    assert "field 'answer': unknown figure 'no_such_ms'" in _errors(course_dir)


def test_placeholders_without_a_figures_file_are_refused(course_dir):
    (course_dir / "figures.json").unlink()
    assert "unknown figure 'copy_roof_tbps': this course has no figures.json" in _errors(course_dir)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda doc: doc.pop("device"), "figures.json: field 'device': is required"),
        (lambda doc: doc["figures"][0].update(value="fast"), "field 'value': must be a number"),
        (lambda doc: doc["figures"][0].pop("method"), "field 'method': is required"),
        (lambda doc: doc["figures"].append(dict(doc["figures"][0])), "field 'name': duplicate figure name"),
        (lambda doc: doc["figures"][0].update(name="Bad-Name"), "row #1: field 'name'"),
    ],
)
def test_a_bad_figures_file_is_refused_naming_the_file_figure_and_field(course_dir, edit, message):
    doc = json.loads((course_dir / "figures.json").read_text())
    edit(doc)
    (course_dir / "figures.json").write_text(json.dumps(doc))
    errors = _errors(course_dir)
    assert "cuda-kernels-fusion/figures.json" in errors and message in errors


def test_another_devices_figures_are_quoted_with_its_tag(course_dir):
    doc = json.loads((course_dir / "figures-h200.json").read_text())
    doc["figures"].append(_row("test_kernel_ms", 0.1372))
    (course_dir / "figures-h200.json").write_text(json.dumps(doc))
    section = course_dir / "sections" / "01-kernels-launch-cost.md"
    section.write_text(section.read_text() + "\nH100 {{fig:test_kernel_ms}}, H200 {{fig:test_kernel_ms@h200}}.\n")
    assert read_course_dir(course_dir).sections[0]["body"].endswith("H100 0.215 ms, H200 0.137 ms.")


def test_a_bad_other_device_file_is_refused_naming_that_file(course_dir):
    (course_dir / "figures-h200.json").write_text(json.dumps({"figures": [_row("x_ms", "slow")]}))
    errors = _errors(course_dir)
    assert "cuda-kernels-fusion/figures-h200.json" in errors and "field 'device': is required" in errors


def test_the_shipped_figures_say_where_and_how_each_was_measured():
    for path in (CONTENT / "figures.json", CONTENT / "figures-h200.json"):
        doc = json.loads(path.read_text())
        assert doc["device"] and doc["versions"] and "re_measured" in doc
        figures = read_figures(path)
        assert figures["copy_roof_tbps"].unit == "TB/s"
        for row in doc["figures"]:
            assert row["method"] and row["device"] and row["versions"], row["name"]
    assert "H200" in json.loads((CONTENT / "figures-h200.json").read_text())["device"]


def test_launch_bound_figures_are_recorded_with_both_clocks():
    figures = read_figures(CONTENT / "figures.json")
    for base in ("probe_swiglu_64x8192_eager", "probe_swiglu_64x8192_compile"):
        assert {f"{base}_events_us", f"{base}_wall_us"} <= set(figures)
    assert "wall-clock" in figures["probe_swiglu_64x8192_compile_wall_us"].method
    assert "CUDA events" in figures["probe_swiglu_64x8192_compile_events_us"].method


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("ran at 2.97 TB/s and 711 TFLOP/s", ["2.97 TB/s", "711 TFLOP/s"]),
        ("about 10.8 µs per kernel, 0.532ms in all", ["10.8 µs", "0.532ms"]),
        ("85% of the measured copy roof, 72% of spec", ["85% of the measured copy", "72% of spec"]),
        ("{{fig:copy_roof_tbps}} and {{fig:x_ms}}", []),
        ("a 50% larger batch, 2.5× faster, 80 GB of HBM", []),
    ],
)
def test_literal_figures_finds_numbers_written_like_measurements(text, found):
    assert literal_figures(text) == found
