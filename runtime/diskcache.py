"""Persistent cache of compiled jit code, guarded so that a corrupt or stale entry is never loaded.

Layout (under the transpile cache dir, mode 0700):

    jit/<name>__<sha>.py              the lowered source; <sha> hashes the text, which names
                                      the signature and the transpile/numba/numpy versions
    jit/__pycache__/<name>__<sha>.*   Numba's cache (index + object code), written by Numba
    jit/<name>__<sha>.manifest        sha256 of each of those files, written atomically by us
                                      after a successful compile (mode 0600)

Before the module is loaded, `verify(path)` checks Numba's files against the manifest: a file
whose hash differs, a file the manifest does not list, or a listed file that is missing means
the entry is dropped (the files deleted) and Numba compiles again. `record(path)` writes the
manifest after a compile. So a truncated/corrupted object file is recompiled, never loaded.
"""
import hashlib
import json
import os
import tempfile

VERSION = 1


def _pycache(path):
    return os.path.join(os.path.dirname(path), "__pycache__")


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def _manifest_path(path):
    return os.path.splitext(path)[0] + ".manifest"


def entry_files(path):
    """Numba's cache files for the module at `path`."""
    d = _pycache(path)
    stem = _stem(path) + "."
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return []
    return sorted(os.path.join(d, n) for n in names
                  if n.startswith(stem) and (n.endswith(".nbi") or n.endswith(".nbc")))


def _digest(fname):
    h = hashlib.sha256()
    with open(fname, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_manifest(path):
    try:
        with open(_manifest_path(path)) as f:
            data = json.load(f)
        if data.get("version") != VERSION or not isinstance(data.get("files"), dict):
            return None
        return data["files"]
    except (OSError, ValueError):
        return None


def drop(path):
    for fname in entry_files(path):
        try:
            os.unlink(fname)
        except OSError:
            pass
    try:
        os.unlink(_manifest_path(path))
    except OSError:
        pass


def verify(path):
    """True if the cached entry for `path` is intact (or absent); drops it otherwise."""
    files = entry_files(path)
    if not files:
        return True
    manifest = _read_manifest(path)
    ok = manifest is not None
    if ok:
        names = {os.path.basename(f) for f in files}
        if names != set(manifest):
            ok = False
        else:
            for f in files:
                try:
                    if _digest(f) != manifest[os.path.basename(f)]:
                        ok = False
                        break
                except OSError:
                    ok = False
                    break
    if not ok:
        drop(path)
    return ok


def record(path):
    """Write the manifest for Numba's current files of `path` (atomic, private)."""
    files = entry_files(path)
    if not files:
        return
    data = {"version": VERSION, "files": {}}
    for f in files:
        try:
            os.chmod(f, 0o600)
            data["files"][os.path.basename(f)] = _digest(f)
        except OSError:
            return
    write_private(_manifest_path(path), json.dumps(data, indent=1, sort_keys=True))
    try:
        os.chmod(_pycache(path), 0o700)
    except OSError:
        pass


def write_private(path, text):
    """Atomic write with mode 0600 (a temp file in the same directory, then os.replace)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def source_path(cache_dir, name, text):
    """Where the lowered module lives: content-hashed, so a changed text is a new entry."""
    d = os.path.join(cache_dir, "jit")
    os.makedirs(d, mode=0o700, exist_ok=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(d, f"{name}__{digest}.py")
    if not os.path.exists(path):
        write_private(path, text)
    return path
