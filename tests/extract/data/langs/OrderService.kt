package com.shop.orders

import kotlinx.coroutines.delay
import kotlinx.serialization.json.Json as JsonCodec

/**
 * Places orders.
 */
@Service
class OrderService<T : Order>(private val repo: Repository<T>) {

    suspend fun place(order: T, retries: Int = 3, vararg tags: String): String {
        if (order.quantity <= 0 || order.sku.isEmpty()) {
            throw IllegalArgumentException("invalid")
        }
        fun describe(o: Order): String = "${o.sku} x${o.quantity}"
        repeat(retries) {
            delay(10)
        }
        repo.save(order)
        return encode(order) ?: describe(order)
    }

    private fun encode(order: Order): String? {
        return JsonCodec.encodeToString(order)
    }

    companion object {
        fun create(repo: Repository<Order>): OrderService<Order> {
            return OrderService(repo)
        }
    }
}

interface Repository<T> {
    fun save(item: T)
}

data class Order(val sku: String, val quantity: Int)
