"""NumPy's .npz archive, written without NumPy: a zip of .npy files (format 1.0) of float64 arrays.

The mocker reads its timing tables from one (`--planner-profile-data`). The bytes are the same for the
same arrays (fixed timestamps, no compression), so a plan and its ConfigMap stay stable.

  [npy-format] https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
"""

from __future__ import annotations

import io
import struct
import zipfile

_MAGIC = b"\x93NUMPY\x01\x00"
_ALIGN = 64  # the header (magic, length, dict, padding, newline) ends on a multiple of 64 bytes
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def npz_bytes(arrays: dict[str, list[float] | list[list[float]]]) -> bytes:
    """An uncompressed .npz of 1-D or 2-D (rectangular, row-major) float64 arrays, by name."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, values in arrays.items():
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH), _npy(values))
    return buffer.getvalue()


def _npy(values: list[float] | list[list[float]]) -> bytes:
    flat: list[float]
    # Empty, 2-D (rows) or 1-D, told apart by the first item: which also tells mypy each branch's type.
    if not values:
        shape, flat = "(0,)", []
    elif isinstance(values[0], list):
        rows = [list(row) for row in values]
        if len({len(row) for row in rows}) != 1:
            raise ValueError("a 2-D array needs rows of one length")
        shape, flat = f"({len(rows)}, {len(rows[0])})", [float(x) for row in rows for x in row]
    else:
        shape, flat = f"({len(values)},)", [float(x) for x in values]
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}".encode("latin1")
    padding = -(len(_MAGIC) + 2 + len(header) + 1) % _ALIGN
    header += b" " * padding + b"\n"
    return _MAGIC + struct.pack("<H", len(header)) + header + struct.pack(f"<{len(flat)}d", *flat)
