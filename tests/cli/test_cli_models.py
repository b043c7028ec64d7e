"""``add-model``, ``add-judge`` and ``config`` (issue 21 items 6 and 11): each entry lands
in its own list with the file's comments in place, and the commands warn at once about a
judge of a tested model's family and a hosted model name litellm does not list (warnings,
never refusals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings


def _warnings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # A warning is its line and the indented lines that continue it.
    found: list[str] = []
    for line in err.splitlines():
        if ": warning: " in line:
            found.append(line)
        elif line.startswith("  ") and found:
            found[-1] += "\n" + line
    return found


def test_new_models_go_into_their_list_with_comments_in_place(project: Path) -> None:
    """The issue: the second add-model landed under the ``# Judges`` comment."""
    cfg = project / "summarybench.yaml"
    for argv in (["add-model", "openai/gpt-4o"], ["add-model", "anthropic/claude-sonnet-4-5"],
                 ["add-judge", "google/gemini-2.5-pro"], ["add-judge", "openai/o3"],
                 ["add-model", "builtin/docstring"]):
        assert main(argv) == 0
    text = cfg.read_text()
    lines = text.splitlines()
    judges_comment = next(i for i, s in enumerate(lines) if s.strip().startswith("# Judges"))
    assert lines[judges_comment + 1] == "  judge:"
    # every model under test above the comment, every judge below it
    for name in ("gpt-4o", "claude-sonnet-4-5", "docstring"):
        assert lines.index(f"      model: {name}") < judges_comment
    for name in ("gemini-2.5-pro", "o3"):
        assert lines.index(f"      model: {name}") > judges_comment
    # the blank line before the next section stays after the last judge
    o3 = lines.index("      model: o3")
    assert lines[o3 + 1] == "" and lines[o3 + 2] == "evaluation:"
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert [m.id for m in settings.models.test] == [
        "openai/gpt-4o", "anthropic/claude-sonnet-4-5", "builtin/docstring"]
    assert [m.id for m in settings.models.judge] == ["google/gemini-2.5-pro", "openai/o3"]


def test_an_end_of_line_comment_stays_with_its_entry(project: Path) -> None:
    cfg = project / "summarybench.yaml"
    assert main(["add-model", "openai/gpt-4o"]) == 0
    cfg.write_text(cfg.read_text().replace("model: gpt-4o", "model: gpt-4o  # the baseline"))
    assert main(["add-model", "openai/gpt-4o-mini"]) == 0
    lines = cfg.read_text().splitlines()
    i = lines.index("      model: gpt-4o  # the baseline")
    assert lines[i + 1:i + 4] == ["    - provider: openai", "      model: gpt-4o-mini",
                                  "  # Judges (`summarybench add-judge PROVIDER/MODEL`); "
                                  "never of a tested model's family."]


def test_a_judge_of_a_tested_family_is_flagged_at_once(project: Path, capsys) -> None:
    """The issue's flow: add-judge openai/fake-judge beside openai/* models was silent."""
    url = "http://127.0.0.1:9/v1"  # a custom endpoint: no model-list warning
    assert main(["add-model", "openai/fake-alpha", "--api-endpoint", url]) == 0
    assert main(["add-model", "openai/fake-beta", "--api-endpoint", url]) == 0
    capsys.readouterr()
    assert main(["add-judge", "openai/fake-judge", "--api-endpoint", url]) == 0
    [warning] = _warnings(capsys)
    assert warning.startswith("summarybench add-judge: warning: judge openai/fake-judge is "
                              "of the openai family (taken from its provider")
    assert "openai/fake-alpha, openai/fake-beta: it will judge none of them" in warning
    assert "summarybench set-model openai/fake-judge --family NAME" in warning
    assert "summarybench add-judge anthropic/claude-sonnet-4-5" in warning
    # config re-checks the whole file
    assert main(["config", "--sample-size", "5"]) == 0
    [again] = _warnings(capsys)
    assert again.startswith("summarybench config: warning: judge openai/fake-judge")
    # a model added later is checked against the judges already there
    assert main(["add-model", "openai/fake-gamma", "--api-endpoint", url]) == 0
    [later] = _warnings(capsys)
    assert "openai/fake-gamma" in later and "it will judge none of them" in later


def test_the_advice_names_a_judge_already_there_not_one_to_add(project: Path,
                                                               capsys) -> None:
    # A new user's pass: with anthropic/claude-sonnet-4-5 already a judge, adding an openai
    # judge beside openai models advised "add-judge anthropic/claude-sonnet-4-5".
    url = "http://127.0.0.1:9/v1"
    assert main(["add-model", "openai/fake-alpha", "--api-endpoint", url]) == 0
    assert main(["add-judge", "anthropic/claude-sonnet-4-5"]) == 0
    capsys.readouterr()
    assert main(["add-judge", "openai/fake-judge", "--api-endpoint", url]) == 0
    [warning] = _warnings(capsys)
    assert "it will judge none of them" in warning
    assert "Judge anthropic/claude-sonnet-4-5 will judge it; or, if its family is wrong" \
        in warning
    assert "summarybench add-judge anthropic/claude-sonnet-4-5" not in warning


def test_family_option_writes_family_and_settles_the_rule(project: Path, capsys) -> None:
    cfg = project / "summarybench.yaml"
    url = "http://127.0.0.1:9/v1"
    assert main(["add-model", "openai/fake-alpha", "--api-endpoint", url]) == 0
    capsys.readouterr()
    assert main(["add-judge", "openai/local-llama-judge", "--api-endpoint", url,
                 "--family", "Meta"]) == 0
    assert _warnings(capsys) == []
    [judge] = load_settings(cfg, families=BUILTIN_FAMILIES).models.judge
    assert judge.family == "meta"
    assert main(["config", "--seed", "3"]) == 0
    assert _warnings(capsys) == []
    assert main(["add-judge", "openai/x", "--family", "two words"]) == 2
    assert "--family 'two words': expected one word" in capsys.readouterr().err


def test_a_family_key_in_any_case_is_the_tables_family(project: Path, capsys) -> None:
    """``family: OpenAI`` must not slip past the rule against openai models."""
    cfg = project / "summarybench.yaml"
    assert main(["add-model", "openai/gpt-4o"]) == 0
    text = cfg.read_text().replace(
        "  judge: []", "  judge:\n    - provider: google\n      model: gemini-2.5-pro\n"
                       "      family: OpenAI")
    cfg.write_text(text)
    capsys.readouterr()
    assert main(["config", "--seed", "1"]) == 0
    [warning] = _warnings(capsys)
    assert "judge google/gemini-2.5-pro is of the openai family (set by its family: key)" \
        in warning


@pytest.mark.parametrize(("spec", "suggestion"), [
    ("openai/gtp-4o", "openai/gpt-4o"),
    ("anthropic/claude-sonet-4-5", "anthropic/claude-sonnet-4-5"),
    ("google/gemni-2.5-pro", "google/gemini-2.5-pro"),
])
def test_a_misspelt_hosted_model_is_kept_with_did_you_mean(project: Path, capsys,
                                                           spec: str, suggestion: str) -> None:
    assert main(["add-model", spec]) == 0  # a warning, never a refusal
    [warning] = _warnings(capsys)
    assert f"{spec} is not in litellm's model list" in warning
    assert f"did you mean {suggestion}?" in warning
    assert "It is kept, as a new model may not be listed yet" in warning
    assert spec.split("/", 1)[1] in (project / "summarybench.yaml").read_text()
    # config checks names written by hand too
    assert main(["config", "--seed", "2"]) == 0
    assert any(f"did you mean {suggestion}?" in w for w in _warnings(capsys))


@pytest.mark.parametrize("argv", [
    ["add-model", "openai/gpt-4o"],                                   # listed
    ["add-model", "openai/my-finetune", "--api-endpoint", "http://127.0.0.1:9/v1"],
    ["add-model", "local/acme-7b", "--api-endpoint", "http://127.0.0.1:9/v1"],
    ["add-model", "ollama/llama3.1"],
    ["add-model", "builtin/docstring"],
    ["add-model", "openai/ft:gpt-4o-mini:acme::abc123"],              # fine-tuned
    ["add-judge", "anthropic/claude-sonnet-4-5"],
])
def test_no_name_warning_where_nothing_can_be_checked(project: Path, capsys,
                                                      argv: list[str]) -> None:
    assert main(argv) == 0
    assert _warnings(capsys) == []


@pytest.mark.parametrize("command", ["add-judge", "add-model"])
def test_help_names_the_family_option(capsys, command: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--family NAME" in text and "family:" in text
    assert "never judges a model of its own family" in text


@pytest.mark.slow
def test_the_issue_flow_skip_line_is_short_and_valid(tmp_path: Path) -> None:
    """The flow issue 21 tried, as subprocesses: two openai/* models and the judge
    openai/fake-judge on a fake server; ``evaluate`` skips the judge family in one short
    line that counts one judge and suggests a judge of another family."""
    import os
    import re
    import subprocess
    import sys

    from tests.fakes.openai_server import FakeOpenAIServer

    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "tax.py").write_text(
        "def add_vat(net, rate=0.2):\n    gross = net * (1 + rate)\n    return round(gross, 2)\n")
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def sb(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    with FakeOpenAIServer() as server:
        url = server.base_url
        sb("init", "--name", "issue 21", "--codebase", "code")
        sb("add-model", "openai/fake-alpha", "--api-endpoint", url)
        sb("add-model", "openai/fake-beta", "--api-endpoint", url)
        added = sb("add-judge", "openai/fake-judge", "--api-endpoint", url)
        assert "warning: judge openai/fake-judge is of the openai family" in added.stderr
        sb("config", "--eval", "judge", "--sample-size", "3")
        out = sb("evaluate", "--all", "--", "-rs").stdout
    [line] = [s for s in out.splitlines() if "judge/pointwise" in s]
    part = re.search(r"judge/pointwise.*?in models\.judge", line)
    assert part is not None, line
    assert len(part.group(0)) <= 200, part.group(0)
    assert "openai/fake-judge (openai) may not judge its own family's models" in line
    assert "asked" not in line
    assert "--sb-judge openai/" not in out and "--sb-judge anthropic/" in line


def test_the_help_and_doc_examples_draw_no_name_warning() -> None:
    """A newcomer copying an example must not be told the model may be misspelt."""
    import re

    from pytest_summarybench.llm.catalogue import unlisted_warning
    from pytest_summarybench.roles.advice import SUGGESTED_JUDGES
    from pytest_summarybench.schemas import ModelConfig

    root = Path(__file__).resolve().parents[2]
    docs = "".join(p.read_text() for p in (root / "README.md", *sorted(root.glob("docs/*.md"))))
    examples = re.findall(r"summarybench add-(?:model|judge) ([a-z]+/[A-Za-z0-9.:_-]+)\b",
                          docs)
    assert examples
    for spec in {*examples, *SUGGESTED_JUDGES, "openai/gpt-4o",
                 "anthropic/claude-sonnet-4-5"}:
        assert unlisted_warning(ModelConfig.parse(spec)) is None, spec


# -- issue 33: the CLI edits what it writes ----------------------------------------------
def test_set_and_remove_entries_keep_the_file_s_comments(project: Path, capsys) -> None:
    cfg = project / "summarybench.yaml"
    url = "http://127.0.0.1:9/v1"
    for argv in (["add-model", "openai/fake-alpha", "--api-endpoint", url],
                 ["add-model", "openai/fake-beta", "--api-endpoint", url],
                 ["add-judge", "openai/fake-judge", "--api-endpoint", url]):
        assert main(argv) == 0
    [advice] = [w for w in _warnings(capsys) if "judge openai/fake-judge" in w]
    command = advice[advice.index("`summarybench set-model"):].split("`")[1]
    # The advice works when followed, NAME replaced by a family.
    assert command == "summarybench set-model openai/fake-judge --family NAME"
    assert main([*command.split()[1:-1], "gamma"]) == 0
    assert not [w for w in _warnings(capsys) if "family" in w]
    assert main(["set-model", "openai/fake-beta", "--api-endpoint", "none",
                 "--api-key-env", "BETA_KEY", "--temperature", "0.1"]) == 0
    assert main(["remove-model", "openai/fake-alpha"]) == 0
    lines = cfg.read_text().splitlines()
    start = lines.index("  test:")
    assert lines[start:lines.index("evaluation:") + 1] == [
        "  test:", "    - provider: openai", "      model: fake-beta",
        "      apiKeyEnv: BETA_KEY", "      temperature: 0.1",
        "  # Judges (`summarybench add-judge PROVIDER/MODEL`); never of a tested model's "
        "family.", "  judge:", "    - provider: openai", "      model: fake-judge",
        f"      apiEndpoint: {url}", "      family: gamma", "", "evaluation:"]
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    [beta] = settings.models.test
    assert (beta.id, beta.api_endpoint, beta.api_key_env, beta.temperature) == (
        "openai/fake-beta", None, "BETA_KEY", 0.1)
    assert settings.models.judge[0].family == "gamma"
    # The last ones removed: the lists are empty, the comments still where they were.
    assert main(["remove-model", "openai/fake-beta"]) == 0
    assert main(["remove-judge", "openai/fake-judge"]) == 0
    lines = cfg.read_text().splitlines()
    i = lines.index("  test: []")
    assert lines[i + 1].startswith("  # Judges") and lines[i + 2] == "  judge: []"
    assert lines[i + 3:i + 5] == ["", "evaluation:"]
    assert main(["remove-judge", "openai/nobody"]) == 2
    assert "openai/nobody is not in models.judge" in capsys.readouterr().err


def test_built_in_names_are_checked_where_they_are_added(project: Path, capsys) -> None:
    assert main(["add-model", "builtin/docstrin"]) == 2
    err = capsys.readouterr().err
    assert "builtin/docstrin is not a built-in summarizer: did you mean builtin/docstring?" \
        in err
    assert main(["add-judge", "builtin/docstring"]) == 2
    assert "built-in summarizers cannot judge" in capsys.readouterr().err
    assert "model: docstrin\n" not in (project / "summarybench.yaml").read_text()


def test_adding_an_entry_twice_points_at_set_model(project: Path, capsys) -> None:
    assert main(["add-judge", "openai/gpt-4o"]) == 0
    capsys.readouterr()
    assert main(["add-judge", "openai/gpt-4o", "--family", "acme"]) == 2
    assert ("change its entry with `summarybench set-model openai/gpt-4o --family NAME`"
            in capsys.readouterr().err)


def test_config_sets_the_task_model_tasks_and_contrastive_methods(project: Path) -> None:
    cfg = project / "summarybench.yaml"
    assert main(["config", "--task-model", "local/task-7b", "--task-endpoint",
                 "http://127.0.0.1:8000/v1", "--tasks", "function_selection,completion",
                 "--contrastive-methods", "embedding,llm"]) == 0
    text = cfg.read_text()
    assert "    methods: [embedding, llm]" in text
    assert "    tasks: [function_selection, completion]" in text
    ds = load_settings(cfg, families=BUILTIN_FAMILIES).evaluation.downstream
    assert (ds.completion_model, ds.api_endpoint) == ("local/task-7b",
                                                      "http://127.0.0.1:8000/v1")
    assert "# How evaluator families combine" in text            # comments kept
    assert main(["config", "--task-model", "none"]) == 0
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert settings.evaluation.downstream.completion_model is None
    assert main(["config", "--contrastive-methods", "embedding,bm25"]) == 2


def test_a_model_at_a_local_endpoint_needs_no_key(project: Path, capsys,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.cli._common import check_keys
    from pytest_summarybench.llm.providers import connection_kwargs

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["add-model", "openai/qwen-coder", "--api-endpoint",
                 "http://localhost:8080/v1"]) == 0
    assert "will need the environment variable" not in capsys.readouterr().err
    settings = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES)
    check_keys(settings)                                    # no error
    [model] = settings.test_models()
    assert connection_kwargs(model)["api_key"] == "sk-no-key-required"
    # ... unless the configuration names a key variable.
    assert main(["set-model", "openai/qwen-coder", "--api-key-env", "QWEN_KEY"]) == 0
    assert "will need the environment variable QWEN_KEY" in capsys.readouterr().err
    monkeypatch.setenv("QWEN_KEY", "sk-qwen-0123456789")
    [model] = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES).test_models()
    assert connection_kwargs(model)["api_key"] == "sk-qwen-0123456789"
    # A hosted endpoint still needs the provider's key.
    assert main(["add-model", "openai/gpt-4o"]) == 0
    assert "will need the environment variable OPENAI_API_KEY" in capsys.readouterr().err


def test_the_hosted_name_check_reads_the_catalogue_without_importing_litellm() -> None:
    """Each add-model of a hosted name took 17-20 s: it imported litellm for a look-up."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from pytest_summarybench.cli.checks import name_warnings\n"
            "from pytest_summarybench.schemas import ModelConfig\n"
            "[w] = name_warnings([ModelConfig.parse('openai/gtp-4o')])\n"
            "assert 'did you mean openai/gpt-4o?' in w, w\n"
            "assert not name_warnings([ModelConfig.parse('openai/gpt-4o')])\n"
            "assert 'litellm' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_task_model_of_the_tested_models_family_is_flagged_and_skips_the_family(
        project: Path, capsys) -> None:
    """Issue 33's pass on click: `config --task-model openai/task-model` beside two openai
    models under test was accepted in silence, and the run said only "skipped downstream:
    no evaluator of this family recorded a score" (each item skipped itself)."""
    from pytest_summarybench.evaluators.downstream.function_selection import (
        FunctionSelectionEvaluator,
    )
    from pytest_summarybench.roles.task import task_model

    url = "http://127.0.0.1:8000/v1"
    for name in ("good-coder", "lazy-coder"):
        assert main(["add-model", f"openai/{name}", "--api-endpoint", url]) == 0
    capsys.readouterr()
    assert main(["config", "--task-model", "openai/task-model", "--task-endpoint", url]) == 0
    [warning] = _warnings(capsys)
    assert ("task model openai/task-model is of the same family (openai) as every model "
            "under test (openai/good-coder, openai/lazy-coder)") in warning
    assert "summarybench config --task-model PROVIDER/MODEL" in warning
    settings = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES)

    class Ctx:                     # what skip_reason reads of a run context
        roles = type("Roles", (), {"task": task_model(settings)})()

    Ctx.settings = settings        # type: ignore[attr-defined]
    reason = FunctionSelectionEvaluator().skip_reason(Ctx())  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("task model openai/task-model is of "
                                                    "the same family (openai)")
    assert main(["config", "--task-model", "local/task-model"]) == 0
    assert _warnings(capsys) == []


def test_a_task_model_of_some_tested_models_family_is_flagged_with_its_fixes(
        project: Path, capsys, refusing_port: int) -> None:
    """The new user's pass on rich: a task model of the openai family beside one openai
    model under test and a built-in one drew no warning from `config` (only a task model
    of every tested model's family did), nor from `doctor`; that model's downstream items
    were then skipped without a word."""
    url = f"http://127.0.0.1:{refusing_port}/v1"
    assert main(["add-model", "openai/good-coder", "--api-endpoint", url]) == 0
    assert main(["add-model", "builtin/docstring"]) == 0
    capsys.readouterr()
    assert main(["config", "--task-model", "openai/task-model", "--task-endpoint", url]) == 0
    [warning] = _warnings(capsys)
    assert ("task model openai/task-model is of the same family (openai) as "
            "openai/good-coder, whose summaries it would read") in warning
    for fix in ("summarybench set-model openai/good-coder --family NAME",
                "summarybench config --task-family NAME",
                "summarybench config --task-model PROVIDER/MODEL"):
        assert fix in warning
    main(["doctor"])
    assert any("same family (openai) as openai/good-coder" in w for w in _warnings(capsys))
    # The fix it names works: the task model gets a family of its own.
    assert main(["config", "--task-family", "acme"]) == 0
    assert _warnings(capsys) == []
    settings = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES)
    assert settings.evaluation.downstream.family == "acme"
    assert main(["config", "--task-family", "none"]) == 0
    assert len(_warnings(capsys)) == 1
    # So does the other: the model under test gets one.
    assert main(["set-model", "openai/good-coder", "--family", "goodfam"]) == 0
    assert _warnings(capsys) == []


def test_config_without_a_flag_checks_the_whole_file(project: Path, capsys) -> None:
    """The new user's pass on rich: `summarybench config` with no flag exited 2 "nothing to
    change", though docs/cli.md says `config` checks the whole file."""
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "summarybench.yaml: valid, nothing to warn about" in out
    assert main(["add-model", "openai/good-coder"]) == 0
    assert main(["config", "--task-model", "openai/task-model"]) == 0
    capsys.readouterr()
    assert main(["config"]) == 1
    found = _warnings(capsys)
    assert any("task model openai/task-model is of the same family (openai)" in w
               for w in found), found
    (project / "summarybench.yaml").write_text(
        (project / "summarybench.yaml").read_text() + "sampelSize: 3\n")
    assert main(["config"]) == 2
    assert "sampelSize" in capsys.readouterr().err


def test_every_echo_writes_control_characters_as_escapes(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``add-model $'openai/ev\\e]0;X\\ail\\e[31m-good'`` printed the name raw: the
    terminal's title and colour changed, and ``--id $'x\\e[2Jy'`` cleared the screen. Each
    command's echo (add-model, add-judge, set-model, remove-model, remove-judge) writes
    them as the other commands do."""
    import re

    raw = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    hostile = "openai/ev\x1b]0;X\x07il\x1b[31m-good"
    runs = [["add-model", hostile, "--api-endpoint", "http://127.0.0.1:9/v1"],
            ["add-model", "openai/a\nb-good", "--id", "x\x1b[2Jy", "--family", "fam",
             "--api-endpoint", "http://127.0.0.1:9/v1"],
            ["add-judge", "anthropic/j\x9b31m", "--api-endpoint", "http://127.0.0.1:9/v1"],
            ["set-model", "x\x1b[2Jy", "--family", "other"],
            ["remove-model", hostile], ["remove-judge", "anthropic/j\x9b31m"],
            ["remove-model", "x\x1b[2Jy"]]
    for argv in runs:
        assert main(argv) == 0, argv
        out, err = capsys.readouterr()
        assert not raw.search(out.replace("\n", "")), (argv, out)
        assert not raw.search(err.replace("\n", "")), (argv, err)
        assert out.count("\n") == 1, (argv, out)
    assert main(["add-model", hostile, "--api-endpoint", "http://127.0.0.1:9/v1"]) == 0
    assert capsys.readouterr().out.startswith(
        "added openai/ev\\x1b]0;X\\x07il\\x1b[31m-good to models.test in ")


#: Arguments as Python reads bytes that are not UTF-8 from argv (``os.fsdecode``).
NOT_UTF8 = "\udcff\udcfe"


@pytest.mark.parametrize("argv, option", [
    (["add-model", f"openai/{NOT_UTF8}-good"], "argument PROVIDER/MODEL"),
    (["add-judge", "openai/j", "--id", "\udcff\x1b[2J"], "argument --id"),
    (["add-model", "openai/m", "--family", f"f{NOT_UTF8}"], "argument --family"),
    (["add-model", "openai/m", "--api-key-env", f"K{NOT_UTF8}"], "argument --api-key-env"),
    (["set-model", f"x{NOT_UTF8}", "--family", "a"], "argument ID"),
    (["remove-model", f"x{NOT_UTF8}"], "argument ID"),
    (["remove-judge", f"x{NOT_UTF8}"], "argument ID"),
    (["config", "--task-model", f"openai/t{NOT_UTF8}"], "argument --task-model"),
    (["config", "--task-family", NOT_UTF8], "argument --task-family"),
    (["config", "--task-endpoint", f"http://127.0.0.1:9/{NOT_UTF8}"],
     "argument --task-endpoint"),
    (["compare", f"a{NOT_UTF8}", "b"], "argument A"),
])
def test_an_argument_that_is_not_utf8_is_refused_naming_the_option(
        project: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
        option: str) -> None:
    """``add-model $'openai/\\xff\\xfe-good'`` wrote an escape the file could not read back,
    and the error blamed a line of the user's valid YAML (``summarybench.yaml:48: not
    valid YAML: found invalid Unicode character escape code``). The argument is refused
    before anything is written, naming the option and showing its bytes escaped."""
    cfg = project / "summarybench.yaml"
    before = cfg.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert f"error: {option}: " in line, err
    assert "holds bytes that are not UTF-8 (\\xff" in line, err
    assert "YAML" not in err and "\x1b" not in err and "\udcff" not in err
    assert cfg.read_bytes() == before


@pytest.mark.parametrize("endpoint, problem", [
    ("http://127.0.0.1:9/v1\x1b[2J", "it holds a control character (\\x1b) at character 22"),
    ("http://127.0.0.1:9/v1 x", "it holds a space at character 22"),
    ("ftp://127.0.0.1/v1", "expected http:// or https:// at its start"),
    ("127.0.0.1:8080/v1", "expected http:// or https:// at its start"),
    ("http:///v1", "it names no host"),
    ("http://127.0.0.1:99999/v1", "it does not parse as a URL"),
])
def test_an_endpoint_url_is_checked_at_the_cli_and_in_the_file(
        project: Path, capsys: pytest.CaptureFixture[str], endpoint: str,
        problem: str) -> None:
    """``config --task-endpoint $'http://.../v1\\e[2J'`` was accepted and written. An
    endpoint must be http:// or https:// with a host, without spaces or control
    characters: at the command line (each option that takes one) and in the file."""
    cfg = project / "summarybench.yaml"
    before = cfg.read_bytes()
    for argv, option in ((["add-model", "openai/m", "--api-endpoint", endpoint],
                          "--api-endpoint"),
                         (["set-model", "openai/m", "--api-endpoint", endpoint],
                          "--api-endpoint"),
                         (["config", "--task-endpoint", endpoint], "--task-endpoint")):
        with pytest.raises(SystemExit):
            main(argv)
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert f"error: argument {option}: " in line and problem in line, line
        assert "\x1b" not in line
        assert cfg.read_bytes() == before
    # the same check when the file says it (a hand edit)
    quoted = endpoint.replace("\x1b", "\\e")
    cfg.write_text(cfg.read_text().replace(
        "  test: []\n",
        f'  test:\n    - {{provider: openai, model: m, apiEndpoint: "{quoted}"}}\n', 1))
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "models.test.0.apiEndpoint" in err and "not a usable endpoint URL: " in err
    assert problem in err and "\x1b" not in err


def test_usable_endpoints_pass() -> None:
    from pytest_summarybench.schemas.config import endpoint_problem

    for url in ("http://localhost:11434", "https://api.example.com/v1",
                "http://[::1]:8080/v1", "HTTPS://eu.example.com/openai/v1?x=1"):
        assert endpoint_problem(url) is None, url
