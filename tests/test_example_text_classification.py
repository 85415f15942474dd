"""examples/text_classification_lstm.py runs and learns (a short run)."""

import importlib.util
import pathlib

_PATH = pathlib.Path(__file__).resolve().parent.parent / "examples"


def test_the_lstm_text_classifier_learns(capsys):
    spec = importlib.util.spec_from_file_location(
        "text_classification_lstm", _PATH / "text_classification_lstm.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    accuracy = example.main(["--epochs", "2", "--examples", "600"])
    assert accuracy > 0.75  # chance is 0.5
    assert "Epoch 2/2" in capsys.readouterr().out
