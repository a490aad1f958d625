package session

import (
	"testing"
	"time"
)

func TestRestartStrategies(t *testing.T) {
	base := time.Unix(0, 0)
	cases := []struct {
		name     string
		conf     map[string]string
		ckpt     bool
		failures []time.Duration // when each failure happens
		allowed  []bool
	}{
		{"default without checkpoints is none", nil, false, []time.Duration{0}, []bool{false}},
		{"default with checkpoints is fixed-delay, 3 attempts", nil, true,
			[]time.Duration{0, 1, 2, 3}, []bool{true, true, true, false}},
		{"fixed-delay attempts", map[string]string{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "1"}, true,
			[]time.Duration{0, time.Hour}, []bool{true, false}},
		{"failure-rate counts failures in the window", map[string]string{"restart-strategy.type": "failure-rate",
			"restart-strategy.failure-rate.max-failures-per-interval": "2", "restart-strategy.failure-rate.failure-rate-interval": "1 min"}, true,
			[]time.Duration{0, 10 * time.Second, 20 * time.Second, 5 * time.Minute, 5*time.Minute + time.Second, 5*time.Minute + 2*time.Second},
			[]bool{true, true, false, true, true, false}},
		{"none", map[string]string{"restart-strategy.type": "none"}, true, []time.Duration{0}, []bool{false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Session{Config: map[string]string{}}
			for k, v := range c.conf {
				s.Config[k] = v
			}
			r, err := s.restartStrategy(c.ckpt)
			if err != nil {
				t.Fatal(err)
			}
			for i, at := range c.failures {
				if got := r.allow(base.Add(at)); got != c.allowed[i] {
					t.Fatalf("failure %d at %s: allowed %v, want %v", i+1, at, got, c.allowed[i])
				}
			}
		})
	}
	s := &Session{Config: map[string]string{"restart-strategy.type": "sometimes"}}
	if _, err := s.restartStrategy(true); err == nil {
		t.Fatal("an unknown restart strategy was accepted")
	}
}
