-- API clients and their keys (contract section 3). A key is stored only as its SHA-256; the
-- API looks it up by that hash. `legacy` owns the orders placed before clients existed; it
-- has no key until an operator issues one.
CREATE TABLE orders.clients (
    id          uuid         PRIMARY KEY,
    name        text         NOT NULL UNIQUE,
    scopes      text[]       NOT NULL CHECK (scopes <@ ARRAY['orders:write', 'orders:read']),
    rate_per_s  double precision CHECK (rate_per_s > 0),
    created_at  timestamptz  NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE TABLE orders.api_keys (
    key_hash      bytea        PRIMARY KEY,
    client_id     uuid         NOT NULL REFERENCES orders.clients (id),
    created_at    timestamptz  NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX api_keys_by_client ON orders.api_keys (client_id);
INSERT INTO orders.clients (id, name, scopes)
VALUES (gen_random_uuid(), 'legacy', ARRAY['orders:write', 'orders:read']);
