"""The ahead-of-time package on disk (docs/package-format.md): a directory holding `manifest.json` (versioned), the
weights (`weights.safetensors`, or `weights.pt` where safetensors is not installed), and per target its code objects
and HIP sources. Writing is atomic (a temporary directory next to the package, renamed into place); reading checks the
format version and every file's size and SHA-256 against the manifest, and names the file at fault.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile

import torch

FORMAT = "hipinductor-package"
VERSION = 1
MANIFEST = "manifest.json"

#: What the manifest says about sizes: every size is fixed when the package is built.
DYNAMIC_SHAPES = ("not supported yet: every input size is fixed at export time (torch.export Dim symbols are "
                  "rejected when the package is built)")


class PackageError(RuntimeError):
    """A package that cannot be read or run here: names the file (or the package) and what is wrong."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- arguments of eager steps and outputs, as JSON ----------------------------------------------------------------

def encode_arg(a, value_name, where: str):
    """A JSON form of an FX argument: values by name ({"value": n}), floats that JSON cannot hold, dtypes, devices
    (always the device the package runs on), layouts and memory formats by name; lists as lists."""
    if value_name(a) is not None:
        return {"value": value_name(a)}
    if a is None or isinstance(a, (bool, int, str)):
        return a
    if isinstance(a, float):
        return a if math.isfinite(a) else {"float": repr(a)}
    if isinstance(a, torch.dtype):
        return {"dtype": str(a).removeprefix("torch.")}
    if isinstance(a, torch.device):
        return {"device": "run"}
    if isinstance(a, torch.layout):
        return {"layout": str(a).removeprefix("torch.")}
    if isinstance(a, torch.memory_format):
        return {"memory_format": str(a).removeprefix("torch.")}
    if isinstance(a, (list, tuple)):
        return [encode_arg(x, value_name, where) for x in a]
    raise PackageError(f"{where}: argument {a!r} of type {type(a).__name__} cannot be stored in a package")


def decode_arg(a, env: dict, device: torch.device):
    """encode_arg's inverse, with values read from `env` and devices set to `device`."""
    if isinstance(a, list):
        return [decode_arg(x, env, device) for x in a]
    if not isinstance(a, dict):
        return a
    if "value" in a:
        return env[a["value"]]
    if "float" in a:
        return float(a["float"])
    if "dtype" in a:
        return getattr(torch, a["dtype"])
    if "device" in a:
        return device
    if "layout" in a:
        return getattr(torch, a["layout"])
    if "memory_format" in a:
        return getattr(torch, a["memory_format"])
    raise PackageError(f"unknown argument form {a!r}")


def resolve_op(name: str):
    """torch.ops.<namespace>.<op>.<overload> for "aten.mm.default"."""
    namespace, op, overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)


def layout_of(t) -> dict:
    """dtype name, sizes, strides and storage offset of a tensor (or fake tensor)."""
    return {"dtype": str(t.dtype).removeprefix("torch."), "sizes": list(t.shape), "strides": list(t.stride()),
            "offset": t.storage_offset()}


def dtype_of(name: str) -> torch.dtype:
    return getattr(torch, name)


# --- writing --------------------------------------------------------------------------------------------------------

class PackageWriter:
    """Collects a package's files in a temporary directory next to `path`; commit() records their sizes and
    checksums in the manifest and renames the directory into place (an existing package at `path` is replaced whole).
    Leaving without commit() removes everything written."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        parent = os.path.dirname(self.path)
        os.makedirs(parent, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(self.path)}.tmp-", dir=parent)
        self.files: dict[str, dict] = {}

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if os.path.isdir(self.tmp):
            shutil.rmtree(self.tmp, ignore_errors=True)

    def add(self, relative: str, data: bytes) -> str:
        """Writes `data` as `relative` (once: content-named files shared by several segments are written once)."""
        if relative not in self.files:
            full = os.path.join(self.tmp, relative)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
            self.files[relative] = {"size": len(data), "sha256": sha256_of(data)}
        return relative

    def add_file(self, relative: str, write) -> str:
        """A file written by `write(full_path)` (the weights' writers take a path)."""
        full = os.path.join(self.tmp, relative)
        write(full)
        with open(full, "rb") as f:
            data = f.read()
        self.files[relative] = {"size": len(data), "sha256": sha256_of(data)}
        return relative

    def commit(self, manifest: dict) -> None:
        """Adds `files` to `manifest`, writes it and publishes the package."""
        manifest["files"] = self.files
        with open(os.path.join(self.tmp, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        for root, _, names in os.walk(self.tmp):
            for name in names:
                with open(os.path.join(root, name), "rb") as f:
                    os.fsync(f.fileno())
        old = None
        if os.path.lexists(self.path):
            old = tempfile.mkdtemp(prefix=f".{os.path.basename(self.path)}.old-", dir=os.path.dirname(self.path))
            os.rename(self.path, os.path.join(old, "package"))
        os.rename(self.tmp, self.path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


# --- reading --------------------------------------------------------------------------------------------------------

def read_manifest(path: str) -> dict:
    """The manifest of the package at `path`, its format and version checked. Raises PackageError naming the file."""
    if not os.path.isdir(path):
        raise PackageError(f"{path}: not a hipinductor package (packages are directories holding {MANIFEST})")
    file = os.path.join(path, MANIFEST)
    try:
        with open(file, "rb") as f:
            manifest = json.loads(f.read())
    except FileNotFoundError:
        raise PackageError(f"{file}: missing; {path} is not a hipinductor package") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise PackageError(f"{file}: corrupt or truncated package manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise PackageError(f"{file}: not a hipinductor package manifest (format {manifest.get('format')!r})"
                           if isinstance(manifest, dict) else f"{file}: not a hipinductor package manifest")
    if manifest.get("version") != VERSION:
        raise PackageError(f"{file}: package format version {manifest.get('version')!r} (written by hipinductor "
                           f"{manifest.get('hipinductor', '?')}); this hipinductor reads version {VERSION}: rebuild "
                           "the package with it")
    return manifest


def read_file(path: str, manifest: dict, relative: str) -> bytes:
    """A file of the package, checked against the manifest's size and SHA-256."""
    full = os.path.join(path, relative)
    expected = manifest.get("files", {}).get(relative)
    if expected is None:
        raise PackageError(f"{full}: not listed in the package manifest")
    try:
        with open(full, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PackageError(f"{full}: cannot be read ({e.strerror})") from None
    if len(data) != expected["size"]:
        raise PackageError(f"{full}: truncated or corrupt: {len(data)} bytes, the manifest says {expected['size']}")
    if sha256_of(data) != expected["sha256"]:
        raise PackageError(f"{full}: corrupt: its SHA-256 differs from the manifest's")
    return data
