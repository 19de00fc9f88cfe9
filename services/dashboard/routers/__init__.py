"""The dashboard's routes: the page and its files, the Prometheus proxy, order journeys."""
