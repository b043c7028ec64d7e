"""Common base for every schema: camelCase JSON field names as the spec writes them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class SBModel(BaseModel):
    """Base model: Python attributes in snake_case, JSON in the spec's camelCase."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
    )

    def to_json_dict(self) -> dict:
        """The spec-shaped JSON object (camelCase keys, no unset optional noise)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
