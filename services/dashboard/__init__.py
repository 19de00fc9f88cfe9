"""The local pipeline dashboard: live plots of every hop (from Prometheus), one order's journey."""
