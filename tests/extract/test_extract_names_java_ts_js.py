"""Java, TypeScript and JavaScript: methods of anonymous and local classes and of class
expressions are methods with names that say where they are, overloads are told apart by
their parameters, wrapped function values are units, and calls resolve against these
names (docs/extraction.md, "## Unit names in anonymous/local classes", "## Wrapped
function values")."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, extract_units
from pytest_summarybench.schemas.units import CodeUnit, base_name

JAVA = """package demo;

import java.io.IOException;

public final class Adapters {
  public static final TypeAdapter<Number> LONG = new TypeAdapter<Number>() {
    @Override public Number read(JsonReader in) throws IOException {
      return in.nextLong();
    }
    @Override public void write(JsonWriter out, Number value) throws IOException {
      out.value(value);
    }
  };

  public static final TypeAdapter<String> STRING = new TypeAdapter<String>() {
    @Override public String read(JsonReader in) throws IOException {
      return in.nextString();
    }
    @Override public void write(JsonWriter out, String value) throws IOException {
      out.value(value);
    }
  };

  public <T> TypeAdapter<T> create(Class<T> type) {
    return new TypeAdapter<T>() {
      @Override public T read(JsonReader in) throws IOException {
        return helper(in);
      }
      @Override public void write(JsonWriter out, T value) throws IOException {
        out.value(String.valueOf(value));
      }
      private T helper(JsonReader in) {
        return null;
      }
    };
  }

  public void write(JsonWriter out, Object value) {
    write(out, value, false);
  }

  public void write(JsonWriter out, Object value, boolean lenient) {
    class Local {
      void run() {
        out.flush();
      }
    }
    new Local().run();
  }

  enum Policy {
    IDENTITY {
      @Override String translate(String name) {
        return name;
      }
    },
    UPPER {
      @Override String translate(String name) {
        return name.toUpperCase();
      }
    };

    abstract String translate(String name);
  }
}
"""

TS = """type Got = (url: string, options?: object) => Promise<unknown>;

export const got = ((url: string, options?: object) => {
  const merged = {...options, url};
  return request(merged);
}) as Got;

const each = (async function * (items: string[]) {
  for (const item of items) {
    yield item;
  }
});

let handler: () => void;
handler = (() => {
  console.log('handled');
}) satisfies () => void;

const strict = (function (value: unknown) {
  return String(value);
})!;

globalThis.Emitter = class Emitter extends EventTarget {
  constructor() {
    super();
  }

  get size(): number {
    return 0;
  }

  set size(value: number) {
    this.resize(value);
  }
};

export function mixin(Base: typeof Object) {
  return class extends Base {
    describe() {
      return 'mixed';
    }
  };
}

function request(options: object): Promise<unknown> {
  return Promise.resolve(options);
}
"""

JS = """const api = {
  get(url) {
    return fetch(url);
  },
};

if (typeof window === 'undefined') {
  function platform() {
    return 'node';
  }
} else {
  function platform() {
    return 'browser';
  }
}

module.exports = { api, platform };
"""


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> list[CodeUnit]:
    root: Path = tmp_path_factory.mktemp("names")
    (root / "Adapters.java").write_text(JAVA)
    (root / "got.ts").write_text(TS)
    (root / "api.js").write_text(JS)
    config = ExtractionConfig(root_path=str(root), filters=ExtractionFilters(min_lines=1))
    result = extract_units(config)
    assert result.warnings == []
    return result.units


def by_name(units: list[CodeUnit], path: str) -> dict[str, CodeUnit]:
    return {u.name: u for u in units if u.path == path and u.type != "file"}


def test_no_two_units_of_a_file_share_type_and_name(units: list[CodeUnit]) -> None:
    counts = Counter((u.path, u.type, u.name) for u in units)
    assert [key for key, n in counts.items() if n > 1] == []


def test_java_anonymous_local_and_enum_constant_classes(units: list[CodeUnit]) -> None:
    java = {name: u.type for name, u in by_name(units, "Adapters.java").items()}
    assert java == {
        "Adapters": "class",
        "Adapters.<anonymous TypeAdapter@L6>.read": "method",
        "Adapters.<anonymous TypeAdapter@L6>.write": "method",
        "Adapters.<anonymous TypeAdapter@L15>.read": "method",
        "Adapters.<anonymous TypeAdapter@L15>.write": "method",
        "Adapters.create": "method",
        "Adapters.create.<anonymous TypeAdapter@L25>.read": "method",
        "Adapters.create.<anonymous TypeAdapter@L25>.write": "method",
        "Adapters.create.<anonymous TypeAdapter@L25>.helper": "method",
        # Overloads: told apart by their parameters' simple types.
        "Adapters.write(JsonWriter,Object)": "method",
        "Adapters.write(JsonWriter,Object,boolean)": "method",
        "Adapters.write(JsonWriter,Object,boolean).Local": "class",
        "Adapters.write(JsonWriter,Object,boolean).Local.run": "method",
        "Adapters.Policy": "class",
        "Adapters.Policy.IDENTITY.translate": "method",
        "Adapters.Policy.UPPER.translate": "method",
    }


def test_java_calls_resolve_against_the_new_names(units: list[CodeUnit]) -> None:
    java = by_name(units, "Adapters.java")
    names = {u.id: u.name for u in units}
    anon_read = java["Adapters.create.<anonymous TypeAdapter@L25>.read"]
    assert [names[i] for i in anon_read.relationships.calls_ids] == [
        "Adapters.create.<anonymous TypeAdapter@L25>.helper"]
    # A bare call of an overloaded name goes to the first overload declared.
    write = java["Adapters.write(JsonWriter,Object)"]
    assert [names[i] for i in write.relationships.calls_ids] == [
        "Adapters.write(JsonWriter,Object)"]
    local = java["Adapters.write(JsonWriter,Object,boolean)"]
    assert "Adapters.write(JsonWriter,Object,boolean).Local" in \
        [names[i] for i in local.relationships.calls_ids]
    assert java["Adapters.write(JsonWriter,Object)"].short_name == "write"


def test_wrapped_function_values_and_class_expressions(units: list[CodeUnit]) -> None:
    ts = by_name(units, "got.ts")
    spans = {name: (u.type, u.metadata.start_line, u.metadata.end_line)
             for name, u in ts.items()}
    assert spans == {
        "got": ("function", 3, 6),
        "each": ("function", 8, 12),
        "handler": ("function", 15, 17),
        "strict": ("function", 19, 21),
        "globalThis.Emitter": ("class", 23, 35),
        "globalThis.Emitter.constructor": ("method", 24, 26),
        # An accessor pair: a getter and a setter of one name.
        "globalThis.Emitter.size()": ("method", 28, 30),
        "globalThis.Emitter.size(number)": ("method", 32, 34),
        "mixin": ("function", 37, 43),
        "mixin.<anonymous Base@L38>.describe": ("method", 39, 41),
        "request": ("function", 45, 47),
    }
    # The wrapped function's code is its own, not its enclosing unit's (the file's).
    names = {u.id: u.name for u in units}
    assert [names[i] for i in ts["got"].relationships.calls_ids] == ["request"]


def test_javascript_redefinitions_are_told_apart_by_line(units: list[CodeUnit]) -> None:
    js = {name: u.type for name, u in by_name(units, "api.js").items()}
    assert js == {"api.get": "method", "platform@L8": "function",
                  "platform@L12": "function"}


@pytest.mark.parametrize(("part", "base"), [
    ("write(JsonWriter,T)", "write"), ("platform@L8", "platform"),
    ("e@L1#3", "e"), ("size()", "size"), ("v2", "v2"), ("#private", "#private"),
    ("<anonymous Base@L38>", "<anonymous Base@L38>"),
])
def test_base_name(part: str, base: str) -> None:
    assert base_name(part) == base
