"""The package version (also setup.cfg's `version`), importable by any module without
importing the whole package."""
__version__ = "0.1.0"
