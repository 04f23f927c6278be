"""lab/files.py: a file the lab writes replaces what is at its name, never writes through it."""

from pathlib import Path

import pytest

from loadtest.lab.errors import LabError
from loadtest.lab.files import current_umask, write_text_safely


def test_a_planted_symlink_is_replaced_and_its_target_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "bashrc"
    target.write_text("mine\n")
    (tmp_path / "report.md").symlink_to(target)
    write_text_safely(tmp_path / "report.md", "the report\n")
    assert not (tmp_path / "report.md").is_symlink()
    assert (tmp_path / "report.md").read_text() == "the report\n"
    assert target.read_text() == "mine\n"
    # As Path.write_text would make it: 0666 less the umask (0644 under the usual 022).
    assert (tmp_path / "report.md").stat().st_mode & 0o777 == 0o666 & ~current_umask()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bashrc", "report.md"]


def test_a_folder_it_cannot_write_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(LabError, match=r"^cannot write .*report.md: No such file or directory$"):
        write_text_safely(tmp_path / "gone" / "report.md", "x")
    assert list(tmp_path.iterdir()) == []
