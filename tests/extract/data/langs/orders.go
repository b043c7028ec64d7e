package orders

import (
	"context"
	"encoding/json"
	"errors"
)

// Order is one order line.
type Order struct {
	SKU      string
	Quantity int
}

// Repository stores orders.
type Repository[T any] interface {
	Save(ctx context.Context, item T) error
}

// Service places orders.
type Service struct {
	repo    Repository[Order]
	retries int
}

// NewService builds a Service.
func NewService(repo Repository[Order], retries int) *Service {
	return &Service{repo: repo, retries: retries}
}

// Place validates and stores an order.
func (s *Service) Place(ctx context.Context, order Order, tags ...string) (string, error) {
	if order.Quantity <= 0 || order.SKU == "" {
		return "", errors.New("invalid order")
	}
	var err error
	for i := 0; i < s.retries; i++ {
		if err = s.repo.Save(ctx, order); err == nil {
			break
		}
	}
	return encode(order)
}

func (s *Service) validate(order Order) bool {
	return order.Quantity > 0
}

func encode(order Order) (string, error) {
	data, err := json.Marshal(order)
	return string(data), err
}
