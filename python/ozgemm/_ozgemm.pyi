# Type stub of the extension module ozgemm._ozgemm (python/src/ozgemm_py.cpp): internal; the
# public API is the ozgemm package. Every function takes and returns plain ints, floats and strings.
from typing import Any

__version__: str
BUILD: tuple[str, bool, bool, bool, str]
DEFAULT_SLICES: int
MAX_SLICES: int

def __getattr__(name: str) -> Any: ...
