"""The errors of ``straggler data fetch``: a bad sum, a failed download, a busy data directory.

Examples
--------
>>> issubclass(ChecksumMismatchError, ValueError), issubclass(DownloadError, OSError)
(True, True)
"""

from __future__ import annotations

__all__ = ["ChecksumMismatchError", "DataDirBusyError", "DownloadError"]


class ChecksumMismatchError(ValueError):
    """A downloaded or present file does not have the size/SHA-256 of the manifest."""


class DownloadError(OSError):
    """A file could not be downloaded (network error, HTTP error status)."""


class DataDirBusyError(OSError):
    """Another ``straggler data fetch`` holds the lock on the data directory."""
