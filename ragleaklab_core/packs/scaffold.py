"""``ragleaklab new-pack``: write a complete, installable pack distribution from templates.

The templates are package data (``ragleaklab_core/packs/templates/new_pack/``, read with
importlib.resources, so they work from a wheel). Each file's ``{{token}}`` placeholders are
replaced with the names derived from the pack's name; a ``.tmpl`` suffix is dropped and the
``package`` directory takes the import package's name. The result is written to a temporary
directory next to its destination and renamed into place, so a failure leaves nothing behind.
"""

from __future__ import annotations

import importlib.resources
import re
import secrets
import shutil
from importlib.resources.abc import Traversable
from pathlib import Path

from attrs import frozen

from ragleaklab_core._version import __version__
from ragleaklab_core.errors import InputError

#: A pack name new-pack accepts: lowercase words of letters and digits joined by single hyphens,
#: starting with a letter (so the import package ``ragleaklab_<name>`` is an identifier).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
#: Longest accepted name.
MAX_NAME_LENGTH = 50
#: Names whose import package would shadow ragleaklab's own.
RESERVED_NAMES = frozenset({"core", "plugins"})

_TEMPLATES = ("templates", "new_pack")
_TOKEN = re.compile(r"\{\{(\w+)\}\}")
_PACKAGE_DIR = "package"
_SUFFIX = ".tmpl"


@frozen
class PackNames:
    """Every name a new pack's distribution uses, derived from the pack's name.

    Attributes:
        name: The pack's name: the entry-point name and the manifest's ``name`` (``acme-demo``).
        distribution: The pip distribution (``ragleaklab-acme-demo``).
        package: The import package that holds the pack's data (``ragleaklab_acme_demo``).
        class_name: The ``ManifestPack`` subclass the entry point names (``AcmeDemoPack``).
    """

    name: str
    distribution: str
    package: str
    class_name: str

    @classmethod
    def of(cls, name: str) -> PackNames:
        """The names for pack *name*, which must be a valid new pack name.

        Raises:
            InputError: *name* is not lowercase ``[a-z0-9-]`` starting with a letter, or is
                reserved.
        """
        check_pack_name(name)
        return cls(
            name=name,
            distribution=f"ragleaklab-{name}",
            package="ragleaklab_" + name.replace("-", "_"),
            class_name="".join(part.capitalize() for part in name.split("-")) + "Pack",
        )

    def tokens(self) -> dict[str, str]:
        """The template placeholders and their values."""
        release = re.match(r"\d+(?:\.\d+)*", __version__)
        return {
            "name": self.name,
            "distribution": self.distribution,
            "package": self.package,
            "class_name": self.class_name,
            # The testing kit the generated tests use ships from this version on.
            "ragleaklab_version": release.group() if release else "0.1",
        }


def check_pack_name(name: str) -> None:
    """Raise :class:`InputError` unless *name* can name a new pack.

    .. versionadded:: 0.1
    """
    if len(name) > MAX_NAME_LENGTH:
        raise InputError(
            f"invalid pack name {name!r}: at most {MAX_NAME_LENGTH} characters, got {len(name)}"
        )
    if not NAME_PATTERN.fullmatch(name):
        raise InputError(
            f"invalid pack name {name!r}: use lowercase letters, digits and single hyphens, "
            "starting with a letter (for example acme-demo)"
        )
    if name in RESERVED_NAMES:
        raise InputError(
            f"invalid pack name {name!r}: its package ragleaklab_{name} would shadow ragleaklab's"
        )


def _template_root() -> Traversable:
    return importlib.resources.files("ragleaklab_core.packs").joinpath(*_TEMPLATES)


def _walk(node: Traversable, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """Every template file under *node* as (relative parts, text), sorted by path."""
    out: list[tuple[tuple[str, ...], str]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        parts = (*prefix, child.name)
        if child.is_dir():
            out.extend(_walk(child, parts))
        else:
            out.append((parts, child.read_text(encoding="utf-8")))
    return out


def render(text: str, tokens: dict[str, str], *, source: str = "<template>") -> str:
    """*text* with every ``{{token}}`` replaced; an unknown token is an error, never left in."""

    def replace(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in tokens:
            raise InputError(f"unknown template token {{{{{key}}}}}", source=source)
        return tokens[key]

    return _TOKEN.sub(replace, text)


def pack_files(names: PackNames) -> list[tuple[str, str]]:
    """The new distribution's files as (path relative to its directory, text), sorted.

    .. versionadded:: 0.1
    """
    tokens = names.tokens()
    files = []
    for parts, text in _walk(_template_root()):
        out = [names.package if p == _PACKAGE_DIR and i == 0 else p for i, p in enumerate(parts)]
        if out[-1].endswith(_SUFFIX):
            out[-1] = out[-1][: -len(_SUFFIX)]
        files.append(("/".join(out), render(text, tokens, source="/".join(parts))))
    return sorted(files)


def new_pack(name: str, directory: Path) -> tuple[Path, list[str]]:
    """Write the distribution ``ragleaklab-<name>`` in *directory* and return it and its files.

    *directory* is created if missing. The distribution's directory must not exist: nothing is
    ever overwritten.

    Raises:
        InputError: Bad name, the destination exists, or a file cannot be written.

    .. versionadded:: 0.1
    """
    names = PackNames.of(name)
    target = directory / names.distribution
    if target.exists() or target.is_symlink():
        raise InputError(
            "already exists; refusing to overwrite it (choose another --dir or remove it)",
            source=target.as_posix(),
        )
    files = pack_files(names)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Not tempfile.mkdtemp: its directory is private (0o700); this one follows the umask.
        staging = directory / f".{names.distribution}.{secrets.token_hex(6)}.partial"
        staging.mkdir()
    except OSError as exc:
        raise InputError(
            f"cannot write: {exc.strerror or exc}", source=directory.as_posix()
        ) from None
    try:
        for rel, text in files:
            path = staging.joinpath(*rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        if target.exists():  # appeared meanwhile: rename() would replace an empty directory
            raise FileExistsError(target)
        staging.rename(target)
    except FileExistsError:
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(
            "already exists; refusing to overwrite it", source=target.as_posix()
        ) from None
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target.as_posix()) from None
    return target, [rel for rel, _text in files]


__all__ = [
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "RESERVED_NAMES",
    "PackNames",
    "check_pack_name",
    "new_pack",
    "pack_files",
    "render",
]
