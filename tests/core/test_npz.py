"""core/npz.py: the .npz the mocker reads, written without NumPy, read back by NumPy itself."""

from __future__ import annotations

import json
import subprocess
import zipfile
from io import BytesIO

from gpt_oss_infra.core.npz import npz_bytes
from gpt_oss_infra.tools.trial import VENV

READ_BACK = """
import io, json, sys
import numpy
arrays = numpy.load(io.BytesIO(sys.stdin.buffer.read()))
print(json.dumps({name: [arrays[name].dtype.str, list(arrays[name].shape), arrays[name].tolist()] for name in arrays}))
"""


def test_numpy_reads_the_arrays_back_exactly():
    arrays = {"line": [64, 128.5, 9000], "grid": [[1.25, 2], [3, 4], [5, 6.5]]}
    assert (VENV / "bin" / "python").exists(), "make test installs .venv-trial (its NumPy reads the file)"
    read = subprocess.run(
        [str(VENV / "bin" / "python"), "-c", READ_BACK], input=npz_bytes(arrays), capture_output=True, check=True
    )
    assert json.loads(read.stdout) == {
        "line": ["<f8", [3], [64.0, 128.5, 9000.0]],
        "grid": ["<f8", [3, 2], [[1.25, 2.0], [3.0, 4.0], [5.0, 6.5]]],
    }


def test_the_same_arrays_give_the_same_bytes_in_a_64_byte_aligned_layout():
    arrays = {"a": [1.0, 2.0]}
    assert npz_bytes(arrays) == npz_bytes(arrays)  # a stable plan and ConfigMap
    with zipfile.ZipFile(BytesIO(npz_bytes(arrays))) as archive:
        npy = archive.read("a.npy")
    header_length = int.from_bytes(npy[8:10], "little")
    assert npy[:8] == b"\x93NUMPY\x01\x00" and (10 + header_length) % 64 == 0


def test_ragged_rows_are_refused():
    try:
        npz_bytes({"grid": [[1.0, 2.0], [3.0]]})
    except ValueError as error:
        assert "rows of one length" in str(error)
    else:
        raise AssertionError("a ragged grid was written")
