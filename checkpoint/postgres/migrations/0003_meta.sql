-- Weft checkpoint store for PostgreSQL, schema 3: store-wide settings.
--
-- weft_meta holds named values about the whole store. The only one so far
-- is 'key_check': when the store's values are encrypted (WithEncryptionKey),
-- a known text sealed with the store's key, so that opening it with another
-- key, or with none, fails at once instead of returning garbage later.
CREATE TABLE weft_meta (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);
