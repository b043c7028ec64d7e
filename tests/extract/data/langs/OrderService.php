<?php

namespace Shop\Orders;

use Shop\Storage\Repository;
use Shop\Support\Json as JsonCodec;

/**
 * Places orders.
 */
#[Service]
final class OrderService
{
    public function __construct(private Repository $repo, private int $retries = 3)
    {
    }

    /**
     * Validates and stores an order.
     */
    public function place(Order $order, string ...$tags): string
    {
        if ($order->quantity <= 0 || $order->sku === '') {
            throw new \InvalidArgumentException('invalid');
        }
        $this->repo->save($order);
        return self::encode($order);
    }

    private static function encode(Order $order): string
    {
        return JsonCodec::encode(['sku' => $order->sku]);
    }
}

function make_service(Repository $repo): OrderService
{
    return new OrderService($repo);
}
