"""Parsers for the static checks of docker/: Dockerfile COPY sources, .dockerignore rules, Hadoop site
files and the keys of ShimConfig.java. Small on purpose: each handles what this repository's files use
and fails loudly on anything else."""

from __future__ import annotations

import fnmatch
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIM_CONFIG = ROOT / "yarn-plugin/src/main/java/io/dollymp/yarn/scheduler/ShimConfig.java"


@dataclass(frozen=True)
class Copy:
    line: int
    sources: tuple[str, ...]
    dest: str
    from_stage: str | None


def dockerfile_instructions(path: Path) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[int, str, str]] = []
    buf, start = "", 0
    for no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if buf and line.startswith("#"):
            continue
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.partition(" ")
        out.append((start, word.upper(), rest.strip()))
        buf = ""
    return out


def copies(path: Path) -> list[Copy]:
    """Every COPY/ADD of a Dockerfile (shell form; the exec/JSON form is rejected)."""
    found: list[Copy] = []
    for line, word, args in dockerfile_instructions(path):
        if word not in ("COPY", "ADD"):
            continue
        if args.startswith("["):
            raise ValueError(f"{path}:{line}: JSON-form {word} is not supported by this check")
        parts = args.split()
        flags = [p for p in parts if p.startswith("--")]
        rest = [p for p in parts if not p.startswith("--")]
        stage = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
        found.append(Copy(line, tuple(rest[:-1]), rest[-1], stage))
    return found


def dockerignore_rules(path: Path) -> list[tuple[bool, str]]:
    """(negated, pattern) in file order."""
    rules: list[tuple[bool, str]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        rules.append((neg, line[1:].strip("/") if neg else line.strip("/")))
    return rules


def _matches(pattern: str, rel: str) -> bool:
    if "**" in pattern:
        regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        return re.fullmatch(regex, rel) is not None
    return fnmatch.fnmatchcase(rel, pattern) and rel.count("/") == pattern.count("/")


def ignored(rules: list[tuple[bool, str]], rel: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent folders decides."""
    parts = rel.strip("/").split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for neg, pattern in rules:
        if any(_matches(pattern, p) for p in prefixes):
            verdict = not neg
    return verdict


def site_properties(path: Path) -> dict[str, tuple[str, str]]:
    """name -> (value, description) of a Hadoop *-site.xml; duplicate names are an error."""
    props: dict[str, tuple[str, str]] = {}
    for prop in ET.parse(path).getroot().iter("property"):
        name = (prop.findtext("name") or "").strip()
        if not name:
            raise ValueError(f"{path}: a <property> without <name>")
        if name in props:
            raise ValueError(f"{path}: {name} set twice")
        value = prop.findtext("value")
        if value is None:
            raise ValueError(f"{path}: {name} has no <value>")
        props[name] = (value.strip(), " ".join((prop.findtext("description") or "").split()))
    return props


def shim_keys(source: Path = SHIM_CONFIG) -> dict[str, str | None]:
    """Every key ShimConfig.java reads (``NAME = PREFIX + "..."``) -> its DEFAULT_NAME literal or None."""
    text = source.read_text(encoding="utf-8")
    prefix = re.search(r'String PREFIX = "([^"]+)";', text)
    if prefix is None:
        raise ValueError(f"{source}: no PREFIX constant")
    keys: dict[str, str | None] = {}
    for const, suffix in re.findall(r'static final String (\w+) = PREFIX \+ "([^"]+)";', text):
        default = re.search(rf"static final \w+ DEFAULT_{const} = ([^;]+);", text)
        literal = default.group(1).strip().strip('"') if default else None
        keys[prefix.group(1) + suffix] = literal
    if not keys:
        raise ValueError(f"{source}: no keys found")
    return keys
