"""Qualified names tell a file's units apart: same-named definitions get their line
(``units.distinguish``), property accessors and Ruby's singleton methods are named as
written, PHP's anonymous classes name their methods, ``@overload`` stubs are not units,
and calls resolve against these names."""

from __future__ import annotations

from pathlib import Path

from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, extract_units
from pytest_summarybench.schemas.units import CodeUnit

PY = '''import sys
from typing import overload


class Box:
    @property
    def size(self) -> int:
        return self._size

    @size.setter
    def size(self, value: int) -> None:
        def check() -> None:
            pass
        self._size = value

    @size.deleter
    def size(self) -> None:
        del self._size

    @overload
    def get(self, key: int) -> int: ...
    @overload
    def get(self, key: str) -> str: ...
    def get(self, key):
        return key


if sys.platform == "win32":
    def home():
        return "C:/"
else:
    def home():
        return "/"
'''

GO = '''package main

func init() {
\tsetup()
}

func init() {
\tsetup()
}

func setup() {}
'''

RUBY = '''class ::Store
  def self.open(path)
    new(path)
  end

  def open
    @io = File.open(@path)
  end

  class << self
    def default
      open("store.db")
    end
  end
end

def run
  Store.open("x.db")
end
'''


PHP = '''<?php
class Jobs
{
    public function make(): Job
    {
        return new class extends \\App\\Job {
            public function run(): void
            {
                $this->log();
            }

            private function log(): void {}
        };
    }
}
'''


def _extract(tmp_path: Path, files: dict[str, str]) -> dict[str, CodeUnit]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    config = ExtractionConfig(root_path=str(tmp_path), filters=ExtractionFilters(min_lines=1),
                              extraction={"files": False})
    return {f"{u.path}:{u.name}": u for u in extract_units(config).units}


def _spans(units: dict[str, CodeUnit], path: str) -> dict[str, tuple[str, int, int]]:
    return {u.name: (u.type, u.metadata.start_line, u.metadata.end_line)
            for u in units.values() if u.path == path}


def test_python_accessors_overloads_and_repeats(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"box.py": PY})
    assert _spans(units, "box.py") == {
        "Box": ("class", 5, 25),
        "Box.size": ("method", 6, 8),
        "Box.size.setter": ("method", 10, 14),
        "Box.size.setter.check": ("function", 12, 13),
        "Box.size.deleter": ("method", 16, 18),
        "Box.get": ("method", 24, 25),
        "home@L29": ("function", 29, 30),
        "home@L32": ("function", 32, 33),
    }


def test_go_repeated_init(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"main.go": GO})
    assert _spans(units, "main.go") == {
        "init@L3": ("function", 3, 5),
        "init@L7": ("function", 7, 9),
        "setup": ("function", 11, 11),
    }
    setup = units["main.go:setup"].id
    assert units["main.go:init@L3"].relationships.calls_ids == [setup]
    assert units["main.go:init@L7"].relationships.calls_ids == [setup]


def test_ruby_singleton_methods(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"store.rb": RUBY})
    assert _spans(units, "store.rb") == {
        "Store": ("class", 1, 15),
        "Store.self.open": ("method", 2, 4),
        "Store.open": ("method", 6, 8),
        "Store.self.default": ("method", 11, 13),
        "run": ("function", 17, 19),
    }
    singleton = units["store.rb:Store.self.open"].id
    # ``Store.open(...)`` is the class method, not the instance method of that name.
    assert units["store.rb:run"].relationships.calls_ids == [singleton]
    # A bare call inside ``class << self`` reaches the other class methods.
    assert units["store.rb:Store.self.default"].relationships.calls_ids == [singleton]


def test_php_anonymous_class_methods(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"jobs.php": PHP})
    anonymous = "Jobs.make.<anonymous Job@L6>"
    assert _spans(units, "jobs.php") == {
        "Jobs": ("class", 2, 15),
        "Jobs.make": ("method", 4, 14),
        f"{anonymous}.run": ("method", 7, 10),
        f"{anonymous}.log": ("method", 12, 12),
    }
    run = units[f"jobs.php:{anonymous}.run"]
    assert run.relationships.calls_ids == [units[f"jobs.php:{anonymous}.log"].id]


RUST = '''struct Text;

impl<'a> From<&'a str> for &'a mut Text {
    fn from(_: &'a str) -> Self {
        todo!()
    }
}

impl Drop for dyn Send {
    fn drop(&mut self) {}
}

#[cfg(unix)] // only there
#[test]
fn r#type() {}
'''


def test_rust_impl_types_attributes_and_raw_names(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"text.rs": RUST})
    assert _spans(units, "text.rs") == {
        "Text": ("class", 1, 1),
        # The implementing type's name, not the lifetime's or ``mut``.
        "Text.from": ("method", 4, 6),
        "Send.drop": ("method", 10, 10),
        # A comment trailing an attribute does not cut the item off its first attribute.
        "type": ("function", 13, 15),
    }
    assert units["text.rs:type"].metadata.decorators == ["cfg(unix)", "test"]


KOTLIN = '''class Client {
  fun call(url: String) {
    val listener = object : Callback, Closeable {
      override fun onResponse(code: Int) {
        log(code)
      }

      fun log(code: Int) {
      }
    }
  }

  fun send(body: String) {
  }

  fun send(body: ByteArray, retries: Int, done: (Int) -> Unit) {
  }

  fun `sends twice`() {
  }
}

enum class Mode {
  FAST {
    override fun apply() {
    }
  },
  SLOW;

  open fun apply() {
  }
}
'''


def test_kotlin_object_expressions_enum_bodies_and_overloads(tmp_path: Path) -> None:
    units = _extract(tmp_path, {"client.kt": KOTLIN})
    anonymous = "Client.call.<anonymous Callback@L3>"
    assert _spans(units, "client.kt") == {
        "Client": ("class", 1, 21),
        "Client.call": ("method", 2, 11),
        f"{anonymous}.onResponse": ("method", 4, 6),
        f"{anonymous}.log": ("method", 8, 9),
        "Client.send(String)": ("method", 13, 14),
        "Client.send(ByteArray,Int,Function)": ("method", 16, 17),
        "Client.sends twice": ("method", 19, 20),
        "Mode": ("class", 23, 32),
        "Mode.FAST.apply": ("method", 25, 26),
        "Mode.apply": ("method", 30, 31),
    }
    on_response = units[f"client.kt:{anonymous}.onResponse"]
    assert on_response.relationships.calls_ids == [units[f"client.kt:{anonymous}.log"].id]


KT_REJECTED = '''class Stream internal constructor(
  val id: Int,
) {
  fun read() {
    val in1 = source()
    in1.close()
  }

  fun write(v: Int) {
    var open: Boolean
    open = v > 0
  }

  fun run() {
    val caller = suspend { open(1) }
  }
}

class Settings {
  private var set: Int = 0

  fun clear() {
    val bit = 1
    set = bit
  }

  fun size(): Int = 1
}
'''


def test_kotlin_units_in_code_the_grammar_rejects(tmp_path: Path) -> None:
    """Valid Kotlin that tree-sitter-kotlin 1.1.0 parses into ERROR nodes (a primary
    constructor's modifier, a statement starting ``in1``, assignments to ``open`` and
    ``set``, ``suspend { }``): every unit is extracted with its class and lines, and the
    texts keep the source as written."""
    units = _extract(tmp_path, {"s.kt": KT_REJECTED})
    assert _spans(units, "s.kt") == {
        "Stream": ("class", 1, 17),
        "Stream.read": ("method", 4, 7),
        "Stream.write": ("method", 9, 12),
        "Stream.run": ("method", 14, 16),
        "Settings": ("class", 19, 28),
        "Settings.clear": ("method", 22, 25),
        "Settings.size": ("method", 27, 27),
    }
    assert "internal constructor" in units["s.kt:Stream"].content
    assert "in1.close()" in units["s.kt:Stream.read"].content


KT_REJECTED_MORE = '''enum class Ctx {
    MAIN    { override fun invoke(c: Int): Int = c + 1 },
    DEFAULT { override fun invoke(c: Int): Int = c };

    abstract operator fun invoke(c: Int): Int
}

object Probes {
    public var enabled: Boolean
        get() = Impl.enabled
        @Suppress("INVISIBLE_SETTER") // the setter is internal
        set(value) {
            Impl.enabled = value
        }

    fun name(t: Any): String = $$"java.util$Name"

    private inline fun <W> take(w: W, suspend: (W) -> Boolean) {
        if (suspend(w)) return
    }
}

public fun scope(): Int = 1

@Suppress("FunctionName")
public fun MainScope(): Int = 2
'''


def test_kotlin_units_in_more_code_the_grammar_rejects(tmp_path: Path) -> None:
    """More valid Kotlin tree-sitter-kotlin 1.1.0 rejects or misreads: one-line enum entry
    bodies, an annotated setter after an expression-bodied getter, a multi-dollar string,
    a parameter named ``suspend``, and an annotation read as an expression statement after
    an expression-bodied function (the declaration after it starts at the annotation)."""
    units = _extract(tmp_path, {"p.kt": KT_REJECTED_MORE})
    assert _spans(units, "p.kt") == {
        "Ctx": ("class", 1, 6),
        "Ctx.MAIN.invoke": ("method", 2, 2),
        "Ctx.DEFAULT.invoke": ("method", 3, 3),
        "Probes": ("class", 8, 21),
        "Probes.name": ("method", 16, 16),
        "Probes.take": ("method", 18, 20),
        "scope": ("function", 23, 23),
        "MainScope": ("function", 25, 26),
    }
    assert units["p.kt:MainScope"].metadata.decorators == ['Suppress("FunctionName")']


KT_MISREAD = '''\
@Retention(RUNTIME) @JsonQualifier annotation class JsonString

fun use(): Int {
  return 1
}

@Retention(BINARY)
@Target(CLASS, FUNCTION, PROPERTY)
class Marked
'''


def test_kotlin_one_line_annotated_declarations(tmp_path: Path) -> None:
    """A bodyless annotation class after annotations on its line: the grammar reads it as
    an annotated infix call (``annotation class JsonString``), with no syntax error, so
    both classes were lost. ``@Target`` on the re-parse must not be taken for a setter's
    annotation (``@Tar`` + ``get(``)."""
    units = _extract(tmp_path, {"m.kt": KT_MISREAD})
    assert _spans(units, "m.kt") == {
        "JsonString": ("class", 1, 1),
        "use": ("function", 3, 5),
        "Marked": ("class", 7, 9),
    }
    assert units["m.kt:JsonString"].metadata.decorators == ["Retention(RUNTIME)",
                                                             "JsonQualifier"]
