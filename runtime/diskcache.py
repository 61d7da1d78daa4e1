"""The transpile cache directory, and the persistent cache of compiled jit code in it.

Where (`cache_root()`): $TRANSPILE_CACHE_DIR, or ~/.cache/transpile. The directory must be
usable and private, as ssh and pip require of theirs:

* created with mode 0700 if missing;
* owned by another user: refused;
* writable by group or others (e.g. 0777 in a shared /tmp): made private (chmod 0700) and its
  signing key discarded, so nothing a stranger may have put there is trusted (one warning);
* unusable (a path under a file, read-only, a full or read-only disk): a private temporary
  directory (tempfile.mkdtemp, mode 0700) is used for this process instead, with one warning.

Deleting the directory while programs use it is harmless: every write recreates the folders it
needs and retries (`write_private`).

Layout of the compiled-code cache (under <root>/jit/):

    <name>__<sha>.py              the lowered source; <sha> hashes the text, which names
                                  the signature and the transpile/numba/numpy versions
    __pycache__/<name>__<sha>.*   Numba's cache (index + object code), written by Numba
    <name>__<sha>.manifest        sha256 of each of those files plus an HMAC-SHA256 of that
                                  list, keyed by <root>/.key (32 random bytes, mode 0600),
                                  written atomically by us after a successful compile

Numba's cache files are pickles and machine code: loading one runs it. So before the module is
loaded, `verify(path)` checks them against the manifest: a file whose hash differs, a file the
manifest does not list, a listed file that is missing, or a manifest whose MAC does not match
(someone rewrote the hashes without the key) means the entry is dropped (the files deleted)
and Numba compiles again. The key never leaves the private directory, so a forged entry needs
the user's own rights, which could run code anyway. The generated `.py` files are written by
`ensure_file`, which rewrites a file whose text differs from the text that runs (an edited or
corrupted file), so tracebacks and the debugger always show the real code.
"""
import contextlib
import errno
import hashlib
import hmac
import json
import os
import stat
import tempfile

from . import diagnostics

VERSION = 2
KEY_NAME = ".key"
KEY_BYTES = 32

_FALLBACK = {}       # requested dir -> the private temporary dir used instead (this process)
_CHECKED = set()     # dirs found usable and private in this process


def default_dir():
    return os.environ.get("TRANSPILE_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "transpile")


def cache_root(requested=None):
    """The cache directory to use (see the module docstring): the requested one if it is
    usable and private, otherwise a private temporary directory (one warning per process)."""
    req = os.path.abspath(os.path.expanduser(requested or default_dir()))
    fb = _FALLBACK.get(req)
    if fb is not None:
        if _prepare(fb) is None:
            return fb
        req_problem = "was unusable"
    else:
        problem = _prepare(req)
        if problem is None:
            diagnostics.add_internal_dir(req)
            return req
        req_problem = problem
    fb = tempfile.mkdtemp(prefix="transpile-cache-")
    first = req not in _FALLBACK
    _FALLBACK[req] = fb
    diagnostics.add_internal_dir(fb)
    if first:
        diagnostics.warn(f"transpile: the cache directory {req} {req_problem}; using the "
                         f"private temporary directory {fb} for this process instead (set "
                         "TRANSPILE_CACHE_DIR to a directory you own)")
    return fb


def makedirs_private(d):
    """os.makedirs with mode 0700 for every folder it creates (not only the last)."""
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        parent = os.path.dirname(d)
        if parent == d:
            raise
        makedirs_private(parent)
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass


def _prepare(d):
    """None if `d` is (now) a usable private directory, else what is wrong with it."""
    for attempt in range(5):
        try:
            return _check(d)
        except FileNotFoundError:     # deleted while we looked at it: make it again
            if attempt == 4:
                raise


def _check(d):
    try:
        makedirs_private(d)
        st = os.stat(d)
    except FileNotFoundError:
        raise
    except OSError as e:
        return f"cannot be created ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None and st.st_uid != uid:
        return (f"is owned by another user (uid {st.st_uid}, you are uid {uid}); a cache "
                "directory must be private, since code is loaded from it")
    if st.st_mode & 0o077:
        try:
            os.chmod(d, 0o700)
        except FileNotFoundError:
            raise
        except OSError as e:
            return f"is accessible to other users and cannot be made private ({e.strerror})"
        if st.st_mode & 0o022:
            _discard_key(d)
            diagnostics.warn(f"transpile: the cache directory {d} was writable by other users "
                             f"(mode {stat.S_IMODE(st.st_mode):04o}); made it private (0700) and "
                             "discarded its signing key, so compiled code found there is "
                             "compiled again, not loaded")
    if d in _CHECKED:
        return None
    try:
        fd, probe = tempfile.mkstemp(dir=d, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
    except FileNotFoundError:
        raise
    except OSError as e:
        return f"is not writable ({e.strerror or e})"
    _CHECKED.add(d)
    return None


# ---- the per-user signing key ----------------------------------------------------------------


def _discard_key(root):
    try:
        os.unlink(os.path.join(root, KEY_NAME))
    except OSError:
        pass


def _read_key(path):
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077 or \
                st.st_size != KEY_BYTES:
            return None
        data = os.read(fd, KEY_BYTES + 1)
        return data if len(data) == KEY_BYTES else None
    finally:
        os.close(fd)


def signing_key(root, create=True):
    """The cache's HMAC key (<root>/.key: ours, mode 0600, 32 bytes); a file that is not
    exactly that is replaced. None if it cannot be read or made."""
    path = os.path.join(root, KEY_NAME)
    for _ in range(3):
        try:
            key = _read_key(path)
            if key is not None:
                return key
            os.unlink(path)          # wrong owner, mode or size: never trust it
        except FileNotFoundError:
            pass
        except OSError:
            return None
        if not create:
            return None
        key = os.urandom(KEY_BYTES)
        try:
            makedirs_private(root)
            # written whole to a private temp file, then linked in: no reader sees a partial
            # key, and of two processes racing, one wins and the other reads the winner's
            fd, tmp = tempfile.mkstemp(dir=root, prefix=".key-")
            try:
                os.write(fd, key)
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                continue
            finally:
                os.unlink(tmp)
        except OSError:
            return None
        return key
    return None


def _mac(key, stem, files):
    body = json.dumps({"entry": stem, "files": files}, sort_keys=True).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def _root_of(path):
    """The cache root of a jit module path (<root>/jit/<name>.py)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(path)))


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
    """The manifest's file hashes, if its MAC checks out with this cache's key; else None."""
    try:
        with open(_manifest_path(path)) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or \
            not isinstance(data.get("files"), dict) or not isinstance(data.get("mac"), str):
        return None
    key = signing_key(_root_of(path), create=False)
    if key is None or not hmac.compare_digest(_mac(key, _stem(path), data["files"]), data["mac"]):
        return None
    return data["files"]


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


@contextlib.contextmanager
def entry_lock(path):
    """Hold an exclusive lock on the entry of `path` across processes (fcntl.flock on
    <name>__<sha>.lock): two processes compiling the same code at once take turns, so the
    second loads what the first compiled and recorded. Best effort: where the lock file cannot
    be made (the cache deleted meanwhile, no fcntl), the work runs unlocked, which is safe (a
    manifest that does not match is dropped by `verify`) but may compile twice."""
    fd = None
    if path:
        try:
            import fcntl
            fd = os.open(os.path.splitext(path)[0] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except (OSError, ImportError):
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)          # (closing releases the lock)


def record(path):
    """Write the signed manifest for Numba's current files of `path` (atomic, private).
    Best effort: if the cache was deleted meanwhile, there is nothing to vouch for."""
    files = entry_files(path)
    if not files:
        return
    key = signing_key(_root_of(path))
    if key is None:
        return
    hashes = {}
    for f in files:
        try:
            os.chmod(f, 0o600)
            hashes[os.path.basename(f)] = _digest(f)
        except OSError:
            return
    data = {"version": VERSION, "files": hashes, "mac": _mac(key, _stem(path), hashes)}
    try:
        write_private(_manifest_path(path), json.dumps(data, indent=1, sort_keys=True))
        os.chmod(_pycache(path), 0o700)
    except OSError:
        pass


def write_private(path, text):
    """Atomic write with mode 0600 (a temp file in the same directory, then os.replace).
    If the directory disappears meanwhile (the cache was deleted), it is made again (0700)."""
    folder = os.path.dirname(path)
    for attempt in range(5):
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        except FileNotFoundError:
            makedirs_private(folder)
            continue
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
            return path
        except FileNotFoundError:
            if attempt == 4:
                raise
            makedirs_private(folder)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    raise OSError(errno.ENOENT, "the cache directory keeps disappearing", folder)


def ensure_file(path, text):
    """Make the file at `path` hold exactly `text`: written if missing, rewritten if it was
    edited or corrupted on disk (so tracebacks and pdb show the code that runs)."""
    try:
        with open(path, "rb") as f:
            if f.read() == text.encode("utf-8"):
                return path
    except OSError:
        pass
    return write_private(path, text)


def source_path(cache_dir, name, text):
    """Where the lowered module lives: content-hashed, so a changed text is a new entry."""
    d = os.path.join(cache_dir, "jit")
    makedirs_private(d)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(d, f"{name}__{digest}.py")
    return ensure_file(path, text)
