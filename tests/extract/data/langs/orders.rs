use std::collections::HashMap;
use serde::{Deserialize, Serialize};

/// One order line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Order {
    pub sku: String,
    pub quantity: u32,
}

/// Stores items.
pub trait Repository<T> {
    fn save(&mut self, item: T) -> Result<(), String>;

    fn count(&self) -> usize {
        0
    }
}

pub struct OrderService<R: Repository<Order>> {
    repo: R,
    totals: HashMap<String, u32>,
}

impl<R: Repository<Order>> OrderService<R> {
    /// Creates a service.
    pub fn new(repo: R) -> Self {
        Self { repo, totals: HashMap::new() }
    }

    pub async fn place(&mut self, order: Order, dry_run: bool) -> Result<String, String> {
        if order.quantity == 0 || order.sku.is_empty() {
            return Err("invalid".to_string());
        }
        if !dry_run {
            self.repo.save(order.clone())?;
        }
        Ok(encode(&order))
    }
}

fn encode(order: &Order) -> String {
    format!("{}:{}", order.sku, order.quantity)
}
