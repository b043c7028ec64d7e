require "json"
require_relative "repository"

module Shop
  # Places orders.
  class OrderService
    include Comparable

    def initialize(repo, retries: 3)
      @repo = repo
      @retries = retries
    end

    def self.build(path = "orders.db")
      new(Repository.new(path))
    end

    def place(order, *tags, &on_done)
      raise ArgumentError, "invalid" unless valid?(order)
      @retries.times do
        @repo.save(order)
      end
      encode(order)
    end

    private

    def valid?(order)
      order.quantity.positive? && !order.sku.empty?
    end

    def encode(order)
      JSON.generate(sku: order.sku, quantity: order.quantity)
    end
  end
end
