-- Pins: a ref with an unexpired pin is kept by every prune of its workspace. A pin is a row with
-- a lease that its holder renews; a holder that dies stops renewing, and its pins expire.
-- id is a random token; holder says who holds the pin (host:pid), for `docshelf status`.
-- expires_at is always the server's now() plus the lease, never a client's clock, so processes
-- on machines whose clocks disagree still agree on which pins are live.

CREATE TABLE docs_pins (
    id text PRIMARY KEY,
    workspace text NOT NULL,
    ref text NOT NULL,
    holder text NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX docs_pins_workspace ON docs_pins (workspace);
