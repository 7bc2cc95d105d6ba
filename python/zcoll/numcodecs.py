"""zcoll as a numcodecs codec, for Zarr (format 2 arrays) and anything else that takes one.

    from zcoll.numcodecs import Fzl
    z = zarr.create_array(store, shape=..., chunks=..., dtype="f4", zarr_format=2,
                          compressors=Fzl(eb=1e-4, mode="rel"))

Importing this module registers the codec id "zcoll_fzl" with numcodecs (the package's
entry point does it too), so arrays written with it can be opened by config alone.
REL is relative to each chunk's value range: chunks are compressed independently.
"""
import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
from numcodecs.registry import register_codec

from . import codec as _codec


class Fzl(Codec):
    codec_id = "zcoll_fzl"

    def __init__(self, eb=1e-4, mode="rel", codec="fzl", threads=0):
        _codec._params(eb, mode, codec, threads)  # refuse bad settings now, not at first write
        self.eb = float(eb)
        self.mode = str(mode).lower()
        self.codec = codec
        self.threads = int(threads)

    def encode(self, buf):
        a = np.asarray(buf)
        if a.dtype.kind != "f":
            # Zarr hands the codec the chunk as an array of the array's dtype; raw bytes here
            # mean a filter before it changed that, and the bytes cannot be compressed lossily.
            raise TypeError(f"zcoll_fzl compresses float32/float64 chunks, got {a.dtype}; use it "
                            f"on a float array, as the first (or only) compressor")
        return _codec.compress(np.ascontiguousarray(a), self.eb, self.mode, self.codec,
                               self.threads)

    def decode(self, buf, out=None):
        buf = ensure_contiguous_ndarray(buf)
        dec = _codec.decompress(buf, self.threads)
        if out is not None:
            return ndarray_copy(dec, out)
        return dec

    def get_config(self):
        return {"id": self.codec_id, "eb": self.eb, "mode": self.mode, "codec": self.codec,
                "threads": self.threads}

    def __repr__(self):
        return f"Fzl(eb={self.eb!r}, mode={self.mode!r}, codec={self.codec!r})"


register_codec(Fzl)


# Zarr format 3 arrays take codecs of zarr's own kind. Fzl needs the chunk as an array (its
# dtype), so it is an array-to-bytes codec: the `serializer` of create_array. Built the way
# zarr.codecs.numcodecs builds its ZFPY (Zarr >= 3.1.3), and registered under
# "numcodecs.zcoll_fzl", the name such arrays record.
try:
    from zarr.codecs.numcodecs._codecs import _NumcodecsArrayBytesCodec
    from zarr.registry import register_codec as _zarr_register_codec
except ImportError:  # no zarr, or a zarr before 3.1.3: format-2 arrays still work
    FzlZarr3 = None
else:
    class FzlZarr3(_NumcodecsArrayBytesCodec, codec_name="zcoll_fzl"):
        """zcoll's fzl as the serializer of a Zarr format 3 array:
        zarr.create_array(..., serializer=FzlZarr3(eb=1e-4, mode="rel"), compressors=None)."""

    _zarr_register_codec(FzlZarr3.codec_name, FzlZarr3)
