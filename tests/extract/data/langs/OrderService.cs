using System;
using System.Threading.Tasks;
using Json = System.Text.Json.JsonSerializer;

namespace Shop.Orders
{
    /// <summary>Places orders.</summary>
    [Serializable]
    public class OrderService<T> where T : Order
    {
        private readonly IRepository<T> _repo;

        public OrderService(IRepository<T> repo)
        {
            _repo = repo;
        }

        [Obsolete("use PlaceAsync")]
        public async Task<string> PlaceAsync(T order, int retries = 3, params string[] tags)
        {
            if (order.Quantity <= 0 || order.Sku == null)
            {
                throw new ArgumentException("invalid");
            }
            string Describe(Order o) => $"{o.Sku} x{o.Quantity}";
            await _repo.SaveAsync(order);
            return Encode(order) ?? Describe(order);
        }

        private static string Encode(Order order)
        {
            return Json.Serialize(order);
        }
    }

    public interface IRepository<T>
    {
        Task SaveAsync(T item);
    }

    public record Order(string Sku, int Quantity);
}
