"""How vectors are stored in a row: a float_vector is raw little-endian float32; a
float_vector_array is a uint32 dimension count followed by the float32 data ('' = no vectors)."""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np     # imported where used: plain SQL does not load numpy (start-up)


def pack_vector(vec: np.ndarray) -> bytes:
    import numpy as np
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()


def pack_array(vectors: np.ndarray) -> bytes:
    import numpy as np
    if len(vectors) == 0:
        return b""
    return struct.pack("<I", vectors.shape[1]) + np.ascontiguousarray(vectors, dtype="<f4").tobytes()


def unpack(blob: bytes | None, is_array: bool) -> np.ndarray:
    """Vectors of a stored value as a 2-D float32 array (0 rows when empty or NULL)."""
    import numpy as np
    if not blob:
        return np.zeros((0, 0), dtype=np.float32)
    if not is_array:
        return np.frombuffer(blob, dtype="<f4").reshape(1, -1)
    (dims,) = struct.unpack_from("<I", blob)
    return np.frombuffer(blob, dtype="<f4", offset=4).reshape(-1, dims)


def vector_count(blob: bytes | None, is_array: bool) -> int:
    """The number of vectors of an array; the dimensions of a float_vector."""
    if not blob:
        return 0
    if is_array:
        (dims,) = struct.unpack_from("<I", blob)
        return (len(blob) - 4) // (4 * dims)
    return len(blob) // 4
