const fs = require("fs");
const { join } = require("path");

/**
 * Writes orders to disk.
 */
class OrderWriter {
  constructor(dir) {
    this.dir = dir;
  }

  async write(order, { pretty = false } = {}) {
    const file = join(this.dir, `${order.id}.json`);
    await fs.promises.writeFile(file, serialize(order, pretty));
    return file;
  }

  static create(dir = ".") {
    return new OrderWriter(dir);
  }
}

function serialize(order, pretty) {
  return JSON.stringify(order, null, pretty ? 2 : 0);
}

const handlers = {
  onSaved(order) {
    console.log("saved", order.id);
  },
  onFailed: (order, err) => {
    console.error(order.id, err);
  },
};

module.exports = { OrderWriter, serialize, handlers };
