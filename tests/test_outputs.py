"""ns3wormhole.outputs: output paths checked before a run, written atomically to the
file the shell would write, errors naming the file, nothing half-written left behind."""

from __future__ import annotations

import errno
import os
import threading

import pytest

from ns3wormhole import outputs
from ns3wormhole.outputs import OutputError, check_output_dir, check_output_file, write_text


def test_write_replaces_atomically_and_keeps_the_mode(tmp_path):
    p = tmp_path / "out.json"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_text(p, "new")
    assert p.read_text() == "new"
    assert (p.stat().st_mode & 0o777) == 0o640
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]


def test_a_new_file_gets_the_umask_mode_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "n.json", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "n.json").stat().st_mode & 0o777 == 0o644


def test_symlink_writes_its_target_as_the_shell_would(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "created.json")
    write_text(dangling, "x")
    assert dangling.is_symlink() and (tmp_path / "created.json").read_text() == "x"


def test_fifo_is_written_to_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    check_output_file(fifo)
    write_text(fifo, "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"]
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


def test_a_folder_named_like_the_old_temp_file_does_not_matter(tmp_path):
    (tmp_path / "out.json.tmp").mkdir()
    write_text(tmp_path / "out.json", "ok")
    assert (tmp_path / "out.json").read_text() == "ok"


def test_full_disk_names_the_file_and_leaves_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "out.json"
    p.write_text("previous results")

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "write", full)
    with pytest.raises(OutputError) as e:
        write_text(p, "x" * 100)
    assert str(e.value).startswith(f"{p}: ") and "No space left" in str(e.value)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]
    assert p.read_text() == "previous results"


def test_checks_name_the_path_and_the_reason(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="is a directory"):
        check_output_file(tmp_path)
    with pytest.raises(OutputError, match="does not exist"):
        check_output_file(tmp_path / "no" / "dir" / "x.json")
    with pytest.raises(OutputError, match="is not a folder"):
        check_output_file(tmp_path / "file" / "x.json")
    with pytest.raises(OutputError, match="an input of this run"):
        check_output_file(tmp_path / "file", forbid=[tmp_path / "file"])
    check_output_file(None)
    check_output_file("-")
    check_output_file(tmp_path / "new.json")
    with pytest.raises(OutputError, match="exists and is not a folder"):
        check_output_dir(tmp_path / "file")
    with pytest.raises(OutputError, match="is not a folder"):
        check_output_dir(tmp_path / "file" / "sub" / "dir")
    check_output_dir(tmp_path / "new" / "deeper")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_folder_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        with pytest.raises(OutputError, match="not writable"):
            check_output_file(ro / "x.json")
        with pytest.raises(OutputError, match="not writable"):
            check_output_dir(ro / "sub")
    finally:
        os.chmod(ro, 0o700)
