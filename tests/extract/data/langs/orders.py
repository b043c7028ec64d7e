"""Order placement service."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Order:
    """An order line."""

    sku: str
    quantity: int = 1


class Repository(Generic[T]):
    def __init__(self) -> None:
        self._items: list[T] = []

    def save(self, item: T) -> None:
        self._items.append(item)


class OrderService:
    """Places orders and records them."""

    def __init__(self, repo: Repository[Order], *, retries: int = 3) -> None:
        self.repo = repo
        self.retries = retries

    @staticmethod
    def validate(order: Order) -> bool:
        return order.quantity > 0 and bool(order.sku)

    async def place(self, order: Order, *extra: str, **options: object) -> str:
        """Validate, store and serialize an order."""

        def describe(o: Order) -> str:
            return f"{o.sku} x{o.quantity}"

        if not self.validate(order):
            raise ValueError(describe(order))
        for _ in range(self.retries):
            try:
                self.repo.save(order)
                break
            except OSError:
                continue
        return encode(order)

    def _audit(self):
        return None


def encode(order: Order) -> str:
    return json.dumps({"sku": order.sku, "quantity": order.quantity})
