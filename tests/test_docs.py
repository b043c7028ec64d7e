"""The manual in docs/ is true to the code: every option, ini key, configuration key,
command, hook and marker the code declares is documented where a reader looks for it,
nothing the docs name is missing from the code, the YAML examples validate, and every
link (from the docs, and from the code's own citations of the docs) reaches a page and
a heading that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "pytest_summarybench"
#: Every Markdown file a reader of the repository meets, the manual's pages first.
PAGES = sorted(DOCS.glob("*.md")) + [p for p in (ROOT / "README.md", ROOT / "CONTRIBUTING.md",
                                                  ROOT / "CHANGELOG.md") if p.is_file()]


def _text(*names: str) -> str:
    return "\n".join((DOCS / name).read_text(encoding="utf-8") for name in names)


def _all_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PAGES)


# -- options, ini keys and configuration keys: docs/configuration.md ---------------------

def _declared_options() -> set[str]:
    source = (PACKAGE / "plugin" / "__init__.py").read_text(encoding="utf-8")
    return set(re.findall(r'addoption\(\s*"(--sb-[a-z-]+)"', source))


def test_every_option_is_documented_in_the_configuration_page() -> None:
    declared = _declared_options()
    assert len(declared) >= 16
    documented = set(re.findall(r"`(--sb-[a-z-]+)", _text("configuration.md")))
    assert declared - documented == set(), "options missing from docs/configuration.md"


def test_every_option_the_docs_name_exists() -> None:
    named = set(re.findall(r"(--sb-[a-z]+(?:-[a-z]+)*)", _all_text()))
    assert named - _declared_options() == set(), "options the docs name but the plugin lacks"


def test_every_ini_key_is_documented_and_exists() -> None:
    source = (PACKAGE / "plugin" / "__init__.py").read_text(encoding="utf-8")
    declared = set(re.findall(r'addini\(\s*"(summarybench_[a-z_]+)"', source))
    assert declared
    documented = set(re.findall(r"`(summarybench_[a-z_]+)`", _text("configuration.md")))
    named = set(re.findall(r"\b(summarybench_(?:config|codebase|output|models|sample_size|"
                           r"seed|[a-z]+_[a-z_]+))\b", _all_text())) - {"summarybench_compliance"}
    assert declared - documented == set(), "ini keys missing from docs/configuration.md"
    assert named - declared == set(), "ini keys the docs name but the plugin lacks"


def _keys(path: tuple[str, ...] = ()) -> tuple[set[str], set[str]]:
    """(leaf keys, section keys) under ``path`` of summarybench.yaml, dotted, in camelCase:
    the tree the loader's "did you mean" walks (``settings._fields_at``)."""
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.settings import _fields_at, settings_model

    model = settings_model(BUILTIN_FAMILIES)
    leaves: set[str] = set()
    sections: set[str] = set()
    for alias, _name in _fields_at(path, model) or []:
        key = (*path, alias)
        if _fields_at(key, model) is None:
            leaves.add(".".join(key))
        else:
            sections.add(".".join(key))
            more, subsections = _keys(key)
            leaves |= more
            sections |= subsections
    return leaves, sections


def _settings_keys() -> tuple[set[str], set[str], set[str]]:
    """(keys written with their path, model entry keys, section keys) of summarybench.yaml.

    The keys of one entry of ``models.test`` / ``models.judge`` are documented once, in
    the page's "Model entries" table, by their own name; ``baseDir`` is set by the loader,
    not written in the file."""
    leaves, sections = _keys()
    entry = {k.removeprefix("models.test.") for k in leaves | sections
             if k.startswith("models.test.")}
    in_models = {k for k in leaves | sections if k.startswith(("models.test.", "models.judge."))}
    return ((leaves - in_models) - {"baseDir"}, entry,
            (sections - in_models) | {"models.test", "models.judge"})


def test_every_configuration_key_is_documented() -> None:
    leaves, entry, _ = _settings_keys()
    assert {"evaluation.judge.minJudges", "gate.maxRegression", "weights.judge"} <= leaves
    page = _text("configuration.md")
    documented = set(re.findall(r"^\| `([A-Za-z0-9.]+)` \|", page, re.M))
    assert leaves - documented == set(), "keys missing from docs/configuration.md"
    entries = page.split("### Model entries", 1)[1].split("\n### ", 1)[0]
    assert entry - set(re.findall(r"`([A-Za-z.]+)`", entries)) == set(), \
        "model entry keys missing from docs/configuration.md"


def test_every_configuration_key_the_docs_name_exists() -> None:
    leaves, entry, sections = _settings_keys()
    known = leaves | sections
    top = "|".join(sorted({k.split(".")[0] for k in sections}))
    named = set(re.findall(rf"`((?:{top})\.[A-Za-z0-9.]*[A-Za-z0-9])[`\s:]", _all_text()))
    # A family's own section or weight is written with a placeholder (``weights.<family>``)
    # or as an example of a custom family's key.
    unknown = {k for k in named if k not in known and not k.startswith("weights.brevity")
               and k.rsplit(".", 1)[-1] not in ("py", "md", "json", "yaml")}
    assert unknown == set(), "keys the docs name that summarybench.yaml does not accept"


def _yaml_blocks() -> list[tuple[str, str]]:
    return [(page.name, block) for page in PAGES
            for block in re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"),
                                    re.S)]


@pytest.mark.parametrize("page, block", _yaml_blocks(),
                         ids=[f"{p}-{i}" for i, (p, _) in enumerate(_yaml_blocks())])
def test_every_yaml_example_validates(page: str, block: str, tmp_path: Path) -> None:
    from pytest_summarybench.cli._common import cli_families
    from pytest_summarybench.settings import load_settings

    path = tmp_path / "summarybench.yaml"
    path.write_text(block, encoding="utf-8")
    # As the command line checks a file: the built-in families, and a stand-in for a
    # family a plugin declares (architecture.md's example; tests/evaluators/test_custom_family.py
    # runs it with its declaration).
    load_settings(path, families=cli_families(path))  # raises SettingsError naming the key


def test_the_yaml_examples_name_models_litellm_lists() -> None:
    """A newcomer copying an example must not be told the model may be misspelt."""
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.llm.catalogue import unlisted_warning
    from pytest_summarybench.settings import load_settings

    checked = 0
    for _page, block in _yaml_blocks():
        import yaml

        data = yaml.safe_load(block) or {}
        if "models" not in data:
            continue
        settings = load_settings(None, {"models": data["models"]}, families=BUILTIN_FAMILIES)
        for model in settings.test_models() + settings.judge_models():
            checked += 1
            assert unlisted_warning(model) is None, model.id
    assert checked


# -- commands, markers and hooks ----------------------------------------------------------

def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    from pytest_summarybench.cli import SUBCOMMANDS, extension_commands

    # The built-in commands, and those the installed distributions add (compliance's).
    commands = set(SUBCOMMANDS) | set(extension_commands())
    documented = set(re.findall(r"`summarybench ([a-z][a-z-]+)", _text("cli.md")))
    assert commands - documented == set(), "commands missing from docs/cli.md"
    # In code: at the start of a line of a code block, or of an inline code span.
    named = set(re.findall(r"(?:^|`)summarybench ([a-z][a-z-]+)", _all_text(), re.M))
    assert named - commands == set(), "commands the docs name that do not exist"


def test_every_marker_is_documented() -> None:
    from pytest_summarybench.core.vocabulary import VALIDATE
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES

    page = _text("cli.md")
    markers = [*(f.name for f in BUILTIN_FAMILIES), VALIDATE]
    assert [m for m in markers if f"`{m}`" not in page] == []


def test_every_hook_is_documented_and_every_documented_hook_exists() -> None:
    from pytest_summarybench.plugin import hookspecs

    declared = {n for n in dir(hookspecs) if n.startswith("pytest_summarybench_")}
    assert len(declared) >= 4
    documented = set(re.findall(r"`(pytest_summarybench_[a-z_]+)", _text("architecture.md")))
    assert declared - documented == set(), "hooks missing from docs/architecture.md"
    named = set(re.findall(r"\b(pytest_summarybench_[a-z_]+)\b", _all_text()))
    assert named - declared == set(), "hooks the docs name that do not exist"


def test_every_provider_is_documented() -> None:
    from pytest_summarybench.core.vocabulary import PROVIDERS

    page = _text("hosts.md")
    assert [p for p in PROVIDERS if f"| `{p}` |" not in page] == []


# -- links ----------------------------------------------------------------------------------

def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading.strip().lower())
    return re.sub(r"[^a-z0-9 -]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _check_target(source: Path, target: str) -> str | None:
    """Why ``target`` (a relative link from ``source``) leads nowhere; None when it lands."""
    path, _, anchor = target.partition("#")
    page = (source.parent / path).resolve() if path else source
    if not page.exists():
        return f"{source.relative_to(ROOT)}: {target}: no such file"
    if anchor and page.suffix == ".md" and anchor not in _anchors(page):
        return f"{source.relative_to(ROOT)}: {target}: no heading #{anchor}"
    return None


def test_every_link_between_pages_lands() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            why = _check_target(page, target)
            if why:
                broken.append(why)
    assert broken == []


#: Paths the docs name that exist only in a built package.
BUILT_ONLY = {"pytest_summarybench/_sample/"}


def test_every_path_the_docs_name_exists() -> None:
    """A path in code spans that starts at the repository's top (``tests/``,
    ``benchmarks/``...) or at a folder of the package (``llm/limits.py``) exists; a
    ``module.attribute`` ending (``core/vocabulary.Provider``) names an existing module."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir()}
    tops = {"pytest_summarybench", "tests", "benchmarks", "fixtures", "docs", ".ci",
            "compliance"}
    missing = []
    for page in PAGES:
        for path in re.findall(r"`([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*)`",
                               page.read_text(encoding="utf-8")):
            if path.split("/")[0] not in folders | tops or path in BUILT_ONLY:
                continue
            module = re.sub(r"\.[A-Za-z_]\w*$", ".py", path)
            if not any((base / p).exists() for base in (ROOT, PACKAGE)
                       for p in (path, module)):
                missing.append(f"{page.name}: {path}")
    assert missing == []


def test_every_doc_the_code_cites_exists_with_its_heading() -> None:
    """Code cites the manual as ``docs/PAGE.md#anchor``: the page and the heading exist."""
    broken = []
    cited = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for target in re.findall(r"\bdocs/([a-z0-9-]+\.md(?:#[a-z0-9-]+)?)",
                                 path.read_text(encoding="utf-8")):
            cited += 1
            why = _check_target(DOCS / "index", target)
            if why:
                broken.append(f"{path.relative_to(ROOT)}: {why}")
    assert cited
    assert broken == []
