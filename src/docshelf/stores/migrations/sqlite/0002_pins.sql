-- Pins: a ref with an unexpired pin is kept by every prune of its workspace. A pin is a row with
-- a lease that its holder renews; a holder that dies stops renewing, and its pins expire.
-- id is a random token; holder says who holds the pin (host:pid), for `docshelf status`.
-- expires_at is unix seconds from the writing process's clock: the processes that share one
-- SQLite file run on one machine, and so read one clock.

CREATE TABLE pins (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    ref TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at REAL NOT NULL
);

CREATE INDEX pins_by_workspace ON pins (workspace);
