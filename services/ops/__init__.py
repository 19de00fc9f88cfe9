"""Operations tooling: inspect, pause, resume and restart the connector; see lag per hop."""
