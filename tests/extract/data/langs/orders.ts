import { EventEmitter } from "events";
import * as path from "path";

/** A stored order. */
export interface Order {
  sku: string;
  quantity: number;
}

export class Repository<T> {
  private items: T[] = [];

  save(item: T): void {
    this.items.push(item);
  }
}

/**
 * Places orders.
 */
@Injectable()
export class OrderService extends EventEmitter {
  constructor(private readonly repo: Repository<Order>, retries?: number) {
    super();
  }

  @Log()
  async place<U extends Order>(order: U, ...tags: string[]): Promise<string> {
    if (order.quantity <= 0 || !order.sku) {
      throw new Error("invalid");
    }
    this.repo.save(order);
    return encode(order) ?? path.join("a", "b");
  }

  private onPlaced = (order: Order): void => {
    this.emit("placed", order);
  };
}

export const encode = (order: Order, pretty = false): string => {
  return JSON.stringify(order, null, pretty ? 2 : 0);
};

export default function createService(repo: Repository<Order>): OrderService {
  const service = new OrderService(repo);
  return service;
}
