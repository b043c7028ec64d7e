package com.shop.orders;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Places orders.
 */
@Service
public class OrderService<T extends Order> {
    private final Repository<T> repo;

    public OrderService(Repository<T> repo) {
        this.repo = repo;
    }

    /** Validates and stores an order. */
    @Transactional
    public Optional<String> place(T order, String... tags) {
        if (order.quantity() <= 0 || order.sku() == null) {
            return Optional.empty();
        }
        repo.save(order);
        return Optional.of(encode(order));
    }

    private static String encode(Order order) {
        return order.sku() + ":" + order.quantity();
    }

    static class Batch {
        private final List<Order> orders = new ArrayList<>();

        void add(Order order) {
            orders.add(order);
        }
    }
}

interface Repository<T> {
    void save(T item);

    default int count() {
        return 0;
    }
}

record Order(String sku, int quantity) {}
