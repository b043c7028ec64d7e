"""Each of the ten extractors on realistic code: names, kinds, line spans, parameters,
calls, decorators, docs, visibility and exports (data in ``data/langs/``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, extract_units
from pytest_summarybench.schemas.units import CodeUnit

DATA = Path(__file__).parent / "data" / "langs"


@pytest.fixture(scope="module")
def units() -> dict[tuple[str, str], CodeUnit]:
    config = ExtractionConfig(root_path=str(DATA), filters=ExtractionFilters(min_lines=1))
    result = extract_units(config)
    assert result.warnings == []
    assert result.skipped == []
    return {(u.path, u.name): u for u in result.units}


def spans(units: dict[tuple[str, str], CodeUnit], path: str) -> dict[str, tuple[str, int, int]]:
    """name -> (type, start line, end line) of every unit of one file."""
    return {u.name: (u.type, u.metadata.start_line, u.metadata.end_line)
            for (p, _), u in units.items() if p == path}


def params(unit: CodeUnit) -> list[tuple[str, str | None, bool, str | None]]:
    return [(p.name, p.type, p.optional, p.default_value) for p in unit.metadata.parameters or []]


def calls(units: dict[tuple[str, str], CodeUnit], unit: CodeUnit) -> list[str]:
    by_id = {u.id: u.name for u in units.values()}
    return sorted(by_id[i] for i in unit.relationships.calls_ids)


def test_python(units: dict[tuple[str, str], CodeUnit]) -> None:
    assert spans(units, "orders.py") == {
        "orders.py": ("file", 1, 60),
        "Order": ("class", 12, 17),
        "Repository": ("class", 20, 25),
        "Repository.__init__": ("method", 21, 22),
        "Repository.save": ("method", 24, 25),
        "OrderService": ("class", 28, 56),
        "OrderService.__init__": ("method", 31, 33),
        "OrderService.validate": ("method", 35, 37),
        "OrderService.place": ("method", 39, 53),
        "OrderService.place.describe": ("function", 42, 43),
        "OrderService._audit": ("method", 55, 56),
        "encode": ("function", 59, 60),
    }
    place = units[("orders.py", "OrderService.place")]
    assert place.metadata.signature == \
        "async def place(self, order: Order, *extra: str, **options: object) -> str"
    assert params(place) == [("order", "Order", False, None), ("*extra", "str", True, None),
                             ("**options", "object", True, None)]
    assert place.metadata.return_type == "str"
    assert place.docstring == "Validate, store and serialize an order."
    assert calls(units, place) == ["OrderService.place.describe", "OrderService.validate",
                                   "Repository.save", "encode"]
    assert place.relationships.unresolved_calls == ["ValueError", "range"]
    assert place.metadata.complexity == 4  # if, for, except + 1
    init = units[("orders.py", "OrderService.__init__")]
    assert params(init) == [("repo", "Repository[Order]", False, None),
                            ("retries", "int", True, "3")]
    validate = units[("orders.py", "OrderService.validate")]
    assert validate.metadata.decorators == ["staticmethod"]
    assert validate.metadata.complexity == 2  # and
    order = units[("orders.py", "Order")]
    assert order.metadata.decorators == ["dataclass(frozen=True)"]
    assert order.metadata.dependencies == ["dataclasses.dataclass"]
    assert units[("orders.py", "OrderService._audit")].metadata.visibility == "private"
    assert units[("orders.py", "encode")].metadata.dependencies == ["json"]
    file_unit = units[("orders.py", "orders.py")]
    assert file_unit.metadata.exports == ["Order", "Repository", "OrderService", "encode"]
    assert file_unit.metadata.dependencies == ["json", "dataclasses.dataclass",
                                               "typing.Generic", "typing.TypeVar"]
    service = units[("orders.py", "OrderService")]
    assert [units[("orders.py", n)].id for n in ("OrderService.__init__",
            "OrderService.validate", "OrderService.place", "OrderService._audit")] \
        == service.relationships.child_ids
    describe = units[("orders.py", "OrderService.place.describe")]
    assert describe.relationships.parent_id == place.id
    assert place.id in describe.relationships.called_by_ids


def test_typescript(units: dict[tuple[str, str], CodeUnit]) -> None:
    assert spans(units, "orders.ts") == {
        "orders.ts": ("file", 1, 48),
        "Order": ("class", 4, 8),
        "Repository": ("class", 10, 16),
        "Repository.save": ("method", 13, 15),
        "OrderService": ("class", 18, 39),
        "OrderService.constructor": ("method", 23, 25),
        "OrderService.place": ("method", 27, 34),
        "OrderService.onPlaced": ("method", 36, 38),
        "encode": ("function", 41, 43),
        "createService": ("function", 45, 48),
    }
    service = units[("orders.ts", "OrderService")]
    assert service.metadata.decorators == ["Injectable()"]
    assert service.docstring == "Places orders."
    assert service.content.startswith("/**\n * Places orders.\n */\n@Injectable()\nexport class")
    place = units[("orders.ts", "OrderService.place")]
    assert place.metadata.decorators == ["Log()"]
    assert params(place) == [("order", "U", False, None), ("...tags", "string[]", True, None)]
    assert place.metadata.return_type == "Promise<string>"
    assert calls(units, place) == ["Repository.save", "encode"]
    assert "path.join" in place.relationships.unresolved_calls
    assert place.metadata.dependencies == ["path"]
    arrow = units[("orders.ts", "OrderService.onPlaced")]
    assert arrow.metadata.visibility == "private"
    assert params(arrow) == [("order", "Order", False, None)]
    encode = units[("orders.ts", "encode")]
    assert params(encode) == [("order", "Order", False, None), ("pretty", None, True, "false")]
    assert encode.metadata.return_type == "string"
    factory = units[("orders.ts", "createService")]
    assert calls(units, factory) == ["OrderService"]  # new OrderService(...)
    assert units[("orders.ts", "orders.ts")].metadata.exports == \
        ["Order", "Repository", "OrderService", "encode", "default"]
    ctor = units[("orders.ts", "OrderService.constructor")]
    assert params(ctor) == [("repo", "Repository<Order>", False, None),
                            ("retries", "number", True, None)]


def test_javascript(units: dict[tuple[str, str], CodeUnit]) -> None:
    assert spans(units, "orders.js") == {
        "orders.js": ("file", 1, 36),
        "OrderWriter": ("class", 4, 21),
        "OrderWriter.constructor": ("method", 8, 10),
        "OrderWriter.write": ("method", 12, 16),
        "OrderWriter.create": ("method", 18, 20),
        "serialize": ("function", 23, 25),
        "handlers.onSaved": ("method", 28, 30),
        "handlers.onFailed": ("method", 31, 33),
    }
    write = units[("orders.js", "OrderWriter.write")]
    assert params(write) == [("order", None, False, None),
                             ("{ pretty = false }", None, True, "{}")]
    assert calls(units, write) == ["serialize"]
    assert write.metadata.dependencies == ["fs", "path"]
    create = units[("orders.js", "OrderWriter.create")]
    assert params(create) == [("dir", None, True, '"."')]
    assert calls(units, create) == ["OrderWriter"]
    assert units[("orders.js", "serialize")].metadata.complexity == 2
    assert units[("orders.js", "orders.js")].metadata.exports == \
        ["OrderWriter", "serialize", "handlers"]


def test_go(units: dict[tuple[str, str], CodeUnit]) -> None:
    assert spans(units, "orders.go") == {
        "orders.go": ("file", 1, 52),
        "Order": ("class", 9, 13),
        "Repository": ("class", 15, 18),
        "Service": ("class", 20, 24),
        "NewService": ("function", 26, 29),
        "Service.Place": ("method", 31, 43),
        "Service.validate": ("method", 45, 47),
        "encode": ("function", 49, 52),
    }
    place = units[("orders.go", "Service.Place")]
    assert place.metadata.signature == "func (s *Service) Place(ctx context.Context, " \
        "order Order, tags ...string) (string, error)"
    assert params(place) == [("ctx", "context.Context", False, None),
                             ("order", "Order", False, None), ("tags", "...string", True, None)]
    assert place.metadata.return_type == "(string, error)"
    assert place.docstring == "Place validates and stores an order."
    assert calls(units, place) == ["encode"]
    assert place.metadata.complexity == 5  # if, ||, for, if + 1
    assert place.metadata.dependencies == ["context", "errors"]
    assert place.relationships.parent_id == units[("orders.go", "Service")].id
    assert units[("orders.go", "Service.validate")].metadata.visibility == "private"
    assert calls(units, units[("orders.go", "NewService")]) == ["Service"]
    assert units[("orders.go", "orders.go")].metadata.exports == \
        ["Order", "Repository", "Service", "NewService"]


def test_java(units: dict[tuple[str, str], CodeUnit]) -> None:
    path = "OrderService.java"
    assert spans(units, path) == {
        path: ("file", 1, 49),
        "OrderService": ("class", 7, 39),
        "OrderService.OrderService": ("method", 14, 16),
        "OrderService.place": ("method", 18, 26),
        "OrderService.encode": ("method", 28, 30),
        "OrderService.Batch": ("class", 32, 38),
        "OrderService.Batch.add": ("method", 35, 37),
        "Repository": ("class", 41, 47),
        "Repository.count": ("method", 44, 46),
        "Order": ("class", 49, 49),
    }
    place = units[(path, "OrderService.place")]
    assert place.metadata.decorators == ["Transactional"]
    assert place.metadata.visibility == "public"
    assert params(place) == [("order", "T", False, None), ("tags", "String...", True, None)]
    assert place.metadata.return_type == "Optional<String>"
    assert place.docstring == "Validates and stores an order."
    assert calls(units, place) == ["OrderService.encode"]  # bare call to a member
    assert units[(path, "OrderService")].metadata.decorators == ["Service"]
    assert units[(path, "OrderService.encode")].metadata.visibility == "private"
    # ``orders.add`` is a List method, not a call of Batch.add itself.
    assert calls(units, units[(path, "OrderService.Batch.add")]) == []


def test_rust(units: dict[tuple[str, str], CodeUnit]) -> None:
    assert spans(units, "orders.rs") == {
        "orders.rs": ("file", 1, 44),
        "Order": ("class", 4, 9),
        "Repository": ("class", 11, 18),
        "Repository.count": ("method", 15, 17),
        "OrderService": ("class", 20, 23),
        "OrderService.new": ("method", 26, 29),
        "OrderService.place": ("method", 31, 39),
        "encode": ("function", 42, 44),
    }
    order = units[("orders.rs", "Order")]
    assert order.metadata.decorators == ["derive(Debug, Clone, Serialize, Deserialize)"]
    assert order.docstring == "One order line."
    assert order.metadata.dependencies == ["serde::Deserialize", "serde::Serialize"]
    place = units[("orders.rs", "OrderService.place")]
    assert params(place) == [("order", "Order", False, None), ("dry_run", "bool", False, None)]
    assert place.metadata.return_type == "Result<String, String>"
    assert calls(units, place) == ["encode"]
    assert place.relationships.parent_id == units[("orders.rs", "OrderService")].id
    new = units[("orders.rs", "OrderService.new")]
    assert calls(units, new) == ["OrderService"]  # Self { .. }
    assert "HashMap.new" in new.relationships.unresolved_calls
    assert units[("orders.rs", "encode")].metadata.visibility == "private"
    assert units[("orders.rs", "orders.rs")].metadata.exports == \
        ["Order", "Repository", "OrderService"]


def test_csharp(units: dict[tuple[str, str], CodeUnit]) -> None:
    path = "OrderService.cs"
    assert spans(units, path) == {
        path: ("file", 1, 42),
        "OrderService": ("class", 7, 34),
        "OrderService.OrderService": ("method", 13, 16),
        "OrderService.PlaceAsync": ("method", 18, 28),
        "OrderService.PlaceAsync.Describe": ("function", 25, 25),
        "OrderService.Encode": ("method", 30, 33),
        "IRepository": ("class", 36, 39),
        "Order": ("class", 41, 41),
    }
    place = units[(path, "OrderService.PlaceAsync")]
    assert place.metadata.decorators == ['Obsolete("use PlaceAsync")']
    assert params(place) == [("order", "T", False, None), ("retries", "int", True, "3"),
                             ("tags", "string[]", True, None)]
    assert place.metadata.return_type == "Task<string>"
    assert calls(units, place) == ["OrderService.Encode", "OrderService.PlaceAsync.Describe"]
    assert units[(path, "OrderService")].docstring == "<summary>Places orders.</summary>"
    assert units[(path, "OrderService.Encode")].metadata.dependencies == \
        ["System.Text.Json.JsonSerializer"]


def test_ruby(units: dict[tuple[str, str], CodeUnit]) -> None:
    path = "order_service.rb"
    assert spans(units, path) == {
        path: ("file", 1, 36),
        "Shop": ("class", 4, 36),
        "Shop.OrderService": ("class", 5, 35),
        "Shop.OrderService.initialize": ("method", 9, 12),
        "Shop.OrderService.self.build": ("method", 14, 16),
        "Shop.OrderService.place": ("method", 18, 24),
        "Shop.OrderService.valid?": ("method", 28, 30),
        "Shop.OrderService.encode": ("method", 32, 34),
    }
    place = units[(path, "Shop.OrderService.place")]
    assert params(place) == [("order", None, False, None), ("*tags", None, True, None),
                             ("&on_done", None, True, None)]
    assert calls(units, place) == ["Shop.OrderService.encode", "Shop.OrderService.valid?"]
    assert units[(path, "Shop.OrderService.valid?")].metadata.visibility == "private"
    assert place.metadata.visibility == "public"
    assert calls(units, units[(path, "Shop.OrderService.self.build")]) == ["Shop.OrderService"]
    init = units[(path, "Shop.OrderService.initialize")]
    assert params(init) == [("repo", None, False, None), ("retries:", None, True, "3")]
    assert units[(path, "Shop.OrderService")].docstring == "Places orders."
    assert units[(path, path)].metadata.dependencies == ["json", "repository"]


def test_php(units: dict[tuple[str, str], CodeUnit]) -> None:
    path = "OrderService.php"
    assert spans(units, path) == {
        path: ("file", 1, 39),
        "OrderService": ("class", 8, 34),
        "OrderService.__construct": ("method", 14, 16),
        "OrderService.place": ("method", 18, 28),
        "OrderService.encode": ("method", 30, 33),
        "make_service": ("function", 36, 39),
    }
    place = units[(path, "OrderService.place")]
    assert params(place) == [("order", "Order", False, None), ("...tags", "string", True, None)]
    assert place.metadata.return_type == "string"
    assert calls(units, place) == ["OrderService.encode"]  # self::encode
    assert place.docstring == "Validates and stores an order."
    encode = units[(path, "OrderService.encode")]
    assert encode.metadata.visibility == "private"
    assert calls(units, encode) == []  # JsonCodec::encode is imported, not itself
    assert encode.metadata.dependencies == ["Shop\\Support\\Json"]
    assert units[(path, "OrderService")].metadata.decorators == ["Service"]
    assert calls(units, units[(path, "make_service")]) == ["OrderService"]
    ctor = units[(path, "OrderService.__construct")]
    assert params(ctor) == [("repo", "Repository", False, None), ("retries", "int", True, "3")]


def test_kotlin(units: dict[tuple[str, str], CodeUnit]) -> None:
    path = "OrderService.kt"
    assert spans(units, path) == {
        path: ("file", 1, 39),
        "OrderService": ("class", 6, 33),
        "OrderService.place": ("method", 12, 22),
        "OrderService.place.describe": ("function", 16, 16),
        "OrderService.encode": ("method", 24, 26),
        "OrderService.create": ("method", 29, 31),
        "Repository": ("class", 35, 37),
        "Order": ("class", 39, 39),
    }
    place = units[(path, "OrderService.place")]
    assert params(place) == [("order", "T", False, None), ("retries", "Int", True, "3"),
                             ("tags", "String", True, None)]
    assert place.metadata.return_type == "String"
    assert calls(units, place) == ["OrderService.encode", "OrderService.place.describe"]
    assert place.metadata.complexity == 4  # if, ||, ?: + 1
    assert place.metadata.dependencies == ["kotlinx.coroutines.delay"]
    service = units[(path, "OrderService")]
    assert service.metadata.decorators == ["Service"]
    assert service.docstring == "Places orders."
    assert calls(units, units[(path, "OrderService.create")]) == ["OrderService"]
    assert units[(path, "OrderService.encode")].metadata.return_type == "String?"


def test_every_language_is_covered(units: dict[tuple[str, str], CodeUnit]) -> None:
    from pytest_summarybench.extract import LANGUAGES

    assert {u.language for u in units.values()} == set(LANGUAGES)
